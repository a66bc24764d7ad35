r"""Time-to-train: the configuration, the renewal-reward closed form, Young/Daly, tau* and the (r, tau)
optimiser. The model and the derivation are in the package docstring (``spare_jax.ttt``)."""

from __future__ import annotations

import dataclasses
import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import theory
from ..model.cluster import Cluster
from ..results import Report
from ..model.failures import FailureModel
from ..model.placement import check_groups_redundancy
from .config import (  # noqa: F401  (kept importable from here)
    AGES, RESTART_SCALING, SCHEMES, Policy, Space, Training, check_ages, scheme_placement)

# ---------------------------------------------------------------------------------------------------------
# Theory


@dataclasses.dataclass
class EpochProfile:
    """``S(t) = P(U > t)`` and ``H(t) = int_0^t E[1/d | U > u] du`` on a time grid (minutes)."""

    scheme: str
    groups: int
    redundancy: int
    t: np.ndarray
    survival: np.ndarray
    work: np.ndarray
    mean_uptime_min: float
    # ``none`` with exponential clocks: the constant interruption rate (per minute), for the exact TTT
    # (``none_ttt_exact``); None elsewhere
    interruption_rate: float | None = None

    def as_jax(self):
        return (jnp.asarray(self.t, jnp.float32), jnp.asarray(np.log(np.maximum(self.survival, 1e-300)), jnp.float32),
                jnp.asarray(self.work, jnp.float32))


def epoch_profile(scheme: str, groups: int, redundancy: int, model: FailureModel = FailureModel(),
                  points: int | None = None, ages: str = "kept", job_rate: float = 0.0,
                  microbatches: int = 1) -> EpochProfile:
    """Exact-theory epoch profile (see the module docstring) for exponential failures, and for any Weibull
    law with ``ages="renewed"``.

    With renewed ages (or exponential failures) every group has failed by time t independently with
    probability ``F(t)``; ``theory.depth_profile_in_time`` gives ``P(d*(t) <= d, U > t)`` on a grid of the
    cumulative hazard ``x`` (``F = 1 - e^{-x}``), mapped to minutes by ``theory.time_from_hazard``
    (``t = x / lambda``, Weibull ``t = scale x^{1/k}``). ``E[U] = int S(t) dt`` by the trapezoid rule on the
    same grid (so the ratio uses one consistent S); it equals the order-statistic-spacing form
    ``theory.renewed_uptime_and_work`` up to the quadrature error (tested).

    ``ages="kept"`` (the default, see ``AGES``) with a non-exponential law has no closed form (epochs form
    a Markov chain in the survivors' ages) and is refused: use ``ages="renewed"`` for the renewed model or
    the Monte Carlo (``sample_epochs(..., ages="kept")``). For exponential failures the two are the same
    model (memorylessness), so ``ages`` is irrelevant there.

    ``job_rate`` (per minute; ``Scenario.job_rate_per_min``): job-wide interruptions
    (docs/scenarios.md#real-clusters-scenarios), a Poisson process independent of the group failures that ends the
    epoch like a wipe-out. Exactly: ``S_J(t) = S(t) e^{-mu t}``, and the depth given that the epoch is still up is
    unchanged (``E[1/d | U_J > t] = E[1/d | U > t]``), so only the survival (and ``E[U] = int S_J``) change.

    ``microbatches`` m (docs/microbatches.md#how-it-works; ``spare``): the profile runs over the capacity levels of
    ``theory.depth_cdf`` at their depths ``c / m``; m = 1 is the paper.
    """
    n, r = check_groups_redundancy(groups, redundancy)
    ages = check_ages(ages)
    if model.distribution != "exponential" and ages == "kept":
        raise ValueError("no closed form for non-exponential failures with ages='kept' (survivors keep their "
                         "age across restarts, so epochs are a Markov chain): use ages='renewed' for the "
                         "closed form of the renewed model, or the Monte Carlo (sample_epochs, ages='kept')")
    kind, r = scheme_placement(scheme, n, r)
    m = int(microbatches) if scheme == "spare" else 1
    x, cdf = theory.depth_profile_in_time(kind, n, r, points, depth=(scheme == "spare"), microbatches=m)
    if model.distribution == "exponential":
        t = x / model.group_rate_per_min  # exponential clocks: the hazard is linear in time, t = x / lambda
    else:
        t = theory.time_from_hazard(x, model)
    s_t = cdf[:, -1]
    job_rate = float(job_rate)
    if not (math.isfinite(job_rate) and job_rate >= 0):
        raise ValueError(f"job_rate must be a finite number >= 0, got {job_rate!r}")
    if scheme == "spare":
        g_t = (np.diff(cdf, axis=1) / theory.level_depths(r, m)).sum(axis=1)
    else:
        g_t = s_t / (r if scheme == "rep" else 1)
    rate = np.where(s_t > 1e-300, g_t / np.maximum(s_t, 1e-300), 0.0)  # E[1/d | U > t]
    if job_rate > 0:
        s_t = s_t * np.exp(-job_rate * t)
    dt = np.diff(t)
    work = np.concatenate([[0.0], np.cumsum(0.5 * (rate[1:] + rate[:-1]) * dt)])
    mean_uptime = float(np.sum(0.5 * (s_t[1:] + s_t[:-1]) * dt))
    exact = n * model.group_rate_per_min + job_rate if scheme == "none" and model.distribution == "exponential" \
        else None
    return EpochProfile(scheme, n, r, t, s_t, work, mean_uptime, exact)


def none_ttt_exact(rate: float, taus, ckpt: float, restart: float, work_min: float):
    r"""The exact expected TTT (minutes) of checkpointing alone with a constant interruption rate
    ``rate``: ``K = ceil(W / tau)`` intervals, the last one partial (``W - (K-1) tau`` of work), each
    followed by its checkpoint C; an interruption loses the interval (and its checkpoint) and costs a
    restart R during which nothing fails. An interval of wall length L takes in expectation
    ``(e^{rate L} - 1)(1 / rate + R)`` (geometric retries), so
    ``E[TTT] = (K - 1) g(tau + C) + g(W - (K - 1) tau + C)``, ``g(L) = (e^{rate L} - 1)(1/rate + R)``.
    Returns ``(ttt_min, expected interruptions)`` for each tau."""
    taus = np.atleast_1d(np.asarray(taus, np.float64))
    k = np.ceil(work_min / taus - 1e-9)
    last = work_min - (k - 1) * taus
    ex_full, ex_last = np.expm1(rate * (taus + ckpt)), np.expm1(rate * (last + ckpt))
    fails = (k - 1) * ex_full + ex_last
    return fails * (1.0 / rate + restart), fails


def _ttt_closed_form(log_tau, ckpt, restart, work_min, grid, mean_uptime, max_ckpts: int, xp=jnp):
    """Renewal-reward TTT (minutes) for log tau, summing checkpoints 1..max_ckpts, on the profile's ``grid``
    ``(t, log S(t), H(t))``; ``xp`` = jax.numpy
    (differentiable) or numpy (vectorised over a trailing axis of ``log_tau`` values). Callers pass a
    ``max_ckpts`` that reaches the end of the profile grid (``_ckpts_to_grid_end``); the numpy callers use
    ``_ttt_closed_form_np``, which sums in blocks with no cap."""
    t, log_s, h = grid
    tau = xp.exp(xp.asarray(log_tau))[..., None]
    period = tau + ckpt
    i = xp.arange(1, max_ckpts + 1)
    c = i * period
    s_start = c - period
    surv = xp.exp(xp.interp(c, t, log_s, right=-1e4))
    gain = xp.interp(s_start + tau, t, h) - xp.interp(s_start, t, h)
    expected_work = xp.sum(surv * gain, axis=-1)
    return work_min * (mean_uptime + restart) / expected_work


def _ckpts_to_grid_end(t_end: float, tau: float, ckpt: float) -> int:
    """Number of checkpoints completed by the end of the profile grid (+1): every term of E[Y] with
    ``c_i <= t_end``. Beyond ``t_end`` the profile's survival is below 1e-13 (``depth_profile_in_time``) and
    is taken as 0, exactly as in ``E[U] = int S``; no other truncation is made."""
    return int(math.ceil(t_end / (tau + ckpt))) + 1


_BLOCK_ELEMS = 1 << 22  # (taus x checkpoints) terms per block of the numpy sum
GRID_MAX_TERMS = 1e6  # checkpoints per tau of best_tau_grid's search grid
JAX_MAX_CKPTS = 1 << 21  # largest static checkpoint count of the differentiable (optax) sum


GEOMETRIC_MIN_TERMS = 1e6  # beyond this many checkpoints per tau, ``_expected_work_by_cells``


def _expected_work_by_cells(tau: float, ckpt: float, t, log_s, h) -> float:
    r"""``E[Y] = \sum_i S(c_i) \Delta H_i`` (``c_i = i (tau + C)``, ``\Delta H_i = H(c_i - C) - H(c_i - tau - C)``)
    with log S and H interpolated linearly on the grid ``t``, exactly as the block sum, in O(grid) work
    whatever tau: the checkpoints whose interval ``[c_i - tau - C, c_i]`` lies inside one grid cell j have
    ``S(c_i) = exp(log S_j + (c_i - t_j) b_j)`` and ``\Delta H_i = tau h'_j``, a geometric series summed in
    closed form; the few that straddle a grid point are summed term by term."""
    period = tau + ckpt
    t0, t1 = t[:-1], t[1:]
    width = t1 - t0
    ok = width > 0
    bs = np.where(ok, np.diff(log_s) / np.where(ok, width, 1.0), 0.0)
    bh = np.where(ok, np.diff(h) / np.where(ok, width, 1.0), 0.0)
    first = np.ceil(t0 / period) + 1.0  # c_i - period >= t_j
    last = np.floor(t1 / period)  # c_i <= t_{j+1}
    n = np.maximum(last - first + 1.0, 0.0)
    x = period * bs
    with np.errstate(over="ignore", invalid="ignore"):
        ratio = np.where(np.abs(x) > 1e-300, np.expm1(n * x) / np.where(x != 0, np.expm1(x), 1.0), n)
        lead = np.exp(log_s[:-1] + (first * period - t0) * bs)
        cells = np.where(n > 0, lead * ratio * tau * bh, 0.0)
    # the straddling checkpoints: every i up to the grid end that no cell holds
    total = _ckpts_to_grid_end(float(t[-1]), tau, ckpt)
    some = n > 0  # the cells' index ranges are disjoint and in order: the gaps between them, and the ends
    lo = np.concatenate([[1.0], last[some] + 1.0])
    hi = np.concatenate([first[some] - 1.0, [float(total)]])
    count = np.maximum(hi - lo + 1.0, 0.0).astype(np.int64)
    offsets = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
    c = (np.repeat(lo, count) + offsets) * period
    surv = np.exp(np.interp(c, t, log_s, right=-1e4))
    gain = np.interp(c - ckpt, t, h) - np.interp(c - period, t, h)
    return float(cells.sum() + np.sum(surv * gain))


def _ttt_closed_form_np(taus, ckpt, restart, work_min, t, log_s, h, mean_uptime) -> np.ndarray:
    r"""The closed form (float64, numpy) for an array of tau values, with ``E[Y] = \sum_i S(c_i) \Delta H_i``
    summed in blocks of checkpoints until every tau's checkpoints pass the end of the profile grid; beyond
    ``GEOMETRIC_MIN_TERMS`` checkpoints (tau + C of 0.001 min over a 10^4-min grid is 10^7) the same sum is
    taken grid cell by grid cell (``_expected_work_by_cells``), in a time that does not grow as tau shrinks."""
    taus = np.atleast_1d(np.asarray(taus, np.float64))
    period = taus + ckpt
    total = np.array([_ckpts_to_grid_end(float(t[-1]), float(x), ckpt) for x in taus])
    if total.max() > GEOMETRIC_MIN_TERMS:  # many checkpoints per grid cell: sum them cell by cell
        acc = np.array([_expected_work_by_cells(float(x), ckpt, t, log_s, h) for x in taus])
        with np.errstate(divide="ignore"):
            return work_min * (mean_uptime + restart) / acc
    block = int(min(total.max(), max(1024, _BLOCK_ELEMS // taus.size)))
    acc = np.zeros(taus.size)
    start = 0
    while start < total.max():
        i = np.arange(start + 1, start + block + 1, dtype=np.float64)
        live = i[None, :] <= total[:, None]
        c = i[None, :] * period[:, None]
        s_start = c - period[:, None]
        surv = np.exp(np.interp(c, t, log_s, right=-1e4))
        gain = np.interp(s_start + taus[:, None], t, h) - np.interp(s_start, t, h)
        acc += np.sum(np.where(live, surv * gain, 0.0), axis=-1)
        start += block
    with np.errstate(divide="ignore"):
        return work_min * (mean_uptime + restart) / acc


TAU_FLOOR_MIN = 0.05  # the shortest checkpoint interval the searches try (minutes); an answer there is a floor


def best_tau_grid(profile: "EpochProfile", cfg: "Training", gpus: float | None = None,
                  points: int = 96) -> tuple[float, float]:
    """(tau, TTT minutes) minimising the closed form on a log grid around the Daly interval (numpy)."""
    restart = cfg.restart_for(gpus if gpus is not None else cfg.reference_gpus)
    daly = young_daly(profile, cfg, gpus)["daly_min"]
    # the grid's low end keeps every tau's checkpoint sum within GRID_MAX_TERMS (a bounded search; an
    # interval that short is still evaluated exactly by ttt_theory when asked for)
    low = max(TAU_FLOOR_MIN, daly / 20, float(profile.t[-1]) / GRID_MAX_TERMS - cfg.ckpt_cost_min)
    taus = np.exp(np.linspace(math.log(low), math.log(max(daly * 8, 2 * low)), points))
    if profile.interruption_rate is not None:  # exact ``none``: every even split the grid spans
        work = cfg.work_hours * 60.0
        ks = np.arange(max(1.0, math.floor(work / taus[-1])), math.ceil(work / taus[0]) + 1)
        return none_best_even_split(profile.interruption_rate, ks, cfg.ckpt_cost_min, restart, work)
    log_s = np.log(np.maximum(profile.survival, 1e-300))
    with np.errstate(divide="ignore", over="ignore"):  # intervals too short to commit anything: TTT = inf
        vals = _closed_form_values(profile, taus, cfg, restart, log_s)
    best = int(np.argmin(vals))
    # refine with a parabola in log tau
    if 0 < best < points - 1:
        x = np.log(taus[best - 1: best + 2])
        y = vals[best - 1: best + 2]
        den = (x[0] - x[1]) * (x[0] - x[2]) * (x[1] - x[2])
        a = (x[2] * (y[1] - y[0]) + x[1] * (y[0] - y[2]) + x[0] * (y[2] - y[1])) / den
        b = (x[2] ** 2 * (y[0] - y[1]) + x[1] ** 2 * (y[2] - y[0]) + x[0] ** 2 * (y[1] - y[2])) / den
        if a > 0:
            tau = float(np.exp(-b / (2 * a)))
            return tau, float(ttt_theory(profile, tau, cfg, gpus)["ttt_hours"] * 60.0)
    return float(taus[best]), float(vals[best])


def none_best_even_split(rate: float, ks, ckpt: float, restart: float, work_min: float) -> tuple[float, float]:
    """(tau, TTT minutes) of the best even split W / K over the counts ``ks`` (``none_ttt_exact``): for a
    fixed count K of intervals the TTT grows with tau (the last interval shrinks and g is convex), so the
    optimum over every tau is an even split."""
    even = work_min / np.asarray(ks, np.float64)
    with np.errstate(over="ignore"):
        ttt = none_ttt_exact(rate, even, ckpt, restart, work_min)[0]
    best = int(np.argmin(ttt))
    return float(even[best]), float(ttt[best])


def _closed_form_values(profile: EpochProfile, taus, cfg: "Training", restart: float, log_s) -> np.ndarray:
    """TTT (minutes) for each tau: exact for ``none`` with a constant rate, else the renewal-reward form."""
    if profile.interruption_rate is not None:
        return none_ttt_exact(profile.interruption_rate, taus, cfg.ckpt_cost_min, restart, cfg.work_hours * 60.0)[0]
    return _ttt_closed_form_np(taus, cfg.ckpt_cost_min, restart, cfg.work_hours * 60.0, profile.t, log_s,
                               profile.work, profile.mean_uptime_min)


def ttt_theory(profile: EpochProfile, tau_min: float, cfg: Training = Training(),
               gpus: float | None = None) -> Report:
    """Closed-form time-to-train and availability for one interval tau (minutes)."""
    if not (isinstance(tau_min, (int, float)) and math.isfinite(tau_min) and tau_min > 0):
        raise ValueError(f"ckpt_interval (tau) must be a positive number of minutes, got {tau_min!r}")
    restart = cfg.restart_for(gpus if gpus is not None else cfg.reference_gpus)
    with np.errstate(over="ignore"):
        ttt = float(_closed_form_values(profile, [tau_min], cfg, restart,
                                        np.log(np.maximum(profile.survival, 1e-300)))[0])
    epochs = ttt / (profile.mean_uptime_min + restart)
    if profile.interruption_rate is not None:
        with np.errstate(over="ignore"):
            epochs = float(none_ttt_exact(profile.interruption_rate, [tau_min], cfg.ckpt_cost_min, restart,
                                          cfg.work_hours * 60.0)[1][0])
    return Report({"ttt_hours": ttt / 60.0, "ttt_over_w": ttt / 60.0 / cfg.work_hours,
                   "availability": profile.mean_uptime_min / (profile.mean_uptime_min + restart),
                   "goodput": cfg.work_hours * 60.0 / ttt, "expected_restarts": epochs,
                   "mean_uptime_min": profile.mean_uptime_min, "restart_min": restart})


def young_daly(profile: EpochProfile, cfg: Training = Training(), gpus: float | None = None) -> Report:
    """Young's and Daly's checkpoint intervals (minutes) from the mean epoch uptime."""
    m = profile.mean_uptime_min
    restart = cfg.restart_for(gpus if gpus is not None else cfg.reference_gpus)
    c = max(cfg.ckpt_cost_min, 1e-9)
    return Report({"young_min": math.sqrt(2 * c * m), "daly_min": math.sqrt(2 * c * (m + restart))})


@functools.lru_cache(maxsize=16)
def _tau_adam(max_ckpts: int, steps: int, learning_rate: float):
    """jit of the whole Adam search on log tau (a ``lax.scan`` of ``steps`` steps) for a static checkpoint
    count: ``run(log_tau0, log_floor, ckpt, restart, work_min, mean_uptime, t, log_s, h) -> (best log TTT,
    its tau)``, the best over the steps of the loss at the parameters before each update."""
    import optax

    def loss(log_tau, ckpt, restart, work_min, mean_uptime, t, log_s, h):
        return jnp.log(_ttt_closed_form(log_tau, ckpt, restart, work_min, (t, log_s, h), mean_uptime, max_ckpts))

    value_and_grad = jax.value_and_grad(loss)
    opt = optax.adam(learning_rate)

    def run(params, log_floor, *args):
        def step(carry, _):
            params, state, best_value, best_tau = carry
            value, g = value_and_grad(params, *args)
            better = value < best_value
            best_value = jnp.where(better, value, best_value)
            best_tau = jnp.where(better, jnp.exp(params), best_tau)
            updates, state = opt.update(g, state)
            return (jnp.maximum(params + updates, log_floor), state, best_value, best_tau), None

        init = (params, opt.init(params), jnp.float32(jnp.inf), jnp.exp(params))
        (_, _, best_value, best_tau), _ = jax.lax.scan(step, init, None, length=steps)
        return best_value, best_tau

    return jax.jit(run)


def optimize_tau(profile: EpochProfile, cfg: Training = Training(), gpus: float | None = None,
                 steps: int = 150, learning_rate: float = 0.05) -> Report:
    """tau* minimising the closed form, by Adam (optax) on log tau from the Daly interval (float32).

    The differentiable sum needs a static number of checkpoint terms: every checkpoint up to the end of the
    profile grid at the smallest tau searched (``_ckpts_to_grid_end``). Where that exceeds
    ``JAX_MAX_CKPTS`` (tau + C tiny against the mean epoch) the optimum is taken from ``best_tau_grid``
    instead (numpy, summed in blocks, no cap), rather than truncating the sum.
    """
    restart = cfg.restart_for(gpus if gpus is not None else cfg.reference_gpus)
    start = young_daly(profile, cfg, gpus)["daly_min"]
    tau_floor = max(TAU_FLOOR_MIN, 0.02 * start)
    max_ckpts = _ckpts_to_grid_end(float(profile.t[-1]), tau_floor, cfg.ckpt_cost_min)
    if max_ckpts > JAX_MAX_CKPTS or profile.interruption_rate is not None:  # (exact ``none``: even splits)
        tau = best_tau_grid(profile, cfg, gpus)[0]
        return Report(dict(ttt_theory(profile, tau, cfg, gpus), ckpt_interval_min=tau))
    t, log_s, h = profile.as_jax()
    # padded to a power of two (the terms past the grid end are exactly 0), so one compiled search serves
    # every profile of a given grid size and checkpoint-count bucket (optimize calls this once per scheme);
    # the steps run inside one jit (a scan), not one dispatch per optax operation
    run = _tau_adam(1 << (max_ckpts - 1).bit_length(), int(steps), float(learning_rate))
    consts = tuple(jnp.float32(v) for v in (cfg.ckpt_cost_min, restart, cfg.work_hours * 60.0,
                                            profile.mean_uptime_min))
    best_value, best_tau = run(jnp.log(jnp.float32(start)), jnp.float32(math.log(tau_floor)), *consts, t, log_s, h)
    tau = float(best_tau) if math.isfinite(float(best_value)) else float(start)
    return Report(dict(ttt_theory(profile, tau, cfg, gpus), ckpt_interval_min=tau))


def optimize_r_tau(cluster: Cluster = Cluster(), cfg: Training = Training(), space: Space = Space(),
                   schemes=SCHEMES, progress: bool = False) -> Report:
    """Per scheme: r* (search over 1..r_max; ``rep`` only over the divisors of N, listed in
    ``r_searched``), tau*, TTT and availability: from the interval-by-interval form where it answers
    (``answer.closed_form_answers``; ``_interval_form_optimum``: exact for rep and none), else from the
    renewal-reward form (tau* by optax), which also screens spare's r.

    ``cluster``: the N groups, their failure law and the scenario (a cluster with repair is refused:
    ``pool.optimize_pool`` takes it). ``space`` (``config.Space``): ``r_max``, the clocks' ``ages``, and
    ``epochs`` and ``seed`` of the pools where no closed form applies; its micro-batch counts and restart
    depths are not read here (``policy.optimize_policy`` searches them).

    Closed form only: exponential failures (any ``ages``: the same model) or any Weibull law with
    ``ages="renewed"``. Weibull with ``ages="kept"`` is refused (no closed form: the epochs are a Markov
    chain in the survivors' ages); the message points to ``ages="renewed"`` for the renewed model's optimum
    and to ``spare-jax ttt --ages kept`` to check that optimum by Monte Carlo.

    The scenario (``scenario.Scenario``) gives the job-wide rate (0 when off); with domains, a ring order or uneven
    groups (``needs_kernel``) there is no closed form and each (scheme, r) is estimated on a Monte Carlo pool of
    ``space.epochs`` epochs (``pool.optimize_pool``, exponential failures; default ``pool.POOL_EPOCHS``), the
    same ``space.seed`` for every r. ``scenario.microbatches`` (docs/microbatches.md#how-it-works) applies to
    ``spare`` (the closed form over capacity levels; ``policy`` searches m and the proactive restart).
    """
    from ..kernels.progress import Progress

    model, scenario, r_max = cluster.model, cluster.scenario, space.r_max
    if cluster.repair is not None:
        raise ValueError("optimize_r_tau has no repair: pool.optimize_pool (or ttt.optimize) optimizes with it")
    n = check_groups_redundancy(cluster.groups, 1)[0]
    ages = check_ages(space.ages)
    if isinstance(r_max, bool) or int(r_max) < 1:
        raise ValueError(f"r_max must be >= 1, got {r_max!r}")
    if model.distribution != "exponential" and ages == "kept":
        raise ValueError("optimize uses the closed form, which has no kept-ages version for non-exponential "
                         "failures: use `ages` renewed for the optimum of the renewed model, then check it "
                         "with the kept-ages Monte Carlo at that r and tau (`ages` kept)")
    gpus = n * model.gpus_per_group
    scenario.check(n)
    job_rate = scenario.job_rate_per_min(n, model.group_mtbf_min)
    from .router import scenario_pool

    if scenario_pool(cluster):  # no closed form of the scenario: pools of epochs of its kernels
        from .pool import optimize_pool

        res = optimize_pool(cluster, cfg, space, schemes, progress)
        return Report(_optimize_result(cluster, cfg, ages, job_rate, res["schemes"], res["curves"],
                                {s: v["r_searched"] for s, v in res["schemes"].items()},
                                {"method": res["method"], "epochs_per_r": res["epochs_per_r"], "seed": res["seed"],
                                 "scenario": scenario.describe()}))
    out, curves, notes = {}, {}, []

    def r_values(scheme):
        if scheme == "none":
            return [1]
        rs = range(1, min(int(r_max), n) + 1)
        return [r for r in rs if n % r == 0] if scheme == "rep" else list(rs)

    searched = {s: r_values(s) for s in schemes}
    mb = scenario.microbatches
    jobs = [(s, r) for s in schemes for r in searched[s]]
    bar = Progress(len(jobs), f"optimize N={n} (closed form)", enabled=progress, unit="profile")
    for scheme in schemes:
        best = None
        curves[scheme] = []
        for r in searched[scheme]:
            prof = epoch_profile(scheme, n, r, model, ages=ages, job_rate=job_rate, microbatches=mb)
            tau, ttt_min = best_tau_grid(prof, cfg, gpus)
            curves[scheme].append({"redundancy": r, "ckpt_interval_min": tau, "ttt_hours": ttt_min / 60.0})
            if best is None or ttt_min < best[1]:
                best = (r, ttt_min, prof)
            bar.update(1)
        r_star, _, prof = best
        interval = _interval_form_optimum(cluster, cfg, scheme, curves[scheme], r_star, ages)
        if interval is not None:  # the interval-by-interval form answers: r* and tau* from it
            r_star, opt, note = interval
            prof = epoch_profile(scheme, n, r_star, model, ages=ages, job_rate=job_rate, microbatches=mb)
            if note:
                notes.append(note)
        else:
            opt = optimize_tau(prof, cfg, gpus)
        yd = young_daly(prof, cfg, gpus)
        out[scheme] = {"r_star": r_star, "ckpt_interval_min": opt["ckpt_interval_min"],
                       "ttt_hours": opt["ttt_hours"], "availability_pct": 100.0 * opt["availability"],
                       "ttt_over_w": opt["ttt_over_w"], "goodput": opt["goodput"],
                       "young_interval_min": yd["young_min"], "daly_interval_min": yd["daly_min"],
                       "mean_uptime_min": prof.mean_uptime_min, "r_searched": searched[scheme]}
    bar.close()
    res = _optimize_result(cluster, cfg, ages, job_rate, out, curves, searched,
                           {"method": "closed form", **({} if mb == 1 else {"microbatches": mb})})
    if notes:
        res["notes"] = res.get("notes", []) + notes
    return Report(res)


SPARE_WINDOW = 1  # spare's interval form: r within this of the renewal-reward r*, widened while r* is at an edge


def _interval_form_optimum(cluster: Cluster, cfg: Training, scheme: str, curve: list, r_screen: int,
                           ages: str):
    """Where the interval-by-interval form answers (``answer.closed_form_answers``): ``(r*, its optimum,
    note)`` from it, and ``curve``'s points rewritten with it. ``rep`` and ``none``: every r of the curve.
    ``spare`` (its chain costs seconds per r): the r within ``SPARE_WINDOW`` of the renewal-reward r*
    ``r_screen``, widened by one while the best is at the window's edge; the note names the r the renewal-
    reward form alone gave. None where the form does not apply (nothing changed)."""
    from .exact import closed_form_answers, closed_form_ttt

    rs = [p["redundancy"] for p in curve]
    if not rs or closed_form_answers(cluster, Policy(scheme, rs[0], ages=ages)) is None:
        return None
    done = {}

    def form(r):
        if r not in done:
            point = next(p for p in curve if p["redundancy"] == r)
            if closed_form_answers(cluster, Policy(scheme, r, ages=ages)) is None:
                done[r] = None
                return None
            try:
                res = closed_form_ttt(cluster, cfg, scheme, r, tau_hint=point["ckpt_interval_min"])
            except ValueError:  # spare at an interval far below the epoch (too many intervals to sum)
                done[r] = None
                return None
            point.update(ckpt_interval_min=res["ckpt_interval_min"], ttt_hours=res["ttt_hours"])
            done[r] = res
        return done[r]

    if scheme != "spare":
        window = list(range(len(rs)))
    else:
        i = rs.index(r_screen)
        window = list(range(max(0, i - SPARE_WINDOW), min(len(rs), i + SPARE_WINDOW + 1)))
    while True:
        vals = {j: form(rs[j]) for j in window}
        ok = {j: v for j, v in vals.items() if v is not None}
        if not ok:
            return None
        j_best = min(ok, key=lambda j: ok[j]["ttt_hours"])
        grow = [j for j in (j_best - 1, j_best + 1) if 0 <= j < len(rs) and j not in window]
        if scheme != "spare" or not grow:
            break
        window = sorted(set(window) | set(grow))
    best = ok[j_best]
    note = None
    if scheme == "spare":
        lo, hi = rs[min(window)], rs[max(window)]
        note = (f"spare: r = {lo}..{hi} from the interval-by-interval form (approx., within 0.1% of whole runs); "
                "other r: renewal-reward")
    return rs[j_best], best, note


def _optimize_result(cluster, cfg, ages, job_rate, out, curves, searched, extra: dict) -> dict:
    """``optimize_r_tau``'s answer: per scheme ``out`` and the ``curves``, the cluster's and the training's
    settings, ``extra`` (how the optimum was found) and the comparison with replication."""
    n, model = check_groups_redundancy(cluster.groups, 1)[0], cluster.model
    gpus = n * model.gpus_per_group
    count = int(gpus) if float(gpus).is_integer() else gpus  # a count: an integer in the JSON
    result = {"schemes": out, "groups": n, "gpus": count, "restart_min": cfg.restart_for(gpus),
              "ckpt_cost_min": cfg.ckpt_cost_min, "work_hours": cfg.work_hours,
              "cluster_mtbf_min": model.cluster_mtbf_min(n), "distribution": model.distribution, "ages": ages,
              "job_mtbf_min": 1.0 / job_rate if job_rate > 0 else None, **extra,
              "curves": curves}
    if "rep" in searched:
        result["notes"] = ["rep: r searched over the divisors of N up to r_max (replica sets need r | N): "
                           + ", ".join(map(str, searched["rep"]))]
    if "spare" in out and "rep" in out:
        result["ttt_reduction_vs_rep"] = 1.0 - out["spare"]["ttt_hours"] / out["rep"]["ttt_hours"]
    return result
