"""Time-to-train vs r and r* vs N (``experiments/ttt_vs_r.py``, ``experiments/rstar_vs_n.py``)."""

from __future__ import annotations

import math
import os

import numpy as np

from .. import plotting, theory
from .common import _log, dataclasses_replace


def ttt_vs_r(out_dir: str = "figures", groups: int = 600, rs=tuple(range(1, 21)), ckpt_costs=(1.0, 5.0, 10.0, 30.0),
             runs: int = 120, seed: int = 0, progress: bool = True, model=None, cfg=None) -> list[dict]:
    """TTT/W and availability vs r for SPARe+CKPT, Rep+CKPT and CKPT at N groups: the closed form at its
    optimal tau (lines) and the Monte Carlo at that tau (points with 95% CIs).

    Writes ``ttt_vs_r.csv`` and ``ttt_vs_r.png``.
    """
    from .. import ttt
    from ..failures import FailureModel

    model = model or FailureModel()
    cfg = cfg or ttt.TrainingConfig()
    gpus = groups * model.gpus_per_group
    rows = []
    for scheme in ttt.SCHEMES:
        for r in (rs if scheme != "none" else (1,)):
            if scheme == "rep" and groups % r:
                continue  # replica sets need r | N (ttt.scheme_placement refuses the rest)
            prof = ttt.epoch_profile(scheme, groups, r, model)
            rate = (1.0 / r) if scheme == "rep" else (1.0 if scheme == "none" else 0.4)
            need = ttt.epochs_needed(prof.mean_uptime_min, dataclasses_replace(cfg, ckpt_cost_min=min(ckpt_costs)),
                                     runs, rate)
            pool = ttt.sample_epochs(scheme, groups, r, need, seed=seed, model=model, progress=progress)
            for c in ckpt_costs:
                cfg_c = dataclasses_replace(cfg, ckpt_cost_min=c)
                tau, ttt_min = ttt.best_tau_grid(prof, cfg_c, gpus)
                th = ttt.ttt_theory(prof, tau, cfg_c, gpus)
                try:
                    mc = ttt.simulate_ttt(pool, tau, cfg_c, gpus)
                except ValueError:
                    mc = None
                row = {"scheme": scheme, "groups": groups, "redundancy": r, "ckpt_cost_min": c,
                       "ckpt_interval_min": tau, "theory_ttt_hours": th["ttt_hours"],
                       "theory_ttt_over_w": th["ttt_over_w"], "theory_availability": th["availability"],
                       "mc_runs": None if mc is None else mc["runs"],
                       "mc_ttt_hours": None if mc is None else mc["ttt_hours"],
                       "mc_ttt_stderr_hours": None if mc is None else mc["ttt_stderr_hours"],
                       "mc_availability": None if mc is None else mc["availability"],
                       "rel_gap": None if mc is None else th["ttt_hours"] / mc["ttt_hours"] - 1.0}
                rows.append(row)
            _log(f"  ttt {scheme:<5} r={r:>2}: " + "  ".join(
                f"C={row['ckpt_cost_min']:g}: th {row['theory_ttt_over_w']:.3f}W mc "
                f"{(row['mc_ttt_hours'] or float('nan')) / cfg.work_hours:.3f}W"
                for row in rows[-len(ckpt_costs):]))
    plotting.write_csv(os.path.join(out_dir, "ttt_vs_r.csv"), rows)
    _plot_ttt(rows, groups, ckpt_costs, os.path.join(out_dir, "ttt_vs_r.png"), cfg.work_hours)
    return rows


def _plot_ttt(rows, groups, ckpt_costs, path, work_hours):
    fig, axes = plotting.new_figure(2, width=6.2, height=4.8)
    styles = dict(zip(ckpt_costs, ("-", "--", "-.", ":")))
    for scheme in ("spare", "rep", "none"):
        for c in ckpt_costs:
            sel = [row for row in rows if row["scheme"] == scheme and row["ckpt_cost_min"] == c]
            if not sel:
                continue
            r = np.array([row["redundancy"] for row in sel])
            color = plotting.COLORS[scheme]
            label = {"spare": "SPARe+CKPT", "rep": "Rep+CKPT", "none": "CKPT only"}[scheme]
            if scheme == "none":
                axes[0].axhline(sel[0]["theory_ttt_over_w"], color=color, ls=styles[c], lw=1,
                                label=f"{label}, C={c:g} min (r=1)")
                axes[1].axhline(sel[0]["theory_availability"], color=color, ls=styles[c], lw=1)
                continue
            axes[0].plot(r, [row["theory_ttt_over_w"] for row in sel], styles[c], color=color, lw=1.2,
                         label=f"{label}, C={c:g} min")
            mc = [row for row in sel if row["mc_ttt_hours"] is not None]
            axes[0].errorbar([row["redundancy"] for row in mc], [row["mc_ttt_hours"] / work_hours for row in mc],
                             yerr=[1.96 * row["mc_ttt_stderr_hours"] / work_hours for row in mc], fmt="o", ms=2.5,
                             color=color, capsize=1.5)
            axes[1].plot(r, [row["theory_availability"] for row in sel], styles[c], color=color, lw=1.2)
            axes[1].plot([row["redundancy"] for row in mc], [row["mc_availability"] for row in mc], "o", ms=2.5,
                         color=color)
    axes[0].set_yscale("log")
    plotting.integer_x(axes[0])
    plotting.integer_x(axes[1])
    axes[0].set_xlabel("redundancy r")
    axes[0].set_ylabel("time-to-train / W  (W = failure-free work)")
    axes[0].set_title(f"Time-to-train, {groups * 1000:,} GPUs, MTBF 5 min, R = 60 min\n"
                      "lines: closed form at its optimal τ; points: Monte Carlo ±95% CI")
    axes[0].grid(alpha=0.3, which="both")
    axes[0].legend(fontsize=6, ncol=2)
    axes[1].set_xlabel("redundancy r")
    axes[1].set_ylabel("availability (uptime / wall-clock)")
    axes[1].set_title("Availability (closed form lines, Monte Carlo points)")
    axes[1].set_ylim(0, 1.02)
    axes[1].grid(alpha=0.3)
    plotting.save(fig, path)


def rstar_vs_n(out_dir: str = "figures", groups=(100, 200, 600, 2000, 6000, 20000, 100000), r_max: int = 24,
               progress: bool = True, model=None, cfg=None) -> list[dict]:
    """Optimal redundancy r* and the TTT reduction of SPARe+CKPT over Rep+CKPT vs N (closed form), against
    the paper's r* ~ log2 N + 0.833. Exact for every N (``theory.depth_cdf_bernoulli``).

    Writes ``rstar_vs_n.csv`` and ``rstar_vs_n.png``.
    """
    from .. import ttt
    from ..failures import FailureModel

    model = model or FailureModel()
    cfg = cfg or ttt.TrainingConfig()
    rows = []
    for n in groups:
        res = ttt.optimize(n, min(r_max, n), model, cfg, schemes=("spare", "rep"), progress=progress)
        sp, rp = res["schemes"]["spare"], res["schemes"]["rep"]
        rows.append({"groups": n, "gpus": n * model.gpus_per_group, "r_star_spare": sp["r_star"],
                     "r_star_rep": rp["r_star"], "paper_r_star": math.log2(n) + 0.833,
                     "ttt_spare_hours": sp["ttt_hours"], "ttt_rep_hours": rp["ttt_hours"],
                     "ttt_reduction_vs_rep": res["ttt_reduction_vs_rep"], "availability_spare": sp["availability"],
                     "tau_spare_min": sp["ckpt_interval_min"]})
        _log(f"  r* N={n:>6}: SPARe r*={sp['r_star']} (paper {math.log2(n) + 0.833:.2f}), Rep r*={rp['r_star']}, "
             f"TTT reduction {res['ttt_reduction_vs_rep']:.1%}")
    plotting.write_csv(os.path.join(out_dir, "rstar_vs_n.csv"), rows)
    fig, (ax1, ax2) = plotting.new_figure(2, width=6.0, height=4.6)
    n = np.array([row["groups"] for row in rows])
    ax1.plot(n, [row["r_star_spare"] for row in rows], "o-", color=plotting.COLORS["spare"], label="SPARe+CKPT r* (ours)")
    ax1.plot(n, [row["r_star_rep"] for row in rows], "s-", color=plotting.COLORS["rep"], label="Rep+CKPT r* (ours)")
    grid = np.logspace(np.log10(n.min()), np.log10(n.max()), 100)
    ax1.plot(grid, np.log2(grid) + 0.833, "k--", lw=1, label="paper: r* ≈ log2 N + 0.833")
    ax1.set_xscale("log")
    ax1.set_xlabel("data-parallel groups N (1,000 GPUs each)")
    ax1.set_ylabel("optimal redundancy r*")
    ax1.set_title("Optimal redundancy vs cluster size (closed form)")
    ax1.grid(alpha=0.3, which="both")
    ax1.legend(fontsize=8)
    ax2.plot(n, [100 * row["ttt_reduction_vs_rep"] for row in rows], "o-", color="k")
    ax2.axhspan(40, 50, color="tab:red", alpha=0.15, label="paper's claim: 40–50% shorter")
    ax2.set_xscale("log")
    ax2.set_xlabel("data-parallel groups N (1,000 GPUs each)")
    ax2.set_ylabel("TTT reduction of best SPARe+CKPT vs best Rep+CKPT (%)")
    ax2.set_title("Time-to-train reduction vs cluster size")
    ax2.grid(alpha=0.3, which="both")
    ax2.legend(fontsize=8)
    plotting.save(fig, os.path.join(out_dir, "rstar_vs_n.png"))
    return rows
