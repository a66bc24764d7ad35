"""d*(S) and c*(S) by an independent max-flow (networkx), to test the depth kernels, the host matcher and the
reorder controller: no code is shared with ``spare_jax.kernels.depth`` but the ``WIPED_OUT`` marker."""

from __future__ import annotations

import networkx as nx
import numpy as np

from spare_jax.kernels.depth import WIPED_OUT


def capacity_maxflow(placement, alive, microbatches: int = 1) -> int:
    """c*(S) in micro-batches (shard edges of capacity m); ``WIPED_OUT`` where a shard has no holder up."""
    m = int(microbatches)
    alive = np.asarray(alive, dtype=bool)
    n = placement.groups
    if not np.all(alive[placement.holders].any(axis=1)):
        return WIPED_OUT
    for c in range(m, placement.redundancy * m + 1):
        g = nx.DiGraph()
        for j in range(n):
            g.add_edge("s", ("j", j), capacity=m)
            for h in placement.holders[j]:
                if alive[h]:
                    g.add_edge(("j", j), ("g", int(h)), capacity=m)
        for h in np.nonzero(alive)[0]:
            g.add_edge(("g", int(h)), "t", capacity=c)
        if nx.maximum_flow_value(g, "s", "t") == n * m:
            return c
    raise AssertionError("unreachable")  # pragma: no cover


def depth_maxflow(placement, alive) -> int:
    """d*(S): the least per-group load that covers every shard; ``WIPED_OUT`` where a shard has no holder up."""
    alive = np.asarray(alive, dtype=bool)
    n = placement.groups
    if not np.all(alive[placement.holders].any(axis=1)):
        return WIPED_OUT
    for d in range(1, placement.redundancy + 1):
        g = nx.DiGraph()
        for j in range(n):
            g.add_edge("s", ("j", j), capacity=1)
            for h in placement.holders[j]:
                if alive[h]:
                    g.add_edge(("j", j), ("g", int(h)), capacity=1)
        for h in np.nonzero(alive)[0]:
            g.add_edge(("g", int(h)), "t", capacity=d)
        if nx.maximum_flow_value(g, "s", "t") == n:
            return d
    raise AssertionError("unreachable")  # pragma: no cover
