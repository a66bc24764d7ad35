r"""Closed forms for the wipe-out (docs/model.md#closed-forms).

Notation: N groups, redundancy r, failure order a uniform random permutation (i.i.d. continuous failure
times), ``T`` the number of failed groups at the first shard loss (fatal failure included).

Reduction to subsets
--------------------
The first k failures form a uniformly random k-subset S of the groups, and the failure sets are nested, so

.. math::  P(T > k) = \frac{\#\{S : |S| = k,\ S \text{ wipes out no shard}\}}{\binom{N}{k}},
           \qquad E[T] = \sum_{k \ge 0} P(T > k), \qquad E[T^2] = \sum_{k \ge 0} (2k+1) P(T > k).

``stacked``: a k-subset wipes out a shard iff it contains r cyclically consecutive groups. Cut the ring at
the m = N - k surviving groups: the failed groups form m gaps ``x_1..x_m >= 0`` with ``sum x_i = k``. Pairs
(subset, marked survivor) correspond one-to-one to (composition of k into m parts, position of the marked
survivor), so ``m * A = N * c`` with ``c(k, m) = [x^k] (1 + x + ... + x^{r-1})^m`` the number of
compositions with every part ``< r``. Since ``binom(N, k) = (N/m) binom(N-1, m-1)``,

.. math::  P(T > k) = \frac{[x^k]\,(1 + x + \dots + x^{r-1})^{N-k}}{\binom{N-1}{N-k-1}}, \qquad 0 \le k < N,

i.e. the probability that a uniform random composition of k into N-k parts has all parts below r
(the "circular binary strings with no r-run of ones" count).

``block``: B = N/r blocks of r groups, a wipe-out iff a block is entirely failed:

.. math::  P(T > k) = \frac{[x^k]\,\big((1+x)^r - x^r\big)^{B}}{\binom{N}{k}}.

Numerical method (no cancellation)
----------------------------------
Both numerators are ``[x^k] A(x)^m`` for a polynomial A with non-negative coefficients ``a_0..a_D``.
Inclusion-exclusion gives alternating sums that cancel catastrophically. Instead we use the exact saddle-point
identity (exponential tilting): for any rho > 0 let ``G_1..G_m`` be i.i.d. with ``P(G = j) = a_j rho^j / A(rho)``
and ``S = sum G_i``; then

.. math::  [x^k] A(x)^m = A(\rho)^m \rho^{-k} P(S = k),

with rho chosen so that ``E[S] = k`` (the saddle point; a 1-D monotone equation solved by bisection). Then
``P(S = k)`` is the central value of a log-concave lattice distribution, computed by the M-point discrete
Fourier inversion

.. math::  P(S=k) \approx \frac{1}{M} \sum_{j=0}^{M-1} \varphi(2\pi j/M)^m e^{-2\pi i jk/M},
           \quad \varphi = \text{characteristic function of } G,

which is *exact* up to aliasing ``sum_{l != 0} P(S = k + lM)``. M is chosen by Bennett's inequality
(|G - EG| <= D, Var S = m v) so that the aliased mass is below ``1e-22 / (e (mD+1))``, a bound on
``1e-22 P(S=k)`` (the pmf of a log-concave lattice law at its mean is at least ``1/(e (mD+1))``); M never
exceeds ``mD + 1``, where the inversion has no aliasing at all. Every term is positive or a well-conditioned
Fourier sum, so the relative error is ~1e-12 for N up to 60,000 and beyond (log-space throughout). The
reflection ``[x^k] A^m = [x^{mD-k}] A_rev^m`` keeps the tilt moderate.

Asymptotic (Poisson clumping)
-----------------------------
``P(T > k) ~ exp(-mu_k)`` with ``mu_k`` the expected number of wipe-out "clumps" after k failures:
``stacked``: runs of >= r failed groups, counted by their start (a survivor followed by r failures),
``mu_k = N (N-k) (k)_r / (N)_{r+1}``; ``block``: ``mu_k = B (k)_r / (N)_r``; ``random``: lost shards,
``mu_k = N (k)_r / (N)_r`` (treating shards as independent; exact theory for ``random`` is not available).
``(n)_r`` is the falling factorial. The error of the resulting ``E[T]`` is measured in
``experiments/wipeout_validation.py``.

Reference: SPARe, arXiv 2603.00357 (§ on endurable failures); the composition/ring counting is classical
(e.g. Feller, *An Introduction to Probability Theory*, Vol. I, ch. XIII on runs).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.fft
from scipy.special import gammaln
from scipy.stats import binom

from ..model.placement import check_groups_redundancy

_EPS_ALIAS = 1e-22


def log_falling(n, r):
    """log (n)_r = log n (n-1) ... (n-r+1); -inf where n < r."""
    n = np.asarray(n, dtype=np.float64)
    out = np.full(n.shape, -np.inf)
    ok = n >= r
    out[ok] = gammaln(n[ok] + 1) - gammaln(n[ok] - r + 1)
    return out


def log_binom(n, k):
    n = np.asarray(n, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    return gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)


def _tilt(log_a: np.ndarray, t: np.ndarray):
    """Tilted pmf p[..., j] proportional to a_j e^{j t}; returns (p, log A(e^t), mean, var)."""
    j = np.arange(log_a.size, dtype=np.float64)
    z = log_a[None, :] + t[:, None] * j[None, :]
    zmax = z.max(axis=1)
    w = np.exp(z - zmax[:, None])
    total = w.sum(axis=1)
    p = w / total[:, None]
    mean = p @ j
    var = np.maximum(p @ (j * j) - mean * mean, 0.0)
    return p, zmax + np.log(total), mean, var


def _saddle(log_a: np.ndarray, target: np.ndarray, bisect: int = 24, newton: int = 6) -> np.ndarray:
    """t with E_t[G] = target: bisection on [-80, 80] (E_t[G] increases with t), then Newton steps
    (d E_t[G] / dt = Var_t[G]) kept inside the bracket."""
    lo = np.full(target.shape, -80.0)
    hi = np.full(target.shape, 80.0)
    for _ in range(bisect):
        mid = 0.5 * (lo + hi)
        _, _, mean, _ = _tilt(log_a, mid)
        up = mean < target
        lo = np.where(up, mid, lo)
        hi = np.where(up, hi, mid)
    t = 0.5 * (lo + hi)
    for _ in range(newton):
        _, _, mean, var = _tilt(log_a, t)
        step = (target - mean) / np.maximum(var, 1e-300)
        t = np.clip(t + step, lo, hi)
    return t


def _bennett_points(var_sum: np.ndarray, m: np.ndarray, d: int) -> np.ndarray:
    """Smallest M (power-of-two friendly int) with Bennett tail bound below the aliasing budget."""
    full = m * d + 1
    budget = np.log(_EPS_ALIAS / (math.e * full.astype(np.float64)))  # log of allowed tail mass
    v = np.maximum(var_sum, 1e-300)
    b = float(d)

    def log_tail(x):  # Bennett: P(S - ES >= x) <= exp(-(v/b^2) h(bx/v))
        u = b * x / v
        return -(v / (b * b)) * ((1 + u) * np.log1p(u) - u)

    lo = np.zeros_like(v)
    hi = full.astype(np.float64)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        ok = log_tail(mid) + math.log(3.0) <= budget
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid)
    points = np.ceil(hi).astype(np.int64) + 1
    return np.minimum(np.maximum(points, 16), full)


def log_coeff_power(log_a, k, m, batch_elems: int = 1 << 21) -> np.ndarray:
    r"""``log [x^k] A(x)^m`` for ``A(x) = sum_j exp(log_a[j]) x^j`` (non-negative coefficients), elementwise.

    Exact saddle-point / Fourier inversion with aliasing below 1e-22 relative (see module docstring).
    ``k``, ``m`` are integer arrays (broadcast together). Returns ``-inf`` where the coefficient is 0.
    """
    log_a = np.asarray(log_a, dtype=np.float64)
    if log_a.ndim != 1 or log_a.size < 1 or not np.isfinite(log_a[0]) or not np.isfinite(log_a[-1]):
        raise ValueError("log_a must be 1-D with finite first and last coefficients")
    k, m = np.broadcast_arrays(np.asarray(k, dtype=np.int64), np.asarray(m, dtype=np.int64))
    shape = k.shape
    k = k.ravel()
    m = m.ravel()
    d = log_a.size - 1
    out = np.full(k.shape, -np.inf)
    inside = (k >= 0) & (m >= 0) & (k <= m * d)
    edge_lo = inside & (k == 0)
    edge_hi = inside & (k == m * d) & ~edge_lo
    out[edge_lo] = m[edge_lo] * log_a[0]
    out[edge_hi] = m[edge_hi] * log_a[-1]
    todo = np.nonzero(inside & ~edge_lo & ~edge_hi)[0]
    if todo.size == 0:
        return out.reshape(shape)
    for reflect in (False, True):
        sel = todo[(2 * k[todo] > m[todo] * d) == reflect]
        if sel.size == 0:
            continue
        la = log_a[::-1] if reflect else log_a
        kk = m[sel] * d - k[sel] if reflect else k[sel]
        mm = m[sel]
        t = _saddle(la, kk / mm)
        p, log_norm, _, var = _tilt(la, t)
        points = _bennett_points(mm * var, mm, d)
        order = np.argsort(points)
        i = 0
        while i < order.size:
            # grow the batch while memory allows; use the batch's largest M for all of it
            j = i + 1
            while j < order.size and (j - i + 1) * int(points[order[j]]) <= batch_elems:
                j += 1
            idx = order[i:j]
            mmax = int(points[idx].max())
            pp = p[idx]
            if pp.shape[1] > mmax:  # fold the pmf modulo M (exact for the M-point DFT)
                pad = (-pp.shape[1]) % mmax
                pp = np.pad(pp, ((0, 0), (0, pad))).reshape(len(idx), -1, mmax).sum(axis=1)
            # conj(phi(theta_j)) for j = 0..M/2; the other half are complex conjugates (real pmf), whose
            # terms are the conjugates of these, so each j in 1..ceil(M/2)-1 counts twice in the real part.
            spec = scipy.fft.rfft(pp, n=mmax, axis=1, workers=-1)
            weight = np.full(spec.shape[1], 2.0)
            weight[0] = 1.0
            if mmax % 2 == 0:
                weight[-1] = 1.0
            # |phi|^m underflows fast away from theta = 0: only exponentiate the terms that matter
            with np.errstate(divide="ignore"):
                log_mod = mm[idx, None] * np.log(np.abs(spec))
            rows, cols = np.nonzero(log_mod > -745.0)
            arg = mm[idx][rows] * np.angle(spec[rows, cols]) + 2 * np.pi * ((kk[idx][rows] * cols) % mmax) / mmax
            terms = weight[cols] * np.exp(log_mod[rows, cols]) * np.cos(arg)
            val = np.bincount(rows, weights=terms, minlength=len(idx)) / mmax
            with np.errstate(divide="ignore"):
                out[sel[idx]] = mm[idx] * log_norm[idx] - kk[idx] * t[idx] + np.log(np.maximum(val, 0.0))
            i = j
    return out.reshape(shape)


def survival_stacked(groups: int, redundancy: int, tail: float = 1e-40) -> np.ndarray:
    """Exact ``P(T > k)``, k = 0..N, for the ``stacked`` placement (see module docstring).

    Evaluation stops once the survival falls below ``tail`` (it is non-increasing); the rest is set to 0.
    """
    n, r = check_groups_redundancy(groups, redundancy)
    surv = np.zeros(n + 1)
    if r == n:
        surv[:n] = 1.0
        return surv
    surv[:r] = 1.0  # fewer than r failures cannot hold r consecutive groups
    log_a = np.zeros(r)
    step = max(256, n // 16)
    k0 = r
    while k0 < n:
        ks = np.arange(k0, min(n, k0 + step))
        ms = n - ks
        logp = log_coeff_power(log_a, ks, ms) - log_binom(n - 1, ms - 1)
        surv[ks] = np.minimum(1.0, np.exp(logp))
        if surv[ks[-1]] < tail:
            break
        k0 += step
    return surv


def survival_block(groups: int, redundancy: int, tail: float = 1e-40) -> np.ndarray:
    """Exact ``P(T > k)``, k = 0..N, for the ``block`` placement (needs r | N)."""
    n, r = check_groups_redundancy(groups, redundancy)
    if n % r:
        raise ValueError(f"placement 'block' needs redundancy (r) to divide groups (N): r={r}, N={n}")
    b = n // r
    surv = np.zeros(n + 1)
    surv[:r] = 1.0
    if r == 1:
        return surv
    log_a = gammaln(r + 1) - gammaln(np.arange(r) + 1) - gammaln(r - np.arange(r) + 1)
    step = max(256, n // 16)
    k0 = r
    while k0 <= n:
        ks = np.arange(k0, min(n + 1, k0 + step))
        logp = log_coeff_power(log_a, ks, b) - log_binom(n, ks)
        surv[ks] = np.minimum(1.0, np.exp(logp))
        if surv[ks[-1]] < tail:
            break
        k0 += step
    return surv


def survival_exact(placement: str, groups: int, redundancy: int):
    """Exact ``P(T > k)`` for ``stacked``/``block``; ``None`` where no exact form exists."""
    if placement == "stacked":
        return survival_stacked(groups, redundancy)
    if placement == "block":
        return survival_block(groups, redundancy)
    return None


def survival_poisson(placement: str, groups: int, redundancy: int) -> np.ndarray:
    """Asymptotic ``P(T > k) ~ exp(-mu_k)`` (Poisson clumping; see module docstring), k = 0..N."""
    n, r = check_groups_redundancy(groups, redundancy)
    k = np.arange(n + 1, dtype=np.float64)
    if placement == "stacked":
        if r == n:
            return np.where(k < n, 1.0, 0.0)
        with np.errstate(divide="ignore"):
            log_mu = math.log(n) + np.log(n - k) + log_falling(k, r) - float(log_falling(np.array([n]), r + 1)[0])
    elif placement == "block":
        log_mu = math.log(n // r) + log_falling(k, r) - float(log_falling(np.array([n]), r)[0])
    elif placement in ("random", "custom"):
        log_mu = math.log(n) + log_falling(k, r) - float(log_falling(np.array([n]), r)[0])
    else:
        raise ValueError(f"unknown placement {placement!r}")
    surv = np.exp(-np.exp(log_mu))
    surv[-1] = 0.0  # all groups failed: wiped out
    return surv


def moments_from_survival(surv: np.ndarray) -> tuple[float, float]:
    """``(E[T], Var[T])`` from ``P(T > k)``, k = 0..N: ``E = sum S_k``, ``E[T^2] = sum (2k+1) S_k``."""
    surv = np.asarray(surv, dtype=np.float64)
    k = np.arange(surv.size, dtype=np.float64)
    mean = math.fsum(surv)
    second = math.fsum((2 * k + 1) * surv)
    return mean, max(0.0, second - mean * mean)


def expected_failures(placement: str, groups: int, redundancy: int) -> float | None:
    """Exact ``E[T]`` (failures at wipe-out, fatal one included); ``None`` for random/custom."""
    surv = survival_exact(placement, groups, redundancy)
    return None if surv is None else moments_from_survival(surv)[0]


def expected_failures_asymptotic(placement: str, groups: int, redundancy: int) -> float:
    """Poisson-clumping approximation of ``E[T]``."""
    return moments_from_survival(survival_poisson(placement, groups, redundancy))[0]


def expected_uptime(surv: np.ndarray, groups: int, group_rate: float) -> float:
    r"""Exponential failures: ``E[epoch uptime] = sum_k P(T > k) / ((N - k) lambda)``.

    With k groups down the next failure comes after an Exp((N-k) lambda) sojourn, and the epoch contains that
    sojourn iff T > k (the k-th failure set did not wipe out).
    """
    k = np.arange(groups)
    return math.fsum(np.asarray(surv[:groups]) / ((groups - k) * group_rate))


def availability(uptime: float, restart: float) -> float:
    """Fraction of wall-clock time not restarting over restart -> wipe-out cycles."""
    return uptime / (uptime + restart)
