"""Repair without a global restart (SPEC §10.5): (a) mean time to wipe-out vs the repair time D for r = 2..8
(first-order theory with the start correction, MC points), (b) r*, TTT and SPARe's reduction against the
best Rep vs D (renewal-reward on pools of epochs with rejoins, ``ttt.pool.optimize_pool``).

Writes ``repair_wipeout.csv``, ``repair_ttt.csv`` and ``repair.png``.
"""

from __future__ import annotations

import math
import os
import time

import numpy as np

from .. import plotting
from .common import _log

NEVER = math.inf


def _static_uptime(n, r, model):
    from .. import theory

    return theory.expected_uptime(theory.survival_exact("stacked", n, r), n, model.group_rate_per_min)


def repair_experiment(out_dir="figures", n=600, rs=tuple(range(2, 9)),
                      ds=(1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0, 10_000.0), trials=64,
                      mc_cap_hours=200.0, opt_n=600, opt_ds=(10.0, 30.0, 100.0, 1000.0), r_max=6, epochs=64,
                      work_hours=720.0, max_time_runs=1.0, seed=0, law="fixed"):
    from ..failures import FailureModel
    from ..placement import make_placement
    from ..repair import Repair, simulate_repair
    from ..scenario import Scenario
    from ..theory.repair import first_order_uptime, transient_uptime
    from ..ttt.closed_form import TrainingConfig
    from ..ttt.pool import optimize_pool
    from ..wipeout import simulate_wipeout

    os.makedirs(out_dir, exist_ok=True)
    model = FailureModel()
    rows = []
    for r in rs:
        pl = make_placement("stacked", n, r)
        for d in list(ds) + [NEVER]:
            t0 = time.perf_counter()
            if d == NEVER:
                th = fo = _static_uptime(n, r, model)
            else:
                th = transient_uptime(pl, model, Repair(d, law))["uptime_min"]
                fo = first_order_uptime(pl, model, Repair(d, law))["uptime_min"]
            mc = se = None
            if th / 60.0 <= mc_cap_hours:
                if d == NEVER:
                    w = simulate_wipeout(pl, trials, seed, model=model)
                    mc, se = w.uptime_mean_min, w.uptime_stderr_min
                else:
                    res = simulate_repair(pl, trials, seed, model=model, repair=Repair(d, law))
                    mc, se = res.uptime_mean_min, res.uptime_stderr_min
            rows.append({"r": r, "repair_min": d, "theory_uptime_h": th / 60.0, "first_order_uptime_h": fo / 60.0,
                         "mc_uptime_h": None if mc is None else mc / 60.0,
                         "mc_stderr_h": None if se is None else se / 60.0,
                         "z": None if mc is None or not se else (mc - th) / se, "trials": trials if mc else 0})
            _log(f"repair r={r} D={d:g}: theory {th / 60:.4g} h, MC "
                 f"{'-' if mc is None else f'{mc / 60:.4g} +- {se / 60:.2g} h'} ({time.perf_counter() - t0:.1f} s)")
    plotting.write_csv(os.path.join(out_dir, "repair_wipeout.csv"), rows)
    # (b) r*, TTT, SPARe vs the best Rep
    cfg = TrainingConfig(work_hours=work_hours)
    opt_rows = []
    for d in list(opt_ds) + [NEVER]:
        t0 = time.perf_counter()
        rep = None if d == NEVER else Repair(d, law)
        res = optimize_pool(opt_n, r_max, model, cfg, Scenario(), epochs=epochs, seed=seed, schemes=("spare", "rep"),
                            repair=rep, max_time=None if d == NEVER else max_time_runs * work_hours * 60.0 * r_max)
        sp, rp = res["schemes"]["spare"], res["schemes"]["rep"]
        opt_rows.append({"repair_min": d, "spare_r_star": sp["r_star"], "spare_ttt_h": sp["ttt_hours"],
                         "spare_ttt_stderr_h": sp["ttt_stderr_hours"], "spare_tau_min": sp["ckpt_interval_min"],
                         "rep_r_star": rp["r_star"], "rep_ttt_h": rp["ttt_hours"],
                         "rep_ttt_stderr_h": rp["ttt_stderr_hours"],
                         "reduction_vs_rep": 1.0 - sp["ttt_hours"] / rp["ttt_hours"]})
        _log(f"repair optimize N={opt_n} D={d:g}: SPARe r*={sp['r_star']} TTT {sp['ttt_hours']:.1f} h; Rep r*="
             f"{rp['r_star']} TTT {rp['ttt_hours']:.1f} h ({time.perf_counter() - t0:.1f} s)")
    plotting.write_csv(os.path.join(out_dir, "repair_ttt.csv"), opt_rows)
    _plot(out_dir, rows, opt_rows, ds, n, opt_n)
    return {"wipeout": rows, "optimize": opt_rows}


def _plot(out_dir, rows, opt_rows, ds, n, opt_n):
    never_x = max(ds) * 4  # "never" drawn right of the largest D
    fig, (a, b) = plotting.new_figure(2, width=6.0, height=4.8)
    for r in sorted({x["r"] for x in rows}):
        sub = [x for x in rows if x["r"] == r]
        xs = [never_x if x["repair_min"] == NEVER else x["repair_min"] for x in sub]
        line, = a.plot(xs[:-1], [x["theory_uptime_h"] for x in sub[:-1]], "-", label=f"r = {r}")
        a.plot(xs[:-1], [x.get("first_order_uptime_h", x["theory_uptime_h"]) for x in sub[:-1]], ":", lw=0.8,
               color=line.get_color())
        a.plot([never_x], [sub[-1]["theory_uptime_h"]], "s", color=line.get_color(), mfc="none")
        mc = [(xv, x) for xv, x in zip(xs, sub) if x["mc_uptime_h"] is not None]
        if mc:
            a.errorbar([m[0] for m in mc], [m[1]["mc_uptime_h"] for m in mc],
                       yerr=[2 * m[1]["mc_stderr_h"] for m in mc], fmt="o", ms=3, color=line.get_color())
    a.set_xscale("log")
    a.set_yscale("log")
    a.set_xlabel('repair time D (min); rightmost point: "never" (global restart only)')
    a.set_ylabel("mean time to wipe-out (h)")
    a.set_title(f"N = {n}: transient-hazard theory (lines; dotted: first order), MC (±2 s.e.)", fontsize=9)
    a.legend(fontsize=7, ncol=2)
    xs = [never_x if x["repair_min"] == NEVER else x["repair_min"] for x in opt_rows]
    b.plot(xs, [x["spare_ttt_h"] for x in opt_rows], "o-", label="SPARe+CKPT TTT (h)")
    b.plot(xs, [x["rep_ttt_h"] for x in opt_rows], "s-", label="best Rep+CKPT TTT (h)")
    for xv, x in zip(xs, opt_rows):
        b.annotate(f"r*={x['spare_r_star']}\n{100 * x['reduction_vs_rep']:.0f}%", (xv, x["spare_ttt_h"]),
                   fontsize=7, textcoords="offset points", xytext=(0, -22))
    b.set_xscale("log")
    b.set_xlabel('repair time D (min); rightmost: "never"')
    b.set_ylabel("time-to-train (h)")
    b.set_title(f"N = {opt_n}: r*, TTT and SPARe's reduction vs the best Rep")
    b.legend(fontsize=8)
    plotting.save(fig, os.path.join(out_dir, "repair.png"))
