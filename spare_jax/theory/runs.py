r"""The longest circular run of failed groups: where the paper's r* ~ log2 N + 0.833 comes from."""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import binom

from ..model.placement import check_groups_redundancy
from .wipeout import log_binom, log_falling, log_coeff_power, survival_stacked


def no_run_given_k(n: int, r: int, ks: np.ndarray) -> np.ndarray:
    """``P(L < r | k failed)`` for the given k: the ``stacked`` survival ``P(T > k)`` of ``survival_stacked``
    (same formula, same ``log_coeff_power``), evaluated only at ``ks`` instead of every k. ``r > N`` allowed."""
    ks = np.asarray(ks, dtype=np.int64)
    out = np.where(ks < min(r, n + 1), 1.0, 0.0)  # k < r: no r-run; k = N >= r: every group failed
    if r >= n or r < 1:
        return out if r >= 1 else np.zeros(ks.shape)
    mid = (ks >= r) & (ks < n)
    if mid.any():
        km = ks[mid]
        logp = log_coeff_power(np.zeros(r), km, n - km) - log_binom(n - 1, n - km - 1)
        out[mid] = np.minimum(1.0, np.exp(logp))
    return out


def longest_circular_run(groups: int, p: float | None = None, failed: int | None = None,
                         tol: float = 1e-14) -> dict:
    r"""Exact distribution of ``L``, the longest run of cyclically consecutive failed groups on a ring of N,
    when every group has failed independently with probability ``p`` (``p=``) or when a uniform random
    subset of exactly ``k`` groups has failed (``failed=k``).

    Derivation. ``L >= r`` iff the failed set contains r cyclically consecutive groups, which for the
    ``stacked`` placement at redundancy r is exactly a wipe-out (the holders of shard j are groups
    j-r+1..j). So for a uniform k-subset

    .. math::  P(L < r \mid k) = P(T > k)\big|_{\text{stacked}, N, r}
               = \frac{[x^k](1 + x + \dots + x^{r-1})^{N-k}}{\binom{N-1}{N-k-1}}, \quad r \le k < N,

    (module docstring; ``P = 1`` for k < r, ``P = 0`` for k = N >= r), evaluated by the same
    saddle-point/Fourier routine as ``survival_stacked``. With i.i.d. Bernoulli(p) failures the number failed
    is ``K ~ Binomial(N, p)`` and, given K = k, the failed set is a uniform k-subset, so
    ``P(L < r) = sum_k Bin(k; N, p) P(L < r | k)`` (binomial terms below ``1e-20`` of the largest are dropped: total mass < ``N 1e-20``).
    Then ``P(L = j) = P(L < j + 1) - P(L < j)``, ``E[L] = sum_{r>=1} P(L >= r)`` and
    ``E[L^2] = sum_{r>=1} (2r - 1) P(L >= r)``.

    The sums are cut at the first ``r_hi`` where a union bound over the N possible start positions makes the
    rest negligible: ``P(L >= r) <= N p^r`` (Bernoulli) or ``N (k)_r / (N)_r`` (exactly k), so the omitted
    part of ``E[L^2]`` is at most ``sum_{r > r_hi} (2r-1) * bound_r < tol`` (and ``r_hi <= N``, where
    ``P(L > N) = 0``).

    Extreme-value view (why ``log2 N + 0.833`` is not E[L]). The ring holds about ``N p q`` runs of failed
    groups (q = 1 - p; a run starts at a failed group after a surviving one), each of length ``1 + G`` with
    ``P(G >= j) = p^j``. The mean maximum of n i.i.d. such G is ``log_{1/p} n + gamma / ln(1/p) - 1/2``
    (plus a periodic term of amplitude ~1e-6 at p = 1/2), whence
    ``E[L] ~ log_{1/p}(N q) + gamma / ln(1/p) - 1/2``, i.e. ``log2 N + gamma/ln 2 - 3/2 = log2 N - 0.667`` at
    p = 1/2. ``H_N / ln 2 ~ log2 N + 0.833`` is instead the mean maximum of N i.i.d. *continuous* Exp(ln 2)
    lengths, one per group: it counts N runs instead of N/2 (+1) and ignores that lengths are integers
    (+1/2), so it sits 1.5 above the exact value (1.48 at N = 600, tested).

    Returns a dict: ``cdf[j] = P(L <= j)`` and ``pmf[j] = P(L = j)`` for j = 0..r_hi, ``mean``, ``var``,
    ``std``, ``median`` (least j with ``P(L <= j) >= 1/2``), ``tail_bound`` (bound on the omitted mass).
    """
    n = check_groups_redundancy(groups, 1)[0]
    if (p is None) == (failed is None):
        raise ValueError("give exactly one of p (failure probability) and failed (number of failed groups)")
    if p is not None:
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not math.isfinite(p) or not 0 <= p <= 1:
            raise ValueError(f"p (failure probability) must be a number in [0, 1], got {p!r}")
        p = float(p)
        ks = np.arange(n + 1)
        with np.errstate(divide="ignore"):
            logw = binom.logpmf(ks, n, p)
        keep = logw > logw.max() + math.log(1e-20)  # dropped mass < N 1e-20
        ks, weights = ks[keep], np.exp(logw[keep])
        weights /= weights.sum()

        def log_bound(r):  # log N p^r
            return math.log(n) + r * math.log(p) if p > 0 else -math.inf
    else:
        if isinstance(failed, bool) or int(failed) != failed or not 0 <= int(failed) <= n:
            raise ValueError(f"failed (number of failed groups) must be an integer in [0, N={n}], got {failed!r}")
        k = int(failed)
        ks, weights = np.array([k]), np.array([1.0])

        def log_bound(r):  # log N (k)_r / (N)_r
            return (math.log(n) + float(log_falling(np.array([k]), r)[0])
                    - float(log_falling(np.array([n]), r)[0]))

    below = [0.0]  # below[r] = P(L < r), r = 0..r_hi
    tail = 0.0
    for r in range(1, n + 1):
        below.append(float(np.clip(math.fsum(weights * no_run_given_k(n, r, ks)), 0.0, 1.0)))
        if r == n:
            break
        # omitted part of E[L^2]: sum_{s > r} (2s - 1) b_s with b_s <= b_{r+1} rho^(s-r-1), rho = b_{r+2}/b_{r+1}
        # (the ratio of successive bounds is p, or (k-s)/(N-s), non-increasing in s)
        lb = log_bound(r + 1)
        if lb == -math.inf:
            tail = 0.0
            break
        rho = math.exp(min(0.0, log_bound(r + 2) - lb)) if r + 2 <= n else 0.0
        if rho < 1.0:
            # sum_{i>=0} (2(r+1+i) - 1) rho^i = (2r+1)/(1-rho) + 2 rho/(1-rho)^2
            tail = math.exp(lb) * ((2 * r + 1) / (1 - rho) + 2 * rho / (1 - rho) ** 2)
            if tail < tol:
                break
    if len(below) == n + 1:
        tail = 0.0  # every r = 1..N evaluated: nothing omitted (L <= N)
    # cdf[j] = P(L <= j) = below[j + 1], j = 0..r_hi - 1, and P(L <= r_hi) := 1 (the omitted mass, < tol)
    cdf = np.maximum.accumulate(np.append(np.array(below[1:]), 1.0))
    pmf = np.diff(np.concatenate([[0.0], cdf]))
    j = np.arange(cdf.size, dtype=np.float64)
    mean = math.fsum(j * pmf)
    var = max(0.0, math.fsum(j * j * pmf) - mean * mean)
    return {"groups": n, "p": p, "failed": failed, "cdf": cdf, "pmf": pmf, "mean": mean, "var": var,
            "std": math.sqrt(var), "median": int(np.searchsorted(cdf, 0.5)), "tail_bound": tail}


def harmonic_over_ln2(groups: int) -> float:
    """``H_N / ln 2`` (``H_N = 1 + 1/2 + ... + 1/N``): the paper's ``r* ~ log2 N + gamma/ln 2 = log2 N + 0.833``
    before its asymptotic expansion (``H_N = ln N + gamma + 1/(2N) - ...``)."""
    n = check_groups_redundancy(groups, 1)[0]
    return math.fsum(1.0 / np.arange(1, n + 1)) / math.log(2.0)
