r"""The share of wall time the job is stalled, stationary, with repair (docs/model.md#stalls).

Every group failure that the job survives without a global restart pauses the whole job until S after it; a
group's return from repair pauses it until S_j after the return; a later pause extends an earlier one, so the
job is stalled at time t exactly when some group failed in ``(t - S, t]`` or returned in ``(t - S_j, t]``.

One group alternates up times ``U ~ Exp(lambda)`` (``lambda = 1/M``, M its MTBF) and repairs ``V ~ G`` (mean
D, survival ``Gbar``), stationary: up with probability ``M / (M + D)``. Looking back from t:

* up at t: the time A since it rejoined is ``Exp(lambda)`` (memoryless), the repair V before it is an
  ordinary draw of G, and its last failure was at ``t - A - V``. No event in the windows means
  ``A >= S_j`` and ``A + V >= S``:

  .. math:: P_{up} = E_V\left[e^{-\lambda \max(S_j,\, S - V,\, 0)}\right];

* down at t: the time B since it failed has the equilibrium density ``Gbar(b) / D``, the up time before it
  is an ordinary ``Exp(lambda)``: no event means ``B >= S`` and ``B + U >= S_j``:

  .. math:: D \, P_{down} = \int_S^\infty \bar G(b)\, e^{-\lambda (S_j - b)^+}\, db.

So one group is quiet with probability

.. math:: q = \frac{M\, P_{up} + D\, P_{down}}{M + D},

and the N groups, independent between restarts, leave the job stalled a share ``f = 1 - prod_i q_i`` of the
wall time. Checks: with ``S <= D`` (fixed repair) and ``S_j = 0`` a group fails at most once in a window, so
``q = 1 - S / (M + D)`` (its failure rate times S), which the form gives; with exponential repair the
two-state chain is reversible and q is a product of matrix exponentials of killed generators (the tests
compute both).

A stall is counted only while no checkpoint runs. A checkpoint (C) starts after tau of computing and never
during a stall, so a cycle is ``X + C`` of wall time with ``X (1 - f) = tau``: the share stalled is

.. math:: \text{stall share} = \frac{f\, \tau}{\tau + C (1 - f)}.

Global restarts (rare where stalls matter: a restart ends any stall) and the run's start with every group up
are left out: a stationary estimate, checked against whole runs.
"""

from __future__ import annotations

import math

import numpy as np


def _survival(law: str, repair_min: float, sigma: float):
    """The repair law's survival function ``Gbar(b)`` (vectorised) and its quantile function."""
    from scipy import stats

    if law == "fixed":
        return (lambda b: (np.asarray(b) < repair_min).astype(float)), (lambda u: np.full_like(u, repair_min))
    if law == "exp":
        dist = stats.expon(scale=repair_min)
    elif law == "lognormal":
        dist = stats.lognorm(s=sigma, scale=math.exp(math.log(repair_min) - 0.5 * sigma ** 2))
    else:
        raise ValueError(f"repair law must be fixed, exp or lognormal, got {law!r}")
    return dist.sf, dist.ppf


def quiet_probability(mtbf_min: float, repair_min: float, failure_stall_min: float, rejoin_stall_min: float,
                      law: str = "fixed", sigma: float = 1.0) -> float:
    """q: the stationary probability that one group (exponential clock of mean ``mtbf_min``, repairs of
    mean ``repair_min`` under ``law``) neither failed in the last ``failure_stall_min`` nor returned in the
    last ``rejoin_stall_min`` (module docstring)."""
    from scipy import integrate

    m, d, s, sj = float(mtbf_min), float(repair_min), float(failure_stall_min), float(rejoin_stall_min)
    lam = 1.0 / m
    sf, ppf = _survival(law, d, sigma)
    # E_V[exp(-lam max(Sj, S - V, 0))] by the quantiles of V (midpoints of 4,096 equal-probability cells)
    if law == "fixed":
        p_up = math.exp(-lam * max(sj, s - d, 0.0))
    else:
        u = (np.arange(4096) + 0.5) / 4096
        v = ppf(u)
        p_up = float(np.mean(np.exp(-lam * np.maximum(np.maximum(sj, s - v), 0.0))))

    def down(b):
        return float(sf(b)) * math.exp(-lam * max(sj - b, 0.0))

    if law == "fixed":  # Gbar = 1 on [0, D): closed form
        if s >= d:
            d_down = 0.0
        elif sj <= s:
            d_down = d - s
        else:
            top = min(sj, d)
            d_down = (math.exp(-lam * (sj - top)) - math.exp(-lam * (sj - s))) / lam + max(d - sj, 0.0)
    else:
        d_down = 0.0
        if sj > s:
            d_down += integrate.quad(down, s, sj, limit=200)[0]
        d_down += integrate.quad(down, max(s, sj), np.inf, limit=200)[0]
    return (m * p_up + d_down) / (m + d)


def stalled_share(mtbfs_min, repair_min: float, failure_stall_min: float, rejoin_stall_min: float,
                  tau_min: float, ckpt_cost_min: float, law: str = "fixed", sigma: float = 1.0) -> float:
    """The stationary share of wall time stalled while no checkpoint runs: ``f tau / (tau + C (1 - f))``
    with ``f = 1 - prod_i q_i`` over the groups' MTBFs ``mtbfs_min`` (module docstring)."""
    qs = {}
    log_quiet = 0.0
    for m in np.asarray(mtbfs_min, float).ravel():
        key = float(m)
        if key not in qs:
            qs[key] = quiet_probability(key, repair_min, failure_stall_min, rejoin_stall_min, law, sigma)
        log_quiet += math.log(max(qs[key], 1e-300))
    f = max(0.0, -math.expm1(log_quiet))  # (never -0.0)
    tau, c = float(tau_min), float(ckpt_cost_min)
    return f * tau / (tau + c * (1.0 - f)) if tau + c * (1.0 - f) > 0 else f
