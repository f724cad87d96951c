"""Published data sets for realistic networks, read where the user keeps them.

The files are data, not code: they are never copied into this repository.
The runner looks for them in ``$TORNET_DATA`` or else ``../shared/data``
beside the checkout, checks each file's sha256 against the published one,
and says where to download a missing or different file.

Every file comes from the data repository of "Privacy-Preserving Dynamic
Learning of Tor Network Traffic" (Jansen, Traudt, Hopper, ACM CCS 2018),
https://github.com/tmodel-ccs2018/tmodel-ccs2018.github.io at commit
a20f2be7ca3774d6689321808688ef5536365677; cite that paper when using them.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import lzma
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from runner.errors import DataError

_REPO = "https://github.com/tmodel-ccs2018/tmodel-ccs2018.github.io"
_COMMIT = "a20f2be7ca3774d6689321808688ef5536365677"
FOLDER = "tmodel-ccs2018"


@dataclass(frozen=True)
class DataFile:
    name: str
    sha256: str
    source: str  # where it is in the data repository

    def url(self) -> str:
        return f"{_REPO}/raw/{_COMMIT}/{self.source}"


RELAYS_2018 = DataFile(
    "tor-relays-2018.csv.xz",
    "00ec6fc85c707cef018ab9ab818d156227a88a192bd3118300a3a7d211f2a778",
    # conf/relay.choices.csv inside this archive, IP addresses removed
    "data/shadow/hosts/shadowtor-2000r-60000c-singlefile-config.tar.xz",
)
SPEEDS_2020 = DataFile(
    "2020.04-speed-data.json.xz",
    "de7a106f9d9dc64c288c9c26996443c12e20171a05a7da050dd7ead96518d341",
    "data/shadow/network/bandwidth/2020.04-speed-data.json.xz",
)
STREAM_MODEL = DataFile(
    "tgen.privcount.stream.model.graphml.xml.xz",
    "ed7b3467993ed4bef533f75a67575fa152e66ee66e24b13fb843a3afdc2db243",
    "data/shadow/tgen/tgen.privcount.stream.model.graphml.xml.xz",
)
PACKET_MODEL = DataFile(
    "tgen.privcount.packet.model.graphml.xml.xz",
    "70ccbe9407770593b327f24168e48b03dd4946b5dfb8a2e9f13a41a6f040c37d",
    "data/shadow/tgen/tgen.privcount.packet.model.graphml.xml.xz",
)

# The names specs use for the populations and data sets.
RELAY_POPULATIONS = {"tor-2018": RELAYS_2018}
SPEED_DATA = {"speedtest-2020": SPEEDS_2020}


def data_dir() -> Path:
    """Where the data sets are: $TORNET_DATA, else ../shared/data beside the checkout."""
    given = os.environ.get("TORNET_DATA")
    if given:
        return Path(given)
    return Path(__file__).resolve().parents[2] / "shared" / "data"


def read_data(file: DataFile) -> bytes:
    """The decompressed contents of ``file``, after checking its sha256."""
    path = data_dir() / FOLDER / file.name
    if not path.is_file():
        raise DataError(
            f"{path}: missing. Download it from {file.url()} (sha256 {file.sha256}) "
            f"into {path.parent}, or set TORNET_DATA to the folder that holds {FOLDER}/"
        )
    raw = path.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    if digest != file.sha256:
        raise DataError(
            f"{path}: sha256 is {digest}, expected {file.sha256} (the published file, {file.url()})"
        )
    return lzma.decompress(raw) if file.name.endswith(".xz") else raw


@dataclass(frozen=True)
class MeasuredRelay:
    """One relay of a measured population (a row of its CSV, from 0)."""

    row: int
    country: str
    exit: bool
    guard: bool
    consensus_kb: int  # consensus weight
    capacity_bytes: int  # max observed bandwidth, bytes/s: what tornettools gives its link

    @property
    def role(self) -> str:
        if self.exit and self.guard:
            return "exitguard"
        if self.exit:
            return "exit"
        return "guard" if self.guard else "middle"


_RELAY_COLUMNS = ("CCode", "IsExit", "IsGuard", "Consensus(KB/s)", "MaxObserved(KiB/s)")


def _flag(text: str, where: str) -> bool:
    if text not in ("True", "False"):
        raise DataError(f"{where}: expected True or False, got {text!r}")
    return text == "True"


@cache
def relay_population(name: str) -> tuple[MeasuredRelay, ...]:
    """The relays of population ``name`` (a key of RELAY_POPULATIONS). Relays
    never observed to carry traffic (max observed 0: 81 of tor-2018's 1,998)
    are left out, as no link speed can be given them."""
    file = RELAY_POPULATIONS[name]
    reader = csv.DictReader(io.StringIO(read_data(file).decode()))
    missing = [c for c in _RELAY_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise DataError(f"{file.name}: expected columns {missing}")
    relays = []
    for row, fields in enumerate(reader):
        where = f"{file.name}: row {row + 2}"
        try:
            capacity = int(fields["MaxObserved(KiB/s)"]) * 1024
            weight = int(fields["Consensus(KB/s)"])
        except ValueError as exc:
            raise DataError(f"{where}: expected whole numbers ({exc})") from None
        if capacity == 0:
            continue
        relays.append(
            MeasuredRelay(
                row=row,
                country=fields["CCode"],
                exit=_flag(fields["IsExit"], f"{where}: IsExit"),
                guard=_flag(fields["IsGuard"], f"{where}: IsGuard"),
                consensus_kb=weight,
                capacity_bytes=capacity,
            )
        )
    return tuple(relays)


@dataclass(frozen=True)
class CountrySpeed:
    down_bits: int
    up_bits: int


@cache
def country_speeds(name: str) -> dict[str, CountrySpeed]:
    """Mean access-link speeds by country code, from data set ``name``."""
    file = SPEED_DATA[name]
    try:
        countries = json.loads(read_data(file))["countries"]
        return {
            code: CountrySpeed(
                int(round(float(body["down_mbits"]) * 1e6)),
                int(round(float(body["up_mbits"]) * 1e6)),
            )
            for code, body in countries.items()
        }
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(
            f"{file.name}: expected countries.<code>.down_mbits and up_mbits ({exc!r})"
        ) from None
