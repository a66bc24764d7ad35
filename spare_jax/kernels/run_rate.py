"""The work rate of a whole run's step (docs/runs.md#what-a-run-is): whether the groups up still hold every
shard (a wipe-out if not), the work rate ``1/d`` and the depth ``d``, per scheme. ``stacked`` (``spare``,
``none``) takes the least capacity of ``kernels.depth`` (the queue test on the down set, or, with repair, the
pairs of each run's sorted list of down groups, ``depth.least_capacity_from_downs``); ``rep`` its blocks;
``elastic`` the count of groups up. ``rm`` is (r, m, bisection steps) as numbers of the run: one compiled
kernel serves every r >= 2 and every m (``RunShape.redundancy`` keeps rep's r and r = 1).

As a part of the whole-run kernel's step (``kernels.run``; ``State``, ``Params``, ``change``): after a change
of the groups up while computing or checkpointing, whether some shard is lost (a wipe-out), the new work rate
and depth, and a proactive checkpoint at D_max. With repair, ``stacked`` with r >= 2 also keeps each run's
sorted list of down groups (``dl``, ``dok``; ``uses_down_list``). An epoch ``wipeout`` tests only for a lost
shard, through its placement's holders (``lost_shard``); an epoch ``depth`` keeps the time integrals of 1/d
(the work) and of d (``depth_time``)."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .run_shape import RunShape
from .depth import (
    DOWN_LIST_PAD, bisect_steps, capacity_block, down_list_insert, down_list_of, down_list_remove,
    least_capacity_from_downs, least_capacity_stacked)


def rate(down, shape: RunShape, rm, alive=None):
    """``(wiped, rate, depth)`` per run for the down sets ``down`` (``bool[C, N]``; ``alive``: the groups up in
    each, counted from ``down`` when not given; ``rm``: r, m and the bisection steps, traced, the kernel)."""
    n, r = shape.groups, shape.redundancy
    r_run, m, steps = rm
    if alive is None:
        alive = n - down.sum(axis=1, dtype=jnp.int32)
    if shape.scheme == "elastic":
        wiped = alive == 0
        if shape.elastic_data == "shrink":
            rate = alive.astype(jnp.float32) / jnp.float32(n)
            return wiped, rate, jnp.ones_like(rate)
        cap = -(-(n * m) // jnp.maximum(alive, 1))
        rate = m.astype(jnp.float32) / cap.astype(jnp.float32)
        return wiped, rate, 1.0 / rate
    if shape.scheme == "block":  # an epoch of the block placement (``kernels.repair``): its depth adapts
        return rate_of_capacity(capacity_block(~down, r, m), m)
    if shape.scheme == "rep":
        wiped = capacity_block(~down, r, 1) == 0
        rate = jnp.full(alive.shape, 1.0 / r, jnp.float32)
        return wiped, rate, jnp.full(alive.shape, float(r), jnp.float32)
    if r == 1:
        wiped = alive < n
        return wiped, jnp.ones(alive.shape, jnp.float32), jnp.ones(alive.shape, jnp.float32)
    return rate_of_capacity(least_capacity_stacked(down, r_run, m, steps), m)


def rate_of_capacity(cap, m):
    """``(wiped, rate, depth)`` from the least capacity ``cap`` in micro-batches (0: a wipe-out)."""
    wiped = cap == 0
    depth = jnp.maximum(cap, m).astype(jnp.float32) / m.astype(jnp.float32)
    return wiped, 1.0 / depth, depth


DOWN_LIST = 32  # the down groups a run lists (SPARe with repair): more in some run falls back to the down set


def uses_down_list(shape: RunShape) -> bool:
    """Whether the kernel keeps each run's sorted list of down groups for the depth (static): ``stacked`` with
    r >= 2 and repair (without repair down groups pile up until the next restart, and the down set serves)."""
    return shape.scheme in ("spare", "none") and shape.redundancy == 0 and shape.repair_law is not None


def counted_rate(down, dk, gi, domain_hit, shape: RunShape, rm):
    """``rate`` without a pass over every group where the scheme allows: ``elastic`` from the count of groups
    down ``dk``; ``rep`` from the block of the group of this step's event (``gi``), every block in a step
    with a domain event (``domain_hit``: some run has one; None: no domains); ``none`` from the count."""
    n, r = shape.groups, shape.redundancy
    if shape.scheme == "elastic":
        return rate(down, shape, rm, alive=n - dk)
    if shape.scheme == "rep":
        block = (gi // r * r)[:, None] + jnp.arange(r, dtype=jnp.int32)[None, :]
        local = jnp.all(jnp.take_along_axis(down, block, axis=1), axis=1)
        wiped = local if domain_hit is None else jax.lax.cond(
            domain_hit, lambda: capacity_block(~down, r, 1) == 0, lambda: local)
        return wiped, jnp.full(dk.shape, 1.0 / r, jnp.float32), jnp.full(dk.shape, float(r), jnp.float32)
    if r == 1:
        return dk > 0, jnp.ones(dk.shape, jnp.float32), jnp.ones(dk.shape, jnp.float32)
    return rate(down, shape, rm)


def listed_rate(dl, dok, down, changed, event, members, shape: RunShape, rm):
    """``(dl, dok, (wiped, rate, depth))``: ``rate`` for the runs whose down set changed (``changed``), from each
    run's sorted down list ``dl`` (complete where ``dok``), which this step's event updates (``dk``, the groups
    down, is this step's count): a restart's
    end empties it, a group's failure or rejoin inserts or removes one position, a domain event marks it
    incomplete (rebuilt from the down set in the first step where it fits again, as is a list that
    overflowed). Where a changed run's list is incomplete the depth comes from the down set, for every run
    of that step: the same numbers either way."""
    rs_end, fail, rejoin, gi, dk = event
    n, (r, m, _) = shape.groups, rm
    dl = jnp.where(rs_end[:, None], DOWN_LIST_PAD, dl)
    dok = dok | rs_end
    dl = down_list_insert(dl, gi, fail & dok)
    dl = down_list_remove(dl, gi, rejoin & dok)
    if members is not None:
        dok = dok & ~jnp.any(members, axis=1)
    k_max = dl.shape[1]  # the list's length (``DOWN_LIST`` in the kernel)
    dok = dok & (dk <= k_max)
    rebuild = ~dok & (dk <= k_max)
    dl = jax.lax.cond(jnp.any(rebuild), lambda: jnp.where(rebuild[:, None], down_list_of(down, k_max), dl),
                      lambda: dl)
    dok = dok | rebuild
    return dl, dok, jax.lax.cond(
        jnp.all(dok | ~changed),
        lambda: rate_of_capacity(least_capacity_from_downs(dl, jnp.where(changed, dk, 0), n, r, m,
                                                            not shape.wide_capacity), m),
        lambda: rate(down, shape, rm))


# The rate as a part of the kernel's step (``kernels.run``): its state, numbers and event.
class Params(NamedTuple):
    rm: tuple  # int32[] x 3: r, m and ``depth.bisect_steps(r, m)``
    restart_depth: np.ndarray  # float32[]: D_max, the proactive restart depth (+inf: never)
    stack: np.ndarray  # int32[N, r]: an epoch's shards of each ring position (``[N, 0]`` for a whole run)
    holders: np.ndarray  # int32[N, r]: an epoch's ring positions holding each shard
    rate0: jax.Array | None = None  # float32[]: the rate at full health (rep: 1/r; the others: 1; ``ready``)
    depth0: jax.Array | None = None  # float32[]: and the depth


def lower(setup) -> Params:
    """The rate's numbers of a ``RunSetup`` (host arrays; ``rate0`` and ``depth0`` come in the kernel, ``ready``)."""
    r, m, ep = setup.redundancy, setup.microbatches, setup.epoch
    none = np.zeros((setup.groups, 0), np.int32)  # a whole run's shards: none (its depth comes from the scheme)
    return Params(tuple(np.int32(x) for x in (r, m, bisect_steps(r, m))),
                  np.float32(np.inf if setup.restart_depth is None else setup.restart_depth),
                  none if ep is None else np.asarray(ep.stack, np.int32),
                  none if ep is None else np.asarray(ep.holders, np.int32))


def ready(p: Params, shape) -> Params:
    """``p`` with the rate and the depth at full health (in the kernel: traced r and m)."""
    rm = tuple(jnp.asarray(x, jnp.int32) for x in p.rm)
    if shape.epoch == "wipeout":  # only a lost shard matters: the rate and the depth stay 1
        rate0 = depth0 = jnp.float32(1.0)
    else:
        _, rate0, depth0 = rate(jnp.zeros((1, shape.groups), bool), shape, rm)
        rate0, depth0 = rate0[0], depth0[0]
    return p._replace(rm=rm, restart_depth=jnp.asarray(p.restart_depth, jnp.float32),
                      stack=jnp.asarray(p.stack, jnp.int32), holders=jnp.asarray(p.holders, jnp.int32),
                      rate0=rate0, depth0=depth0)


class State(NamedTuple):
    rate: jax.Array  # the work rate 1/d
    depth: jax.Array  # the depth d
    dk: jax.Array  # the groups down
    dl: jax.Array | None  # [C, DOWN_LIST] the down groups' ring positions, ascending (``listed`` only)
    dok: jax.Array | None  # the list is complete
    depth_time: jax.Array | None  # an epoch's time integral of the depth (``epoch == "depth"``)


class Change(NamedTuple):
    """What a change of the groups up did this step."""

    changed: jax.Array  # the groups up changed while computing or checkpointing
    wiped: jax.Array  # no shard survives it
    wipe: jax.Array  # a wipe-out
    pro_ck: jax.Array  # a proactive checkpoint starts
    hit_max: jax.Array | None  # the depth reached D_max (None in an epoch ``wipeout``)


def init(kx, c) -> State:
    p = kx.p.rate
    listed = kx.listed
    return State(jnp.full((c,), p.rate0), jnp.full((c,), p.depth0), jnp.zeros((c,), jnp.int32),
                 jnp.full((c, DOWN_LIST), DOWN_LIST_PAD, jnp.int32) if listed else None,
                 jnp.ones((c,), bool) if listed else None,
                 jnp.zeros((c,), jnp.float32) if kx.epoch == "depth" else None)


def accrue_epoch(s: State, act, dt):
    """An epoch's time integrals up to this step's event: ``(state, work gained)``."""
    # each product rounded before its sum (no fused multiply-add, which XLA emits or not by the lanes' count)
    dt = jnp.where(act, dt, 0.0)
    gain, dint = jax.lax.optimization_barrier((dt * s.rate, dt * s.depth))
    return s._replace(depth_time=s.depth_time + dint), gain


def lost_shard(kx, down, fail, gi, dom_hit):
    """Whether a shard is lost on all its holders after this step's event: after a group's failure, one of
    its r shards (``r x r`` holders); after a domain event, any shard (in a step where some run has one)."""
    stack, holders, c = kx.p.rate.stack, kx.p.rate.holders, kx.c
    r_ = stack.shape[1]
    hs = holders[stack[gi]].reshape(c, r_ * r_)
    wiped = fail & jnp.take_along_axis(down, hs, axis=1).reshape(c, r_, r_).all(axis=2).any(axis=1)
    if kx.nd:
        wiped = wiped | jax.lax.cond(jnp.any(dom_hit), lambda: dom_hit & down[:, holders].all(axis=2).any(axis=1),
                                     lambda: jnp.zeros_like(wiped))
    return wiped


def change(kx, s: State, down, ev, members) -> tuple:
    """The depth after this step's event ``ev`` (``(is_g, dom_hit, working, computing, rs_end, fail, rejoin,
    gi)``) with the down set ``down``: ``(state, Change)``."""
    is_g, dom_hit, working, computing, rs_end, fail, rejoin, gi = ev
    changed = (is_g | dom_hit) & working
    dk = jnp.where(rs_end, 0, s.dk) + fail - rejoin
    if kx.nd:
        dk = dk + members.sum(axis=1, dtype=jnp.int32)
    s = s._replace(dk=dk)
    if kx.epoch == "wipeout":  # only a lost shard matters
        wiped = lost_shard(kx, down, fail, gi, dom_hit)
        return s, Change(changed, wiped, changed & wiped, jnp.zeros_like(wiped), None)
    p = kx.p.rate
    if kx.listed:
        dl, dok, (wiped, new_rate, new_depth) = listed_rate(s.dl, s.dok, down, changed, (rs_end, fail, rejoin, gi, dk),
                                                            members, kx.shape, p.rm)
        s = s._replace(dl=dl, dok=dok)
    else:
        wiped, new_rate, new_depth = counted_rate(down, dk, gi, jnp.any(dom_hit) if kx.nd else None, kx.shape, p.rm)
    s = s._replace(rate=jnp.where(changed & ~wiped, new_rate, jnp.where(rs_end, p.rate0, s.rate)),
                   depth=jnp.where(changed & ~wiped, new_depth, jnp.where(rs_end, p.depth0, s.depth)))
    hit_max = changed & ~wiped & (new_depth >= p.restart_depth)
    return s, Change(changed, wiped, changed & wiped, hit_max & computing, hit_max)
