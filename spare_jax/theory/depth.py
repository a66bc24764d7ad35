r"""Depth and overhead closed forms (docs/model.md#closed-forms): the queue DP for ``P(d* <= d | k failures)``,
Omega, and the Bernoulli (time-integrated) profiles used by the time-to-train model."""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import gammaln
from scipy.stats import binom

from ..model.placement import check_groups_redundancy
from .wipeout import (
    log_binom, log_coeff_power, survival_block, survival_exact, survival_poisson, survival_stacked)


def depth_cdf_stacked_one(n: int, r: int, d: int, m: int = 1) -> np.ndarray:
    r"""``P(d* <= d, no wipe-out | k failures)``, k = 0..N, for ``stacked``: a DP on the queue of
    ``spare_jax.kernels.depth``. With ``m`` micro-batches per shard, ``d`` is a capacity c and the queue
    ``q' = q + m`` (failed) or ``max(0, q + m - c)`` (survivor) lives in ``0 .. (r-1) m``; the argument
    below is unchanged (an orbit that never clips has ``c * alive = N m``).

    Derivation. Run the queue's Lindley recursion ``q' = q + 1`` (failed group) or ``max(0, q + 1 - d)``
    (surviving group) around the ring; depth d is feasible iff the *periodic* orbit of this recursion
    exists and stays in ``0..r-1`` (then ``d * alive >= N`` automatically). A feasible orbit visits
    state 0 (a periodic orbit that never hits 0 is linear, so ``d * alive = N``, and then the least
    fixed point, which does hit 0, is also a valid orbit; it is the only orbit that hits 0). Let ``a`` be
    the first group (in index order) after which the orbit is at 0. Reading the ring from group ``a + 1``
    gives a path of N steps from state 0 back to state 0 whose states after groups ``0 .. a-1`` (the
    last ``a`` steps before the final one) are non-zero. Conversely every such (path, a) gives one
    configuration. Summing over a is a DP with a phase flag: *free* steps, then (from a chosen step on)
    *tail* steps whose states must be >= 1, then a final step into state 0.

    Counting configurations with j failures among the first t groups is normalised by ``binom(t, j)``:
    ``p_t = c_t / binom(t, j)`` obeys ``p_t(j) = p_{t-1}(j) (t-j)/t`` (survivor) ``+ p_{t-1}(j-1) j/t``
    (failure), a convex combination, so all terms are positive and bounded (no overflow or cancellation).
    The result at t = N is the fraction of k-subsets that are feasible at depth d. Cost O(N^2 r).
    """
    states = (r - 1) * m + 1
    p = np.zeros((2, states, n + 1))
    p[0, 0, 0] = 1.0
    j = np.arange(n + 1, dtype=np.float64)
    out = None
    for t in range(1, n + 1):
        c = t + 1  # after t groups at most t failures: only columns j <= t are non-zero
        jj = j[:c]
        w_alive = (t - jj) / t
        w_fail = jj[1:] / t
        cur = p[:, :, :c]
        step = np.zeros_like(cur)
        # survivor: q -> max(0, q + m - d)
        drop = d - m  # >= 0: capacities are at least m
        step[:, 0, :] += cur[:, : min(drop + 1, states), :].sum(axis=1) * w_alive
        if states > drop + 1:
            step[:, 1: states - drop, :] += cur[:, drop + 1:, :] * w_alive
        # failure: q -> q + m (must stay <= (r - 1) m), j -> j + 1
        step[:, m:, 1:] += cur[:, :-m, :-1] * w_fail
        if t == n:
            out = step[0, 0, :] + step[1, 0, :]
            break
        p[0, :, :c] = step[0]
        p[1, :, :c] = step[0] + step[1]
        p[1, 0, :c] = 0.0
    return np.minimum(out, 1.0)


def level_depths(redundancy: int, microbatches: int = 1) -> np.ndarray:
    """Depths of the levels 1..L of ``depth_cdf`` (``overhead.level_depths``): ``(m + i - 1) / m``."""
    m = int(microbatches)
    return (m + np.arange((redundancy - 1) * m + 1)) / m


def depth_cdf(placement: str, groups: int, redundancy: int, microbatches: int = 1) -> np.ndarray:
    """See ``_depth_cdf`` (cached: the time-to-train sweeps ask for the same table once per r and scheme)."""
    return _depth_cdf(placement, *check_groups_redundancy(groups, redundancy), int(microbatches)).copy()


@functools.lru_cache(maxsize=64)
def _depth_cdf(placement: str, groups: int, redundancy: int, microbatches: int = 1) -> np.ndarray:
    r"""``F[k, d] = P(d*(S_k) <= d and no wipe-out)`` for k = 0..N, d = 0..r (``F[:, 0] = 0``,
    ``F[:, r] = P(T > k)``).

    With ``microbatches`` m > 1 the columns are the *levels* 0..L, ``L = (r - 1) m + 1``: level i is the
    capacity ``c = m + i - 1`` micro-batches per group (depth ``c / m``, ``level_depths``), and the queue DP
    runs in micro-batches; ``block`` needs ``ceil(r m / s) <= c`` survivors s per block.

    ``stacked``: the queue DP (``depth_cdf_stacked_one``). ``block``: a block with s survivors needs
    depth ``ceil(r/s)``, so ``d* <= d`` iff every block has at most ``f_d = r - ceil(r/d)`` failures:

    .. math:: F[k, d] = [x^k] \Big(\sum_{f=0}^{f_d} \binom{r}{f} x^f\Big)^{N/r} \Big/ \binom{N}{k}.
    """
    n, r = check_groups_redundancy(groups, redundancy)
    m = int(microbatches)
    top = (r - 1) * m + 1  # the last level (capacity r m): no wipe-out
    cdf = np.zeros((n + 1, top + 1))
    cdf[0, 1:] = 1.0  # no failure: depth 1
    if placement == "stacked":
        cdf[:, top] = survival_stacked(n, r)
        for level in range(2, top):
            cdf[:, level] = depth_cdf_stacked_one(n, r, m + level - 1, m)
    elif placement == "block":
        if n % r:
            raise ValueError(f"placement 'block' needs redundancy (r) to divide groups (N): r={r}, N={n}")
        cdf[:, top] = survival_block(n, r)
        ks = np.arange(n + 1)
        for level in range(2, top):
            fmax = r - (-(-(r * m) // (m + level - 1)))
            log_a = gammaln(r + 1) - gammaln(np.arange(fmax + 1) + 1) - gammaln(r - np.arange(fmax + 1) + 1)
            cdf[:, level] = np.minimum(1.0, np.exp(log_coeff_power(log_a, ks, n // r) - log_binom(n, ks)))
    else:
        raise ValueError(f"no depth theory for placement {placement!r} (use the Monte Carlo)")
    cdf[0, 1:] = 1.0
    return np.maximum.accumulate(cdf, axis=1)  # guard rounding: monotone in d


def overhead_theory(placement: str, groups: int, redundancy: int, cdf: np.ndarray | None = None,
                    microbatches: int = 1) -> dict:
    r"""Exponential failures: ``Omega = E[U] / E[W]`` and the time-averaged depth, from ``depth_cdf``.

    .. math::  E[U] = \sum_k \frac{P(T>k)}{(N-k)\lambda}, \quad
               E[W] = \sum_k \frac{1}{(N-k)\lambda} \sum_{d=1}^{r} \frac{F[k,d] - F[k,d-1]}{d},

    because the sojourn with k groups down (mean ``1/((N-k) lambda)``, independent of which groups failed)
    runs at depth d with probability ``F[k,d] - F[k,d-1]``. ``lambda`` cancels in the ratio. With
    ``microbatches`` the sum runs over the levels of ``depth_cdf`` at their depths ``c / m``.
    """
    n, r = check_groups_redundancy(groups, redundancy)
    if cdf is None:
        cdf = depth_cdf(placement, n, r, microbatches)
    pmf = np.diff(cdf, axis=1)  # [k, d-1] = P(depth = d, no wipe-out)
    sojourn = np.zeros(n + 1)
    sojourn[:n] = 1.0 / (n - np.arange(n))
    depth = level_depths(r, microbatches)
    uptime = math.fsum(sojourn * cdf[:, -1])
    work = math.fsum(sojourn * (pmf / depth).sum(axis=1))
    depth_time = math.fsum(sojourn * (pmf * depth).sum(axis=1))
    return {"overhead": uptime / work, "time_avg_depth": depth_time / uptime, "uptime_units": uptime,
            "work_units": work}


def depth_cdf_bernoulli(placement: str, groups: int, redundancy: int, p, survival_only: bool = False,
                        microbatches: int = 1) -> np.ndarray:
    r"""``G[i, d] = P(d* <= d and no wipe-out)`` when each group has failed independently with probability
    ``p[i]`` (d = 0..r; ``G[:, r]`` is the probability of no wipe-out; with ``microbatches`` the columns are
    the levels of ``depth_cdf``).

    With exponential (or any i.i.d.) failure times this is the state of an epoch at time t, with
    ``p = P(t_g <= t)``; it equals ``sum_k Binomial(N, p)_k F[k, d]`` (tested against ``depth_cdf``) but
    costs O(r^3 log N) per (p, d) instead of O(N^2 r), so it serves any N.

    ``stacked``: the queue DP of ``depth_cdf_stacked_one`` with Bernoulli weights is time-homogeneous, so
    the N - 1 free/tail steps are a matrix power ``A^{N-1}`` (repeated squaring of a 2r x 2r non-negative
    matrix: no cancellation) followed by the final step into state 0 (``survival_only``: d = r alone):
    ``G = e_{(free,0)}^T A^{N-1} b`` with ``b_{(phase,q)} = P(q -> 0)``. With m micro-batches the queue has
    ``(r-1) m + 1`` states (matrices of twice that size: O(r^3 m^3 log N) per (p, level)).
    ``block``: every block must keep at least ``ceil(r/d)`` survivors (``ceil(r m / c)``):
    ``G = P(Binomial(r, p) <= r - ceil(r/d))^{N/r}``.
    """
    n, r = check_groups_redundancy(groups, redundancy)
    m = int(microbatches)
    top = (r - 1) * m + 1
    p = np.atleast_1d(np.asarray(p, dtype=np.float64))
    out = np.zeros((p.size, top + 1))
    out[:, 1:] = ((1.0 - p) ** n)[:, None]  # no failure: depth 1
    if r == 1:
        return out
    if placement == "block":
        if n % r:
            raise ValueError(f"placement 'block' needs redundancy (r) to divide groups (N): r={r}, N={n}")
        for level in range(2, top + 1):
            fmax = r - (-(-(r * m) // (m + level - 1)))
            with np.errstate(divide="ignore"):
                out[:, level] = np.exp((n // r) * np.log(np.clip(binom.cdf(fmax, r, p), 0.0, 1.0)))
        return np.maximum.accumulate(out, axis=1)
    if placement != "stacked":
        raise ValueError(f"no depth theory for placement {placement!r} (use the Monte Carlo)")
    levels = np.arange(top, top + 1) if survival_only else np.arange(2, top + 1)
    states = (r - 1) * m + 1
    size = 2 * states
    # one step: from q, survivor (1-p) -> max(0, q + m - c), failure (p) -> q + m (dropped beyond (r-1) m)
    a = np.zeros((p.size, levels.size, size, size))
    b = np.zeros((p.size, levels.size, size))
    for i, level in enumerate(levels):
        c = m + level - 1
        for q in range(states):
            for q2, w in ((max(0, q + m - c), 1.0 - p), (q + m, p)):
                if q2 >= states:
                    continue
                a[:, i, q, q2] += w  # free -> free
                if q2 >= 1:
                    a[:, i, q, states + q2] += w  # free -> tail
                    a[:, i, states + q, states + q2] += w  # tail -> tail
                if q2 == 0:
                    b[:, i, q] += w
                    b[:, i, states + q] += w
    vec = np.zeros((p.size, levels.size, size))
    vec[:, :, 0] = 1.0  # (free, 0)
    power, e = a, n - 1
    while e:
        if e & 1:
            vec = np.einsum("pdi,pdij->pdj", vec, power)
        e >>= 1
        if e:
            power = power @ power
    out[:, levels[0]:] = np.einsum("pdi,pdi->pd", vec, b)
    return np.maximum.accumulate(np.minimum(out, 1.0), axis=1)


EXACT_DP_MAX_N = 2000  # up to here the k-resolved queue DP is the faster exact route


def binomial_mixture(cdf_k: np.ndarray, n: int, p: np.ndarray) -> np.ndarray:
    """``sum_k Binomial(N, p)_k cdf_k[k]`` per p, over a window of +-10 standard deviations (+-20 at least)
    around the mean, which holds all but < 1e-20 of the mass (a sparse matrix product; log-space pmf)."""
    from scipy.sparse import csr_matrix
    from scipy.special import xlog1py, xlogy

    half = int(min(n + 1, math.ceil(10 * math.sqrt(n * 0.25)) + 20))
    width = min(n + 1, 2 * half + 1)
    lo = np.clip(np.floor(n * p).astype(np.int64) - half, 0, n + 1 - width)
    ks = lo[:, None] + np.arange(width)[None, :]
    log_choose = log_binom(n, np.arange(n + 1))
    with np.errstate(invalid="ignore"):
        pmf = np.exp(log_choose[ks] + xlogy(ks, p[:, None]) + xlog1py(n - ks, -p[:, None]))
    pmf = np.nan_to_num(pmf)
    rows = np.repeat(np.arange(p.size), width)
    mix = csr_matrix((pmf.ravel(), (rows, ks.ravel())), shape=(p.size, n + 1))
    return np.asarray(mix @ cdf_k)


def depth_profile_in_time(placement: str, groups: int, redundancy: int, points: int | None = None,
                          depth: bool = True, microbatches: int = 1):
    r"""``(x, G)``: ``G[i, d] = P(d*(t) <= d, no wipe-out by t)`` at ``x_i = lambda t_i`` for i.i.d.
    exponential failures (each group failed with ``p = 1 - e^{-x}``), on a grid reaching ``G[:, r] < 1e-13``.

    Exact at any N: the k-resolved queue DP mixed over ``k ~ Binomial(N, p)`` for N <= 2000, the Bernoulli
    transfer matrices (``depth_cdf_bernoulli``) beyond. ``depth=False``: only ``G[:, r]`` (the survival).
    ``microbatches`` m > 1: the columns are the levels of ``depth_cdf`` (the survival is the last).
    """
    n, r = check_groups_redundancy(groups, redundancy)
    points = points or (4000 if n <= 5000 else 1500)
    approx = survival_poisson(placement, n, r)
    kmax = min(n - 0.5, float(np.max(np.nonzero(approx > 1e-16)[0], initial=0)) + 1.0)
    x_max = -math.log1p(-kmax / n) * 1.2 + 1.0 / n
    small = n <= EXACT_DP_MAX_N
    surv_k = survival_exact(placement, n, r)[:, None] if small else None
    for _ in range(30):  # a coarse grid must reach S < 1e-13 and not overshoot it (resolution)
        x = np.linspace(0.0, x_max, 400)
        p = -np.expm1(-x)
        if small:  # the same survival from the k-resolved exact form (cheaper at small N)
            surv = binomial_mixture(surv_k, n, p)[:, 0]
        else:
            surv = depth_cdf_bernoulli(placement, n, r, p, survival_only=True)[:, -1]
        if surv[-1] >= 1e-13:
            x_max *= 1.5
            continue
        x_need = x[int(np.max(np.nonzero(surv >= 1e-13)[0], initial=1))]
        if x_need < 0.5 * x_max:
            x_max = 1.2 * x_need
            continue
        break
    x = np.linspace(0.0, x_max, points)  # then the fine grid
    p = -np.expm1(-x)
    if small:
        surv = binomial_mixture(surv_k, n, p)[:, 0]
    elif not depth or r == 1:
        surv = depth_cdf_bernoulli(placement, n, r, p, survival_only=True)[:, -1]
    if not depth or r == 1:
        cdf = np.zeros((points, r + 1))
        cdf[:, r] = surv
        if r == 1:
            cdf[:, 1] = surv
    elif small:
        cdf = binomial_mixture(depth_cdf(placement, n, r, microbatches), n, p)
    else:
        cdf = depth_cdf_bernoulli(placement, n, r, p, microbatches=microbatches)
    return x, cdf


def overhead_theory_any_n(placement: str, groups: int, redundancy: int, microbatches: int = 1) -> dict:
    r"""Omega and the time-averaged depth for exponential failures at any N, by integrating over time:
    ``E[U] = int P(U > t) dt``, ``E[W] = int E[1/d(t); U > t] dt`` (trapezoid on ``depth_profile_in_time``).
    Equals ``overhead_theory`` (the sum over sojourns) up to the quadrature error (tested)."""
    n, r = check_groups_redundancy(groups, redundancy)
    x, cdf = depth_profile_in_time(placement, n, r, microbatches=microbatches)
    pmf = np.diff(cdf, axis=1)
    d = level_depths(r, microbatches)
    trap = lambda y: float(np.sum(0.5 * (y[1:] + y[:-1]) * np.diff(x)))  # noqa: E731
    uptime, work, depth_time = trap(cdf[:, -1]), trap((pmf / d).sum(axis=1)), trap((pmf * d).sum(axis=1))
    return {"overhead": uptime / work, "time_avg_depth": depth_time / uptime, "uptime_units": uptime,
            "work_units": work}
