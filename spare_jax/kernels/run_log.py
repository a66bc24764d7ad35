"""The event log (``RunShape.log_events``, absent when 0): each run's first group events (a failure, a return, a
restart's end), their times and ring positions, so that a sampled run can be dumped as a failure trace
(``kernels.run_trace.logged_periods``)."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp


class State(NamedTuple):
    log_t: jax.Array  # [C, log_events] the logged group events' times
    log_g: jax.Array  # [C, log_events] their ring positions
    log_kind: jax.Array  # [C, log_events] 0 none, 1 a failure, 2 a return, 3 a restart's end


def init(kx, c) -> State:
    n_log = kx.n_log
    return State(jnp.zeros((c, n_log), jnp.float32), jnp.zeros((c, n_log), jnp.int32),
                 jnp.zeros((c, n_log), jnp.int32))


def record(kx, s: State, k, act, event) -> State:
    """The run's k-th event, when it is a group event (``event``: ``(fail, rejoin, rs_end, tn, gi)``)."""
    fail, rejoin, rs_end, tn, gi = event
    n_log, rows = kx.n_log, kx.rows
    kind = jnp.where(fail, 1, jnp.where(rejoin, 2, jnp.where(rs_end, 3, 0)))
    at = jnp.where(act & (kind > 0) & (k < n_log), k, n_log)  # n_log: dropped
    return State(*(a.at[rows, at].set(v.astype(a.dtype), mode="drop") for a, v in zip(s, (tn, gi, kind))))


def outputs(s: State) -> dict:
    return {"log_t": s.log_t, "log_g": s.log_g, "log_kind": s.log_kind}
