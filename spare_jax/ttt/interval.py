"""The 95% interval of a mean time-to-train from its runs, one method for every command (``ttt``, ``optimize``,
``plan``): the expanded percentile bootstrap.

A TTT is bounded below (never less than the work W plus its checkpoints) and, from few runs of a skewed law
(rare long waits for spares, a wipe-out now and then), far from normal: the symmetric t interval then leaves
the support (a low end below W, even below 0). The percentile bootstrap takes the 2.5% and 97.5% quantiles of
the mean over resamples of the runs; a resampled mean lies between the least and the largest run, so the
interval never leaves the support. Its quantiles are widened as Hesterberg's expanded percentile interval
does (tail probability Phi(-sqrt(n / (n - 1)) t_{0.975, n-1}) in place of 2.5%), which corrects most of the
plain percentile interval's narrowness at small n. On three skewed laws (a shifted lognormal, a point mass
with an exponential tail, a Pareto tail) its coverage at 5 runs was 69-81% against 69-82% for the t interval,
at 8 runs 78-84% against 76-82%, at 32 runs 84-90% against 83-89%, and it never left the support where the
t interval did in 18-90% of samples below 8 runs. Below ``MIN_RUNS`` runs no interval is given (None) and
``why`` says so.

The resamples are drawn from a generator of fixed seed, so an interval is a function of the runs alone.
Where only a histogram of the runs is kept (the whole-run driver's exact device sums), the resamples are
drawn over its bins (``values``: each bin's value, ``counts``: its runs): multinomial draws, cheap at any
count of runs.
"""

from __future__ import annotations

import math

import numpy as np

MIN_RUNS = 5  # fewer runs than this: no interval (the expanded bootstrap covers below 70% there)
RESAMPLES = 4000
METHOD = "expanded percentile bootstrap of the mean over the runs"


def expanded_tail(n: int) -> float:
    """The tail probability of each side of the expanded percentile interval from ``n`` runs."""
    from scipy.stats import norm, t

    return float(norm.cdf(-math.sqrt(n / (n - 1)) * t.ppf(0.975, n - 1)))


def ttt_interval(values, counts=None, floor: float | None = None, mean: float | None = None) -> dict:
    """``{"low", "high", "why"}``: the 95% interval of the mean of ``values`` (each run's TTT, or with
    ``counts`` each bin's value and its runs). ``low`` and ``high`` None with ``why`` saying why below
    ``MIN_RUNS`` runs or where a value is not finite (a run beyond the histogram); ``why`` None otherwise.
    ``mean``: the exact mean where the values are rounded (bin centres): the interval is shifted by the
    difference. ``floor``: the least TTT possible (W): the low end is never below it."""
    x = np.asarray(values, np.float64).ravel()
    c = np.ones(x.size, np.int64) if counts is None else np.asarray(counts, np.int64).ravel()
    keep = c > 0
    x, c = x[keep], c[keep]
    n = int(c.sum())
    if n < MIN_RUNS:
        return {"low": None, "high": None,
                "why": f"no 95% interval from {n} run{'s' if n != 1 else ''}: at least {MIN_RUNS} are needed"}
    if not np.isfinite(x).all():
        return {"low": None, "high": None, "why": "no 95% interval: some runs are beyond the recorded range"}
    rng = np.random.default_rng(0)
    if x.size == 1:
        means = np.full(RESAMPLES, x[0])
    else:
        means = rng.multinomial(n, c / n, size=RESAMPLES) @ x / n
    a = expanded_tail(n)
    lo, hi = (float(v) for v in np.quantile(means, [a, 1.0 - a]))
    if mean is not None:  # rounded values: the exact mean's interval, the same shape
        shift = float(mean) - float((x * c).sum() / n)
        lo, hi = lo + shift, hi + shift
    if floor is not None:
        lo, hi = max(lo, float(floor)), max(hi, float(floor))
    return {"low": lo, "high": hi, "why": None}
