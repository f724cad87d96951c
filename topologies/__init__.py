"""Network graph generators (networkx) and their Shadow GML writer.

A generator module has ``PARAMS`` (or its own ``check``) and
``build(params, rng) -> networkx.Graph``. Graph conventions, shared by every
generator and checked by :func:`topologies.gml.check_shadow_rules`:

- nodes are integers 0..n-1 with a ``region`` name and ``host_bandwidth_up`` /
  ``host_bandwidth_down`` in bits per second;
- edges carry ``latency`` in seconds (> 0) and ``packet_loss`` in [0, 1];
- every node has exactly one self-loop (hosts on one node talk over it).
"""

from __future__ import annotations

from types import ModuleType

from topologies import multi_region, single_switch

GENERATORS: dict[str, ModuleType] = {
    "single_switch": single_switch,
    "multi_region": multi_region,
}


def get_generator(name: str) -> ModuleType:
    """The generator module called ``name``; KeyError if there is none."""
    return GENERATORS[name]
