r"""Closed forms for the wipe-out (SPEC §2, items 1-3).

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

from .placement import check_groups_redundancy

_EPS_ALIAS = 1e-22


def _log_falling(n, r):
    """log (n)_r = log n (n-1) ... (n-r+1); -inf where n < r."""
    n = np.asarray(n, dtype=np.float64)
    out = np.full(n.shape, -np.inf)
    ok = n >= r
    out[ok] = gammaln(n[ok] + 1) - gammaln(n[ok] - r + 1)
    return out


def _log_binom(n, k):
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
        logp = log_coeff_power(log_a, ks, ms) - _log_binom(n - 1, ms - 1)
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
        logp = log_coeff_power(log_a, ks, b) - _log_binom(n, ks)
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
            log_mu = math.log(n) + np.log(n - k) + _log_falling(k, r) - float(_log_falling(np.array([n]), r + 1)[0])
    elif placement == "block":
        log_mu = math.log(n // r) + _log_falling(k, r) - float(_log_falling(np.array([n]), r)[0])
    elif placement in ("random", "custom"):
        log_mu = math.log(n) + _log_falling(k, r) - float(_log_falling(np.array([n]), r)[0])
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


# ---------------------------------------------------------------------------------------------------------
# Depth and overhead (SPEC §2 items 3-4)

def _depth_cdf_stacked_one(n: int, r: int, d: int) -> np.ndarray:
    r"""``P(d* <= d, no wipe-out | k failures)``, k = 0..N, for ``stacked``: a DP on the queue of
    ``spare_jax.depth``.

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
    p = np.zeros((2, r, n + 1))
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
        # survivor: q -> max(0, q + 1 - d)
        step[:, 0, :] += cur[:, : min(d, r), :].sum(axis=1) * w_alive
        if r > d:
            step[:, 1: r - d + 1, :] += cur[:, d:, :] * w_alive
        # failure: q -> q + 1 (must stay <= r - 1), j -> j + 1
        step[:, 1:, 1:] += cur[:, :-1, :-1] * w_fail
        if t == n:
            out = step[0, 0, :] + step[1, 0, :]
            break
        p[0, :, :c] = step[0]
        p[1, :, :c] = step[0] + step[1]
        p[1, 0, :c] = 0.0
    return np.minimum(out, 1.0)


def depth_cdf(placement: str, groups: int, redundancy: int) -> np.ndarray:
    r"""``F[k, d] = P(d*(S_k) <= d and no wipe-out)`` for k = 0..N, d = 0..r (``F[:, 0] = 0``,
    ``F[:, r] = P(T > k)``).

    ``stacked``: the queue DP (``_depth_cdf_stacked_one``). ``block``: a block with s survivors needs
    depth ``ceil(r/s)``, so ``d* <= d`` iff every block has at most ``f_d = r - ceil(r/d)`` failures:

    .. math:: F[k, d] = [x^k] \Big(\sum_{f=0}^{f_d} \binom{r}{f} x^f\Big)^{N/r} \Big/ \binom{N}{k}.
    """
    n, r = check_groups_redundancy(groups, redundancy)
    cdf = np.zeros((n + 1, r + 1))
    cdf[0, 1:] = 1.0  # no failure: depth 1
    if placement == "stacked":
        cdf[:, r] = survival_stacked(n, r)
        for d in range(2, r):
            cdf[:, d] = _depth_cdf_stacked_one(n, r, d)
    elif placement == "block":
        if n % r:
            raise ValueError(f"placement 'block' needs redundancy (r) to divide groups (N): r={r}, N={n}")
        cdf[:, r] = survival_block(n, r)
        ks = np.arange(n + 1)
        for d in range(2, r):
            fmax = r - (-(-r // d))
            log_a = gammaln(r + 1) - gammaln(np.arange(fmax + 1) + 1) - gammaln(r - np.arange(fmax + 1) + 1)
            cdf[:, d] = np.minimum(1.0, np.exp(log_coeff_power(log_a, ks, n // r) - _log_binom(n, ks)))
    else:
        raise ValueError(f"no depth theory for placement {placement!r} (use the Monte Carlo)")
    cdf[0, 1:] = 1.0
    return np.maximum.accumulate(cdf, axis=1)  # guard rounding: monotone in d


def overhead_theory(placement: str, groups: int, redundancy: int, cdf: np.ndarray | None = None) -> dict:
    r"""Exponential failures: ``Omega = E[U] / E[W]`` and the time-averaged depth, from ``depth_cdf``.

    .. math::  E[U] = \sum_k \frac{P(T>k)}{(N-k)\lambda}, \quad
               E[W] = \sum_k \frac{1}{(N-k)\lambda} \sum_{d=1}^{r} \frac{F[k,d] - F[k,d-1]}{d},

    because the sojourn with k groups down (mean ``1/((N-k) lambda)``, independent of which groups failed)
    runs at depth d with probability ``F[k,d] - F[k,d-1]``. ``lambda`` cancels in the ratio.
    """
    n, r = check_groups_redundancy(groups, redundancy)
    if cdf is None:
        cdf = depth_cdf(placement, n, r)
    pmf = np.diff(cdf, axis=1)  # [k, d-1] = P(depth = d, no wipe-out)
    sojourn = np.zeros(n + 1)
    sojourn[:n] = 1.0 / (n - np.arange(n))
    depth = np.arange(1, r + 1)
    uptime = math.fsum(sojourn * cdf[:, r])
    work = math.fsum(sojourn * (pmf / depth).sum(axis=1))
    depth_time = math.fsum(sojourn * (pmf * depth).sum(axis=1))
    return {"overhead": uptime / work, "time_avg_depth": depth_time / uptime, "uptime_units": uptime,
            "work_units": work}


def depth_cdf_bernoulli(placement: str, groups: int, redundancy: int, p, survival_only: bool = False) -> np.ndarray:
    r"""``G[i, d] = P(d* <= d and no wipe-out)`` when each group has failed independently with probability
    ``p[i]`` (d = 0..r; ``G[:, r]`` is the probability of no wipe-out).

    With exponential (or any i.i.d.) failure times this is the state of an epoch at time t, with
    ``p = P(t_g <= t)``; it equals ``sum_k Binomial(N, p)_k F[k, d]`` (tested against ``depth_cdf``) but
    costs O(r^3 log N) per (p, d) instead of O(N^2 r), so it serves any N.

    ``stacked``: the queue DP of ``_depth_cdf_stacked_one`` with Bernoulli weights is time-homogeneous, so
    the N - 1 free/tail steps are a matrix power ``A^{N-1}`` (repeated squaring of a 2r x 2r non-negative
    matrix: no cancellation) followed by the final step into state 0 (``survival_only``: d = r alone):
    ``G = e_{(free,0)}^T A^{N-1} b`` with ``b_{(phase,q)} = P(q -> 0)``.
    ``block``: every block must keep at least ``ceil(r/d)`` survivors:
    ``G = P(Binomial(r, p) <= r - ceil(r/d))^{N/r}``.
    """
    n, r = check_groups_redundancy(groups, redundancy)
    p = np.atleast_1d(np.asarray(p, dtype=np.float64))
    out = np.zeros((p.size, r + 1))
    out[:, 1:] = ((1.0 - p) ** n)[:, None]  # no failure: depth 1
    if r == 1:
        return out
    if placement == "block":
        if n % r:
            raise ValueError(f"placement 'block' needs redundancy (r) to divide groups (N): r={r}, N={n}")
        for d in range(2, r + 1):
            fmax = r - (-(-r // d))
            with np.errstate(divide="ignore"):
                out[:, d] = np.exp((n // r) * np.log(np.clip(binom.cdf(fmax, r, p), 0.0, 1.0)))
        return np.maximum.accumulate(out, axis=1)
    if placement != "stacked":
        raise ValueError(f"no depth theory for placement {placement!r} (use the Monte Carlo)")
    ds = np.arange(r, r + 1) if survival_only else np.arange(2, r + 1)
    size = 2 * r
    # one step: from q, survivor (1-p) -> max(0, q + 1 - d), failure (p) -> q + 1 (dropped at r)
    a = np.zeros((p.size, ds.size, size, size))
    b = np.zeros((p.size, ds.size, size))
    for i, d in enumerate(ds):
        for q in range(r):
            for q2, w in ((max(0, q + 1 - d), 1.0 - p), (q + 1, p)):
                if q2 >= r:
                    continue
                a[:, i, q, q2] += w  # free -> free
                if q2 >= 1:
                    a[:, i, q, r + q2] += w  # free -> tail
                    a[:, i, r + q, r + q2] += w  # tail -> tail
                if q2 == 0:
                    b[:, i, q] += w
                    b[:, i, r + q] += w
    vec = np.zeros((p.size, ds.size, size))
    vec[:, :, 0] = 1.0  # (free, 0)
    power, e = a, n - 1
    while e:
        if e & 1:
            vec = np.einsum("pdi,pdij->pdj", vec, power)
        e >>= 1
        if e:
            power = power @ power
    out[:, ds[0]:] = np.einsum("pdi,pdi->pd", vec, b)
    return np.maximum.accumulate(np.minimum(out, 1.0), axis=1)


EXACT_DP_MAX_N = 2000  # up to here the k-resolved queue DP is the faster exact route


def _binomial_mixture(cdf_k: np.ndarray, n: int, p: np.ndarray) -> np.ndarray:
    """``sum_k Binomial(N, p)_k cdf_k[k]`` per p, over a window of +-10 standard deviations (+-20 at least)
    around the mean, which holds all but < 1e-20 of the mass (a sparse matrix product; log-space pmf)."""
    from scipy.sparse import csr_matrix
    from scipy.special import xlog1py, xlogy

    half = int(min(n + 1, math.ceil(10 * math.sqrt(n * 0.25)) + 20))
    width = min(n + 1, 2 * half + 1)
    lo = np.clip(np.floor(n * p).astype(np.int64) - half, 0, n + 1 - width)
    ks = lo[:, None] + np.arange(width)[None, :]
    log_binom = _log_binom(n, np.arange(n + 1))
    with np.errstate(invalid="ignore"):
        pmf = np.exp(log_binom[ks] + xlogy(ks, p[:, None]) + xlog1py(n - ks, -p[:, None]))
    pmf = np.nan_to_num(pmf)
    rows = np.repeat(np.arange(p.size), width)
    mix = csr_matrix((pmf.ravel(), (rows, ks.ravel())), shape=(p.size, n + 1))
    return np.asarray(mix @ cdf_k)


def depth_profile_in_time(placement: str, groups: int, redundancy: int, points: int | None = None,
                          depth: bool = True):
    r"""``(x, G)``: ``G[i, d] = P(d*(t) <= d, no wipe-out by t)`` at ``x_i = lambda t_i`` for i.i.d.
    exponential failures (each group failed with ``p = 1 - e^{-x}``), on a grid reaching ``G[:, r] < 1e-13``.

    Exact at any N: the k-resolved queue DP mixed over ``k ~ Binomial(N, p)`` for N <= 2000, the Bernoulli
    transfer matrices (``depth_cdf_bernoulli``) beyond. ``depth=False``: only ``G[:, r]`` (the survival).
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
            surv = _binomial_mixture(surv_k, n, p)[:, 0]
        else:
            surv = depth_cdf_bernoulli(placement, n, r, p, survival_only=True)[:, r]
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
        surv = _binomial_mixture(surv_k, n, p)[:, 0]
    elif not depth or r == 1:
        surv = depth_cdf_bernoulli(placement, n, r, p, survival_only=True)[:, r]
    if not depth or r == 1:
        cdf = np.zeros((points, r + 1))
        cdf[:, r] = surv
        if r == 1:
            cdf[:, 1] = surv
    elif small:
        cdf = _binomial_mixture(depth_cdf(placement, n, r), n, p)
    else:
        cdf = depth_cdf_bernoulli(placement, n, r, p)
    return x, cdf


def overhead_theory_any_n(placement: str, groups: int, redundancy: int) -> dict:
    r"""Omega and the time-averaged depth for exponential failures at any N, by integrating over time:
    ``E[U] = int P(U > t) dt``, ``E[W] = int E[1/d(t); U > t] dt`` (trapezoid on ``depth_profile_in_time``).
    Equals ``overhead_theory`` (the sum over sojourns) up to the quadrature error (tested)."""
    n, r = check_groups_redundancy(groups, redundancy)
    x, cdf = depth_profile_in_time(placement, n, r)
    pmf = np.diff(cdf, axis=1)
    d = np.arange(1, r + 1)
    trap = lambda y: float(np.sum(0.5 * (y[1:] + y[:-1]) * np.diff(x)))  # noqa: E731
    uptime, work, depth_time = trap(cdf[:, r]), trap((pmf / d).sum(axis=1)), trap((pmf * d).sum(axis=1))
    return {"overhead": uptime / work, "time_avg_depth": depth_time / uptime, "uptime_units": uptime,
            "work_units": work}


# ---------------------------------------------------------------------------------------------------------
# Any i.i.d. failure law with *renewed* ages (every group's clock restarts at each global restart)


def time_from_hazard(x, model) -> np.ndarray:
    r"""Minutes ``t`` at which one group's cumulative hazard is ``x`` (``F(t) = 1 - e^{-x}``).

    Exponential: ``t = x / lambda``. Weibull (shape k, scale s): ``F(t) = 1 - exp(-(t/s)^k)``, so
    ``x = (t/s)^k`` and ``t = s x^{1/k}``. This change of variable carries every result stated on the grid of
    ``x = lambda t`` for exponential failures (``depth_profile_in_time``: each group failed independently
    with probability ``p = 1 - e^{-x}``) over to any continuous i.i.d. law with renewed ages, because then
    the failed set at time t is again an i.i.d. Bernoulli(F(t)) set.
    """
    x = np.asarray(x, dtype=np.float64)
    if model.distribution == "exponential":
        return x / model.group_rate_per_min
    if model.distribution == "weibull":
        return model.weibull_scale_min * x ** (1.0 / model.weibull_shape)
    raise ValueError(f"no hazard inverse for distribution {model.distribution!r}")


def order_statistic_spacings(groups: int, model) -> np.ndarray:
    r"""``E[X_(k+1) - X_(k)]`` (minutes), k = 0..N-1, for N i.i.d. failure times (``X_(0) = 0``).

    Derivation: ``E[X_(k+1)] - E[X_(k)] = int_0^inf (P(X_(k+1) > t) - P(X_(k) > t)) dt
    = int_0^inf P(exactly k failed by t) dt = int_0^inf Bin(N, F(t))_k dt``. In the hazard variable
    ``x`` (``time_from_hazard``) with ``t = s x^{1/k_W}``, ``dt = (s / k_W) x^{1/k_W - 1} dx`` and
    ``Bin(N, 1 - e^{-x})_k`` is a log-concave bump; the integral is done by adaptive quadrature
    (``scipy.integrate.quad``, split at the bump's mode). Exponential: ``1 / ((N - k) lambda)`` exactly.
    """
    from scipy.integrate import quad

    n = int(groups)
    k = np.arange(n)
    if model.distribution == "exponential":
        return 1.0 / ((n - k) * model.group_rate_per_min)
    kw, s = model.weibull_shape, model.weibull_scale_min
    log_c = _log_binom(n, k)
    out = np.zeros(n)
    for j in range(n):
        def f(x, j=j):
            if x <= 0:
                return 0.0
            log_p = math.log(-math.expm1(-x)) if j else 0.0
            return math.exp(log_c[j] + j * log_p - (n - j) * x + (1.0 / kw - 1.0) * math.log(x)) * s / kw
        mode = -math.log1p(-(j + 0.5) / (n + 0.5)) if j else 1.0 / n
        a = quad(f, 0.0, mode, limit=200, epsabs=0.0, epsrel=1e-11)[0]
        b = quad(f, mode, np.inf, limit=200, epsabs=0.0, epsrel=1e-11)[0]
        out[j] = a + b
    return out


def renewed_uptime_and_work(placement: str, groups: int, redundancy: int, model) -> dict:
    r"""Renewed ages, any i.i.d. continuous law: exact ``E[U]``, ``E[W]`` (useful work) and ``Omega``.

    .. math::  E[U] = \sum_k P(T > k)\, E[X_{(k+1)} - X_{(k)}], \qquad
               E[W] = \sum_k E[X_{(k+1)} - X_{(k)}] \sum_{d=1}^{r} \frac{F[k,d] - F[k,d-1]}{d},

    because the failure order (which fixes T and the depth after k failures) is a uniform permutation,
    independent of the order statistics ``X_(k)`` (ranks and order statistics of an i.i.d. continuous sample
    are independent), and the epoch contains the spacing ``X_(k+1) - X_(k)`` at depth d iff the first k
    failures neither wipe out nor need more than depth d. Exponential: the §2 sums (sojourn ``1/((N-k)lambda)``).
    """
    n, r = check_groups_redundancy(groups, redundancy)
    spacing = order_statistic_spacings(n, model)
    cdf = depth_cdf(placement, n, r)[:n]
    pmf = np.diff(cdf, axis=1)
    uptime = math.fsum(spacing * cdf[:, r])
    work = math.fsum(spacing * (pmf / np.arange(1, r + 1)).sum(axis=1))
    return {"uptime_min": uptime, "work_min": work, "overhead": uptime / work}

# The longest circular run of failed groups (where the paper's r* ~ log2 N + 0.833 comes from)

def _no_run_given_k(n: int, r: int, ks: np.ndarray) -> np.ndarray:
    """``P(L < r | k failed)`` for the given k: the ``stacked`` survival ``P(T > k)`` of ``survival_stacked``
    (same formula, same ``log_coeff_power``), evaluated only at ``ks`` instead of every k. ``r > N`` allowed."""
    ks = np.asarray(ks, dtype=np.int64)
    out = np.where(ks < min(r, n + 1), 1.0, 0.0)  # k < r: no r-run; k = N >= r: every group failed
    if r >= n or r < 1:
        return out if r >= 1 else np.zeros(ks.shape)
    mid = (ks >= r) & (ks < n)
    if mid.any():
        km = ks[mid]
        logp = log_coeff_power(np.zeros(r), km, n - km) - _log_binom(n - 1, n - km - 1)
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
            return (math.log(n) + float(_log_falling(np.array([k]), r)[0])
                    - float(_log_falling(np.array([n]), r)[0]))

    below = [0.0]  # below[r] = P(L < r), r = 0..r_hi
    tail = 0.0
    for r in range(1, n + 1):
        below.append(float(np.clip(math.fsum(weights * _no_run_given_k(n, r, ks)), 0.0, 1.0)))
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
