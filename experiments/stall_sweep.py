"""What a stall per failure does to the plan: each scheme's time-to-train against the stall per failure, 0 to 5
minutes, at the plan's cluster, each scheme at the configuration the plan chose (no new search).

    python experiments/stall_sweep.py                  # 600k GPUs: the plan of figures/best_600k.json
    python experiments/stall_sweep.py --gpus 60000     # a smaller cluster: plans it first (the joint search)

Command of the committed figures/stall_sweep.csv, .json and .png: ``python experiments/stall_sweep.py``
(defaults: 600,000 GPUs in 600 groups of 1,000, per-GPU MTBF 50,000 h, a fixed 30-minute repair, R = 60 min,
C = 5 min, W = 720 h: the with-repair plan of experiments/best_600k.py, whose chosen configurations are read
from figures/best_600k.json; stalls 0, 0.5, 1, 2, 3, 5 min; 16 runs per point, seed 0).

The plan's configurations (scheme, r, m, D_max, tau) were chosen without a stall; each is re-run as whole
training runs through the library's ``ttt.time_to_train`` with ``Training.failure_stall_min`` set (the
rejoin stall stays 0: FT-HSDP's catch-up does not block). Checkpointing alone never stalls (every failure is
a global restart): its time-to-train is the plan's, flat. Beside each point the stationary share stalled
(``theory_stall_pct``). Writes figures/stall_sweep.csv (one row per scheme and stall), .json (with the
command and elapsed seconds) and .png, and prints the table.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time

from spare_jax.model.cluster import Cluster, Sampling
from spare_jax.model.failures import FailureModel
from spare_jax.model.repair import Repair
from spare_jax.model.scenario import Scenario
from spare_jax.model.training import Training
from spare_jax.plotting import new_figure, save, write_csv
from spare_jax.ttt import Policy, time_to_train

HERE = os.path.dirname(os.path.abspath(__file__))
FIGURES = os.path.join(HERE, "..", "figures")
STALLS = (0.0, 0.5, 1.0, 2.0, 3.0, 5.0)
NAMES = {"spare": "SPARe", "rep": "replication", "none": "checkpointing alone", "elastic": "elastic"}
COLOURS = {"spare": "tab:blue", "rep": "tab:orange", "none": "tab:grey", "elastic": "tab:green"}


def _args():
    from best_600k import cluster_args  # the same cluster, flags and defaults as the plan it re-runs

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cluster_args(p)
    p.add_argument("--stalls", default=",".join(f"{s:g}" for s in STALLS), help="stalls per failure, minutes")
    p.add_argument("--runs", type=int, default=16, help="whole training runs per point")
    p.add_argument("--plan-runs", type=int, default=64, help="runs of the plan's chosen configuration (a new plan)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--plan-json", default=os.path.join(FIGURES, "best_600k.json"),
                   help="a best_600k.py record whose with-repair plan is this cluster's (else the plan runs here)")
    p.add_argument("--out", default=FIGURES)
    p.add_argument("--replot", action="store_true", help="redraw the figure from the JSON written before")
    return p.parse_args()


def the_plan(a) -> dict:
    """The with-repair plan's JSON: from ``--plan-json`` where it is this cluster's, else planned now."""
    if os.path.exists(a.plan_json):
        with open(a.plan_json) as fh:
            record = json.load(fh)["with_repair"]
        inp = record["inputs"]
        same = (inp["gpus"] == a.gpus and inp["gpus_per_group"] == a.gpus_per_group
                and abs(inp["gpu_mtbf_hours"] - a.gpu_mtbf_hours) < 1e-9 * a.gpu_mtbf_hours
                and inp["restart_min"] == a.restart and inp["ckpt_cost_min"] == a.ckpt_cost
                and inp["work_hours"] == a.work_hours and inp.get("repair_time_min") == a.repair_time)
        if same:
            return {"source": os.path.relpath(a.plan_json, os.path.join(HERE, "..")), **record}
    from spare_jax.planner.plan import Costs, Fleet, PlanOptions, plan

    res = plan(Fleet(a.gpus, a.gpus_per_group, a.gpu_mtbf_hours, repair=Repair(a.repair_time, "fixed")),
               Costs(a.restart, a.ckpt_cost, a.work_hours), PlanOptions(runs=a.plan_runs, seed=a.seed,
                                                                        sensitivity=False), progress=True)
    return {"source": "planned here", **res.to_json()}


def sweep(a, record: dict) -> list[dict]:
    n = a.gpus // a.gpus_per_group
    model = FailureModel("exponential", a.gpu_mtbf_hours * 60.0 / a.gpus, float(a.gpus), float(a.gpus_per_group))
    rows = []
    for scheme, e in record["schemes"].items():
        m = int(e.get("microbatches") or 1)
        cluster = Cluster(n, model, Scenario(microbatches=m), Repair(a.repair_time, "fixed"))
        base = Training(a.work_hours, a.ckpt_cost, a.restart, "none", float(a.gpus),
                        ckpt_interval_min=float(e["ckpt_interval_min"]))
        for stall in [float(x) for x in a.stalls.split(",")]:
            row = {"scheme": scheme, "r": int(e["r_star"]), "m": m, "D_max": e.get("restart_depth"),
                   "tau_min": round(float(e["ckpt_interval_min"]), 2), "failure_stall_min": stall}
            if scheme == "none":  # never stalls: the plan's answer
                mean = e["mc_ttt_hours"] if e.get("mc_ttt_hours") is not None else e["ttt_hours"]
                row.update(ttt_hours=mean, stderr_hours=e.get("mc_ttt_stderr_hours") or 0.0, stall_pct=0.0,
                           theory_stall_pct=0.0, failures_mean=None, runs=e.get("mc_runs"), elapsed_s=0.0)
                rows.append(row)
                continue
            t0 = time.perf_counter()
            policy = Policy(scheme, int(e["r_star"]), e.get("restart_depth"), "kept")
            rep = time_to_train(cluster, dataclasses.replace(base, failure_stall_min=stall), policy,
                                Sampling(count=a.runs, seed=a.seed)).to_json()
            row.update(ttt_hours=rep["mc_ttt_hours"], stderr_hours=rep["mc_ttt_stderr_hours"],
                       stall_pct=rep["stall_pct"], theory_stall_pct=rep["theory_stall_pct"],
                       failures_mean=rep["group_failures_mean"], runs=rep["runs"],
                       elapsed_s=round(time.perf_counter() - t0, 1))
            rows.append(row)
            print(f"{scheme:>8} stall {stall:>4g} min: TTT {row['ttt_hours']:>9,.1f} +- {row['stderr_hours']:.2f} h, "
                  f"stalled {row['stall_pct']:.1f}% (stationary {row['theory_stall_pct'] or 0:.1f}%), "
                  f"{row['elapsed_s']:.0f} s", flush=True)
    return rows


def plot(rows: list, a, path: str) -> None:
    fig, (ax,) = new_figure(1, width=8.0, height=5.0)
    for scheme in dict.fromkeys(r["scheme"] for r in rows):
        pts = [r for r in rows if r["scheme"] == scheme]
        x = [p["failure_stall_min"] for p in pts]
        y = [p["ttt_hours"] for p in pts]
        err = [1.96 * p["stderr_hours"] for p in pts]
        p0 = pts[0]
        cfg = [] if scheme in ("none", "elastic") else [f"r={p0['r']}"]
        cfg += [f"m={p0['m']}"] if p0["m"] > 1 else []
        cfg += [f"D_max={p0['D_max']:g}"] if p0["D_max"] else []
        label = NAMES[scheme] + (f" ({', '.join(cfg)})" if cfg else "") + ("" if scheme != "none" else ": no stall")
        dashed = scheme == "spare"  # (it lies on elastic's curve here: drawn dashed over it)
        ax.errorbar(x, y, yerr=err, marker="s" if dashed else "o", ms=4, capsize=3, color=COLOURS[scheme],
                    ls="--" if dashed else "-", zorder=3 if dashed else 2, label=label)
    ax.axhline(a.work_hours, ls=":", color="black", lw=1, label=f"W = {a.work_hours:g} h")
    ax.set_yscale("log")
    ax.set_xlabel("stall per failure survived (min)")
    ax.set_ylabel("expected time-to-train (h, log scale), 95% interval")
    ax.set_title(f"{a.gpus:,} GPUs ({a.gpus // a.gpus_per_group} groups), per-GPU MTBF {a.gpu_mtbf_hours:,.0f} h, "
                 f"repair {a.repair_time:g} min, R = {a.restart:g}, C = {a.ckpt_cost:g} min: the plan's "
                 "configurations", fontsize=8)
    ax.legend(fontsize=8)
    save(fig, path)


def main():
    a = _args()
    suffix = "" if a.gpus == 600_000 else f"_{a.gpus}"
    if a.replot:
        with open(os.path.join(a.out, f"stall_sweep{suffix}.json")) as fh:
            plot(json.load(fh)["rows"], a, os.path.join(a.out, f"stall_sweep{suffix}.png"))
        return
    t0 = time.perf_counter()
    record = the_plan(a)
    t1 = time.perf_counter()
    rows = sweep(a, record)
    t2 = time.perf_counter()
    write_csv(os.path.join(a.out, f"stall_sweep{suffix}.csv"), rows)
    with open(os.path.join(a.out, f"stall_sweep{suffix}.json"), "w") as fh:
        json.dump({"command": "python experiments/stall_sweep.py " + " ".join(sys.argv[1:]),
                   "plan_from": record["source"], "verdict_without_stall": record["verdict"]["text"],
                   "rows": rows, "elapsed_s": {"plan": round(t1 - t0, 1), "sweep": round(t2 - t1, 1)}},
                  fh, indent=1, default=str)
    plot(rows, a, os.path.join(a.out, f"stall_sweep{suffix}.png"))
    print(f"elapsed: plan {t1 - t0:.0f} s, sweep {t2 - t1:.0f} s")


if __name__ == "__main__":
    main()
