"""Real clusters (docs/scenarios.md#ring-order-and-job-wide-interruptions-across-r): ring order against failure
domains, and job-wide interruptions against r* and SPARe's advantage over replication
(``experiments/scenarios.py``)."""

from __future__ import annotations

import dataclasses
import os

import numpy as np

from .. import plotting, theory
from ..model.cluster import Cluster, Sampling
from ..model.failures import FailureModel
from ..model.placement import make_placement
from ..model.scenario import DomainLevel, Scenario, job_wide_uptime, single_domain_wipeout_fraction
from ..kernels.wipeout import simulate_wipeout
from .common import log

RINGS = ("contiguous", "interleaved", "random")


def _ring(name: str, groups: int, seed: int):
    if name == "random":
        return tuple(int(g) for g in np.random.default_rng(seed).permutation(groups))
    return name


def scenarios(out_dir: str = "figures", groups: int = 600, rs=(2, 3, 4, 6, 8, 12),
              domain: DomainLevel = DomainLevel(5, 50_000.0), job_mtbf_min: float = 2000.0,
              sampling: Sampling = Sampling(50_000, progress=True),
              job_fractions=(0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3), r_max: int = 20) -> dict:
    """Two experiments, one figure (``scenarios.png``) and their data (``scenarios_uptime.csv``,
    ``scenarios_job_wide.csv``):

    1. E[epoch uptime] vs r (Monte Carlo, ``sampling.count`` epochs of ``sampling.seed`` per point; its chunks
       and devices) for contiguous, interleaved and random ring orders, with failure domains ``domain`` (of
       ``domain.size`` groups, MTBF ``domain.mtbf_min``) alone and with job-wide interruptions
       (``job_mtbf_min``), against the closed form's exact uptime
       without domains.
    2. ``ttt.optimize`` (closed form, exact for job-wide failures) with a fraction f of all interruptions
       job-wide: r*, tau*, TTT and the reduction against the best replication, and SPARe's TTT at the r* of
       f = 0 (how flat TTT(r) becomes: with frequent job-wide restarts r hardly matters). The job-wide rate
       is f / (1 - f) times the cluster's group failure rate, so at the paper's 5-minute MTBF, f = 0.1
       already means a job-wide interruption every 45 minutes.
    """
    from .. import ttt

    trials, seed, progress = sampling.count, sampling.seed, sampling.progress
    mc_sampling = dataclasses.replace(sampling, out_dir=None, progress=False)  # a run per point: no --out, no bar
    domain_size, domain_mtbf_min = domain.size, domain.mtbf_min
    model = FailureModel()
    lam = model.group_rate_per_min
    rows = []
    for with_job in (False, True):
        for ring in RINGS:
            for r in rs:
                sc = Scenario(domains=(domain,), ring=_ring(ring, groups, seed),
                              job_mtbf_min=job_mtbf_min if with_job else None)
                pl = make_placement("stacked", groups, r)
                mc = simulate_wipeout(pl, mc_sampling, scenario=sc)
                rows.append({"groups": groups, "redundancy": r, "ring": ring, "job_mtbf_min": sc.job_mtbf_min,
                             "domain_size": domain_size, "domain_mtbf_min": domain_mtbf_min, "trials": trials,
                             "mc_epoch_uptime_min": mc.uptime_mean_min,
                             "mc_epoch_uptime_stderr_min": mc.uptime_stderr_min, "mc_mean_T": mc.mean,
                             "p_wipeout_by_domain": mc.fatal_by_domain / trials,
                             "p_epoch_end_job_wide": mc.ended_by_job / trials,
                             "single_domain_wipeout_fraction": single_domain_wipeout_fraction(sc, pl)})
                log(f"  scenario N={groups} r={r:>2} ring={ring:<11} job={'on ' if with_job else 'off'} "
                    f"uptime {mc.uptime_mean_min:8.1f} ± {mc.uptime_stderr_min:.1f} min")
    no_domains = _no_domains(groups, rs, job_mtbf_min, lam)
    exact = {(x["redundancy"], x["with_job"]): x["uptime"] for x in no_domains}
    for row in rows:  # the reference curve of the figure, beside the Monte Carlo it is drawn with
        row["exact_uptime_no_domains_min"] = exact[(row["redundancy"], row["job_mtbf_min"] is not None)]
    job_rows = []
    r_star_0 = None
    for f in job_fractions:
        job = Scenario(job_fraction=f or None)
        mu = job.job_rate_per_min(groups, model.group_mtbf_min)
        res = ttt.optimize_r_tau(Cluster(groups, model, job), space=ttt.Space(r_max), progress=progress)
        sp, rp = res["schemes"]["spare"], res["schemes"]["rep"]
        r_star_0 = sp["r_star"] if r_star_0 is None else r_star_0
        at_r0 = next(c["ttt_hours"] for c in res["curves"]["spare"] if c["redundancy"] == r_star_0)
        job_rows.append({"groups": groups, "job_fraction": f, "job_mtbf_min": None if mu == 0 else 1 / mu,
                         "spare_r_star": sp["r_star"], "spare_tau_min": sp["ckpt_interval_min"],
                         "spare_ttt_hours": sp["ttt_hours"], "spare_availability_pct": sp["availability_pct"],
                         "rep_r_star": rp["r_star"], "rep_ttt_hours": rp["ttt_hours"],
                         "ttt_reduction_vs_rep": res["ttt_reduction_vs_rep"],
                         "spare_ttt_at_first_r_star_hours": at_r0, "first_r_star": r_star_0})
        log(f"  job-wide fraction {f:.2f}: SPARe r*={sp['r_star']} TTT {sp['ttt_hours']:.0f} h, Rep r*={rp['r_star']} "
            f"{rp['ttt_hours']:.0f} h, reduction {res['ttt_reduction_vs_rep']:.1%}")
    plotting.write_csv(os.path.join(out_dir, "scenarios_uptime.csv"), rows)
    plotting.write_csv(os.path.join(out_dir, "scenarios_job_wide.csv"), job_rows)
    _plot(rows, no_domains, job_rows, groups, domain_size, domain_mtbf_min, job_mtbf_min,
          os.path.join(out_dir, "scenarios.png"))
    return {"uptime": rows, "job_wide": job_rows}


def _no_domains(groups, rs, job_mtbf_min, lam):
    """The closed form's exact E[epoch uptime] without domains (stacked placement), without and with job-wide
    interruptions."""
    return [{"redundancy": r, "with_job": with_job,
             "uptime": job_wide_uptime(theory.survival_stacked(groups, r), groups, lam,
                                       1 / job_mtbf_min if with_job else 0.0)[0]}
            for with_job in (False, True) for r in rs]


# ring -> (colour, marker, x offset, marker size, filled): interleaved and random coincide (the ring order of
# a random permutation spreads domains as well as interleaving does), so interleaved is drawn with large hollow
# squares a little left, random with small filled triangles a little right
RING_STYLE = {"contiguous": ("tab:red", "o", 0.0, 4, True), "interleaved": ("tab:blue", "s", -0.12, 7, False),
              "random": ("tab:green", "^", 0.12, 4, True)}


def _plot(rows, no_domains, job_rows, groups, size, domain_mtbf, job_mtbf, path):
    """Left: E[epoch uptime] vs r per ring order (colour and marker), without (solid) and with (dashed)
    job-wide interruptions, against the exact uptime without domains (black; dotted, dash-dotted with job-wide).
    ``no_domains`` may be None or empty (a CSV without the reference curve): it is left out.
    Right: the TTT reduction and r* against the job-wide share."""
    fig, (ax1, ax2) = plotting.new_figure(2, width=6.0, height=4.6)
    for with_job, ls in ((False, "-"), (True, "--")):
        for ring, (color, marker, dx, ms, filled) in RING_STYLE.items():
            sel = [x for x in rows if x["ring"] == ring and (x["job_mtbf_min"] is not None) == with_job]
            if not sel:
                continue
            ax1.errorbar([x["redundancy"] + dx for x in sel], [x["mc_epoch_uptime_min"] for x in sel],
                         yerr=[2 * x["mc_epoch_uptime_stderr_min"] for x in sel], fmt=marker, ls=ls, color=color,
                         ms=ms, capsize=2, mfc=color if filled and not with_job else "none",
                         mew=1.2 if not filled else 1.0, lw=1.3, alpha=0.9,
                         zorder=2 if ring == "interleaved" else 3,
                         label=f"{ring}{' + job-wide' if with_job else ''}")
        ref = [x for x in (no_domains or []) if x["with_job"] == with_job]
        if ref:
            ax1.plot([x["redundancy"] for x in ref], [x["uptime"] for x in ref], "-." if with_job else ":",
                     color="k", lw=1, zorder=4, label="no domains, exact" + (" (+ job-wide)" if with_job else ""))
    ax1.set_yscale("log")
    rs = sorted({x["redundancy"] for x in rows})
    ax1.set_xticks(rs)  # the r values simulated (points are offset sideways by ring order)
    ax1.set_xlabel("redundancy r (points set apart sideways by ring order)")
    ax1.set_ylabel("E[epoch uptime] (min), MC ± 2 s.e.")
    ax1.set_title(f"Ring order vs domains of {size} groups (MTBF {domain_mtbf:,.0f} min)\n"
                  f"N = {groups}; dashed: job-wide interruptions every {job_mtbf:,.0f} min", fontsize=9)
    ax1.grid(alpha=0.3, which="both")
    ax1.legend(fontsize=6.5, ncol=2, loc="lower right")
    f = [100 * x["job_fraction"] for x in job_rows]
    ax2.plot(f, [100 * x["ttt_reduction_vs_rep"] for x in job_rows], "o-", color="tab:blue",
             label="TTT reduction vs best Rep (%)")
    ax2.set_xlabel("job-wide share of all interruptions (%)")
    ax2.set_ylabel("TTT reduction, best SPARe+CKPT vs best Rep+CKPT (%)")
    ax2.grid(alpha=0.3)
    ax3 = ax2.twinx()
    ax3.plot(f, [x["spare_r_star"] for x in job_rows], "s--", color="tab:gray", ms=4,
             label="SPARe r* (search up to the right axis' top)")
    ax3.set_ylabel("SPARe r*")
    ax3.set_ylim(0, max(x["spare_r_star"] for x in job_rows) + 2)
    plotting.integer_y(ax3)
    lines = ax2.get_lines() + ax3.get_lines()
    ax2.legend(lines, [ln.get_label() for ln in lines], fontsize=8, loc="center")
    ax2.set_title(f"Job-wide interruptions (closed form, N = {groups})", fontsize=9)
    plotting.save(fig, path)


def replot_scenarios(src: str = "figures", dst: str | None = None, domain_mtbf_min: float = 50_000.0,
                     job_mtbf_min: float = 2000.0) -> None:
    """Redraw ``scenarios.png`` from ``scenarios_uptime.csv`` and ``scenarios_job_wide.csv`` (no simulation).
    The exact no-domain reference is read from the CSV's ``exact_uptime_no_domains_min`` column; a CSV
    written before that column existed gets it from the closed form (``job_wide_uptime``, a second)."""
    rows = plotting.read_csv(os.path.join(src, "scenarios_uptime.csv"))
    job_rows = plotting.read_csv(os.path.join(src, "scenarios_job_wide.csv"))
    groups, size = rows[0]["groups"], rows[0]["domain_size"]
    domain_mtbf = rows[0].get("domain_mtbf_min") or domain_mtbf_min
    job = next((x["job_mtbf_min"] for x in rows if x["job_mtbf_min"] is not None), job_mtbf_min)
    rs = sorted({x["redundancy"] for x in rows})
    if all(x.get("exact_uptime_no_domains_min") is not None for x in rows):
        seen = {}
        for x in rows:
            seen[(x["redundancy"], x["job_mtbf_min"] is not None)] = x["exact_uptime_no_domains_min"]
        no_domains = [{"redundancy": r, "with_job": w, "uptime": seen[(r, w)]} for w in (False, True) for r in rs
                      if (r, w) in seen]
    else:
        no_domains = _no_domains(groups, rs, job, FailureModel().group_rate_per_min)
    _plot(rows, no_domains, job_rows, groups, size, domain_mtbf, job, os.path.join(dst or src, "scenarios.png"))
