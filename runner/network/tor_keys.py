"""Tor identity keys and directory-authority certificates for a private network.

Keys are made with tor itself (``tor --list-fingerprint``) and certificates
with ``tor-gencert``. Under Shadow the clock starts at 2000-01-01, so the
authority certificates are made under ``faketime`` a month before that; a
network that runs in real time gets certificates made now.

Keys are cached per seed (one directory per host) and reused by every variant
of that seed: the same relays, with the same fingerprints, so the variants'
networks differ only in what the variants change.
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from runner.errors import RunError

# Shadow's simulated clock starts at 2000-01-01 00:00:00 UTC.
SHADOW_CERT_TIME = "1999-12-01 00:00:00"
CERT_LIFETIME_MONTHS = 24
_PASSPHRASE = "tornet-private-network\n"
_KEYGEN_TORRC = (
    "DirAuthority keygen orport=5000 no-v2 127.0.0.1:5000 "
    + " ".join(["0000"] * 10)
    + "\nORPort 5000\nLog err stderr\n"
)


@dataclass(frozen=True)
class HostKeys:
    name: str
    fingerprint: str
    v3ident: str | None  # authorities only
    directory: Path  # holds keys/ and fingerprint files, to copy into a data dir


def _run(cmd: list[str], cwd: Path, stdin: str | None = None) -> str:
    proc = subprocess.run(cmd, cwd=cwd, input=stdin, capture_output=True, text=True)
    if proc.returncode != 0:
        output = (proc.stdout + proc.stderr).strip().splitlines()[-5:]
        raise RunError(f"command failed ({proc.returncode}): {' '.join(cmd)}\n" + "\n".join(output))
    return proc.stdout


def _make_identity(tor: str, datadir: Path, nickname: str) -> str:
    keygen = datadir / "keygen.torrc"
    keygen.write_text(_KEYGEN_TORRC)
    _run(
        [
            tor,
            "--list-fingerprint",
            "--DataDirectory",
            str(datadir),
            "--Nickname",
            nickname,
            "-f",
            str(keygen),
        ],
        cwd=datadir,
    )
    keygen.unlink()
    line = (datadir / "fingerprint").read_text().split()
    if len(line) != 2 or line[0] != nickname:
        raise RunError(f"{datadir}/fingerprint: unexpected content {line!r}")
    return line[1]


def _make_authority_cert(
    tor_gencert: str, faketime: str | None, keys_dir: Path, cert_time: str | None
) -> str:
    cmd = [
        tor_gencert,
        "--create-identity-key",
        "-m",
        str(CERT_LIFETIME_MONTHS),
        "--passphrase-fd",
        "0",
    ]
    if cert_time is not None:
        if faketime is None:
            raise RunError("faketime is needed to make certificates for a simulated clock")
        cmd = [faketime, cert_time, *cmd]
    _run(cmd, cwd=keys_dir, stdin=_PASSPHRASE)
    for line in (keys_dir / "authority_certificate").read_text().splitlines():
        if line.startswith("fingerprint "):
            return line.split()[1]
    raise RunError(f"{keys_dir}/authority_certificate has no fingerprint line")


@dataclass(frozen=True)
class KeyTools:
    tor: str
    tor_gencert: str
    faketime: str | None


def ensure_keys(
    store: Path,
    hosts: list[tuple[str, bool]],
    tools: KeyTools,
    cert_time: str | None,
    workers: int = 2,
) -> dict[str, HostKeys]:
    """Keys for every ``(name, is_authority)``, made once and kept in ``store``.

    A host's directory appears only when complete (made in a temporary
    directory, then renamed), so an interrupted run never leaves half a key.
    """
    store = store.resolve()  # tor runs inside the host directory
    store.mkdir(parents=True, exist_ok=True)
    # Runs of one seed share the store: the lock makes one of them make the
    # keys and the others wait and reuse them.
    with (store / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _ensure_locked(store, hosts, tools, cert_time, workers)


def _ensure_locked(
    store: Path,
    hosts: list[tuple[str, bool]],
    tools: KeyTools,
    cert_time: str | None,
    workers: int,
) -> dict[str, HostKeys]:
    def one(item: tuple[str, bool]) -> HostKeys:
        name, is_authority = item
        final = store / name
        if not (final / "fingerprint").is_file():
            with tempfile.TemporaryDirectory(dir=store, prefix=f".{name}.") as tmp:
                work = Path(tmp) / name
                (work / "keys").mkdir(parents=True)
                _make_identity(tools.tor, work, name)
                if is_authority:
                    v3 = _make_authority_cert(
                        tools.tor_gencert, tools.faketime, work / "keys", cert_time
                    )
                    (work / "v3ident").write_text(v3 + "\n")
                if final.exists():  # incomplete: no fingerprint file
                    shutil.rmtree(final)
                work.rename(final)
        fingerprint = (final / "fingerprint").read_text().split()[1]
        v3path = final / "v3ident"
        v3ident = v3path.read_text().strip() if v3path.is_file() else None
        if is_authority and v3ident is None:
            raise RunError(f"{final}: authority keys without a v3 certificate")
        return HostKeys(name, fingerprint, v3ident, final)

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return {k.name: k for k in pool.map(one, hosts)}


def install_keys(keys: HostKeys, datadir: Path) -> None:
    """Copy a host's keys and fingerprint files into its tor data directory."""
    shutil.copytree(keys.directory / "keys", datadir / "keys", dirs_exist_ok=True)
    for name in ("fingerprint", "fingerprint-ed25519"):
        source = keys.directory / name
        if source.is_file():
            shutil.copy2(source, datadir / name)
