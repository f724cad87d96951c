"""Tor identity keys and directory-authority certificates for a private network.

Keys are derived from the seed and the host's name
(``runner.network.key_derivation``), so a seed's network is the same in any
fresh results folder on any machine; authority certificates are made from
those keys by ``tor-gencert --reuse``. Under Shadow the clock starts at
2000-01-01, so the certificates are made under ``faketime``, frozen at a
month before that, and are the same every time; a network that runs in real
time gets certificates made now.

Keys are kept per seed (one directory per host) and reused by every variant
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
from runner.network.key_derivation import DERIVATION, authority_key_files, relay_key_files

CERT_LIFETIME_MONTHS = 24
DERIVATION_FILE = "derivation"  # in a host's directory: how its keys were made


@dataclass(frozen=True)
class HostKeys:
    name: str
    fingerprint: str
    v3ident: str | None  # authorities only
    directory: Path  # holds keys/ and fingerprint files, to copy into a data dir


def _run(cmd: list[str], cwd: Path) -> str:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        output = (proc.stdout + proc.stderr).strip().splitlines()[-5:]
        raise RunError(f"command failed ({proc.returncode}): {' '.join(cmd)}\n" + "\n".join(output))
    return proc.stdout


def _write_files(root: Path, files: dict[str, bytes]) -> None:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        path.chmod(0o600)


def _make_authority_cert(
    tor_gencert: str, faketime: str | None, keys_dir: Path, cert_time: str | None
) -> str:
    """Certify the authority's derived identity and signing keys; its v3 identity."""
    cmd = [
        tor_gencert,
        "--reuse",
        "-i",
        "authority_identity_key",
        "-s",
        "authority_signing_key",
        "-c",
        "authority_certificate",
        "-m",
        str(CERT_LIFETIME_MONTHS),
    ]
    if cert_time is not None:
        if faketime is None:
            raise RunError("faketime is needed to make certificates for a simulated clock")
        # -f: an absolute time in libfaketime's own format freezes the clock; without
        # it faketime starts the clock there and lets it run, so a certificate
        # made under load a second late would differ.
        cmd = [faketime, "-f", cert_time, *cmd]
    _run(cmd, cwd=keys_dir)
    for line in (keys_dir / "authority_certificate").read_text().splitlines():
        if line.startswith("fingerprint "):
            return line.split()[1]
    raise RunError(f"{keys_dir}/authority_certificate has no fingerprint line")


@dataclass(frozen=True)
class KeyTools:
    tor_gencert: str
    faketime: str | None


def ensure_keys(
    store: Path,
    seed: int,
    hosts: list[tuple[str, bool]],
    tools: KeyTools,
    cert_time: str | None,
    workers: int = 2,
) -> dict[str, HostKeys]:
    """Keys for every ``(name, is_authority)`` of ``seed``, made once and kept in ``store``.

    A host's directory appears only when complete (made in a temporary
    directory, then renamed), so an interrupted run never leaves half a key.
    """
    store = store.resolve()  # tor runs inside the host directory
    store.mkdir(parents=True, exist_ok=True)
    # Runs of one seed share the store: the lock makes one of them make the
    # keys and the others wait and reuse them.
    with (store / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _ensure_locked(store, seed, hosts, tools, cert_time, workers)


def _ensure_locked(
    store: Path,
    seed: int,
    hosts: list[tuple[str, bool]],
    tools: KeyTools,
    cert_time: str | None,
    workers: int,
) -> dict[str, HostKeys]:
    def one(item: tuple[str, bool]) -> HostKeys:
        name, is_authority = item
        final = store / name
        derivation = final / DERIVATION_FILE
        if not (derivation.is_file() and derivation.read_text().strip() == DERIVATION):
            with tempfile.TemporaryDirectory(dir=store, prefix=f".{name}.") as tmp:
                work = Path(tmp) / name
                (work / "keys").mkdir(parents=True)
                _write_files(work, relay_key_files(seed, name).files)
                if is_authority:
                    _write_files(work / "keys", authority_key_files(seed, name))
                    v3 = _make_authority_cert(
                        tools.tor_gencert, tools.faketime, work / "keys", cert_time
                    )
                    (work / "v3ident").write_text(v3 + "\n")
                (work / DERIVATION_FILE).write_text(DERIVATION + "\n")
                if final.exists():  # incomplete, or keys made another way
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
