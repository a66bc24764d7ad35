"""Helpers shared by the event kernels (``repair``, ``run``): the width of the blocks of their two-level
minimum, the first minimum of a row, one row of per-event random bits, the block minima of a run's clocks,
and work done only on the rows (runs) of a step that need it."""
import math

import jax
import jax.numpy as jnp

from ..model.prng import stream_key, threefry2x32


def block_width(n: int) -> int:
    """Leaves per block of the two-level minimum over N clocks: a power of 2 near sqrt(N), at least 8."""
    return max(8, 1 << max(0, math.ceil(0.5 * math.log2(max(n, 1)))))


def min_first(v):
    """Least value over the last axis and its first index (``argmin``'s tie rule) as two plain min
    reductions, which XLA vectorises on CPU (its variadic argmin reduction it does not)."""
    val = v.min(axis=-1)
    iota = jax.lax.broadcasted_iota(jnp.int32, v.shape, v.ndim - 1)
    return val, jnp.where(v == val[..., None], iota, v.shape[-1]).min(axis=-1)


def row_bits(words, trial_ids, streams, width: int):
    """``uint32[C, width]``: row c equals ``trial_bits(words, trial_ids[c:c+1], width, stream=streams[c])``
    (a per-row stream: each lane of the kernel is at its own event index)."""
    half = (int(width) + 1) // 2
    k0, k1 = stream_key(words, jnp.asarray(streams, jnp.uint32))
    pairs = jnp.arange(half, dtype=jnp.uint32)
    first, second = threefry2x32(k0[:, None], k1[:, None], jnp.asarray(trial_ids, jnp.uint32)[:, None],
                                 pairs[None, :])
    return jnp.concatenate([first, second], axis=1)[:, : int(width)]


def row_bits_at(words, trial_ids, streams, width: int, cols):
    """``row_bits(words, trial_ids, streams, width)`` at the columns ``cols`` (``int32[C, K]``, each below
    ``width``) only: O(K) per row instead of O(width), the same bits (column j < ceil(width/2) is the first
    word of counter j, a later one the second word of counter j - ceil(width/2))."""
    half = (int(width) + 1) // 2
    k0, k1 = stream_key(words, jnp.asarray(streams, jnp.uint32))
    cols = jnp.asarray(cols, jnp.int32)
    second = cols >= half
    pair = jnp.where(second, cols - half, cols).astype(jnp.uint32)
    a, b = threefry2x32(k0[:, None], k1[:, None], jnp.asarray(trial_ids, jnp.uint32)[:, None], pair)
    return jnp.where(second, b, a)


def all_block_mins(nxt, width: int):
    """The least time of every block of ``width`` group clocks (``nxt``: ``float32[C, N]``, padded with +inf to
    whole blocks) and its first position: ``(val, idx)`` of shape ``[C, blocks]``."""
    c, n = nxt.shape
    nb = -(-n // width)
    padded = jnp.concatenate([nxt, jnp.full((c, nb * width - n), jnp.inf, nxt.dtype)], axis=1)
    val, j = min_first(padded.reshape(c, nb, width))
    return val, j + width * jnp.arange(nb, dtype=jnp.int32)[None, :]


def block_min_at(nxt, pos, width: int):
    """The least time of the block holding position ``pos`` (``int32[C]``) and its first position."""
    n = nxt.shape[1]
    idx = (pos // width * width)[:, None] + jnp.arange(width, dtype=jnp.int32)[None, :]
    vals = jnp.where(idx < n, jnp.take_along_axis(nxt, jnp.minimum(idx, n - 1), axis=1), jnp.inf)
    val, j = min_first(vals)
    return val, pos // width * width + j


def on_rows(mask, fn, arrays, cap: int):
    """``fn(rows, sub, sub_mask)`` applied to the rows of ``arrays`` (each ``[C, ...]``) where ``mask``, ``cap``
    rows at a time: gathered (``rows`` the runs, ``sub`` their rows, ``sub_mask`` which of them are real:
    ``fn`` changes only those) and scattered back, in as many rounds as the runs that need it call for (none
    where none does). A restart touches every group of one run: done this way it costs O(cap N) per round
    instead of O(C N) per step, and ``fn`` is compiled once."""
    c = mask.shape[0]
    rank = jnp.cumsum(mask, dtype=jnp.int32) - 1

    def round_(i, arrays):
        rows = jnp.nonzero(mask & (rank // cap == i), size=cap, fill_value=c)[0]
        at = jnp.minimum(rows, c - 1)
        sub = fn(at, tuple(a[at] for a in arrays), mask[at] & (rows < c))
        return tuple(a.at[rows].set(x, mode="drop") for a, x in zip(arrays, sub))

    return jax.lax.fori_loop(0, -(-mask.sum(dtype=jnp.int32) // cap), round_, tuple(arrays))


def in_lanes(ids, lanes: int, initial, step, running, outputs):
    """Runs ``ids`` (``uint32[C]``) stepped ``lanes`` at a time, each lane taking the next run when its own ends,
    so that a long run does not hold the others up: ``initial(ids)`` is the state of runs at their start (a
    pytree of ``[C, ...]`` arrays), ``step(state, ids)`` one step of the lanes, ``running(state)`` which lanes
    still step and ``outputs(state)`` their results (a pytree of ``[lanes]`` arrays). Lanes are refilled in
    batches, when an eighth of them is idle (the last runs then step until every lane is idle); a finished
    lane keeps its state until the refill writes its results out. Returns ``outputs`` for every run (a pytree
    of ``[C]`` arrays). A run's steps depend on its own state only, so its results do not depend on the lanes."""
    c = ids.shape[0]
    init = initial(ids)
    thresh = max(1, lanes // 8)

    def rows(tree, at):
        return jax.tree.map(lambda a: a[at], tree)

    shapes = jax.eval_shape(outputs, rows(init, slice(0, lanes)))
    out0 = jax.tree.map(lambda a: jnp.zeros((c,) + a.shape[1:], a.dtype), shapes)

    def inner_cond(st):  # step until an eighth of the lanes is idle (or, once every run has a lane, all are)
        _, next_slot, s = st
        act = running(s)
        return act.any() & ((next_slot >= c) | (lanes - act.sum(dtype=jnp.int32) < thresh))

    def inner_body(st):
        slot, next_slot, s = st
        return slot, next_slot, step(s, ids[slot])

    def write(st, out):  # idle lanes write their results (again, for a lane that stays idle: the same)
        slot, _, s = st
        at = jnp.where(running(s), c, slot)  # out of range: dropped
        return jax.tree.map(lambda o, w: o.at[at].set(w, mode="drop"), out, outputs(s))

    def load(st, out):  # idle lanes write their results and take the next runs
        out = write(st, out)
        slot, next_slot, s = st
        idle = ~running(s)
        new_slot = next_slot + jnp.cumsum(idle, dtype=jnp.int32) - 1
        take = idle & (new_slot < c)
        fresh = rows(init, jnp.minimum(new_slot, c - 1))
        s = jax.tree.map(lambda a, f: jnp.where(take.reshape((-1,) + (1,) * (a.ndim - 1)), f, a), s, fresh)
        next_slot = jnp.minimum(next_slot + idle.sum(dtype=jnp.int32), c)
        return (jnp.where(take, new_slot, slot), next_slot, s), out

    def outer_cond(carry):
        (_, next_slot, s), _ = carry
        return running(s).any() | (next_slot < c)

    def outer_body(carry):
        st, out = carry
        return load(jax.lax.while_loop(inner_cond, inner_body, st), out)

    st0 = (jnp.arange(lanes, dtype=jnp.int32), jnp.int32(lanes), rows(init, slice(0, lanes)))
    st, out = jax.lax.while_loop(outer_cond, outer_body, (st0, out0))
    return write(st, out)  # the last runs taken may have ended at once (padding)
