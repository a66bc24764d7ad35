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

Stalls (docs/runs.md#stalls; ``params.failure_stall`` S and ``params.rejoin_stall`` S_j, runtime numbers: a new
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

The step is one function per part, in this order, each reading and updating the state (``RunState``, a
NamedTuple: the loop's carry) and the step's event: ``select`` (each run's next event and its time),
``advance`` (the time up to it: computing, stalled, waiting for spares), ``phase_event``, ``restart_end``,
``group_event``, ``domain_event`` (and the job-wide clock), ``spare_return``, ``depth_change``, ``stalls``,
``phase_change`` and ``reblock`` (the block minima). A new lever is a new part, or a few lines in one.

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
its end kept per group (``RunState.fend``) for repair from the trace; at one instant a return goes before a
failure and failures go in physical group order; no random numbers are drawn unless job-wide failures are
on. Every other part of a step is the same code. ``RunShape.log_events`` keeps each run's first group events
(``log_t``, ``log_g``, ``log_kind``), so that a sampled run can be dumped as a trace.

A run that has not finished after ``max_events`` events is returned *censored* and counted; the caller
refuses to print a mean over censored runs.

Epochs (``RunShape.epoch``; ``kernels.repair.epoch_setup``). The same kernel runs epochs with repair: from
every group up to the first wipe-out or job-wide failure, with no checkpoint and no restart (``tau`` and W
infinite; the phase's own event is the time limit ``params.max_time``, where the epoch ends censored; an
event at the limit itself is still taken). ``wipeout`` tests only for a lost shard, through the placement's
``params.holders`` (after a group's failure its r shards, after a domain event every shard: any placement);
``depth`` keeps the depth as a whole run does (``stacked`` or ``block``) and its time integrals (``work``,
``depth_time``). An epoch draws from the streams of the static wipe-out kernels (``EPOCH_STREAM``,
``EPOCH_WIDE_STREAM``; the initial clocks stream 0, a domain level 1 + l, the job-wide clock 1 + L), so that
with a repair that never comes every epoch is the static kernel's. Epochs vary in length, so they run in
lanes (``lanes``, 256 on CPU): a lane whose epoch ended takes the chunk's next (``events.in_lanes``); a run's
k-th event is its k-th step in any lane, so the results are those of the chunk stepped at once.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from ..model.prng import (EPOCH_STREAM, EPOCH_WIDE_STREAM, INIT_STREAM, RUN_STREAM, WIDE_STREAM,
                          bits_to_uniform, exponential_from_bits, trial_bits)
from .depth import DOWN_LIST_PAD
from .events import all_block_mins, block_min_at, block_width, in_lanes, min_first, on_rows, row_bits, row_bits_at
from .run_rate import DOWN_LIST, counted_rate, listed_rate, rate, uses_down_list
from .run_shape import RunParams, RunShape, RunState

COMPUTE, CKPT, RESTART, DONE = 0, 1, 2, 3
DEFAULT_MAX_EVENTS = 1 << 24
OUTPUTS = ("ttt", "compute", "work", "lost", "failures", "wipeouts", "job_failures", "restarts",
           "proactive_restarts", "ckpts", "events", "spare_wait", "failure_stall", "rejoin_stall")
WAITING_NONE = np.iinfo(np.int32).max  # the ticket of a group that does not wait for a spare



def run_kernel(words, run_ids, total, params: RunParams, shape: RunShape, max_events=DEFAULT_MAX_EVENTS,
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
    and ``log_kind``, each run's first group events."""
    from .repair_law import sample_repair

    max_events = jnp.asarray(max_events, jnp.int32)  # traced (a number of the call): a new limit compiles nothing
    n = shape.groups
    epoch = shape.epoch
    # an epoch draws from the streams of the static wipe-out kernels (see ``kernels.repair``)
    ev_stream, wide_stream = (EPOCH_STREAM, EPOCH_WIDE_STREAM) if epoch else (RUN_STREAM, WIDE_STREAM)
    scale = jnp.asarray(params.scale, jnp.float32)
    inv_k = jnp.asarray(params.inv_shape, jnp.float32)
    nd = sum(shape.domain_counts)
    dom_idx = jnp.asarray(params.domain_of, jnp.int32)
    dom_mean = jnp.asarray(params.domain_mean, jnp.float32)
    job_mean = jnp.asarray(params.job_mean, jnp.float32)
    repair_nums = jnp.asarray(params.repair, jnp.float32)
    tau, work_total, d_max = (jnp.asarray(x, jnp.float32) for x in (params.tau, params.work, params.d_max))
    cost, restart = jnp.asarray(params.ckpt_cost, jnp.float32), jnp.asarray(params.restart, jnp.float32)
    stall_f, stall_j = jnp.asarray(params.failure_stall, jnp.float32), jnp.asarray(params.rejoin_stall, jnp.float32)
    stack, holders = jnp.asarray(params.stack, jnp.int32), jnp.asarray(params.holders, jnp.int32)
    max_time = jnp.asarray(params.max_time, jnp.float32)
    renewed = shape.renewed
    inf = jnp.float32(jnp.inf)
    finite = shape.spare_capacity is not None  # a finite spare pool (static: without it no spare state is kept)
    if finite:
        ring_idx, pos_of = jnp.asarray(params.ring, jnp.int32), jnp.asarray(params.pos_of, jnp.int32)
        hw = jnp.asarray(params.hardware_repair, jnp.float32)
        slots = n + int(shape.spare_capacity)  # node sets away at once: at most N + K (see the module docstring)
        slot_idx = jnp.arange(slots, dtype=jnp.int32)
        no_ticket = jnp.int32(WAITING_NONE)

    replay = shape.trace  # a replay: the clocks are a trace's periods (``kernels.run_trace``)
    if replay:
        from .run_trace import first_at_tie, next_period, offsets
    from_trace = replay and shape.repair_law == "trace"  # a group returns at the end of the period that failed it
    hw_trace = replay and finite and shape.trace_hardware  # node sets away until their period's end (any order)
    keep_end = from_trace or hw_trace  # each group's period end is kept (``RunState.fend``)
    draws = not replay or shape.job_wide  # a replay draws no random numbers unless job-wide failures are on
    n_log = int(shape.log_events)

    def clock(u, start, cols, ids):  # a new group clock from time ``start`` for ring positions ``cols``
        if replay:  # the first period starting at or after ``start``, and its end
            return next_period(trace, cols, start, offsets(trace, ids, total))
        sc = scale[cols]
        if shape.weibull:
            return start + sc * (-jnp.log1p(-u)) ** inv_k, None
        return start + sc * (-jnp.log1p(-u)), None

    def repair_end(u, start):
        if shape.repair_law in (None, "trace"):  # (from the trace: ``fend``, read where a group fails)
            return jnp.full(jnp.shape(u), inf)
        return start + sample_repair(shape.repair_law, repair_nums, u)

    rm = tuple(jnp.asarray(x, jnp.int32) for x in (params.redundancy, params.microbatches, params.bisect_steps))
    if epoch == "wipeout":  # only a lost shard matters: the rate and the depth stay 1
        rate0 = depth0 = jnp.float32(1.0)
    else:
        _, rate0, depth0 = rate(jnp.zeros((1, n), bool), shape, rm)  # at full health (rep: 1/r; the others: 1)
        rate0, depth0 = rate0[0], depth0[0]
    width = block_width(n)
    listed = uses_down_list(shape)

    def initial(ids):
        """The state of the runs ``ids`` at their start: every group up, every clock new."""
        c = ids.shape[0]
        if epoch:  # the streams of the static wipe-out kernels: groups 0, domain level l 1 + l, job-wide 1 + L
            nxt, _ = clock(bits_to_uniform(trial_bits(words, ids, n, stream=0)), 0.0, jnp.arange(n)[None, :], ids)
            offsets = np.cumsum((0,) + shape.domain_counts)
            dom = (jnp.concatenate([exponential_from_bits(trial_bits(words, ids, count, stream=1 + i))
                                    * dom_mean[None, offsets[i]:offsets[i] + count]
                                    for i, count in enumerate(shape.domain_counts)], axis=1)
                   if nd else jnp.full((c, 1), inf))
            job_stream = 1 + len(shape.domain_counts)
        else:
            u0 = bits_to_uniform(trial_bits(words, ids, n, stream=INIT_STREAM)) if draws else None
            nxt, fend = clock(u0, jnp.zeros((c, n), jnp.float32), jnp.arange(n, dtype=jnp.int32)[None, :],
                              ids[:, None])
            dom = (exponential_from_bits(trial_bits(words, ids, nd, stream=INIT_STREAM + 1)) * dom_mean[None, :]
                   if nd else jnp.full((c, 1), inf))
            job_stream = INIT_STREAM + 2
        job = (exponential_from_bits(trial_bits(words, ids, 1, stream=job_stream)[:, 0]) * job_mean
               if shape.job_wide else jnp.full((c,), inf))
        zf = jnp.zeros((c,), jnp.float32)
        zb = jnp.zeros((c,), bool)
        padding = ids >= jnp.asarray(total, jnp.uint32)
        st = {"t": zf, "phase": jnp.where(padding, DONE, COMPUTE).astype(jnp.int32), "pend": zf, "comp": zf,
              "wc": zf, "wu": zf, "final": zb, "pro": zb, "rate": jnp.full((c,), rate0),
              "depth": jnp.full((c,), depth0), "down": jnp.zeros((c, n), bool), "nxt": nxt, "dom": dom,
              "job": job, "k": jnp.zeros((c,), jnp.int32), "ttt": zf, "stall_end": zf, "stall_rejoin": zb,
              **{name: zf for name in OUTPUTS if name not in ("ttt", "events")}}
        bv0, bi0 = all_block_mins(nxt, width)  # the group clocks' block minima (see ``all_block_mins``)
        st.update(bv=bv0, bi=bi0, dk=jnp.zeros((c,), jnp.int32))  # and the count of groups down
        if listed:  # the down groups' ring positions, ascending (see ``depth.least_capacity_from_downs``)
            st.update(dl=jnp.full((c, DOWN_LIST), DOWN_LIST_PAD, jnp.int32), dok=jnp.ones((c,), bool))
        if finite:
            zi = jnp.zeros((c,), jnp.int32)
            st.update(free=jnp.full((c,), jnp.asarray(params.spares, jnp.int32)), ticket=jnp.full((c, n), no_ticket),
                      tickets=zi, ret=jnp.zeros((c, slots), jnp.float32), ret_head=zi, ret_count=zi,
                      spare_waiting=zb, nwait=zi, wait_from=jnp.zeros((c, n), jnp.float32), wait_max=zf)
        if epoch == "depth":
            st.update(depth_time=zf)
        if keep_end:
            st.update(fend=fend)
        if hw_trace:  # the node sets away: a set of return times (+inf: a free slot), not a ring in order
            st.update(ret=jnp.full((c, slots), inf, jnp.float32))
        if n_log:
            st.update(log_t=jnp.zeros((c, n_log), jnp.float32), log_g=jnp.zeros((c, n_log), jnp.int32),
                      log_kind=jnp.zeros((c, n_log), jnp.int32))
        return RunState(**st)

    c_all = run_ids.shape[0]
    if lanes is None and epoch:  # epochs vary in length: lanes that take the next epoch when theirs ends (on
        lanes = 256 if jax.default_backend() == "cpu" else c_all // 4  # CPU the step's cost grows past a few hundred)
    if lanes is not None:
        lanes = max(1, min(c_all, int(lanes)))
    c = c_all if lanes is None else lanes  # the runs a step takes at once
    wide_cap = max(8, c // 64)
    lanes = jnp.arange(c)  # each run's row, for the per-run scatters and gathers

    def running(s):
        return (s.phase != DONE) & (s.k < max_events)

    # One function per part of a step. Each reads and updates ``s`` (the state, as a dict) and ``e`` (this
    # step's event: which kind each run takes, its time ``tn``, and what the event did), in this order.

    def select(s, e):
        """Each run's next event: the phase's own, a group's clock, a domain, the job, a spare's return."""
        e["act"] = act = (s["phase"] != DONE) & (s["k"] < max_events)
        phase, t = s["phase"], s["t"]
        e["phase"] = phase
        gmin, gb = min_first(s["bv"])  # the earliest group clock: the least of the block minima
        e["gi"] = jnp.take_along_axis(s["bi"], gb[:, None], axis=1)[:, 0]
        if replay:  # at one instant a return first, then failures in physical group order
            e["gi"] = first_at_tie(s["nxt"], s["down"], gmin, trace.phys)
        dmin, e["di"] = min_first(s["dom"])
        jt = s["job"]
        e["computing"] = computing = phase == COMPUTE
        e["working"] = computing | (phase == CKPT)
        # a stall in force (its end after t) holds computing back until it ends; none in force: resume = t
        e["resume"] = resume = jnp.maximum(t, s["stall_end"])
        if epoch:  # an epoch's own event: its time limit (an event at the limit itself is still taken)
            t_ph = jnp.broadcast_to(max_time, t.shape)
        else:
            e["t_ck"] = t_ck = resume + jnp.maximum(tau - s["comp"], 0.0)
            e["t_w"] = t_w = resume + jnp.maximum(work_total - s["wc"] - s["wu"], 0.0) / s["rate"]
            t_ph = jnp.where(computing, jnp.minimum(t_ck, t_w), s["pend"])
        t_rand = jnp.minimum(jnp.minimum(gmin, dmin), jt)
        if finite:  # a node set's return from hardware repair goes first at a tie
            t_hw = jnp.where(s["ret_count"] > 0,
                             jnp.min(s["ret"], axis=1) if hw_trace else
                             jnp.take_along_axis(s["ret"], s["ret_head"][:, None], axis=1)[:, 0], inf)
            is_hw = act & (s["ret_count"] > 0) & (t_hw <= jnp.minimum(t_ph, t_rand))
            t_rand = jnp.minimum(t_rand, t_hw)
        else:
            is_hw = jnp.zeros_like(act)
        e["is_hw"] = is_hw
        e["is_ph"] = is_ph = act & ~is_hw & ((t_ph < t_rand) if epoch else (t_ph <= t_rand))
        rand = act & ~is_hw & ~is_ph
        if epoch:  # at a tie an epoch takes the job-wide failure, then a domain, then a group (as it always has)
            e["is_j"] = is_j = rand & (jt <= jnp.minimum(gmin, dmin))
            e["is_d"] = is_d = rand & ~is_j & (dmin < gmin)
            e["is_g"] = rand & ~is_j & ~is_d
        else:  # a whole run takes a group's clock, then a domain, then the job-wide failure
            e["is_g"] = is_g = rand & (gmin <= jnp.minimum(dmin, jt))
            e["is_d"] = is_d = rand & ~is_g & (dmin <= jt)
            e["is_j"] = rand & ~is_g & ~is_d
        e["tn"] = jnp.where(act, jnp.minimum(t_ph, t_rand), t)

    def advance(s, e):
        """Time moves to ``tn``: the wait for spares, the stalled and the computing time, the work done."""
        phase, tn = e["phase"], e["tn"]
        if epoch:
            advance_epoch(s, e)
        else:
            advance_run(s, e)
        s["t"] = tn
        e["u"] = (bits_to_uniform(row_bits(words, e["ids"], jnp.uint32(ev_stream) + s["k"].astype(jnp.uint32), 2))
                  if draws else jnp.full((c, 2), 0.5, jnp.float32))
        rs_end = e["is_ph"] & (phase == RESTART)
        if finite:  # R has elapsed but some down group still waits for a spare: the stall (the restart goes on)
            e["stall_now"] = stall_now = rs_end & (s["nwait"] > 0)  # ``nwait``: the groups holding a ticket
            rs_end = rs_end & ~stall_now
        e["rs_end"] = rs_end
        e["dom_hit"] = dom_hit = e["is_d"] & e["working"]
        e["k_wide"] = k_wide = jnp.uint32(wide_stream) + s["k"].astype(jnp.uint32)
        if nd:  # a domain event's repairs: one number per group
            e["u_wide"] = jax.lax.cond(jnp.any(dom_hit), lambda: bits_to_uniform(row_bits(words, e["ids"], k_wide, n)),
                                       lambda: jnp.full((c, n), 0.5, jnp.float32))

    def advance_epoch(s, e):
        """An epoch's time integrals up to ``tn``: the work (of the rate 1/d) and the depth."""
        if epoch == "depth":  # each product rounded before its sum (no fused multiply-add, which XLA emits or
            dt = jnp.where(e["act"], e["tn"] - s["t"], 0.0)  # not by the lanes' count)
            gain, dint = jax.lax.optimization_barrier((dt * s["rate"], dt * s["depth"]))
            s["work"] = s["work"] + gain
            s["depth_time"] = s["depth_time"] + dint

    def advance_run(s, e):
        """A run's time up to ``tn``: the wait for spares, the stalled and the computing time, the work."""
        act, phase, computing, tn, t = e["act"], e["phase"], e["computing"], e["tn"], s["t"]
        dt = jnp.maximum(tn - t, 0.0)
        if finite:
            s["spare_wait"] = jnp.where(act & (phase == RESTART) & s["spare_waiting"], s["spare_wait"] + dt,
                                        s["spare_wait"])
        # while computing, the part of [t, tn] before the stall's end is stalled (counted under the cause of
        # that end), the rest computes
        stalled = jnp.where(act & computing, jnp.maximum(jnp.minimum(tn, s["stall_end"]) - t, 0.0), 0.0)
        s["failure_stall"] = s["failure_stall"] + jnp.where(s["stall_rejoin"], 0.0, stalled)
        s["rejoin_stall"] = s["rejoin_stall"] + jnp.where(s["stall_rejoin"], stalled, 0.0)
        dt_comp = jnp.maximum(tn - e["resume"], 0.0)
        gain = jnp.where(act & computing, dt_comp * s["rate"], 0.0)
        s["comp"] = jnp.where(act & computing, s["comp"] + dt_comp, s["comp"])
        s["compute"] = jnp.where(act & computing, s["compute"] + dt_comp, s["compute"])
        s["wu"] = s["wu"] + gain
        s["work"] = s["work"] + gain

    def phase_event(s, e):
        """The phase's own event: a checkpoint starts (the final one when the work reaches W) or ends."""
        is_ph, computing, phase, tn = e["is_ph"], e["computing"], e["phase"], e["tn"]
        if epoch:  # an epoch's time limit: it ends there, censored
            e["timed_out"] = is_ph
            e["start_ck"] = e["ck_end"] = e["finished"] = e["pro_restart"] = jnp.zeros_like(is_ph)
            return
        e["start_ck"] = start_ck = is_ph & computing
        final_now = start_ck & (e["t_w"] <= e["t_ck"])
        s["wu"] = jnp.where(final_now, work_total - s["wc"], s["wu"])
        s["final"] = s["final"] | final_now
        e["ck_end"] = ck_end = is_ph & (phase == CKPT)
        s["wc"] = jnp.where(ck_end, s["wc"] + s["wu"], s["wc"])
        s["wu"] = jnp.where(ck_end, 0.0, s["wu"])
        s["ckpts"] = s["ckpts"] + ck_end
        e["finished"] = finished = ck_end & s["final"]
        s["ttt"] = jnp.where(finished, tn, s["ttt"])
        e["pro_restart"] = ck_end & ~s["final"] & s["pro"]

    def restart_end(s, e):
        """A restart's end: every down group replaced with a new clock (all of them with renewed ages)."""
        if epoch:  # an epoch has no restart
            e["nxt"], e["down"] = s["nxt"], s["down"]
            return
        tn, k_wide = e["tn"], e["k_wide"]

        def full_ends(rows, sub, ends):
            nxt_r, down_r = sub[:2]
            u_r = bits_to_uniform(row_bits(words, e["ids"][rows], k_wide[rows], n)) if draws else None
            replace = ends[:, None] & (down_r | renewed)
            new, new_end = clock(u_r, jnp.broadcast_to(tn[rows][:, None], (rows.shape[0], n)),
                                 jnp.arange(n, dtype=jnp.int32)[None, :], e["ids"][rows][:, None])
            out = (jnp.where(replace, new, nxt_r), jnp.where(ends[:, None], False, down_r))
            return out + ((jnp.where(replace, new_end, sub[2]),) if keep_end else ())

        def listed_ends(rows, sub, ends):  # only the listed down groups draw: the same bits at their columns
            def from_list():
                nxt_r, down_r = sub
                pos = s["dl"][rows]  # ascending, free slots DOWN_LIST_PAD (dropped by the scatter)
                cols = jnp.minimum(pos, n - 1)
                u_r = bits_to_uniform(row_bits_at(words, e["ids"][rows], k_wide[rows], n, cols))
                new, _ = clock(u_r, tn[rows][:, None], cols, e["ids"][rows][:, None])
                pos = jnp.where(ends[:, None], pos, DOWN_LIST_PAD)
                at = jnp.arange(rows.shape[0])[:, None]
                return (nxt_r.at[at, pos].set(new, mode="drop"), jnp.where(ends[:, None], False, down_r))

            return jax.lax.cond(jnp.all(s["dok"][rows] | ~ends), from_list, lambda: full_ends(rows, sub, ends))

        ends = listed_ends if listed and not renewed and not replay else full_ends
        if keep_end:
            e["nxt"], e["down"], s["fend"] = on_rows(e["rs_end"], ends, (s["nxt"], s["down"], s["fend"]), wide_cap)
        else:
            e["nxt"], e["down"] = on_rows(e["rs_end"], ends, (s["nxt"], s["down"]), wide_cap)

    def group_event(s, e):
        """A group's clock: a failure (a spare taken or a ticket, with a finite pool), or a rejoin."""
        is_g, gi, tn, u, working, down, nxt = e["is_g"], e["gi"], e["tn"], e["u"], e["working"], e["down"], e["nxt"]
        was_down = jnp.take_along_axis(down, gi[:, None], axis=1)[:, 0]
        e["fail"] = fail = is_g & ~was_down
        e["rejoin"] = rejoin = is_g & was_down
        if keep_end:  # a failure: the end of the period that failed it (the return, or the node set's)
            f_end = jnp.take_along_axis(s["fend"], gi[:, None], axis=1)[:, 0]
            e["hw_end"] = f_end
        if finite:  # the failed group takes a free spare, or waits (its ticket: first come, first served)
            has_spare = s["free"] > 0
            fail_wait = fail & ~has_spare
            e["free"] = s["free"] - (fail & has_spare)
            e["ticket"] = s["ticket"].at[lanes, gi].set(jnp.where(fail_wait, s["tickets"], s["ticket"][lanes, gi]))
            e["tickets"] = s["tickets"] + fail_wait
            e["nwait"] = s["nwait"] + fail_wait
            # a new ticket's wait starts now
            e["wait_from"] = s["wait_from"].at[lanes, gi].set(jnp.where(fail_wait, tn, s["wait_from"][lanes, gi]))
            g_repair = jnp.where(working & has_spare, repair_end(u[:, 0], tn), inf)
        else:
            g_repair = jnp.where(working, f_end if from_trace else repair_end(u[:, 0], tn), inf)
        new_clock, new_end = clock(u[:, 0], tn, gi, e["ids"])
        g_next = jnp.where(rejoin, new_clock, g_repair)
        if keep_end:
            s["fend"] = s["fend"].at[lanes, gi].set(jnp.where(rejoin, new_end, s["fend"][lanes, gi]))
        e["nxt"] = nxt.at[lanes, gi].set(jnp.where(is_g, g_next, nxt[lanes, gi]))
        e["down"] = down.at[lanes, gi].set(jnp.where(is_g, fail, down[lanes, gi]))
        s["failures"] = s["failures"] + fail
        e["pushed"] = fail.astype(jnp.int32)  # node sets sent to hardware repair at this event

    def domain_event(s, e):
        """A failure domain: its up members go down as one event (nothing during a restart); the job-wide
        clock's next event."""
        tn, u = e["tn"], e["u"]
        if nd:
            di, dom_hit, down, nxt, u_wide = e["di"], e["dom_hit"], e["down"], e["nxt"], e["u_wide"]
            e["members"] = members = jnp.any(dom_idx[None, :, :] == di[:, None, None], axis=1) & ~down & dom_hit[:, None]
            if finite:  # the first ``free`` of them by physical id take spares, the others wait in that order
                free, tickets = e["free"], e["tickets"]
                hit = members.sum(axis=1, dtype=jnp.int32)
                rank = (jnp.cumsum(members[:, pos_of], axis=1, dtype=jnp.int32) - 1)[:, ring_idx]
                served = members & (rank < free[:, None])
                queued = members & ~served
                nxt = jnp.where(served, repair_end(u_wide, tn[:, None]), jnp.where(queued, inf, nxt))
                e["ticket"] = jnp.where(queued, tickets[:, None] + rank - free[:, None], e["ticket"])
                e["wait_from"] = jnp.where(queued, tn[:, None], e["wait_from"])
                e["nwait"] = e["nwait"] + jnp.maximum(hit - free, 0)
                e["tickets"] = tickets + jnp.maximum(hit - free, 0)
                e["free"] = jnp.maximum(free - hit, 0)
                e["pushed"] = e["pushed"] + hit
            else:
                nxt = jnp.where(members, repair_end(u_wide, tn[:, None]), nxt)
            e["nxt"], e["down"] = nxt, down | members
            s["failures"] = s["failures"] + members.sum(axis=1)
            new_dom = tn - jnp.log1p(-u[:, 1]) * dom_mean[di]
            which = jnp.arange(nd, dtype=jnp.int32)[None, :] == di[:, None]
            s["dom"] = jnp.where(which & e["is_d"][:, None], new_dom[:, None], s["dom"])
        else:
            e["members"] = None
        s["job"] = jnp.where(e["is_j"], tn - jnp.log1p(-u[:, 1]) * job_mean, s["job"])

    def spare_return(s, e):
        """A finite pool: every group failure sends its node set away for exactly H (appended to the ring of
        return times: they return in the order they left, H being the same for all); a node set's return
        gives the pool a spare, which the first waiting group takes, and starts its repair (none during a
        restart or without repair: it holds the spare, down, until the restart ends)."""
        e["serve_last"] = e["serve_at"] = None
        if not finite:
            return
        tn, u, is_hw, pushed, phase = e["tn"], e["u"], e["is_hw"], e["pushed"], e["phase"]
        head, count = s["ret_head"], s["ret_count"]
        if hw_trace:  # a set of return times: the earliest returns (taken out), a new one goes in a free slot
            ret = s["ret"]
            out_at = jnp.argmin(ret, axis=1)
            ret = ret.at[lanes, out_at].set(jnp.where(is_hw, inf, ret[lanes, out_at]))
            in_at = jnp.argmax(ret == inf, axis=1)
            ret = ret.at[lanes, in_at].set(jnp.where(pushed == 1, e["hw_end"], ret[lanes, in_at]))
            s["ret"] = ret
            s["ret_count"] = count + pushed - is_hw
        else:
            tail = (head + count) % slots
            ret = s["ret"].at[lanes, tail].set(jnp.where(pushed == 1, tn + hw, s["ret"][lanes, tail]))
        if nd:  # a domain event sends several
            def several(ret):
                rel = (slot_idx[None, :] - (head + count)[:, None]) % slots
                return jnp.where((rel < pushed[:, None]) & (pushed > 1)[:, None], (tn + hw)[:, None], ret)

            ret = jax.lax.cond(jnp.any(pushed > 1), several, lambda x: x, ret)
        s["ret"] = ret
        count = count + pushed
        s["ret_head"] = jnp.where(is_hw, (head + 1) % slots, head)
        s["ret_count"] = count - is_hw
        nwait, ticket, wait_from = e["nwait"], e["ticket"], e["wait_from"]
        serve = is_hw & (nwait > 0)
        e["ti"] = ti = jax.lax.cond(jnp.any(serve), lambda: min_first(ticket)[1], lambda: jnp.zeros((c,), jnp.int32))
        s["free"] = e["free"] + (is_hw & ~serve)
        s["ticket"] = ticket.at[lanes, ti].set(jnp.where(serve, no_ticket, ticket[lanes, ti]))
        serve_repair = jnp.where(phase == RESTART, inf, repair_end(u[:, 0], tn))
        e["nxt"] = e["nxt"].at[lanes, ti].set(jnp.where(serve, serve_repair, e["nxt"][lanes, ti]))
        e["serve_at"] = serve
        nwait = nwait - serve
        # during the stall, the last waiting group served ends the restart now (its end is the next event)
        e["serve_last"] = serve & s["spare_waiting"] & (nwait == 0)
        # the longest wait for a spare: the served group's wait ends now
        waited = jnp.where(serve, tn - wait_from[lanes, ti], 0.0)
        s["wait_max"] = jnp.maximum(s["wait_max"], waited)
        s["wait_from"], s["nwait"], s["tickets"] = wait_from, nwait, e["tickets"]
        s["spare_waiting"] = (s["spare_waiting"] | e["stall_now"]) & ~e["rs_end"]

    def lost_shard(e):
        """Whether a shard is lost on all its holders after this step's event: after a group's failure, one of
        its r shards (``r x r`` holders); after a domain event, any shard (in a step where some run has one)."""
        down, fail = e["down"], e["fail"]
        r_ = stack.shape[1]
        hs = holders[stack[e["gi"]]].reshape(c, r_ * r_)
        wiped = fail & jnp.take_along_axis(down, hs, axis=1).reshape(c, r_, r_).all(axis=2).any(axis=1)
        if nd:
            dom_hit = e["dom_hit"]
            wiped = wiped | jax.lax.cond(jnp.any(dom_hit), lambda: dom_hit & down[:, holders].all(axis=2).any(axis=1),
                                         lambda: jnp.zeros_like(wiped))
        return wiped

    def depth_change(s, e):
        """The depth after a change of the groups up while computing or checkpointing: a wipe-out, the new
        work rate, a proactive checkpoint at D_max."""
        rs_end, fail, rejoin, members = e["rs_end"], e["fail"], e["rejoin"], e["members"]
        e["changed"] = changed = (e["is_g"] | e["dom_hit"]) & e["working"]
        dk = jnp.where(rs_end, 0, s["dk"]) + fail - rejoin
        if nd:
            dk = dk + members.sum(axis=1, dtype=jnp.int32)
        s["dk"] = dk
        if epoch == "wipeout":  # only a lost shard matters
            e["wiped"] = wiped = lost_shard(e)
            e["wipe"] = changed & wiped
            e["pro_ck"] = jnp.zeros_like(wiped)
            return
        if listed:
            wiped, new_rate, new_depth = listed_rate(s, e["down"], changed, (rs_end, fail, rejoin, e["gi"], dk), members,
                                               shape, rm)
        else:
            wiped, new_rate, new_depth = counted_rate(e["down"], dk, e["gi"], jnp.any(e["dom_hit"]) if nd else None,
                                                shape, rm)
        e["wiped"] = wiped
        e["wipe"] = changed & wiped
        s["rate"] = jnp.where(changed & ~wiped, new_rate, jnp.where(rs_end, rate0, s["rate"]))
        s["depth"] = jnp.where(changed & ~wiped, new_depth, jnp.where(rs_end, depth0, s["depth"]))
        hit_max = changed & ~wiped & (new_depth >= d_max)
        e["pro_ck"] = pro_ck = hit_max & e["computing"]
        s["pro"] = s["pro"] | pro_ck | (hit_max & (e["phase"] == CKPT) & ~s["final"])

    def stalls(s, e):
        """A failure survived without a restart (nor a proactive checkpoint, started or in progress) pauses
        the job until S after it, a return from repair until S_j after it, whichever end is later (the later
        end's cause is charged); a restart ends any stall (``phase_change``)."""
        if epoch:  # an epoch has no stalls
            return
        tn, members = e["tn"], e["members"]
        survived = e["changed"] & ~e["wiped"] & ~s["pro"]
        downed = e["fail"] | (jnp.any(members, axis=1) if nd else False)  # a group's failure, or a domain event's
        fail_stall = survived & downed
        rejoin_stall = survived & e["rejoin"]
        end_f = jnp.where(fail_stall, tn + stall_f, -inf)
        end_j = jnp.where(rejoin_stall, tn + stall_j, -inf)
        later_j = end_j > jnp.maximum(s["stall_end"], end_f)
        later_f = (end_f >= s["stall_end"]) & fail_stall
        s["stall_rejoin"] = jnp.where(later_j, True, jnp.where(later_f, False, s["stall_rejoin"]))
        s["stall_end"] = jnp.maximum(s["stall_end"], jnp.maximum(end_f, end_j))

    def phase_change(s, e):
        """The next phase: a checkpoint, computing again, done, or a restart (a wipe-out, a job-wide failure,
        a proactive restart after its checkpoint), which loses the work since the last checkpoint."""
        tn, phase, rs_end, start_ck, pro_ck, ck_end = e["tn"], e["phase"], e["rs_end"], e["start_ck"], e["pro_ck"], e["ck_end"]
        finished, pro_restart, wipe = e["finished"], e["pro_restart"], e["wipe"]
        e["job_hit"] = job_hit = e["is_j"] & e["working"]
        if epoch:  # an epoch ends at a wipe-out, a job-wide failure or its time limit
            e["to_restart"] = jnp.zeros_like(wipe)
            s["phase"] = jnp.where(wipe | job_hit | e["timed_out"], DONE, phase)
            s["wipeouts"] = s["wipeouts"] + wipe
            s["job_failures"] = s["job_failures"] + job_hit
            return
        e["to_restart"] = to_restart = wipe | job_hit | pro_restart
        new_phase = phase
        new_phase = jnp.where(start_ck | pro_ck, CKPT, new_phase)
        new_phase = jnp.where(ck_end & ~finished & ~pro_restart, COMPUTE, new_phase)
        new_phase = jnp.where(finished, DONE, new_phase)
        new_phase = jnp.where(rs_end, COMPUTE, new_phase)
        new_phase = jnp.where(to_restart, RESTART, new_phase)
        s["pend"] = jnp.where(start_ck | pro_ck, tn + cost, jnp.where(to_restart, tn + restart, s["pend"]))
        if finite:
            s["pend"] = jnp.where(e["stall_now"], inf, jnp.where(e["serve_last"], tn, s["pend"]))
        s["comp"] = jnp.where(start_ck | pro_ck | to_restart | rs_end, 0.0, s["comp"])
        s["stall_end"] = jnp.where(to_restart, jnp.minimum(s["stall_end"], tn), s["stall_end"])
        s["lost"] = s["lost"] + jnp.where(to_restart, s["wu"], 0.0)
        s["wu"] = jnp.where(to_restart, 0.0, s["wu"])
        s["final"] = s["final"] & ~to_restart
        s["pro"] = s["pro"] & ~to_restart & ~ck_end
        s["restarts"] = s["restarts"] + to_restart
        s["wipeouts"] = s["wipeouts"] + wipe
        s["job_failures"] = s["job_failures"] + job_hit
        s["proactive_restarts"] = s["proactive_restarts"] + pro_restart
        s["phase"] = new_phase

    def reblock(s, e):
        """The block minima: the block of the one clock a group's event or a served spare set, or all of them
        in a run that changed several (a restart, a domain event); a restart cancels the repairs in flight."""
        is_g, gi, nxt, down, to_restart = e["is_g"], e["gi"], e["nxt"], e["down"], e["to_restart"]
        one = jnp.where(is_g, gi, jnp.where(e["serve_at"], e["ti"], 0)) if finite else gi
        bv1, bi1 = block_min_at(nxt, one, width)
        blk = one // width
        bv, bi = s["bv"].at[lanes, blk].set(bv1), s["bi"].at[lanes, blk].set(bi1)
        wide = e["rs_end"] | to_restart
        if nd:
            wide = wide | e["dom_hit"]

        def every_block(rows, sub, sub_wide):
            nxt_r, bv_r, bi_r = sub
            nxt_r = jnp.where(to_restart[rows][:, None] & down[rows] & sub_wide[:, None], inf, nxt_r)
            bv_n, bi_n = all_block_mins(nxt_r, width)
            keep = ~sub_wide[:, None]
            return nxt_r, jnp.where(keep, bv_r, bv_n), jnp.where(keep, bi_r, bi_n)

        s["nxt"], s["bv"], s["bi"] = on_rows(wide, every_block, (nxt, bv, bi), wide_cap)
        s["down"] = down
        s["k"] = s["k"] + e["act"]

    def record(s, e):
        """The event log (``RunShape.log_events``): each run's k-th group event (a failure, a return, a
        restart's end), its time and ring position."""
        if not n_log:
            return
        kind = jnp.where(e["fail"], 1, jnp.where(e["rejoin"], 2, jnp.where(e["rs_end"], 3, 0)))
        at = jnp.where(e["act"] & (kind > 0) & (s["k"] < n_log), s["k"], n_log)  # n_log: dropped
        for name, v in (("log_t", e["tn"]), ("log_g", e["gi"]), ("log_kind", kind)):
            s[name] = s[name].at[lanes, at].set(v.astype(s[name].dtype), mode="drop")

    def body(state, ids):
        s, e = state._asdict(), {"ids": ids}
        for part in (select, advance, phase_event, restart_end, group_event, domain_event, spare_return, depth_change,
                     stalls, phase_change, record, reblock):
            part(s, e)
        return RunState(**s)

    def outputs(s):
        """Each run's results from its state (``run_kernel``'s docstring)."""
        if epoch:
            ended = (s.wipeouts > 0) | (s.job_failures > 0)
            timed_out = (s.phase == DONE) & ~ended & (s.k > 0)  # its last step was the time limit, not an event
            out = {"uptime": s.t, "failures": s.failures.astype(jnp.int32), "ended_by_job": s.job_failures > 0,
                   "censored": ~ended, "events": s.k - timed_out}
            if epoch == "depth":
                out.update(work=s.work, depth_time=s.depth_time)
            return out
        out = {name: getattr(s, name).astype(jnp.float32) for name in OUTPUTS if name != "events"}
        out["events"] = s.k.astype(jnp.float32)
        out["censored"] = (s.phase != DONE)
        out["work_min"] = jnp.broadcast_to(work_total, s.t.shape)
        if n_log:
            out.update(log_t=s.log_t, log_g=s.log_g, log_kind=s.log_kind)
        if finite:  # a wait still going when the run ends counts up to its end
            going = jnp.where(s.ticket != no_ticket, s.t[:, None] - s.wait_from, 0.0)
            out["spare_wait_max"] = jnp.maximum(s.wait_max, jnp.max(going, axis=1))
        else:
            out["spare_wait_max"] = jnp.zeros_like(s.t)
        return out

    ids = jnp.asarray(run_ids, jnp.uint32)
    if lanes is None:  # every run at once, in lockstep
        def cond(s):
            return jnp.any(running(s))

        return outputs(jax.lax.while_loop(cond, lambda s: body(s, ids), initial(ids)))
    return in_lanes(ids, c, initial, body, running, outputs)


@functools.lru_cache(maxsize=128)
def jitted_run_kernel(shape: RunShape):
    """``run_kernel`` compiled for one shape: ``fn(words, run_ids, total, params, max_events=...)``, every
    number traced (the event limit too)."""
    return jax.jit(functools.partial(run_kernel, shape=shape))
