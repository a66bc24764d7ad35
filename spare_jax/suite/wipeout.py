"""Wipe-out validation: Monte Carlo vs exact vs asymptotic E[T] (``experiments/wipeout_validation.py``)."""

from __future__ import annotations

import math
import os
import time

import numpy as np

from .. import plotting, theory
from ..model.cluster import Sampling
from ..model.placement import make_placement
from ..kernels.wipeout import simulate_wipeout
from .common import log


WIPEOUT_RS = (2, 4, 8, 12, 16, 20)


def wipeout_validation(out_dir: str = "figures", groups=(600, 6000, 60000), rs=WIPEOUT_RS,
                       trials=None, seed: int = 0, progress: bool = True) -> list[dict]:
    """E[T] by Monte Carlo vs exact vs asymptotic for ``stacked`` (all r) and ``block`` (r | N).

    ``trials`` maps N to a trial count (default 10^6 at N=600, 2*10^5 at 6000, 2*10^4 at 60000).
    Writes ``wipeout_validation.csv``, ``wipeout_survival_N600.csv`` and ``wipeout_theory_vs_mc.png``.
    """
    default_trials = {600: 1_000_000, 6000: 200_000, 60000: 20_000}
    trials = {**default_trials, **(trials or {})}
    rows, curves = [], {}
    for n in groups:
        for r in rs:
            for kind in ("stacked", "block"):
                if r > n or (kind == "block" and n % r):
                    continue
                t0 = time.perf_counter()
                surv = theory.survival_exact(kind, n, r)
                t_theory = time.perf_counter() - t0
                mean, var = theory.moments_from_survival(surv)
                asym = theory.expected_failures_asymptotic(kind, n, r)
                nt = int(trials.get(n, 20_000))
                t0 = time.perf_counter()
                mc = simulate_wipeout(make_placement(kind, n, r), Sampling(nt, seed, progress=progress))
                t_mc = time.perf_counter() - t0
                z = (mc.mean - mean) / mc.stderr
                rows.append({"groups": n, "redundancy": r, "placement": kind, "trials": nt,
                             "mc_mean": mc.mean, "mc_stderr": mc.stderr, "theory_exact": mean,
                             "theory_std": math.sqrt(var), "mc_std": math.sqrt(mc.var),
                             "theory_asymptotic": asym, "asymptotic_rel_error": (asym - mean) / mean,
                             "z_score": z})  # no timing columns: a rerun must reproduce the CSV
                log(f"  wipeout N={n:>6} r={r:>2} {kind:<7} MC {mc.mean:10.3f} ± {mc.stderr:.3f}  "
                    f"exact {mean:10.3f}  asym {asym:10.3f}  z={z:+.2f}  "
                    f"(theory {t_theory:.2f} s, MC {t_mc:.2f} s)")
                if n == min(groups):
                    curves[(kind, r)] = (surv, mc.survival())
    plotting.write_csv(os.path.join(out_dir, "wipeout_validation.csv"), rows)
    nmin = min(groups)
    surv_rows = []
    for (kind, r), (exact, emp) in sorted(curves.items()):
        for k in range(nmin + 1):
            if exact[k] > 1e-9 or emp[k] > 0:
                surv_rows.append({"placement": kind, "redundancy": r, "k": k, "exact": exact[k], "mc": emp[k]})
    plotting.write_csv(os.path.join(out_dir, f"wipeout_survival_N{nmin}.csv"), surv_rows)
    _plot_wipeout(rows, curves, nmin, os.path.join(out_dir, "wipeout_theory_vs_mc.png"))
    return rows


def _plot_wipeout(rows, curves, nmin, path):
    """Left: E[T]/N, exact theory (lines) and Monte Carlo (points) with a residual panel below (z-score of the
    MC against the exact theory, ±2 marked; points offset sideways per series so none hide another).
    Right: the survival curves at the smallest N."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplot_mosaic([["main", "surv"], ["resid", "surv"]], figsize=(12.4, 5.6),
                                 gridspec_kw={"height_ratios": [3, 1]})
    ax1, axr, ax2 = ax["main"], ax["resid"], ax["surv"]
    groups = sorted({row["groups"] for row in rows})
    markers = dict(zip(groups, ("o", "s", "^", "D")))
    series = [(kind, n) for kind in ("stacked", "block") for n in groups]
    offsets = dict(zip(series, np.linspace(-0.25, 0.25, len(series)) if len(series) > 1 else [0.0]))
    for kind, style in (("stacked", "-"), ("block", "--")):
        for n in groups:
            sel = [row for row in rows if row["placement"] == kind and row["groups"] == n]
            if not sel:
                continue
            r = np.array([row["redundancy"] for row in sel], dtype=float)
            frac = np.array([row["theory_exact"] for row in sel]) / n
            ax1.plot(r, frac, style, color=plotting.COLORS[kind], alpha=0.8, lw=1.2)
            ax1.plot(r, np.array([row["theory_asymptotic"] for row in sel]) / n, ":", color="k", lw=0.8)
            dx = offsets[(kind, n)]
            ax1.errorbar(r + dx, np.array([row["mc_mean"] for row in sel]) / n,
                         yerr=2 * np.array([row["mc_stderr"] for row in sel]) / n, fmt=markers[n],
                         color=plotting.COLORS[kind], ms=4, capsize=2, mfc="white" if kind == "block" else None,
                         label=f"{kind}, N={n:,} (MC ±2 s.e.)")
            axr.plot(r + dx, [row["z_score"] for row in sel], markers[n], color=plotting.COLORS[kind], ms=4,
                     mfc="white" if kind == "block" else None)
    ax1.plot([], [], "k-", lw=1.2, label="exact theory (lines)")
    ax1.plot([], [], "k:", lw=0.8, label="Poisson asymptotic")
    r_values = sorted({int(row["redundancy"]) for row in rows})
    for a in (ax1, axr):
        a.set_xticks(r_values)  # ticks at the r values plotted (not 2.5, 7.5, ...)
        a.grid(alpha=0.3)
    ax1.set_ylabel("E[T] / N  (fraction of groups failed at wipe-out)")
    ax1.set_title("Failures to wipe-out: exact theory vs Monte Carlo (points offset sideways)", fontsize=9)
    ax1.set_ylim(0, 1)
    ax1.legend(fontsize=7, loc="lower right")
    ax1.tick_params(labelbottom=False)
    for y in (-2, 2):
        axr.axhline(y, color="tab:red", lw=0.8, ls="--")
    axr.axhline(0, color="k", lw=0.6)
    zmax = max([abs(row["z_score"]) for row in rows if row["z_score"] is not None] + [3.0])
    axr.set_ylim(-1.15 * zmax, 1.15 * zmax)
    axr.set_xlim(ax1.get_xlim())
    axr.set_xlabel("redundancy r (holders per shard)")
    axr.set_ylabel("z = (MC − exact)\n/ s.e.", fontsize=8)
    for (kind, r), (exact, emp) in sorted(curves.items()):
        if kind != "stacked" or r not in (2, 4, 8, 16, 20):
            continue
        k = np.arange(exact.size)
        line, = ax2.plot(k, exact, "-", lw=1.2, label=f"r={r} exact")
        step = max(1, nmin // 60)
        ax2.plot(k[::step], emp[::step], "o", ms=2.5, color=line.get_color())
    ax2.plot([], [], "ko", ms=2.5, label="Monte Carlo")
    ax2.set_xlabel(f"failed groups k (of N = {nmin})")
    ax2.set_ylabel("P(T > k)  (no wipe-out after k failures)")
    ax2.set_title(f"Survival of the stacked placement, N = {nmin}", fontsize=9)
    ax2.grid(alpha=0.3)
    ax2.legend(fontsize=7)
    plotting.save(fig, path)
