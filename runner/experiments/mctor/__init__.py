"""MCTor: several connections between adjacent relays and several circuits
per client (tor-patches/0003). Its analysis gives the rounds of parallel
streams by variant and checks the connections and circuits on the path.

Its package holds only what validating a spec needs (its ``expect:``
keys), so that a spec is read without importing the analyses; those are in
``analyses.py``."""

from __future__ import annotations

from runner.spec.expect import ExpectKey

# Connections between adjacent hops of a measured client's pinned path, and
# the circuits carrying its streams when apart from them (MCTorCircuits).
EXPECT_KEYS = (
    ExpectKey("mctor_connections", minimum=1, maximum=16),
    ExpectKey(
        "mctor_circuits",
        minimum=1,
        maximum=16,
        needs="mctor_connections",
        why_needed="the connections the circuits share",
    ),
)
