"""Time-to-train from whole training runs (docs/runs.md#whole-training-runs-every-lever-at-once): the answer wherever
no closed form or epoch pool applies — repair with any other lever, a finite spare pool, micro-batches or the
proactive restart with kept Weibull ages, Weibull clocks under a scenario, the elastic scheme.

``whole_run_ttt(cluster, training, policy, sampling)`` runs ``sampling.count`` training runs of the
whole-run kernel (``kernels.run``) and reports the mean time-to-train with its standard error and 95%
interval, the slowdown (computing time / work computed) with its standard error, and with repair the
stationary ``theory_slowdown`` = 1/E[1/d(S)] (S: each group down independently with p = D/(MTBF + D));
with a finite spare pool the mean wait per run of restarts for spares (``spare_wait_hours``: beyond R,
unavailable time like R) and the pool (``spares``, ``hardware_repair_min``); the stalls per run
(``failure_stall_hours``, ``rejoin_stall_hours``: the job paused after a failure survived without a restart
or a group's return, while no checkpoint runs) and their share of the time-to-train (``stall_pct``), with
the stationary estimate ``theory_stall_pct`` where ``theory_slowdown`` has one.

The checkpoint interval, when not given: Daly's interval ``sqrt(2 C M) - C`` (``M`` the mean computing
time between interruptions) with M measured on a pilot of runs at a first interval (Young's, from the
cluster's failure rate), refined once.
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np

from ..model.cluster import Cluster, Sampling
from ..model.runsetup import RunSetup
from ..model.training import Training
from ..results import Report
from .config import scheme_placement

PILOT_RUNS = 8
PER_DAY = (("failures_per_day", "failures_mean"), ("interruptions_per_day", "restarts_mean"),
           ("interruptions_per_day_wipeout", "wipeouts_mean"), ("interruptions_per_day_job_wide", "job_failures_mean"),
           ("interruptions_per_day_proactive", "proactive_restarts_mean"))


def _setup(cluster: Cluster, training: Training, policy, tau: float) -> RunSetup:
    return RunSetup.build(cluster, training, policy.scheme, policy.redundancy, tau, policy.restart_depth,
                          policy.ages, policy.elastic_data)


def replay_runs(cluster: Cluster, training: Training, policy, tau: float, arrays, repair: str,
                sampling: Sampling) -> dict:
    """Each run's outputs (host arrays) of ``sampling.count`` runs of ``policy`` (kept ages) at the interval
    ``tau`` replayed on a failure trace's device form ``arrays`` (``model.trace_units.TraceArrays``) with
    ``repair`` (``trace``: the trace's own down periods, no repair time; ``fixed``; ``none``):
    ``kernels.run_driver.replay_each``."""
    from ..kernels.run_driver import replay_each

    setup = RunSetup.build(cluster, training, policy.scheme, policy.redundancy, tau, policy.restart_depth, "kept",
                           policy.elastic_data)
    if repair == "trace":
        setup = dataclasses.replace(setup, repair_time_min=None)
    return replay_each(setup, arrays, repair, sampling)


def _daly(ckpt: float, mtbi: float) -> float:
    """Daly's interval for a mean time between interruptions ``mtbi`` (computing time)."""
    if not math.isfinite(mtbi):
        return 1e9
    if ckpt <= 0:
        return max(1e-3, math.sqrt(2 * 1e-3 * mtbi))
    return max(ckpt, math.sqrt(2 * ckpt * mtbi) - ckpt) if ckpt < mtbi / 2 else mtbi


def first_tau(cluster: Cluster, ckpt_cost_min: float, redundancy: int) -> float:
    """A first interval before any run is measured: Daly's for the cluster's failure rate times r."""
    return _daly(ckpt_cost_min, cluster.model.cluster_mtbf_min(cluster.groups) * max(1, redundancy))


def pooled_daly(ckpt_cost_min: float, compute_mean: float, restarts_mean: float, runs: int) -> float:
    """Daly's interval for the computing time between interruptions over ``runs`` runs pooled (their mean
    computing time and interruptions per run), plus half an interruption: a sample with none still bounds
    the rate."""
    return _daly(ckpt_cost_min, compute_mean / (restarts_mean + 0.5 / runs))


def mean_uptime_min(rep: dict) -> float:
    """The mean computing stretch between global restarts (minutes) from ``whole_run_ttt``'s report: the
    wall time per restart-separated part of a run, times the availability."""
    return rep["mc_ttt_hours"] * 60.0 / (rep["restarts_mean"] + 1.0) * rep["availability_pct"] / 100.0


def _pilot_rules(cluster_of, training: Training, sampling: Sampling, screen_runs: int = 0):
    """``(measure, rules)`` of the pilot that places an interval (``ttt.halving``): ``PILOT_RUNS`` runs of
    ``sampling``'s seed through the exact-sum driver at a first interval (``first_tau``), then Daly's on their
    pooled interruptions, twice, at most W; a candidate is a ``Policy``, ``cluster_of(policy)`` its cluster;
    ``screen_runs``: the screen's runs after it (0: no screen)."""
    from ..kernels.run_driver import simulate_runs, summarize
    from .halving import Rules

    pilot = dataclasses.replace(sampling, count=PILOT_RUNS, out_dir=None, progress=False)

    def measure(pol, tau, runs):
        return summarize(simulate_runs(_setup(cluster_of(pol), training, pol, tau), pilot))

    rules = Rules(first_tau=lambda pol: first_tau(cluster_of(pol), training.ckpt_cost_min, pol.redundancy),
                  daly=lambda c, res: pooled_daly(training.ckpt_cost_min, res["compute_mean"], res["restarts_mean"],
                                                  PILOT_RUNS),
                  pilot_runs=PILOT_RUNS, screen_runs=screen_runs, rounds=2, cap=60.0 * training.work_hours)
    return measure, rules


def choose_tau(cluster: Cluster, training: Training, policy, sampling: Sampling) -> float:
    """Daly's interval on the mean computing time between interruptions measured on ``PILOT_RUNS`` runs
    (pooled: their computing time over their interruptions, plus half an interruption), from a first one at
    the cluster's failure rate, refined once: the pilot of the candidate search (``ttt.halving.pilot_taus``)."""
    from .halving import pilot_taus

    measure, rules = _pilot_rules(lambda c: cluster, training, sampling)
    return pilot_taus([policy], measure, rules)[policy]["tau"]


def theory_slowdown(cluster: Cluster, scheme: str, redundancy: int, elastic_data: str = "rebalance") -> float | None:
    """1/E[1/d(S)] over the stationary down-sets (each group down with p = D/(MTBF + D), given no shard
    lost); None where the groups are not alike (lemons, per-group MTBFs, domains), there is no repair or the
    spare pool is finite."""
    from ..theory.depth import depth_cdf_bernoulli, level_depths

    if not cluster.stationary_downs:
        return None  # (a finite spare pool: groups are not down independently)
    rep, scen = cluster.repair, cluster.scenario
    m = scen.microbatches
    if scheme == "rep":
        return float(redundancy)
    if scheme == "none":
        return 1.0
    p = rep.repair_time_min / (cluster.model.group_mtbf_min + rep.repair_time_min)
    if scheme == "elastic":  # alive ~ Binomial(N, 1 - p), given at least one group up
        import numpy as np
        from scipy.stats import binom

        n = cluster.groups
        alive = np.arange(1, n + 1)
        w = binom.pmf(alive, n, 1.0 - p)
        rate = alive / n if elastic_data == "shrink" else m / np.ceil(n * m / alive)
        return float(w.sum() / (w * rate).sum())
    if scheme != "spare":
        return None
    cdf = depth_cdf_bernoulli("stacked", cluster.groups, redundancy, p, microbatches=m)[0]
    mass = cdf[1:] - cdf[:-1]
    inv = float((mass / level_depths(redundancy, m)).sum() / cdf[-1])
    return 1.0 / inv


def theory_stall_pct(cluster: Cluster, training: Training, scheme: str, redundancy: int,
                     elastic_data: str = "rebalance", tau_min: float | None = None) -> float | None:
    """The stationary share of wall time stalled, percent (``theory.stalls.stalled_share``: each group down
    independently, a stall in force when some group failed within S or returned within S_j, counted outside
    checkpoints; restarts left out). 0 for checkpointing alone (nothing stalls); None where
    ``theory_slowdown`` has no stationary form (no repair, a finite pool, groups not alike, domains) or the
    clocks are Weibull."""
    from ..theory.stalls import stalled_share

    if scheme == "none":
        return 0.0
    if theory_slowdown(cluster, scheme, redundancy, elastic_data) is None or \
            cluster.model.distribution != "exponential":
        return None
    rep = cluster.repair
    tau = training.ckpt_interval_min if tau_min is None else tau_min
    if tau is None:
        return None
    mtbfs = np.full(cluster.groups, cluster.model.group_mtbf_min)
    return 100.0 * stalled_share(mtbfs, rep.repair_time_min, training.failure_stall_min, training.rejoin_stall_min,
                                 tau, training.ckpt_cost_min, rep.law, rep.sigma)


def whole_run_ttt(cluster: Cluster, training: Training, policy, sampling: Sampling) -> Report:
    """``sampling.count`` whole training runs of ``policy`` on ``cluster``; see the module docstring."""
    from ..kernels.run_driver import simulate_runs, summarize, ttt_bins, ttt_quantiles
    from .interval import ttt_interval
    from ..model.placement import check_groups_redundancy

    t0 = time.perf_counter()
    kind, r = scheme_placement(policy.scheme, cluster.groups, policy.redundancy)
    check_groups_redundancy(cluster.groups, r)
    gpus = cluster.gpus
    tau = training.ckpt_interval_min
    tau_source = "given"
    if tau is None:
        tau, tau_source = choose_tau(cluster, training, policy, sampling), "daly-on-pilot-runs"
    setup = _setup(cluster, training, policy, tau)
    raw = simulate_runs(setup, sampling)
    res = summarize(raw)
    w = training.work_hours
    ttt_h, se_h = res["ttt_min"] / 60.0, res["ttt_stderr_min"] / 60.0
    restart = training.restart_for(gpus)
    wall = res["ttt_min"]
    spares = cluster.repair is not None and cluster.repair.spares is not None
    stalled = res["failure_stall_mean"] + res["rejoin_stall_mean"]
    # restarts, their waits for spares and the stalls: the wall time the job is not up
    down_wall = res["restarts_mean"] * restart + (res["spare_wait_mean"] if spares else 0.0) + stalled
    centres, counts = ttt_bins(raw)  # the interval from the run histogram, shifted to the exact mean
    ci = ttt_interval(centres / 60.0, counts, floor=w, mean=ttt_h)
    q05, q50, q90, q95, q99 = (None if x is None else x / 60.0  # None: beyond the histogram (256 W)
                               for x in ttt_quantiles(raw, (0.05, 0.5, 0.9, 0.95, 0.99)))
    out = {
        "scheme": policy.scheme, "groups": cluster.groups, "redundancy": r, "placement": kind,
        "ckpt_interval_min": tau, "ckpt_interval_source": tau_source, "runs": res["runs"],
        "mc_ttt_hours": ttt_h, "mc_ttt_stderr_hours": se_h,
        "mc_ttt_ci95_low": ci["low"], "mc_ttt_ci95_high": ci["high"],
        "mc_ttt_p05_hours": q05, "mc_ttt_p50_hours": q50, "mc_ttt_p90_hours": q90, "mc_ttt_p95_hours": q95,
        "mc_ttt_p99_hours": q99,
        "theory_ttt_hours": None,
        "mc_slowdown": res["slowdown"], "mc_slowdown_stderr": res["slowdown_stderr"],
        "theory_slowdown": theory_slowdown(cluster, policy.scheme, r, policy.elastic_data),
        "theory_stall_pct": theory_stall_pct(cluster, training, policy.scheme, r, policy.elastic_data, tau),
        "availability_pct": max(0.0, 100.0 * (wall - down_wall) / wall),  # float32 sums: never below 0
        "goodput": 60.0 * w / wall, "ttt_over_w": ttt_h / w, "restarts_mean": res["restarts_mean"],
        "wipeouts_mean": res["wipeouts_mean"], "job_failures_mean": res["job_failures_mean"],
        "proactive_restarts_mean": res["proactive_restarts_mean"], "group_failures_mean": res["failures_mean"],
        "ckpts_mean": res["ckpts_mean"], "lost_work_hours_mean": res["lost_mean"] / 60.0,
        "events_mean": res["events_mean"],
        # per day of wall time (ratios of sums): every group failure, those absorbed during a restart included
        # (a hardware rate), and the global restarts by cause (what a job's log counts as interruptions)
        **{k: res[m] * 1440.0 / wall for k, m in PER_DAY},
        "failure_stall_hours": res["failure_stall_mean"] / 60.0, "rejoin_stall_hours": res["rejoin_stall_mean"] / 60.0,
        "stall_pct": 100.0 * stalled / wall,
        "work_hours": w, "ckpt_cost_min": training.ckpt_cost_min, "restart_min": restart,
        "distribution": cluster.model.distribution, "ages": policy.ages,
        "method": "whole_runs",
        "method_detail": "whole training runs, event by event" + (
            "; the stalls per failure or rejoin need them (no closed form or epoch pool models a pause of the "
            "whole job between restarts)" if training.stalls and policy.scheme != "none" else ""),
    }
    if cluster.repair is not None:
        out.update(cluster.repair.describe())
    if spares:  # the wall time restarts waited for spares beyond R (docs/runs.md#spare-pool), per run
        out["spare_wait_hours"] = res["spare_wait_mean"] / 60.0
    if training.stalls:  # the pauses per failure and per rejoin (docs/runs.md#stalls)
        out["failure_stall_min"] = training.failure_stall_min
        out["rejoin_stall_min"] = training.rejoin_stall_min
    if not cluster.scenario.is_default or cluster.scenario.microbatches > 1:
        out["scenario"] = cluster.scenario.describe()
    if cluster.scenario.microbatches > 1:
        out["microbatches"] = cluster.scenario.microbatches
    if policy.restart_depth is not None:
        out["restart_depth"] = policy.restart_depth
    if policy.scheme == "elastic":
        out["elastic_data"] = policy.elastic_data
    if ci["why"]:
        out["notes"] = [ci["why"] if not counts[-1] else
                        f"no 95% interval: {int(counts[-1])} of {res['runs']} runs took longer than 256 W, beyond "
                        "the recorded range of each run's TTT"]
    out["elapsed_s"] = time.perf_counter() - t0
    return Report({**out, **cluster.failure_clock()})


SCREEN_RUNS = 8  # whole training runs per (scheme, r) when screening r with repair
SCREEN_R_MAX = 6  # with repair a failed group rejoins: the best r is small (depth, not wipe-outs, dominates)


def screen_whole_runs(cluster: Cluster, training: Training, r_max: int, restart_depth: float | None = None,
                      seed: int = 0, grid: dict | None = None, ages: str = "kept",
                      schemes=("spare", "rep", "none")) -> dict:
    """r* and tau* per scheme from whole training runs: for each r of ``grid`` (scheme -> list of r; default
    2..``SCREEN_R_MAX`` capped at ``r_max``, rep: the divisors of N), tau by Daly on pilot runs, then
    ``SCREEN_RUNS`` runs; r* the least mean TTT. (Not a joint search over every lever with common random
    numbers: one m and one D_max.) ``schemes``: which of spare, rep, none to screen. The candidate search
    (``ttt.halving.search_candidates``) with a pilot per r and no interval stage: each r's tau is its own
    pilot's."""
    from .config import Policy
    from .halving import search_candidates

    n, model, scen, repair = cluster.groups, cluster.model, cluster.scenario, cluster.repair
    top = min(r_max, SCREEN_R_MAX)
    default = {"spare": [r for r in range(2, top + 1) if r < n] or [1], "none": [1],
               "rep": [r for r in range(2, top + 1) if n % r == 0] or [1]}
    grid = {s: list((grid or {}).get(s) or default[s]) for s in default if s in schemes}
    own = {s: Cluster(n, model, scen if s == "spare" else dataclasses.replace(scen, microbatches=1), repair)
           for s in grid}
    policies = [Policy(s, r, restart_depth if s == "spare" else None, ages) for s, rs in grid.items() for r in rs]
    runs = Sampling(count=SCREEN_RUNS, seed=seed)

    def screen(pol, tau, count):  # each r at its own pilot's interval: whole_run_ttt's report
        one = own[pol.scheme]
        return {"report": whole_run_ttt(one, dataclasses.replace(training, ckpt_interval_min=tau), pol,
                                        runs).to_json()}

    pilot, rules = _pilot_rules(lambda pol: own[pol.scheme], training, runs, screen_runs=SCREEN_RUNS)
    found = search_candidates(policies, screen, rules, pilot_measure=pilot)
    schemes, curves = {}, {}
    for scheme in grid:
        points = []
        for row in found["screened"]:
            if row["cand"].scheme != scheme:
                continue
            rep = row["report"]
            points.append({"redundancy": row["cand"].redundancy, "ckpt_interval_min": rep["ckpt_interval_min"],
                           "ttt_hours": rep["mc_ttt_hours"], "availability_pct": rep["availability_pct"],
                           "restarts_mean": rep["restarts_mean"]})
        best = min(points, key=lambda p: p["ttt_hours"])
        uptime = mean_uptime_min({**best, "mc_ttt_hours": best["ttt_hours"]})
        schemes[scheme] = {"r_star": best["redundancy"], "ckpt_interval_min": best["ckpt_interval_min"],
                           "ttt_hours": best["ttt_hours"], "availability_pct": best["availability_pct"],
                           "mean_uptime_min": uptime, "ttt_over_w": best["ttt_hours"] / training.work_hours}
        curves[scheme] = [{k: p[k] for k in ("redundancy", "ckpt_interval_min", "ttt_hours")} for p in points]
    order = [s for s in ("spare", "rep", "none") if s in schemes]
    return {"schemes": {s: schemes[s] for s in order}, "curves": {s: curves[s] for s in order},
            "groups": n, "gpus": round(cluster.gpus) if float(cluster.gpus).is_integer() else cluster.gpus,
            "restart_min": training.restart_for(cluster.gpus),
            "ckpt_cost_min": training.ckpt_cost_min, "work_hours": training.work_hours,
            **({} if repair is None else repair.describe()), "distribution": model.distribution, "ages": ages,
            "method": "whole_runs",
            "method_detail": f"whole training runs: r screened on {SCREEN_RUNS} runs each, tau by Daly on pilot runs"}
