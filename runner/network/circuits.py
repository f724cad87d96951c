"""Circuits drawn per seed from a file of measured paths, and their relays.

The file is the format of nstor's ``TorDumbbellHelper::ParseFile`` (the
BackTap and Marut simulators): one circuit a line, its index, then per hop
``FINGERPRINT REGION BYTES_PER_S``, the fields of a line separated by tabs.
As ParseFile does, a seed draws ``count`` distinct lines uniformly, takes
them in the file's order, and makes the first ceil(bulk_share x count) of
them bulk circuits and the rest web ones. The network's relays are the
distinct relays of the circuits drawn, each at its file rate scaled by
``count / paper_circuits``; a relay that is ever a circuit's first hop is
a guard, ever its last an exit (both: an exitguard), else a middle.

The file is data, never copied into the repository: it is read from the
data folder (runner.datasets.data_dir) or an absolute path, and its sha256
is checked against the spec's, which is part of every run's identity.
"""

from __future__ import annotations

import functools
import hashlib
import math
import random
import re
from dataclasses import dataclass
from pathlib import Path

from runner.datasets import data_dir
from runner.errors import DataError, DataMissingError, SpecError
from runner.spec.model import CircuitSample, Spec

HOPS = 3  # as ParseFile reads them: entry, middle, exit
_FINGERPRINT = re.compile(r"^[0-9A-F]{40}$")
_REGION = re.compile(r"^[A-Z]{2}$")
KEY = "network.circuits.file"


@dataclass(frozen=True)
class Hop:
    fingerprint: str
    region: str  # the file's: NA, EU, ...
    rate: int  # bytes/s


@dataclass(frozen=True)
class Circuit:
    line: int  # from 1, in the file
    hops: tuple[Hop, ...]


@dataclass(frozen=True)
class CircuitRelay:
    fingerprint: str
    role: str  # exitguard, exit, guard or middle
    region: str  # the file's
    rate: int  # bytes/s, as in the file


def _hop(text: str, where: str) -> Hop:
    fields = text.split()
    if len(fields) != 3:
        raise DataError(f"{where}: expected FINGERPRINT REGION BYTES_PER_S, got {text!r}")
    fingerprint, region, rate = fields
    if not _FINGERPRINT.match(fingerprint):
        raise DataError(f"{where}: expected a fingerprint of 40 hex digits, got {fingerprint!r}")
    if not _REGION.match(region):
        raise DataError(f"{where}: expected a region of two capital letters, got {region!r}")
    if not rate.isdigit() or int(rate) == 0:
        raise DataError(f"{where}: expected a rate in bytes/s above 0, got {rate!r}")
    return Hop(fingerprint, region, int(rate))


def parse_circuits(text: str, name: str) -> tuple[Circuit, ...]:
    """Every circuit of a file's ``text``; a damaged line stops it, named
    by ``name`` and its line number."""
    circuits = []
    rates: dict[str, tuple[int, int]] = {}  # fingerprint -> (rate, first line)
    for number, line in enumerate(text.splitlines(), start=1):
        where = f"{name}:{number}"
        fields = line.rstrip("\r").split("\t")
        if len(fields) != HOPS + 1 or not fields[0].strip().isdigit():
            raise DataError(
                f"{where}: expected an index and {HOPS} hops separated by tabs, "
                f"each FINGERPRINT REGION BYTES_PER_S; got {line[:80]!r}"
            )
        hops = tuple(_hop(field, f"{where}, hop {i}") for i, field in enumerate(fields[1:], 1))
        if len({h.fingerprint for h in hops}) != HOPS:
            raise DataError(f"{where}: a relay appears twice in one circuit")
        for hop in hops:
            rate, first = rates.setdefault(hop.fingerprint, (hop.rate, number))
            if rate != hop.rate:
                raise DataError(
                    f"{where}: relay {hop.fingerprint} has rate {hop.rate}, "
                    f"but {rate} on line {first}"
                )
        circuits.append(Circuit(number, hops))
    if not circuits:
        raise DataError(f"{name}: no circuits")
    return tuple(circuits)


def circuits_path(sample: CircuitSample) -> Path:
    """Where the spec's circuits file is: an absolute path, else under the data folder."""
    given = Path(sample.file)
    return given if given.is_absolute() else data_dir() / given


@functools.cache
def _read(path: Path, sha256: str, spec_path: str) -> tuple[Circuit, ...]:
    try:
        data = path.read_bytes()
    except OSError as e:
        raise DataMissingError(
            spec_path,
            KEY,
            f"cannot read the circuits file {path} ({e.strerror}): give an absolute path, or "
            f"put the file under the data folder {data_dir()} ($TORNET_DATA, else "
            "../shared/data beside the checkout)",
        ) from None
    found = hashlib.sha256(data).hexdigest()
    if found != sha256:
        raise SpecError(
            spec_path,
            "network.circuits.sha256",
            f"the circuits file {path} has sha256 {found}, not the spec's {sha256}",
        )
    return parse_circuits(data.decode("ascii", errors="replace"), str(path))


def read_circuits(spec: Spec) -> tuple[Circuit, ...]:
    """The spec's circuits file, read and checked once."""
    sample = spec.network.circuits
    assert sample is not None
    return _read(circuits_path(sample), sample.sha256, str(spec.path))


def drawn_circuits(spec: Spec, seed: int) -> tuple[Circuit, ...]:
    """The ``count`` circuits a seed draws, distinct lines, in the file's
    order (the same for every variant of the seed)."""
    sample = spec.network.circuits
    assert sample is not None
    circuits = read_circuits(spec)
    if sample.count > len(circuits):
        raise SpecError(
            str(spec.path),
            "network.circuits.count",
            f"{sample.count} circuits asked, the file {sample.file} has {len(circuits)}",
        )
    rng = random.Random(f"{spec.name}/circuits/{seed}")
    return tuple(sorted(rng.sample(circuits, sample.count), key=lambda c: c.line))


def bulk_count(sample: CircuitSample) -> int:
    """How many of the circuits drawn are bulk: the first ceil(share x count)."""
    return math.ceil(sample.bulk_share * sample.count)


def circuit_relays(circuits: tuple[Circuit, ...]) -> list[CircuitRelay]:
    """The circuits' distinct relays, in the order they first appear, each
    with the role its positions need."""
    positions: dict[str, set[int]] = {}
    hops: dict[str, Hop] = {}
    for circuit in circuits:
        for position, hop in enumerate(circuit.hops):
            positions.setdefault(hop.fingerprint, set()).add(position)
            hops.setdefault(hop.fingerprint, hop)
    relays = []
    for fingerprint, hop in hops.items():
        guard = 0 in positions[fingerprint]
        exit_ = HOPS - 1 in positions[fingerprint]
        role = {(True, True): "exitguard", (False, True): "exit", (True, False): "guard"}.get(
            (guard, exit_), "middle"
        )
        relays.append(CircuitRelay(fingerprint, role, hop.region, hop.rate))
    return relays


def scaled_bits(sample: CircuitSample, rate: int) -> int:
    """A relay's link in bits/s: its file rate x count / paper_circuits, at
    least 8 kbit/s."""
    return max(8000, round(rate * 8 * sample.count / sample.paper_circuits))


def circuit_of_client(sample: CircuitSample, cls: str, index: int) -> int | None:
    """Which circuit drawn (from 0, in the file's order) the ``index``-th
    client (from 0) of class ``cls`` takes; None for a class on none."""
    if cls in sample.bulk:
        return index if index < bulk_count(sample) else None
    if cls in sample.web:
        web = index + bulk_count(sample)
        return web if web < sample.count else None
    return None
