"""RECTLR at micro-batch granularity (docs/reorder.md#reorder-controller-rectlr, with
docs/microbatches.md#how-it-works).

Each shard is m micro-batches and any alive holder may compute any of them. The schedule is an integer
*allocation* ``x[j, i]``: how many of shard j's micro-batches its holder ``holders[j, i]`` computes
(``sum_i x[j, i] = m``, zero on failed holders). The iteration's load is the *capacity*
``c = max_g sum_{(j,i): holders[j,i] = g} x[j, i]`` micro-batches, the depth ``c / m``.

On each failure:

* **wipe-out**: some shard has no alive holder;
* **phase 0 (fixed)**: the failed group's micro-batches can be re-allocated to groups that already compute
  part of the same shard without exceeding the current c, moving nothing (a max-flow on the failed group's
  shards alone, see ``_absorb``);
* **phase 1 (capacity)**: otherwise the least c from the current one up: the stacked queue test in
  micro-batches (``depth.feasible_stacked``) for ``stacked``, the replicated Hopcroft–Karp matcher
  (``depth.feasible_matching``) for any placement;
* **phase 2 (MCMF)**: at that c, the allocation that moves the fewest micro-batches, by min-cost flow
  (source -> shard, capacity m; shard -> holder as two arcs: the ``x_old`` micro-batches it computed
  before at cost 0 and the rest at cost ``BIG``, both plus its stack level so ties go to lower levels;
  holder -> sink, capacity c). A micro-batch *moves* when it is computed by a group that did not compute it
  before the event (``sum max(0, x_new - x_old)``).

Backends: OR-Tools (default) and networkx (the independent check in the tests).
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from ..kernels.depth import feasible_matching
from ..model.placement import Placement
from .reorder import SOLVERS, check_event, check_failures, run_trace


@dataclasses.dataclass
class MicroEventRecord:
    """What one failure did (capacity in micro-batches; depth = capacity / m)."""

    group: int
    phase: int  # 0 absorbed at the same capacity without moves, 2 re-allocation, -1 wipe-out
    capacity: int
    depth: float
    moved: int  # micro-batches now computed by a group that did not compute them before
    wiped_out: bool
    lost_shards: list
    latency_ms: float
    time_min: float | None = None


class MicrobatchController:
    """The micro-batch reorder controller for one epoch (restart -> wipe-out) of a placement."""

    def __init__(self, placement: Placement, microbatches: int, solver: str = "ortools"):
        if solver not in ("ortools", "networkx"):
            raise ValueError(f"the micro-batch controller's solver must be ortools or networkx, got {solver!r}"
                             + (" (scipy's matcher has no capacities)" if solver in SOLVERS else ""))
        m = int(microbatches)
        if m < 1:
            raise ValueError(f"microbatches must be >= 1, got {microbatches!r}")
        self.placement, self.m, self.solver = placement, m, solver
        n, r = placement.groups, placement.redundancy
        self.holders = placement.holders.astype(np.int64)
        order = np.argsort(placement.stack.T.ravel(), kind="stable")
        self.holder_level = (order // n).reshape(n, r)
        self.alive = np.ones(n, dtype=bool)
        self.alloc = np.zeros((n, r), dtype=np.int64)
        self.alloc[self.holder_level == 0] = m  # every group computes its own (level-0) shard
        self.capacity = m
        self.wiped_out = False
        self.lost_shards: list[int] = []

    @property
    def depth(self) -> float:
        return self.capacity / self.m

    def loads(self) -> np.ndarray:
        """Micro-batches per group under the current allocation."""
        return np.bincount(self.holders.ravel(), weights=self.alloc.ravel(),
                           minlength=self.placement.groups).astype(np.int64)

    def check_schedule(self) -> None:
        """Assert the allocation is valid: m micro-batches per shard, on alive holders, loads <= c."""
        assert np.all(self.alloc.sum(axis=1) == self.m), "a shard is not fully allocated"
        assert np.all(self.alloc[~self.alive[self.holders]] == 0), "micro-batches on a failed group"
        assert np.all(self.alloc >= 0)
        assert self.loads().max() <= self.capacity, "a group computes more than the capacity"

    def _feasible(self, c: int) -> bool:
        pl = self.placement
        if c * int(self.alive.sum()) < pl.groups * self.m:
            return False
        if pl.kind == "stacked":
            from ..kernels.depth import feasible_stacked

            return bool(feasible_stacked(self.alive, c, pl.redundancy, self.m))
        return feasible_matching(pl, self.alive, c, self.m)

    def fail(self, group: int, time_min: float | None = None) -> MicroEventRecord:
        t0 = time.perf_counter()
        group = check_event(group, self.alive, self.wiped_out)
        before = self.alloc.copy()
        self.alive[group] = False
        alive_holder = self.alive[self.holders]
        lost = np.nonzero(~alive_holder.any(axis=1))[0]
        if lost.size:
            self.wiped_out, self.lost_shards = True, [int(j) for j in lost]
            return MicroEventRecord(group, -1, self.capacity, self.depth, 0, True, self.lost_shards,
                                    (time.perf_counter() - t0) * 1e3, time_min)
        absorbed = self._absorb(group, before, alive_holder)
        if absorbed is not None:
            self.alloc = absorbed
            return MicroEventRecord(group, 0, self.capacity, self.depth, 0, False, [],
                                    (time.perf_counter() - t0) * 1e3, time_min)
        c = self.capacity
        while not self._feasible(c):
            c += 1
        alloc = self._mcmf(c, before, alive_holder)
        moved = int(np.maximum(alloc - before, 0).sum())
        self.capacity, self.alloc = c, alloc
        return MicroEventRecord(group, 2, c, self.depth, moved, False, [], (time.perf_counter() - t0) * 1e3,
                                time_min)

    def _absorb(self, group, before, alive_holder):
        """Phase 0: move the failed group's micro-batches only to holders that already compute part of the
        same shard, within the current capacity (``None`` when that is impossible)."""
        orphan = before * (self.holders == group)
        need = orphan.sum(axis=1)
        shards = np.nonzero(need)[0]
        if shards.size == 0:
            return before * alive_holder
        spare = self.capacity - self.loads()
        spare[~self.alive] = 0
        alloc = before * alive_holder
        # greedy is not enough in general; a small max-flow over the affected shards decides it exactly
        import networkx as nx

        g = nx.DiGraph()
        for j in shards:
            g.add_edge("s", ("j", int(j)), capacity=int(need[j]))
            for i in np.nonzero((before[j] > 0) & alive_holder[j])[0]:
                g.add_edge(("j", int(j)), ("g", int(self.holders[j, i])), capacity=int(need[j]))
        for node in list(g.nodes):
            if isinstance(node, tuple) and node[0] == "g":
                g.add_edge(node, "t", capacity=int(spare[node[1]]))
        if "t" not in g:
            return None
        value, flow = nx.maximum_flow(g, "s", "t")
        if value < need.sum():
            return None
        for j in shards:
            for (_, h), f in flow[("j", int(j))].items():
                if f:
                    alloc[j, np.nonzero(self.holders[j] == h)[0][0]] += f
        return alloc

    def _arcs(self, before, alive_holder):
        shard, slot = np.nonzero(alive_holder)
        group = self.holders[shard, slot]
        level = self.holder_level[shard, slot]
        big = self.placement.groups * self.m * self.placement.redundancy + 1  # above any total level cost
        keep = before[shard, slot]
        return shard, slot, group, level, big, keep

    def _mcmf(self, c, before, alive_holder):
        n, m = self.placement.groups, self.m
        shard, slot, group, level, big, keep = self._arcs(before, alive_holder)
        alive_groups = np.nonzero(self.alive)[0]
        # arcs: src -> shard (m); shard -> holder: kept part (cap keep, cost level), new part (cap m - keep,
        # cost big + level); holder -> sink (c)
        if self.solver == "ortools":
            from ortools.graph.python import min_cost_flow

            src, sink = 2 * n, 2 * n + 1
            smcf = min_cost_flow.SimpleMinCostFlow()
            tails = np.concatenate([np.full(n, src), shard, shard, n + alive_groups])
            heads = np.concatenate([np.arange(n), n + group, n + group, np.full(alive_groups.size, sink)])
            caps = np.concatenate([np.full(n, m), keep, m - keep, np.full(alive_groups.size, c)])
            costs = np.concatenate([np.zeros(n), level, big + level, np.zeros(alive_groups.size)])
            arcs = smcf.add_arcs_with_capacity_and_unit_cost(tails.astype(np.int32), heads.astype(np.int32),
                                                             caps.astype(np.int64), costs.astype(np.int64))
            smcf.set_node_supply(src, n * m)
            smcf.set_node_supply(sink, -n * m)
            status = smcf.solve()
            if status != smcf.OPTIMAL:  # pragma: no cover - feasibility was established in phase 1
                raise RuntimeError(f"min-cost flow failed with status {status}")
            k = shard.size
            flow = smcf.flows(arcs[n: n + k]) + smcf.flows(arcs[n + k: n + 2 * k])
        else:
            import networkx as nx

            g = nx.MultiDiGraph()
            g.add_node("s", demand=-n * m)
            g.add_node("t", demand=n * m)
            for j in range(n):
                g.add_edge("s", ("j", j), capacity=m, weight=0)
            for idx, (j, h, lv, kp) in enumerate(zip(shard, group, level, keep)):
                g.add_edge(("j", int(j)), ("g", int(h)), key=(idx, 0), capacity=int(kp), weight=int(lv))
                g.add_edge(("j", int(j)), ("g", int(h)), key=(idx, 1), capacity=int(m - kp), weight=int(big + lv))
            for h in alive_groups:
                g.add_edge(("g", int(h)), "t", capacity=c, weight=0)
            res = nx.min_cost_flow(g)
            flow = np.array([res[("j", int(j))][("g", int(h))][(idx, 0)] + res[("j", int(j))][("g", int(h))][(idx, 1)]
                             for idx, (j, h) in enumerate(zip(shard, group))], dtype=np.int64)
        alloc = np.zeros_like(before)
        alloc[shard, slot] = flow
        return alloc


def replay_microbatches(placement: Placement, trace, microbatches: int, times=None, solver: str = "ortools",
                        check: bool = False):
    """Replay a failure trace at micro-batch granularity; stops at the wipe-out. ``(records, controller)``."""
    trace = check_failures(trace, placement.groups)
    return run_trace(MicrobatchController(placement, microbatches, solver), trace, times, check)
