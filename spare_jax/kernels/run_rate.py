"""The work rate of a whole run's step (docs/runs.md#what-a-run-is): whether the groups up still hold every
shard (a wipe-out if not), the work rate ``1/d`` and the depth ``d``, per scheme. ``stacked`` (``spare``,
``none``) takes the least capacity of ``kernels.depth`` (the queue test on the down set, or, with repair, the
pairs of each run's sorted list of down groups, ``depth.least_capacity_from_downs``); ``rep`` its blocks;
``elastic`` the count of groups up. ``rm`` is (r, m, bisection steps) as numbers of the run: one compiled
kernel serves every r >= 2 and every m (``RunShape.redundancy`` keeps rep's r and r = 1)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .run_shape import RunShape
from .depth import (
    DOWN_LIST_PAD, capacity_block, down_list_insert, down_list_of, down_list_remove, least_capacity_from_downs,
    least_capacity_stacked)


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


def listed_rate(s, down, changed, event, members, shape: RunShape, rm):
    """``rate`` for the runs whose down set changed (``changed``), from each run's sorted down list, which this
    step's event updates in ``s`` (``dl``, ``dok``; ``dk``, the groups down, is this step's count): a restart's
    end empties it, a group's failure or rejoin inserts or removes one position, a domain event marks it
    incomplete (rebuilt from the down set in the first step where it fits again, as is a list that
    overflowed). Where a changed run's list is incomplete the depth comes from the down set, for every run
    of that step: the same numbers either way."""
    rs_end, fail, rejoin, gi, dk = event
    n, (r, m, _) = shape.groups, rm
    dl = jnp.where(rs_end[:, None], DOWN_LIST_PAD, s["dl"])
    dok = s["dok"] | rs_end
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
    s["dl"], s["dok"] = dl, dok
    return jax.lax.cond(
        jnp.all(dok | ~changed),
        lambda: rate_of_capacity(least_capacity_from_downs(dl, jnp.where(changed, dk, 0), n, r, m,
                                                            not shape.wide_capacity), m),
        lambda: rate(down, shape, rm))
