"""An independent, event-by-event reference replay of whole training runs on a failure trace
(docs/traces.md#replaying-a-trace).

The yardstick a replay on the device is tested against, written from the conventions of a run
(docs/runs.md#the-conventions-of-a-run) and of a replay (docs/traces.md#the-conventions-of-a-replay) alone, and
kept plain: a priority queue of timed events, one Python object per run, the depth of a down-set by a maximum
flow (``depth_oracle.DepthOracle``). It imports numpy, ``spare_jax.model`` and ``depth_oracle`` only.

Entry points: ``trace_run(setup, trace, offset_min, options, rng, job_times)`` (one run, a dict of numbers),
``trace_runs(setup, trace, runs, options, seed)`` (the K runs of a replay, run k from offset k P / K; arrays
per counter) and ``summary(out)``. ``setup`` is a ``model.runsetup.RunSetup`` (scheme, r, m, ring, costs,
stalls, spares, job-wide clock, D_max); its failure clocks (MTBFs, Weibull shape) are not read: the trace
(a ``model.trace_units.UnitPeriods``, or its device form ``TraceArrays``, read in float64) replaces them.
Times are minutes.

The replay
----------
* **Time.** Run k of K starts at trace time ``t0 = k P / K`` (``P`` = the circle, window x time scale); run
  time t is trace time ``t0 + t``, and the trace repeats every P (it wraps round). ``wraps`` =
  ``floor((t0 + TTT) / P)``.
* **Where a group's next failure comes from.** Group g's unit is unit g (a slot of the cluster: its periods
  fail whatever group occupies it). A group that is up at the start, at the end of a global restart, or at
  its return from a fixed repair fails next at the first period of its unit that *starts* at or after that
  instant (a period in progress then is over for it; one that starts exactly then fails it at once). A
  period that starts while its group is down does nothing.
* **Repair** (``TraceReplay.repair``): ``trace``, the group returns at the end of the (merged) period that
  failed it; ``fixed``, it returns ``setup.repair_time_min`` D after its failure (with a spare pool: D after
  it obtains a spare); ``none``, it stays down until the next global restart. Returns happen in any phase
  but a restart (a restart cancels repairs in flight). A returning group fails next at the first period
  starting at or after its return; with ``trace`` repair that is a later period (merged periods never touch).
* **Restarts.** A period that starts during a global restart (R, or the wait for spares that belongs to it)
  while its group is up downs the group, absorbed: no wipe-out test, no stall; the group is replaced at the
  end. At the end every group is up, and each fails next at the first period starting at or after that
  instant.
* **One instant, several events**, in this order: the current phase ends (a checkpoint ends or falls due,
  the final checkpoint starts, R ends, a stall ends), node sets come back from hardware repair, groups
  return (in group order), groups fail (in group order, one at a time, depth and wipe-out tested after
  each), and last a job-wide failure.
* **Counts.** ``failures_seen``: periods that start while their group is up and no restart runs;
  ``failures_absorbed``: those that start during a restart while their group is up (at most one per group
  and restart); ``failures`` = both. ``wipeouts`` (restarts forced by a lost shard; for ``elastic``, by no group
  up; the ideal scheme has none), ``job_failures``, ``restarts``, ``proactive_restarts``, ``ckpts``.
* **Spares with a trace** (``setup.spares`` = K): a failed group's node set leaves for hardware repair until
  the end of the period that failed it (``setup.hardware_repair_min`` H instead when given: until H after the
  failure), then joins the pool; the group takes a free spare at once or waits, first come first served;
  with ``fixed`` repair it rejoins D after it obtains one, with ``none`` it holds it, down, until the next
  restart; a restart ends at the later of R and the moment the last down group has a spare (the spare wait).
  ``trace`` repair with a pool is refused (the period's end is then the hardware repair, and D the swap).
* **Everything else** follows the conventions of a run: work at rate 1/d (``shrink``: alive/N); a checkpoint
  every tau of computing time, C of wall time, committing at its end; the final, partial checkpoint the
  moment the work reaches W, the run ending when it completes; a wipe-out or job-wide failure (drawn from the
  only random source, ``rng`` exponential with mean ``setup.job_mtbf_min``, or given as ``job_times``)
  loses the work since the last committed checkpoint and restarts (R); the proactive restart at
  ``setup.restart_depth`` (a crossing from d < D_max to d >= D_max; the checkpoint first, the restart after
  it); stalls (``failure_stall_min`` S after every group failure that ends in no restart, extended by later
  ones, ``rejoin_stall_min`` after every return; none during a restart or a proactive checkpoint; a
  checkpoint runs through a stall undelayed). ``none`` restarts at every failure seen. ``elastic``
  (``rebalance`` d = ceil(N m / alive) / m, ``shrink`` rate alive/N) restarts only at a job-wide failure or
  when no group is up (counted as a wipe-out), and without repair is refused.
* **The ideal scheme of the limit** (``TraceReplay.ideal``): computes at rate alive/N, never loses a shard,
  never restarts for want of groups (with no group up it computes nothing until one returns); it pays the
  stalls, the checkpoints and the job-wide failures, and restarts proactively when its depth N/alive crosses
  ``setup.restart_depth`` (so without repair it needs one: refused otherwise). ``setup.scheme`` is then not
  read beyond its costs.

Counters returned (per run): ``ttt_min``, ``compute_min``, ``ckpt_min``, ``restart_min`` (R per restart),
``spare_wait_min``, ``failure_stall_min``, ``rejoin_stall_min`` (wall time stalled outside checkpoints, under
the cause of the deadline in force), identity ttt = compute + ckpt + restart + spare wait + both stalls;
``work_done_min`` (committed + lost), ``lost_work_min``, the counts above, ``events`` (events processed;
more than ``max_events`` raises RuntimeError).
"""

from __future__ import annotations

import bisect
import dataclasses
import heapq
import math
from collections import deque

import numpy as np

from ..model.runsetup import RunSetup
from ..model.trace_units import TraceArrays, UnitPeriods
from .depth_oracle import DepthOracle

__all__ = ["TraceReplay", "trace_run", "trace_runs", "summary", "COUNTERS", "REPAIRS"]

REPAIRS = ("trace", "fixed", "none")
COUNTERS = ("ttt_min", "compute_min", "ckpt_min", "restart_min", "spare_wait_min", "failure_stall_min",
            "rejoin_stall_min", "work_done_min", "lost_work_min", "failures", "failures_seen", "failures_absorbed",
            "wipeouts", "job_failures", "restarts", "proactive_restarts", "ckpts", "wraps", "events")

_UP, _WAIT, _REPAIR, _HOLD = 0, 1, 2, 3  # group states: up; down waiting for a spare; in repair; down until R
_COMPUTE, _CKPT, _RESTART = 0, 1, 2
_PHASE, _HW, _REJOIN, _GFAIL, _JOB = 0, 1, 2, 3, 4  # event kinds, in their order at one instant
_STALL_KEY = {"failure": "failure_stall_min", "rejoin": "rejoin_stall_min"}
_ORACLES: dict = {}


@dataclasses.dataclass(frozen=True)
class TraceReplay:
    """How a trace is replayed: the repair mode (``trace``, ``fixed``: ``setup.repair_time_min``, ``none``),
    the ideal scheme of the limit instead of ``setup.scheme``, and the event budget of one run."""

    repair: str = "trace"
    ideal: bool = False
    max_events: int = 10_000_000


def unit_lists(trace) -> tuple[list, list, float]:
    """``(starts, ends, P)``: per unit the period starts and ends in minutes (float64 lists), and P in minutes,
    from a ``UnitPeriods`` (hours) or a ``TraceArrays`` (its float32 minutes, as they are)."""
    if isinstance(trace, TraceArrays):
        starts, ends = [], []
        for g in range(trace.units):
            c = int(trace.counts[g])
            starts.append([float(x) for x in trace.starts_min[g, :c]])
            ends.append([float(x) for x in trace.ends_min[g, :c]])
        return starts, ends, float(trace.circle_min)
    if isinstance(trace, UnitPeriods):
        starts, ends = [], []
        for a, b in trace.unit_slices():
            starts.append([float(x) * 60.0 for x in a])
            ends.append([float(x) * 60.0 for x in b])
        return starts, ends, float(trace.circle_hours) * 60.0
    raise TypeError(f"a trace is a UnitPeriods or a TraceArrays, got {type(trace).__name__}")


def _check(setup: RunSetup, units: int, options: TraceReplay) -> None:
    if setup.scheme not in ("spare", "rep", "none", "elastic"):
        raise ValueError(f"unknown scheme {setup.scheme!r}")
    n, r = setup.groups, setup.redundancy
    if units != n:
        raise ValueError(f"the trace has {units} units for {n} groups")
    if n < 1 or r < 1 or setup.microbatches < 1:
        raise ValueError("groups, redundancy and microbatches must be >= 1")
    if sorted(setup.ring) != list(range(n)):
        raise ValueError("ring must be a permutation of 0..N-1")
    if setup.scheme in ("none", "elastic") and r != 1:
        raise ValueError(f"{setup.scheme} has r = 1")
    if setup.scheme == "rep" and n % r:
        raise ValueError("rep needs r | N")
    if setup.domains:
        raise ValueError("failure domains with a trace: the trace's periods are the group failures")
    if options.repair not in REPAIRS:
        raise ValueError(f"repair must be one of {', '.join(REPAIRS)}, got {options.repair!r}")
    if options.repair == "fixed":
        if setup.repair_time_min is None:
            raise ValueError("repair 'fixed' needs setup.repair_time_min D")
        if setup.repair_law != "fixed":
            raise ValueError("a replay's repair time is fixed (the trace draws no random numbers)")
    elif setup.repair_time_min is not None:
        raise ValueError(f"repair {options.repair!r} takes no repair time; setup.repair_time_min must be None")
    if options.repair == "trace" and setup.spares is not None:
        raise ValueError("repair from the trace with a spare pool: the period's end is the hardware repair; give "
                         "the swap time as a fixed repair")
    if setup.spares is not None and setup.spares < 0:
        raise ValueError("spares must be >= 0")
    if options.ideal:
        if options.repair == "none" and setup.restart_depth is None:
            raise ValueError("the ideal scheme without repair needs a restart depth (groups come back only at a "
                             "restart)")
    elif setup.scheme == "elastic":
        if options.repair == "none":
            raise ValueError("elastic without repair is refused: a group that never rejoins makes it a slow none")
        if setup.elastic_data not in ("rebalance", "shrink"):
            raise ValueError(f"unknown elastic_data {setup.elastic_data!r}")
    if not setup.ckpt_interval_min > 0 or setup.work_min <= 0:
        raise ValueError("tau and W must be > 0")


class _Replay:
    def __init__(self, setup: RunSetup, trace, offset_min: float, options: TraceReplay, rng, job_times):
        self.starts, self.ends, self.P = unit_lists(trace)
        _check(setup, len(self.starts), options)
        if not (math.isfinite(offset_min) and 0 <= offset_min < self.P):
            raise ValueError(f"the offset must be in [0, P = {self.P:g} min), got {offset_min!r}")
        self.s, self.opt = setup, options
        self.t0 = float(offset_min)
        self.rng = rng
        self.job_times = None if job_times is None else iter(sorted(float(x) for x in job_times))
        n = self.n = setup.groups
        self.m = setup.microbatches
        self.scheme = "ideal" if options.ideal else setup.scheme
        self.pos = [0] * n
        for i, g in enumerate(setup.ring):
            self.pos[int(g)] = i
        if self.scheme == "spare":
            key = (setup.placement, n, setup.redundancy, self.m)
            if key not in _ORACLES:
                _ORACLES[key] = DepthOracle(setup.holders(), self.m)
            self.oracle = _ORACLES[key]
        self.dmax = setup.restart_depth
        self.finite_pool = setup.spares is not None
        self.pool_free = int(setup.spares) if self.finite_pool else 0
        self.t = 0.0
        self.heap: list = []
        self.seq = 0
        self.status = [_UP] * n
        self.fail_gen = [0] * n
        self.repair_gen = [0] * n
        self.fail_end = [math.inf] * n  # the end of the period a pending failure starts
        self.queue: deque = deque()
        self.down_pos: set = set()
        self.block_down = [0] * (n // setup.redundancy) if self.scheme == "rep" else None
        self.phase = _COMPUTE
        self.phase_gen = 0
        self.final = False
        self.restart_after = False
        self.waiting = False
        self.wait_start = 0.0
        self.ckpt_start = 0.0
        self.stall_s = float(setup.failure_stall_min)
        self.stall_j = float(setup.rejoin_stall_min)
        self.stall_until = -math.inf
        self.stall_cause = "failure"
        self.committed = self.unc = self.ct = 0.0
        self.depth, self.rate = 1.0, 1.0
        self.cap = self.m
        self.c = dict.fromkeys(COUNTERS, 0.0)
        for k in COUNTERS:
            if not k.endswith("_min"):
                self.c[k] = 0

    # ---- the queue
    def push(self, time, kind, a=0, token=0):
        if time == math.inf:
            return
        self.seq += 1
        heapq.heappush(self.heap, (time, kind, a, self.seq, token))

    def valid(self, entry) -> bool:
        _, kind, a, _, token = entry
        if kind == _GFAIL:
            return self.status[a] == _UP and token == self.fail_gen[a]
        if kind == _REJOIN:
            return self.status[a] == _REPAIR and token == self.repair_gen[a]
        if kind == _PHASE:
            return token == self.phase_gen
        return True

    def event(self):
        self.c["events"] += 1
        if self.c["events"] > self.opt.max_events:
            raise RuntimeError(f"more than max_events = {self.opt.max_events} events in one run")

    # ---- the trace
    def next_period(self, g: int) -> tuple[float, float]:
        """(run time of the first period of unit g starting at or after now, run time of its end)."""
        starts = self.starts[g]
        if not starts:
            return math.inf, math.inf
        x = self.t + self.t0
        lap = math.floor(x / self.P)
        i = bisect.bisect_left(starts, x - lap * self.P)
        if i == len(starts):
            i, lap = 0, lap + 1
        base = lap * self.P - self.t0
        return max(starts[i] + base, self.t), max(self.ends[g][i] + base, self.t)

    def arm(self, g: int) -> None:
        """Group g is up now: its next failure is the first period of its unit starting at or after now."""
        self.fail_gen[g] += 1
        at, end = self.next_period(g)
        self.fail_end[g] = end
        self.push(at, _GFAIL, g, self.fail_gen[g])

    # ---- depth
    def evaluate(self, grew: bool = False):
        """(wiped, depth, rate) of the current down-set."""
        n, m, down = self.n, self.m, len(self.down_pos)
        sch = self.scheme
        if sch == "spare":
            c = self.oracle.capacity(frozenset(self.down_pos), self.cap if grew else 0)
            self.cap = c
            return (True, math.inf, 0.0) if c == 0 else (False, c / m, m / c)
        if sch == "none":
            return (down > 0, 1.0, 1.0)
        if sch == "rep":
            r = self.s.redundancy
            return (any(b == r for b in self.block_down), float(r), 1.0 / r)
        alive = n - down
        if sch == "ideal":
            return (False, math.inf if alive == 0 else n / alive, alive / n)
        if alive == 0:
            return (True, math.inf, 0.0)
        if self.s.elastic_data == "shrink":
            return (False, 1.0, alive / n)
        c = -(-n * m // alive)
        return (False, c / m, m / c)

    # ---- groups and spares
    def group_down(self, g: int) -> None:
        self.status[g] = _WAIT
        self.fail_gen[g] += 1
        p = self.pos[g]
        self.down_pos.add(p)
        if self.block_down is not None:
            self.block_down[p // self.s.redundancy] += 1
        end = self.fail_end[g]
        if self.finite_pool:
            h = self.s.hardware_repair_min
            self.push(end if h is None else self.t + h, _HW)
            if self.pool_free > 0:
                self.pool_free -= 1
                self.got_spare(g, end)
            else:
                self.queue.append(g)
        else:
            self.got_spare(g, end)

    def got_spare(self, g: int, end: float) -> None:
        mode = self.opt.repair
        if self.phase == _RESTART or mode == "none":
            self.status[g] = _HOLD
            return
        self.status[g] = _REPAIR
        self.repair_gen[g] += 1
        back = end if mode == "trace" else self.t + self.s.repair_time_min
        self.push(back, _REJOIN, g, self.repair_gen[g])

    def group_up(self, g: int) -> None:
        self.status[g] = _UP
        p = self.pos[g]
        self.down_pos.discard(p)
        if self.block_down is not None:
            self.block_down[p // self.s.redundancy] -= 1
        self.arm(g)

    # ---- phases
    def start_ckpt(self, final: bool) -> None:
        self.event()
        self.phase = _CKPT
        self.final = final
        self.ct = 0.0
        self.phase_gen += 1
        self.ckpt_start = self.t
        self.push(self.t + self.s.ckpt_cost_min, _PHASE, 0, self.phase_gen)

    def lose(self) -> None:
        if self.phase == _CKPT:
            self.c["ckpt_min"] += self.t - self.ckpt_start
        self.c["lost_work_min"] += self.unc
        self.unc = 0.0

    def start_restart(self) -> None:
        self.c["restarts"] += 1
        self.phase = _RESTART
        self.restart_after = self.final = self.waiting = False
        self.stall_until = -math.inf
        self.ct = 0.0
        self.phase_gen += 1
        for g in range(self.n):
            if self.status[g] == _REPAIR:
                self.repair_gen[g] += 1
                self.status[g] = _HOLD
        self.push(self.t + self.s.restart_min, _PHASE, 0, self.phase_gen)

    def end_restart(self) -> None:
        self.event()
        if self.waiting:
            self.c["spare_wait_min"] += self.t - self.wait_start
            self.waiting = False
        for g in range(self.n):
            st = self.status[g]
            if st == _HOLD:
                self.group_up(g)
            elif st != _UP:
                raise AssertionError("a restart ended with a group waiting or in repair")
        assert not self.down_pos and not self.queue
        self.phase = _COMPUTE
        self.ct = 0.0
        _, self.depth, self.rate = self.evaluate()

    def after_change(self, grew: bool) -> None:
        wiped, d, rate = self.evaluate(grew)
        if wiped:
            self.c["wipeouts"] += 1
            self.lose()
            self.start_restart()
            return
        crossed = self.dmax is not None and self.depth < self.dmax <= d
        self.depth, self.rate = d, rate
        if crossed:
            self.restart_after = True
            self.stall_until = -math.inf
            if self.phase == _COMPUTE:
                self.start_ckpt(final=False)
            return
        if self.restart_after:
            return
        cause, length = ("failure", self.stall_s) if grew else ("rejoin", self.stall_j)
        if length > 0 and self.t + length > self.stall_until:
            self.stall_until = self.t + length
            self.stall_cause = cause

    # ---- job-wide failures
    def next_job(self) -> None:
        if self.job_times is not None:
            at = next(self.job_times, math.inf)
            self.push(max(at, self.t), _JOB)
        elif self.s.job_mtbf_min is not None:
            if self.rng is None:
                raise ValueError("job-wide failures need an rng (or job_times)")
            self.push(self.t + float(self.rng.exponential(self.s.job_mtbf_min)), _JOB)

    # ---- the loop
    def run(self) -> dict:
        s = self.s
        for g in range(self.n):
            self.arm(g)
        self.next_job()
        _, self.depth, self.rate = self.evaluate()
        W, tau = float(s.work_min), float(s.ckpt_interval_min)
        heap, c = self.heap, self.c
        while True:
            while heap and not self.valid(heap[0]):
                heapq.heappop(heap)
            te = heap[0][0] if heap else math.inf
            if self.phase == _COMPUTE and self.t < self.stall_until:
                end = min(self.stall_until, te)
                c[_STALL_KEY[self.stall_cause]] += end - self.t
                if self.stall_until <= te:
                    self.t = self.stall_until
                    continue
            elif self.phase == _COMPUTE:
                dt_ck = tau - self.ct
                rem = W - self.committed - self.unc
                dt_w = rem / self.rate if self.rate > 0 else math.inf
                final = dt_w <= dt_ck + 1e-12 * max(1.0, tau)
                dt = dt_w if final else dt_ck
                if self.t + dt <= te:
                    self.advance(dt)
                    self.t += dt
                    if final:
                        self.unc = W - self.committed
                    self.start_ckpt(final)
                    continue
                self.advance(te - self.t)
            if te == math.inf:
                raise AssertionError("no event left outside computing")
            time, kind, a, _, _ = heapq.heappop(heap)
            self.t = time
            if kind == _GFAIL:
                self.on_failure(a)
            elif kind == _REJOIN:
                self.event()
                self.group_up(a)
                self.after_change(grew=False)
            elif kind == _PHASE:
                if self.on_phase_end():
                    break
            elif kind == _HW:
                self.on_hw()
            else:
                self.on_job()
        c["ttt_min"] = self.t
        c["wraps"] = int(math.floor((self.t0 + self.t) / self.P))
        c["failures"] = c["failures_seen"] + c["failures_absorbed"]
        return {k: (float(v) if k.endswith("_min") else int(v)) for k, v in c.items()}

    def advance(self, dt: float) -> None:
        if dt <= 0:
            return
        self.ct += dt
        w = self.rate * dt
        self.unc += w
        self.c["work_done_min"] += w
        self.c["compute_min"] += dt

    def on_failure(self, g: int) -> None:
        self.event()
        if self.phase == _RESTART:
            self.c["failures_absorbed"] += 1
            self.group_down(g)
            return
        self.c["failures_seen"] += 1
        self.group_down(g)
        self.after_change(grew=True)

    def on_job(self) -> None:
        self.event()
        self.next_job()
        if self.phase == _RESTART:
            return
        self.c["job_failures"] += 1
        self.lose()
        self.start_restart()

    def on_hw(self) -> None:
        self.event()
        self.pool_free += 1
        if self.queue:
            g = self.queue.popleft()
            self.pool_free -= 1
            self.got_spare(g, self.fail_end[g])
            if self.phase == _RESTART and self.waiting and not self.queue:
                self.end_restart()

    def on_phase_end(self) -> bool:
        if self.phase == _CKPT:
            self.event()
            self.c["ckpts"] += 1
            self.c["ckpt_min"] += self.t - self.ckpt_start
            self.committed += self.unc
            self.unc = 0.0
            if self.final:
                return True
            if self.restart_after:
                self.c["proactive_restarts"] += 1
                self.start_restart()
            else:
                self.phase = _COMPUTE
            return False
        self.c["restart_min"] += self.s.restart_min
        if self.queue:
            self.waiting = True
            self.wait_start = self.t
        else:
            self.end_restart()
        return False


def trace_run(setup: RunSetup, trace, offset_min: float = 0.0, options: TraceReplay = TraceReplay(),
              rng: np.random.Generator | None = None, job_times=None) -> dict:
    """One training run replayed on ``trace`` from trace time ``offset_min`` (the module docstring).
    ``job_times``: the job-wide failures' run times (minutes), instead of drawing them from ``rng``."""
    return _Replay(setup, trace, offset_min, options, rng, job_times).run()


def trace_runs(setup: RunSetup, trace, runs: int, options: TraceReplay = TraceReplay(), seed: int = 0) -> dict:
    """The ``runs`` runs of a replay: run k from trace time ``k P / runs``, with the k-th generator spawned from
    ``default_rng(seed)`` for its job-wide failures; arrays per counter."""
    _, _, period = unit_lists(trace)
    rngs = np.random.default_rng(seed).spawn(int(runs))
    rows = [trace_run(setup, trace, k * period / runs, options, rngs[k]) for k in range(int(runs))]
    return {k: np.asarray([row[k] for row in rows]) for k in COUNTERS}


def summary(out: dict) -> dict:
    """Mean TTT (hours) with its standard error over the runs, and the mean of every other counter."""
    ttt = np.asarray(out["ttt_min"], float)
    n = ttt.size
    res = {"ttt_hours": float(ttt.mean()) / 60.0,
           "ttt_stderr_hours": float(ttt.std(ddof=1) / math.sqrt(n)) / 60.0 if n > 1 else math.nan, "runs": int(n)}
    for k in COUNTERS:
        if k != "ttt_min":
            res[k] = float(np.mean(out[k]))
    return res
