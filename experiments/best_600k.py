"""The best configuration at 600k GPUs: every strategy on the paper's cluster, the paper's SPARe+CKPT at its
own settings beside the best the joint search finds once failed groups are repaired.

    python experiments/best_600k.py            # 43 minutes on 2 cores that ran two other experiments
    python experiments/best_600k.py --redraw   # only the CSV and the figure, from the committed JSON
    python experiments/best_600k.py --repair-time 10 --gpu-mtbf-hours 100000

Command of the committed figures/best_600k.csv, .json and .png: ``python experiments/best_600k.py``
(defaults: 600,000 GPUs in 600 groups of 1,000, per-GPU MTBF 50,000 h (a system MTBF of 5 min), R = 60 min,
C = 5 min, W = 720 h, 200 runs, seed 0; the paper's settings).

Two plans, each through the library's ``planner.plan.plan`` (what ``spare-jax plan`` prints):

1. *The paper's model*: no repair (a failed group waits for the next global restart), whole shards. Each of
   spare (SPARe+CKPT), rep (replication+CKPT) and none (checkpointing alone) at its r* and tau* from the closed
   form, with 200 Monte Carlo training runs each: ``spare-jax plan --gpus 600000 --gpus-per-group 1000``.
2. *With repair*: a failed group rejoins after ``--repair-time`` minutes (fixed) without a global restart; the
   joint search over spare, rep and elastic x r x m (1, 2, 4, 8) x D_max (never, 1.5, 2, 3) x tau on whole
   training runs, checkpointing alone by its exact closed form: ``spare-jax plan --gpus 600000
   --gpus-per-group 1000 --repair-time 30``. Without a batch the plan searches m <= 8 and says so.
3. *With repair and a batch*: the same, with a global batch that allows ``--max-microbatches`` (default 64)
   micro-batches per shard: m searched over the powers of two up to it: ``spare-jax plan --gpus 600000
   --gpus-per-group 1000 --repair-time 30 --max-microbatches 64``.

Beside them, the stationary slowdown 1/E[rate] with the repair (``ttt.runs.theory_slowdown``: each group down
independently with p = D / (MTBF + D)) of elastic rebalance and SPARe at r = 5 for m = 1 .. 64: how much
finer micro-batches would still buy (the search's default grid stops at m = 8).

The limit is ``planner.verdict.limit`` (an ideal scheme that never wipes out and computes at alive/N, at its
own best interval); the looser bound is ``planner.verdict.bound``: a run whose group failures cost nothing. Writes
figures/best_600k.csv (one row per plan and scheme), figures/best_600k.json (the three plans' JSON, with the
search's budget and the elapsed seconds) and figures/best_600k.png, and prints the table.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time

from spare_jax.model.repair import Repair
from spare_jax.planner.plan import Costs, Fleet, PlanOptions, plan
from spare_jax.planner.verdict import Z95
from spare_jax.plotting import new_figure, save, write_csv

NAMES = {"spare": "SPARe", "rep": "replication", "none": "checkpointing alone", "elastic": "elastic"}


def cluster_args(p) -> None:
    """The 600k cluster's flags and defaults (the paper's settings, a 30-min repair); experiments that re-run
    this script's configurations (stall_sweep.py) take the same ones."""
    p.add_argument("--gpus", type=int, default=600_000)
    p.add_argument("--gpus-per-group", type=int, default=1000)
    p.add_argument("--gpu-mtbf-hours", type=float, default=50_000.0)
    p.add_argument("--restart", type=float, default=60.0)
    p.add_argument("--ckpt-cost", type=float, default=5.0)
    p.add_argument("--work-hours", type=float, default=720.0)
    p.add_argument("--repair-time", type=float, default=30.0)


def _args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cluster_args(p)
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--max-microbatches", type=int, default=64, help="the third plan's batch (micro-batches per shard)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--redraw", action="store_true", help="only rewrite the CSV and the figure from best_600k.json")
    p.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "figures"))
    return p.parse_args()


def _rows(key: str, label: str, schemes: dict) -> list[dict]:
    """One row per scheme of a plan's ``schemes`` (its JSON): the plan's answer (``ttt_hours``: an exact closed
    form, or the mean of its runs), the runs' standard error where the runs answer (0 for an exact form), and
    the exact form's value where it answers."""
    out = []
    for s, e in schemes.items():
        exact = e["method"] == "closed_form"
        mean, se = e["ttt_hours"], 0.0 if exact else (e.get("mc_ttt_stderr_hours") or 0.0)
        out.append({"plan": key, "setting": label, "scheme": s, "r": e["r_star"], "m": e.get("microbatches") or 1,
                    "D_max": e.get("restart_depth"), "tau_min": round(e["ckpt_interval_min"], 2),
                    "ttt_hours": round(mean, 2), "stderr_hours": round(se, 3),
                    "ci95_low_hours": round(mean - Z95 * se, 2), "ci95_high_hours": round(mean + Z95 * se, 2),
                    "method": e["method"], "closed_form_ttt_hours": round(e["ttt_hours"], 2) if exact else None,
                    "runs": e["mc_runs"], "availability_pct": round(e["availability_pct"], 2)})
    return out


PLANS = (("paper_model", "paper's model"), ("with_repair", "{d:g}-min repair"),
         ("with_repair_and_batch", "{d:g}-min repair, m <= {m}"))


def write_outputs(record: dict, a) -> list[dict]:
    """figures/best_600k.csv and .png from the three plans' JSON in ``record`` (what best_600k.json holds)."""
    rows = []
    for key, label in PLANS:
        rows += _rows(key, label.format(d=a.repair_time, m=a.max_microbatches), record[key]["schemes"])
    write_csv(os.path.join(a.out, "best_600k.csv"), rows)
    repaired = record["with_repair"]
    plot(rows, repaired["limit"]["ttt_hours"], repaired["bound"]["ttt_hours"], a.work_hours,
         os.path.join(a.out, "best_600k.png"))
    return rows


def plot(rows: list, limit_h: float, bound_h: float, work_hours: float, path: str) -> None:
    fig, (ax,) = new_figure(1, width=10.0, height=5.0)
    colours = {"spare": "tab:blue", "rep": "tab:orange", "none": "tab:grey", "elastic": "tab:green"}
    labels = []
    for i, x in enumerate(rows):
        half = x["ci95_high_hours"] - x["ttt_hours"]
        ax.barh(i, x["ttt_hours"], color=colours[x["scheme"]], alpha=0.85, height=0.7)
        ax.errorbar(x["ttt_hours"], i, xerr=half, color="black", capsize=4, lw=1.2)
        ax.text(x["ttt_hours"] * 1.05, i, f"{x['ttt_hours']:,.0f} h ({x['ttt_hours'] / work_hours:.2f} W)",
                va="center", fontsize=8)
        cfg = [] if x["scheme"] in ("none", "elastic") else [f"r={x['r']}"]
        cfg += [f"m={x['m']}"] if x["m"] > 1 else []
        cfg += [f"D_max={x['D_max']:g}"] if x["D_max"] else []
        labels.append(f"{x['setting']}: {NAMES[x['scheme']]}" + (f" ({', '.join(cfg)})" if cfg else ""))
    ax.axvline(limit_h, ls="-", color="black", lw=1.2, label=f"the limit with repair: {limit_h:,.1f} h (an ideal "
               "scheme at alive/N)")
    ax.axvline(bound_h, ls=":", color="black", lw=1.0, label=f"looser bound: {bound_h:,.1f} h (group failures cost "
               "nothing)")
    ax.set_xscale("log")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("expected time-to-train (h, log scale), with its 95% interval")
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title("600k GPUs (600 groups of 1,000), per-GPU MTBF 50,000 h, R = 60 min, C = 5 min, W = 720 h",
                 fontsize=9)
    save(fig, path)


def slowdown_by_m(a) -> list[dict]:
    """The stationary slowdown with repair, per micro-batch count (closed form, no simulation)."""
    from spare_jax.model.cluster import Cluster
    from spare_jax.model.scenario import Scenario
    from spare_jax.planner.plan import _model
    from spare_jax.ttt.runs import theory_slowdown

    n = a.gpus // a.gpus_per_group
    model = _model(a.gpus, a.gpus_per_group, a.gpu_mtbf_hours)
    out = []
    for m in (1, 2, 4, 8, 16, 32, 64):
        cl = Cluster(n, model, Scenario(microbatches=m), Repair(a.repair_time, "fixed"))
        out.append({"m": m, "elastic": theory_slowdown(cl, "elastic", 1), "spare_r5": theory_slowdown(cl, "spare", 5)})
    return out


def main():
    a = _args()
    if a.redraw:
        with open(os.path.join(a.out, "best_600k.json")) as f:
            write_outputs(json.load(f), a)
        return
    costs = Costs(a.restart, a.ckpt_cost, a.work_hours)
    options = PlanOptions(runs=a.runs, seed=a.seed, sensitivity=False)
    t0 = time.perf_counter()
    paper = plan(Fleet(a.gpus, a.gpus_per_group, a.gpu_mtbf_hours), costs, options, progress=True)
    t1 = time.perf_counter()
    fleet = Fleet(a.gpus, a.gpus_per_group, a.gpu_mtbf_hours, repair=Repair(a.repair_time, "fixed"))
    repaired = plan(fleet, costs, options, progress=True)
    t2 = time.perf_counter()
    batched = plan(fleet, costs, dataclasses.replace(options, max_microbatches=a.max_microbatches), progress=True)
    t3 = time.perf_counter()
    slow = slowdown_by_m(a)
    record = {"command": "python experiments/best_600k.py " + " ".join(sys.argv[1:]),
              "paper_model": paper.to_json(), "with_repair": repaired.to_json(),
              "with_repair_and_batch": batched.to_json(), "stationary_slowdown_by_m": slow,
              "elapsed_s": {"paper_model": round(t1 - t0, 1), "with_repair": round(t2 - t1, 1),
                            "with_repair_and_batch": round(t3 - t2, 1)}}
    text = json.dumps(record, indent=1, default=str)  # serialised once: the file, and what the CSV is read from
    with open(os.path.join(a.out, "best_600k.json"), "w") as f:
        f.write(text)
    rows = write_outputs(json.loads(text), a)
    for x in rows:
        print(f"{x['setting']:>24}  {x['scheme']:>7}  r={x['r']:<2} m={x['m']:<2} D_max={x['D_max'] or '-':<4} "
              f"tau={x['tau_min']:>8.1f}  TTT {x['ttt_hours']:>10,.1f} h  [{x['ci95_low_hours']:,.1f}, "
              f"{x['ci95_high_hours']:,.1f}]  runs {x['runs']}")
    print("verdict (paper's model):", paper.verdict["text"])
    print("verdict (with repair):", repaired.verdict["text"])
    print(f"verdict (with repair, m <= {a.max_microbatches}):", batched.verdict["text"])
    for x in slow:
        print(f"m = {x['m']:>2}: stationary slowdown elastic {x['elastic']:.4f}, SPARe r = 5 {x['spare_r5']:.4f}")
    print(f"elapsed: {t1 - t0:.0f} s + {t2 - t1:.0f} s + {t3 - t2:.0f} s")


if __name__ == "__main__":
    main()
