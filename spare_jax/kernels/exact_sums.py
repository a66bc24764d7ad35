r"""Exact, order-independent sums and histograms computed on the device
(docs/accelerators.md#the-driver-reduces-on-the-device).

JAX runs with x64 off, so a kernel's float32 results are summed exactly in integer *limbs*: 16-bit digits
held in uint32 words, with explicit carries.

Fixed point
-----------
A finite float32 ``x >= 0`` with bit pattern ``(e, f)`` (8-bit biased exponent, 23-bit fraction) is exactly
``m 2^s`` units of ``2^-149``, with ``m = f`` and ``s = 0`` for ``e = 0`` (subnormals and zero), and
``m = f + 2^23``, ``s = e - 1`` otherwise; so ``m < 2^24`` and ``0 <= s <= 253``. Its square is
``m^2 2^(2s)`` units of ``2^-298``; with ``m = a 2^12 + b`` (``a, b < 2^12``),
``m^2 = a^2 2^24 + (2ab) 2^12 + b^2`` is three terms below ``2^25`` each. Every value to add is therefore a
*term* ``v 2^k`` with ``v < 2^25``. With ``j = k >> 4`` and ``o = k & 15``, ``v 2^o < 2^40`` splits into three
16-bit pieces ``p0 + p1 2^16 + p2 2^32`` (``p2 < 2^8``) that go to limbs ``j, j+1, j+2``.

Overflow-freedom (up to 10^12 trials; ``G = GROUP = 2048``):

1. ``limb_sums``: the terms of one call are reduced in groups of ``G`` trials. A term feeds three
   consecutive limbs, one piece each (``< 2^16``), so with at most 3 terms per trial (the square) a limb
   receives at most 3 pieces per trial and one group adds ``< 3 G 2^16 = 3 2^27 < 2^31``. Each group's row is then *normalised* (below): every limb ``< 2^17``.
   Summing ``R`` normalised rows gives ``< R 2^17``, ``< 2^32`` for ``R < 2^15`` groups, i.e. up to
   ``2^26`` trials per call (a chunk per device is far smaller; checked at trace time).
2. ``normalise`` maps limbs ``l_i`` to ``(l_i mod 2^16) + floor(l_{i-1} / 2^16)`` (the top limb is not
   reduced), which keeps the represented integer ``sum_i l_i 2^(16 i)`` unchanged and, when every input limb
   is ``< 2^32``, leaves every limb but the top one ``< 2^16 + 2^16 = 2^17``.
3. ``merge`` adds two normalised vectors (``< 2^18`` per limb) and normalises; the devices' vectors are added
   on the host as the integers they hold (``host_sums.device_totals``).
4. The top limb: the represented integer ``S`` is the exact sum, and every lower limb is non-negative, so
   ``top <= S / 2^(16 (L-1))``. For uptimes, ``S < 10^12 2^(24+253) < 2^(40+277) = 2^317`` and
   ``L = 20`` (``16 (L-1) = 304``): ``top < 2^13``; for squares, ``S < 2^40 2^(48+506) = 2^594`` and ``L = 37``
   (``576``): ``top < 2^18``. Adding a normalised vector (``< 2^18``) to it stays far below ``2^32``, and no
   carry ever leaves the top limb.

So the host receives the exact integer, whatever the order of the trials, the chunking or the devices: the
result equals ``host_sums.exact_units`` of the same float32 values (tested bit for bit).

Histograms are counts in int32 per dispatched block (a block has fewer than ``2^31`` trials); the host adds
blocks in Python integers.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

LIMB_BITS = 16
LIMB_MASK = (1 << LIMB_BITS) - 1
GROUP = 2048
X_LIMBS = 20  # uptimes: units 2^-149
X2_LIMBS = 37  # squared uptimes: units 2^-298
X_UNIT_SHIFT = 149
X2_UNIT_SHIFT = 298


def normalise(limbs):
    """Carry once: limb i keeps its low 16 bits plus the carry of limb i-1 (the top limb keeps all bits)."""
    lo = limbs & jnp.uint32(LIMB_MASK)
    lo = lo.at[..., -1].set(limbs[..., -1])
    hi = limbs >> jnp.uint32(LIMB_BITS)
    carry = jnp.concatenate([jnp.zeros_like(hi[..., :1]), hi[..., :-1]], axis=-1)
    return lo + carry


def merge(a, b):
    return normalise(a + b)


def f32_parts(x):
    """``(m uint32 < 2^24, s int32 in [0, 253], bad bool)``: ``x = m 2^s`` units of ``2^-149``; ``bad`` for
    a non-finite or negative non-zero value (its ``m`` is set to 0)."""
    bits = jax.lax.bitcast_convert_type(jnp.asarray(x, jnp.float32), jnp.uint32)
    e = (bits >> jnp.uint32(23)) & jnp.uint32(0xFF)
    f = bits & jnp.uint32(0x7FFFFF)
    sign = bits >> jnp.uint32(31)
    normal = e > 0
    m = jnp.where(normal, f | jnp.uint32(0x800000), f)
    s = jnp.where(normal, e.astype(jnp.int32) - 1, 0)
    bad = (e == 0xFF) | ((sign == 1) & (m != 0))
    return jnp.where(bad, jnp.uint32(0), m), s, bad


def _pieces(v, k):
    """Term ``v 2^k`` (``v < 2^25``) -> limb index ``j`` and pieces for limbs ``j, j+1, j+2``."""
    j = k >> 4
    o = (k & 15).astype(jnp.uint32)
    p0 = (v << o) & jnp.uint32(LIMB_MASK)
    p1 = (v >> (jnp.uint32(16) - o)) & jnp.uint32(LIMB_MASK)
    p2 = (v >> jnp.uint32(16)) >> (jnp.uint32(16) - o)
    return j, (p0, p1, p2)


def limb_sums(terms, n_limbs: int):
    """Exact sum of terms ``[(v uint32[C], k int32[C]), ...]`` (``v < 2^25``, at most 3 terms) as normalised
    limbs ``uint32[n_limbs]`` (see the module docstring for the bounds)."""
    if len(terms) > 3:
        raise ValueError("at most 3 terms per trial")
    c = terms[0][0].shape[0]
    if c >= 2**26:
        raise ValueError("at most 2^26 trials per limb_sums call")
    rows = -(-c // GROUP)
    pad = rows * GROUP - c
    lanes = jnp.arange(n_limbs + 2, dtype=jnp.int32)
    total = None
    for v, k in terms:
        j, pieces = _pieces(v, k)
        if pad:
            j = jnp.pad(j, (0, pad), constant_values=n_limbs + 2)
            pieces = [jnp.pad(p, (0, pad)) for p in pieces]
        onehot = j.reshape(rows, GROUP, 1) == lanes
        for shift, p in enumerate(pieces):
            part = jnp.where(onehot, p.reshape(rows, GROUP, 1), jnp.uint32(0)).sum(axis=1, dtype=jnp.uint32)
            # piece ``shift`` of limb j lands in limb j + shift
            part = jnp.concatenate([jnp.zeros((rows, shift), jnp.uint32), part[:, : n_limbs - shift]], axis=1)
            total = part if total is None else total + part
    return normalise(normalise(total).sum(axis=0, dtype=jnp.uint32))


def exact_sums_f32(x, valid):
    """``(limbs of sum x, limbs of sum x^2, count of bad values)`` over the ``valid`` entries of float32 ``x``
    (units ``2^-149`` and ``2^-298``)."""
    m, s, bad = f32_parts(x)
    m = jnp.where(valid, m, jnp.uint32(0))
    a, b = m >> jnp.uint32(12), m & jnp.uint32(0xFFF)
    sx = limb_sums([(m, s)], X_LIMBS)
    sx2 = limb_sums([(a * a, 2 * s + 24), (2 * a * b, 2 * s + 12), (b * b, 2 * s)], X2_LIMBS)
    return sx, sx2, (bad & valid).sum(dtype=jnp.int32)


def exact_product_sums(x, y, valid):
    """Limbs (units ``2^-298``) of the exact sum of ``x * y`` over the ``valid`` entries of float32 ``x, y``
    (``>= 0``): ``m_x m_y = a_x a_y 2^24 + (a_x b_y + b_x a_y) 2^12 + b_x b_y``, three terms below ``2^25``
    at shift ``s_x + s_y``, exactly as the squares (module docstring); and the count of bad values."""
    mx, sx, badx = f32_parts(x)
    my, sy, bady = f32_parts(y)
    mx = jnp.where(valid, mx, jnp.uint32(0))
    ax, bx = mx >> jnp.uint32(12), mx & jnp.uint32(0xFFF)
    ay, by = my >> jnp.uint32(12), my & jnp.uint32(0xFFF)
    s = sx + sy
    limbs = limb_sums([(ax * ay, s + 24), (ax * by + bx * ay, s + 12), (bx * by, s)], X2_LIMBS)
    return limbs, ((badx | bady) & valid).sum(dtype=jnp.int32)


def histogram(values, valid, length: int):
    """int32[length] counts of the ``valid`` integer ``values`` in ``0..length-1`` (others are not counted)."""
    idx = jnp.where(valid, values.astype(jnp.int32), length)
    return jnp.zeros(length + 1, jnp.int32).at[idx].add(1, mode="drop")[:length]


def limbs_to_int(limbs) -> int:
    """The exact integer held by a limb vector (host side)."""
    return sum(int(v) << (LIMB_BITS * i) for i, v in enumerate(np.asarray(limbs).tolist()))
