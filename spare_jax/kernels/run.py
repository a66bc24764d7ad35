r"""Whole training runs, event by event (docs/runs.md#what-a-run-is): every lever at once.

A run (``model.runsetup.RunSetup``) starts with every group up and every clock new. Its state, per run:
the wall time ``t``; the phase (computing, checkpointing, restarting, done) and the end of a checkpoint or
restart in progress; the computing time since the last checkpoint or restart started (for tau); the work
committed at the last completed checkpoint and the work done since; whether the checkpoint in progress is
the final one and whether a proactive restart follows it; per ring position whether the group is down and
its next time (an up group's failure time, a repairing group's rejoin time, or +inf for a group that waits
for the next global restart); each failure domain's next event; the next job-wide failure; and the current
work rate ``1/d`` (depth ``d = c/m``, ``c`` the least capacity in micro-batches that covers every shard).
With a finite spare pool (``setup.spares`` = K, ``setup.hardware_repair_min`` = H; the pool's presence and
its capacity are static: without it none of this state exists and every number is what it was before the
pool) also: the free spares; per ring
position a *ticket* (``WAITING_NONE`` unless the group waits for a spare: tickets are handed out in
increasing order, so the least ticket is the first come); the next ticket; the node sets away in hardware
repair as a ring buffer of their return times (head, count); whether the restart in progress waits for spares.
Always also: the end of the stall in force (``stall_end``; none in force when it is not after t) and whether
a rejoin set it (``stall_rejoin``, else a failure).

Every step takes, for every run still going, the earliest of four events and applies it exactly as the conventions of
a run (docs/runs.md#the-conventions-of-a-run) say:

* the phase's own event: while computing, the next checkpoint (after tau of computing time) or the moment
  the work reaches W (the final, partial interval: its checkpoint starts then); the end of a checkpoint (it
  commits the work; the run ends after the final one; a proactive restart follows one that was marked); the
  end of a global restart (every down group replaced with a new clock; up groups keep their clocks, or draw
  new ones with ``ages == "renewed"``; the computing-time counter restarts);
* a group's clock: while computing or checkpointing the group goes down (and starts its repair, or waits for
  the next restart) and the depth is recomputed: no covering assignment is a wipe-out (the work since the
  last committed checkpoint is lost and a restart of R starts; repairs in flight are cancelled); a depth
  ``>= D_max`` starts the proactive checkpoint (or marks the checkpoint in progress, unless it is the final
  one). During a restart the group goes down and is replaced at its end. A repairing group's rejoin: it is
  up with a new clock;
* a failure domain: its up members go down as one event (each starts its repair), depth and wipe-out are
  checked once; nothing during a restart; the domain draws its next event (exponential);
* a job-wide failure: the work since the last checkpoint is lost and a restart starts; nothing during a
  restart.

A finite spare pool (docs/runs.md#spare-pool). Every group failure (own clock or domain event, in any phase)
sends the group's node set away for exactly H: its return time is appended to the ring buffer. The failed
group takes a free spare at once (then its repair D starts, while computing or checkpointing; during a
restart, or without repair, it holds the spare, down, until the restart ends) or waits with the next
ticket; a domain event's groups take spares, then tickets, in increasing physical id. A fifth event, the
earliest return (first at a tie): the pool gains a spare, and the group with the least ticket takes it
(and starts its repair D then, outside a restart). A job-wide failure breaks nothing. A restart cancels
repairs in flight: those groups keep their spares (their next time becomes +inf) and are replaced at its
end. When R has elapsed and some group still waits, the restart *waits for spares* (its end becomes +inf);
the return that serves the last waiting group sets the end to that instant, and the restart ends at the next
step (same time). The wait is summed per run (``spare_wait``, minutes), and the longest wait of any group
for a spare is kept per run (``spare_wait_max``: each waiting group's ticket time in ``wait_from``). Why a ring buffer of N + K:
H is the same for every node set, so they return in the order they left (first in, first out); a group
can have several node sets away at once (it fails, takes a spare, rejoins and fails again within H), so
one return time per group would not do; and the node sets away are at most N + K (there are N + K node
sets, and a group that waits holds none), so N + K slots never overflow (the kernel keeps N + the static
capacity, ``spare_capacity(K)`` >= K, so that any K within it shares one compiled program). The state per run is O(N + K),
K bounded like N (``model.bounds``); K <= N is no cap: a group can use up several spares within H.

Stalls (docs/runs.md#stalls; ``failure_stall_min`` S and ``rejoin_stall_min`` S_j, runtime numbers: a new
value compiles nothing). A group failure or a domain event that downs a group while computing or
checkpointing, with no wipe-out and no proactive checkpoint started, marked or in progress, sets the stall's
end to the later of its end and ``t + S``; a rejoin to the later of its end and ``t + S_j``; the cause of the
later end is kept. While computing, the part of a step before the stall's end is stalled (added to
``failure_stall`` or ``rejoin_stall`` by that cause) and the rest computes; the next checkpoint and the moment
the work reaches W are counted from the stall's end. A checkpoint in progress runs on (nothing is counted),
and computing resumes when both have ended. A restart sets the stall's end to its start (any stall ends).
The stall's end is not an event: with S = S_j = 0 it is never after t and every step is what it was
before, bit for bit.

The computing-time counter restarts when a checkpoint or a restart starts. Work accrues at ``1/d`` while
computing (``shrink``: ``alive/N``); ``slowdown`` = computing time / work computed (committed or lost).

Depth: ``stacked`` (``spare``, ``none``): the least c in m..r m passing the two-lap queue test of
``kernels.depth`` (bisection over c, O(N log(r m)) per event), no c = a wipe-out; ``block`` (``rep``): the
depth stays r, a wipe-out when a whole block is down; ``elastic``: a wipe-out only when no group is up,
depth ``ceil(N m / alive) / m`` (``rebalance``) or work rate ``alive / N`` (``shrink``). With repair, a
``stacked`` run with r >= 2 also keeps the ring positions of its down groups in order (up to ``DOWN_LIST``
of them: a failure inserts one, a rejoin removes one, a restart's end empties the list, a domain event or an
overflow has it rebuilt from the down set when it fits again), and the same least c comes from the pairs of
down groups (``depth.least_capacity_from_downs``, O(DOWN_LIST x groups down) per event); a step where some
changed run's list is incomplete takes the queue test for every run. The numbers are the same either way.

A run is a composition of parts, each one module (``kernels.run_<part>``) with its own ``State`` and
``Params`` (NamedTuples) and pure functions: its next event, what its event does to the run, what it adds to
the outputs. ``run_groups`` (the ring positions up and down, their clocks' block minima), ``run_clocks`` (the
group clocks' law and the repair law), ``run_trace`` (a replay's clocks), ``run_domains``, ``run_job``
(job-wide failures), ``run_pool`` (a finite spare pool), ``run_stalls``, ``run_phase`` (computing,
checkpointing, restarting, done), ``run_rate`` (the scheme's work rate and depth) and ``run_log`` (the event
log); ``run_context.Kernel`` holds what every part reads and nothing changes. The run's state (``RunState``)
nests the parts' states; a part that is off (no domains, no job-wide clock, no pool, an epoch's stalls, no
replay, no log) is None, statically: it costs the kernel nothing. Each step ``select``s each run's next
event among the parts' next times (``Pick``), ``advance``s the time up to it (computing, stalled, waiting
for spares; this step's random numbers, ``Draw``), and applies it: the phase's own event, the groups'
(a restart's end, a group's clock, a domain event, a spare's return), the depth, the stalls, the next phase,
the log, and the block minima.

Speed. The next group event is the least of each run's block minima (blocks of about sqrt N clocks; a
failure, a rejoin or a served spare sets one clock and recomputes its block by scatter and gather). A
restart's end, a restart and a domain event touch every group of a run: their work is done on the runs of
that step that need it, gathered C/64 rows at a time, at least 8 (in as many rounds as they need;
``on_rows``): a step has a few such runs, and every gathered row costs O(N) whether it needs it or not.

Random numbers. Run ``i``'s k-th event draws its scalars from ``trial_bits(words, [i], 2, stream=RUN_STREAM
+ k)`` (a repair time, also one that starts when a returning spare is taken, or a new clock; a domain's or
the job's next event) and, at a domain event or the end of a restart, one number per group from stream
``WIDE_STREAM + k``. A run processes one event per step, so its k-th event is at step k whatever the chunk:
results depend on (seed, run id) only, never on the chunk size or the device count. Initial clocks:
streams ``INIT_STREAM`` (groups), ``+1`` (domains), ``+2`` (job).

A replay (``RunShape.trace``; ``kernels.run_trace``): the group clocks are a failure trace's down periods,
passed as traced arrays (``trace``). A new clock is the first period of the group's unit that starts at or
after the instant it is up (the run's start at its offset on the circle, its return, a restart's end), with
its end kept per group (``RunState.trace``) for repair from the trace; at one instant a return goes before a
failure and failures go in physical group order; no random numbers are drawn unless job-wide failures are
on. Every other part of a step is the same code. ``RunShape.log_events`` keeps each run's first group events
(``log_t``, ``log_g``, ``log_kind``), so that a sampled run can be dumped as a trace.

A run that has not finished after ``max_events`` events is returned *censored* and counted; the caller
refuses to print a mean over censored runs.

Epochs (``RunShape.epoch``; a setup of its own, ``RunSetup.for_epoch``, lowered by ``kernels.lower.lower`` as a
whole run is; ``kernels.repair.epoch_setup``). The same kernel runs epochs with repair: from
every group up to the first wipe-out or job-wide failure, with no checkpoint and no restart (``tau`` and W
infinite; the phase's own event is the time limit ``max_time_min``, where the epoch ends censored; an
event at the limit itself is still taken). ``wipeout`` tests only for a lost shard, through the placement's
``holders`` (``run_rate.Params``) (after a group's failure its r shards, after a domain event every shard: any placement);
``depth`` keeps the depth as a whole run does (``stacked`` or ``block``) and its time integrals (``work``,
``depth_time``). An epoch draws from the streams of the static wipe-out kernels (``EPOCH_STREAM``,
``EPOCH_WIDE_STREAM``; the initial clocks stream 0, a domain level 1 + l, the job-wide clock 1 + L), so that
with a repair that never comes every epoch is the static kernel's. Epochs vary in length, so they run in
lanes (``lanes``, 256 on CPU): a lane whose epoch ended takes the chunk's next (``events.in_lanes``); a run's
k-th event is its k-th step in any lane, so the results are those of the chunk stepped at once.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ..model.prng import (
    EPOCH_STREAM, EPOCH_WIDE_STREAM, INIT_STREAM, RUN_STREAM, WIDE_STREAM, WIPEOUT_STREAM, bits_to_uniform, trial_bits)
from .events import block_width, in_lanes, row_bits
from . import run_clocks as clocks
from . import run_domains as domains
from . import run_groups as groups
from . import run_job as job
from . import run_log as log
from . import run_phase as phase
from . import run_pool as pool
from . import run_rate as rate
from . import run_stalls as stalls
from . import run_trace as trace_part
from .run_clocks import repair_end
from .run_context import Kernel
from .run_phase import CKPT, COMPUTE, DONE, RESTART
from .run_pool import WAITING_NONE  # noqa: F401  (part of this module's API)
from .run_rate import uses_down_list
from .lower import Params
from .run_shape import RunShape

DEFAULT_MAX_EVENTS = 1 << 24
OUTPUTS = ("ttt", "compute", "work", "lost", "failures", "wipeouts", "job_failures", "restarts",
           "proactive_restarts", "ckpts", "events", "spare_wait", "failure_stall", "rejoin_stall")


class RunState(NamedTuple):
    """What the kernel keeps per run (arrays of C runs), the loop's carry: the wall time, the events taken
    (the event index of the run's random streams) and each part's state (None: the part is off)."""

    t: jax.Array  # the wall time (min)
    k: jax.Array  # events processed
    phase: phase.State
    groups: groups.State
    rate: rate.State
    stalls: stalls.State | None  # whole runs only
    domains: domains.State | None
    job: job.State | None
    pool: pool.State | None
    trace: trace_part.State | None  # a replay whose period ends are kept
    log: log.State | None
    extra: tuple = ()  # the states of the parts a caller adds (``RunShape.parts``)


class Pick(NamedTuple):
    """The event each run takes this step (``select``)."""

    ids: jax.Array  # the runs' ids
    act: jax.Array  # the run still steps
    phase: jax.Array  # its phase at the step's start
    computing: jax.Array
    working: jax.Array  # computing or checkpointing
    resume: jax.Array  # when computing resumes (the stall's end, or t)
    t_ck: jax.Array | None  # the next checkpoint (whole runs)
    t_w: jax.Array | None  # the moment the work reaches W (whole runs)
    gi: jax.Array  # the ring position of the earliest group clock
    di: jax.Array | None  # the earliest domain
    is_hw: jax.Array  # a node set's return (a finite pool)
    is_ph: jax.Array  # the phase's own event
    is_g: jax.Array  # a group's clock
    is_d: jax.Array  # a domain
    is_j: jax.Array  # a job-wide failure
    tn: jax.Array  # the event's time
    is_x: tuple = ()  # each added part's event (``RunShape.parts``)


class Draw(NamedTuple):
    """This step's random numbers and what the time reached (``advance``)."""

    u: jax.Array  # [C, 2] the event's scalars
    rs_end: jax.Array  # a restart ends
    stall_now: jax.Array | None  # a restart's R has elapsed, some group still waits for a spare (a pool)
    dom_hit: jax.Array  # a domain event while computing or checkpointing
    k_wide: jax.Array  # the wide stream of the event
    u_wide: jax.Array | None  # [C, N] a domain event's repairs (with domains)


def select(kx: Kernel, st: RunState, ids) -> Pick:
    """Each run's next event: the phase's own, a group's clock, a domain, the job, a spare's return."""
    act = (st.phase.phase != DONE) & (st.k < kx.max_events)
    ph, t = st.phase.phase, st.t
    gmin, gi = groups.next_event(kx, st.groups)
    dmin, di = domains.next_event(st.domains) if kx.nd else (kx.never(), None)
    jt = kx.never() if st.job is None else st.job.job
    computing = ph == COMPUTE
    working = computing | (ph == CKPT)
    resume = stalls.resume(st.stalls, t)
    t_ph, t_ck, t_w = phase.next_time(kx, st.phase, computing, resume, st.rate.rate)
    t_rand = jnp.minimum(jnp.minimum(gmin, dmin), jt)
    t_x = [part.next_time(kx, x) for part, x in zip(kx.parts, st.extra)]  # the added parts' next events
    t_xmin = functools.reduce(jnp.minimum, t_x) if t_x else None
    if t_x:
        t_rand = jnp.minimum(t_rand, t_xmin)
    if kx.finite:  # a node set's return from hardware repair goes first at a tie
        t_hw, away = pool.next_time(kx, st.pool)
        is_hw = act & away & (t_hw <= jnp.minimum(t_ph, t_rand))
        t_rand = jnp.minimum(t_rand, t_hw)
    else:
        is_hw = jnp.zeros_like(act)
    is_ph = act & ~is_hw & ((t_ph < t_rand) if kx.epoch else (t_ph <= t_rand))
    rand = act & ~is_hw & ~is_ph
    if kx.epoch:  # at a tie an epoch takes the job-wide failure, then a domain, then a group (as it always has)
        is_j = rand & (jt <= jnp.minimum(gmin, dmin))
        is_d = rand & ~is_j & (dmin < gmin)
        is_g = rand & ~is_j & ~is_d
    elif not t_x:  # a whole run takes a group's clock, then a domain, then the job-wide failure
        is_g = rand & (gmin <= jnp.minimum(dmin, jt))
        is_d = rand & ~is_g & (dmin <= jt)
        is_j = rand & ~is_g & ~is_d
    else:  # then the added parts, in their order
        is_g = rand & (gmin <= jnp.minimum(jnp.minimum(dmin, jt), t_xmin))
        is_d = rand & ~is_g & (dmin <= jnp.minimum(jt, t_xmin))
        is_j = rand & ~is_g & ~is_d & (jt <= t_xmin)
    is_x, left = [], rand & ~is_g & ~is_d & ~is_j
    for tx in t_x:
        is_x.append(left & (tx <= t_xmin))
        left = left & ~is_x[-1]
    return Pick(ids, act, ph, computing, working, resume, t_ck, t_w, gi, di, is_hw, is_ph, is_g, is_d, is_j,
                jnp.where(act, jnp.minimum(t_ph, t_rand), t), tuple(is_x))


def advance(kx: Kernel, st: RunState, pk: Pick):
    """Time moves to ``tn``: the wait for spares, the stalled and the computing time, the work done (an
    epoch: the time integrals of its rate and depth); this step's random numbers. ``(state, Draw)``."""
    tn, t = pk.tn, st.t
    if kx.epoch == "depth":
        rt, gain = rate.accrue_epoch(st.rate, pk.act, tn - t)
        st = st._replace(rate=rt, phase=st.phase._replace(work=st.phase.work + gain))
    elif not kx.epoch:
        dt = jnp.maximum(tn - t, 0.0)
        on = pk.act & pk.computing
        if kx.finite:
            st = st._replace(pool=pool.accrue(st.pool, pk.act, pk.phase, dt))
        st = st._replace(stalls=stalls.accrue(st.stalls, on, t, tn),
                         phase=phase.accrue(st.phase, on, jnp.maximum(tn - pk.resume, 0.0), st.rate.rate))
    st = st._replace(t=tn)
    ev_stream, wide_stream = kx.streams
    c, n, k = kx.c, kx.n, st.k.astype(jnp.uint32)
    u = (bits_to_uniform(row_bits(kx.words, pk.ids, jnp.uint32(ev_stream) + k, 2)) if kx.draws
         else jnp.full((c, 2), 0.5, jnp.float32))
    rs_end = pk.is_ph & (pk.phase == RESTART)
    stall_now = None
    if kx.finite:  # R has elapsed but some down group still waits for a spare: the stall (the restart goes on)
        stall_now = rs_end & (st.pool.nwait > 0)  # ``nwait``: the groups holding a ticket
        rs_end = rs_end & ~stall_now
    dom_hit = pk.is_d & pk.working
    k_wide = jnp.uint32(wide_stream) + k
    u_wide = None
    if kx.nd:  # a domain event's repairs: one number per group
        u_wide = jax.lax.cond(jnp.any(dom_hit), lambda: bits_to_uniform(row_bits(kx.words, pk.ids, k_wide, n)),
                              lambda: jnp.full((c, n), 0.5, jnp.float32))
    return st, Draw(u, rs_end, stall_now, dom_hit, k_wide, u_wide)


def group_events(kx: Kernel, st: RunState, pk: Pick, dr: Draw):
    """The groups' events: a restart's end, a group's clock (with a pool: a spare or a ticket), a domain
    event, the job-wide clock's next event, a node set's return. ``(state, groups.Hit, members, Served)``."""
    tn, u0 = pk.tn, dr.u[:, 0]
    g, tr = groups.restart_end(kx, st.groups, st.trace, st.rate, dr.rs_end, tn, dr.k_wide, pk.ids)
    h = groups.hit(kx, g, tr, pk.is_g, pk.gi)
    pl = st.pool
    if kx.finite:  # the failed group takes a free spare, or waits (its ticket: first come, first served)
        pl, has_spare = pool.take(kx, pl, h.fail, pk.gi, tn)
        g_repair = jnp.where(pk.working & has_spare, repair_end(kx, u0, tn), kx.inf)
    else:
        g_repair = groups.own_repair(kx, h, pk.working, u0, tn)
    g, tr = groups.event(kx, g, tr, h, g_repair, pk, u0)
    pushed = h.fail.astype(jnp.int32)  # node sets sent to hardware repair at this event
    members, dm = None, st.domains
    if kx.nd:  # the domain's up members go down as one event (nothing during a restart)
        members = domains.members(kx, pk.di, g.down, dr.dom_hit)
        if kx.finite:
            pl, nxt, hit = pool.take_domain(kx, pl, members, g.nxt, dr.u_wide, tn)
            pushed = pushed + hit
        else:
            nxt = domains.repairs(kx, members, g.nxt, dr.u_wide, tn)
        g = g._replace(nxt=nxt, down=g.down | members, failures=g.failures + members.sum(axis=1))
        dm = domains.redraw(kx, dm, pk.di, pk.is_d, dr.u[:, 1], tn)
    jb = None if st.job is None else job.redraw(kx, st.job, pk.is_j, dr.u[:, 1], tn)
    served = None
    if kx.finite:
        pl = pool.away(kx, pl, tn, pk.is_hw, pushed, h.hw_end)
        pl, nxt, served = pool.serve(kx, pl, g.nxt, pk, u0, dr.stall_now, dr.rs_end)
        g = g._replace(nxt=nxt)
    return st._replace(groups=g, trace=tr, pool=pl, domains=dm, job=jb), h, members, served


def added_events(kx: Kernel, st: RunState, pk: Pick, dr: Draw):
    """The events of the parts a caller adds (``RunShape.parts``): each part's ``event`` gives its new
    state and where it interrupts the job (a restart, as a job-wide failure does: only while computing or
    checkpointing). ``(state, interrupt)``, None without added parts."""
    if not kx.parts:
        return st, None
    extra, interrupt = [], jnp.zeros_like(pk.act)
    for part, x, taken in zip(kx.parts, st.extra, pk.is_x):
        x, stop = part.event(kx, x, taken, pk.tn, dr.u)
        extra.append(x)
        interrupt = interrupt | (stop & taken & pk.working)
    return st._replace(extra=tuple(extra)), interrupt


def body(kx: Kernel, st: RunState, ids) -> RunState:
    """One step of every run: the next event among the parts, the time up to it, and its effects."""
    pk = select(kx, st, ids)
    st, dr = advance(kx, st, pk)
    ph, phit = phase.event(kx, st.phase, pk)
    st, h, members, served = group_events(kx, st._replace(phase=ph), pk, dr)
    rt, ch = rate.change(kx, st.rate, st.groups.down,
                         (pk.is_g, dr.dom_hit, pk.working, pk.computing, dr.rs_end, h.fail, h.rejoin, pk.gi), members)
    if ch.hit_max is not None:
        ph = phase.mark(ph, ch.hit_max, ch.pro_ck, pk.phase)
    sl = st.stalls
    if sl is not None:  # a failure or a rejoin survived without a restart, nor a proactive checkpoint
        survived = ch.changed & ~ch.wiped & ~ph.pro
        downed = h.fail | (jnp.any(members, axis=1) if kx.nd else False)  # a group's failure, or a domain event's
        sl = stalls.update(kx, sl, survived, downed, h.rejoin, pk.tn)
    st, interrupt = added_events(kx, st, pk, dr)
    ph, to_restart = phase.change(kx, ph, phit, pk, (dr.rs_end, ch.pro_ck, ch.wipe, pk.is_j & pk.working,
                                                     dr.stall_now, None if served is None else served.last),
                                  interrupt)
    if sl is not None:
        sl = stalls.restart(sl, to_restart, pk.tn)
    lg = st.log
    if lg is not None:
        lg = log.record(kx, lg, st.k, pk.act, (h.fail, h.rejoin, dr.rs_end, pk.tn, pk.gi))
    one = jnp.where(pk.is_g, pk.gi, jnp.where(served.at, served.ti, 0)) if kx.finite else pk.gi
    wide = dr.rs_end | to_restart
    if kx.nd:
        wide = wide | dr.dom_hit
    g = groups.reblock(kx, st.groups, one, wide, to_restart)
    return st._replace(phase=ph, rate=rt, stalls=sl, log=lg, groups=g, k=st.k + pk.act)


def initial(kx: Kernel, ids) -> RunState:
    """The state of the runs ``ids`` at their start: every group up, every clock new."""
    c, n = ids.shape[0], kx.n
    fend = None
    if kx.epoch:  # the streams of the static wipe-out kernels: groups 0, domain level l 1 + l, job-wide 1 + L
        nxt, _ = clocks.clock(kx, bits_to_uniform(trial_bits(kx.words, ids, n, stream=WIPEOUT_STREAM)), 0.0,
                              jnp.arange(n)[None, :], ids)
    else:
        u0 = bits_to_uniform(trial_bits(kx.words, ids, n, stream=INIT_STREAM)) if kx.draws else None
        nxt, fend = clocks.clock(kx, u0, jnp.zeros((c, n), jnp.float32), jnp.arange(n, dtype=jnp.int32)[None, :],
                                 ids[:, None])
    padding = ids >= jnp.asarray(kx.total, jnp.uint32)
    return RunState(
        t=jnp.zeros((c,), jnp.float32), k=jnp.zeros((c,), jnp.int32), phase=phase.init(padding),
        groups=groups.init(kx, nxt), rate=rate.init(kx, c), stalls=None if kx.epoch else stalls.init(c),
        domains=domains.init(kx, ids) if kx.nd else None, job=job.init(kx, ids) if kx.shape.job_wide else None,
        pool=pool.init(kx, c) if kx.finite else None, trace=trace_part.State(fend) if kx.keep_end else None,
        log=log.init(kx, c) if kx.n_log else None, extra=tuple(part.init(kx, ids) for part in kx.parts))


def outputs(kx: Kernel, st: RunState) -> dict:
    """Each run's results from its state (``run_kernel``'s docstring): what each part adds."""
    ph = st.phase
    if kx.epoch:
        ended = (ph.wipeouts > 0) | (ph.job_failures > 0)
        timed_out = (ph.phase == DONE) & ~ended & (st.k > 0)  # its last step was the time limit, not an event
        out = {"uptime": st.t, "failures": st.groups.failures.astype(jnp.int32), "ended_by_job": ph.job_failures > 0,
               "censored": ~ended, "events": st.k - timed_out}
        if kx.epoch == "depth":
            out.update(work=ph.work, depth_time=st.rate.depth_time)
        return out
    zf = jnp.zeros_like(st.t)
    out = {**phase.outputs(ph), **groups.outputs(st.groups), **stalls.outputs(st.stalls),
           **({"spare_wait": zf, "spare_wait_max": zf} if st.pool is None else pool.outputs(st.pool, st.t))}
    out = {name: v.astype(jnp.float32) for name, v in out.items()}
    out["events"] = st.k.astype(jnp.float32)
    out["censored"] = (ph.phase != DONE)
    out["work_min"] = jnp.broadcast_to(kx.p.phase.work_min, st.t.shape)
    if st.log is not None:
        out.update(log.outputs(st.log))
    for part, x in zip(kx.parts, st.extra):  # what the added parts add
        out.update(part.outputs(kx, x))
    return out


def run_kernel(words, run_ids, total, params: Params, shape: RunShape, max_events=DEFAULT_MAX_EVENTS,
               lanes: int | None = None, trace=None):
    """The runs ``run_ids`` (ids ``>= total`` are padding: done at once) of the run ``shape`` with the numbers
    ``params`` (traced: one compile serves every cost, rate, interval, work and D_max). Returns a dict of
    per-run arrays: ``OUTPUTS`` (float32: wall time, computing time, work computed and lost, minutes; counts;
    the wait for spares, minutes, 0 without a finite spare pool; the stalled time by cause, minutes) and
    ``censored`` (bool) and ``spare_wait_max`` (float32
    minutes: the run's longest wait of a group for a spare, from its failure, or from its node set's return
    to the pool, to the moment it takes one; a wait still going at the run's end counts up to the end; 0
    without a finite pool; kept per run, not summed by ``simulate_runs``).

    With ``shape.epoch`` (an epoch with repair), per epoch: ``uptime`` (float32 minutes: the wipe-out, the
    job-wide failure, the time limit or the last event when censored), ``failures`` and ``events`` (int32: the
    group failures, a domain event's groups each; the events taken), ``ended_by_job`` and ``censored`` (bool:
    the time limit or the event limit reached), and with ``depth`` ``work`` and ``depth_time`` (float32: the
    time integrals of 1/d and d). ``lanes``: how many runs a step takes (None: all of the chunk in lockstep, or
    for epochs 256 on CPU and a quarter of the chunk elsewhere), each lane taking the next when its own ends.

    ``trace`` (a ``kernels.run_trace.TraceDevice``, traced) with ``shape.trace``: a replay, the group clocks
    are the trace's down periods (``kernels.run_trace``); with ``shape.log_events`` also ``log_t``, ``log_g``
    and ``log_kind``, each run's first group events.

    ``shape.parts``: parts added to the run (whole runs only; static, hashable), each with ``init(kx, ids)`` (its
    state at the start), ``next_time(kx, state)`` (``float32[C]``: its next event, +inf for none),
    ``event(kx, state, taken, tn, u)`` (its event, where ``taken``, at ``tn``, ``u`` this step's two
    uniforms: ``(state, interrupt)``, ``interrupt`` where it stops the job for a restart) and
    ``outputs(kx, state)`` (a dict of per-run arrays it adds). At a tie they come after the job-wide clock,
    in their order (docs/architecture.md#adding-a-mechanism)."""
    c_all = run_ids.shape[0]
    epoch = shape.epoch
    if shape.parts and epoch:
        raise ValueError("parts added to a run are for whole runs, not epochs")
    if lanes is None and epoch:  # epochs vary in length: lanes that take the next epoch when theirs ends (on
        lanes = 256 if jax.default_backend() == "cpu" else c_all // 4  # CPU the step's cost grows past a few hundred)
    if lanes is not None:
        lanes = max(1, min(c_all, int(lanes)))
    c = c_all if lanes is None else lanes  # the runs a step takes at once
    replay = shape.trace  # a replay: the clocks are a trace's periods (``run_trace``)
    finite = shape.spare_capacity is not None  # a finite spare pool (static: without it no spare state is kept)
    from_trace = replay and shape.repair_law == "trace"  # a group returns at the end of the period that failed it
    hw_trace = replay and finite and shape.trace_hardware  # node sets away until their period's end (any order)
    kx = Kernel(
        shape=shape, n=shape.groups, c=c, rows=jnp.arange(c), wide_cap=max(8, c // 64), width=block_width(shape.groups),
        words=words, total=total,
        # an epoch draws from the streams of the static wipe-out kernels (see ``kernels.repair``)
        streams=(EPOCH_STREAM, EPOCH_WIDE_STREAM) if epoch else (RUN_STREAM, WIDE_STREAM), trace=trace,
        # traced (a number of the call): a new limit compiles nothing
        max_events=jnp.asarray(max_events, jnp.int32), p=_ready(params, shape), epoch=epoch,
        nd=sum(shape.domain_counts), finite=finite, replay=replay, from_trace=from_trace, hw_trace=hw_trace,
        keep_end=from_trace or hw_trace,  # each group's period end is kept (``RunState.trace``)
        draws=not replay or shape.job_wide,  # a replay draws no random numbers unless job-wide failures are on
        listed=uses_down_list(shape), n_log=int(shape.log_events), parts=tuple(shape.parts))

    def running(st):
        return (st.phase.phase != DONE) & (st.k < kx.max_events)

    ids = jnp.asarray(run_ids, jnp.uint32)
    step, start, results = (functools.partial(f, kx) for f in (body, initial, outputs))
    if lanes is None:  # every run at once, in lockstep
        def cond(st):
            return jnp.any(running(st))

        return results(jax.lax.while_loop(cond, lambda st: step(st, ids), start(ids)))
    return in_lanes(ids, c, start, step, running, results)


def _ready(params: Params, shape: RunShape) -> Params:
    """The numbers as the kernel reads them: arrays (traced under ``jit``), the rate's at full health added."""
    p = jax.tree_util.tree_map(jnp.asarray, params)
    return p._replace(rate=rate.ready(p.rate, shape))


class Inputs(NamedTuple):
    """A run kernel call's inputs, every one traced (the driver's ``aux``): the seed's key words, the run count
    (ids past it are padding), the numbers (``kernels.lower.lower``), the event limit and a replay's trace."""

    words: object
    total: object
    params: Params
    max_events: object
    trace: object = None


def per_trial(fn):
    """The driver's ``per_trial(inputs, ids)`` of a compiled run kernel ``fn`` (``jitted_run_kernel``)."""
    def call(x: Inputs, ids):
        kw = {} if x.trace is None else {"trace": x.trace}
        return fn(x.words, ids, x.total, x.params, max_events=x.max_events, **kw)

    return call


@functools.lru_cache(maxsize=128)
def jitted_run_kernel(shape: RunShape):
    """``run_kernel`` compiled for one shape: ``fn(words, run_ids, total, params, max_events=...)``, every
    number traced (the event limit too)."""
    return jax.jit(functools.partial(run_kernel, shape=shape))
