"""Failures endured before a wipe-out, and the epoch's uptime: the Monte Carlo beside the exact and
asymptotic closed forms (without repair), or beside the repair theory (first order, transient hazard, the
exact chain on small N)."""

from __future__ import annotations

import math
import time

from ..model.cluster import Cluster, Sampling
from ..results import Report, finite_or_none
from .report import rate_per_s, work_split


def wipeout(cluster: Cluster, redundancy: int, placement: str = "stacked", sampling: Sampling = Sampling(),
            work_hours: float = 720.0) -> Report:
    """Measure the wipe-out of ``cluster`` at redundancy ``redundancy`` over ``sampling.count`` epochs.

    Without repair: T (failures at the wipe-out, the fatal one included) and the epoch's uptime, with the
    exact E[T] where it exists and the asymptotic form. With ``cluster.repair``: the uptime and failures of
    epochs in which failed groups rejoin; when the theory puts the wipe-out beyond 10 W (``work_hours``), the
    epochs stop at W and the report gives P(a wipe-out within W) with its exact interval.
    """
    if cluster.epoch_kernel == "repair":
        cluster.repair.check_epochs("wipeout")
        return _with_repair(cluster, redundancy, placement, sampling, work_hours)
    from .. import theory
    from ..kernels.wipeout import simulate_wipeout
    from ..kernels.driver import check_work_inputs
    from ..model.placement import make_placement
    from ..model.scenario import (
        EXACT_SMALL_MAX_N, exact_epoch_small, job_wide_uptime, single_domain_wipeout_fraction)

    model, scenario = cluster.model, cluster.scenario
    check_work_inputs(cluster.groups, sampling, cluster.groups, 16)
    placement = make_placement(placement, cluster.groups, redundancy, seed=sampling.seed)
    t0 = time.perf_counter()
    res = simulate_wipeout(placement, sampling, model=model, scenario=scenario)
    elapsed = time.perf_counter() - t0
    # the i.i.d. theory holds where the scenario changes nothing but the ring order (no domains, even groups);
    # job-wide failures compose exactly with it for E[uptime]
    iid = scenario.iid
    paper = iid and scenario.job_rate_per_min(placement.groups, model.group_mtbf_min) == 0
    surv = theory.survival_exact(placement.kind, placement.groups, placement.redundancy)
    exact_mean, exact_var = (None, None) if surv is None or not paper else theory.moments_from_survival(surv)
    asym = theory.expected_failures_asymptotic(placement.kind, placement.groups, placement.redundancy)
    ref = exact_mean if exact_mean is not None else (asym if paper else None)
    z = None if ref is None else (
        (res.mean - ref) / res.stderr if res.stderr > 0 else (0.0 if res.mean == ref else math.inf))
    up_theory, p_job_theory = None, None
    if model.distribution == "exponential" and iid:
        surv_any = surv if surv is not None else theory.survival_poisson(placement.kind, placement.groups,
                                                                        placement.redundancy)
        up_theory, p_job_theory = job_wide_uptime(surv_any, placement.groups, model.group_rate_per_min,
                                                  scenario.job_rate_per_min(placement.groups, model.group_mtbf_min))
    p_dom_theory = None
    if model.distribution == "exponential" and not iid and placement.groups <= EXACT_SMALL_MAX_N:
        exact = exact_epoch_small(scenario, placement, model.group_mtbf_min)  # 2^N-state chain
        up_theory, p_job_theory, p_dom_theory = exact["uptime_min"], exact["p_job_end"], exact["p_fatal_domain"]
    elif iid:
        p_dom_theory = 0.0
    extra = {}
    if not scenario.is_default:
        extra = {"scenario": scenario.describe(),
                 "p_epoch_end_job_wide": res.ended_by_job / res.trials,
                 "theory_p_epoch_end_job_wide": p_job_theory,
                 "p_wipeout_by_domain": res.fatal_by_domain / res.trials, "theory_p_wipeout_by_domain": p_dom_theory,
                 "single_domain_wipeout_fraction": single_domain_wipeout_fraction(scenario, placement)}
    return Report({
        "groups": placement.groups, "redundancy": placement.redundancy, "placement": placement.kind,
        "trials": res.trials, "seed": res.seed,
        "mc_mean": res.mean, "mc_stderr": res.stderr,
        "theory_exact": exact_mean, "theory_asymptotic": asym if paper else None, "z_score": finite_or_none(z),
        "z_against": "exact" if exact_mean is not None else ("asymptotic" if paper else None),
        "mc_std": math.sqrt(res.var), "theory_std": None if exact_var is None else math.sqrt(exact_var),
        "endurable_failures_mean": res.mean - 1,
        "mc_quantiles": {"p01": res.quantile(0.01), "p50": res.quantile(0.5), "p99": res.quantile(0.99)},
        "distribution": model.distribution,
        "mc_epoch_uptime_min": res.uptime_mean_min, "mc_epoch_uptime_stderr_min": res.uptime_stderr_min,
        "theory_epoch_uptime_min": up_theory, **extra,
        "cluster_mtbf_min": model.cluster_mtbf_min(placement.groups),
        "chunk_size": res.chunk_size, "devices": res.devices, **work_split(res),
        "elapsed_s": elapsed, "trials_per_s": rate_per_s(res, elapsed),
        **cluster.failure_clock(),
    })


def _with_repair(cluster: Cluster, redundancy: int, placement: str, sampling: Sampling, work_hours: float) -> Report:
    """The epoch runs from the restart to the wipe-out (or a job-wide end), failed groups rejoining."""
    from ..kernels.repair import simulate_repair
    from ..kernels.driver import check_work_inputs
    from ..model.placement import make_placement
    from ..theory.repair import (
        EXACT_REPAIR_MAX_N, TRANSIENT_CLI_WORK, TheoryTooCostly, exact_repair_ctmc, first_order_uptime,
        transient_uptime)

    model, scenario, repair = cluster.model, cluster.scenario, cluster.repair
    check_work_inputs(cluster.groups, sampling, cluster.groups, 4)
    placement = make_placement(placement, cluster.groups, redundancy, seed=sampling.seed)
    exponential = model.distribution == "exponential"  # the repair theory is for exponential clocks
    first = first_order_uptime(placement, model, repair, scenario) if exponential else None
    skipped, trans = None, None
    try:  # bounded work: a lognormal repair of large sigma needs a convolution kernel of millions of cells
        if exponential:
            trans = transient_uptime(placement, model, repair, scenario, max_work=TRANSIENT_CLI_WORK)
    except TheoryTooCostly as exc:
        trans, skipped = None, f"skipped: {exc}"
    horizon = work_hours * 60.0
    guess = trans if trans is not None else first  # the first order decides when the transient was skipped
    if guess is not None and guess["uptime_min"] > 10 * horizon:
        return _rare(cluster, placement, sampling, first, trans, horizon, skipped)
    t0 = time.perf_counter()
    res = simulate_repair(placement, sampling, model=model, scenario=scenario, repair=repair)
    elapsed = time.perf_counter() - t0
    exact = None
    if exponential and repair.law == "exp" and placement.groups <= EXACT_REPAIR_MAX_N:
        exact = exact_repair_ctmc(placement, model, repair.repair_time_min, scenario)
    se = res.uptime_stderr_min
    z = None if exact is None or se <= 0 else (res.uptime_mean_min - exact["uptime_min"]) / se
    return Report({
        "groups": placement.groups, "redundancy": placement.redundancy, "placement": placement.kind,
        "trials": res.trials, "seed": res.seed, **repair.describe(), "distribution": model.distribution,
        "mc_epoch_uptime_min": res.uptime_mean_min, "mc_epoch_uptime_stderr_min": se,
        "mc_mean": res.failures_mean, "mc_stderr": res.failures_stderr,
        "theory_epoch_uptime_min": None if trans is None else trans["uptime_min"],
        **({} if skipped is None else {"theory_epoch_uptime_skipped": skipped}),
        "theory_first_order_uptime_min": None if first is None else first["uptime_min"],
        "theory_wipeout_rate_per_min": None if first is None else first["rate_per_min"],
        "theory_start_shift_min": None if first is None else first["start_shift_min"],
        "p_down": repair.repair_time_min / (model.group_mtbf_min + repair.repair_time_min),
        "exact_epoch_uptime_min": None if exact is None else exact["uptime_min"],
        "exact_failures_mean": None if exact is None else exact["failures"],
        "z_score": finite_or_none(z), "z_against": "exact" if z is not None else None,
        "p_epoch_end_job_wide": res.p_ended_by_job, "censored": res.censored,
        **({} if scenario.is_default else {"scenario": scenario.describe()}),
        "events": res.events, "events_per_s": rate_per_s(res, elapsed, res.events),
        "chunk_size": res.chunk_size, "devices": res.devices, **work_split(res, "trials"), "elapsed_s": elapsed,
        **cluster.failure_clock(),
    })


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper-Pearson) two-sided interval for a binomial proportion k/n."""
    from scipy.stats import beta

    a = 1.0 - level
    lo = 0.0 if k == 0 else float(beta.ppf(a / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - a / 2, k + 1, n - k))
    return lo, hi


def _rare(cluster, placement, sampling, first, trans, horizon, skipped=None) -> Report:
    """Rare wipe-outs: epochs censored at the run length W; P(>= 1 wipe-out during W) = wiped / trials with its
    Clopper-Pearson interval (a job-wide end before W is not a wipe-out)."""
    from ..kernels.repair import EpochOptions, simulate_repair
    from ..theory.repair import p_wipeout_within

    model, scenario, repair = cluster.model, cluster.scenario, cluster.repair
    t0 = time.perf_counter()
    res = simulate_repair(placement, sampling, model=model, scenario=scenario, repair=repair,
                          options=EpochOptions(max_time=horizon))
    k = res.wiped
    lo, hi = clopper_pearson(k, res.trials)
    return Report({
        "groups": placement.groups, "redundancy": placement.redundancy, "placement": placement.kind,
        "trials": res.trials, "seed": res.seed, **repair.describe(), "distribution": model.distribution,
        "rare_wipeouts": True,
        "note": (f"the theory's time to wipe-out ({(trans or first)['uptime_min'] / 60:.4g} h) exceeds 10 W "
                 f"(W = {horizon / 60:g} h): epochs simulated only up to W; reported: P(at least one wipe-out "
                 "during W) with an exact (Clopper-Pearson) 95 % interval"),
        "work_hours": horizon / 60.0, "wipeouts_within_run": k,
        "p_wipeout_within_run": k / res.trials, "p_wipeout_within_run_ci95_low": lo,
        "p_wipeout_within_run_ci95_high": hi,
        "theory_epoch_uptime_min": None if trans is None else trans["uptime_min"],
        **({} if skipped is None else {"theory_epoch_uptime_skipped": skipped}),
        "theory_first_order_uptime_min": first["uptime_min"],
        "theory_wipeout_rate_per_min": first["rate_per_min"],
        "theory_p_wipeout_within_run": None if trans is None else p_wipeout_within(trans, horizon),
        "p_epoch_end_job_wide": res.p_ended_by_job, "censored_at_run_end": res.censored,
        "mc_mean": res.failures_mean, "events": res.events, "elapsed_s": time.perf_counter() - t0,
        **cluster.failure_clock(),
    })
