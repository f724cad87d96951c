"""Conflux and ConfluxM: multipath circuits (tor-patches/0001). Its
analyses: the circuits clients built and the conflux sets they linked; the
check that each measured client linked sets of the legs its variant
expects (``expect: {conflux_legs: N}``); and the relays of the last
consensus with the flags a leg needs. The report shows them for every
experiment (the registry places them), since every client builds
circuits on that consensus.

Its package holds only what validating a spec needs (its ``expect:``
keys), so that a spec is read without importing the analyses; those are in
``analyses.py``.
"""

from __future__ import annotations

from runner.spec.expect import ExpectKey

# 0: conflux must not be used; N: every linked set has N legs.
EXPECT_KEYS = (ExpectKey("conflux_legs", minimum=0, maximum=8),)
