"""Helpers shared by the event kernels (``repair``, ``run``): the width of the blocks of their two-level
minimum, the first minimum of a row, and one row of per-event random bits."""
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
