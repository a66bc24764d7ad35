r"""Theory for repair without a global restart (docs/repair.md#theory).

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

The transient hazard (uniformly valid in D)
-------------------------------------------
The first order fails once ``rho s`` is not small: with D comparable to the no-repair epoch no group
returns before the wipe-out and the epoch is the static one, while ``s + 1/rho`` grows with D.
``transient_uptime`` keeps the exact transient of every group, ``p_g(t)`` from the renewal equation
``p(t) = lambda int_0^t (1 - p(s)) P(R > t - s) ds`` (a group that started up), in the same independent-sets
hazard ``h(t) = sum_H sum_{g in H} lambda_g (1 - p_g(t)) prod_{h != g} p_h(t)`` and integrates the survival
``exp(-int h)`` numerically. It tends to ``s + 1/rho`` when ``lambda D << 1`` and to the independent-shard
(Poisson) approximation of the static epoch when ``D -> inf`` (at N = 600: 2 % below the exact static time
at r = 2, 10 % at r = 8, where overlapping windows make shard losses cluster). With a *fixed* repair no
group returns before D, so up to D the survival is the exact static one and the hazard takes over after
it: exact when D is longer than the epoch. At small N the independence approximation is coarser (within
30 % of the exact chain at N = 12 with exponential repair, tested).

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
import warnings

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
    with warnings.catch_warnings():
        warnings.simplefilter("error", integrate.IntegrationWarning)
        try:
            val, _ = integrate.quad(lambda t: 1.0 - fe(t) ** (r - 1), 0.0, hi, limit=400, points=[d])
            return float(val)
        except integrate.IntegrationWarning:
            pass
    # a wide lognormal (sigma >~ 2.5): [0, hi] spans too many decades for one adaptive rule; integrate
    # over t = e^u in pieces of one unit of u (the integrand is smooth in log t)
    integrand = lambda u: math.exp(u) * (1.0 - fe(math.exp(u)) ** (r - 1))  # noqa: E731
    lo_u, hi_u = m - 12 * sigma, math.log(hi)
    edges = np.arange(lo_u, hi_u, 1.0).tolist() + [hi_u]
    with warnings.catch_warnings():  # round-off where 1 - fe ~ 1e-16: a first-order delay, accurate enough
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        val = sum(integrate.quad(integrand, a, b, limit=100)[0] for a, b in zip(edges, edges[1:]))
    return float(val + math.exp(lo_u))  # the integrand is 1 below t = e^lo_u (fe ~ 0 there)


def first_order_uptime(placement, model, repair, scenario=None) -> dict | None:
    """First-order E[epoch uptime] with repair (module docstring): ``rho``, ``s``, ``p`` and the uptime.

    None with failure domains (no closed form here: the CTMC for small N, the kernel otherwise).
    """
    from ..model.scenario import Scenario

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

    from ..model.scenario import Scenario

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


# -- the transient hazard: uniformly valid in D ------------------------------------------------------------

TRANSIENT_STEPS = 400  # grid cells per (shortest) time scale
TRANSIENT_BLOCK = 1000  # cells between the stopping tests
TRANSIENT_MAX_STEPS = 2_000_000
_Z_1E12 = 7.035  # the standard normal quantile of 1 - 1e-12 (just above it)
# the command line's bound on transient_uptime's work (``work`` units: about one multiply-add each, 2-10 ns on a
# busy 2-core CPU; a lognormal repair of sigma = 1, D = 30 min at N = 600 needs 1.6e9); beyond it the
# theory is reported as skipped, with the reason
TRANSIENT_CLI_WORK = 2e9
_STEP_WORK = 2000  # the fixed cost of one grid cell of the renewal convolution (a numpy call), in work units


class TheoryTooCostly(ValueError):
    """The theory would take more work than its caller allows (``max_work``); the message says why."""


def _cell_survival(repair, h: float, cells: int) -> np.ndarray:
    r"""``Gbar_k = (1/h) \int_{(k-1)h}^{kh} P(R > u) du`` for k = 1..cells (the repair survival averaged over
    each grid cell, exactly: ``E[min(R, t)]`` differences)."""
    t = h * np.arange(cells + 1, dtype=np.float64)
    d = repair.repair_time_min
    if repair.law == "fixed":
        emin = np.minimum(t, d)
    elif repair.law == "exp":
        emin = -d * np.expm1(-t / d)
    else:
        from scipy import special

        s = repair.sigma
        m = math.log(d) - 0.5 * s * s
        with np.errstate(divide="ignore"):
            z = (np.log(np.where(t > 0, t, 1.0)) - m) / s
        emin = np.where(t > 0, math.exp(m + s * s / 2) * special.ndtr(z - s) + t * special.ndtr(-z), 0.0)
    return np.diff(emin) / h


class _DownCurves:
    r"""``P(down at t_i)``, ``t_i = i h``, for groups that start up, fail at rates ``lams`` and are repaired in
    ``R`` (the repair law), extended block by block: the renewal equation

    .. math::  p(t) = \lambda \int_0^t (1 - p(s))\, P(R > t - s)\, ds

    (down at t iff it failed at some s < t, from up, and is still in repair): closed form for the exponential
    law (``p_inf (1 - e^{-(lambda + mu) t})``), otherwise on the grid (``1 - p`` constant on each cell, the
    repair survival averaged over the cell, the kernel cut where it is below 1e-12)."""

    def __init__(self, repair, lams, h: float, capacity: int):
        self.repair, self.lams, self.h = repair, np.asarray(lams, np.float64), float(h)
        self.p = np.zeros((self.lams.size, capacity + 1))
        self.done = 0  # p[:, :done + 1] is computed (p = 0 at t = 0)
        if repair.law != "exp":  # cells up to where the repair survival is below 1e-12 (the kernel's cut)
            d = repair.repair_time_min
            if repair.law == "fixed":
                tail = d
            else:
                tail = math.exp(math.log(d) - 0.5 * repair.sigma ** 2 + repair.sigma * _Z_1E12)
            g = _cell_survival(repair, h, min(capacity, int(math.ceil(tail / h)) + 2))
            keep = np.flatnonzero(g > 1e-12)
            self.width = int(keep[-1]) + 1 if keep.size else 1
            self.rev = g[: self.width][::-1].copy()
            self.up = np.ones_like(self.p)  # 1 - p, kept as p is extended

    def extend(self, upto: int) -> None:
        lams, h, p = self.lams, self.h, self.p
        if self.repair.law == "exp":
            mu = 1.0 / self.repair.repair_time_min
            t = h * np.arange(self.done + 1, upto + 1)
            p[:, self.done + 1: upto + 1] = (lams / (lams + mu))[:, None] * -np.expm1(-np.outer(lams + mu, t))
        else:
            up, w, rev, scale = self.up, self.width, self.rev, lams * h
            for i in range(self.done + 1, upto + 1):
                lo = max(0, i - w)
                p[:, i] = np.minimum(1.0, (up[:, lo:i] @ rev[w - (i - lo):]) * scale)
                up[:, i] = 1.0 - p[:, i]
        self.done = upto


def transient_uptime(placement, model, repair, scenario=None, max_work: float | None = None) -> dict | None:
    r"""E[epoch uptime] with the *transient* wipe-out hazard (uniformly valid in D; the module docstring's
    first order is its limit for ``lambda D << 1``).

    A holder set ``H`` is completed at ``t`` by the failure of its member ``g`` while the others are down:

    .. math::  h(t) = \sum_H \sum_{g \in H} \lambda_g (1 - p_g(t)) \prod_{h \in H \setminus g} p_h(t),
               \qquad E[U] = \int_0^\infty e^{-\int_0^t h - \nu t} dt,

    with ``p_g(t)`` the down probability of a group that started up (``_DownCurves``), the groups independent
    (as in the stationary rate). Before the first repair can end nothing has been repaired, so with
    ``D -> inf`` this is the independent-shard (Poisson) approximation of the static epoch; for
    ``lambda D << 1`` the transient is short and it is ``s + 1/rho`` (``first_order_uptime``). Integrated
    (trapezoid) on a grid of ``TRANSIENT_STEPS`` cells per shortest time scale (the repair time, ``1/lambda``,
    and the time at which the no-repair hazard reaches 1) until the survival is below ``e^-50`` or every
    ``p_g`` is within 1e-6 (relative) of its stationary value over the last block, then the stationary rate
    ``rho`` for the rest. With a *fixed* repair nothing comes back before D, so there (equal group rates,
    stacked or block) the survival is the exact static one (``_static_log_survival``) and the hazard takes
    over from D: exact for D longer than the epoch.

    Returns ``{"uptime_min", "rate_per_min" (rho), "t", "survival" (S(t) on the grid), "cum_hazard"
    (-log S without job-wide ends), "steps", "work"}``; None with failure domains. ``max_work`` (default
    unbounded): raise ``TheoryTooCostly`` before a block of the grid (or the static survival) would take
    the work past it (``work``: about one multiply-add per unit; a lognormal repair of large sigma needs
    a convolution kernel of millions of cells), so that a caller can bound its time; the result does not
    depend on it when it is not exceeded.
    """
    from ..model.scenario import Scenario

    scenario = Scenario() if scenario is None else scenario
    if scenario.domains:
        return None
    n, r = placement.groups, placement.redundancy
    ring = scenario.ring_order(n)
    lam_pos = scenario.rate_multipliers(n, model.group_mtbf_min)[ring] / model.group_mtbf_min
    classes, cls_of_pos = np.unique(lam_pos, return_inverse=True)
    sets = np.array(_distinct_holder_sets(placement), np.int64)
    combos, counts = np.unique(np.sort(cls_of_pos[sets], axis=1), axis=0, return_counts=True)
    rho = stationary_wipeout_rate(placement, 1.0 / lam_pos, repair.repair_time_min)
    nu = scenario.job_rate_per_min(n, model.group_mtbf_min)
    d = repair.repair_time_min
    p_inf = classes * d / (1.0 + classes * d)
    # the time scale of the no-repair hazard: sum over sets of prod (1 - e^{-lambda t}) reaches 1
    lo_t, hi_t = 0.0, 50.0 / float(classes.max())
    for _ in range(100):
        mid = 0.5 * (lo_t + hi_t)
        if float(np.sum(counts * np.prod(-np.expm1(-classes * mid)[combos], axis=1))) < 1.0:
            lo_t = mid
        else:
            hi_t = mid
    h = min(d, 1.0 / float(classes.max()), hi_t) / TRANSIENT_STEPS
    curves = _DownCurves(repair, classes, h, TRANSIENT_MAX_STEPS)
    if max_work is not None and repair.law == "lognormal":  # refused up front when it would surely be costly
        need = min(TRANSIENT_MAX_STEPS, int(_lognormal_settle_min(repair) / h))
        estimate = _block_work(curves, 0, need, combos.shape[0] * r * r)
        if estimate > max_work:
            raise TheoryTooCostly(f"the transient theory needs about {estimate:.2g} operations, more than "
                                  f"{max_work:.3g} ({need:,} grid cells of {h:.3g} min to settle, a repair-time "
                                  f"kernel of {curves.width:,} cells; lognormal repair of {d:g} min, sigma "
                                  f"{repair.sigma:g})")
    haz = np.zeros(TRANSIENT_MAX_STEPS + 1)
    done, cum, work = 0, 0.0, 0.0
    while done < TRANSIENT_MAX_STEPS:
        upto = min(done + TRANSIENT_BLOCK, TRANSIENT_MAX_STEPS)
        work += _block_work(curves, done, upto, combos.shape[0] * r * r)
        if max_work is not None and work > max_work:
            width = "" if repair.law == "exp" else f", a repair-time kernel of {curves.width:,} cells"
            raise TheoryTooCostly(f"the transient theory needs more than {max_work:.3g} operations (a grid of "
                                  f"{h:.3g} min cells{width}; {repair.law} repair of {d:g} min)")
        curves.extend(upto)
        p = curves.p[:, done: upto + 1]
        up = 1.0 - p
        block = np.zeros(p.shape[1])
        for combo, cnt in zip(combos, counts):
            for j in range(r):
                term = classes[combo[j]] * up[combo[j]]
                for k in range(r):
                    if k != j:
                        term = term * p[combo[k]]
                block += cnt * term
        haz[done: upto + 1] = block
        cum += float(np.sum(0.5 * (block[1:] + block[:-1])) * h) + nu * (upto - done) * h
        done = upto
        stationary = bool(np.all(np.abs(p - p_inf[:, None]) <= 1e-6 * p_inf[:, None]))
        if cum > 60.0 or stationary:
            break
    t = h * np.arange(done + 1)
    cum_haz = np.concatenate([[0.0], np.cumsum(0.5 * (haz[1: done + 1] + haz[:done]) * h)])
    if repair.law == "fixed" and classes.size == 1:  # the static survival: (grid points <= D) x (N + 1)
        work += float(np.count_nonzero(t <= repair.repair_time_min)) * (n + 1) * 20
        if max_work is not None and work > max_work:
            raise TheoryTooCostly(f"the transient theory needs more than {max_work:.3g} operations (the static "
                                  f"survival on {np.count_nonzero(t <= d):,} grid points x N + 1 = {n + 1:,})")
    static = _static_log_survival(placement, repair, classes, t)
    if static is not None:  # exact up to the fixed repair time (nothing has come back yet), the hazard after
        cut = int(np.searchsorted(t, repair.repair_time_min, side="right"))  # t[:cut] <= D
        cum_haz = np.concatenate([-static[:cut], -static[cut - 1] + cum_haz[cut:] - cum_haz[cut - 1]])
    surv = np.exp(-cum_haz - nu * t)
    uptime = float(np.sum(0.5 * (surv[1:] + surv[:-1])) * h)
    if surv[-1] > 0:  # the rest at the stationary rate
        uptime = uptime + float(surv[-1]) / (rho + nu) if rho + nu > 0 else math.inf
    return {"uptime_min": uptime, "rate_per_min": rho, "t": t, "survival": surv, "cum_hazard": cum_haz,
            "steps": done, "work": work}


def _lognormal_settle_min(repair, eps: float = 1e-6) -> float:
    """The time t at which E[(R - t)+] / D falls to ``eps`` (lognormal R of mean D): about where the down
    probabilities of ``_DownCurves`` come within ``eps`` of their stationary values (the stopping test)."""
    from scipy import optimize, special

    d, s = repair.repair_time_min, repair.sigma
    m = math.log(d) - 0.5 * s * s

    def log_tail(log_t):
        z = (log_t - m) / s
        tail = (d * special.ndtr(s - z) - math.exp(log_t) * special.ndtr(-z)) / d
        return math.log(max(tail, 1e-300)) - math.log(eps)

    lo, hi = math.log(d), math.log(d) + 60.0 * s
    return math.exp(optimize.brentq(log_tail, lo, hi)) if log_tail(lo) > 0 else d


def _block_work(curves, lo: int, hi: int, hazard_terms: int) -> float:
    """The work of extending ``curves`` from cell ``lo`` to ``hi`` and of the hazard on those cells."""
    classes = curves.lams.size
    cells = hi - lo
    if curves.repair.law == "exp":
        conv = classes * cells
    else:  # cell i convolves min(i, width) cells per class
        w = curves.width
        full = max(0, hi - max(lo, w))  # cells past the kernel's width
        part = cells - full  # cells lo+1..min(hi, w): sum of i
        top = lo + part
        conv = classes * (w * full + (top * (top + 1) - lo * (lo + 1)) // 2) + _STEP_WORK * cells
    return float(conv + hazard_terms * cells)


def _static_log_survival(placement, repair, classes, t):
    """``log P(no wipe-out by t)`` of the epoch *without* repair (exact: the static survival P(T > k) mixed
    over the Binomial(N, 1 - e^{-lambda t}) count of failures), on the grid points ``t <= D`` of a fixed
    repair of D; None where it does not apply (other laws, unequal group rates, placements without the
    exact static survival). With a fixed repair no group comes back before D, so there the epoch is the
    static one."""
    if repair.law != "fixed" or classes.size != 1 or placement.kind not in ("stacked", "block"):
        return None
    from scipy import stats

    from .wipeout import survival_exact

    n = placement.groups
    surv_k = survival_exact(placement.kind, n, placement.redundancy)
    if surv_k is None:
        return None
    surv_k = np.asarray(surv_k, np.float64)[: n + 1]
    inside = t[t <= repair.repair_time_min]
    out = np.empty(inside.size)
    k = np.arange(surv_k.size)
    for lo in range(0, inside.size, 512):
        q = -np.expm1(-float(classes[0]) * inside[lo: lo + 512])
        pmf = stats.binom.pmf(k[None, :], n, q[:, None])
        out[lo: lo + 512] = pmf @ surv_k
    with np.errstate(divide="ignore"):
        return np.log(np.maximum(out, 0.0))


def p_wipeout_within(transient: dict, horizon_min: float) -> float:
    """P(a wipe-out by ``horizon_min``) from ``transient_uptime``'s hazard (job-wide ends not counted: the
    wipe-out hazard alone), the stationary rate beyond its grid."""
    t, cum = transient["t"], transient["cum_hazard"]
    if horizon_min <= t[-1]:
        c = float(np.interp(horizon_min, t, cum))
    else:
        c = float(cum[-1]) + transient["rate_per_min"] * (horizon_min - float(t[-1]))
    return float(-math.expm1(-c))
