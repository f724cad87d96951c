"""Reproducible networks: keys derived from (seed, host), accepted by tor."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from runner.cli import main
from runner.network.backends import SHADOW_CERT_TIME
from runner.network.key_derivation import DERIVATION, authority_key_files, relay_key_files
from runner.network.tor_keys import KeyTools, _make_authority_cert, ensure_keys
from runner.tools.prereqs import find
from tests.conftest import CI_SMALL, needs_tor

HOSTS = [("4uthority1", True), ("relay1exit", False), ("relay2guard", False)]


def _tools() -> KeyTools:
    return KeyTools(str(find("tor-gencert").path), find("faketime").path)


def _files(store: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(store)): p.read_bytes()
        for p in sorted(store.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


@needs_tor
def test_the_same_seed_gives_the_same_keys_anywhere(tmp_path: Path) -> None:
    one = ensure_keys(tmp_path / "a", 7, HOSTS, _tools(), SHADOW_CERT_TIME)
    two = ensure_keys(tmp_path / "b", 7, HOSTS, _tools(), SHADOW_CERT_TIME)
    other = ensure_keys(tmp_path / "c", 8, HOSTS, _tools(), SHADOW_CERT_TIME)
    assert {k: v.fingerprint for k, v in one.items()} == {k: v.fingerprint for k, v in two.items()}
    assert one["4uthority1"].v3ident == two["4uthority1"].v3ident
    # Every byte, the authority's certificate included (made under a frozen clock).
    files = _files(tmp_path / "a")
    assert "4uthority1/keys/authority_certificate" in files
    assert files == _files(tmp_path / "b")
    fingerprints = {k.fingerprint for k in other.values()}
    assert fingerprints.isdisjoint(k.fingerprint for k in one.values())
    assert other["4uthority1"].v3ident != one["4uthority1"].v3ident
    # Different hosts of one seed differ too.
    assert len({k.fingerprint for k in one.values()}) == len(HOSTS)


def _tor_fingerprint(keys_dir: Path, tmp_path: Path, nickname: str) -> str:
    """The identity fingerprint tor itself reads from a copy of ``keys_dir``."""
    datadir = tmp_path / f"data-{nickname}"
    shutil.copytree(keys_dir, datadir)
    datadir.chmod(0o700)
    empty = tmp_path / "empty.torrc"
    empty.write_text("")
    proc = subprocess.run(
        [
            str(find("tor").path),
            "--list-fingerprint",
            "-f",
            str(empty),
            "--defaults-torrc",
            str(empty),
            "--DataDirectory",
            str(datadir),
            "--Nickname",
            nickname,
            "--ORPort",
            "5000",
            "--Log",
            "err stderr",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    last = proc.stdout.strip().splitlines()[-1]  # "<nickname> XXXX XXXX ..."
    return "".join(last.split()[1:])


@needs_tor
def test_tor_reads_the_derived_keys_as_they_are(tmp_path: Path) -> None:
    keys = ensure_keys(tmp_path / "store", 3, HOSTS, _tools(), None)
    for name, _ in HOSTS:
        before = (keys[name].directory / "keys" / "secret_id_key").read_bytes()
        assert _tor_fingerprint(keys[name].directory, tmp_path, name) == keys[name].fingerprint
        # tor kept our identity key rather than making one of its own
        copied = tmp_path / f"data-{name}" / "keys" / "secret_id_key"
        assert copied.read_bytes() == before
    cert = (keys["4uthority1"].directory / "keys" / "authority_certificate").read_text()
    assert f"fingerprint {keys['4uthority1'].v3ident}" in cert


def test_ed25519_identity_matches_its_files() -> None:
    made = relay_key_files(1, "relay1exit")
    public = made.files["keys/ed25519_master_id_public_key"]
    assert public.startswith(b"== ed25519v1-public: type0 ==\0\0\0") and len(public) == 64
    secret = made.files["keys/ed25519_master_id_secret_key"]
    assert secret.startswith(b"== ed25519v1-secret: type0 ==\0\0\0") and len(secret) == 96
    assert made.files["fingerprint"] == f"relay1exit {made.fingerprint}\n".encode()
    assert relay_key_files(1, "relay1exit") == made
    assert relay_key_files(2, "relay1exit").fingerprint != made.fingerprint


@needs_tor
@pytest.mark.slow
def test_generate_writes_the_same_networks_in_two_results_folders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("a", "b"):
        code = main(
            ["generate", str(CI_SMALL), "--backend", "local", "--results", str(tmp_path / name)]
        )
        assert code == 0
    assert "4 networks written" in capsys.readouterr().out
    runs = [tmp_path / n / "ci-small-local" / "conflux-on" / "seed-1" for n in ("a", "b")]
    hosts = [r / "shadow.data.template" / "hosts" for r in runs]
    for host in ("4uthority1", "relay1exit", "perfclient1exit"):
        for name in ("torrc", "fingerprint", "keys/secret_id_key"):
            first, second = (h / host / name for h in hosts)
            if first.exists() or second.exists():
                assert first.read_bytes() == second.read_bytes(), f"{host}/{name}"
    for conf in sorted((runs[0] / "conf").glob("*.torrc")):
        assert conf.read_bytes() == (runs[1] / "conf" / conf.name).read_bytes(), conf.name
    seed2 = tmp_path / "a" / "ci-small-local" / "conflux-on" / "seed-2" / "shadow.data.template"
    assert (seed2 / "hosts" / "relay1exit" / "fingerprint").read_bytes() != (
        hosts[0] / "relay1exit" / "fingerprint"
    ).read_bytes()


def test_the_certificate_clock_stands_still_however_slow_the_tool(tmp_path: Path) -> None:
    """A certificate made under load must not take the second it finished in:
    a stand-in for tor-gencert that takes longer than a second reads the
    same (faked) time before and after."""
    faketime = find("faketime").path
    if faketime is None:
        pytest.skip("faketime is not installed")
    slow_tool = tmp_path / "slow-gencert"
    slow_tool.write_text(
        "#!/bin/sh\nbefore=$(date +%s)\nsleep 1.2\n"
        'echo "fingerprint $before-$(date +%s)" > authority_certificate\n'
    )
    slow_tool.chmod(0o755)
    keys = tmp_path / "keys"
    keys.mkdir()
    before, after = _make_authority_cert(str(slow_tool), faketime, keys, SHADOW_CERT_TIME).split(
        "-"
    )
    assert before == after


# Keys derived under DERIVATION "tornet-keys/1" with Python's own integer
# arithmetic, before GMP did it: the same seed must give the same bytes.
COMMITTED_FINGERPRINTS = {
    (7, "relay1exit"): "EFD3224603699CAF27B62E860575B762042D6435",
    (7, "4uthority1"): "DB8030C5C9EF290D3E76CCEA183BABB288E517FA",
    (8, "relay2guard"): "F6B3BD03CE07E06334B0361865105295C18F6AE1",
}
COMMITTED_AUTHORITY_SHA256 = {
    "authority_identity_key": "10d6a0ea714d7b2d9f0698a7d00f1ab590bf026f6eff7d5d2941ed5319a66e64",
    "authority_signing_key": "15aac3acc91f43e6e06c3849696891ebeb5c45211ec350a9824be831a3751a96",
}


def test_the_derivation_gives_the_committed_keys() -> None:
    assert DERIVATION == "tornet-keys/1"  # a new derivation states new figures here
    for (seed, host), fingerprint in COMMITTED_FINGERPRINTS.items():
        assert relay_key_files(seed, host).fingerprint == fingerprint
    files = authority_key_files(7, "4uthority1")
    assert {k: hashlib.sha256(v).hexdigest() for k, v in files.items()} == (
        COMMITTED_AUTHORITY_SHA256
    )
