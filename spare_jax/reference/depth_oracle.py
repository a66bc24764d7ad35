"""The depth of a down-set for the reference simulators: the least capacity c (micro-batches per surviving
group) by a maximum flow (``scipy.sparse.csgraph.maximum_flow``), cached by the frozen set of down ring
positions (``DepthOracle``), and one oracle kept per placement (``oracle_for``). It imports numpy, scipy and
``spare_jax.model.runsetup`` only."""

from __future__ import annotations

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_flow

from ..model.runsetup import RunSetup


class DepthOracle:
    """Least capacity by maximum flow, cached by the frozen set of down ring positions.

    ``capacity(down)`` is the least c (micro-batches per surviving group) such that every shard's m
    micro-batches can be assigned to its surviving holders with at most c per group, or 0 when no c works
    (a wipe-out: some shard has no surviving holder)."""

    CACHE_MAX = 2_000_000

    def __init__(self, holders: np.ndarray, microbatches: int):
        self.holders = np.asarray(holders, dtype=np.int64)
        self.n, self.r = self.holders.shape
        self.m = int(microbatches)
        self.cache: dict = {}
        self.flows = 0

    def _structure(self):
        """The flow network's CSR structure (every edge, rows sorted), built once; capacities vary."""
        n, r = self.n, self.r
        rows = [0] * n + [1 + j for j in range(n) for _ in range(r)] + [1 + n + p for p in range(n)]
        cols = ([1 + j for j in range(n)] + [1 + n + int(p) for j in range(n) for p in sorted(self.holders[j])]
                + [2 * n + 1] * n)
        rows, cols = np.asarray(rows), np.asarray(cols)
        self._indptr = np.searchsorted(rows, np.arange(2 * n + 3)).astype(np.int32)
        self._indices = cols.astype(np.int32)
        self._edge_pos = cols[n:n + n * r] - 1 - n  # the holder position of each shard -> holder edge

    def flow(self, down: frozenset, c: int) -> int:
        """Maximum flow of source -> shard (m) -> surviving holder (m) -> surviving group -> sink (c)."""
        if not hasattr(self, "_indptr"):
            self._structure()
        n, r, m = self.n, self.r, self.m
        dead = np.zeros(n, dtype=bool)
        dead[list(down)] = True
        data = np.empty(n + n * r + n, dtype=np.int32)
        data[:n] = m
        data[n:n + n * r] = np.where(dead[self._edge_pos], 0, m)
        data[n + n * r:] = np.where(dead, 0, c)
        graph = csr_matrix((data, self._indices, self._indptr), shape=(2 * n + 2, 2 * n + 2))
        self.flows += 1
        return int(maximum_flow(graph, 0, 2 * n + 1).flow_value)

    def feasible(self, down: frozenset, c: int) -> bool:
        return self.flow(down, c) == self.n * self.m

    def capacity(self, down: frozenset, lower: int = 0) -> int:
        """The least feasible c, 0 for none. ``lower``: a known lower bound (the capacity of a subset of
        ``down``: feasibility only shrinks as groups go down).

        The search climbs from a lower bound: if the flow at c falls short by ``deficit``, every c' < c +
        ceil(deficit / alive) is infeasible too (raising every sink edge by one adds at most ``alive`` to
        the flow), so the next c to try is that one; at c = r m infeasible is a wipe-out."""
        got = self.cache.get(down)
        if got is not None:
            return got
        n, m, r = self.n, self.m, self.r
        alive = n - len(down)
        ans = 0
        if alive > 0:
            c = max(m, -(-n * m // alive), lower)
            while c <= r * m:
                deficit = n * m - self.flow(down, c)
                if deficit == 0:
                    ans = c
                    break
                c += -(-deficit // alive)
        if len(self.cache) >= self.CACHE_MAX:
            self.cache.clear()
        self.cache[down] = ans
        return ans


_ORACLES: dict = {}


def oracle_for(setup: RunSetup) -> DepthOracle:
    key = (setup.placement, setup.groups, setup.redundancy, setup.microbatches)
    if key not in _ORACLES:
        _ORACLES[key] = DepthOracle(setup.holders(), setup.microbatches)
    return _ORACLES[key]
