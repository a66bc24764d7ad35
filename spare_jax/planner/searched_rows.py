"""The plan's rows from whole training runs: with repair, the joint search (``ttt.search.joint_search``) over
scheme x r x m x D_max x tau picks each scheme's configuration and its runs fill the row; ``run_fields``
and ``failures_endured`` serve every row."""

from __future__ import annotations

import dataclasses

def run_fields(rep: dict) -> dict:
    """A scheme row's fields from ``whole_run_ttt``'s report."""
    return {"mc_runs": rep["runs"], "mc_ttt_hours": rep["mc_ttt_hours"],
            "mc_ttt_stderr_hours": rep["mc_ttt_stderr_hours"], "mc_ttt_p05_hours": rep["mc_ttt_p05_hours"],
            "mc_ttt_p95_hours": rep["mc_ttt_p95_hours"], "mc_slowdown": rep["mc_slowdown"],
            "mc_slowdown_stderr": rep["mc_slowdown_stderr"], "theory_slowdown": rep["theory_slowdown"],
            **({k: rep[k] for k in ("failure_stall_hours", "rejoin_stall_hours", "stall_pct")}
               if "failure_stall_min" in rep else {})}  # (with a stall on)


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
    from ..ttt.runs import SCREEN_R_MAX, mean_uptime_min
    from ..ttt.search import Budget, joint_search

    space = dataclasses.replace(search, schemes=tuple(schemes), r_max=min(search.r_max, SCREEN_R_MAX))
    res = joint_search(cluster, cfg, space, Budget(final_runs=runs), seed, stages=stages)
    rows, gpus = {}, cluster.gpus
    for s, rep in res["schemes"].items():
        t = rep["mc_ttt_hours"]
        r = int(rep["redundancy"])
        rows[s] = {"r_star": r, "ckpt_interval_min": float(rep["ckpt_interval_min"]), "ttt_hours": t,
                   "p_over_deadline": None, "availability_pct": rep["availability_pct"],
                   "failures_endured": failures_endured(s, cluster.groups, r), "gpu_hours": t * gpus,
                   "cost": t * gpus * price,
                   "mean_uptime_min": mean_uptime_min(rep),
                   "ttt_over_w": t / cfg.work_hours, **run_fields(rep),
                   "microbatches": int(rep["microbatches"]), "restart_depth": rep["restart_depth"]}
        if s == "elastic":
            rows[s]["elastic_data"] = rep["elastic_data"]
        if len(space.repair_times or ()) > 1:
            rows[s]["repair_time_min"] = rep["repair_time_min"]
    curves = {s: [{k: p[k] for k in ("redundancy", "ckpt_interval_min", "ttt_hours")} for p in pts]
              for s, pts in res["curves"].items()}
    return {"schemes": rows, "curves": curves, "search": res["search"]}
