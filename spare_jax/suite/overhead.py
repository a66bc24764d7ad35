"""Compute overhead vs r: theory vs Monte Carlo (``experiments/overhead_vs_r.py``)."""

from __future__ import annotations

import os
import time

import numpy as np

from .. import plotting, theory
from ..model.cluster import Sampling
from ..model.placement import make_placement
from .common import log, matplotlib_ticker


def overhead_vs_r(out_dir: str = "figures", groups=(600, 6000), rs=tuple(range(1, 21)), trials=None,
                  seed: int = 0, progress: bool = True) -> list[dict]:
    """SPARe compute overhead (MC and theory) against replication's r, with time-averaged depth and the
    depth at the wipe-out. Theory: the k-resolved queue DP (sum over sojourns) for N <= 2000, the
    time-integrated Bernoulli form (``theory.overhead_theory_any_n``) beyond.

    Writes ``overhead_vs_r.csv``, ``depth_at_wipeout.csv`` and ``overhead_vs_r.png``.
    """
    from ..kernels.overhead import simulate_overhead

    default_trials = {600: 10_000, 6000: 1_000}
    trials = {**default_trials, **(trials or {})}
    rows, depth_rows = [], []
    for n in groups:
        for r in rs:
            if r > n:
                continue
            t0 = time.perf_counter()
            th = (theory.overhead_theory if n <= theory.EXACT_DP_MAX_N else theory.overhead_theory_any_n)(
                "stacked", n, r)
            t_theory = time.perf_counter() - t0
            nt = int(trials.get(n, 1000))
            t0 = time.perf_counter()
            mc = simulate_overhead(make_placement("stacked", n, r), Sampling(nt, seed, progress=progress))
            t_mc = time.perf_counter() - t0
            row = {"groups": n, "redundancy": r, "placement": "stacked", "trials": nt,
                   "mc_overhead": mc.overhead, "mc_overhead_stderr": mc.overhead_stderr,
                   "mc_overhead_sampled": mc.overhead_sampled,
                   "mc_overhead_sampled_stderr": mc.overhead_sampled_stderr,
                   "theory_overhead": None if th is None else th["overhead"],
                   "rel_gap": None if th is None else (mc.overhead - th["overhead"]) / th["overhead"],
                   "z_score": None if th is None or mc.overhead_stderr == 0 else
                   (mc.overhead - th["overhead"]) / mc.overhead_stderr,
                   "mc_time_avg_depth": mc.time_avg_depth, "mc_time_avg_depth_stderr": mc.time_avg_depth_stderr,
                   "theory_time_avg_depth": None if th is None else th["time_avg_depth"],
                   "rep_overhead": float(r), "mc_epoch_uptime_min": mc.uptime_mean_min}
            rows.append(row)
            for d, c in enumerate(mc.depth_at_wipeout_hist):
                if c:
                    depth_rows.append({"groups": n, "redundancy": r, "depth": d, "fraction": c / nt})
            thv = "-" if th is None else f"{th['overhead']:.4f}"
            log(f"  overhead N={n:>5} r={r:>2}  MC {mc.overhead:.4f} ± {mc.overhead_stderr:.4f}  theory {thv}  "
                f"time-avg depth {mc.time_avg_depth:.3f}  (rep: {r}; theory {t_theory:.2f} s, MC {t_mc:.2f} s)")
    plotting.write_csv(os.path.join(out_dir, "overhead_vs_r.csv"), rows)
    plotting.write_csv(os.path.join(out_dir, "depth_at_wipeout.csv"), depth_rows)
    _plot_overhead(rows, depth_rows, os.path.join(out_dir, "overhead_vs_r.png"))
    return rows


def _plot_overhead(rows, depth_rows, path):
    """Left: Omega vs r, SPARe theory (lines) and Monte Carlo (points), replication's Omega = r, with a residual
    panel below (z-score of the MC against the theory, ±2 marked). Right: the depth at the wipe-out."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplot_mosaic([["main", "depth"], ["resid", "depth"]], figsize=(12.4, 5.6),
                                 gridspec_kw={"height_ratios": [3, 1]})
    ax1, axr, ax2 = ax["main"], ax["resid"], ax["depth"]
    groups = sorted({row["groups"] for row in rows})
    colors = dict(zip(groups, ("tab:blue", "tab:green", "tab:purple")))
    offsets = dict(zip(groups, np.linspace(-0.15, 0.15, len(groups)) if len(groups) > 1 else [0.0]))
    rmax = max(row["redundancy"] for row in rows)
    ax1.plot([1, rmax], [1, rmax], "-", color=plotting.COLORS["rep"], lw=1.5, label="replication: Ω = r")
    for n in groups:
        sel = [row for row in rows if row["groups"] == n]
        r = np.array([row["redundancy"] for row in sel], dtype=float)
        th = [row["theory_overhead"] for row in sel]
        if all(t is not None for t in th):
            ax1.plot(r, th, "-", color=colors[n], lw=1.2, label=f"SPARe theory, N={n:,}")
        ax1.errorbar(r + offsets[n], [row["mc_overhead"] for row in sel],
                     yerr=[2 * row["mc_overhead_stderr"] for row in sel],
                     fmt="o", ms=4, capsize=2, color=colors[n], label=f"SPARe Monte Carlo ±2 s.e., N={n:,}")
        ax1.plot(r, [row["mc_time_avg_depth"] for row in sel], "x", ms=4, color=colors[n], alpha=0.7,
                 label=f"time-averaged depth (MC), N={n:,}")
        z = [(x + offsets[n], row["z_score"]) for x, row in zip(r, sel) if row["z_score"] not in (None, "")]
        if z:
            axr.plot(*zip(*z), "o", ms=4, color=colors[n])
    for a in (ax1, axr):
        plotting.integer_x(a)
    plotting.integer_x(ax2)
    ax1.set_ylabel("compute overhead Ω = E[uptime] / E[useful work]  (×)")
    ax1.set_title("SPARe overhead vs replication (exponential failures)", fontsize=9)
    ax1.set_yscale("log")
    ax1.set_yticks([1, 2, 3, 5, 10, 20])
    ax1.get_yaxis().set_major_formatter(matplotlib_ticker())
    ax1.grid(alpha=0.3, which="both")
    ax1.legend(fontsize=7, loc="upper left")
    ax1.tick_params(labelbottom=False)
    for y in (-2, 2):
        axr.axhline(y, color="tab:red", lw=0.8, ls="--")
    axr.axhline(0, color="k", lw=0.6)
    zs = [abs(row["z_score"]) for row in rows if row["z_score"] not in (None, "")]
    zmax = max(zs + [3.0])
    axr.set_ylim(-1.15 * zmax, 1.15 * zmax)
    axr.set_xlim(ax1.get_xlim())
    axr.grid(alpha=0.3)
    axr.set_xlabel("redundancy r")
    axr.set_ylabel("z = (MC − theory)\n/ s.e.", fontsize=8)
    n0 = min(groups)
    for r in (4, 8, 12, 16, 20):
        sel = [d for d in depth_rows if d["groups"] == n0 and d["redundancy"] == r]
        if sel:
            ax2.plot([d["depth"] for d in sel], [d["fraction"] for d in sel], "o-", ms=3, lw=1, label=f"r={r}")
    ax2.set_xlabel("depth d* just before the wipe-out (shards per surviving group)")
    ax2.set_ylabel("fraction of epochs")
    ax2.set_title(f"Depth reached at the wipe-out, N = {n0} (Monte Carlo)", fontsize=9)
    ax2.grid(alpha=0.3)
    if ax2.get_legend_handles_labels()[0]:
        ax2.legend(fontsize=8)
    plotting.save(fig, path)
