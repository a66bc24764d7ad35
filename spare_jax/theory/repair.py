r"""Theory for repair without a global restart (SPEC §10.5).

Stationary wipe-out rate
------------------------
A group that fails at rate ``lambda`` and is down for a repair of mean ``D`` is, in the long run, down a
fraction ``p = D / (1/lambda + D)`` of the time (alternating renewal process: up periods of mean
``1/lambda``, down periods of mean ``D``), whatever the law of the repair. A wipe-out is a failure of a
holder ``g`` of shard ``j`` (rate ``lambda (1 - p)`` when g is up) while the other ``r - 1`` holders of
``j`` are down (probability ``p^(r-1)`` if the groups are independent, which they are until the first
wipe-out). Summing over the *distinct* holder sets ``H`` (a failure completes the set, not a shard):

.. math::  \rho = \sum_{H} \sum_{g \in H} \lambda_g (1 - p_g) \prod_{h \in H \setminus g} p_h,

i.e. ``N r lambda (1-p) p^(r-1)`` for ``stacked`` (N distinct windows of r ring positions) and
``N lambda (1-p) p^(r-1)`` for ``block`` (N/r blocks of r). First order in ``p``: a failure that completes
two sets at once, or a set whose other holders are not independent given that no wipe-out happened yet,
are second-order effects (they make the first-order time a few per cent short at ``p ~ 1-2 %``).

Start from all-up (derivation)
------------------------------
At ``t = 0`` no group is down, so the hazard is smaller than ``rho`` until the down probability has climbed
to ``p``. To first order in ``lambda D`` a group is down at ``t`` iff it failed within the last repair, so
``P(down at t) = lambda \int_0^t P(R > s) ds = p F_e(t)`` with ``F_e`` the CDF of the *equilibrium*
(residual-life) law of the repair time ``R``, ``F_e(t) = (1/D) \int_0^t P(R > s) ds``. The hazard is then
``rho F_e(t)^(r-1)`` and the survival ``exp(-rho (t - s(t)))`` with
``s(t) = \int_0^t [1 - F_e(u)^(r-1)] du -> s``, so, when ``rho s`` is small,

.. math::  E[U] \approx \frac{1}{\rho} + s, \qquad s = \int_0^\infty \left[1 - F_e(t)^{r-1}\right] dt.

* fixed repair: ``F_e(t) = t/D`` on ``[0, D]``: ``s = D (1 - 1/r)``;
* exponential repair (rate ``mu = 1/D``): the two-state chain gives exactly
  ``P(down at t) = p (1 - e^{-(lambda+mu) t})``, so ``s = \int 1 - (1 - e^{-at})^{r-1} dt = H_{r-1}/a``,
  ``a = lambda + mu`` (expand ``1 - (1-x)^{r-1}`` and integrate term by term: ``sum_k 1/(k a)``, the
  harmonic number);
* lognormal: ``s`` by quadrature of ``1 - F_e^{r-1}`` with ``P(R > s)`` the lognormal survival.

With job-wide interruptions at rate ``nu`` the same first-order picture (hazard 0 for ``t < s``, ``rho``
after) gives ``E[U] = (1 - e^{-nu s})/nu + e^{-nu s}/(rho + nu)``, which is ``s + 1/rho`` at ``nu = 0``.

Exact small N (exponential repair)
----------------------------------
With exponential repair the down set ``S`` is a continuous-time Markov chain on ``2^N`` states: an up group
fails at rate ``lambda_g`` (``S -> S + g``, one failure), a down group rejoins at rate ``mu``
(``S -> S - g``), a domain ``d`` not inside ``S`` fires at rate ``1/M_d`` (``S -> S | d``, ``|d \ S|``
failures), the job-wide interruption ends the epoch at rate ``nu``. ``S`` is absorbing when it contains a
holder set. First-step analysis over the transient states, ``q_S`` the total rate out of ``S``:

.. math::  q_S U_S - \sum_{S'} q_{SS'} U_{S'} = 1, \qquad
           q_S F_S - \sum_{S'} q_{SS'} F_{S'} = \sum_{S'} q_{SS'} f_{SS'}, \qquad
           q_S J_S - \sum_{S'} q_{SS'} J_{S'} = \nu,

(sums over transient targets on the left, over all targets on the right; ``f`` the failures of a
transition), solved with a sparse LU: ``U_0`` the expected uptime, ``F_0`` the expected failures, ``J_0``
P(the epoch ends by the job-wide interruption). Repairs make the chain non-triangular (unlike the static
chain of ``scenario.exact_epoch_small``), hence the sparse solve.
"""

from __future__ import annotations

import math

import numpy as np

EXACT_REPAIR_MAX_N = 12


def down_probability(group_mtbf_min: float, repair_time_min: float) -> float:
    """``p = D / (1/lambda + D)``: the stationary probability that a group is down (any repair law)."""
    return repair_time_min / (group_mtbf_min + repair_time_min)


def _distinct_holder_sets(placement, ring=None) -> list[tuple[int, ...]]:
    holders = placement.holders if ring is None else np.asarray(ring)[placement.holders]
    return sorted({tuple(sorted(int(g) for g in row)) for row in holders})


def stationary_wipeout_rate(placement, group_mtbf_min, repair_time_min: float) -> float:
    """``rho`` per minute, first order: the sum over distinct holder sets (see the module docstring).
    ``group_mtbf_min`` a scalar or per-group (ring-position order) array."""
    n = placement.groups
    mtbf = np.broadcast_to(np.asarray(group_mtbf_min, np.float64), (n,))
    lam = 1.0 / mtbf
    p = repair_time_min / (mtbf + repair_time_min)
    rate = 0.0
    for hs in _distinct_holder_sets(placement):
        hs = list(hs)
        for g in hs:
            rate += lam[g] * (1 - p[g]) * np.prod([p[h] for h in hs if h != g])
    return float(rate)


def start_shift_min(repair, redundancy: int, group_rate_per_min: float = 0.0) -> float:
    """``s``: the first-order delay of the wipe-out hazard from the start at all-up (module docstring)."""
    r, d = int(redundancy), repair.repair_time_min
    if r == 1:
        return 0.0
    if repair.law == "fixed":
        return d * (1.0 - 1.0 / r)
    if repair.law == "exp":
        return sum(1.0 / k for k in range(1, r)) / (group_rate_per_min + 1.0 / d)
    from scipy import integrate, special

    sigma = repair.sigma
    m = math.log(d) - 0.5 * sigma * sigma

    def surv(s):  # P(R > s), lognormal
        return 0.5 * special.erfc((math.log(s) - m) / (sigma * math.sqrt(2))) if s > 0 else 1.0

    def fe(t):  # equilibrium CDF: (1/D) int_0^t P(R > s) ds = (1/D) E[min(R, t)]
        if t <= 0:
            return 0.0
        z = (math.log(t) - m) / sigma
        # E[min(R, t)] = E[R; R < t] + t P(R >= t)
        partial = math.exp(m + sigma * sigma / 2) * special.ndtr(z - sigma)
        return min(1.0, (partial + t * special.ndtr(-z)) / d)

    hi = math.exp(m + 12 * sigma)
    val, _ = integrate.quad(lambda t: 1.0 - fe(t) ** (r - 1), 0.0, hi, limit=400, points=[d])
    return float(val)


def first_order_uptime(placement, model, repair, scenario=None) -> dict | None:
    """First-order E[epoch uptime] with repair (module docstring): ``rho``, ``s``, ``p`` and the uptime.

    None with failure domains (no closed form here: the CTMC for small N, the kernel otherwise).
    """
    from ..scenario import Scenario

    scenario = Scenario() if scenario is None else scenario
    if scenario.domains:
        return None
    n = placement.groups
    ring = scenario.ring_order(n)
    mtbf = model.group_mtbf_min / scenario.rate_multipliers(n, model.group_mtbf_min)[ring]
    rho = stationary_wipeout_rate(placement, mtbf, repair.repair_time_min)
    s = start_shift_min(repair, placement.redundancy, model.group_rate_per_min)
    nu = scenario.job_rate_per_min(n, model.group_mtbf_min)
    if nu > 0:
        uptime = -math.expm1(-nu * s) / nu + math.exp(-nu * s) / (rho + nu)
    else:
        uptime = s + 1.0 / rho if rho > 0 else math.inf
    return {"p": down_probability(model.group_mtbf_min, repair.repair_time_min), "rate_per_min": rho,
            "start_shift_min": s, "uptime_min": uptime}


def _popcount(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.int64)
    out = np.zeros_like(x)
    while np.any(x):
        out += x & 1
        x >>= 1
    return out


def exact_repair_ctmc(placement, model, repair_time_min: float, scenario=None) -> dict:
    """Exact E[uptime], E[failures], P(job-wide end) for N <= 12 with exponential repair (module docstring)."""
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla

    from ..scenario import Scenario

    scenario = Scenario() if scenario is None else scenario
    n = placement.groups
    if n > EXACT_REPAIR_MAX_N:
        raise ValueError(f"the exact repair chain needs N <= {EXACT_REPAIR_MAX_N} (2^N states), got {n}")
    ring = scenario.ring_order(n)
    # physical ids throughout: holder sets mapped through the ring
    sets = [sum(1 << g for g in hs) for hs in _distinct_holder_sets(placement, ring)]
    lam = scenario.rate_multipliers(n, model.group_mtbf_min) / model.group_mtbf_min
    mu = 1.0 / float(repair_time_min)
    nu = scenario.job_rate_per_min(n, model.group_mtbf_min)
    doms = []
    for level in scenario.domains:
        members = level.members(n)
        for d in range(level.count(n)):
            doms.append((int(sum(1 << int(g) for g in np.flatnonzero(members == d))), 1.0 / level.mtbf_min))
    states = np.arange(1 << n, dtype=np.int64)
    absorbing = np.zeros(states.size, bool)
    for m in sets:
        absorbing |= (states & m) == m
    trans = states[~absorbing]
    index = np.full(states.size, -1, np.int64)
    index[trans] = np.arange(trans.size)
    q = np.full(trans.size, nu)
    b_fail = np.zeros(trans.size)
    rows, cols, vals = [], [], []

    def add(target, rate, fails, valid):
        nonlocal q, b_fail
        rate = np.where(valid, rate, 0.0)
        q += rate
        b_fail += rate * fails
        keep = valid & ~absorbing[target]
        rows.append(np.flatnonzero(keep))
        cols.append(index[target[keep]])
        vals.append(-rate[keep])

    for g in range(n):
        bit = 1 << g
        up = (trans & bit) == 0
        add(trans ^ bit, np.where(up, lam[g], mu), up.astype(float), np.ones(trans.size, bool))
    for dm, rate in doms:
        target = trans | dm
        add(target, np.full(trans.size, rate), _popcount(dm & ~trans).astype(float), target != trans)
    rows.append(np.arange(trans.size))
    cols.append(np.arange(trans.size))
    vals.append(q)
    a = sp.csc_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(trans.size, trans.size))
    lu = spla.splu(a)
    i0 = index[0]
    return {"uptime_min": float(lu.solve(np.ones(trans.size))[i0]), "failures": float(lu.solve(b_fail)[i0]),
            "p_job_end": float(lu.solve(np.full(trans.size, nu))[i0]) if nu > 0 else 0.0}
