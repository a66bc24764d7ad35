"""Exact, order-independent sums on the host (docs/model.md#kernels-and-random-numbers): ``ExactSum`` (any
float64, as an integer number of units), ``exact_units``, ``exact_mean_var`` (mean and variance without
cancellation) and ``device_totals`` (the Python integers of a block's per-device statistics)."""

from __future__ import annotations

import numpy as np


class ExactSum:
    """Exact, order-independent sum of finite float64 values, of any magnitude (no overflow, no rounding).

    Every float64 is ``m 2^(e-53)`` with an integer ``|m| < 2^53`` and ``e >= -1073`` (``np.frexp``), so it is an
    integer number of units ``2^-1126``. Values are grouped by exponent; within a group the mantissas are
    split into 27-bit halves and summed in int64 (exact for up to 2^36 values per call), and the groups are
    shifted into one Python integer ``total`` (units ``2^-1126``): the exact sum, whatever the order, the chunk
    size or the magnitudes (10^-300 .. 10^308). A non-finite value (a float32 overflow in a kernel, say) is
    refused rather than summed. ``value`` is the correctly rounded float; ``mean_var`` gives the sample mean
    and variance from exact sums of x and x^2 without cancellation.
    """

    SHIFT = 1126  # units of 2^-SHIFT; frexp exponents are >= -1073, mantissas carry 53 bits

    def __init__(self):
        self.total = 0  # python int: the exact sum in units of 2^-SHIFT

    def add(self, values) -> None:
        self.total += exact_units(values)

    @property
    def value(self) -> float:
        return self.total / (1 << self.SHIFT)

    def fraction(self):
        from fractions import Fraction

        return Fraction(self.total, 1 << self.SHIFT)


def exact_units(values) -> int:
    """The exact sum of ``values`` (float64) as an integer number of ``2^-1126`` units (see ``ExactSum``)."""
    v = np.asarray(values, dtype=np.float64).ravel()
    if v.size == 0:
        return 0
    if not np.all(np.isfinite(v)):
        raise ValueError("a non-finite value reached an accumulation (a float32 overflow in the kernel: "
                         "the parameters are outside the range the model handles)")
    mant, exp = np.frexp(v)
    m = (mant * 2.0 ** 53).astype(np.int64)  # exact: |m| < 2^53
    hi, lo = m >> 27, m & ((1 << 27) - 1)  # m = hi 2^27 + lo, both far from int64 overflow when summed
    order = np.argsort(exp, kind="stable")
    exp_sorted = exp[order]
    starts = np.flatnonzero(np.r_[True, exp_sorted[1:] != exp_sorted[:-1]])
    sum_hi = np.add.reduceat(hi[order], starts)
    sum_lo = np.add.reduceat(lo[order], starts)
    total = 0
    for e, h, l in zip(exp_sorted[starts].tolist(), sum_hi.tolist(), sum_lo.tolist()):
        total += ((h << 27) + l) << (e - 53 + ExactSum.SHIFT)
    return total


def exact_mean_var(sum_x: ExactSum, sum_x2: ExactSum, n: int) -> tuple[float, float]:
    """Sample mean and (n-1)-variance from exact sums of x and x^2: ``(n S2 - S1^2) / (n (n-1))`` in exact
    rationals, so a small variance next to a large mean is not lost to cancellation."""
    from fractions import Fraction

    if n < 1:
        return float("nan"), float("nan")
    s1, s2 = sum_x.fraction(), sum_x2.fraction()
    mean = s1 / n
    var = (n * s2 - s1 * s1) / (n * (n - 1)) if n > 1 else Fraction(0)
    return float(mean), float(max(var, Fraction(0)))



def device_totals(stats: dict, limb_keys) -> dict:
    """The sums over this process's devices of a block's per-device statistics (``make_block_fn``): each limb
    vector as the Python integer it holds, each count as a list of Python integers."""
    from .exact_sums import limbs_to_int

    out = {}
    for k, v in stats.items():
        rows = [np.asarray(shard.data) for shard in v.addressable_shards]
        if k in limb_keys:
            out[k] = sum(limbs_to_int(row[i]) for row in rows for i in range(row.shape[0]))
        else:
            total = sum(row.astype(np.int64).sum(axis=0) for row in rows)
            out[k] = [int(x) for x in np.atleast_1d(total).tolist()]
    return out

