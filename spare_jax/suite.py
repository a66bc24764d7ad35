"""The experiment suite: each function runs one experiment over the public API, writes its data
(``figures/*.csv|json``) and its figure (``figures/*.png``), and returns summary rows.

``experiments/*.py`` are thin command-line wrappers over these functions; ``spare-jax run`` calls them with
its defaults (or ``--quick`` sizes).
"""

from __future__ import annotations

import math
import os
import sys
import time

import numpy as np

from . import plotting, theory
from .placement import make_placement
from .wipeout import simulate_wipeout

WIPEOUT_RS = (2, 4, 8, 12, 16, 20)


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def wipeout_validation(out_dir: str = "figures", groups=(600, 6000, 60000), rs=WIPEOUT_RS,
                       trials=None, seed: int = 0, progress: bool = True) -> list[dict]:
    """E[T] by Monte Carlo vs exact vs asymptotic for ``stacked`` (all r) and ``block`` (r | N).

    ``trials`` maps N to a trial count (default 10^6 at N=600, 2*10^5 at 6000, 2*10^4 at 60000).
    Writes ``wipeout_validation.csv``, ``wipeout_survival_N600.csv`` and ``wipeout_theory_vs_mc.png``.
    """
    default_trials = {600: 1_000_000, 6000: 200_000, 60000: 20_000}
    trials = dict(default_trials, **(trials or {}))
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
                mc = simulate_wipeout(make_placement(kind, n, r), nt, seed=seed, progress=progress)
                t_mc = time.perf_counter() - t0
                z = (mc.mean - mean) / mc.stderr
                rows.append({"groups": n, "redundancy": r, "placement": kind, "trials": nt,
                             "mc_mean": mc.mean, "mc_stderr": mc.stderr, "theory_exact": mean,
                             "theory_std": math.sqrt(var), "mc_std": math.sqrt(mc.var),
                             "theory_asymptotic": asym, "asymptotic_rel_error": (asym - mean) / mean,
                             "z_score": z, "theory_seconds": t_theory, "mc_seconds": t_mc})
                _log(f"  wipeout N={n:>6} r={r:>2} {kind:<7} MC {mc.mean:10.3f} ± {mc.stderr:.3f}  "
                     f"exact {mean:10.3f}  asym {asym:10.3f}  z={z:+.2f}")
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
    fig, (ax1, ax2) = plotting.new_figure(2, width=6.2, height=4.8)
    groups = sorted({row["groups"] for row in rows})
    markers = dict(zip(groups, ("o", "s", "^", "D")))
    for kind, style in (("stacked", "-"), ("block", "--")):
        for n in groups:
            sel = [row for row in rows if row["placement"] == kind and row["groups"] == n]
            if not sel:
                continue
            r = np.array([row["redundancy"] for row in sel])
            frac = np.array([row["theory_exact"] for row in sel]) / n
            ax1.plot(r, frac, style, color=plotting.COLORS[kind], alpha=0.8, lw=1.2)
            ax1.plot(r, np.array([row["theory_asymptotic"] for row in sel]) / n, ":", color="k", lw=0.8)
            ax1.errorbar(r, np.array([row["mc_mean"] for row in sel]) / n,
                         yerr=2 * np.array([row["mc_stderr"] for row in sel]) / n, fmt=markers[n],
                         color=plotting.COLORS[kind], ms=4, capsize=2,
                         label=f"{kind}, N={n:,} (MC ±2 s.e.)")
    ax1.plot([], [], "k-", lw=1.2, label="exact theory (lines)")
    ax1.plot([], [], "k:", lw=0.8, label="Poisson asymptotic")
    ax1.set_xlabel("redundancy r (holders per shard)")
    ax1.set_ylabel("E[T] / N  (fraction of groups failed at wipe-out)")
    ax1.set_title("Failures to wipe-out: exact theory vs Monte Carlo")
    ax1.set_ylim(0, 1)
    ax1.grid(alpha=0.3)
    ax1.legend(fontsize=7, loc="lower right")
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
    ax2.set_title(f"Survival of the stacked placement, N = {nmin}")
    ax2.grid(alpha=0.3)
    ax2.legend(fontsize=7)
    plotting.save(fig, path)


def overhead_vs_r(out_dir: str = "figures", groups=(600, 6000), rs=tuple(range(1, 21)), trials=None,
                  seed: int = 0, progress: bool = True) -> list[dict]:
    """SPARe compute overhead (MC and theory) against replication's r, with time-averaged depth and the
    depth at the wipe-out. Theory for ``stacked`` uses the O(N^2 r^2) queue DP, run for N <= 2000.

    Writes ``overhead_vs_r.csv``, ``depth_at_wipeout.csv`` and ``overhead_vs_r.png``.
    """
    from .overhead import simulate_overhead

    default_trials = {600: 10_000, 6000: 1_000}
    trials = dict(default_trials, **(trials or {}))
    rows, depth_rows = [], []
    for n in groups:
        for r in rs:
            if r > n:
                continue
            t0 = time.perf_counter()
            th = theory.overhead_theory("stacked", n, r) if n <= 2000 else None
            t_theory = time.perf_counter() - t0
            nt = int(trials.get(n, 1000))
            t0 = time.perf_counter()
            mc = simulate_overhead(make_placement("stacked", n, r), nt, seed=seed, progress=progress)
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
                   "rep_overhead": float(r), "mc_epoch_uptime_min": mc.uptime_mean_min,
                   "theory_seconds": t_theory, "mc_seconds": t_mc}
            rows.append(row)
            for d, c in enumerate(mc.depth_at_wipeout_hist):
                if c:
                    depth_rows.append({"groups": n, "redundancy": r, "depth": d, "fraction": c / nt})
            thv = "-" if th is None else f"{th['overhead']:.4f}"
            _log(f"  overhead N={n:>5} r={r:>2}  MC {mc.overhead:.4f} ± {mc.overhead_stderr:.4f}  theory {thv}  "
                 f"time-avg depth {mc.time_avg_depth:.3f}  (rep: {r})")
    plotting.write_csv(os.path.join(out_dir, "overhead_vs_r.csv"), rows)
    plotting.write_csv(os.path.join(out_dir, "depth_at_wipeout.csv"), depth_rows)
    _plot_overhead(rows, depth_rows, os.path.join(out_dir, "overhead_vs_r.png"))
    return rows


def _plot_overhead(rows, depth_rows, path):
    fig, (ax1, ax2) = plotting.new_figure(2, width=6.2, height=4.8)
    groups = sorted({row["groups"] for row in rows})
    colors = dict(zip(groups, ("tab:blue", "tab:green", "tab:purple")))
    rmax = max(row["redundancy"] for row in rows)
    ax1.plot([1, rmax], [1, rmax], "-", color=plotting.COLORS["rep"], lw=1.5, label="replication: Ω = r")
    for n in groups:
        sel = [row for row in rows if row["groups"] == n]
        r = np.array([row["redundancy"] for row in sel])
        th = [row["theory_overhead"] for row in sel]
        if all(t is not None for t in th):
            ax1.plot(r, th, "-", color=colors[n], lw=1.2, label=f"SPARe theory (queue DP), N={n:,}")
        ax1.errorbar(r, [row["mc_overhead"] for row in sel], yerr=[2 * row["mc_overhead_stderr"] for row in sel],
                     fmt="o", ms=4, capsize=2, color=colors[n], label=f"SPARe Monte Carlo ±2 s.e., N={n:,}")
        ax1.plot(r, [row["mc_time_avg_depth"] for row in sel], "x", ms=4, color=colors[n], alpha=0.7,
                 label=f"time-averaged depth (MC), N={n:,}")
    ax1.set_xlabel("redundancy r")
    ax1.set_ylabel("compute overhead Ω = E[uptime] / E[useful work]  (×)")
    ax1.set_title("SPARe overhead vs replication (exponential failures)")
    ax1.set_yscale("log")
    ax1.set_yticks([1, 2, 3, 5, 10, 20])
    ax1.get_yaxis().set_major_formatter(matplotlib_ticker())
    ax1.grid(alpha=0.3, which="both")
    ax1.legend(fontsize=7, loc="upper left")
    n0 = min(groups)
    for r in (4, 8, 12, 16, 20):
        sel = [d for d in depth_rows if d["groups"] == n0 and d["redundancy"] == r]
        if sel:
            ax2.plot([d["depth"] for d in sel], [d["fraction"] for d in sel], "o-", ms=3, lw=1, label=f"r={r}")
    ax2.set_xlabel("depth d* just before the wipe-out (shards per surviving group)")
    ax2.set_ylabel("fraction of epochs")
    ax2.set_title(f"Depth reached at the wipe-out, N = {n0} (Monte Carlo)")
    ax2.grid(alpha=0.3)
    ax2.legend(fontsize=8)
    plotting.save(fig, path)


def matplotlib_ticker():
    from matplotlib.ticker import ScalarFormatter

    fmt = ScalarFormatter()
    fmt.set_scientific(False)
    return fmt


def reorder_movement(out_dir: str = "figures", groups: int = 600, rs=(4, 8, 16), traces: int = 5, seed: int = 0,
                     large=(6000, 16), solver_compare_events: int = 25, progress: bool = True) -> dict:
    """RECTLR along random failure traces until wipe-out: shards moved per reassignment (MCMF vs a
    from-scratch matching), controller latency, and a min-cost-flow backend comparison.

    Writes ``reorder_movement.csv``, ``reorder_latency.json``, ``reorder_solvers.csv`` and
    ``reorder_movement.png``.
    """
    from .reorder import replay

    rng = np.random.default_rng(seed)
    rows, latency = [], {}
    for r in rs:
        pl = make_placement("stacked", groups, r)
        lat = []
        for t in range(traces):
            trace = [int(g) for g in rng.permutation(groups)]
            records, _ = replay(pl, trace)
            for i, rec in enumerate(records):
                rows.append({"groups": groups, "redundancy": r, "trace": t, "failure": i + 1, "phase": rec.phase,
                             "depth": rec.depth, "moved": rec.moved, "moved_naive": rec.moved_naive,
                             "latency_ms": rec.latency_ms, "solver_ms": rec.solver_ms})
                lat.append(rec.latency_ms)
        re = [row for row in rows if row["redundancy"] == r and row["phase"] == 2]
        latency[f"N={groups},r={r}"] = _lat_summary(lat, [row["latency_ms"] for row in re])
        _log(f"  reorder N={groups} r={r}: {len(re)} reassignments in {traces} traces, moved (MCMF) "
             f"{np.mean([x['moved'] for x in re]):.2f} vs from-scratch {np.mean([x['moved_naive'] for x in re]):.1f} "
             f"per reassignment; latency median {latency[f'N={groups},r={r}']['all_median_ms']:.2f} ms")
    if large:
        n_big, r_big = large
        trace = [int(g) for g in rng.permutation(n_big)]
        records, _ = replay(make_placement("stacked", n_big, r_big), trace)
        re = [rec.latency_ms for rec in records if rec.phase == 2]
        latency[f"N={n_big},r={r_big}"] = _lat_summary([rec.latency_ms for rec in records], re)
        latency[f"N={n_big},r={r_big}"]["moved_mean"] = float(np.mean([rec.moved for rec in records if rec.phase == 2]))
        latency[f"N={n_big},r={r_big}"]["moved_naive_mean"] = float(
            np.mean([rec.moved_naive for rec in records if rec.phase == 2]))
        _log(f"  reorder N={n_big} r={r_big}: latency {latency[f'N={n_big},r={r_big}']}")
    solvers = _compare_solvers(groups, 8, solver_compare_events, rng)
    plotting.write_csv(os.path.join(out_dir, "reorder_movement.csv"), rows)
    plotting.write_json(os.path.join(out_dir, "reorder_latency.json"), latency)
    plotting.write_csv(os.path.join(out_dir, "reorder_solvers.csv"), solvers)
    _plot_reorder(rows, groups, rs, os.path.join(out_dir, "reorder_movement.png"))
    return {"latency": latency, "solvers": solvers}


def _lat_summary(all_ms, reassign_ms):
    return {"events": len(all_ms), "all_median_ms": float(np.median(all_ms)),
            "all_p99_ms": float(np.percentile(all_ms, 99)), "reassignments": len(reassign_ms),
            "reassign_median_ms": float(np.median(reassign_ms)) if reassign_ms else None,
            "reassign_p99_ms": float(np.percentile(reassign_ms, 99)) if reassign_ms else None}


def _compare_solvers(groups, r, events, rng):
    """Same trace, each backend: the MCMF solve time and the total moves over the first ``events`` failures."""
    from .reorder import replay

    pl = make_placement("stacked", groups, r)
    trace = [int(g) for g in rng.permutation(groups)][:events]
    out = []
    for solver in ("ortools", "scipy", "networkx"):
        records, _ = replay(pl, trace, solver=solver)
        solve = [rec.solver_ms for rec in records if rec.phase == 2]
        out.append({"solver": solver, "groups": groups, "redundancy": r, "failures": len(records),
                    "reassignments": len(solve), "solve_median_ms": float(np.median(solve)),
                    "solve_p99_ms": float(np.percentile(solve, 99)), "total_moved": sum(rec.moved for rec in records)})
        _log(f"  solver {solver:<9} median MCMF solve {out[-1]['solve_median_ms']:.2f} ms, moved {out[-1]['total_moved']}")
    return out


def _plot_reorder(rows, groups, rs, path):
    fig, (ax1, ax2) = plotting.new_figure(2, width=6.2, height=4.8)
    for r in rs:
        re = [row for row in rows if row["redundancy"] == r and row["phase"] == 2]
        x = np.array([row["failure"] for row in re])
        line, = ax1.plot(x, [row["moved_naive"] for row in re], ".", ms=2, alpha=0.5,
                         label=f"r={r}: from-scratch matching")
        ax1.plot(x, [row["moved"] for row in re], "o", ms=3, color=line.get_color(), mfc="none",
                 label=f"r={r}: MCMF (phase 2)")
        allr = [row for row in rows if row["redundancy"] == r]
        ax2.plot([row["failure"] for row in allr], [row["latency_ms"] for row in allr], ".", ms=2,
                 color=line.get_color(), label=f"r={r}")
    ax1.set_yscale("symlog", linthresh=1)
    ax1.set_xlabel("failure number in the epoch")
    ax1.set_ylabel("shards moved at a reassignment")
    ax1.set_title(f"Shards moved per reassignment, N = {groups}")
    ax1.grid(alpha=0.3)
    ax1.legend(fontsize=7)
    ax2.set_yscale("log")
    ax2.set_xlabel("failure number in the epoch")
    ax2.set_ylabel("controller latency per failure (ms)")
    ax2.set_title(f"RECTLR latency (phase 0 fast path and reassignments), N = {groups}")
    ax2.grid(alpha=0.3, which="both")
    ax2.legend(fontsize=8)
    plotting.save(fig, path)
