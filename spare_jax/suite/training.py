"""Time-to-train vs r and r* vs N (``experiments/ttt_vs_r.py``, ``experiments/rstar_vs_n.py``)."""

from __future__ import annotations

import dataclasses
import math
import os

import numpy as np

from .. import plotting, theory
from ..model.cluster import Cluster, Sampling
from .common import log


def ttt_vs_r(out_dir: str = "figures", groups: int = 600, rs=tuple(range(1, 21)), ckpt_costs=(1.0, 5.0, 10.0, 30.0),
             sampling: Sampling = Sampling(120, progress=True), model=None, cfg=None, mc_rs=None) -> list[dict]:
    """TTT (hours) and availability vs r for SPARe+CKPT, Rep+CKPT and CKPT at N groups: the closed form at its
    optimal tau (lines) and the Monte Carlo at that tau (points with 95% CIs): ``sampling.count`` training runs
    per point on an epoch pool of ``sampling.seed`` (``sampling.progress``: its progress bar). ``mc_rs``: the r
    that get a Monte Carlo (default: every r of ``rs``; the closed form covers all of ``rs``).

    Writes ``ttt_vs_r.csv`` and ``ttt_vs_r.png``.
    """
    from .. import ttt
    from ..ttt.router import Problem, interval_form
    from ..model.failures import FailureModel
    from ..ttt.interval import ttt_interval

    model = model or FailureModel()
    cfg = cfg or ttt.Training()
    gpus = groups * model.gpus_per_group
    rows = []
    for scheme in ttt.SCHEMES:
        for r in (rs if scheme != "none" else (1,)):
            if scheme == "rep" and groups % r:
                continue  # replica sets need r | N (ttt.scheme_placement refuses the rest)
            prof = ttt.epoch_profile(scheme, groups, r, model)
            rate = (1.0 / r) if scheme == "rep" else (1.0 if scheme == "none" else 0.4)
            need = ttt.epochs_needed(prof.mean_uptime_min, dataclasses.replace(cfg, ckpt_cost_min=min(ckpt_costs)),
                                     sampling.count, rate)
            do_mc = mc_rs is None or r in mc_rs or scheme == "none"
            pool = ttt.sample_epochs(Cluster(groups, model), scheme, r,
                                     dataclasses.replace(sampling, count=need)) if do_mc else None
            cluster = Cluster(groups, model)
            form = interval_form(Problem(cluster, ttt.Policy(scheme, r))) if do_mc else None  # the router's
            for c in ckpt_costs:
                cfg_c = dataclasses.replace(cfg, ckpt_cost_min=c)
                tau, ttt_min = ttt.best_tau_grid(prof, cfg_c, gpus)
                if form is not None:  # where the Monte Carlo runs: the interval form, its tau* (optimize's)
                    th = ttt.closed_form_ttt(cluster, cfg_c, scheme, r, tau_hint=tau)
                    tau = th["ckpt_interval_min"]
                else:  # the renewal-reward form (approximate) draws the rest of the curve
                    th = ttt.ttt_theory(prof, tau, cfg_c, gpus)
                try:
                    mc = None if pool is None else ttt.simulate_ttt(pool, tau, cfg_c, gpus)
                except ValueError:
                    mc = None
                ci = None if mc is None else ttt_interval(mc["run_ttt_hours"], floor=cfg_c.work_hours)
                row = {"scheme": scheme, "groups": groups, "redundancy": r, "ckpt_cost_min": c,
                       "ckpt_interval_min": tau, "theory_ttt_hours": th["ttt_hours"],
                       "theory_method": form or "closed_form_approx",
                       "theory_ttt_over_w": th["ttt_over_w"], "theory_availability_pct": 100.0 * th["availability"],
                       "mc_runs": None if mc is None else mc["runs"],
                       "mc_ttt_hours": None if mc is None else mc["ttt_hours"],
                       "mc_ttt_stderr_hours": None if mc is None else mc["ttt_stderr_hours"],
                       "mc_ttt_ci95_low": None if ci is None else ci["low"],
                       "mc_ttt_ci95_high": None if ci is None else ci["high"],
                       "mc_availability_pct": None if mc is None else 100.0 * mc["availability"],
                       "rel_gap": None if mc is None else th["ttt_hours"] / mc["ttt_hours"] - 1.0}
                rows.append(row)
            log(f"  ttt {scheme:<5} r={r:>2}, TTT/W: " + "  ".join(
                f"C={row['ckpt_cost_min']:g} min: theory {row['theory_ttt_over_w']:.3f} x W, Monte Carlo "
                + ("not simulated at this r" if row["mc_ttt_hours"] is None else
                   f"{row['mc_ttt_hours'] / cfg.work_hours:.3f} x W")
                for row in rows[-len(ckpt_costs):]))
    plotting.write_csv(os.path.join(out_dir, "ttt_vs_r.csv"), rows)
    _plot_ttt(rows, groups, ckpt_costs, os.path.join(out_dir, "ttt_vs_r.png"), model, cfg)
    return rows


def _plot_ttt(rows, groups, ckpt_costs, path, model, cfg):
    """TTT in hours on a linear axis zoomed on the optimum (the best SPARe against the best Rep), r* and tau*
    marked per scheme, availability in percent; the legend below the panels."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12.4, 4.9), gridspec_kw={"width_ratios": [1.35, 1]})
    styles = dict(zip(ckpt_costs, ("-", "--", "-.", ":")))
    main_c = 5.0 if 5.0 in ckpt_costs else ckpt_costs[0]
    labels = {"spare": "SPARe+CKPT", "rep": "Rep+CKPT", "none": "CKPT only"}
    best = {}
    for scheme in ("spare", "rep", "none"):
        for c in ckpt_costs:
            sel = [row for row in rows if row["scheme"] == scheme and row["ckpt_cost_min"] == c
                   and row["theory_ttt_hours"] is not None and math.isfinite(row["theory_ttt_hours"])]
            if sel:
                best[(scheme, c)] = min(sel, key=lambda row: row["theory_ttt_hours"])
    # zoom: from below the best SPARe to above the best Rep (every cost), so that the two optima read clearly
    lo = min(b["theory_ttt_hours"] for (s, _), b in best.items() if s == "spare")
    hi = max(b["theory_ttt_hours"] for (s, _), b in best.items() if s == "rep")
    span = max(hi - lo, 0.05 * max(abs(hi), 1.0))  # (a single r, or both optima equal: a span of 5%)
    ylo, yhi = lo - 0.15 * span, hi + 0.45 * span
    ax = axes[0]
    off_scale = []
    for scheme in ("spare", "rep", "none"):
        color = plotting.COLORS[scheme]
        for c in ckpt_costs:
            sel = [row for row in rows if row["scheme"] == scheme and row["ckpt_cost_min"] == c]
            if not sel:
                continue
            if scheme == "none":
                off_scale.append(sel[0]["theory_ttt_hours"])
                axes[1].axhline(sel[0]["theory_availability_pct"], color=color, ls=styles[c], lw=1,
                                label=f"CKPT only (r = 1), C = {c:g} min: TTT {sel[0]['theory_ttt_hours']:,.0f} h "
                                      "(off the left panel's scale); availability (right)")
                continue
            r = np.array([row["redundancy"] for row in sel])
            ax.plot(r, [row["theory_ttt_hours"] for row in sel], styles[c], color=color, lw=1.2,
                    label=f"{labels[scheme]}, C = {c:g} min (closed form at τ*)")
            mc = [row for row in sel if row["mc_ttt_hours"] is not None and row["mc_ttt_ci95_low"] is not None]
            ax.errorbar([row["redundancy"] for row in mc], [row["mc_ttt_hours"] for row in mc],
                        yerr=[[row["mc_ttt_hours"] - row["mc_ttt_ci95_low"] for row in mc],
                              [row["mc_ttt_ci95_high"] - row["mc_ttt_hours"] for row in mc]], fmt="o", ms=3,
                        color=color, capsize=2, label=f"{labels[scheme]}, C = {c:g} min (Monte Carlo ±95% CI)"
                        if c == main_c else None)
            axes[1].plot(r, [row["theory_availability_pct"] for row in sel], styles[c], color=color, lw=1.2,
                         label=f"{labels[scheme]}, C = {c:g} min")
            axes[1].plot([row["redundancy"] for row in mc], [row["mc_availability_pct"] for row in mc], "o",
                         ms=3, color=color)
            b = best.get((scheme, c))
            if b is not None and c == main_c:
                ax.plot([b["redundancy"]], [b["theory_ttt_hours"]], "*", ms=14, color=color, mec="k", zorder=5)
                ax.annotate(f"{labels[scheme]} optimum (C = {c:g} min):\nr* = {b['redundancy']}, "
                            f"τ* = {b['ckpt_interval_min']:.0f} min, TTT = {b['theory_ttt_hours']:,.0f} h",
                            xy=(b["redundancy"], b["theory_ttt_hours"]), textcoords="axes fraction",
                            xytext=(0.45, 0.40 if scheme == "spare" else 0.62),
                            fontsize=8, color=color, arrowprops=dict(arrowstyle="->", color=color, lw=0.8),
                            bbox=dict(boxstyle="round", fc="white", ec=color, alpha=0.9))
    sp, rp = best.get(("spare", main_c)), best.get(("rep", main_c))
    if sp is not None and rp is not None:
        ax.axhline(rp["theory_ttt_hours"], color=plotting.COLORS["rep"], lw=0.6, alpha=0.5)
        ax.axhline(sp["theory_ttt_hours"], color=plotting.COLORS["spare"], lw=0.6, alpha=0.5)
        ax.text(0.45, 0.86, f"best SPARe vs best Rep (C = {main_c:g} min):\n"
                f"{sp['theory_ttt_hours'] / rp['theory_ttt_hours'] - 1:+.0%} time-to-train".replace("-", "−"),
                transform=ax.transAxes, ha="left", va="top", fontsize=9, weight="bold")
    ax.set_ylim(ylo, yhi)
    plotting.integer_x(ax)
    plotting.integer_x(axes[1])
    ax.set_xlabel("redundancy r")
    ax.set_ylabel("expected time-to-train (hours)")
    ax.set_title(f"Time-to-train, {groups * model.gpus_per_group:,.0f} GPUs ({groups} groups of "
                 f"{model.gpus_per_group:,.0f}), MTBF {model.group_mtbf_min:,.0f} min per group\n"
                 f"({model.cluster_mtbf_min(groups):.3g} min for the cluster), W = {cfg.work_hours:g} h, "
                 f"R = {cfg.restart_min:g} min; zoomed on the optima", fontsize=9)
    ax.grid(alpha=0.3)
    axes[1].set_xlabel("redundancy r")
    axes[1].set_ylabel("availability (%) = uptime / wall-clock")
    axes[1].set_title("Availability at τ* (lines: closed form; points: Monte Carlo)", fontsize=9)
    axes[1].set_ylim(0, 102)
    axes[1].grid(alpha=0.3)
    handles, labs = ax.get_legend_handles_labels()
    h2, l2 = axes[1].get_legend_handles_labels()
    for h, lab in zip(h2, l2):
        if lab.startswith("CKPT only"):
            handles.append(h)
            labs.append(lab)
    fig.tight_layout()
    fig.legend(handles, labs, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2, fontsize=7, frameon=False)
    fig.savefig(path, dpi=plotting.DPI, bbox_inches="tight")
    plt.close(fig)


def rstar_vs_n(out_dir: str = "figures", groups=(100, 200, 600, 2000, 6000, 20000, 100000), r_max: int = 24,
               progress: bool = True, model=None, cfg=None) -> list[dict]:
    """Optimal redundancy r* and the TTT reduction of SPARe+CKPT over Rep+CKPT vs N (closed form), against
    the paper's r* ~ log2 N + 0.833. Exact for every N (``theory.depth_cdf_bernoulli``).

    Writes ``rstar_vs_n.csv`` and ``rstar_vs_n.png``.
    """
    from .. import ttt
    from ..model.failures import FailureModel

    model = model or FailureModel()
    cfg = cfg or ttt.Training()
    rows = []
    for n in groups:
        res = ttt.optimize_r_tau(Cluster(n, model), cfg, ttt.Space(min(r_max, n)), ("spare", "rep"), progress)
        sp, rp = res["schemes"]["spare"], res["schemes"]["rep"]
        rows.append({"groups": n, "gpus": n * model.gpus_per_group, "r_star_spare": sp["r_star"],
                     "r_star_rep": rp["r_star"], "paper_r_star": math.log2(n) + 0.833,
                     "ttt_spare_hours": sp["ttt_hours"], "ttt_rep_hours": rp["ttt_hours"],
                     "ttt_reduction_vs_rep": res["ttt_reduction_vs_rep"], "availability_spare_pct": sp["availability_pct"],
                     "tau_spare_min": sp["ckpt_interval_min"]})
        log(f"  r* N={n:>6}: SPARe r*={sp['r_star']} (paper {math.log2(n) + 0.833:.2f}), Rep r*={rp['r_star']}, "
            f"TTT reduction {res['ttt_reduction_vs_rep']:.1%}")
    plotting.write_csv(os.path.join(out_dir, "rstar_vs_n.csv"), rows)
    _plot_rstar(rows, model, os.path.join(out_dir, "rstar_vs_n.png"))
    return rows


def _plot_rstar(rows, model, path):
    """r* against the cluster size in GPUs (groups on the top axis); SPARe and Rep points set apart by a small
    horizontal offset where they would overlap."""
    g = model.gpus_per_group
    fig, (ax1, ax2) = plotting.new_figure(2, width=6.0, height=4.8)
    gpus = np.array([row["groups"] * g for row in rows], dtype=float)
    sp = np.array([row["r_star_spare"] for row in rows])
    rp = np.array([row["r_star_rep"] for row in rows])
    shift = np.where(sp == rp, 1.06, 1.0)  # multiplicative offset on the log axis where the two coincide
    ax1.plot(gpus / shift, sp, "o-", color=plotting.COLORS["spare"], label="SPARe+CKPT r* (ours)")
    ax1.plot(gpus * shift, rp, "s-", color=plotting.COLORS["rep"], label="Rep+CKPT r* (ours; r | N)")
    for x, y in zip(gpus / shift, sp):
        ax1.annotate(str(y), (x, y), textcoords="offset points", xytext=(-4, 6), fontsize=7,
                     color=plotting.COLORS["spare"], ha="right")
    for x, y in zip(gpus * shift, rp):
        ax1.annotate(str(y), (x, y), textcoords="offset points", xytext=(4, -11), fontsize=7,
                     color=plotting.COLORS["rep"])
    grid = np.logspace(np.log10(gpus.min()), np.log10(gpus.max()), 100)
    ax1.plot(grid, np.log2(grid / g) + 0.833, "k--", lw=1, label="paper: r* ≈ log₂ N + 0.833")
    ax1.set_ylabel("optimal redundancy r*")
    plotting.integer_y(ax1)
    ax1.set_title(f"Optimal redundancy vs cluster size (closed form; {g:,.0f} GPUs per group)", fontsize=9)
    ax1.legend(fontsize=8, loc="upper left")
    ax2.plot(gpus, [100 * row["ttt_reduction_vs_rep"] for row in rows], "o-", color="k")
    ax2.axhspan(40, 50, color="tab:red", alpha=0.15, label="paper's claim: 40–50% shorter")
    ax2.set_ylabel("TTT reduction of best SPARe+CKPT vs best Rep+CKPT (%)")
    ax2.set_title("Time-to-train reduction vs cluster size", fontsize=9)
    ax2.legend(fontsize=8)
    for ax in (ax1, ax2):
        ax.set_xscale("log")
        ax.set_xlabel("cluster size (GPUs)")
        ax.grid(alpha=0.3, which="both")
        top = ax.secondary_xaxis("top", functions=(lambda x: x / g, lambda x: x * g))
        top.set_xlabel("data-parallel groups N", fontsize=8)
        top.tick_params(labelsize=7)
    plotting.save(fig, path)
