"""Ring orders and job-wide interruptions in time-to-train
(docs/scenarios.md#ring-order-in-time-to-train-and-job-wide-shares-on-a-100k-cluster; ``experiments/ring_ttt.py``)."""

from __future__ import annotations

import dataclasses
import os

from .. import plotting
from ..model.cluster import Cluster, Sampling
from ..model.failures import FailureModel
from ..model.scenario import DomainLevel, Scenario
from ..rectlr.place import RingSearch
from .common import log

ORDERS = ("contiguous", "interleaved", "searched")


@dataclasses.dataclass(frozen=True)
class JobShareSweep:
    """The second experiment of ``ring_ttt``: on the ``preset`` cluster, r* (searched up to ``r_max``) and
    time-to-train for each job-wide share of all interruptions in ``shares``."""

    preset: str = "cluster-100k"
    shares: tuple = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3)
    r_max: int = 20


def ring_ttt(out_dir: str = "figures", groups: int = 600, rs=(2, 3, 4, 6, 8, 12),
             domain: DomainLevel = DomainLevel(5, 50_000.0), job_mtbf_min: float = 2000.0,
             sampling: Sampling = Sampling(20_000, progress=True), search: RingSearch = RingSearch(steps=100),
             job_shares: JobShareSweep = JobShareSweep()) -> dict:
    """Two experiments, one figure (``ring_ttt.png``) and their data (``ring_ttt.csv``, ``ring_ttt_job_share.csv``):

    1. SPARe's time-to-train vs r at N = ``groups`` with failure domains ``domain`` (``domain.size`` groups,
       MTBF ``domain.mtbf_min``), for the contiguous, interleaved and searched (``place.search_ring`` per r,
       as ``search`` says, its orders evaluated on 20,000 epochs) ring orders, without and with job-wide
       interruptions (``job_mtbf_min``); Rep+CKPT on the same orders at the divisors of N. Every point: a pool
       of ``sampling.count`` epochs of ``sampling.seed``, tau* on the pool (``ttt.pool``), ± 1 s.e.
    2. On the ``job_shares.preset`` cluster's group-failure rate (domains off, so the closed form is exact): r*,
       TTT and SPARe's reduction against the best Rep when a share s of all interruptions is job-wide (the group
       failures held fixed, job-wide rate s / (1 - s) times theirs); ``sampling.progress``: the optimiser's bar.
    """
    from .. import ttt
    from ..rectlr.place import search_ring
    from ..model.presets import get_preset
    from ..ttt.pool import best_tau_pool, pool_theory, sample_scenario_epochs

    epochs, seed, progress = sampling.count, sampling.seed, sampling.progress
    domain_size, domain_mtbf_min = domain.size, domain.mtbf_min
    preset, r_max = job_shares.preset, job_shares.r_max
    model = FailureModel()
    cfg = ttt.Training()
    gpus = groups * model.gpus_per_group
    domains = (domain,)
    rows = []
    searched = {}
    for r in rs:
        found = search_ring(Cluster(groups, model, Scenario(domains=domains)), r, search=search,
                            sampling=Sampling(20_000, seed))
        searched[r] = found.best_ring
        log(f"  ring search r={r}: best {found.best_name} "
            + ", ".join(f"{o['name']} {o['uptime_min']:.0f}" for o in found.orders))
    for with_job in (False, True):
        for order in ORDERS:
            for scheme in ("spare", "rep"):
                for r in rs:
                    if scheme == "rep" and groups % r:
                        continue
                    ring = tuple(int(g) for g in searched[r]) if order == "searched" else order
                    sc = Scenario(domains=domains, ring=ring, job_mtbf_min=job_mtbf_min if with_job else None)
                    pool = sample_scenario_epochs(scheme, groups, r, epochs, seed, model, sc)
                    tau, _ = best_tau_pool(pool, cfg, gpus)
                    th = pool_theory(pool, tau, cfg, gpus)
                    rows.append({"groups": groups, "scheme": scheme, "redundancy": r, "ring": order,
                                 "job_mtbf_min": sc.job_mtbf_min, "domain_size": domain_size,
                                 "domain_mtbf_min": domain_mtbf_min, "epochs": epochs, "ckpt_interval_min": tau,
                                 "ttt_hours": th["ttt_hours"], "ttt_stderr_hours": th["ttt_stderr_hours"],
                                 "mean_uptime_min": th["mean_uptime_min"], "availability_pct": 100.0 * th["availability"]})
                    log(f"  {scheme:<5} r={r:>2} ring={order:<11} job={'on ' if with_job else 'off'} "
                        f"TTT {th['ttt_hours']:8.0f} ± {th['ttt_stderr_hours']:.0f} h  (E[U] {th['mean_uptime_min']:.0f} min)")
    p = get_preset(preset)
    s = p.settings
    pmodel = FailureModel(system_mtbf_min=s["mtbf"], reference_gpus=s["reference_gpus"],
                          gpus_per_group=s["gpus_per_group"])
    pcfg = dataclasses.replace(cfg, restart_min=s["restart"], work_hours=s["work_hours"])
    n = s["groups"]
    share_rows = []
    for share in job_shares.shares:
        job = Scenario(job_fraction=share or None)
        mu = job.job_rate_per_min(n, pmodel.group_mtbf_min)
        res = ttt.optimize_r_tau(Cluster(n, pmodel, job), pcfg, ttt.Space(r_max), progress=progress)
        sp, rp = res["schemes"]["spare"], res["schemes"]["rep"]
        share_rows.append({"preset": preset, "groups": n, "job_share": share, "job_mtbf_min": 1 / mu if mu else None,
                           "spare_r_star": sp["r_star"], "spare_ttt_hours": sp["ttt_hours"],
                           "rep_r_star": rp["r_star"], "rep_ttt_hours": rp["ttt_hours"],
                           "none_ttt_hours": res["schemes"]["none"]["ttt_hours"],
                           "ttt_reduction_vs_rep": res["ttt_reduction_vs_rep"]})
        log(f"  {preset} job share {share:.2f}: SPARe r*={sp['r_star']} {sp['ttt_hours']:.0f} h, Rep r*={rp['r_star']} "
            f"{rp['ttt_hours']:.0f} h, reduction {res['ttt_reduction_vs_rep']:.1%}")
    plotting.write_csv(os.path.join(out_dir, "ring_ttt.csv"), rows)
    plotting.write_csv(os.path.join(out_dir, "ring_ttt_job_share.csv"), share_rows)
    _plot(rows, share_rows, _ttt_title(groups, domain_size, domain_mtbf_min, job_mtbf_min), preset, pcfg,
          os.path.join(out_dir, "ring_ttt.png"))
    return {"ttt": rows, "job_share": share_rows}


def _ttt_title(groups, size, domain_mtbf, job_mtbf) -> str:
    """The title of the time-to-train panel: the cluster, its domains and the job-wide interruptions."""
    return (f"N = {groups}, domains of {size} groups (MTBF {domain_mtbf:,.0f} min); wide: interleaved\n"
            f"dashed: + job-wide every {job_mtbf:,.0f} min; W = 720 h, C = 5 min, R = 60 min")


def _plot(rows, share_rows, ttt_title, preset, pcfg, path):
    fig, (ax1, ax2) = plotting.new_figure(2, width=6.0, height=4.6)
    colors = {"contiguous": "tab:red", "interleaved": "tab:blue", "searched": "tab:green"}
    for with_job, ls in ((False, "-"), (True, "--")):
        for order, color in colors.items():
            for scheme, marker in (("spare", "o"), ("rep", "x")):
                sel = [x for x in rows if x["ring"] == order and x["scheme"] == scheme
                       and (x["job_mtbf_min"] is not None) == with_job]
                if not sel:
                    continue
                wide = order == "interleaved"  # drawn wide under the searched order, which often coincides
                ax1.errorbar([x["redundancy"] for x in sel], [x["ttt_hours"] for x in sel],
                             yerr=[x["ttt_stderr_hours"] for x in sel], fmt=marker + ls, color=color,
                             ms=7 if wide else 3.5, lw=3.2 if wide else 1.2, capsize=2,
                             mfc="none" if with_job else color,
                             alpha=(0.45 if wide else 0.9) if scheme == "spare" else (0.3 if wide else 0.55),
                             label=f"{'SPARe' if scheme == 'spare' else 'Rep'} {order}{' + job-wide' if with_job else ''}")
    ax1.set_yscale("log")
    plotting.integer_x(ax1)
    ax1.set_xlabel("redundancy r")
    ax1.set_ylabel("time-to-train (h), MC renewal-reward ± 1 s.e.")
    ax1.set_title(ttt_title, fontsize=9)
    ax1.grid(alpha=0.3, which="both")
    ax1.legend(fontsize=6, ncol=2)
    share = [100 * x["job_share"] for x in share_rows]
    ax2.plot(share, [x["spare_ttt_hours"] for x in share_rows], "o-", color="tab:blue", label="SPARe+CKPT (r*)")
    ax2.plot(share, [x["rep_ttt_hours"] for x in share_rows], "x-", color="tab:orange", label="Rep+CKPT (r*)")
    ax2.plot(share, [x["none_ttt_hours"] for x in share_rows], "^--", color="tab:gray", mfc="none", ms=8, zorder=1,
             label="CKPT only")  # dashed, hollow and below: Rep (r* = 1) often coincides with it
    for x in share_rows:
        ax2.annotate(f"r*={x['spare_r_star']}\n{100 * x['ttt_reduction_vs_rep']:.0f}%",
                     (100 * x["job_share"], x["spare_ttt_hours"]), fontsize=6, textcoords="offset points",
                     xytext=(0, -18), ha="center")
    ax2.set_xlabel("job-wide share of all interruptions (%)")
    ax2.set_ylabel("time-to-train (h), closed form")
    ax2.set_title(f"{preset}: group failures fixed, job-wide share added\n(labels: SPARe r*, reduction vs best "
                  f"Rep); R = {pcfg.restart_min:g} min, W = {pcfg.work_hours:g} h", fontsize=9)
    ax2.grid(alpha=0.3)
    ax2.legend(fontsize=8)
    plotting.save(fig, path)


def replot_ring_ttt(out_dir: str = "figures", groups: int = 600, domain_size: int = 5,
                    domain_mtbf_min: float = 50_000.0, job_mtbf_min: float = 2000.0, preset: str = "cluster-100k"):
    """Redraw ``ring_ttt.png`` from ``ring_ttt.csv`` and ``ring_ttt_job_share.csv`` (no simulation)."""
    import csv

    from .. import ttt
    from ..model.presets import get_preset

    def read(name):
        with open(os.path.join(out_dir, name)) as fh:
            rows = list(csv.DictReader(fh))
        for row in rows:
            for k, v in row.items():
                try:
                    row[k] = None if v == "" else (int(v) if v.lstrip("-").isdigit() else float(v))
                except ValueError:
                    pass
        return rows

    s = get_preset(preset).settings
    pcfg = dataclasses.replace(ttt.Training(), restart_min=s["restart"], work_hours=s["work_hours"])
    _plot(read("ring_ttt.csv"), read("ring_ttt_job_share.csv"),
          _ttt_title(groups, domain_size, domain_mtbf_min, job_mtbf_min), preset, pcfg,
          os.path.join(out_dir, "ring_ttt.png"))
