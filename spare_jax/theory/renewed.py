r"""Any i.i.d. failure law with *renewed* ages (every group's clock restarts at each global restart):
the change of variable to the hazard scale and order-statistic spacings (exact E[uptime], E[work])."""

from __future__ import annotations

import math

import numpy as np

from ..model.placement import check_groups_redundancy
from .wipeout import log_binom
from .depth import depth_cdf, depth_profile_in_time


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
    log_c = log_binom(n, k)
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

    because the failure order (which fixes T and the depth after k failures) is a uniform permutation, independent of
    the order statistics ``X_(k)`` (ranks and order statistics of an i.i.d. continuous sample are independent), and
    the epoch contains the spacing ``X_(k+1) - X_(k)`` at depth d iff the first k failures neither wipe out nor need
    more than depth d. Exponential: the closed form's sums (sojourn ``1/((N-k)lambda)``).
    """
    n, r = check_groups_redundancy(groups, redundancy)
    spacing = order_statistic_spacings(n, model)
    cdf = depth_cdf(placement, n, r)[:n]
    pmf = np.diff(cdf, axis=1)
    uptime = math.fsum(spacing * cdf[:, r])
    work = math.fsum(spacing * (pmf / np.arange(1, r + 1)).sum(axis=1))
    return {"uptime_min": uptime, "work_min": work, "overhead": uptime / work}
