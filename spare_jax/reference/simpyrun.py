"""A SimPy discrete-event simulation of one whole training run (docs/runs.md#what-a-run-is): the baseline a benchmark
measures the whole-run kernel against (events per second), and a second, independent reading of the documented model.

Written from the model as the documentation states it (docs/model.md#failures-wipe-out-depth-overhead,
docs/scenarios.md#real-clusters-scenarios and docs/runs.md#the-conventions-of-a-run) and ``model.runsetup.RunSetup``
alone. One SimPy process per physical group (its failure clock, its repair), one per failure domain, one for the
job-wide clock, one per node set away for hardware repair (finite spare pool), and the training process (compute,
checkpoint and restart phases). Processes that change the cluster's state do so synchronously (``_go_down``,
``_go_up``, ``_changed``) and *interrupt* the processes whose plans that changes: a group process re-reads its state
after an interrupt, the training process accrues the work done at the rate it was computing at and re-plans.

Semantics (the conventions of a run, docs/runs.md#the-conventions-of-a-run, and the choices where they are silent):

* A run starts with every group up and every clock new. Work is in minutes of failure-free computing; the
  job computes at rate ``1/d`` (``spare``: d = c/m, c the least capacity in m..r m micro-batches per
  surviving group that serves every shard's m micro-batches from its surviving holders, found by max-flow
  and cached by the down set; ``rep``: d = r; ``none``: d = 1; ``elastic``: rebalance d = ceil(N m/alive)/m,
  shrink rate alive/N, whose "depth" for the proactive restart is N/alive).
* A wipe-out: some shard has no surviving holder (``spare``/``none``/``rep``) or no group is up
  (``elastic``). A wipe-out or an effective job-wide failure (during computing or a checkpoint) loses the
  work since the last committed checkpoint and starts a global restart.
* The computing-time counter for tau restarts at each checkpoint start and each restart start (so every
  computing phase starts with tau to go). The moment the total work reaches W the final checkpoint starts;
  the run ends when it completes (TTT includes it). A checkpoint commits at its end; a wipe-out or job-wide
  failure during it abandons it.
* During a restart R clocks keep running: a group whose clock fires goes down (it is a group failure, its
  node set leaves for hardware repair, no repair starts) and is replaced at the end; domain and job-wide
  events do nothing; repairs in flight are cancelled at its start. At its end (after the spare stall, if
  any) every down group is up with a new clock; up groups keep their clocks (``ages='kept'``) or draw new
  ones (``'renewed'``).
* A rejoining group starts a new clock. A domain event downs all its up members as one event; wipe-out and
  depth are checked once, after it. Group clocks are exponential or Weibull (scale from the mean); domain
  and job-wide clocks exponential. Repair laws ``fixed``/``exp``/``lognormal`` all have mean D.
* Proactive restart (``restart_depth`` = D_max): after an event that leaves d >= D_max while computing, a
  checkpoint starts at once; during a regular checkpoint it marks the restart to follow that checkpoint's
  end (not after the final one); once marked, the restart follows even if d falls back. It is not checked
  at a restart's end (``rep`` with r >= D_max would otherwise restart forever).
* Spare pool (``spares`` = K, ``hardware_repair_min`` = H): every group failure sends its node set away for
  exactly H (then it returns to the pool); the failed group takes a free spare at once or queues, first
  come first served; repair D starts when it has one (no repair during a restart: it holds the spare,
  down). A restart ends at the later of R and the moment the queue empties (the stall: ``stall_min``).

``events`` counts state transitions: group failures (own clock, including during a restart), rejoins,
domain events that down at least one group, effective job-wide failures, checkpoint starts and ends,
restart ends and node-set returns. ``simpy_run`` raises ``EventLimitExceeded`` beyond ``max_events``.
"""

from __future__ import annotations

import collections
import math

import numpy as np
import simpy
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_flow

from ..model.runsetup import RunSetup

UP, REPAIR, HELD, QUEUED = 0, 1, 2, 3  # group states: up; down in repair; down holding its node set; queued
COMPUTE, CKPT, RESTART = 0, 1, 2  # training phases

KEYS = ("ttt_min", "compute_min", "work_done_min", "lost_work_min", "group_failures", "wipeouts", "job_failures",
        "restarts", "proactive_restarts", "stall_min", "ckpts", "events")


class EventLimitExceeded(RuntimeError):
    """A run needed more than ``max_events`` state transitions."""


class _Run:
    """The state of one run and its SimPy processes (see the module docstring)."""

    def __init__(self, setup: RunSetup, rng: np.random.Generator, max_events: int):
        s = setup
        n, r, m = s.groups, s.redundancy, s.microbatches
        if s.scheme not in ("spare", "rep", "none", "elastic"):
            raise ValueError(f"unknown scheme {s.scheme!r}")
        if s.scheme in ("none", "elastic") and r != 1:
            raise ValueError(f"{s.scheme} needs redundancy 1, got {r}")
        if s.scheme == "rep" and n % r:
            raise ValueError(f"rep needs r | N (N = {n}, r = {r})")
        if s.scheme == "elastic" and s.repair_time_min is None:
            raise ValueError("elastic without repair is refused: a group that never rejoins makes it a slow none")
        if s.spares is not None and s.hardware_repair_min is None:
            raise ValueError("a finite spare pool needs hardware_repair_min")
        if s.repair_time_min is not None and s.repair_law not in ("fixed", "exp", "lognormal"):
            raise ValueError(f"repair law must be fixed, exp or lognormal, got {s.repair_law!r}")
        if s.ages not in ("kept", "renewed"):
            raise ValueError(f"ages must be kept or renewed, got {s.ages!r}")
        self.s, self.rng, self.max_events = s, rng, int(max_events)
        self.n, self.r, self.m = n, r, m
        self.env = env = simpy.Environment()
        self.never = env.event()  # waited on by groups with no timer of their own; never triggered
        if sorted(s.ring) != list(range(n)):
            raise ValueError("ring must be a permutation of 0..N-1")
        self.pos_of = np.empty(n, dtype=np.int64)
        self.pos_of[np.asarray(s.ring, dtype=np.int64)] = np.arange(n)
        self.holders = s.holders() if s.scheme != "elastic" else None
        self.mtbf = [float(x) for x in s.group_mtbf_min]
        self.scale = [float(x) for x in s.weibull_scale()]
        self.shape = float(s.weibull_shape)
        self.repair = s.repair_time_min is not None
        if self.repair and s.repair_law == "lognormal":
            self.ln_mu = math.log(s.repair_time_min) - 0.5 * s.repair_sigma ** 2
        self.limited = s.spares is not None
        self.free = int(s.spares) if self.limited else 0
        self.queue = collections.deque()
        self.stall_event = None
        self.dmax = s.restart_depth
        # state
        self.state = [UP] * n
        self.due = [0.0] * n  # the clock's firing time (UP) or the repair's end (REPAIR)
        self.ver = [0] * n  # bumped at every change of a group's plan (a timer already running is stale)
        self.down_pos = np.zeros(n, dtype=bool)  # by ring position
        self.alive = n
        self.cache = {}
        self.phase = COMPUTE
        self.failed = False  # a wipe-out or job-wide failure ended the epoch (training process to restart)
        self.proactive = False  # a proactive restart follows the current / next checkpoint
        self.final = False  # the checkpoint in progress is the final one
        self.poked = False  # an interrupt to the training process is pending
        self.committed = 0.0
        self.pending = 0.0  # work since the last committed checkpoint
        self.out = dict.fromkeys(KEYS, 0)
        self.out.update(ttt_min=0.0, compute_min=0.0, work_done_min=0.0, lost_work_min=0.0, stall_min=0.0)
        self.depth, self.rate = 1.0, 1.0
        _, self.depth, self.rate = self._cover()
        for g in range(n):
            self.due[g] = self._clock(g)
        self.procs = [env.process(self._group(g)) for g in range(n)]
        for members_of, mtbf in s.domains:
            members_of = np.asarray(members_of)
            for dom in np.unique(members_of):
                env.process(self._domain([int(g) for g in np.flatnonzero(members_of == dom)], float(mtbf)))
        if s.job_mtbf_min is not None:
            env.process(self._job(float(s.job_mtbf_min)))
        self.trainer = env.process(self._train())

    # ---- draws
    def _clock(self, g):
        if self.shape == 1.0:
            return self.env.now + self.rng.exponential(self.mtbf[g])
        return self.env.now + self.scale[g] * self.rng.weibull(self.shape)

    def _repair_time(self):
        s = self.s
        if s.repair_law == "fixed":
            return float(s.repair_time_min)
        if s.repair_law == "exp":
            return self.rng.exponential(s.repair_time_min)
        if s.repair_law == "lognormal":
            return self.rng.lognormal(self.ln_mu, s.repair_sigma)
        raise ValueError(f"unknown repair law {s.repair_law!r}")

    # ---- coverage
    def _cover(self, grew=None):
        """(wiped, depth, rate) of the current up set; ``grew``: the down set grew (True) or shrank (False)
        from the one whose depth is ``self.depth`` (None: unknown)."""
        s, n, m = self.s, self.n, self.m
        if s.scheme == "elastic":
            if self.alive == 0:
                return True, math.inf, 0.0
            if s.elastic_data == "shrink":
                return False, n / self.alive, self.alive / n
            d = math.ceil(n * m / self.alive) / m
            return False, d, 1.0 / d
        key = self.down_pos.tobytes()
        d = self.cache.get(key)
        if d is None:
            d = self.cache[key] = self._solve(grew)
        if d == 0.0:
            return True, math.inf, 0.0
        return False, d, 1.0 / d

    def _solve(self, grew):
        """The depth of the current down set (0.0: a wipe-out): the least capacity c for which the max-flow
        source -> shards (m) -> surviving holders (m) -> sink (c) carries all N m micro-batches, over c.

        Feasibility is monotone in c and in the down set, so the search starts from the previous depth: up
        from it when the down set grew, down from it when it shrank; c = r m always serves (each shard whole
        to one surviving holder) and is not tested."""
        down = self.down_pos
        dead = down[self.holders]  # [N, r]
        if dead.all(axis=1).any():
            return 0.0
        if self.s.scheme == "rep":
            return float(self.r)
        n, m, r = self.n, self.m, self.r
        if r == 1:
            return 1.0
        js, ls = np.nonzero(~dead)  # row-major: the edges of shard 0 first, then shard 1, ...
        alive_pos = np.flatnonzero(~down)
        size = 2 * n + 2  # source 0, shards 1..n, ring positions n+1..2n, sink 2n+1
        # CSR rows in order: source -> every shard (m), shard -> each surviving holder (m), holder -> sink (c)
        indices = np.concatenate([1 + np.arange(n), 1 + n + self.holders[js, ls],
                                  np.full(alive_pos.size, size - 1)]).astype(np.int32)
        per_row = np.zeros(size, np.int64)
        per_row[0] = n
        per_row[1:n + 1] = np.bincount(js, minlength=n)
        per_row[1 + n + alive_pos] = 1
        indptr = np.concatenate([[0], np.cumsum(per_row)]).astype(np.int32)
        caps = np.full(indices.size, m, np.int32)

        def serves(c):
            caps[n + js.size:] = c
            graph = csr_matrix((caps, indices, indptr), shape=(size, size))
            return maximum_flow(graph, 0, size - 1).flow_value == n * m

        low = max(m, -(-n * m // alive_pos.size))
        prev = round(self.depth * m) if math.isfinite(self.depth) else None
        if grew is False and prev is not None:
            c = prev
            while c - 1 >= low and serves(c - 1):
                c -= 1
            return c / m
        c = max(low, prev) if grew and prev is not None else low
        while c < r * m and not serves(c):
            c += 1
        return c / m

    # ---- bookkeeping
    def _count(self):
        self.out["events"] += 1
        if self.out["events"] > self.max_events:
            raise EventLimitExceeded(f"more than {self.max_events} events in one run")

    def _wake(self, g):
        proc = self.procs[g]
        if self.env.active_process is not proc:
            proc.interrupt()

    def _poke(self):
        if not self.poked:
            self.poked = True
            self.trainer.interrupt()

    def _go_down(self, g):
        """Group g (up) fails: it leaves the up set and gets a spare (or queues for one)."""
        self.ver[g] += 1
        self.down_pos[self.pos_of[g]] = True
        self.alive -= 1
        self.out["group_failures"] += 1
        if self.limited:
            self.env.process(self._node_set())
            if self.free > 0:
                self.free -= 1
            else:
                self.state[g] = QUEUED
                self.queue.append(g)
                return
        self._has_spare(g)

    def _has_spare(self, g):
        if self.repair and self.phase != RESTART:
            self.state[g] = REPAIR
            self.due[g] = self.env.now + self._repair_time()
        else:
            self.state[g] = HELD

    def _go_up(self, g):
        self.ver[g] += 1
        self.state[g] = UP
        self.due[g] = self._clock(g)
        if self.down_pos[self.pos_of[g]]:
            self.down_pos[self.pos_of[g]] = False
            self.alive += 1

    def _changed(self, grew=True):
        """The up set changed (``grew``: the down set grew) while not restarting: wipe-out, depth, rate,
        proactive restart."""
        if self.phase == RESTART:
            return
        wiped, depth, rate = self._cover(grew)
        if wiped:
            self.out["wipeouts"] += 1
            self._end_epoch()
            return
        old = self.rate
        self.depth, self.rate = depth, rate
        if self.dmax is not None and depth >= self.dmax and not self.proactive:
            if self.phase == COMPUTE:
                self.proactive = True
                self._poke()
                return
            if not self.final:  # a regular checkpoint serves
                self.proactive = True
        if self.phase == COMPUTE and rate != old:
            self._poke()

    def _end_epoch(self):
        """A wipe-out or a job-wide failure during computing or a checkpoint: restart now."""
        self.failed = True
        self._begin_restart()
        self._poke()

    def _begin_restart(self):
        self.phase = RESTART
        for g in range(self.n):
            if self.state[g] == REPAIR:  # cancelled; it keeps its spare
                self.ver[g] += 1
                self.state[g] = HELD
                self._wake(g)

    # ---- processes
    def _group(self, g):
        env = self.env
        while True:
            st, ver = self.state[g], self.ver[g]
            try:
                if st == UP or st == REPAIR:
                    yield env.timeout(max(0.0, self.due[g] - env.now))
                else:
                    yield self.never
            except simpy.Interrupt:
                continue
            if ver != self.ver[g]:
                continue
            self._count()
            if st == UP:  # its own clock fired
                self._go_down(g)
            else:  # repaired: rejoins (only outside restarts: a restart cancels repairs)
                self._go_up(g)
            self._changed(grew=st == UP)

    def _domain(self, members, mtbf):
        env = self.env
        while True:
            yield env.timeout(self.rng.exponential(mtbf))
            if self.phase == RESTART:
                continue
            hit = [g for g in members if self.state[g] == UP]
            if not hit:
                continue
            self._count()
            for g in hit:
                self._go_down(g)
                self._wake(g)
            self._changed()

    def _job(self, mtbf):
        env = self.env
        while True:
            yield env.timeout(self.rng.exponential(mtbf))
            if self.phase == RESTART:
                continue
            self._count()
            self.out["job_failures"] += 1
            self._end_epoch()

    def _node_set(self):
        """A failed group's node set: away for H, then back to the pool (or to the first queued group)."""
        yield self.env.timeout(self.s.hardware_repair_min)
        self._count()
        if not self.queue:
            self.free += 1
            return
        g = self.queue.popleft()
        self.ver[g] += 1
        self._has_spare(g)
        self._wake(g)
        if not self.queue and self.stall_event is not None and not self.stall_event.triggered:
            self.stall_event.succeed()

    def _sleep(self, duration):
        """Wait ``duration``; stray interrupts (none expected) do not shorten it."""
        env = self.env
        end = env.now + duration
        while True:
            try:
                yield env.timeout(max(0.0, end - env.now))
                return
            except simpy.Interrupt:
                self.poked = False

    def _train(self):
        env, s, out = self.env, self.s, self.out
        W, tau, C, R = float(s.work_min), float(s.ckpt_interval_min), float(s.ckpt_cost_min), float(s.restart_min)
        while True:
            # ---- computing, tau of computing time to the next checkpoint
            self.phase = COMPUTE
            tau_left, nxt = tau, None
            while nxt is None:
                rate = self.rate
                t_w = (W - self.committed - self.pending) / rate
                dt = min(tau_left, t_w)
                t0 = env.now
                try:
                    yield env.timeout(max(0.0, dt))
                except simpy.Interrupt:
                    self.poked = False
                    el = env.now - t0
                    out["compute_min"] += el
                    tau_left -= el
                    self.pending += el * rate
                    if self.failed:
                        nxt = "restart"
                    elif self.proactive:
                        nxt = "ckpt"
                    continue
                out["compute_min"] += dt
                if t_w <= tau_left:
                    self.pending = W - self.committed
                    nxt = "final"
                else:
                    self.pending += dt * rate
                    nxt = "ckpt"
            # ---- checkpoint
            if nxt != "restart":
                self.phase = CKPT
                self.final = nxt == "final"
                self._count()
                end, done = env.now + C, False
                while not done:
                    try:
                        yield env.timeout(max(0.0, end - env.now))
                        done = True
                    except simpy.Interrupt:
                        self.poked = False
                        if self.failed:
                            break
                if done:
                    self._count()
                    out["ckpts"] += 1
                    self.committed = W if self.final else self.committed + self.pending
                    self.pending = 0.0
                    if self.final:
                        out["ttt_min"] = env.now
                        out["work_done_min"] = W + out["lost_work_min"]
                        return
                    if not self.proactive:
                        continue
                    out["proactive_restarts"] += 1
                    self._begin_restart()
                self.final = False
            # ---- global restart
            out["restarts"] += 1
            out["lost_work_min"] += self.pending
            self.pending = 0.0
            self.failed = self.proactive = False
            yield from self._sleep(R)
            t_s = env.now
            while self.queue:  # the stall: every down group needs a spare
                self.stall_event = env.event()
                try:
                    yield self.stall_event
                except simpy.Interrupt:
                    self.poked = False
            self.stall_event = None
            out["stall_min"] += env.now - t_s
            self._count()
            renew = s.ages == "renewed"
            for g in range(self.n):
                if self.state[g] != UP or renew:
                    self._go_up(g)
                    self._wake(g)
            self.phase = COMPUTE
            _, self.depth, self.rate = self._cover()


def simpy_run(setup: RunSetup, rng: np.random.Generator, max_events: int = 10_000_000) -> dict:
    """One whole training run of ``setup`` (docs/runs.md#what-a-run-is) simulated event by event with SimPy; a dict of
    ``KEYS`` (times in minutes, counts as ints)."""
    run = _Run(setup, rng, max_events)
    run.env.run(until=run.trainer)
    return dict(run.out)


def simpy_runs(setup: RunSetup, runs: int, seed: int = 0) -> dict:
    """``runs`` independent runs (one ``numpy`` Generator spawned per run from ``seed``): a dict of arrays."""
    rngs = [np.random.default_rng(ss) for ss in np.random.SeedSequence(seed).spawn(runs)]
    rows = [simpy_run(setup, rng) for rng in rngs]
    return {k: np.array([row[k] for row in rows]) for k in KEYS}


def bench_setup(groups: int = 64, redundancy: int = 3, microbatches: int = 4) -> RunSetup:
    """The benchmark run: ``spare`` r = 3, m = 4 on N = 64 groups of MTBF 3000 min, fixed repair 300 min,
    W = 48 h, C = 2, R = 10, tau = 60 (minutes)."""
    return RunSetup(scheme="spare", groups=groups, redundancy=redundancy, microbatches=microbatches,
                    ring=tuple(range(groups)), group_mtbf_min=(3000.0,) * groups, weibull_shape=1.0, ages="kept",
                    domains=(), job_mtbf_min=None, repair_time_min=300.0, repair_law="fixed", repair_sigma=1.0,
                    spares=None, hardware_repair_min=None, work_min=48 * 60.0, ckpt_cost_min=2.0,
                    restart_min=10.0, ckpt_interval_min=60.0, restart_depth=None)
