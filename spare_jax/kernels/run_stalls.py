"""Stalls (docs/runs.md#stalls): a group failure survived without a restart (nor a proactive checkpoint
started, marked or in progress) pauses the job until S after it, a return from repair until S_j after it,
whichever end is later (the later end's cause is kept); a restart ends any stall. While computing, the part
of a step before the stall's end is stalled (summed by cause) and the rest computes; the next checkpoint and
the moment the work reaches W are counted from the stall's end. The stall's end is not an event: with S = S_j
= 0 it is never after t and every step is what it was without stalls, bit for bit. Whole runs only (an epoch
has none: the part is absent there).

``Params.failure_stall_min`` and ``Params.rejoin_stall_min`` are the pauses per event (minutes, traced; the
names of ``model.runsetup.RunSetup`` and ``model.training.Training``, from ``--failure-stall`` and
``--rejoin-stall``);
``State.failure_stalled`` and ``State.rejoin_stalled`` the stalled time summed per run, the outputs
``failure_stall`` and ``rejoin_stall``."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np


class Params(NamedTuple):
    failure_stall_min: np.ndarray  # float32[]: S, the job's pause after a group failure survived without a restart
    rejoin_stall_min: np.ndarray  # float32[]: S_j, the job's pause after a group's return from repair


def lower(setup) -> Params:
    return Params(np.float32(setup.failure_stall_min), np.float32(setup.rejoin_stall_min))


class State(NamedTuple):
    stall_end: jax.Array  # the end of the stall in force (none when not after t)
    stall_rejoin: jax.Array  # that end was set by a rejoin (else a failure)
    failure_stalled: jax.Array  # the time stalled after failures (minutes): the output ``failure_stall``
    rejoin_stalled: jax.Array  # the time stalled after rejoins: the output ``rejoin_stall``


def init(c) -> State:
    zf = jnp.zeros((c,), jnp.float32)
    return State(zf, jnp.zeros((c,), bool), zf, zf)


def resume(s: State | None, t):
    """When computing resumes: a stall in force (its end after t) holds it back until it ends."""
    return t if s is None else jnp.maximum(t, s.stall_end)


def accrue(s: State, on, t, tn) -> State:
    """The part of [t, tn] before the stall's end is stalled (``on``: the runs computing), under the cause of
    that end."""
    stalled = jnp.where(on, jnp.maximum(jnp.minimum(tn, s.stall_end) - t, 0.0), 0.0)
    return s._replace(failure_stalled=s.failure_stalled + jnp.where(s.stall_rejoin, 0.0, stalled),
                      rejoin_stalled=s.rejoin_stalled + jnp.where(s.stall_rejoin, stalled, 0.0))


def update(kx, s: State, survived, downed, rejoin, tn) -> State:
    """A failure (``downed``) or a rejoin survived this step: the stall's end moves to the later one."""
    fail_stall = survived & downed
    rejoin_stall = survived & rejoin
    inf = kx.inf
    end_f = jnp.where(fail_stall, tn + kx.p.stalls.failure_stall_min, -inf)
    end_j = jnp.where(rejoin_stall, tn + kx.p.stalls.rejoin_stall_min, -inf)
    later_j = end_j > jnp.maximum(s.stall_end, end_f)
    later_f = (end_f >= s.stall_end) & fail_stall
    return s._replace(stall_rejoin=jnp.where(later_j, True, jnp.where(later_f, False, s.stall_rejoin)),
                      stall_end=jnp.maximum(s.stall_end, jnp.maximum(end_f, end_j)))


def restart(s: State, to_restart, tn) -> State:
    """A restart ends any stall."""
    return s._replace(stall_end=jnp.where(to_restart, jnp.minimum(s.stall_end, tn), s.stall_end))


def outputs(s: State) -> dict:
    return {"failure_stall": s.failure_stalled, "rejoin_stall": s.rejoin_stalled}
