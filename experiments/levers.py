"""What each lever buys: the expected time-to-train (TTT) of one cluster, with its 95% interval, as one lever
after another is added, against the bound (a run whose group failures cost nothing).

    python experiments/levers.py           # the defaults below: about 6 minutes on 2 shared cores
    python experiments/levers.py --quick   # W = 96 h, 48 runs per bar, m = 8, D_max 1.25: about 4 minutes

Command of the committed figures/levers.csv and figures/levers.png: ``python experiments/levers.py``
(defaults: 16,384 GPUs in 64 groups of 256, per-GPU MTBF 8,090 h, W = 720 h, C = 5 min, R = 15 min, a fixed
30-minute repair, m chosen from 4 and 8, D_max from 1.125, 1.25, 1.5 and 2, 200 runs per bar, seed 0).
Most of the time is compiling the whole-run kernel, about 10 s per (scheme, r, m, D_max).

The bars, each at its own best configuration:

1. checkpointing alone: ``none`` at tau* (``optimize``, closed form);
2. the best replication: ``rep`` at r* among the divisors of N and its tau* (``optimize``, closed form);
3. SPARe as in the paper: ``spare`` at r*, tau*, whole shards (m = 1; ``optimize``, closed form);
4. + micro-batches: ``spare`` with m micro-batches per shard, the m of ``--microbatches`` with the shorter
   closed-form TTT, at its own r*, tau*;
5. + repair: that m and a failed group rejoining after ``--repair-time`` minutes (fixed) without a global
   restart; r*, tau* from ``optimize``, whose joint search on whole training runs screens spare, rep and
   none at r = 2..6 and that m (``ttt.search``: short runs, then the finalists at full length);
6. + restart policy: the same with the proactive restart at depth D_max: each D_max of ``--restart-depths``
   is tried at the r of bar 5 (``--screen-runs`` whole runs, tau by Daly on pilot runs; r is not searched
   again: ``optimize`` would screen every scheme and r once more per D_max);
7. elastic: every group holds the whole model; a failed group leaves and rejoins after the same repair, and
   the survivors rebalance the batch (depth ceil(N m / alive) / m, the same m); tau by Daly on pilot runs.

Every bar's TTT is ``time_to_train`` with ``--runs`` training runs at the chosen configuration (seed
``--seed`` + 1, not the seed that chose it), mean +- 1.96 standard errors. Bars 1-4 are answered by the
Monte Carlo of training runs beside the closed form, bars 5-7 by whole training runs event by event. The
dashed line is ``planner.verdict.bound``: the expected TTT when group failures cost nothing (only
checkpoints, and job-wide interruptions with their restarts where ``--job-mtbf-hours`` gives them).

Writes figures/levers.csv (one row per bar) and figures/levers.png, and prints the table.
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys
import time

from spare_jax.model.cluster import Cluster, Sampling
from spare_jax.model.failures import FailureModel
from spare_jax.model.repair import Repair
from spare_jax.model.scenario import Scenario
from spare_jax.model.training import Training
from spare_jax.planner.verdict import bound
from spare_jax.plotting import new_figure, save, write_csv
from spare_jax.ttt.answer import Space, optimize, time_to_train
from spare_jax.ttt.config import Policy

COLUMNS = ("label", "scheme", "r", "m", "tau_min", "D_max", "repair_min", "ttt_hours", "stderr_hours",
           "ci95_low_hours", "ci95_high_hours", "runs", "optimizer_ttt_hours", "proactive_restarts_per_run",
           "method")


def _args():
    doc = __doc__.strip().splitlines()
    p = argparse.ArgumentParser(description=doc[0])
    p.add_argument("--out", default="figures", help="where levers.csv and levers.png go (default figures/)")
    p.add_argument("--quick", action="store_true", help="W = 96 h, 48 runs per bar, m = 8, D_max 1.25 (~4 min)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--gpus", type=int, default=16_384)
    p.add_argument("--gpus-per-group", type=int, default=256)
    p.add_argument("--gpu-mtbf-hours", type=float, default=8_090.0,
                   help="per-GPU MTBF of the failures that take down one group (default 8,090 h: RSC-1's "
                        "measured 7.9 h for 1,024-GPU jobs, see `spare-jax presets`)")
    p.add_argument("--job-mtbf-hours", type=float, default=None,
                   help="job-wide interruptions (no redundancy masks them), mean time between them; default none")
    p.add_argument("--work-hours", type=float, default=None, help="W (default 720 h, 96 h with --quick)")
    p.add_argument("--ckpt-cost", type=float, default=5.0, help="C, minutes")
    p.add_argument("--restart", type=float, default=15.0, help="R, minutes")
    p.add_argument("--repair-time", type=float, default=30.0, help="fixed repair time D of bars 5-7, minutes")
    p.add_argument("--microbatches", default=None, help="the m tried for bar 4 (default 4,8; 8 with --quick)")
    p.add_argument("--restart-depths", default=None,
                   help="the D_max tried for bar 6 (default 1.125,1.25,1.5,2; 1.25 with --quick)")
    p.add_argument("--runs", type=int, default=None, help="training runs per bar (default 200, 48 with --quick)")
    p.add_argument("--screen-runs", type=int, default=16, help="whole runs per D_max when choosing it")
    a = p.parse_args()
    if a.gpus % a.gpus_per_group:
        p.error("--gpus-per-group must divide --gpus")
    a.work_hours = a.work_hours or (96.0 if a.quick else 720.0)
    a.runs = a.runs or (48 if a.quick else 200)
    a.microbatches = [int(x) for x in (a.microbatches or ("8" if a.quick else "4,8")).split(",")]
    a.restart_depths = [float(x) for x in (a.restart_depths or ("1.25" if a.quick else "1.125,1.25,1.5,2")).split(",")]
    return a


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class Levers:
    def __init__(self, a):
        self.a = a
        groups = a.gpus // a.gpus_per_group
        model = FailureModel(system_mtbf_min=a.gpu_mtbf_hours * 60.0 / a.gpus, reference_gpus=float(a.gpus),
                             gpus_per_group=float(a.gpus_per_group))
        job = None if a.job_mtbf_hours is None else 60.0 * a.job_mtbf_hours
        self.scenario = Scenario(job_mtbf_min=job)
        self.cluster = Cluster(groups, model, self.scenario)
        self.repair = Repair(a.repair_time, law="fixed")
        self.training = Training(work_hours=a.work_hours, ckpt_cost_min=a.ckpt_cost, restart_min=a.restart,
                                 reference_gpus=float(a.gpus))
        self.final = Sampling(count=a.runs, seed=a.seed + 1)
        self.rows = []

    def at(self, m: int = 1, repair: bool = False) -> Cluster:
        return Cluster(self.cluster.groups, self.cluster.model, dataclasses.replace(self.scenario, microbatches=m),
                       self.repair if repair else None)

    def measure(self, label, cluster, policy, tau, method, opt_ttt=None):
        """``time_to_train`` at the chosen configuration (``--runs`` runs, a seed of its own): one bar."""
        t0 = time.perf_counter()
        m = cluster.scenario.microbatches
        row = {"label": label, "scheme": policy.scheme,
               "r": None if policy.scheme == "elastic" else policy.redundancy, "m": m, "tau_min": tau,
               "D_max": policy.restart_depth,
               "repair_min": None if cluster.repair is None else cluster.repair.repair_time_min}
        try:
            rep = time_to_train(cluster, dataclasses.replace(self.training, ckpt_interval_min=tau), policy,
                                self.final).to_json()
        except ValueError as e:  # a combination the library refuses: say so, do not work around it
            _log(f"  {label}: refused by the library: {e}")
            row.update(ttt_hours=math.nan, method=f"refused: {e}")
            self.rows.append(row)
            return row
        row.update(tau_min=rep["ckpt_interval_min"], ttt_hours=rep["mc_ttt_hours"],
                   stderr_hours=rep["mc_ttt_stderr_hours"], ci95_low_hours=rep["mc_ttt_ci95_low"],
                   ci95_high_hours=rep["mc_ttt_ci95_high"], runs=rep["runs"], optimizer_ttt_hours=opt_ttt,
                   proactive_restarts_per_run=rep.get("proactive_restarts_mean") if policy.restart_depth else None,
                   method=f"{method}; TTT: {rep['runs']} "
                          + ("whole training runs" if rep.get("method", "").startswith("whole") else
                             "Monte Carlo training runs"))
        self.rows.append(row)
        _log(f"  {label}: {row['ttt_hours']:,.1f} +- {1.96 * row['stderr_hours']:.1f} h "
             f"({time.perf_counter() - t0:.0f} s)")
        return row

    def run(self):
        a, tr = self.a, self.training
        space = Space(r_max=min(20, self.cluster.groups - 1), seed=a.seed, curves=True)
        t = time.perf_counter()
        closed = optimize(self.at(1), tr, space).to_json()["schemes"]
        _log(f"optimize, m = 1 (closed form): {time.perf_counter() - t:.0f} s")
        cf = "r, tau: optimize (closed form)"
        e = closed["none"]
        self.measure("checkpointing alone", self.at(1), Policy("none", 1), e["ckpt_interval_min"], cf, e["ttt_hours"])
        e = closed["rep"]
        self.measure("best replication", self.at(1), Policy("rep", int(e["r_star"])), e["ckpt_interval_min"], cf,
                     e["ttt_hours"])
        e = closed["spare"]
        self.measure("SPARe (paper)", self.at(1), Policy("spare", int(e["r_star"])), e["ckpt_interval_min"], cf,
                     e["ttt_hours"])
        # micro-batches: the m with the shorter closed-form TTT
        best = None
        for m in a.microbatches:
            e = optimize(self.at(m), tr, space).to_json()["schemes"]["spare"]
            _log(f"optimize, m = {m}: r* = {e['r_star']}, {e['ttt_hours']:,.1f} h (closed form)")
            if best is None or e["ttt_hours"] < best[1]["ttt_hours"]:
                best = (m, e)
        m, e = best
        self.measure(f"+ micro-batches (m = {m})", self.at(m), Policy("spare", int(e["r_star"])),
                     e["ckpt_interval_min"], cf + f"; m: best of {'/'.join(map(str, a.microbatches))}", e["ttt_hours"])
        # + repair: whole training runs
        t = time.perf_counter()
        rc = self.at(m, repair=True)
        try:
            res = optimize(rc, tr, dataclasses.replace(space, microbatches=(m,))).to_json()
        except ValueError as err:
            _log(f"  + repair: optimize refused: {err}")
            self.rows.append({"label": "+ repair", "scheme": "spare", "m": m, "repair_min": a.repair_time,
                              "ttt_hours": math.nan, "method": f"refused: {err}"})
            res = None
        if res is not None:
            e = res["schemes"]["spare"]
            curve = ", ".join(f"r={c['r']}: {c['ttt_hours']:,.0f} h" for c in res["curves"]["spare"])
            _log(f"optimize with repair (whole runs): r* = {e['r_star']} [{curve}] "
                 f"({time.perf_counter() - t:.0f} s)")
            r5 = int(e["r_star"])
            ow = "r, tau: optimize (joint search on whole runs, r = 2..6)"
            self.measure("+ repair", rc, Policy("spare", r5), e["ckpt_interval_min"], ow, e["ttt_hours"])
            self.restart_policy(rc, r5, m)
        # elastic: the same repair and m, the survivors rebalance
        self.measure("elastic (rebalance)", rc, Policy("elastic", elastic_data="rebalance"), None,
                     "tau: Daly on pilot runs")
        return self.rows

    def restart_policy(self, rc, r5, m):
        """Bar 6: the best D_max of the grid at the r of bar 5 (``--screen-runs`` runs each, tau by Daly on
        pilot runs), measured again with ``--runs`` runs of another seed."""
        a, t = self.a, time.perf_counter()
        screen = {}
        for d in a.restart_depths:
            try:
                rep = time_to_train(rc, self.training, Policy("spare", r5, restart_depth=d),
                                    Sampling(count=a.screen_runs, seed=a.seed)).to_json()
            except ValueError as err:
                _log(f"  D_max = {d:g}: refused by the library: {err}")
                continue
            screen[d] = (rep["mc_ttt_hours"], rep["ckpt_interval_min"])
            _log(f"  D_max = {d:g} at r = {r5}: {rep['mc_ttt_hours']:,.1f} h, "
                 f"{rep['proactive_restarts_mean']:.1f} proactive restarts per run")
        if not screen:
            self.rows.append({"label": "+ restart policy", "scheme": "spare", "m": m, "repair_min": a.repair_time,
                              "ttt_hours": math.nan, "method": "refused: every D_max of the grid"})
            return
        d = min(screen, key=lambda x: screen[x][0])
        _log(f"D_max screen: {time.perf_counter() - t:.0f} s")
        grid = ", ".join(f"{x:g} ({screen[x][0]:,.1f} h)" if x in screen else f"{x:g} (refused)"
                         for x in a.restart_depths)
        self.measure(f"+ restart policy (D_max = {d:g})", rc, Policy("spare", r5, restart_depth=d), screen[d][1],
                     f"D_max: best of {grid} at the r of bar 5 ({a.screen_runs} whole runs each, tau by Daly on "
                     "pilot runs)")


def _fmt(x, spec):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def table(rows, bound_h) -> str:
    head = f"{'bar':<32} {'scheme':<8} {'r':>2} {'m':>2} {'tau min':>8} {'D_max':>5} {'repair':>6}  " \
           f"{'TTT h':>9} {'95% interval h':>19}"
    out = [head]
    for x in rows:
        ci = ("refused" if math.isnan(x["ttt_hours"]) else
              f"{x['ci95_low_hours']:,.1f}-{x['ci95_high_hours']:,.1f}")
        out.append(f"{x['label']:<32} {x['scheme']:<8} {_fmt(x.get('r'), 'd'):>2} {x['m']:>2} "
                   f"{_fmt(x.get('tau_min'), ',.0f'):>8} {_fmt(x.get('D_max'), 'g'):>5} "
                   f"{_fmt(x.get('repair_min'), 'g'):>6}  {_fmt(x['ttt_hours'], ',.1f'):>9} {ci:>19}")
    out.append(f"{'bound: group failures free':<32} {'':<8} {'':>2} {'':>2} {'':>8} {'':>5} {'':>6}  "
               f"{bound_h:>9,.1f}")
    return "\n".join(out)


def plot(rows, bound_h, work_hours, title, path):
    from matplotlib.patches import Patch

    fig, (ax,) = new_figure(1, width=10.0, height=5.6)
    colours = {"none": "tab:gray", "rep": "tab:orange", "spare": "tab:blue", "elastic": "tab:green"}
    names = {"none": "checkpointing alone", "rep": "replication", "spare": "SPARe", "elastic": "elastic"}
    xs = range(len(rows))
    top = max(x["ttt_hours"] for x in rows if not math.isnan(x["ttt_hours"]))
    for i, x in zip(xs, rows):
        if math.isnan(x["ttt_hours"]):
            ax.text(i, 0.02 * top, "refused\nby the\nlibrary", ha="center", va="bottom", fontsize=8)
            continue
        half = x["ci95_high_hours"] - x["ttt_hours"]
        ax.bar(i, x["ttt_hours"], color=colours[x["scheme"]], alpha=0.85, width=0.7)
        ax.errorbar(i, x["ttt_hours"], yerr=half, color="black", capsize=5, lw=1.2)
        ax.text(i, x["ci95_high_hours"] + 0.012 * top, f"{x['ttt_hours']:,.0f} h\n{x['ttt_hours'] / work_hours:.2f} W",
                ha="center", va="bottom", fontsize=8)
    line = ax.axhline(bound_h, ls="--", color="black", lw=1.2)
    labels = []
    for x in rows:
        cfg = [] if x["scheme"] in ("none", "elastic") or x.get("r") is None else [f"r = {x['r']}"]
        if x.get("m", 1) > 1:
            cfg.append(f"m = {x['m']}")
        tau = "" if x.get("tau_min") is None else f"\nτ = {x['tau_min']:.0f} min"
        labels.append(x["label"].replace(" (", "\n(") + ("\n" + ", ".join(cfg) if cfg else "") + tau)
    ax.set_xticks(list(xs))
    ax.set_xticklabels(labels, fontsize=7.5)
    ax.set_ylabel("expected time-to-train (h), with its 95% interval")
    ax.set_ylim(0, 1.12 * top)
    handles = [Patch(color=colours[s], alpha=0.85, label=names[s]) for s in colours
               if any(x["scheme"] == s for x in rows)]
    handles.append(line)
    line.set_label(f"bound: group failures cost nothing ({bound_h:,.0f} h)")
    ax.legend(handles=handles, fontsize=8, loc="upper right")
    ax.set_title(title, fontsize=9)
    save(fig, path)


def main():
    a = _args()
    t0 = time.perf_counter()
    lv = Levers(a)
    rows = lv.run()
    tr, cl = lv.training, lv.cluster
    b = bound(tr.work_hours, tr.ckpt_cost_min, tr.restart_for(cl.gpus), cl.scenario.job_mtbf_min)["ttt_hours"]
    out = [{k: x.get(k) for k in COLUMNS} for x in rows]
    out.append({"label": "bound: group failures cost nothing", "scheme": "", "ttt_hours": b,
                "method": "planner.verdict.bound (closed form, best interval)"})
    write_csv(os.path.join(a.out, "levers.csv"), out)
    job = "" if a.job_mtbf_hours is None else f", job-wide MTBF {a.job_mtbf_hours:,.0f} h"
    title = (f"What each lever buys: {cl.gpus:,.0f} GPUs in {cl.groups} groups of {a.gpus_per_group}, per-GPU "
             f"MTBF {a.gpu_mtbf_hours:,.0f} h (a group failure every {cl.model.cluster_mtbf_min(cl.groups):.1f} "
             f"min){job}\nW = {tr.work_hours:g} h, C = {tr.ckpt_cost_min:g} min, R = {tr.restart_min:g} min, "
             f"repair {a.repair_time:g} min (fixed) in bars 5-7, {a.runs} runs per bar")
    plot(rows, b, tr.work_hours, title, os.path.join(a.out, "levers.png"))
    print(title.replace("\n", "; "))
    print(table(rows, b))
    print(f"wall time {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
