r"""Time-to-train under a ``Scenario`` with no closed form (failure domains, ring orders, lemons, per-group
MTBFs; docs/scenarios.md#time-to-train-under-any-scenario): epoch pools from the scenario kernels, and the
renewal-reward estimate on a pool.

Epochs under such a scenario are still i.i.d. cycles (every restart restores all groups, and the domain and
job-wide clocks are Poisson), so the renewal-reward form of the package docstring holds with the *sampled*
moments in place of the closed-form ones:

.. math::  \widehat{\mathrm{TTT}}(\tau) = W \, \frac{\bar U + R}{\bar Y(\tau)},

``\bar U`` and ``\bar Y(\tau)`` the pool means of the uptime and of the committed work (the exact per-epoch
``Y`` of ``montecarlo._committed``, not the closed form's factorised ``E[1/d | U > u] S(c_i)``). Its standard
error is the delta method's for a ratio of means. One pool serves every tau (common random numbers), so the
curve TTT(tau) is smooth enough to minimise on a grid (``best_tau_pool``). Only exponential failures or
``ages="renewed"`` are i.i.d. cycles; kept Weibull ages under a scenario are refused.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from ..model.cluster import Cluster, Sampling
from ..model.failures import FailureModel
from ..model.placement import check_groups_redundancy
from .config import SCHEMES, Space, Training, scheme_placement
from .epochs import EpochPool, epoch_yield, pool_depths as _level_depths

POOL_EPOCHS = 20_000  # epochs per (scheme, r) for ttt and optimize (plan samples PLAN_POOL_EPOCHS)


def _pool_kernel(scheme: str, placement, model: FailureModel, scenario):
    # one compiled kernel per (layout, N, r, model, scenario); constant-depth schemes (rep, none, spare with
    # r = 1) share the wipe-out path
    return _pool_kernel_jit(scheme == "spare" and placement.redundancy > 1, placement.kind, placement.groups,
                            placement.redundancy, model, scenario)


@functools.lru_cache(maxsize=64)
def _pool_kernel_jit(adaptive: bool, kind: str, n: int, r: int, model: FailureModel, scenario):
    from ..kernels.overhead import scenario_depth_path
    from ..model.placement import make_placement
    from ..kernels.wipeout import scenario_wipeout_kernel

    placement = make_placement(kind, n, r)

    def kernel(words, ids):
        if adaptive:
            thresholds, times, _ = scenario_depth_path(words, ids, placement, model, scenario)
            b = jnp.take_along_axis(times, thresholds, axis=1)
            return b[:, -1], b
        _, end, _, _ = scenario_wipeout_kernel(words, ids, placement, model, scenario)
        # depth r (rep) or 1 (none, spare r = 1) for the whole epoch: all breakpoints but the last at 0
        b = jnp.concatenate([jnp.zeros((end.shape[0], r), jnp.float32), end[:, None]], axis=1)
        return end, b

    return jax.jit(kernel)


def sample_scenario_epochs(scheme: str, groups: int, redundancy: int, epochs: int, seed: int = 0,
                           model: FailureModel = FailureModel(), scenario=None, progress: bool = False) -> EpochPool:
    """``epochs`` i.i.d. epochs of a scheme under ``scenario``: uptime (restart to wipe-out or job-wide
    interruption) and depth breakpoints, from the scenario kernels (``overhead.scenario_depth_path`` for
    ``spare``, ``wipeout.scenario_wipeout_kernel`` otherwise). The same seed gives the same leading epochs
    whatever ``epochs`` is. The ring order applies to every scheme (``rep``'s replica sets are blocks of
    consecutive ring positions)."""
    from ..kernels.driver import Execution, as_uint32_key_words, run_chunked
    from ..model.placement import make_placement
    from ..model.scenario import Scenario

    scenario = Scenario() if scenario is None else scenario
    n, r = check_groups_redundancy(groups, redundancy)
    scenario.check(n)
    if model.distribution != "exponential":
        raise ValueError("time-to-train under a scenario with domains, lemons or a ring order is simulated for "
                         "exponential failures only (no closed form, and kept Weibull ages are not simulated "
                         "under a scenario)")
    kind, r = scheme_placement(scheme, n, r)
    pl = make_placement(kind, n, r)
    words = as_uint32_key_words(seed)
    fn = _pool_kernel(scheme, pl, model, scenario)
    ups, bps = [], []

    def consume(index, host, saved=None):
        ups.append(np.asarray(host[0], np.float64))
        bps.append(np.asarray(host[1], np.float64))
        return {}

    run_chunked(lambda aux, ids: fn(aux, ids), int(epochs), consume,
                Execution(n * max(r, 2), desc=f"epochs {scheme} N={n} r={r} (scenario)", progress=progress,
                          bytes_per_item=8),
                aux=words, cache_key=("pool", fn))  # fn: one per static shape (_pool_kernel_jit)
    m = scenario.microbatches if scheme == "spare" and r > 1 else 1
    return EpochPool(scheme, n, r, np.concatenate(ups), np.concatenate(bps), depths=_level_depths(r, m))


def sample_repair_epochs(cluster: Cluster, scheme: str, redundancy: int, sampling: Sampling,
                         max_time: float | None = None) -> EpochPool:
    """``sampling.count`` i.i.d. epochs (seed ``sampling.seed``) of ``scheme`` at redundancy r on ``cluster``
    (its groups, failure law, scenario and repair law) with repair (docs/repair.md#repair-without-a-global-restart):
    restart (all up) ->
    wipe-out, failed groups rejoining.

    ``spare``: the event kernel's epochs with repair, tracking the depth, give per epoch U and W = int 1/d*; the pool keeps the work
    rate W/U, taken as constant within the epoch (``EpochPool.work_rate``; the approximation is discussed in
    ``docs/repair.md`` and tested against exact brute-force runs). ``rep``: block replica sets at depth r
    (rate 1/r); ``none``: r = 1 (rate 1; repair cannot help). ``max_time``: epochs censored there (treated as
    ending at ``max_time``; pick it longer than any run needs so runs never reach it)."""
    from ..model.placement import make_placement
    from ..kernels.repair import EpochOptions, repair_epochs

    n, r = check_groups_redundancy(cluster.groups, redundancy)
    kind, r = scheme_placement(scheme, n, r)
    pl = make_placement(kind, n, r)
    adaptive = scheme == "spare" and r > 1
    up, work, _ = repair_epochs(pl, sampling, model=cluster.model, scenario=cluster.scenario, repair=cluster.repair,
                                options=EpochOptions(track_depth=adaptive, max_time=max_time))
    if not adaptive:
        work = up / r
    rate = np.where(up > 0, work / np.where(up > 0, up, 1.0), 1.0 / r)
    bps = np.concatenate([np.zeros((up.size, r)), up[:, None]], axis=1)  # unused with a work rate
    return EpochPool(scheme, n, r, up, bps, work_rate=rate)


def pool_ttt(pool: EpochPool, taus, cfg: Training = Training(), gpus: float | None = None):
    """The renewal-reward TTT (minutes) and its standard error for each tau in ``taus``, on ``pool``.

    Returns ``(ttt_min float64[K], stderr_min float64[K], mean_committed float64[K])``; an interval that
    commits nothing on the pool gives TTT = inf."""
    taus = np.atleast_1d(np.asarray(taus, np.float64))
    restart = cfg.restart_for(gpus if gpus is not None else cfg.reference_gpus)
    work = cfg.work_hours * 60.0
    n = pool.uptime.size
    ttt, se, ybar = np.full(taus.size, np.inf), np.full(taus.size, np.inf), np.zeros(taus.size)
    for i, tau in enumerate(taus):
        period = tau + cfg.ckpt_cost_min
        y, busy = epoch_yield(pool, tau, period, cfg.ckpt_cost_min)
        cycle = busy + restart
        ybar[i] = y.mean()
        if ybar[i] <= 0:
            continue
        ratio = cycle.mean() / ybar[i]
        ttt[i] = work * ratio
        # delta method for a ratio of means: Var(c - ratio * y) / (n ybar^2)
        resid = cycle - ratio * y
        se[i] = work * math.sqrt(resid.var(ddof=1) / n) / ybar[i] if n > 1 else math.inf
    return ttt, se, ybar


def pool_theory(pool: EpochPool, tau_min: float, cfg: Training = Training(),
                gpus: float | None = None) -> dict:
    """``ttt_theory``'s keys for one tau from the pool's renewal-reward estimate (plus its standard error)."""
    restart = cfg.restart_for(gpus if gpus is not None else cfg.reference_gpus)
    ttt, se, _ = pool_ttt(pool, [tau_min], cfg, gpus)
    mean_u = float(pool.uptime.mean())
    return {"ttt_hours": float(ttt[0]) / 60.0, "ttt_stderr_hours": float(se[0]) / 60.0,
            "ttt_over_w": float(ttt[0]) / 60.0 / cfg.work_hours,
            "availability": mean_u / (mean_u + restart), "goodput": cfg.work_hours * 60.0 / float(ttt[0]),
            "expected_restarts": float(ttt[0]) / (mean_u + restart), "mean_uptime_min": mean_u,
            "restart_min": restart, "epochs": int(pool.uptime.size)}


def best_tau_pool(pool: EpochPool, cfg: Training = Training(), gpus: float | None = None,
                  points: int = 96) -> tuple[float, float]:
    """(tau, TTT minutes) minimising the pool's renewal-reward TTT on a log grid around the Daly interval
    (``sqrt(2 C (E[U] + R))``, E[U] the pool mean), refined by a parabola in log tau."""
    restart = cfg.restart_for(gpus if gpus is not None else cfg.reference_gpus)
    mean_u = float(pool.uptime.mean())
    daly = math.sqrt(2 * max(cfg.ckpt_cost_min, 1e-9) * (mean_u + restart))
    low = max(0.05, daly / 20)
    taus = np.exp(np.linspace(math.log(low), math.log(max(daly * 8, 2 * low)), points))
    vals = pool_ttt(pool, taus, cfg, gpus)[0]
    best = int(np.argmin(vals))
    if 0 < best < points - 1 and np.all(np.isfinite(vals[best - 1: best + 2])):
        x, y = np.log(taus[best - 1: best + 2]), vals[best - 1: best + 2]
        a, b, _ = np.polyfit(x, y, 2)
        if a > 0:
            tau = float(np.exp(np.clip(-b / (2 * a), x[0], x[2])))
            val = float(pool_ttt(pool, [tau], cfg, gpus)[0][0])
            if val <= vals[best]:
                return tau, val
    return float(taus[best]), float(vals[best])


def optimize_pool(cluster: Cluster, cfg: Training, space: Space = Space(), schemes=SCHEMES,
                  progress: bool = False, max_time: float | None = None) -> dict:
    """``optimize`` under a scenario with no closed form, or with repair: per scheme and r up to
    ``space.r_max`` a pool of ``space.epochs`` epochs (None: ``POOL_EPOCHS``) on ``cluster`` (its
    scenario; with its repair law, epochs with rejoins censored at ``max_time``, ``sample_repair_epochs``),
    the same ``space.seed`` for every r (common random numbers), tau* by ``best_tau_pool``, r* the least TTT.
    (``space``'s ages, micro-batch counts and restart depths are not read.) Returns the per-scheme entries
    of ``closed_form.optimize_r_tau`` plus ``ttt_stderr_hours``, and the curves."""
    from ..kernels.progress import Progress

    model, scenario, repair = cluster.model, cluster.scenario, cluster.repair
    r_max, epochs, seed = space.r_max, space.epochs or POOL_EPOCHS, space.seed
    n = check_groups_redundancy(cluster.groups, 1)[0]
    gpus = n * model.gpus_per_group
    searched = {}
    for s in schemes:
        rs = [1] if s == "none" else list(range(1, min(int(r_max), n) + 1))
        searched[s] = [r for r in rs if n % r == 0] if s == "rep" else rs
    bar = Progress(sum(len(v) for v in searched.values()), f"optimize N={n} (scenario Monte Carlo, {epochs} "
                   "epochs per r)", enabled=progress, unit="pool")
    out, curves = {}, {}
    for scheme in schemes:
        best, curves[scheme] = None, []
        for r in searched[scheme]:
            if cluster.epoch_kernel == "scenario":
                pool = sample_scenario_epochs(scheme, n, r, epochs, seed, model, scenario)
            else:
                pool = sample_repair_epochs(cluster, scheme, r, Sampling(epochs, seed), max_time)
            tau, ttt_min = best_tau_pool(pool, cfg, gpus)
            th = pool_theory(pool, tau, cfg, gpus)
            curves[scheme].append({"redundancy": r, "ckpt_interval_min": tau, "ttt_hours": th["ttt_hours"],
                                   "ttt_stderr_hours": th["ttt_stderr_hours"],
                                   "mean_uptime_min": th["mean_uptime_min"]})
            if best is None or th["ttt_hours"] < best[1]["ttt_hours"]:
                best = (r, th, tau)
            bar.update(1)
        r_star, th, tau = best
        daly = math.sqrt(2 * max(cfg.ckpt_cost_min, 1e-9) * (th["mean_uptime_min"] + th["restart_min"]))
        out[scheme] = {"r_star": r_star, "ckpt_interval_min": tau, "ttt_hours": th["ttt_hours"],
                       "ttt_stderr_hours": th["ttt_stderr_hours"],
                       "availability_pct": 100.0 * th["availability"],
                       "ttt_over_w": th["ttt_over_w"], "goodput": th["goodput"],
                       "young_interval_min": math.sqrt(2 * max(cfg.ckpt_cost_min, 1e-9) * th["mean_uptime_min"]),
                       "daly_interval_min": daly, "mean_uptime_min": th["mean_uptime_min"],
                       "r_searched": searched[scheme]}
    bar.close()
    extra = {} if repair is None else {"repair": repair.describe(), "max_time_min": max_time}
    return {"schemes": out, "curves": curves, "epochs_per_r": int(epochs), "seed": int(seed), **extra,
            "method": ("Monte Carlo renewal-reward: W (mean U + R) / mean committed work, on one pool of "
                       f"{int(epochs)} epochs per (scheme, r)")}
