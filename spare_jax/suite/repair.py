"""Repair without a global restart (docs/repair.md#repair-without-a-global-restart): (a) mean time to wipe-out vs the
repair time D for r = 2..8 (first-order theory with the start correction, MC points), (b) r*, TTT and SPARe's
reduction against the best Rep vs D (renewal-reward on pools of epochs with rejoins, ``ttt.pool.optimize_pool``).

Writes ``repair_wipeout.csv``, ``repair_ttt.csv`` and ``repair.png``.
"""

from __future__ import annotations

import dataclasses
import math
import os
import time

from .. import plotting
from ..model.cluster import Sampling
from .common import log

NEVER = math.inf


@dataclasses.dataclass(frozen=True)
class RepairOptimum:
    """Part (b) of ``repair_experiment``: r* (up to ``r_max``), TTT and SPARe's reduction against the best Rep
    at N = ``groups`` for each repair time of ``ds`` (and "never"), on pools of ``epochs`` epochs with rejoins
    (censored at ``max_time_runs`` x W x r_max), for a run of ``work_hours`` of work."""

    groups: int = 600
    ds: tuple = (10.0, 30.0, 100.0, 1000.0)
    r_max: int = 6
    epochs: int = 64
    work_hours: float = 720.0
    max_time_runs: float = 1.0


def _static_uptime(n, r, model):
    from .. import theory

    return theory.expected_uptime(theory.survival_exact("stacked", n, r), n, model.group_rate_per_min)


def repair_experiment(out_dir="figures", n=600, rs=tuple(range(2, 9)),
                      ds=(1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0, 10_000.0),
                      sampling: Sampling = Sampling(64), mc_cap_hours=200.0, optimum: RepairOptimum = RepairOptimum(),
                      law="fixed"):
    """(a) The mean time to wipe-out vs the repair time D (each of ``ds``, law ``law``, and "never") for each r
    of ``rs`` at N = ``n``: the theory, and the Monte Carlo (``sampling.count`` epochs of ``sampling.seed``)
    where the theory is within ``mc_cap_hours``; (b) ``optimum`` (pools of the same seed)."""
    from ..model.failures import FailureModel
    from ..model.placement import make_placement
    from ..model.repair import Repair
    from ..kernels.repair import simulate_repair
    from ..model.scenario import Scenario
    from ..theory.repair import first_order_uptime, transient_uptime
    from ..model.cluster import Cluster
    from ..ttt.config import Space, Training
    from ..ttt.pool import optimize_pool
    from ..kernels.wipeout import simulate_wipeout

    trials, seed = sampling.count, sampling.seed
    mc_sampling = dataclasses.replace(sampling, out_dir=None, progress=False)  # a run per point: no --out, no bar
    opt_n, opt_ds, r_max, epochs = optimum.groups, optimum.ds, optimum.r_max, optimum.epochs
    work_hours, max_time_runs = optimum.work_hours, optimum.max_time_runs
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
                    w = simulate_wipeout(pl, mc_sampling, model=model)
                    mc, se = w.uptime_mean_min, w.uptime_stderr_min
                else:
                    res = simulate_repair(pl, mc_sampling, model=model, repair=Repair(d, law))
                    mc, se = res.uptime_mean_min, res.uptime_stderr_min
            rows.append({"r": r, "repair_min": d, "theory_uptime_h": th / 60.0, "first_order_uptime_h": fo / 60.0,
                         "mc_uptime_h": None if mc is None else mc / 60.0,
                         "mc_stderr_h": None if se is None else se / 60.0,
                         "z": None if mc is None or not se else (mc - th) / se, "trials": trials if mc else 0})
            log(f"repair r={r} D={d:g}: theory {th / 60:.4g} h, MC "
                f"{'-' if mc is None else f'{mc / 60:.4g} +- {se / 60:.2g} h'} ({time.perf_counter() - t0:.1f} s)")
    plotting.write_csv(os.path.join(out_dir, "repair_wipeout.csv"), rows)
    # (b) r*, TTT, SPARe vs the best Rep
    cfg = Training(work_hours=work_hours)
    opt_rows = []
    for d in list(opt_ds) + [NEVER]:
        t0 = time.perf_counter()
        rep = None if d == NEVER else Repair(d, law)
        max_time = None if d == NEVER else max_time_runs * work_hours * 60.0 * r_max
        res = optimize_pool(Cluster(opt_n, model, Scenario(), rep), cfg, Space(r_max, epochs=epochs, seed=seed),
                            ("spare", "rep"), max_time=max_time)
        sp, rp = res["schemes"]["spare"], res["schemes"]["rep"]
        opt_rows.append({"repair_min": d, "spare_r_star": sp["r_star"], "spare_ttt_h": sp["ttt_hours"],
                         "spare_ttt_stderr_h": sp["ttt_stderr_hours"], "spare_tau_min": sp["ckpt_interval_min"],
                         "rep_r_star": rp["r_star"], "rep_ttt_h": rp["ttt_hours"],
                         "rep_ttt_stderr_h": rp["ttt_stderr_hours"],
                         "reduction_vs_rep": 1.0 - sp["ttt_hours"] / rp["ttt_hours"]})
        log(f"repair optimize N={opt_n} D={d:g}: SPARe r*={sp['r_star']} TTT {sp['ttt_hours']:.1f} h; Rep r*="
            f"{rp['r_star']} TTT {rp['ttt_hours']:.1f} h ({time.perf_counter() - t0:.1f} s)")
    plotting.write_csv(os.path.join(out_dir, "repair_ttt.csv"), opt_rows)
    _plot(out_dir, rows, opt_rows, ds, n, opt_n)
    return {"wipeout": rows, "optimize": opt_rows}


def y_limits(rows) -> tuple[float, float]:
    """The informative range of the wipe-out panel (hours): from below the smallest value plotted up to 30 x
    the largest value that the Monte Carlo or the "never" point can check (the theory runs to 10^22 h at
    short repairs, which no run can tell from "never")."""
    checked = [x["mc_uptime_h"] + 2 * (x["mc_stderr_h"] or 0.0) for x in rows if x["mc_uptime_h"] is not None]
    checked += [x["theory_uptime_h"] for x in rows if x["repair_min"] == NEVER]
    lows = [x[k] for x in rows for k in ("theory_uptime_h", "first_order_uptime_h", "mc_uptime_h")
            if x.get(k) is not None and x[k] > 0]
    return 0.5 * min(lows), 30.0 * max(checked)


def _plot(out_dir, rows, opt_rows, ds, n, opt_n):
    never_x = max(ds) * 4  # "never" drawn right of the largest D
    fig, (a, b) = plotting.new_figure(2, width=6.0, height=4.8)
    lo, hi = y_limits(rows)
    styles = ["-", "--", "-.", (0, (5, 1, 1, 1, 1, 1))]
    beyond_any = False
    for i, r in enumerate(sorted({x["r"] for x in rows})):
        sub = [x for x in rows if x["r"] == r]
        xs = [never_x if x["repair_min"] == NEVER else x["repair_min"] for x in sub]
        line, = a.plot(xs[:-1], [x["theory_uptime_h"] for x in sub[:-1]], linestyle=styles[i % len(styles)],
                       label=f"r = {r}")
        a.plot(xs[:-1], [x.get("first_order_uptime_h", x["theory_uptime_h"]) for x in sub[:-1]], ":", lw=0.8,
               color=line.get_color())
        a.plot([never_x], [sub[-1]["theory_uptime_h"]], "s", color=line.get_color(), mfc="none")
        beyond = [xv for xv, x in zip(xs[:-1], sub[:-1]) if x["theory_uptime_h"] > hi]
        if beyond:  # the theory above the informative range: one arrow at the top edge where it leaves
            beyond_any = True
            a.plot([beyond[-1]], [hi], "^", color=line.get_color(), ms=6, clip_on=False)
        mc = [(xv, x) for xv, x in zip(xs, sub) if x["mc_uptime_h"] is not None]
        if mc:
            a.errorbar([m[0] for m in mc], [m[1]["mc_uptime_h"] for m in mc],
                       yerr=[2 * m[1]["mc_stderr_h"] for m in mc], fmt="o", ms=3, color=line.get_color())
    a.set_xscale("log")
    a.set_yscale("log")
    a.set_ylim(lo, hi)
    if beyond_any:  # a legend entry for the arrows (the theory leaves the axis there)
        a.plot([], [], "^", color="k", ms=5, label=f"theory > {hi:,.0f} h")
    a.set_xlabel('repair time D (min); rightmost point: "never" (global restart only)')
    a.set_ylabel("mean time to wipe-out (h)")
    a.set_title(f"N = {n}: transient-hazard theory (lines; dotted: first order), MC (±2 s.e.)", fontsize=9)
    a.legend(fontsize=7, ncol=2, loc="upper right")
    xs = [never_x if x["repair_min"] == NEVER else x["repair_min"] for x in opt_rows]
    b.plot(xs, [x["spare_ttt_h"] for x in opt_rows], "o-", label="SPARe+CKPT TTT (h)")
    b.plot(xs, [x["rep_ttt_h"] for x in opt_rows], "s--", label="best Rep+CKPT TTT (h)")
    for xv, x in zip(xs, opt_rows):
        b.annotate(f"r* = {x['spare_r_star']}\n−{100 * x['reduction_vs_rep']:.0f}%", (xv, x["spare_ttt_h"]),
                   fontsize=7, textcoords="offset points", xytext=(0, -22))
    b.set_xscale("log")
    b.margins(y=0.12)  # room for the r* labels under the lowest point
    b.set_xlabel('repair time D (min); rightmost: "never"')
    b.set_ylabel("time-to-train (h)")
    b.set_title(f"N = {opt_n}: r*, TTT and SPARe's reduction vs the best Rep")
    b.legend(fontsize=8)
    plotting.save(fig, os.path.join(out_dir, "repair.png"))


def _read_csv(path):
    import csv

    with open(path) as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        for k, v in row.items():
            row[k] = None if v == "" else (int(v) if v.lstrip("-").isdigit() else float(v))
    return rows


def replot_repair(src: str = "figures", dst: str | None = None, n: int = 600, opt_n: int = 600):
    """Redraw ``repair.png`` from ``repair_wipeout.csv`` and ``repair_ttt.csv`` (no simulation)."""
    rows = _read_csv(os.path.join(src, "repair_wipeout.csv"))
    opt_rows = _read_csv(os.path.join(src, "repair_ttt.csv"))
    ds = sorted({x["repair_min"] for x in rows if x["repair_min"] != NEVER})
    _plot(dst or src, rows, opt_rows, ds, n, opt_n)
