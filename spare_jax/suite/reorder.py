"""The reorder controller on failure traces: shards moved, latency, min-cost-flow backends
(``experiments/reorder_movement.py``)."""

from __future__ import annotations

import os

import numpy as np

from .. import plotting
from ..model.placement import make_placement
from .common import log


def reorder_movement(out_dir: str = "figures", groups: int = 600, rs=(4, 8, 16), traces: int = 5, seed: int = 0,
                     large=(6000, 16), solver_compare_events: int = 200, progress: bool = True) -> dict:
    """RECTLR along random failure traces until wipe-out: shards moved per reassignment (MCMF vs a
    from-scratch matching), controller latency, and a min-cost-flow backend comparison.

    Writes ``reorder_movement.csv``, ``reorder_latency.json``, ``reorder_solvers.csv`` and
    ``reorder_movement.png``.
    """
    from ..rectlr.reorder import replay

    rng = np.random.default_rng(seed)
    rows, latency, event_ms = [], {}, []  # timings stay out of the CSVs (a rerun must not change them)
    for r in rs:
        pl = make_placement("stacked", groups, r)
        lat = []
        for t in range(traces):
            trace = [int(g) for g in rng.permutation(groups)]
            records, _ = replay(pl, trace)
            for i, rec in enumerate(records):
                rows.append({"groups": groups, "redundancy": r, "trace": t, "failure": i + 1, "phase": rec.phase,
                             "depth": rec.depth, "moved": rec.moved, "moved_naive": rec.moved_naive})
                lat.append(rec.latency_ms)
                event_ms.append(rec.latency_ms)
        re = [row for row in rows if row["redundancy"] == r and row["phase"] == 2]
        latency[f"N={groups},r={r}"] = _lat_summary(lat, [ms for row, ms in zip(rows[-len(lat):], lat)
                                                          if row["phase"] == 2])
        log(f"  reorder N={groups} r={r}: {len(re)} reassignments in {traces} traces, moved (MCMF) "
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
        log(f"  reorder N={n_big} r={r_big}: latency {latency[f'N={n_big},r={r_big}']}")
    solvers = _compare_solvers(groups, 8, solver_compare_events, rng)
    if large:  # the backends at scale (networkx is too slow there)
        solvers += _compare_solvers(large[0], large[1], 1500, rng, ("ortools", "scipy"))
    timing_keys = ("solve_median_ms", "solve_p99_ms")
    latency["solvers"] = solvers
    solvers = [{k: v for k, v in row.items() if k not in timing_keys} for row in solvers]
    plotting.write_csv(os.path.join(out_dir, "reorder_movement.csv"), rows)
    plotting.write_json(os.path.join(out_dir, "reorder_latency.json"), latency)
    plotting.write_csv(os.path.join(out_dir, "reorder_solvers.csv"), solvers)
    _plot_reorder(rows, event_ms, groups, rs, os.path.join(out_dir, "reorder_movement.png"))
    return {"latency": latency, "solvers": solvers}


def _lat_summary(all_ms, reassign_ms):
    return {"events": len(all_ms), "all_median_ms": float(np.median(all_ms)),
            "all_p99_ms": float(np.percentile(all_ms, 99)), "reassignments": len(reassign_ms),
            "reassign_median_ms": float(np.median(reassign_ms)) if reassign_ms else None,
            "reassign_p99_ms": float(np.percentile(reassign_ms, 99)) if reassign_ms else None}


def _compare_solvers(groups, r, events, rng, backends=("ortools", "scipy", "networkx")):
    """Same trace, each backend: the MCMF solve time and the total moves over the first ``events`` failures."""
    from ..rectlr.reorder import replay

    pl = make_placement("stacked", groups, r)
    trace = [int(g) for g in rng.permutation(groups)][:events]
    out = []
    for solver in backends:
        records, _ = replay(pl, trace, solver=solver)
        solve = [rec.solver_ms for rec in records if rec.phase == 2]
        out.append({"solver": solver, "groups": groups, "redundancy": r, "failures": len(records),
                    "reassignments": len(solve), "solve_median_ms": float(np.median(solve)),
                    "solve_p99_ms": float(np.percentile(solve, 99)), "total_moved": sum(rec.moved for rec in records)})
        log(f"  solver {solver:<9} N={groups} r={r}: median MCMF solve {out[-1]['solve_median_ms']:.2f} ms, "
            f"moved {out[-1]['total_moved']}")
    return out


def _plot_reorder(rows, event_ms, groups, rs, path):
    fig, (ax1, ax2) = plotting.new_figure(2, width=6.2, height=4.8)
    for r in rs:
        re = [row for row in rows if row["redundancy"] == r and row["phase"] == 2]
        x = np.array([row["failure"] for row in re])
        line, = ax1.plot(x, [row["moved_naive"] for row in re], ".", ms=2, alpha=0.5,
                         label=f"r={r}: from-scratch matching")
        ax1.plot(x, [row["moved"] for row in re], "o", ms=3, color=line.get_color(), mfc="none",
                 label=f"r={r}: MCMF (phase 2)")
        allr = [(row["failure"], ms) for row, ms in zip(rows, event_ms) if row["redundancy"] == r]
        ax2.plot([f for f, _ in allr], [ms for _, ms in allr], ".", ms=2,
                 color=line.get_color(), label=f"r={r}")
    ax1.set_yscale("symlog", linthresh=1)
    plotting.integer_x(ax1)
    ax1.set_xlabel("failure number in the epoch")
    ax1.set_ylabel("shards moved at a reassignment")
    ax1.set_title(f"Shards moved per reassignment, N = {groups}")
    ax1.grid(alpha=0.3)
    ax1.legend(fontsize=7, markerscale=2.5)
    ax2.set_yscale("log")
    plotting.integer_x(ax2)
    ax2.set_xlabel("failure number in the epoch")
    ax2.set_ylabel("controller latency per failure (ms)")
    ax2.set_title(f"RECTLR latency (phase 0 fast path and reassignments), N = {groups}")
    ax2.grid(alpha=0.3, which="both")
    ax2.legend(fontsize=8, markerscale=4)
    plotting.save(fig, path)
