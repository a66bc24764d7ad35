"""A finite spare pool (docs/runs.md#spare-pool; ``RunShape.spare_capacity``, absent without one: then none of
this state exists and nothing here runs). Every group failure (own clock or domain event, in any phase) sends
the group's node set away for exactly H (its return time appended to a ring buffer of N + capacity slots: they
return in the order they left; in a replay with ``trace_hardware`` until the end of the period that failed
it, a set of return times, the earliest first). The failed group takes a free spare at once or waits with the
next ticket (first come, first served; a domain event's groups in increasing physical id). A node set's
return (``next_time``, first at a tie) gives the pool a spare, which the group with the least ticket takes
(and starts its repair, outside a restart). A restart that has run R while some group waits *waits for
spares* (``stall_now``) until the return that serves the last of them. Outputs: the wait for spares summed
per run (``spare_wait``) and the longest wait of a group (``spare_wait_max``)."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .events import min_first
from .run_clocks import repair_end
from .run_phase import RESTART

WAITING_NONE = np.iinfo(np.int32).max  # the ticket of a group that does not wait for a spare


class Params(NamedTuple):
    spares: np.ndarray  # int32[]: K
    hardware_repair_min: np.ndarray  # float32[]: H
    ring: np.ndarray  # int32[N]: ring position -> physical group
    pos_of: np.ndarray  # int32[N]: physical group -> ring position


def lower(setup) -> Params:
    ring = np.asarray(setup.ring)
    hardware = 0.0 if setup.hardware_repair_min is None else setup.hardware_repair_min
    return Params(np.int32(setup.spares), np.float32(hardware), ring.astype(np.int32),
                  np.argsort(ring).astype(np.int32))


class State(NamedTuple):
    free: jax.Array  # free spares
    ticket: jax.Array  # [C, N] a waiting group's ticket (WAITING_NONE: not waiting)
    tickets: jax.Array  # the next ticket
    ret: jax.Array  # [C, N + capacity] the node sets' return times, a ring buffer
    ret_head: jax.Array
    ret_count: jax.Array
    spare_waiting: jax.Array  # the restart in progress waits for spares
    nwait: jax.Array  # groups holding a ticket
    wait_from: jax.Array  # [C, N] when a waiting group's wait started
    wait_max: jax.Array  # the longest wait for a spare so far
    spare_wait: jax.Array  # the time restarts waited for spares (minutes): an output


class Served(NamedTuple):
    """What a node set's return did this step."""

    at: jax.Array  # a waiting group took the returned spare
    ti: jax.Array  # its ring position
    last: jax.Array  # it was the last one a restart waited for: the restart ends now


def slots(kx) -> int:
    """Node sets away at once: at most N + K (the module docstring of ``kernels.run``)."""
    return kx.n + int(kx.shape.spare_capacity)


def init(kx, c) -> State:
    zi, zf = jnp.zeros((c,), jnp.int32), jnp.zeros((c,), jnp.float32)
    ret = jnp.full((c, slots(kx)), jnp.inf, jnp.float32) if kx.hw_trace else jnp.zeros((c, slots(kx)), jnp.float32)
    return State(jnp.full((c,), kx.p.pool.spares), jnp.full((c, kx.n), jnp.int32(WAITING_NONE)), zi, ret, zi, zi,
                 jnp.zeros((c,), bool), zi, jnp.zeros((c, kx.n), jnp.float32), zf, zf)


def next_time(kx, s: State):
    """The earliest node set's return (+inf: none away)."""
    t_hw = jnp.where(s.ret_count > 0,
                     jnp.min(s.ret, axis=1) if kx.hw_trace else
                     jnp.take_along_axis(s.ret, s.ret_head[:, None], axis=1)[:, 0], kx.inf)
    return t_hw, s.ret_count > 0


def accrue(s: State, act, phase, dt) -> State:
    """The time a restart waits for spares, up to this step's event."""
    return s._replace(spare_wait=jnp.where(act & (phase == RESTART) & s.spare_waiting, s.spare_wait + dt,
                                           s.spare_wait))


def take(kx, s: State, fail, gi, tn):
    """A group's failure takes a free spare, or waits with the next ticket: ``(state, has_spare)``."""
    rows = kx.rows
    has_spare = s.free > 0
    fail_wait = fail & ~has_spare
    return s._replace(
        free=s.free - (fail & has_spare),
        ticket=s.ticket.at[rows, gi].set(jnp.where(fail_wait, s.tickets, s.ticket[rows, gi])),
        tickets=s.tickets + fail_wait, nwait=s.nwait + fail_wait,
        # a new ticket's wait starts now
        wait_from=s.wait_from.at[rows, gi].set(jnp.where(fail_wait, tn, s.wait_from[rows, gi]))), has_spare


def take_domain(kx, s: State, members, nxt, u_wide, tn):
    """A domain event's groups: the first ``free`` of them by physical id take spares (and start their
    repairs), the others wait in that order: ``(state, nxt, hit)``."""
    p = kx.p.pool
    free, tickets = s.free, s.tickets
    hit = members.sum(axis=1, dtype=jnp.int32)
    rank = (jnp.cumsum(members[:, p.pos_of], axis=1, dtype=jnp.int32) - 1)[:, p.ring]
    served = members & (rank < free[:, None])
    queued = members & ~served
    nxt = jnp.where(served, repair_end(kx, u_wide, tn[:, None]), jnp.where(queued, kx.inf, nxt))
    return s._replace(
        ticket=jnp.where(queued, tickets[:, None] + rank - free[:, None], s.ticket),
        wait_from=jnp.where(queued, tn[:, None], s.wait_from), nwait=s.nwait + jnp.maximum(hit - free, 0),
        tickets=tickets + jnp.maximum(hit - free, 0), free=jnp.maximum(free - hit, 0)), nxt, hit


def away(kx, s: State, tn, is_hw, pushed, hw_end) -> State:
    """The node sets sent away this step (``pushed``) go in, the one returning (``is_hw``) comes out."""
    head, count, n_slots = s.ret_head, s.ret_count, slots(kx)
    hw = kx.p.pool.hardware_repair_min
    if kx.hw_trace:  # a set of return times: the earliest returns (taken out), a new one goes in a free slot
        ret = s.ret
        out_at = jnp.argmin(ret, axis=1)
        ret = ret.at[kx.rows, out_at].set(jnp.where(is_hw, kx.inf, ret[kx.rows, out_at]))
        in_at = jnp.argmax(ret == kx.inf, axis=1)
        ret = ret.at[kx.rows, in_at].set(jnp.where(pushed == 1, hw_end, ret[kx.rows, in_at]))
    else:
        tail = (head + count) % n_slots
        ret = s.ret.at[kx.rows, tail].set(jnp.where(pushed == 1, tn + hw, s.ret[kx.rows, tail]))
    if kx.nd:  # a domain event sends several
        def several(ret):
            rel = (jnp.arange(n_slots, dtype=jnp.int32)[None, :] - (head + count)[:, None]) % n_slots
            return jnp.where((rel < pushed[:, None]) & (pushed > 1)[:, None], (tn + hw)[:, None], ret)

        ret = jax.lax.cond(jnp.any(pushed > 1), several, lambda x: x, ret)
    count = count + pushed
    return s._replace(ret=ret, ret_head=jnp.where(is_hw, (head + 1) % n_slots, head), ret_count=count - is_hw)


def serve(kx, s: State, nxt, pick, u0, stall_now, rs_end):
    """A node set's return gives the pool a spare, which the first waiting group takes and starts its repair
    (none during a restart or without repair: it holds the spare, down, until the restart ends):
    ``(state, nxt, Served)``."""
    rows, tn, is_hw = kx.rows, pick.tn, pick.is_hw
    serve = is_hw & (s.nwait > 0)
    ti = jax.lax.cond(jnp.any(serve), lambda: min_first(s.ticket)[1], lambda: jnp.zeros((kx.c,), jnp.int32))
    free = s.free + (is_hw & ~serve)
    ticket = s.ticket.at[rows, ti].set(jnp.where(serve, jnp.int32(WAITING_NONE), s.ticket[rows, ti]))
    serve_repair = jnp.where(pick.phase == RESTART, kx.inf, repair_end(kx, u0, tn))
    nxt = nxt.at[rows, ti].set(jnp.where(serve, serve_repair, nxt[rows, ti]))
    nwait = s.nwait - serve
    # during the stall, the last waiting group served ends the restart now (its end is the next event)
    last = serve & s.spare_waiting & (nwait == 0)
    # the longest wait for a spare: the served group's wait ends now
    waited = jnp.where(serve, tn - s.wait_from[rows, ti], 0.0)
    s = s._replace(free=free, ticket=ticket, nwait=nwait, wait_max=jnp.maximum(s.wait_max, waited),
                   spare_waiting=(s.spare_waiting | stall_now) & ~rs_end)
    return s, nxt, Served(serve, ti, last)


def outputs(s: State, t) -> dict:
    """``spare_wait`` and ``spare_wait_max`` (a wait still going when the run ends counts up to its end)."""
    going = jnp.where(s.ticket != jnp.int32(WAITING_NONE), t[:, None] - s.wait_from, 0.0)
    return {"spare_wait": s.spare_wait, "spare_wait_max": jnp.maximum(s.wait_max, jnp.max(going, axis=1))}
