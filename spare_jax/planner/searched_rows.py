"""The plan's rows from whole training runs: with repair, the joint search (``ttt.search.joint_search``) over
scheme x r x m x D_max x tau picks each scheme's configuration and its runs fill the row; ``run_fields``
and ``failures_endured`` serve every row."""

from __future__ import annotations

import dataclasses

import numpy as np

def run_fields(rep: dict, run_hours=None) -> dict:
    """A scheme row's fields from ``whole_run_ttt``'s report; ``run_hours`` (each run's TTT, hours): listed,
    and its quantiles are the row's (``numpy.quantile``), with the runs' group failures survived."""
    out = {"mc_runs": rep["runs"], "mc_ttt_hours": rep["mc_ttt_hours"],
           "mc_ttt_stderr_hours": rep["mc_ttt_stderr_hours"], "mc_ttt_p05_hours": rep["mc_ttt_p05_hours"],
           "mc_ttt_p95_hours": rep["mc_ttt_p95_hours"], "mc_slowdown": rep["mc_slowdown"],
           "mc_slowdown_stderr": rep["mc_slowdown_stderr"], "theory_slowdown": rep["theory_slowdown"],
           "failures_survived_per_run": failures_survived(rep),
           **({k: rep[k] for k in ("failure_stall_hours", "rejoin_stall_hours", "stall_pct")}
              if "failure_stall_min" in rep else {})}  # (with a stall on)
    if run_hours is not None:
        out.update(quantile_fields(run_hours))
    return out


def quantile_fields(run_hours) -> dict:
    """``mc_ttt_p05_hours``, ``mc_ttt_p50_hours``, ``mc_ttt_p95_hours`` = ``numpy.quantile`` of the runs'
    TTTs, and the runs themselves (``mc_ttt_runs_hours``, in run order: run i has run id i)."""
    x = np.asarray(run_hours, np.float64)
    q = np.quantile(x, [0.05, 0.5, 0.95])
    return {"mc_ttt_p05_hours": float(q[0]), "mc_ttt_p50_hours": float(q[1]), "mc_ttt_p95_hours": float(q[2]),
            "mc_ttt_runs_hours": [float(v) for v in x]}


def failures_survived(rep: dict) -> float:
    """The group failures a run survived, on average (``whole_run_ttt``'s report): every group failure but
    those that ended in a wipe-out."""
    return max(0.0, float(rep["group_failures_mean"]) - float(rep["wipeouts_mean"]))


def row_candidate(cluster, row: dict, scheme: str, redundancy: int):
    """``(candidate, tau, ages, elastic_data)`` of one searched configuration ``row`` (its m, repair time, tau,
    D_max, ages and elastic data, where given) of ``scheme`` at redundancy r on ``cluster``: what
    ``ttt.search.candidate_runs`` runs."""
    from ..ttt.search import Candidate

    d = row.get("repair_time_min")
    if d is None:  # the cluster's own repair time
        d = None if cluster.repair is None else cluster.repair.repair_time_min
    cand = Candidate(scheme, int(redundancy), int(row.get("microbatches") or 1), row.get("restart_depth"), d)
    return cand, float(row["ckpt_interval_min"]), row.get("ages") or "kept", row.get("elastic_data") or "rebalance"


def row_runs(cluster, training, row: dict, scheme: str, redundancy: int, sampling, capacity=None) -> dict:
    """Each run's outputs (``ttt.search.candidate_runs``) of the configuration ``row`` (``row_candidate``) on
    ``cluster`` with the costs of ``training``."""
    from ..ttt.search import candidate_runs

    cand, tau, ages, data = row_candidate(cluster, row, scheme, redundancy)
    return candidate_runs(cluster, training, cand, tau, sampling, ages, data, capacity)


def run_hours_each(cluster, training, rep: dict, runs: int, seed: int, progress=False) -> np.ndarray:
    """Each run's TTT (hours) of the configuration ``rep`` (``whole_run_ttt``'s report: scheme, r, m, D_max,
    tau, repair time) on ``cluster``: the same runs (seed, run ids 0..runs-1) run by run
    (``ttt.search.candidate_runs``; ``progress``: a bar, or a stage's running bar)."""
    from ..model.cluster import Sampling

    out = row_runs(cluster, training, rep, rep["scheme"], rep["redundancy"],
                   Sampling(count=runs, seed=seed, chunk_size=8, progress=progress))
    return np.asarray(out["ttt"], np.float64) / 60.0


def failures_endured(scheme: str, n: int, r: int) -> float:
    """E[T] - 1 of the i.i.d. theory for the scheme's layout at r (0 for ``none``; N - 1 for ``elastic``, which
    loses nothing until every group is down)."""
    from .. import theory
    from ..ttt import scheme_placement

    if scheme == "elastic":
        return float(n - 1)
    kind, r = scheme_placement(scheme, n, r)
    if r == 1:
        return 0.0
    exact = theory.expected_failures(kind, n, r) if n <= 60_000 else None
    mean = exact if exact is not None else theory.expected_failures_asymptotic(kind, n, r)
    return float(mean) - 1.0


def searched_rows(cluster, cfg, schemes, search, runs, seed, price, stages=None) -> dict:
    """The rows of ``schemes`` (of spare, rep, none, elastic) from the joint search on whole training runs:
    ``search`` a ``ttt.search.SearchSpace`` without its schemes; the chosen configuration gets ``runs``
    runs; ``price`` per GPU-hour (the cluster's GPUs held for the whole run). Returns ``{"schemes": rows, "curves": ..., "search": the budget spent}``."""
    from ..kernels.progress import Progress
    from ..ttt.runs import SCREEN_R_MAX, mean_uptime_min
    from ..ttt.search import Budget, joint_search

    space = dataclasses.replace(search, schemes=tuple(schemes), r_max=min(search.r_max, SCREEN_R_MAX))
    res = joint_search(cluster, cfg, space, Budget(final_runs=runs), seed, stages=stages)
    rows, gpus = {}, cluster.gpus
    if stages is not None:
        stages.stage(f"each scheme's runs listed run by run ({', '.join(res['schemes'])})")
    bar = Progress(sum(int(rep["runs"]) for rep in res["schemes"].values()), "runs listed",
                   stages is not None and stages.enabled, unit="run")
    for s, rep in res["schemes"].items():
        t = rep["mc_ttt_hours"]
        r = int(rep["redundancy"])
        hours = run_hours_each(cluster, cfg, rep, int(rep["runs"]), seed, bar)
        rows[s] = {"r_star": r, "ckpt_interval_min": float(rep["ckpt_interval_min"]), "ttt_hours": t,
                   "p_over_deadline": None,
                   "availability_pct": rep["availability_pct"],
                   "failures_endured": None, "gpu_hours": t * gpus,  # with repair: what the runs survived
                   "cost": t * gpus * price,
                   "mean_uptime_min": mean_uptime_min(rep),
                   "ttt_over_w": t / cfg.work_hours, **run_fields(rep, hours),
                   "microbatches": int(rep["microbatches"]), "restart_depth": rep["restart_depth"]}
        if s == "elastic":
            rows[s]["elastic_data"] = rep["elastic_data"]
        if len(space.repair_times or ()) > 1:
            rows[s]["repair_time_min"] = rep["repair_time_min"]
    bar.close()
    curves = {s: [{k: p[k] for k in ("redundancy", "ckpt_interval_min", "ttt_hours")} for p in pts]
              for s, pts in res["curves"].items()}
    return {"schemes": rows, "curves": curves, "search": res["search"]}
