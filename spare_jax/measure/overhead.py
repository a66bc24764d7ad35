"""The compute overhead Omega = E[epoch uptime] / E[useful work] and the time-averaged depth: the Monte Carlo
beside the queue-DP theory (stacked, block; exponential failures, the paper's scenario), or with repair."""

from __future__ import annotations

import math
import time

from ..model.cluster import Cluster, Sampling
from ..results import Report, finite_or_none
from .report import rate_per_s, work_split


def overhead(cluster: Cluster, redundancy: int, placement: str = "stacked",
             sampling: Sampling = Sampling(count=20_000)) -> Report:
    """Measure the overhead of SPARe on ``cluster`` at redundancy ``redundancy`` over ``sampling.count``
    epochs (restart to wipe-out; with ``cluster.repair``, failed groups rejoin during the epoch)."""
    if cluster.epoch_kernel == "repair":
        cluster.repair.check_epochs("overhead")
        return _with_repair(cluster, redundancy, placement, sampling)
    from .. import theory
    from ..kernels.overhead import simulate_overhead
    from ..kernels.driver import check_work_inputs
    from ..model.placement import make_placement

    model, scenario = cluster.model, cluster.scenario
    check_work_inputs(cluster.groups, sampling, cluster.groups * redundancy, 8)
    placement = make_placement(placement, cluster.groups, redundancy, seed=sampling.seed)
    check_microbatch_work(placement.redundancy, scenario.microbatches, sampling.count)
    t0 = time.perf_counter()
    res = simulate_overhead(placement, sampling, model=model, scenario=scenario)
    elapsed = time.perf_counter() - t0
    paper = scenario.iid and not scenario.job_rate_per_min(
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
    check_repair_epoch_work(placement, cluster, sampling.count)
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


def check_repair_epoch_work(placement, cluster: Cluster, epochs: int) -> None:
    """Up front, before any compile: the events that epochs with repair need to reach their wipe-out
    (first-order theory: a failure and a return per group failure over the expected uptime), refused beyond
    ``model.bounds.REPAIR_EPOCH_EVENTS_MAX`` per epoch or ``REPAIR_EVENTS_MAX`` in all, naming the
    flag, its limit and the alternative. Skipped where the theory has no form (Weibull clocks, domains)."""
    from ..model.bounds import REPAIR_EPOCH_EVENTS_MAX, REPAIR_EVENTS_MAX
    from ..theory.repair import first_order_uptime

    model, repair = cluster.model, cluster.repair
    if model.distribution != "exponential" or repair.repair_time_min is None:
        return
    first = first_order_uptime(placement, model, repair, cluster.scenario)
    if first is None or not math.isfinite(first["uptime_min"]):
        return
    per_epoch = 2.0 * first["uptime_min"] * placement.groups / model.group_mtbf_min
    d = repair.repair_time_min
    if per_epoch > REPAIR_EPOCH_EVENTS_MAX:  # the uptime grows as 1/D: a longer repair shortens the epoch
        raise ValueError(f"`repair_time_min` {d:g}: one epoch to its wipe-out needs about {per_epoch:,.0f} events "
                         f"here (first-order theory), more than the {REPAIR_EPOCH_EVENTS_MAX:,} an epoch may take; "
                         f"give `repair_time_min` at least about {d * per_epoch / REPAIR_EPOCH_EVENTS_MAX:.3g}, or "
                         "ask wipeout with `work_hours` for the chance of a wipe-out within a run")
    if per_epoch * epochs > REPAIR_EVENTS_MAX:
        fit = max(1, int(REPAIR_EVENTS_MAX // per_epoch))
        raise ValueError(f"`epochs` {epochs:,}: about {per_epoch * epochs:,.0f} events in all (about "
                         f"{per_epoch:,.0f} per epoch), more than the {REPAIR_EVENTS_MAX:,.0f} a request may take; "
                         f"use at most {fit:,} `epochs` here")


def check_microbatch_work(redundancy: int, microbatches: int, epochs: int) -> None:
    """Up front, before any compile: the sub-level search of the overhead kernel with m > 1 micro-batches
    (``kernels.overhead.depth_thresholds``: (r - 1)(m - 1) sub-levels per epoch) within
    ``model.bounds.OVERHEAD_SUBLEVELS_MAX`` and its work (epochs x sub-levels x the probes per step)
    within ``OVERHEAD_SUBLEVEL_WORK_MAX``, refused otherwise naming the flag, its limit and the alternative."""
    from ..kernels.overhead import SUBLEVEL_SLOTS
    from ..model.bounds import OVERHEAD_SUBLEVEL_WORK_MAX, OVERHEAD_SUBLEVELS_MAX

    m, r = int(microbatches), int(redundancy)
    levels = (r - 1) * (m - 1)
    if m <= 1 or levels == 0:
        return
    if levels > OVERHEAD_SUBLEVELS_MAX:
        top = OVERHEAD_SUBLEVELS_MAX // (r - 1) + 1
        raise ValueError(f"`microbatches` {m}: at r = {r} the overhead kernel searches {levels:,} depth levels "
                         f"between whole shards per epoch, at most {OVERHEAD_SUBLEVELS_MAX:,} (`microbatches` at "
                         f"most {top:,} here); give a smaller `microbatches` (the depth's steps are 1/m apart) or "
                         "ask ttt with `microbatches` (whole training runs) for the time-to-train")
    work = epochs * levels * min(levels, SUBLEVEL_SLOTS)
    if work > OVERHEAD_SUBLEVEL_WORK_MAX:
        fit = max(1, int(OVERHEAD_SUBLEVEL_WORK_MAX // (levels * min(levels, SUBLEVEL_SLOTS))))
        raise ValueError(f"`epochs` {epochs:,}: with `microbatches` {m} at r = {r} the overhead kernel's sub-level "
                         f"search would take about {work:,.0f} probes, more than the {OVERHEAD_SUBLEVEL_WORK_MAX:,.0f} "
                         f"a request may take; use at most {fit:,} `epochs` here, or a smaller `microbatches`")
