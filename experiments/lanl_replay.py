"""The Los Alamos failure data replayed: what each strategy would have done on systems 18, 19 and 20, beside the
independent model each trace fits. Data: Los Alamos National Laboratory failure data 1996-2005 (LA-UR-05-7318),
provided by Los Alamos National Laboratory.

    python experiments/lanl_replay.py            # the table, the fits and the figure (figures/lanl_replay.*)
    python experiments/lanl_replay.py --redraw   # only the CSV and the figure, from figures/lanl_replay.json
    python experiments/lanl_replay.py --quick    # system 20 at its own rate, W = 24 h, two schemes, 2 runs: a
                                                 # smoke run, written to a temporary directory, not to figures/

Command of the committed figures/lanl_replay.csv, .json and .png: ``python experiments/lanl_replay.py``.

**Settings.** Each trace node is one data-parallel group (``--trace-unit group``: N = 1,024, 1,024 and 512),
repair from the trace, W = 240 h, C = 5 min, R = 60 min, tau = 60 min, 16 runs from evenly spaced offsets of
the trace. Two time scales: 1 (the system's own rate) and 0.05 (the time between failures compressed 20x: a
cluster 20 times the system's size; the repairs keep their length).

**Strategies**: ``none``, ``rep`` r = 2, SPARe r = 2..5 with m = 1 and r = 2, 3 with m = 8, ``elastic``
(rebalance), and SPARe r = 2 with an interleaved ring order (ring neighbours are N/2 groups apart in the
trace's numbering: 0, N/2, 1, N/2 + 1, ...). For each: the replay's mean TTT with its standard error over the runs, the fitted
independent model's (``planner.trace_replay``: Weibull failure law, lemons, the repair law of the verdict) at
the same settings and interval, the model's error and whether it is beyond the statistical error, and the
wipe-outs and failures per run of each.

**The fits beside Schroeder and Gibson's findings** (DSN 2006: a Weibull law with a decreasing hazard for the
time between failures, a lognormal law for repairs): per system, at scale 1, the Weibull shape with its 95%
interval and the p-value of shape 1, the repair verdict with Vuong's z, the share of failures in bursts and
on neighbours beside independent units, and the most-failing 1%'s share.

Not run: the compression to a 600k-GPU cluster's rate (s of about 0.005 for system 20: a failure every few
minutes with repairs of hours), whose runs would not finish within this experiment's budget (15 minutes on 2
cores); 0.05 is the scale the results quote.

Writes figures/lanl_replay.csv (one row per system, scale and strategy), figures/lanl_replay.json (the rows,
the fits, the settings, the elapsed seconds and the load average) and figures/lanl_replay.png (the replay's TTT
beside the model's per strategy, and system 20's down periods over time).
"""
from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import os
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

SYSTEMS = (18, 19, 20)
SCALES = (1.0, 0.05)
WORK_HOURS, CKPT_COST_MIN, RESTART_MIN, TAU_MIN = 240.0, 5.0, 60.0, 60.0
RUNS = 16
QUICK_WORK_HOURS = 24.0
CREDIT = ("Data: Los Alamos National Laboratory failure data 1996-2005 (LA-UR-05-7318), provided by Los Alamos "
          "National Laboratory")


def interleave(n: int) -> tuple:
    """A ring order whose neighbours are N/2 apart in the trace's numbering: 0, N/2, 1, N/2 + 1, ..."""
    half = (n + 1) // 2
    return tuple(int(x) for x in sum(([i, half + i] if half + i < n else [i] for i in range(half)), []))


def strategies(quick: bool, full: bool = True):
    """``[(label, policy, microbatches, ring)]`` replayed per system and scale (``full``: every strategy, else
    SPARe r = 2 and rep r = 2)."""
    from spare_jax.ttt.config import Policy

    if quick or not full:
        return [("rep r=2", Policy("rep", 2), 1, "contiguous"), ("spare r=2 m=1", Policy("spare", 2), 1, "contiguous")]
    out = [("none", Policy("none", 1), 1, "contiguous"), ("rep r=2", Policy("rep", 2), 1, "contiguous")]
    out += [(f"spare r={r} m=1", Policy("spare", r), 1, "contiguous") for r in range(2, 6)]
    out += [(f"spare r={r} m=8", Policy("spare", r), 8, "contiguous") for r in (2, 3)]
    out += [("spare r=2 m=1 interleaved", Policy("spare", 2), 1, "interleaved"),
            ("elastic", Policy("elastic", 1, None, "kept", "rebalance"), 1, "contiguous")]
    return out


def one_system(system: int, scale: float, quick: bool, tmp: str, runs: int, full: bool = True) -> tuple[list, dict]:
    """The rows of one system at one scale, and its fit."""
    from spare_jax.model.cluster import Cluster, Sampling
    from spare_jax.model.lanl import read_lanl
    from spare_jax.model.scenario import Scenario
    from spare_jax.model.trace import write_trace
    from spare_jax.model.training import Training
    from spare_jax.planner.trace_replay import TraceOptions, compare_schemes

    path = os.path.join(tmp, f"lanl{system}.csv")
    if not os.path.exists(path):
        write_trace(path, read_lanl(system).records)
    nodes = read_lanl(system).records.nodes
    training = Training(QUICK_WORK_HOURS if quick else WORK_HOURS, CKPT_COST_MIN, RESTART_MIN, ckpt_interval_min=TAU_MIN)
    options = TraceOptions(path, time_scale=scale)
    groups: dict = {}
    for label, policy, m, ring in strategies(quick, full):
        groups.setdefault((m, ring), []).append((label, policy))
    rows, fit = [], None
    for (m, ring), items in groups.items():
        scen = Scenario(microbatches=m, ring=interleave(nodes) if ring == "interleaved" else ring)
        rep = compare_schemes(Cluster(nodes, scenario=scen), training, [p for _, p in items], options,
                              Sampling(runs, seed=0)).to_json()
        fit = fit or rep["trace_fit"]
        for (label, policy), row in zip(items, rep["strategies"]):
            rows.append({"system": system, "time_scale": scale, "strategy": label, "scheme": policy.scheme,
                         "redundancy": row["redundancy"], "microbatches": m, "ring": ring, "groups": nodes,
                         **{k: row[k] for k in ("runs", "replay_ttt_hours", "replay_ttt_stderr_hours",
                                                "model_ttt_hours", "model_ttt_stderr_hours", "model_error_pct",
                                                "model_error_stderr_pct", "model_error_beyond_stats",
                                                "replay_wipeouts_mean", "model_wipeouts_mean",
                                                "replay_failures_mean", "model_failures_mean",
                                                "replay_wraps_mean", "limit_exceeded")},
                         "replay_limit_ttt_hours": rep["replay_limit_ttt_hours"]})
        print(f"  system {system} s={scale:g} {', '.join(l for l, _ in items)}: done", flush=True)
    return rows, fit


def fit_summary(system: int, fit: dict) -> dict:
    f, r, u, b = fit["failure"], fit["repair"], fit["uneven"], fit["bursts"]
    w = f["weibull"]
    return {"system": system, "units": fit["units"], "periods": fit["periods"], "records": fit["records"],
            "weibull_shape": w["shape"], "weibull_shape_ci95_low": w["shape_ci95_low"],
            "weibull_shape_ci95_high": w["shape_ci95_high"], "p_exponential": w["p_exponential"],
            "mtbf_hours": w["mtbf_hours"], "repair_verdict": r["verdict"], "vuong_z": r["vuong_z"],
            "repair_mean_hours": r["mean_hours"], "lognormal_sigma": r["lognormal_sigma"],
            "burst_pct": b["burst_pct"], "burst_independent_pct": b["burst_independent_pct"],
            "neighbour_pct": b["neighbour_pct"], "neighbour_independent_pct": b["neighbour_independent_pct"],
            "top_pct": u["top_pct"], "top_even_pct": u["top_even_pct"], "lemon_factor": u["lemon_factor"]}


def figure(rows: list, path: str, tmp: str) -> None:
    import matplotlib.pyplot as plt
    import numpy as np

    from spare_jax.model.trace import read_trace
    from spare_jax.plotting import DPI
    sel = [r for r in rows if r["system"] == 20 and r["time_scale"] == min(x["time_scale"] for x in rows)] or rows
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.5), gridspec_kw={"width_ratios": [3, 2]})
    x = np.arange(len(sel))
    ax.bar(x - 0.2, [r["replay_ttt_hours"] for r in sel], 0.4, yerr=[1.96 * r["replay_ttt_stderr_hours"] for r in sel],
           label="replay of the trace")
    ax.bar(x + 0.2, [r["model_ttt_hours"] for r in sel], 0.4, yerr=[1.96 * r["model_ttt_stderr_hours"] for r in sel],
           label="fitted independent model")
    ax.axhline(min(r["replay_ttt_hours"] for r in sel), color="0.5", lw=0.8, ls=":")
    ax.set_xticks(x, [r["strategy"].replace(" m=1", "").replace(" interleaved", "\ninterl.") for r in sel],
                  rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("time-to-train (h)")
    ax.set_title(f"system {sel[0]['system']}, time scale {sel[0]['time_scale']:g}: repair from the trace",
                 fontsize=9)
    ax.legend(fontsize=8)
    rec = read_trace(os.path.join(tmp, "lanl20.csv")).merged()
    ax2.hlines(rec.node, rec.start_hours / 24.0, rec.end_hours / 24.0, lw=2.0, color="C3")
    ax2.plot(rec.start_hours / 24.0, rec.node, "|", ms=2, color="C3")
    ax2.set_xlabel("days since the first record")
    ax2.set_ylabel("node")
    ax2.set_title("system 20: the down periods over time", fontsize=9)
    fig.text(0.01, 0.01, CREDIT, fontsize=7, color="0.3")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(path, dpi=DPI // 2)
    plt.close(fig)


def row_id(row: dict) -> str:
    """A strategy's name without spaces or '=' (the docs' quote markers select rows by it)."""
    return row["strategy"].replace(" ", "_").replace("=", "")


def write_outputs(rows: list, fits: list, meta: dict, out_dir: str) -> None:
    """figures/lanl_replay.csv, .json and .png from the rows, the fits and the run's settings."""
    from spare_jax.model.lanl import read_lanl
    from spare_jax.model.trace import write_trace

    for row in rows:
        row["id"] = row_id(row)
    with open(os.path.join(out_dir, "lanl_replay.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(out_dir, "lanl_replay.json"), "w") as fh:
        json.dump({**meta, "rows": rows, "fits": fits}, fh, indent=1, allow_nan=False)
    tmp = tempfile.mkdtemp(prefix="lanl_traces_")
    write_trace(os.path.join(tmp, "lanl20.csv"), read_lanl(20).records)
    figure(rows, os.path.join(out_dir, "lanl_replay.png"), tmp)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run to a temporary directory")
    ap.add_argument("--redraw", action="store_true", help="only the CSV and the figure, from figures/lanl_replay.json")
    ap.add_argument("--out", default=None, help="output directory (default figures/, --quick: a temporary one)")
    args = ap.parse_args(argv)
    t0 = time.time()
    out_dir = args.out or (tempfile.mkdtemp(prefix="lanl_replay_") if args.quick else os.path.join(ROOT, "figures"))
    os.makedirs(out_dir, exist_ok=True)
    if args.redraw:
        with open(os.path.join(out_dir, "lanl_replay.json")) as fh:
            record = json.load(fh)
        rows, fits = record.pop("rows"), record.pop("fits")
        record.pop("by", None)
        write_outputs(rows, fits, record, out_dir)
        return
    tmp = tempfile.mkdtemp(prefix="lanl_traces_")
    systems, scales, runs = ((20,), (1.0,), 2) if args.quick else (SYSTEMS, SCALES, RUNS)
    # system 20 at 0.05 first (the figure's), then the others
    plan = [(20, 1.0, True)] if args.quick else [(20, 0.05, True)] + [
        (sy, sc, True) for sc in (0.05, 1.0) for sy in (18, 19, 20) if (sy, sc) != (20, 0.05)]
    rows, fits = [], []
    for system, scale, full in plan:
        got, fit = one_system(system, scale, args.quick, tmp, runs, full)
        rows += got
        if scale == 1.0:
            fits.append(fit_summary(system, fit))
    for row in rows:
        print(f"{row['system']:>3} s={row['time_scale']:<5g} {row['strategy']:<26} replay "
              f"{row['replay_ttt_hours']:8.1f} ± {row['replay_ttt_stderr_hours']:5.1f} h  model "
              f"{row['model_ttt_hours']:8.1f} ± {row['model_ttt_stderr_hours']:5.1f} h  error "
              f"{row['model_error_pct']:+6.1f}%{' *' if row['model_error_beyond_stats'] else ''}")
    load = os.getloadavg()
    meta = {"credit": CREDIT, "settings": {"work_hours": QUICK_WORK_HOURS if args.quick else WORK_HOURS,
                                           "ckpt_cost_min": CKPT_COST_MIN, "restart_min": RESTART_MIN,
                                           "ckpt_interval_min": TAU_MIN, "runs": runs, "trace_unit": "group",
                                           "repair_from": "trace", "time_scales": list(scales),
                                           "systems": list(systems)},
            "elapsed_s": time.time() - t0, "load_average": list(load),
            "command": "python experiments/lanl_replay.py" + (" --quick" if args.quick else "")}
    write_outputs(rows, fits, meta, out_dir)
    print(f"wrote {out_dir}/lanl_replay.csv, .json, .png in {time.time() - t0:.0f} s (load {load[0]:.1f})")


if __name__ == "__main__":
    main()
