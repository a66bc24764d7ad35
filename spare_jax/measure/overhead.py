"""The compute overhead Omega = E[epoch uptime] / E[useful work] and the time-averaged depth: the Monte Carlo
beside the queue-DP theory (stacked, block; exponential failures, the paper's scenario), or with repair."""

from __future__ import annotations

import time

from ..model.cluster import Cluster, Sampling
from ..results import Report, finite_or_none
from .report import rate_per_s, work_split


def overhead(cluster: Cluster, redundancy: int, placement: str = "stacked",
             sampling: Sampling = Sampling(count=20_000)) -> Report:
    """Measure the overhead of SPARe on ``cluster`` at redundancy ``redundancy`` over ``sampling.count``
    epochs (restart to wipe-out; with ``cluster.repair``, failed groups rejoin during the epoch)."""
    if cluster.repair is not None:
        cluster.repair.check_epochs("overhead")
        return _with_repair(cluster, redundancy, placement, sampling)
    from .. import theory
    from ..kernels.overhead import simulate_overhead
    from ..kernels.driver import check_work_inputs
    from ..model.placement import make_placement

    model, scenario = cluster.model, cluster.scenario
    check_work_inputs(cluster.groups, sampling, cluster.groups * redundancy, 8)
    placement = make_placement(placement, cluster.groups, redundancy, seed=sampling.seed)
    t0 = time.perf_counter()
    res = simulate_overhead(placement, sampling, model=model, scenario=scenario)
    elapsed = time.perf_counter() - t0
    paper = not scenario.domains and not scenario.uneven and not scenario.job_rate_per_min(
        placement.groups, model.group_mtbf_min)
    th = None
    if placement.kind in ("stacked", "block") and model.distribution == "exponential" and paper:
        exact_k = placement.groups <= theory.EXACT_DP_MAX_N
        th = (theory.overhead_theory if exact_k else theory.overhead_theory_any_n)(
            placement.kind, placement.groups, placement.redundancy, microbatches=scenario.microbatches)
    hist = res.depth_at_wipeout_hist
    m = scenario.microbatches
    level = [0.0] + res.level_depths  # level index -> depth
    return Report({
        "groups": placement.groups, "redundancy": placement.redundancy, "placement": placement.kind,
        "epochs": res.trials, "seed": res.seed,
        "mc_overhead": res.overhead, "mc_overhead_stderr": res.overhead_stderr,
        "mc_time_avg_depth": res.time_avg_depth, "mc_time_avg_depth_stderr": res.time_avg_depth_stderr,
        "theory_overhead": None if th is None else th["overhead"],
        "theory_time_avg_depth": None if th is None else th["time_avg_depth"],
        "rep_overhead": float(placement.redundancy),
        "mc_overhead_sampled_sojourns": res.overhead_sampled,
        "mc_overhead_sampled_sojourns_stderr": res.overhead_sampled_stderr,
        "z_score": None if th is None else finite_or_none((res.overhead - th["overhead"]) / res.overhead_stderr
                                                          if res.overhead_stderr > 0 else 0.0),
        "depth_at_wipeout": {(str(d) if m == 1 else f"{level[d]:g}"): int(c) for d, c in enumerate(hist) if c},
        **({} if m == 1 else {"microbatches": m}),
        "mean_depth_thresholds": [float(x) for x in res.threshold_mean],
        "distribution": model.distribution,
        **({} if scenario.is_default else {"scenario": scenario.describe(),
                                           "mc_epoch_uptime_min": res.uptime_mean_min}),
        **work_split(res, "epochs"),
        "elapsed_s": elapsed, "epochs_per_s": rate_per_s(res, elapsed),
        **cluster.failure_clock(),
    })


def _with_repair(cluster: Cluster, redundancy: int, placement: str, sampling: Sampling) -> Report:
    """Omega = E[U]/E[W] over restart -> wipe-out epochs in which failed groups rejoin."""
    from ..kernels.repair import EpochOptions, simulate_repair
    from ..kernels.driver import check_work_inputs
    from ..model.placement import make_placement

    model, scenario, repair = cluster.model, cluster.scenario, cluster.repair
    check_work_inputs(cluster.groups, sampling, cluster.groups, 4)
    placement = make_placement(placement, cluster.groups, redundancy, seed=sampling.seed)
    t0 = time.perf_counter()
    res = simulate_repair(placement, sampling, model=model, scenario=scenario, repair=repair,
                          options=EpochOptions(track_depth=True))
    return Report({
        "groups": placement.groups, "redundancy": placement.redundancy, "placement": placement.kind,
        "epochs": res.trials, "seed": res.seed, **repair.describe(),
        "mc_overhead": res.overhead, "mc_overhead_stderr": res.overhead_stderr,
        "mc_time_avg_depth": res.time_avg_depth, "mc_time_avg_depth_stderr": res.time_avg_depth_stderr,
        "rep_overhead": float(placement.redundancy), "mc_epoch_uptime_min": res.uptime_mean_min,
        "mc_epoch_uptime_stderr_min": res.uptime_stderr_min, "mc_work_mean_min": res.work_mean_min,
        "censored": res.censored, "p_epoch_end_job_wide": res.p_ended_by_job,
        **({} if scenario.microbatches == 1 else {"microbatches": scenario.microbatches}),
        **work_split(res, "epochs"),
        **({} if scenario.is_default else {"scenario": scenario.describe()}),
        "elapsed_s": time.perf_counter() - t0,
        **cluster.failure_clock(),
    })
