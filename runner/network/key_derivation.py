"""Tor keys derived from (seed, host name): the same network on any machine.

Every secret a private network's tor needs before it starts (relay identity
keys, RSA and ed25519; an authority's identity and signing keys) comes from
SHAKE-256 of the seed, the host's name and the key's purpose, so the same
spec and seed give the same fingerprints in any fresh results folder. Keys
tor makes at start-up (onion keys, ed25519 signing keys) come from tor's own
generator, which Shadow makes deterministic.

RSA primes are found by a plain search (random odd candidates with the top
two bits set, trial division, then Miller-Rabin), written here so that the
keys depend on nothing but this code, not on a library's key generator.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass

import gmpy2
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

DERIVATION = "tornet-keys/1"  # changes only with a change to how keys are derived
RSA_EXPONENT = 65537
RELAY_IDENTITY_BITS = 1024  # tor's identity keys
AUTHORITY_IDENTITY_BITS = 3072  # tor-gencert's defaults
AUTHORITY_SIGNING_BITS = 2048
_SMALL_PRIMES = [p for p in range(3, 2000) if all(p % d for d in range(2, int(p**0.5) + 1))]
_MILLER_RABIN_ROUNDS = 40


class _Stream:
    """Deterministic bytes for one (seed, host, purpose)."""

    def __init__(self, seed: int, host: str, purpose: str) -> None:
        self._base = f"{DERIVATION}\0{seed}\0{host}\0{purpose}\0".encode()
        self._counter = 0

    def take(self, size: int) -> bytes:
        self._counter += 1
        return hashlib.shake_256(self._base + self._counter.to_bytes(8, "big")).digest(size)

    def below(self, bound: int) -> int:
        size = (bound.bit_length() + 7) // 8 + 8  # 64 extra bits: negligible bias
        return int.from_bytes(self.take(size), "big") % bound


def _is_probable_prime(n: int, stream: _Stream) -> bool:
    """Miller-Rabin with bases from ``stream``. The arithmetic is GMP's
    (gmpy2): the same numbers as Python's ints, several times faster; the
    bases, and so the stream's later bytes, are as they always were."""
    big = gmpy2.mpz(n)
    last = big - 1
    d, r = last, 0
    while gmpy2.is_even(d):
        d, r = d >> 1, r + 1
    for _ in range(_MILLER_RABIN_ROUNDS):
        x = gmpy2.powmod(2 + stream.below(n - 3), d, big)
        if x == 1 or x == last:
            continue
        for _ in range(r - 1):
            x = gmpy2.powmod(x, 2, big)
            if x == last:
                break
        else:
            return False
    return True


def _prime(bits: int, stream: _Stream) -> int:
    while True:
        candidate = int.from_bytes(stream.take(bits // 8), "big")
        candidate |= (3 << (bits - 2)) | 1  # top two bits: p * q has 2 * bits bits
        if any(candidate % p == 0 for p in _SMALL_PRIMES):
            continue
        if (candidate - 1) % RSA_EXPONENT == 0:
            continue
        if _is_probable_prime(candidate, stream):
            return candidate


def rsa_key(seed: int, host: str, purpose: str, bits: int) -> rsa.RSAPrivateKey:
    stream = _Stream(seed, host, purpose)
    p = _prime(bits // 2, stream)
    q = p
    while q == p:
        q = _prime(bits // 2, stream)
    p, q = max(p, q), min(p, q)
    d = pow(RSA_EXPONENT, -1, (p - 1) * (q - 1))
    numbers = rsa.RSAPrivateNumbers(
        p=p,
        q=q,
        d=d,
        dmp1=rsa.rsa_crt_dmp1(d, p),
        dmq1=rsa.rsa_crt_dmq1(d, q),
        iqmp=rsa.rsa_crt_iqmp(p, q),
        public_numbers=rsa.RSAPublicNumbers(RSA_EXPONENT, p * q),
    )
    return numbers.private_key()


def rsa_pem(key: rsa.RSAPrivateKey) -> bytes:
    """PKCS#1 PEM ("RSA PRIVATE KEY"), as tor writes its RSA secret keys."""
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )


def rsa_fingerprint(key: rsa.RSAPrivateKey) -> str:
    """Tor's fingerprint: SHA-1 of the PKCS#1 DER public key, upper-case hex."""
    der = key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.PKCS1
    )
    return hashlib.sha1(der).hexdigest().upper()


@dataclass(frozen=True)
class Ed25519Key:
    expanded_secret: bytes  # 64 bytes: the clamped scalar and the nonce prefix
    public: bytes  # 32 bytes


def ed25519_key(seed: int, host: str, purpose: str) -> Ed25519Key:
    secret_seed = _Stream(seed, host, purpose).take(32)
    public = Ed25519PrivateKey.from_private_bytes(secret_seed).public_key().public_bytes_raw()
    expanded = bytearray(hashlib.sha512(secret_seed).digest())
    expanded[0] &= 248  # as tor's ed25519_secret_key_from_seed (ref10) clamps it
    expanded[31] &= 63
    expanded[31] |= 64
    return Ed25519Key(bytes(expanded), public)


def _tagged(tag: str, body: bytes) -> bytes:
    """tor's ed25519 key files: a 32-byte header "== <tag> ==" padded with NULs."""
    header = f"== {tag} ==".encode()
    return header + b"\0" * (32 - len(header)) + body


@dataclass(frozen=True)
class RelayKeyFiles:
    fingerprint: str
    ed25519_id: str  # base64 without padding, as tor's fingerprint-ed25519 file
    files: dict[str, bytes]  # path under the data directory -> content


def relay_key_files(seed: int, host: str) -> RelayKeyFiles:
    """A relay's (or authority's) identity keys and fingerprint files."""
    identity = rsa_key(seed, host, "relay identity", RELAY_IDENTITY_BITS)
    master = ed25519_key(seed, host, "ed25519 master identity")
    fingerprint = rsa_fingerprint(identity)
    ed_id = base64.b64encode(master.public).decode().rstrip("=")
    files = {
        "keys/secret_id_key": rsa_pem(identity),
        "keys/ed25519_master_id_secret_key": _tagged(
            "ed25519v1-secret: type0", master.expanded_secret
        ),
        "keys/ed25519_master_id_public_key": _tagged("ed25519v1-public: type0", master.public),
        "fingerprint": f"{host} {fingerprint}\n".encode(),
        "fingerprint-ed25519": f"{host} {ed_id}\n".encode(),
    }
    return RelayKeyFiles(fingerprint, ed_id, files)


def authority_key_files(seed: int, host: str) -> dict[str, bytes]:
    """An authority's v3 identity and signing keys (tor-gencert certifies them)."""
    return {
        "authority_identity_key": rsa_pem(
            rsa_key(seed, host, "authority identity", AUTHORITY_IDENTITY_BITS)
        ),
        "authority_signing_key": rsa_pem(
            rsa_key(seed, host, "authority signing", AUTHORITY_SIGNING_BITS)
        ),
    }
