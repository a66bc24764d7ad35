"""The plan's sensitivity: each input scaled (the MTBF, the restart, the checkpoint cost, the job-wide rate), one
optimiser run per scaled input (``sensitivity``), and the scaled models the tests compare it with."""

from __future__ import annotations

import dataclasses

from .fleet import SCHEMES


def scaled_scenario(scenario, mtbf_factor: float = 1.0, job_rate_factor: float = 1.0):
    """The scenario with every failure clock's mean x ``mtbf_factor`` and the job-wide rate x
    ``job_rate_factor`` (``job_fraction`` f: the odds f/(1-f) scale; with an MTBF factor alone it follows)."""
    from ..model.scenario import DomainLevel

    if scenario is None:
        return None
    changes = {}
    if mtbf_factor != 1.0:
        changes["domains"] = tuple(DomainLevel(d.size, d.mtbf_min * mtbf_factor, d.name) for d in scenario.domains)
        if scenario.group_mtbf_min is not None:
            changes["group_mtbf_min"] = tuple(v * mtbf_factor for v in scenario.group_mtbf_min)
    job_mtbf = scenario.job_mtbf_min
    if job_mtbf is not None:
        changes["job_mtbf_min"] = job_mtbf * mtbf_factor / job_rate_factor
    elif scenario.job_fraction and job_rate_factor != 1.0:
        f = scenario.job_fraction
        changes["job_fraction"] = job_rate_factor * f / (1.0 - f + job_rate_factor * f)
    return dataclasses.replace(scenario, **changes) if changes else scenario


SENSITIVITY = (("mtbf", 2.0, "MTBF x2"), ("mtbf", 0.5, "MTBF /2"), ("restart", 2.0, "restart x2"),
               ("restart", 0.5, "restart /2"), ("ckpt_cost", 2.0, "checkpoint x2"),
               ("ckpt_cost", 0.5, "checkpoint /2"), ("job_rate", 2.0, "job-wide rate x2"),
               ("job_rate", 0.5, "job-wide rate /2"))


def time_scaled(cfg, factor: float):
    """The training config in time units ``factor`` times longer: R, C and W divided by ``factor``."""
    return dataclasses.replace(cfg, work_hours=cfg.work_hours / factor, ckpt_cost_min=cfg.ckpt_cost_min / factor,
                               restart_min=cfg.restart_min / factor)


def has_job(scenario) -> bool:
    return scenario is not None and (scenario.job_mtbf_min is not None or bool(scenario.job_fraction))


def sensitivity(cluster, cfg, space, base, gpus, price, progress, stages=None) -> list:
    """One optimiser run (``ttt.optimize_r_tau`` over ``space``) per scaled input. Every failure clock's mean x f (group, domain, job-wide MTBF,
    per-group MTBFs) is the same model as every *other* time (R, C, W) / f in a time unit f times longer
    (exponential clocks scale exactly), so that row runs the optimiser on the base clocks with R, C, W / f
    and scales its times back by f: under a scenario the kernels (compiled per failure model) and the random
    numbers are the base run's. ``scaled_scenario`` builds the directly scaled model (the tests check both
    agree)."""
    from .. import ttt

    rows = []
    scenario = cluster.scenario
    with_job = has_job(scenario)
    todo = sum(1 for what, _, _ in SENSITIVITY if what in ("mtbf", "restart", "ckpt_cost") or with_job)
    for what, factor, label in SENSITIVITY:
        c, sc, unit = cfg, scenario, 1.0
        if what == "mtbf":
            c, unit = time_scaled(cfg, factor), factor
        elif what == "restart":
            c = dataclasses.replace(cfg, restart_min=cfg.restart_min * factor)
        elif what == "ckpt_cost":
            c = dataclasses.replace(cfg, ckpt_cost_min=cfg.ckpt_cost_min * factor)
        elif not with_job:
            continue
        else:
            sc = scaled_scenario(scenario, job_rate_factor=factor)
        if stages is not None:
            stages.stage(f"sensitivity {len(rows) + 1}/{todo}: {label}")
        res = ttt.optimize_r_tau(dataclasses.replace(cluster, scenario=sc), c, space, progress=progress)
        per = {}
        for s in SCHEMES:
            e, r0 = res["schemes"][s], base["schemes"][s]["r_star"]
            at_base = e["ttt_hours"] if e["r_star"] == r0 else next(
                (p["ttt_hours"] for p in res["curves"][s] if p["redundancy"] == r0), None)
            ttt_h = float(e["ttt_hours"]) * unit
            per[s] = {"r_star": int(e["r_star"]), "ckpt_interval_min": float(e["ckpt_interval_min"]) * unit,
                      "ttt_hours": ttt_h, "ttt_hours_at_base_r": None if at_base is None else at_base * unit,
                      "cost": ttt_h * gpus * price}
        rows.append({"input": what, "factor": factor, "label": label, "schemes": per})
    return rows
