"""The phase of a run (docs/runs.md#the-conventions-of-a-run): computing, checkpointing, restarting or done,
with the end of the checkpoint or restart in progress, the computing time since the last checkpoint or
restart started (for tau), the work committed and the work done since, whether the checkpoint in progress is
the final one and whether a proactive restart follows it.

Its own event (``next_time``, ``event``): while computing the next checkpoint (after tau of computing time,
counted from the stall's end) or the moment the work reaches W (the final, partial interval); the end of a
checkpoint (it commits the work; the run ends after the final one; a proactive restart follows a marked one);
the end of a restart. ``change`` takes the next phase: a checkpoint, computing, done, or a restart (a
wipe-out, a job-wide failure, a proactive restart), which loses the work since the last checkpoint. An epoch
(``RunShape.epoch``) has no checkpoint and no restart: its own event is its time limit, where it ends.
Outputs: the time-to-train, the computing time, the work computed and lost, and the counts of checkpoints,
restarts (proactive ones apart), wipe-outs and job-wide failures."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

COMPUTE, CKPT, RESTART, DONE = 0, 1, 2, 3


class Params(NamedTuple):
    ckpt_cost_min: np.ndarray  # float32[]: C
    restart_min: np.ndarray  # float32[]: R
    ckpt_interval_min: np.ndarray  # float32[]: tau, the checkpoint interval in computing time
    work_min: np.ndarray  # float32[]: W
    max_time_min: np.ndarray  # float32[]: an epoch's time limit (+inf: none)


def lower(setup) -> Params:
    ep = setup.epoch
    max_time = np.inf if ep is None or ep.max_time_min is None else ep.max_time_min
    return Params(*(np.float32(x) for x in (setup.ckpt_cost_min, setup.restart_min, setup.ckpt_interval_min,
                                            setup.work_min, max_time)))


class State(NamedTuple):
    phase: jax.Array  # COMPUTE, CKPT, RESTART or DONE
    pend: jax.Array  # the end of the checkpoint or restart in progress (+inf: a restart waiting for spares)
    comp: jax.Array  # the computing time since the last checkpoint or restart started (for tau)
    wc: jax.Array  # the work committed at the last completed checkpoint
    wu: jax.Array  # the work done since (lost at a restart)
    final: jax.Array  # the checkpoint in progress is the final one
    pro: jax.Array  # a proactive restart follows the checkpoint in progress
    ttt: jax.Array  # the time-to-train, once done (the outputs from here on are summed per run)
    compute: jax.Array
    work: jax.Array
    lost: jax.Array
    ckpts: jax.Array
    restarts: jax.Array
    proactive_restarts: jax.Array
    wipeouts: jax.Array
    job_failures: jax.Array


class Hit(NamedTuple):
    """What the phase's own event did this step."""

    start_ck: jax.Array  # a checkpoint starts
    ck_end: jax.Array  # a checkpoint ends
    finished: jax.Array  # the final one ended: the run is done
    pro_restart: jax.Array  # a proactive restart follows it
    timed_out: jax.Array | None  # an epoch reached its time limit


def init(padding) -> State:
    c = padding.shape[0]
    zf, zb = jnp.zeros((c,), jnp.float32), jnp.zeros((c,), bool)
    return State(jnp.where(padding, DONE, COMPUTE).astype(jnp.int32), zf, zf, zf, zf, zb, zb, *([zf] * 9))


def next_time(kx, s: State, computing, resume, rate):
    """``(t_ph, t_ck, t_w)``: the phase's own next event, and while computing the next checkpoint and the
    moment the work reaches W (counted from ``resume``, the stall's end)."""
    p = kx.p.phase
    if kx.epoch:  # an epoch's own event: its time limit (an event at the limit itself is still taken)
        return jnp.broadcast_to(p.max_time_min, resume.shape), None, None
    t_ck = resume + jnp.maximum(p.ckpt_interval_min - s.comp, 0.0)
    t_w = resume + jnp.maximum(p.work_min - s.wc - s.wu, 0.0) / rate
    return jnp.where(computing, jnp.minimum(t_ck, t_w), s.pend), t_ck, t_w


def accrue(s: State, on, dt_comp, rate) -> State:
    """Computing from the stall's end up to this step's event (``on``: the runs computing)."""
    gain = jnp.where(on, dt_comp * rate, 0.0)
    return s._replace(comp=jnp.where(on, s.comp + dt_comp, s.comp), compute=jnp.where(on, s.compute + dt_comp, s.compute),
                      wu=s.wu + gain, work=s.work + gain)


def event(kx, s: State, pick) -> tuple:
    """The phase's own event: a checkpoint starts (the final one when the work reaches W) or ends."""
    is_ph, computing, tn = pick.is_ph, pick.computing, pick.tn
    if kx.epoch:  # an epoch's time limit: it ends there, censored
        no = jnp.zeros_like(is_ph)
        return s, Hit(no, no, no, no, is_ph)
    start_ck = is_ph & computing
    final_now = start_ck & (pick.t_w <= pick.t_ck)
    wu = jnp.where(final_now, kx.p.phase.work_min - s.wc, s.wu)
    final = s.final | final_now
    ck_end = is_ph & (pick.phase == CKPT)
    wc = jnp.where(ck_end, s.wc + wu, s.wc)
    wu = jnp.where(ck_end, 0.0, wu)
    finished = ck_end & final
    s = s._replace(wu=wu, final=final, wc=wc, ckpts=s.ckpts + ck_end, ttt=jnp.where(finished, tn, s.ttt))
    return s, Hit(start_ck, ck_end, finished, ck_end & ~final & s.pro, None)


def mark(s: State, hit_max, pro_ck, phase) -> State:
    """A depth at D_max: the proactive checkpoint starts (``pro_ck``), or the checkpoint in progress is
    marked (unless it is the final one)."""
    return s._replace(pro=s.pro | pro_ck | (hit_max & (phase == CKPT) & ~s.final))


def change(kx, s: State, h: Hit, pick, event, interrupt=None) -> tuple:
    """The next phase; ``event``: ``(rs_end, pro_ck, wipe, job_hit, stall_now, serve_last)`` of this step;
    ``interrupt``: where an added part stops the job (None: no added part). Returns ``(state, to_restart)``."""
    tn, phase = pick.tn, pick.phase
    rs_end, pro_ck, wipe, job_hit, stall_now, serve_last = event
    if kx.epoch:  # an epoch ends at a wipe-out, a job-wide failure or its time limit
        return s._replace(phase=jnp.where(wipe | job_hit | h.timed_out, DONE, phase), wipeouts=s.wipeouts + wipe,
                          job_failures=s.job_failures + job_hit), jnp.zeros_like(wipe)
    start_ck, ck_end, finished, pro_restart = h.start_ck, h.ck_end, h.finished, h.pro_restart
    to_restart = wipe | job_hit | pro_restart
    if interrupt is not None:
        to_restart = to_restart | interrupt
    new_phase = phase
    new_phase = jnp.where(start_ck | pro_ck, CKPT, new_phase)
    new_phase = jnp.where(ck_end & ~finished & ~pro_restart, COMPUTE, new_phase)
    new_phase = jnp.where(finished, DONE, new_phase)
    new_phase = jnp.where(rs_end, COMPUTE, new_phase)
    new_phase = jnp.where(to_restart, RESTART, new_phase)
    p = kx.p.phase
    pend = jnp.where(start_ck | pro_ck, tn + p.ckpt_cost_min, jnp.where(to_restart, tn + p.restart_min, s.pend))
    if kx.finite:
        pend = jnp.where(stall_now, kx.inf, jnp.where(serve_last, tn, pend))
    s = s._replace(
        pend=pend, comp=jnp.where(start_ck | pro_ck | to_restart | rs_end, 0.0, s.comp),
        lost=s.lost + jnp.where(to_restart, s.wu, 0.0), wu=jnp.where(to_restart, 0.0, s.wu),
        final=s.final & ~to_restart, pro=s.pro & ~to_restart & ~ck_end, restarts=s.restarts + to_restart,
        wipeouts=s.wipeouts + wipe, job_failures=s.job_failures + job_hit,
        proactive_restarts=s.proactive_restarts + pro_restart, phase=new_phase)
    return s, to_restart


def outputs(s: State) -> dict:
    """The phase's totals per run (a whole run's)."""
    return {name: getattr(s, name) for name in ("ttt", "compute", "work", "lost", "ckpts", "restarts",
                                                "proactive_restarts", "wipeouts", "job_failures")}
