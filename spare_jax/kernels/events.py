"""Helpers shared by the event kernels (``repair``, ``run``): the width of the blocks of their two-level
minimum, the first minimum of a row, one row of per-event random bits, the block minima of a run's clocks,
and work done only on the rows (runs) of a step that need it."""
import math

import jax
import jax.numpy as jnp

from ..model.failures import stream_key, threefry2x32


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
