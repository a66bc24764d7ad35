"""Micro-batch granularity and the proactive restart (docs/microbatches.md#how-it-works;
``experiments/microbatches.py``)."""

from __future__ import annotations

import dataclasses
import math
import os

import numpy as np

from .. import plotting, theory
from ..model.cluster import Cluster, Sampling
from ..model.failures import FailureModel
from ..model.placement import make_placement
from ..model.scenario import Scenario
from .common import log


def divisible_bound(groups: int, redundancy: int) -> float:
    r"""Omega with perfect divisibility (the lower bound of every m): with k groups down the survivors share
    the work exactly, depth ``N / (N - k)``, so ``E[W] = \sum_k s_k P(T > k) (N - k) / N`` against
    ``E[U] = \sum_k s_k P(T > k)`` (``s_k = 1 / ((N - k) lambda)``, exact survival)."""
    surv = theory.survival_exact("stacked", groups, redundancy)
    k = np.arange(groups)
    s = 1.0 / (groups - k)
    return float(np.sum(s * surv[:groups]) / np.sum(s * surv[:groups] * (groups - k) / groups))


@dataclasses.dataclass(frozen=True)
class RestartSweep:
    """The proactive-restart experiment of ``microbatches``: the micro-batch counts ``ms`` it covers and the
    ``epochs`` of each pool it searches on."""

    ms: tuple = (1, 4, 16)
    epochs: int = 10_000


def microbatches(out_dir: str = "figures", groups: int = 600, ms=(1, 2, 4, 8, 16), rs=tuple(range(2, 13)),
                 mc_rs=(4, 8, 12), sampling: Sampling = Sampling(20_000), ttt_rs=tuple(range(1, 13)),
                 restarts: RestartSweep = RestartSweep()) -> dict:
    """Three experiments, one figure (``microbatches.png``) and their data (progress: the logs on stderr):

    1. ``microbatches_omega.csv``: Omega vs r for each m (exact theory; Monte Carlo at ``mc_rs``,
       ``sampling.count`` epochs each, seed ``sampling.seed``) with the perfect-divisibility bound
       (``divisible_bound``) and Rep (= r).
    2. ``microbatches_ttt.csv``: TTT vs r (closed form, tau* per point) for SPARe(m), Rep and checkpoint-only.
    3. ``microbatches_restart.csv``: the proactive restart (``ttt.policy.search_restart_depth``, pools of
       ``restarts.epochs`` epochs of ``sampling.seed``) for each m in ``restarts.ms``: best D_max, r, tau and
       the gain over no restart.
    """
    from .. import ttt
    from ..kernels.overhead import simulate_overhead
    from ..ttt.policy import restart_depth_window, search_restart_depth

    seed = sampling.seed
    mc_sampling = dataclasses.replace(sampling, out_dir=None, progress=False)  # a run per point: no --out, no bar
    model = FailureModel()
    omega_rows = []
    for r in rs:
        bound = divisible_bound(groups, r)
        for m in ms:
            th = theory.overhead_theory("stacked", groups, r, microbatches=m)
            row = {"groups": groups, "redundancy": r, "microbatches": m, "theory_overhead": th["overhead"],
                   "theory_time_avg_depth": th["time_avg_depth"], "divisible_bound": bound, "rep_overhead": r,
                   "mc_overhead": None, "mc_overhead_stderr": None, "mc_trials": None}
            if r in mc_rs:
                mc = simulate_overhead(make_placement("stacked", groups, r), mc_sampling,
                                       scenario=Scenario(microbatches=m))
                row.update(mc_overhead=mc.overhead, mc_overhead_stderr=mc.overhead_stderr, mc_trials=sampling.count,
                           z_score=(mc.overhead - th["overhead"]) / mc.overhead_stderr)
            omega_rows.append(row)
            log(f"  omega N={groups} r={r:>2} m={m:>2}: theory {th['overhead']:.4f}"
                + (f", MC {row['mc_overhead']:.4f} +- {row['mc_overhead_stderr']:.4f}" if row["mc_overhead"] else "")
                + f" (bound {bound:.4f})")
    plotting.write_csv(os.path.join(out_dir, "microbatches_omega.csv"), omega_rows)

    cfg = ttt.Training()
    gpus = groups * model.gpus_per_group
    ttt_rows = []
    for scheme, m_list in (("spare", ms), ("rep", (1,)), ("none", (1,))):
        for m in m_list:
            for r in ([1] if scheme == "none" else [r for r in ttt_rs if scheme != "rep" or groups % r == 0]):
                prof = ttt.epoch_profile(scheme, groups, r, model, microbatches=m)
                tau, val = ttt.best_tau_grid(prof, cfg, gpus)
                ttt_rows.append({"scheme": scheme, "microbatches": m, "redundancy": r, "ckpt_interval_min": tau,
                                 "ttt_hours": val / 60.0, "mean_uptime_min": prof.mean_uptime_min})
            best = min(x["ttt_hours"] for x in ttt_rows if x["scheme"] == scheme and x["microbatches"] == m)
            log(f"  ttt {scheme} m={m}: best {best:.0f} h")
    plotting.write_csv(os.path.join(out_dir, "microbatches_ttt.csv"), ttt_rows)

    restart_rows = []
    for m in restarts.ms:
        spare = [x for x in ttt_rows if x["scheme"] == "spare" and x["microbatches"] == m]
        r_star = min(spare, key=lambda x: x["ttt_hours"])["redundancy"]
        # a restart policy makes deeper stacks cheaper (voluntary restarts replace most wipe-outs): search up
        # to the largest r of the TTT sweep
        window = restart_depth_window(r_star, max(ttt_rs), below=1, above=max(ttt_rs))
        res = search_restart_depth(Cluster(groups, model, Scenario(microbatches=m)), cfg, window,
                                   sampling=Sampling(restarts.epochs, seed))
        for row in res["curve"]:
            restart_rows.append({"microbatches": m, **row})
        log(f"  restart m={m}: best r={res['best']['redundancy']} D_max={res['best']['restart_depth']} "
             f"TTT {res['best']['ttt_hours']:.0f} h vs {res['no_restart']['ttt_hours']:.0f} h without "
             f"(gain {100 * res['gain']:.1f}%)")
    plotting.write_csv(os.path.join(out_dir, "microbatches_restart.csv"), restart_rows)
    plot_microbatches(out_dir, omega_rows, ttt_rows, restart_rows)
    return {"omega": omega_rows, "ttt": ttt_rows, "restart": restart_rows}


def plot_microbatches(out_dir, omega_rows, ttt_rows, restart_rows) -> None:
    fig, (a1, a2, a3) = plotting.new_figure(3, width=5.6)
    ms = sorted({row["microbatches"] for row in omega_rows})
    cmap = {m: c for m, c in zip(ms, ("tab:blue", "tab:green", "tab:purple", "tab:red", "tab:brown", "tab:olive"))}
    rs = sorted({row["redundancy"] for row in omega_rows})
    for m in ms:
        pts = [row for row in omega_rows if row["microbatches"] == m]
        a1.plot([p["redundancy"] for p in pts], [p["theory_overhead"] for p in pts], color=cmap[m], label=f"m = {m}")
        mc = [p for p in pts if p["mc_overhead"] is not None]
        a1.errorbar([p["redundancy"] for p in mc], [p["mc_overhead"] for p in mc],
                    yerr=[2 * p["mc_overhead_stderr"] for p in mc], fmt="o", ms=3, color=cmap[m])
    bound = {row["redundancy"]: row["divisible_bound"] for row in omega_rows}
    a1.plot(rs, [bound[r] for r in rs], "k--", label="perfect divisibility")
    a1.set_xlabel("redundancy r")
    a1.set_ylabel("compute overhead Ω (×)")
    a1.set_title("Ω vs r (lines: theory; points: Monte Carlo ± 2 s.e.)", fontsize=9)
    plotting.integer_x(a1)
    a1.legend(fontsize=7)

    for m in sorted({row["microbatches"] for row in ttt_rows if row["scheme"] == "spare"}):
        pts = [row for row in ttt_rows if row["scheme"] == "spare" and row["microbatches"] == m
               and row["redundancy"] >= 2]  # r = 1 is checkpointing alone
        a2.plot([p["redundancy"] for p in pts], [p["ttt_hours"] for p in pts], "-o", ms=2, color=cmap.get(m),
                label=f"SPARe m = {m}")
    rep = [row for row in ttt_rows if row["scheme"] == "rep"]
    a2.plot([p["redundancy"] for p in rep], [p["ttt_hours"] for p in rep], "s--", ms=3, color="tab:orange",
            label="Rep + CKPT")
    none = [row for row in ttt_rows if row["scheme"] == "none"][0]["ttt_hours"]
    best = min(row["ttt_hours"] for row in ttt_rows)
    best_rep = min(p["ttt_hours"] for p in rep)
    top = 1.12 * best_rep
    if none < top:
        a2.axhline(none, color="tab:gray", ls=":", label="CKPT only")
    else:
        a2.plot([], [], color="tab:gray", ls=":", label=f"CKPT only: {none:,.0f} h (off scale)")
    a2.set_ylim(0.95 * best, top)
    a2.set_xlabel("redundancy r")
    a2.set_ylabel("time-to-train (hours, W = 720 h)")
    a2.set_title("TTT vs r (closed form, τ* per point)", fontsize=9)
    plotting.integer_x(a2)
    a2.legend(fontsize=7)

    rm = sorted({row["microbatches"] for row in restart_rows})
    for m in rm:
        pts = [row for row in restart_rows if row["microbatches"] == m]
        by_r = {}
        for p in pts:
            cur = by_r.get(p["redundancy"], {})
            key = "never" if p["restart_depth"] is None else "best"
            if key == "never" or p["ttt_hours"] < cur.get("best", (math.inf,))[0]:
                cur[key] = (p["ttt_hours"], p["ttt_stderr_hours"], p["restart_depth"])
            by_r[p["redundancy"]] = cur
        xs = sorted(by_r)
        never = [by_r[x]["never"][0] for x in xs]
        best_v = [min(by_r[x].get("best", by_r[x]["never"])[0], by_r[x]["never"][0]) for x in xs]
        a3.plot(xs, never, "o--", ms=3, color=cmap.get(m), alpha=0.6, label=f"m = {m}, no restart")
        a3.plot(xs, best_v, "o-", ms=4, color=cmap.get(m), label=f"m = {m}, best D_max")
        k = int(np.argmin(best_v))
        d_best = by_r[xs[k]].get("best", (0, 0, None))[2]
        if d_best is not None:
            a3.annotate(f"D_max = {d_best:g}", (xs[k], best_v[k]), textcoords="offset points", xytext=(-40, 8),
                        fontsize=7, color=cmap.get(m))
    a3.set_xlabel("redundancy r")
    a3.set_ylabel("time-to-train (hours)")
    a3.set_title("Proactive restart at depth D_max (pools, ± s.e. < 1%)", fontsize=9)
    plotting.integer_x(a3)
    a3.legend(fontsize=6)
    plotting.save(fig, os.path.join(out_dir, "microbatches.png"))


def replot_microbatches(src: str = "figures", dst: str | None = None) -> None:
    """Redraw ``microbatches.png`` from ``microbatches_omega.csv``, ``microbatches_ttt.csv`` and
    ``microbatches_restart.csv`` (no simulation)."""
    read = plotting.read_csv
    plot_microbatches(dst or src, read(os.path.join(src, "microbatches_omega.csv")),
                      read(os.path.join(src, "microbatches_ttt.csv")),
                      read(os.path.join(src, "microbatches_restart.csv")))
