"""An independent, event-by-event reference simulator of one whole training run (docs/runs.md).

This is the yardstick the whole-run kernel is tested against, written from the model as the documentation states it
alone (docs/model.md#failures-wipe-out-depth-overhead, docs/scenarios.md#real-clusters-scenarios and
docs/runs.md#the-conventions-of-a-run) and kept deliberately plain: a priority queue of timed events, one Python
object per run, the depth of every down-set computed by a maximum flow (``scipy.sparse.csgraph.maximum_flow``) and
cached by the frozen set of down ring positions (``depth_oracle``). It imports numpy, ``spare_jax.model.runsetup``
and ``depth_oracle`` (numpy and scipy) only.

Entry points: ``simulate_run(setup, rng)`` (one run, a dict of numbers), ``reference_runs(setup, runs,
seed)`` (arrays over independent runs, one ``numpy.random.Generator`` spawned from ``default_rng(seed)``
per run) and ``summary(out)``.

The run (times in minutes; work in minutes of failure-free computing at depth 1)
--------------------------------------------------------------------------------
Phases: *computing* (possibly *stalled*: no work, see Stalls below), *checkpoint* (C of wall time, no work),
*restart* (R of wall time, then possibly a *spare wait*). State: each physical group is up (with an absolute
clock time at which its own failure fires), waiting for a spare, in repair (holding a spare, rejoins at a drawn
time), or holding a spare while down (no repair, or during a restart); the spare pool (free spares, a
first-come-first-served queue of waiting groups, node sets away in hardware repair); the committed work, the
uncommitted work, the computing-time counter ``ct``.

- Start: every group up, every clock new (age 0): group g's clock fires at ``scale[g] * Weibull(k)``
  (``setup.weibull_scale()``, ``setup.weibull_shape``; k = 1 is the exponential).
- Computing: work accrues at ``rate`` = 1/d (``shrink``: alive/N), ``ct`` at 1. A checkpoint starts when
  ``ct`` reaches tau. The *final* checkpoint starts the moment committed + uncommitted work reaches W (the
  last interval is partial; if both happen at once it is the final one). The run ends when the final
  checkpoint completes; TTT is the wall time then and includes it.
- Checkpoint: C of wall time; ``ct`` is reset to 0 at its start; it commits all uncommitted work at its end.
  A wipe-out, a job-wide failure or (elastic) no group up during it abandons it (nothing committed, the
  uncommitted work is lost) and starts a global restart.
- Group failure (own clock or domain event) while computing or checkpointing: the group goes down, its node
  set leaves for hardware repair (finite pool), it claims a spare (or queues), and when it holds one its
  repair starts (repair time drawn from the law: ``fixed`` D, ``exp`` mean D, ``lognormal`` with
  mu = ln D - sigma^2/2 and log-sd sigma); without repair it holds the spare, down, until the next global
  restart. Then the wipe-out / depth is evaluated (once per event: a domain event downs all its up groups
  first). A wipe-out loses the uncommitted work and starts a global restart.
- Rejoin (repair done): the group is up with a new clock (age 0).
- Job-wide failure while computing or checkpointing: the uncommitted work is lost, a global restart starts.
- Global restart: ``ct`` is reset to 0; repairs in flight are cancelled (those groups keep their spares);
  the restart lasts R; clocks keep running: a group whose clock fires during it (or during the spare wait)
  goes down, its node set leaves for H and it claims a spare (FIFO); domain and job-wide events during a
  restart or spare wait do nothing. At R, if some down group still waits for a spare, the *spare wait* begins
  and lasts until the last waiting group has one. At the end every down group is replaced (new clock); up
  groups keep their running clock (``ages == "kept"``: the absolute firing time is unchanged) or draw a new one
  (``"renewed"``). Computing resumes with everything up (d = 1).
- Proactive restart (``restart_depth`` = D_max): when, while computing, an event brings d from below D_max
  to D_max or above, a checkpoint starts at once and a global restart follows its end. If an event during a
  regular checkpoint brings d to D_max or above, that checkpoint serves and the restart follows its end
  (unless it is the final one: then the run ends). Once decided, the restart follows even if a rejoin brings
  d back below D_max. A proactive checkpoint that is abandoned turns into the ordinary wipe-out/job restart.
- Spares (``spares`` = K, ``hardware_repair_min`` = H): K free spares at the start; every group failure
  (own clock, domain event, a clock firing during a restart or a spare wait) sends the group's node set away
  for exactly H, after which it returns to the pool; a job-wide failure breaks nothing. A failing group takes a
  free spare at once or waits, first come first served (a domain event queues its groups in increasing
  physical id). A returning node set goes to the first waiting group. The repair D starts when the group
  obtains its spare. ``spares = None``: unlimited, every failing group has a spare at once and the restart
  never waits.
- Stalls (``failure_stall_min`` = S, ``rejoin_stall_min`` = S_j; 0 = none): a group failure or a domain event
  (one that downs at least one group) while computing or checkpointing that ends in no global restart pauses
  the whole job until S after it; a rejoin pauses it until S_j after it. A pause never shortens the one in
  progress: the deadline becomes the later of the two (stalls never stack), and its cause is the one whose
  deadline that is (the old one on a tie). While stalled in the computing phase no work is done and ``ct``
  does not advance, so neither a regular nor the final checkpoint starts in a stall; clocks, repairs and
  hardware repairs keep running. A checkpoint runs undelayed through a stall (its wall time is checkpoint
  time); computing resumes when both have ended. A wipe-out or a job-wide failure ends the stall and starts
  the restart; failures during a restart or a spare wait cause no stall and groups replaced at the end of a
  restart no rejoin stall. An event that brings d to D_max starts the proactive checkpoint with no stall
  and ends any stall in progress (the restart follows); no event causes a stall while a proactive
  checkpoint (or a regular one that serves as one) runs. The final checkpoint ends the run even inside a
  stall. ``none`` never stalls (every failure is a restart; no rejoins).

Speed (2-core shared CPU): N = 64, r = 3, m = 4, group MTBF 3000 min, fixed repair 300 min, W = 48 h,
C = 2, R = 10, tau = 60: about 5,000-6,000 events per second (~45 ms per run of ~260 events); the
max-flows on new down-sets take nearly all of it (about 1.35 flows per new state); with every state
cached the loop itself runs at ~280,000 events per second.

Schemes
-------
- ``spare`` (stacked over ring positions, r, m): capacity c (micro-batches per group) is feasible when a
  flow network source -> shard (m) -> surviving holder position (m) -> sink (c) carries all N*m
  micro-batches; d = c*/m with c* the least feasible c in [max(m, ceil(N m / alive)), r m]. The search
  climbs from a lower bound (also the capacity of the down-set before a failure: feasibility only shrinks
  as groups go down) and, when the flow at c falls short by ``deficit``, jumps to c + ceil(deficit/alive)
  (one more unit on every sink edge adds at most ``alive`` to the flow). Nothing feasible at c = r m is a
  wipe-out.
- ``rep`` (block, r | N): d = r always; a wipe-out when every position of a block is down.
- ``none`` (r = 1): d = 1; every group failure is a wipe-out.
- ``elastic``: no shards to lose; ``rebalance`` d = ceil(N m / alive)/m, ``shrink`` d = 1 with work rate
  alive/N; a global restart only at a job-wide failure or when no group is up (counted as a wipe-out).
  Elastic without repair is refused (ValueError).

Counters returned (per run)
---------------------------
``ttt_min``, ``compute_min`` (wall time computing), ``ckpt_min`` (wall time checkpointing, abandoned
checkpoints included), ``restart_min`` (R per restart; spare wait excluded), ``spare_wait_min`` (restarts
waiting for spares beyond R), ``failure_stall_min`` and ``rejoin_stall_min`` (wall time stalled while no
checkpoint runs: each stalled instant counted once, under the cause of the deadline that ends the stall as
it stands at that instant); identity: ttt = compute + ckpt + restart + spare wait + failure stall + rejoin
stall. ``work_done_min`` (work computed, committed or lost = W + lost), ``lost_work_min``,
``group_failures`` (every group that went down, by its own clock or a domain event, in any phase: a domain
event downing k groups counts k), ``wipeouts`` (restarts forced by a lost shard, or by no group up for
elastic), ``job_failures`` (job-wide failures that hit while computing or checkpointing),
``restarts`` (every global restart, proactive included), ``proactive_restarts``, ``ckpts`` (completed
checkpoints, the final one and proactive ones included), ``events``.

``events`` counts the events the loop processes: every group clock firing (any phase), every domain and
job-wide clock firing (also those that change nothing: during a restart, or a domain with no group up),
every rejoin, every node set returning from hardware repair, every checkpoint start and every completed
checkpoint end, every restart end (the moment R elapses while spares are still awaited is not an event:
the restart end is counted once, when it really ends). The end of a stall is not an event. Cancelled
entries (an abandoned checkpoint's end, a cancelled repair, a replaced clock) are not events. More than
``max_events`` raises RuntimeError.

Choices where the conventions of a run leave room (stated, not guessed silently)
--------------------------------------------------------------------------------
1. Domain clocks: one Poisson process per level with rate (number of domains)/mtbf, the domain drawn
   uniformly: the same law as one exponential clock per domain (memoryless).
2. D_max "brings d to D_max": a crossing from d < D_max to d >= D_max. So ``rep``/``none``/``shrink``
   (constant d) never restart proactively, and D_max <= 1 never fires.
3. Ties at one instant are processed in the order: node set returns, rejoins, phase ends (checkpoint end,
   R elapsed), group clocks, domain events, job-wide events; the computing triggers (checkpoint start,
   final checkpoint, the end of a stall) go before any queued event at the same instant. So a node set
   returning exactly when R elapses ends the restart without a spare wait (the "later of R and the last
   spare").
4. A group whose clock fires while it is up during a restart: counted in ``group_failures``; never a
   wipe-out.
5. Elastic "no group up" is counted as a wipe-out (it loses the uncommitted work like one).
6. A final checkpoint that completes ends the run even if a proactive restart was pending.
7. A group failing, obtaining a spare and then (same event) causing a wipe-out: its repair is cancelled by
   the restart at once; it holds its spare and is replaced at the end of the restart.
8. ``spares`` given without repair: a failed group claims a spare and holds it, down, until the next restart; the
   restart waits for every down group's spare (docs/runs.md#spare-pool: "A global restart needs a spare for every
   group that is down").
9. Stall attribution: an instant stalled is counted under the cause of the deadline in force at that instant
   (a failure stall extended by a rejoin is failure stall up to the rejoin, rejoin stall after it), not
   under the cause of the deadline the whole contiguous stall finally ends at.
10. A domain event that downs no group (all its groups already down) causes no stall.
"""

from __future__ import annotations

import heapq
import math
from collections import deque

import numpy as np

from ..model.runsetup import RunSetup
from .depth_oracle import oracle_for

__all__ = ["simulate_run", "reference_runs", "summary", "COUNTERS"]

COUNTERS = ("ttt_min", "compute_min", "ckpt_min", "restart_min", "spare_wait_min", "failure_stall_min",
            "rejoin_stall_min", "work_done_min", "lost_work_min", "group_failures", "wipeouts", "job_failures",
            "restarts", "proactive_restarts", "ckpts", "events")

# group states
_UP, _WAIT, _REPAIR, _HOLD = 0, 1, 2, 3
# phases
_COMPUTE, _CKPT, _RESTART = 0, 1, 2
# queued event kinds; the kind is also the tie order at one instant
_HW, _REJOIN, _PHASE, _GFAIL, _DOMAIN, _JOB = 0, 1, 2, 3, 4, 5
# the counter each stall cause is counted under
_STALL_KEY = {"failure": "failure_stall_min", "rejoin": "rejoin_stall_min"}


def _check(setup: RunSetup) -> None:
    if setup.scheme not in ("spare", "rep", "none", "elastic"):
        raise ValueError(f"unknown scheme {setup.scheme!r}")
    n, r = setup.groups, setup.redundancy
    if n < 1 or r < 1 or setup.microbatches < 1:
        raise ValueError("groups, redundancy and microbatches must be >= 1")
    if sorted(setup.ring) != list(range(n)):
        raise ValueError("ring must be a permutation of 0..N-1")
    if len(setup.group_mtbf_min) != n:
        raise ValueError("group_mtbf_min needs one entry per group")
    if setup.scheme in ("none", "elastic") and r != 1:
        raise ValueError(f"{setup.scheme} has r = 1")
    if setup.scheme == "rep" and n % r:
        raise ValueError("rep needs r | N")
    if setup.scheme == "elastic" and setup.repair_time_min is None:
        raise ValueError("elastic without repair is refused: a group that never rejoins makes it a slow none")
    if setup.scheme == "elastic" and setup.elastic_data not in ("rebalance", "shrink"):
        raise ValueError(f"unknown elastic_data {setup.elastic_data!r}")
    if setup.repair_time_min is not None and setup.repair_law not in ("fixed", "exp", "lognormal"):
        raise ValueError(f"unknown repair law {setup.repair_law!r}")
    if setup.spares is not None and (setup.spares < 0 or setup.hardware_repair_min is None):
        raise ValueError("a finite spare pool needs spares >= 0 and hardware_repair_min")
    if setup.ages not in ("kept", "renewed"):
        raise ValueError(f"ages must be kept or renewed, got {setup.ages!r}")
    if not setup.ckpt_interval_min > 0 or setup.work_min <= 0:
        raise ValueError("tau and W must be > 0")


class _Run:
    def __init__(self, setup: RunSetup, rng: np.random.Generator, max_events: int):
        _check(setup)
        self.s = setup
        self.rng = rng
        self.max_events = int(max_events)
        n = self.n = setup.groups
        self.m = setup.microbatches
        self.scheme = setup.scheme
        self.shape = float(setup.weibull_shape)
        self.scale = np.asarray(setup.weibull_scale(), float)
        self.pos = [0] * n  # physical group -> ring position
        for i, g in enumerate(setup.ring):
            self.pos[int(g)] = i
        self.oracle = oracle_for(setup) if self.scheme == "spare" else None
        self.dmax = setup.restart_depth
        self.repair = setup.repair_time_min
        self.finite_pool = setup.spares is not None
        self.pool_free = setup.spares if self.finite_pool else 0
        self.H = setup.hardware_repair_min
        self.levels = []
        for members_of, mtbf in setup.domains:
            ids = np.asarray(members_of)
            uniq = np.unique(ids)
            self.levels.append(([list(map(int, np.flatnonzero(ids == d))) for d in uniq], float(mtbf)))
        # state
        self.t = 0.0
        self.heap: list = []
        self.seq = 0
        self.status = [_UP] * n
        self.clock_gen = [0] * n
        self.repair_gen = [0] * n
        self.queue: deque = deque()
        self.down_pos: set = set()
        self.block_down = [0] * (n // setup.redundancy) if self.scheme == "rep" else None
        self.phase = _COMPUTE
        self.phase_gen = 0
        self.final = False
        self.restart_after = False
        self.waiting = False  # a restart past R, waiting for spares
        self.wait_start = 0.0
        self.stall_s = float(setup.failure_stall_min)
        self.stall_j = float(setup.rejoin_stall_min)
        self.stall_until = -math.inf  # the job is stalled while t < stall_until
        self.stall_cause = "failure"  # the cause whose deadline is stall_until
        self.committed = 0.0
        self.unc = 0.0
        self.ct = 0.0
        self.depth, self.rate = 1.0, 1.0
        self.cap = self.m  # spare: the capacity of the last down-set evaluated
        self.c = dict.fromkeys(COUNTERS, 0.0)
        for k in ("group_failures", "wipeouts", "job_failures", "restarts", "proactive_restarts", "ckpts",
                  "events"):
            self.c[k] = 0

    # ---- the queue
    def push(self, time, kind, a=0, token=0):
        if time == math.inf:
            return
        self.seq += 1
        heapq.heappush(self.heap, (time, kind, self.seq, a, token))

    def valid(self, entry) -> bool:
        _, kind, _, a, token = entry
        if kind == _GFAIL:
            return self.status[a] == _UP and token == self.clock_gen[a]
        if kind == _REJOIN:
            return self.status[a] == _REPAIR and token == self.repair_gen[a]
        if kind == _PHASE:
            return token == self.phase_gen
        return True

    def event(self):
        self.c["events"] += 1
        if self.c["events"] > self.max_events:
            raise RuntimeError(f"more than max_events = {self.max_events} events in one run")

    # ---- draws
    def new_clock(self, g):
        self.clock_gen[g] += 1
        self.push(self.t + self.scale[g] * self.rng.weibull(self.shape), _GFAIL, g, self.clock_gen[g])

    def repair_time(self) -> float:
        s, d = self.s, self.repair
        if s.repair_law == "fixed":
            return float(d)
        if s.repair_law == "exp":
            return float(self.rng.exponential(d))
        sig = float(s.repair_sigma)
        return float(self.rng.lognormal(math.log(d) - sig * sig / 2.0, sig))

    # ---- depth
    def evaluate(self, grew: bool = False):
        """(wiped, depth, rate) of the current down-set; ``grew``: it is a superset of the last one evaluated
        (whose capacity is then a lower bound)."""
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
        if alive == 0:
            return (True, math.inf, 0.0)
        if self.s.elastic_data == "shrink":
            return (False, 1.0, alive / n)
        c = -(-n * m // alive)
        return (False, c / m, m / c)

    # ---- groups and spares
    def group_down(self, g):
        self.status[g] = _WAIT
        self.clock_gen[g] += 1
        p = self.pos[g]
        self.down_pos.add(p)
        if self.block_down is not None:
            self.block_down[p // self.s.redundancy] += 1
        self.c["group_failures"] += 1
        if self.finite_pool:
            self.push(self.t + self.H, _HW)
            if self.pool_free > 0:
                self.pool_free -= 1
                self.got_spare(g)
            else:
                self.queue.append(g)
        else:
            self.got_spare(g)

    def got_spare(self, g):
        if self.phase != _RESTART and self.repair is not None:
            self.status[g] = _REPAIR
            self.repair_gen[g] += 1
            self.push(self.t + self.repair_time(), _REJOIN, g, self.repair_gen[g])
        else:
            self.status[g] = _HOLD

    def group_up(self, g):
        self.status[g] = _UP
        p = self.pos[g]
        self.down_pos.discard(p)
        if self.block_down is not None:
            self.block_down[p // self.s.redundancy] -= 1
        self.new_clock(g)

    # ---- phases
    def start_ckpt(self, final: bool):
        self.event()
        self.phase = _CKPT
        self.final = final
        self.ct = 0.0
        self.phase_gen += 1
        self.ckpt_start = self.t
        self.push(self.t + self.s.ckpt_cost_min, _PHASE, 0, self.phase_gen)

    def lose(self):
        if self.phase == _CKPT:
            self.c["ckpt_min"] += self.t - self.ckpt_start
        self.c["lost_work_min"] += self.unc
        self.unc = 0.0

    def start_restart(self):
        self.c["restarts"] += 1
        self.phase = _RESTART
        self.restart_after = False
        self.final = False
        self.waiting = False
        self.stall_until = -math.inf  # a restart ends any stall
        self.ct = 0.0
        self.phase_gen += 1
        for g in range(self.n):
            if self.status[g] == _REPAIR:
                self.repair_gen[g] += 1
                self.status[g] = _HOLD
        self.push(self.t + self.s.restart_min, _PHASE, 0, self.phase_gen)

    def end_restart(self):
        self.event()
        if self.waiting:
            self.c["spare_wait_min"] += self.t - self.wait_start
            self.waiting = False
        renew = self.s.ages == "renewed"
        for g in range(self.n):
            st = self.status[g]
            if st == _HOLD:
                self.group_up(g)
            elif st == _UP:
                if renew:
                    self.new_clock(g)
            else:
                raise AssertionError("a restart ended with a group waiting or in repair")
        assert not self.down_pos and not self.queue
        self.phase = _COMPUTE
        self.ct = 0.0
        _, self.depth, self.rate = self.evaluate()

    def after_change(self, grew: bool):
        """Once per group-failure / domain / rejoin event while computing or checkpointing (``grew``: a
        failure or a domain event, else a rejoin)."""
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
            self.stall_until = -math.inf  # the job is about to restart: no stall
            if self.phase == _COMPUTE:
                self.start_ckpt(final=False)
            return
        if self.restart_after:
            return  # during a proactive checkpoint (or one that serves as such): no stall
        if grew:
            self.stall("failure", self.stall_s)
        else:
            self.stall("rejoin", self.stall_j)

    def stall(self, cause: str, length: float):
        """Pause the whole job until ``length`` after now, unless it is already paused until later."""
        if length > 0 and self.t + length > self.stall_until:
            self.stall_until = self.t + length
            self.stall_cause = cause

    # ---- the loop
    def run(self) -> dict:
        s = self.s
        for g in range(self.n):
            self.new_clock(g)
        for li, (_, mtbf) in enumerate(self.levels):
            self.push(self.rng.exponential(mtbf / len(self.levels[li][0])), _DOMAIN, li)
        if s.job_mtbf_min is not None:
            self.push(self.rng.exponential(s.job_mtbf_min), _JOB)
        _, self.depth, self.rate = self.evaluate()
        W, tau = float(s.work_min), float(s.ckpt_interval_min)
        heap, c = self.heap, self.c
        while True:
            while heap and not self.valid(heap[0]):
                heapq.heappop(heap)
            te = heap[0][0] if heap else math.inf
            if self.phase == _COMPUTE and self.t < self.stall_until:
                # stalled: no work, no computing time; every instant under the cause of the current deadline
                end = min(self.stall_until, te)
                c[_STALL_KEY[self.stall_cause]] += end - self.t
                if self.stall_until <= te:  # the stall ends before the next event (or with it)
                    self.t = self.stall_until
                    continue
            elif self.phase == _COMPUTE:
                dt_ck = tau - self.ct
                rem = W - self.committed - self.unc
                dt_w = rem / self.rate
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
            time, kind, _, a, _ = heapq.heappop(heap)
            self.t = time
            if kind == _GFAIL:
                self.on_gfail(a)
            elif kind == _REJOIN:
                self.event()
                self.group_up(a)
                self.after_change(grew=False)
            elif kind == _PHASE:
                if self.on_phase_end():
                    break
            elif kind == _HW:
                self.on_hw()
            elif kind == _DOMAIN:
                self.on_domain(a)
            else:
                self.on_job()
        c["ttt_min"] = self.t
        return {k: (float(v) if k.endswith("_min") else int(v)) for k, v in c.items()}

    def advance(self, dt):
        if dt <= 0:
            return
        self.ct += dt
        w = self.rate * dt
        self.unc += w
        self.c["work_done_min"] += w
        self.c["compute_min"] += dt

    def on_gfail(self, g):
        self.event()
        self.group_down(g)
        if self.phase != _RESTART:
            self.after_change(grew=True)

    def on_domain(self, li):
        self.event()
        groups, mtbf = self.levels[li]
        self.push(self.t + self.rng.exponential(mtbf / len(groups)), _DOMAIN, li)
        members = groups[int(self.rng.integers(len(groups)))] if len(groups) > 1 else groups[0]
        if self.phase == _RESTART:
            return
        hit = [g for g in members if self.status[g] == _UP]
        if not hit:
            return
        for g in hit:
            self.group_down(g)
        self.after_change(grew=True)

    def on_job(self):
        self.event()
        self.push(self.t + self.rng.exponential(self.s.job_mtbf_min), _JOB)
        if self.phase == _RESTART:
            return
        self.c["job_failures"] += 1
        self.lose()
        self.start_restart()

    def on_hw(self):
        self.event()
        self.pool_free += 1
        if self.queue:
            g = self.queue.popleft()
            self.pool_free -= 1
            self.got_spare(g)
            if self.phase == _RESTART and self.waiting and not self.queue:
                self.end_restart()

    def on_phase_end(self) -> bool:
        """A checkpoint's end or R elapsed; True when the run is over."""
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
        # restart: R has elapsed
        self.c["restart_min"] += self.s.restart_min
        if self.queue:
            self.waiting = True
            self.wait_start = self.t
        else:
            self.end_restart()
        return False


def simulate_run(setup: RunSetup, rng: np.random.Generator, max_events: int = 10_000_000) -> dict:
    """One training run, event by event (docs/runs.md#the-conventions-of-a-run; the semantics are in the module
    docstring)."""
    return _Run(setup, rng, max_events).run()


def reference_runs(setup: RunSetup, runs: int, seed: int = 0, max_events: int = 10_000_000) -> dict:
    """``runs`` independent runs, run i with the i-th generator spawned from ``default_rng(seed)``;
    arrays per counter."""
    rngs = np.random.default_rng(seed).spawn(int(runs))
    rows = [simulate_run(setup, g, max_events) for g in rngs]
    return {k: np.asarray([row[k] for row in rows]) for k in COUNTERS}


def summary(out: dict) -> dict:
    """Mean TTT (hours) and its standard error, the slowdown sum(compute)/sum(work done) with its
    delta-method standard error, the number of runs, and the mean of every other counter."""
    ttt = np.asarray(out["ttt_min"], float)
    n = ttt.size
    x = np.asarray(out["compute_min"], float)
    y = np.asarray(out["work_done_min"], float)
    ratio = x.sum() / y.sum()
    if n > 1:
        ttt_se = ttt.std(ddof=1) / math.sqrt(n)
        ratio_se = math.sqrt(np.var(x - ratio * y, ddof=1) / n) / y.mean()
    else:
        ttt_se = ratio_se = math.nan
    res = {"ttt_hours": ttt.mean() / 60.0, "ttt_stderr_hours": ttt_se / 60.0, "slowdown": float(ratio),
           "slowdown_stderr": float(ratio_se), "runs": int(n)}
    for k in COUNTERS:
        if k != "ttt_min":
            res[k] = float(np.mean(out[k]))
    return res
