r"""A failure trace replayed, beside the independent model it fits (docs/traces.md#replaying-a-trace): the
library call of ``ttt --failure-trace``, ``optimize --failure-trace`` and ``plan --failure-trace``.

``load_trace(cluster, options)`` reads the file (``model.trace.read_trace``), maps it to the run's units and
scales it (``model.trace_units``). ``replay_ttt(cluster, training, policy, options, sampling)`` answers one
scheme; ``compare_schemes(cluster, training, policies, options, sampling)`` answers several and ranks them.

For each scheme:

* **the replay**: ``sampling.count`` runs of the whole-run kernel on the trace (``kernels.run_trace``), run k
  from trace time ``k P / count``: ``replay_ttt_hours`` (the mean over the runs) with its standard error (over
  the runs, as if they were independent: they are runs from different points of one trace), the wipe-outs,
  failures and wraps per run;
* **the model**: the fitted independent model (``planner.trace_fit``: Weibull failure law, lemons, the repair
  law of the verdict, or the repair the replay was given) simulated as whole runs at the same settings and
  the same checkpoint interval: ``model_ttt_hours`` with its standard error, its wipe-outs and failures;
* ``model_error_pct`` = 100 (model - replay) / replay, with ``model_error_stderr_pct`` (both standard errors,
  by the delta method) and ``model_error_beyond_stats``: true when ``|error| > 1.96`` standard errors.

The checkpoint interval, when not given: Daly's ``sqrt(2 C M) - C`` with M the computing time between
interruptions measured on the replay itself at a first interval (``ttt.runs.pooled_daly``), refined once;
the model then runs at that interval too. The limit (``replay_limit_ttt_hours``): the ideal scheme (elastic
shrink: no wipe-out, work at alive/N, every stall, checkpoint and job-wide failure paid) replayed on the
same trace (at the given interval, or Daly's for its own interruptions); with no repair it is not computed (the ideal then needs its own proactive
restart: ``limit_note`` says so). A scheme that beats it gets ``limit_exceeded``.
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np

from ..model.cluster import Cluster, Sampling
from ..model.training import Training
from ..results import Report

REPAIRS = ("trace", "fixed", "none")
Z95 = 1.96


@dataclasses.dataclass(frozen=True)
class TraceOptions:
    """A failure trace and how it is replayed.

    Attributes:
      path: the trace file (docs/traces.md#the-trace-file).
      unit: ``group`` (one node per group) or ``node`` (``nodes_per_group`` nodes per group).
      nodes_per_group: n, with ``unit = "node"``.
      time_scale: s, multiplies every failure time and the window (down periods keep their length).
      repair: ``trace`` (a group returns at the end of the period that failed it), ``fixed`` (the cluster's
        repair time D after its failure, or after it obtains a spare) or ``none`` (down until the next restart).
      burst_window_min: the fit's burst window (minutes of scaled time).
    """

    path: str
    unit: str = "group"
    nodes_per_group: int = 1
    time_scale: float = 1.0
    repair: str = "trace"
    burst_window_min: float = 10.0

    def __post_init__(self):
        if self.repair not in REPAIRS:
            raise ValueError(f"repair with a trace must be one of {', '.join(REPAIRS)}, got {self.repair!r}")


def load_trace(groups: int, options: TraceOptions):
    """``(UnitPeriods, TraceArrays)`` of the trace for ``groups`` units (ValueError, one line, on a bad file)."""
    from ..model.trace import read_trace
    from ..model.trace_units import trace_units

    units = trace_units(read_trace(options.path).merged(), groups, options.unit, options.nodes_per_group,
                        options.time_scale)
    return units, units.arrays()


def _check_cluster(cluster: Cluster, options: TraceOptions) -> None:
    scen, rep = cluster.scenario, cluster.repair
    if scen.domains:
        raise ValueError("failure domains with a failure trace: the trace's down periods are the group failures")
    if scen.uneven:
        raise ValueError("lemons or per-group MTBFs with a failure trace: the trace says which groups fail")
    if cluster.model.distribution != "exponential":
        raise ValueError("a failure law with a failure trace: the trace's down periods are the failures")
    if options.repair == "fixed" and (rep is None or rep.repair_time_min is None):
        raise ValueError("a fixed repair with a failure trace needs the repair time D")
    if options.repair != "fixed" and rep is not None and rep.repair_time_min is not None:
        raise ValueError(f"repair {options.repair!r} from a failure trace takes no repair time")
    if rep is not None and rep.law != "fixed":
        raise ValueError("a replay's repair is from the trace, a fixed time or none (no repair law)")


def _replay(cluster, training, policy, arrays, options, sampling, tau) -> dict:
    from ..ttt.runs import replay_runs

    return replay_runs(cluster, training, policy, tau, arrays, options.repair, sampling)


def _mean_se(x) -> tuple[float, float]:
    x = np.asarray(x, np.float64)
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size)) if x.size > 1 else math.nan


def choose_replay_tau(cluster, training, policy, arrays, options, sampling, model: Cluster) -> float:
    """Daly's interval on the computing time between interruptions of the replay (``ttt.runs.pooled_daly``,
    from a first interval at the fitted ``model``'s failure rate, refined once): the pilot of the candidate
    search (``ttt.halving.pilot_taus``) on the replay's runs."""
    from ..ttt.halving import Rules, pilot_taus
    from ..ttt.runs import first_tau, pooled_daly

    pilot = dataclasses.replace(sampling, progress=False, out_dir=None)

    def measure(pol, tau, runs):
        out = _replay(cluster, training, pol, arrays, options, pilot, tau)
        return {"compute_mean": float(out["compute"].mean()), "restarts_mean": float(out["restarts"].mean()),
                "runs": out["ttt"].size}

    rules = Rules(first_tau=lambda pol: first_tau(model, training.ckpt_cost_min, pol.redundancy),
                  daly=lambda pol, res: pooled_daly(training.ckpt_cost_min, res["compute_mean"], res["restarts_mean"],
                                                    res["runs"]),
                  pilot_runs=pilot.count, rounds=2, cap=60.0 * training.work_hours)
    return pilot_taus([policy], measure, rules)[policy]["tau"]


def fitted_model(cluster: Cluster, units, options: TraceOptions, ring_radius: int):
    """``(TraceFit, Cluster)``: the trace's fit and the fitted independent model, with the run's scenario
    (ring order, micro-batches, job-wide failures) and the repair the replay takes."""
    from .trace_fit import FittedParts, TraceFitOptions, fit_trace, fitted_cluster

    ring = tuple(int(x) for x in cluster.scenario.ring_order(cluster.groups))
    fit = fit_trace(units, TraceFitOptions(burst_window_min=options.burst_window_min,
                                           ring_radius=max(1, int(ring_radius)), ring=ring))
    repair = {"trace": "fitted", "none": "none"}.get(options.repair, cluster.repair)
    if options.repair == "trace" and cluster.repair is not None and cluster.repair.spares is not None:
        repair = cluster.repair
    model = fitted_cluster(fit, cluster.gpus / cluster.groups, FittedParts(repair=repair), cluster.scenario)
    return fit, model


def _scheme_row(cluster, training, policy, arrays, model, options, sampling, tau) -> dict:
    from ..ttt.runs import whole_run_ttt

    out = _replay(cluster, training, policy, arrays, options, sampling, tau)
    ttt, se = _mean_se(out["ttt"] / 60.0)
    mod = whole_run_ttt(model, dataclasses.replace(training, ckpt_interval_min=tau), policy, sampling).to_json()
    m, mse = mod["mc_ttt_hours"], mod["mc_ttt_stderr_hours"]
    err = 100.0 * (m - ttt) / ttt
    err_se = 100.0 * math.sqrt(mse ** 2 + (m / ttt * se) ** 2) / ttt if math.isfinite(se) else math.nan
    return {
        "scheme": policy.scheme, "redundancy": 1 if policy.scheme in ("none", "elastic") else policy.redundancy,
        "ckpt_interval_min": tau, "runs": int(out["ttt"].size),
        "replay_ttt_hours": ttt, "replay_ttt_stderr_hours": se,
        "replay_wipeouts_mean": float(out["wipeouts"].mean()), "replay_failures_mean": float(out["failures"].mean()),
        "replay_restarts_mean": float(out["restarts"].mean()), "replay_wraps_mean": float(out["wraps"].mean()),
        "replay_run_ttt_hours": [float(x) / 60.0 for x in out["ttt"]],
        "model_ttt_hours": m, "model_ttt_stderr_hours": mse,
        "model_wipeouts_mean": mod["wipeouts_mean"], "model_failures_mean": mod["group_failures_mean"],
        "model_error_pct": err, "model_error_stderr_pct": err_se,
        "model_error_beyond_stats": bool(math.isfinite(err_se) and abs(err) > Z95 * err_se),
    }


def _limit(cluster, training, arrays, options, sampling, model) -> dict:
    from ..ttt.config import Policy

    if options.repair == "none":
        return {"replay_limit_ttt_hours": None,
                "limit_note": "not computed without repair: the ideal scheme would need its own proactive restart"}
    ideal = Policy("elastic", 1, None, "kept", "shrink")
    tau = training.ckpt_interval_min
    if tau is None:
        tau = choose_replay_tau(cluster, training, ideal, arrays, options, sampling, model)
    out = _replay(cluster, training, ideal, arrays, options, sampling, tau)
    return {"replay_limit_ttt_hours": float(out["ttt"].mean()) / 60.0, "limit_ckpt_interval_min": tau,
            "limit_note": "the ideal scheme (no wipe-out, work at the share of groups up) replayed on the same trace, "
                          "at the given checkpoint interval or Daly's for its own interruptions"}


def _trace_json(units, arrays, options: TraceOptions) -> dict:
    return {"failure_trace": options.path, "trace_unit": options.unit, "trace_time_scale": options.time_scale,
            "repair_from": options.repair, "trace_circle_hours": units.circle_hours,
            "trace_periods": len(units), "trace_records": units.records, "trace_node_merges": units.node_merges,
            "trace_unit_merges": units.unit_merges, "trace_rounding_merges": arrays.rounding_merges}


def compare_schemes(cluster: Cluster, training: Training, policies, options: TraceOptions,
                    sampling: Sampling = Sampling(16)) -> Report:
    """Each of ``policies`` replayed on the trace and simulated on the fitted model (the module docstring):
    ``strategies`` (one row each), the ranking by the replay (``replay_rank``) and by the model (``model_rank``),
    the schemes where they disagree, the fit (``trace_fit``) and the limit."""
    t0 = time.perf_counter()
    _check_cluster(cluster, options)
    policies = list(policies)
    units, arrays = load_trace(cluster.groups, options)
    r_max = max([p.redundancy for p in policies if p.scheme in ("spare", "rep")] or [1])
    fit, model = fitted_model(cluster, units, options, r_max)
    rows, taus = [], {}
    for policy in policies:
        tau = training.ckpt_interval_min
        if tau is None:
            tau = choose_replay_tau(cluster, training, policy, arrays, options, sampling, model)
        taus[(policy.scheme, policy.redundancy)] = tau
        rows.append(_scheme_row(cluster, training, policy, arrays, model, options, sampling, tau))
    for i, row in enumerate(rows):
        row["name"] = _name(row)
    by_replay = sorted(range(len(rows)), key=lambda i: rows[i]["replay_ttt_hours"])
    by_model = sorted(range(len(rows)), key=lambda i: rows[i]["model_ttt_hours"])
    for rank, i in enumerate(by_replay):
        rows[i]["replay_rank"] = rank + 1
    for rank, i in enumerate(by_model):
        rows[i]["model_rank"] = rank + 1
    lim = _limit(cluster, training, arrays, options, sampling, model)
    for row in rows:
        limit = lim["replay_limit_ttt_hours"]
        row["limit_exceeded"] = bool(limit is not None and row["replay_ttt_hours"] < limit
                                     and row["scheme"] != "elastic")
    disagree = [rows[i]["name"] for i in range(len(rows)) if rows[i]["replay_rank"] != rows[i]["model_rank"]]
    out = {"groups": cluster.groups, "work_hours": training.work_hours, "ckpt_cost_min": training.ckpt_cost_min,
           "restart_min": training.restart_for(cluster.gpus), **_trace_json(units, arrays, options),
           "strategies": rows, "best_replay": rows[by_replay[0]]["name"], "best_model": rows[by_model[0]]["name"],
           "rankings_agree": not disagree, "ranking_disagreements": disagree, **lim,
           "ranked_by": "replay", "trace_fit": fit.to_json(), "method": "trace_replay",
           "method_detail": "whole training runs replayed on the failure trace, beside whole runs of the fitted "
                            "independent model at the same settings",
           "elapsed_s": time.perf_counter() - t0}
    return Report(out)


PART_VARIANTS = (("the full fit", "weibull", True, "fitted"), ("no Weibull law (exponential)", "exponential", True, "fitted"),
                 ("no lemons", "weibull", False, "fitted"), ("exponential repair", "weibull", True, "exp"))


def model_parts(cluster: Cluster, training: Training, row: dict, options: TraceOptions,
                sampling: Sampling = Sampling(16)) -> list:
    """Which fitted parts close the gap between the model and the replay for one strategy (a row of
    ``compare_schemes``): the model simulated with each part of the fit taken away in turn (the Weibull law,
    the lemons, the lognormal repair: exponential instead), at the row's interval; each variant's
    ``model_ttt_hours`` and ``model_error_pct`` against the replay. A part whose removal moves the error
    away from 0 is one the fit needs. With a repair given to the replay (fixed or none), the repair variant is
    left out."""
    from ..ttt.config import Policy
    from ..ttt.runs import whole_run_ttt
    from .trace_fit import FittedParts, TraceFitOptions, fit_trace, fitted_cluster

    units, _ = load_trace(cluster.groups, options)
    ring = tuple(int(x) for x in cluster.scenario.ring_order(cluster.groups))
    fit = fit_trace(units, TraceFitOptions(burst_window_min=options.burst_window_min,
                                           ring_radius=max(1, int(row["redundancy"])), ring=ring))
    policy = Policy(row["scheme"], row["redundancy"], None, "kept", "rebalance")
    out = []
    for name, law, lemons, repair in PART_VARIANTS:
        if repair != "fitted" and options.repair != "trace":
            continue
        given = {"trace": repair, "none": "none"}.get(options.repair, cluster.repair)
        model = fitted_cluster(fit, cluster.gpus / cluster.groups, FittedParts(law, lemons, given), cluster.scenario)
        rep = whole_run_ttt(model, dataclasses.replace(training, ckpt_interval_min=row["ckpt_interval_min"]), policy,
                            sampling).to_json()
        m = rep["mc_ttt_hours"]
        out.append({"parts": name, "model_ttt_hours": m, "model_ttt_stderr_hours": rep["mc_ttt_stderr_hours"],
                    "model_error_pct": 100.0 * (m - row["replay_ttt_hours"]) / row["replay_ttt_hours"]})
    return out


TRACE_R_MAX = 5  # the largest r a comparison on a trace replays (spare; rep: the divisors of N up to it)


def trace_policies(groups: int, r_max: int, repair: bool, elastic_data: str = "rebalance") -> list:
    """The strategies a comparison on a trace replays: ``none``, ``rep`` at each r in 2..min(r_max, 5) that
    divides N, ``spare`` at each r in 2..min(r_max, 5) (below N), and ``elastic`` where groups come back
    (``repair``)."""
    from ..ttt.config import Policy

    top = min(int(r_max), TRACE_R_MAX)
    out = [Policy("none", 1)]
    out += [Policy("rep", r) for r in range(2, top + 1) if groups % r == 0]
    out += [Policy("spare", r) for r in range(2, top + 1) if r < groups]
    if repair:
        out.append(Policy("elastic", 1, None, "kept", elastic_data))
    return out


def _name(row: dict) -> str:
    return row["scheme"] if row["scheme"] in ("none", "elastic") else f"{row['scheme']} r={row['redundancy']}"


def replay_ttt(cluster: Cluster, training: Training, policy, options: TraceOptions,
               sampling: Sampling = Sampling(16)) -> Report:
    """One scheme replayed on the trace beside the fitted model (the module docstring): the row of
    ``compare_schemes`` at its top level, with the fit and the limit."""
    rep = compare_schemes(cluster, training, [policy], options, sampling).to_json()
    row = rep.pop("strategies")[0]
    for key in ("best_replay", "best_model", "rankings_agree", "ranking_disagreements", "ranked_by"):
        rep.pop(key)
    for key in ("replay_rank", "model_rank", "name"):
        row.pop(key)
    return Report({**row, **rep})
