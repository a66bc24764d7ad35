"""RECTLR: the host reorder controller (docs/reorder.md#reorder-controller-rectlr).

State: the surviving groups, each surviving group's current *stack order* and the current depth d. A
surviving group computes the top d shards of its stack; the *assignment* names, for every shard, the one
group whose gradient is used for it.

On each failure:

* **phase 0 (fixed)**: do the top-d shards of the surviving groups, in the current order, still cover every
  shard? Then nothing moves: the failed group's shards are taken from groups that already compute them.
* **phase 1 (free)**: otherwise, the least depth with free reordering inside the stacks, by Hopcroft–Karp
  (``scipy.sparse.csgraph.maximum_bipartite_matching`` on the holder graph with each surviving group
  replicated d times; binary search over d).
* **phase 2 (MCMF)**: at that depth, the assignment that moves the fewest shards, by min-cost max-flow
  (source -> shard, capacity 1; shard -> surviving holder, cost ``N r`` if the holder did not compute the
  shard before (a *move*) plus its stack level, so ties go to lower levels; holder -> sink, capacity d).

A shard *moves* when it is assigned to a group that did not compute it before the event. ``moved_naive``
is the same count for the from-scratch Hopcroft–Karp matching at the same depth, so the value of phase 2
is visible. After phase 1/2 each surviving group's stack is reordered: its assigned shards first (in
their previous order), then the shards it computed before (spare capacity is free to keep), then the rest.

Min-cost-flow backends: ``ortools`` (default; chosen by measurement, see the README), ``networkx``, and
``scipy`` (``min_weight_full_bipartite_matching`` on the replicated graph).
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import time

import numpy as np

from ..kernels.depth import feasible_matching
from ..model.placement import Placement

SOLVERS = ("ortools", "networkx", "scipy")


@dataclasses.dataclass
class EventRecord:
    """What one failure did."""

    group: int
    phase: int  # 0 fixed order, 2 re-assignment (phase 1 depth + phase 2 MCMF), -1 wipe-out
    depth: int
    moved: int
    moved_naive: int
    wiped_out: bool
    lost_shards: list
    latency_ms: float
    time_min: float | None = None
    solver_ms: float = 0.0  # the min-cost-flow solve alone (phase 2)


_ASCII_INT = re.compile(r"[+-]?[0-9]+", re.ASCII)


def parse_failed_list(text: str) -> list[int]:
    """``'3,17,4'`` -> ``[3, 17, 4]``: ASCII digits only, no empty entries (a trailing comma is refused)."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("`failed`: the failure list is empty")
    out = []
    for i, part in enumerate(text.split(","), 1):
        item = part.strip()
        if not item:
            raise ValueError(f"`failed`: entry {i} of {text!r} is empty (a stray comma?)")
        if not _ASCII_INT.fullmatch(item):
            raise ValueError(f"`failed`: entry {i} ({item!r}) is not an integer group id (ASCII digits 0-9 only)")
        out.append(int(item))
    return out


def _check_time(t, where: str):
    """A failure time: a finite number of minutes >= 0, or None."""
    if t is None:
        return None
    if isinstance(t, (bool, np.bool_)) or not isinstance(t, (int, float, np.integer, np.floating)):
        raise ValueError(f"{where}: time_min {t!r} is not a number")
    t = float(t)
    if not math.isfinite(t) or t < 0:
        raise ValueError(f"{where}: time_min {t!r} is not a finite number >= 0")
    return t


def check_failures(failed, groups: int) -> list[int]:
    """Validate a failure trace: non-empty, integers in range, no repeats (ValueError otherwise)."""
    if failed is None:
        raise ValueError("failed: the failure trace is empty")
    ids = []
    if isinstance(failed, (str, bytes)):
        raise ValueError("failed: expected a sequence of group ids, got a string (split it first)")
    for x in failed:
        if isinstance(x, (bool, np.bool_)):
            raise ValueError(f"failed: group id {x!r} is not an integer")
        if isinstance(x, str) and not _ASCII_INT.fullmatch(x.strip()):
            raise ValueError(f"failed: group id {x!r} is not an integer (ASCII digits only)")
        try:
            g = int(x)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"failed: group id {x!r} is not an integer") from None
        if isinstance(x, (float, np.floating)) and x != g:
            raise ValueError(f"failed: group id {x!r} is not an integer")
        if g < 0 or g >= groups:
            raise ValueError(f"failed: group id {g} is out of range 0..{groups - 1}")
        ids.append(g)
    if not ids:
        raise ValueError("failed: the failure trace is empty")
    seen = set()
    for g in ids:
        if g in seen:
            raise ValueError(f"failed: group {g} appears twice (a failed group stays failed until a restart)")
        seen.add(g)
    return ids


def check_event(group, alive: np.ndarray, wiped_out: bool) -> int:
    """A failure event for a controller: ``group`` is a valid id of a group still up, before any wipe-out."""
    n = alive.size
    group = int(group)
    if not 0 <= group < n:
        raise ValueError(f"failed: group id {group} is out of range 0..{n - 1}")
    if not alive[group]:
        raise ValueError(f"failed: group {group} has already failed")
    if wiped_out:
        raise ValueError("the epoch already ended in a wipe-out; restart the controller")
    return group


class ReorderController:
    """The reorder controller for one epoch (restart -> wipe-out) of a placement."""

    def __init__(self, placement: Placement, solver: str = "ortools", minimize_moves: bool = True):
        if solver not in SOLVERS:
            raise ValueError(f"solver must be one of {', '.join(SOLVERS)}, got {solver!r}")
        self.placement = placement
        self.solver = solver
        self.minimize_moves = minimize_moves
        n, r = placement.groups, placement.redundancy
        self.alive = np.ones(n, dtype=bool)
        self.stacks = placement.stack.astype(np.int64).copy()  # current order of each group's stack
        self.depth = 1
        self.assignment = np.arange(n, dtype=np.int64)  # level 0 is the identity
        self.wiped_out = False
        self.lost_shards: list[int] = []
        # original stack level of holders[j, i] (holders are listed level-major, see placement.holders_of)
        order = np.argsort(placement.stack.T.ravel(), kind="stable")
        self.holder_level = (order // n).reshape(n, r)
        self.holders = placement.holders.astype(np.int64)
        self.last_solver_ms = 0.0
        if solver == "ortools":  # import outside the first event's latency
            from ortools.graph.python import min_cost_flow  # noqa: F401

    # -- queries ------------------------------------------------------------------------------------------
    def positions(self) -> np.ndarray:
        """``pos[j, i]``: position of shard j in the current stack of its holder ``holders[j, i]``."""
        n, r = self.stacks.shape
        keys = (np.arange(n)[:, None] * n + self.stacks).ravel()
        order = np.argsort(keys)
        query = self.holders * n + np.arange(n)[:, None]
        return (order[np.searchsorted(keys[order], query)] % r).reshape(n, r)

    def computing_mask(self) -> np.ndarray:
        """``bool[N, r]``: holder ``holders[j, i]`` is alive and computes shard j (top d of its stack)."""
        return (self.positions() < self.depth) & self.alive[self.holders]

    def check_schedule(self) -> None:
        """Assert the schedule is valid: each shard assigned once to a surviving holder that computes it,
        no group over the depth, stacks are permutations of the placement's rows."""
        comp = self.computing_mask()
        n = self.placement.groups
        idx = np.argmax(self.holders == self.assignment[:, None], axis=1)
        assert np.all(self.holders[np.arange(n), idx] == self.assignment), "a shard is assigned to a non-holder"
        assert np.all(self.alive[self.assignment]), "a shard is assigned to a failed group"
        assert np.all(comp[np.arange(n), idx]), "a shard is assigned to a group that does not compute it"
        assert np.bincount(self.assignment, minlength=n).max() <= self.depth
        assert np.array_equal(np.sort(self.stacks, axis=1), np.sort(self.placement.stack, axis=1))

    # -- the event handler --------------------------------------------------------------------------------
    def fail(self, group: int, time_min: float | None = None) -> EventRecord:
        """Handle the failure of ``group``."""
        t0 = time.perf_counter()
        pl = self.placement
        group = check_event(group, self.alive, self.wiped_out)
        before = self.computing_mask()  # who computed what before the event
        self.alive[group] = False
        alive_holder = self.alive[self.holders]
        lost = np.nonzero(~alive_holder.any(axis=1))[0]
        self.last_solver_ms = 0.0
        if lost.size:
            self.wiped_out = True
            self.lost_shards = [int(j) for j in lost]
            return EventRecord(group, -1, self.depth, 0, 0, True, self.lost_shards,
                               (time.perf_counter() - t0) * 1e3, time_min)
        # phase 0: the current orders at the current depth
        still = before & alive_holder
        if still.any(axis=1).all():
            for j in np.nonzero(self.assignment == group)[0]:
                cand = np.nonzero(still[j])[0]
                self.assignment[j] = self.holders[j, cand[np.argmin(self.holder_level[j, cand])]]
            return EventRecord(group, 0, self.depth, 0, 0, False, [], (time.perf_counter() - t0) * 1e3,
                               time_min)
        # phase 1: least depth with free reordering (Hopcroft-Karp), from the current depth up
        d = self.depth
        while not feasible_matching(pl, self.alive, d):
            d += 1
        naive = self._matching_assignment(d)
        moved_naive = self._moves(naive, before)
        if self.minimize_moves:
            t1 = time.perf_counter()
            assign = self._mcmf_assignment(d, before, alive_holder)
            self.last_solver_ms = (time.perf_counter() - t1) * 1e3
            phase = 2
        else:
            assign, phase = naive, 1
        moved = self._moves(assign, before)
        self._apply(assign, d, before)
        return EventRecord(group, phase, d, moved, moved_naive, False, [], (time.perf_counter() - t0) * 1e3,
                           time_min, self.last_solver_ms)

    # -- helpers ------------------------------------------------------------------------------------------
    def _moves(self, assign, before) -> int:
        """Shards assigned to a group that did not compute them before the event."""
        n = self.placement.groups
        idx = np.argmax(self.holders == np.asarray(assign)[:, None], axis=1)
        return int((~before[np.arange(n), idx]).sum())

    def _apply(self, assign, d, before):
        """New depth and assignment; stacks reordered: assigned shards, then formerly computed, then rest."""
        n, r = self.stacks.shape
        self.depth = d
        self.assignment = np.asarray(assign, dtype=np.int64)
        pos = self.positions()
        old_computed = np.zeros((n, r), dtype=bool)
        old_computed[self.holders[before], pos[before]] = True
        is_assigned = np.zeros((n, r), dtype=bool)
        idx = np.argmax(self.holders == self.assignment[:, None], axis=1)
        is_assigned[self.assignment, pos[np.arange(n), idx]] = True
        key = np.where(is_assigned, 0, np.where(old_computed, 1, 2))
        order = np.argsort(key, axis=1, kind="stable")
        alive = self.alive
        self.stacks[alive] = np.take_along_axis(self.stacks, order, axis=1)[alive]

    def _matching_assignment(self, d):
        from scipy.sparse.csgraph import maximum_bipartite_matching

        from ..kernels.depth import holder_graph

        alive_groups = np.nonzero(self.alive)[0]
        match = maximum_bipartite_matching(holder_graph(self.placement, self.alive, d), perm_type="column")
        return alive_groups[match // d]

    def _mcmf_assignment(self, d, before, alive_holder):
        pl = self.placement
        n, r = pl.groups, pl.redundancy
        shard, slot = np.nonzero(alive_holder)
        group = self.holders[shard, slot]
        cost = np.where(before[shard, slot], 0, n * r) + self.holder_level[shard, slot]
        if self.solver == "ortools":
            return self._mcmf_ortools(d, shard, group, cost)
        if self.solver == "networkx":
            return self._mcmf_networkx(d, shard, group, cost)
        return self._mcmf_scipy(d, shard, group, cost)

    def _mcmf_ortools(self, d, shard, group, cost):
        from ortools.graph.python import min_cost_flow

        n = self.placement.groups
        src, sink = 2 * n, 2 * n + 1
        alive_groups = np.nonzero(self.alive)[0]
        smcf = min_cost_flow.SimpleMinCostFlow()
        tails = np.concatenate([np.full(n, src), shard, n + alive_groups])
        heads = np.concatenate([np.arange(n), n + group, np.full(alive_groups.size, sink)])
        caps = np.concatenate([np.ones(n), np.ones(shard.size), np.full(alive_groups.size, d)]).astype(np.int64)
        costs = np.concatenate([np.zeros(n), cost, np.zeros(alive_groups.size)]).astype(np.int64)
        arcs = smcf.add_arcs_with_capacity_and_unit_cost(tails.astype(np.int32), heads.astype(np.int32), caps,
                                                         costs)
        smcf.set_node_supply(src, n)
        smcf.set_node_supply(sink, -n)
        status = smcf.solve()
        if status != smcf.OPTIMAL:  # pragma: no cover - feasibility was established in phase 1
            raise RuntimeError(f"min-cost flow failed with status {status}")
        flows = smcf.flows(arcs[n: n + shard.size])
        assign = np.empty(n, dtype=np.int64)
        assign[shard[flows > 0]] = group[flows > 0]
        return assign

    def _mcmf_networkx(self, d, shard, group, cost):
        import networkx as nx

        n = self.placement.groups
        g = nx.DiGraph()
        g.add_node("s", demand=-n)
        g.add_node("t", demand=n)
        for j in range(n):
            g.add_edge("s", ("j", j), capacity=1, weight=0)
        for j, h, c in zip(shard, group, cost):
            g.add_edge(("j", int(j)), ("g", int(h)), capacity=1, weight=int(c))
        for h in np.nonzero(self.alive)[0]:
            g.add_edge(("g", int(h)), "t", capacity=d, weight=0)
        flow = nx.min_cost_flow(g)
        assign = np.empty(n, dtype=np.int64)
        for j in range(n):
            for (_, h), f in flow[("j", j)].items():
                if f:
                    assign[j] = h
        return assign

    def _mcmf_scipy(self, d, shard, group, cost):
        from scipy.sparse import csr_matrix
        from scipy.sparse.csgraph import min_weight_full_bipartite_matching

        n = self.placement.groups
        alive_groups = np.nonzero(self.alive)[0]
        col_of = -np.ones(n, dtype=np.int64)
        col_of[alive_groups] = np.arange(alive_groups.size)
        rows = np.repeat(shard, d)
        cols = (col_of[group][:, None] * d + np.arange(d)[None, :]).ravel()
        weights = np.repeat(cost.astype(np.float64) + 1.0, d)  # +1: explicit zeros would be dropped
        graph = csr_matrix((weights, (rows, cols)), shape=(n, alive_groups.size * d))
        _, col = min_weight_full_bipartite_matching(graph)
        return alive_groups[col // d]


def replay(placement: Placement, trace, times=None, solver: str = "ortools", minimize_moves: bool = True,
           check: bool = False):
    """Replay a failure trace (group ids in failure order, optionally with times in minutes).

    Stops at the wipe-out (later entries are ignored and reported). Returns ``(records, controller)``.
    """
    trace = check_failures(trace, placement.groups)
    return run_trace(ReorderController(placement, solver=solver, minimize_moves=minimize_moves), trace, times,
                     check)


def run_trace(ctl, trace, times=None, check: bool = False):
    """Feed a checked trace (and optional times) to a controller until the wipe-out: ``(records, ctl)``."""
    if times is not None and len(times) != len(trace):
        raise ValueError("times: one time per failure is needed")
    if times is not None:
        times = [_check_time(t, f"times[{i}]") for i, t in enumerate(times)]
    records = []
    for i, g in enumerate(trace):
        rec = ctl.fail(g, None if times is None else float(times[i]))
        records.append(rec)
        if rec.wiped_out:
            break
        if check:
            ctl.check_schedule()
    return records, ctl


def read_trace(path: str):
    """Read a failure trace: CSV with a header ``group[,time_min]`` or JSON lines ``{"group": g, "time_min": t}``.

    Returns ``(groups, times or None)``.
    """
    from ..model.inputfile import read_text

    text = read_text(path, "trace")  # a regular file only (a FIFO would wait for a writer for ever)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        raise ValueError(f"trace: {path} holds no failures")
    groups, times = [], []
    if lines[0].startswith("{"):
        for i, ln in enumerate(lines, 1):
            try:
                obj = json.loads(ln)
                g = obj["group"]
                t = obj.get("time_min")
            except (json.JSONDecodeError, KeyError, TypeError, AttributeError):
                raise ValueError(f"trace: line {i} of {path} is not a JSON object with a 'group'") from None
            except RecursionError:  # arrays or objects nested deeper than the parser's stack
                raise ValueError(f"trace: line {i} of {path} is nested too deeply to be a failure record") from None
            if isinstance(g, bool) or not isinstance(g, int):
                raise ValueError(f"trace: line {i} of {path}: group {g!r} is not an integer")
            groups.append(g)
            times.append(_check_time(t, f"trace: line {i} of {path}"))
    else:
        header = [h.strip() for h in lines[0].split(",")]
        if header[0] != "group":
            raise ValueError(f"trace: {path} must start with the header 'group' or 'group,time_min'")
        for i, ln in enumerate(lines[1:], 2):
            parts = [p.strip() for p in ln.split(",")]
            if len(parts) > len(header):
                raise ValueError(f"trace: line {i} of {path} has more fields than the header")
            if not _ASCII_INT.fullmatch(parts[0]):
                raise ValueError(f"trace: line {i} of {path}: group {parts[0]!r} is not an integer")
            groups.append(parts[0])  # validated; check_failures converts
            t = None
            if len(parts) > 1 and parts[1]:
                try:
                    t = float(parts[1])
                except ValueError:
                    raise ValueError(f"trace: line {i} of {path}: time_min {parts[1]!r} is not a number") from None
            times.append(_check_time(t, f"trace: line {i} of {path}"))
    if any(t is None for t in times):
        times = None
    return groups, times
