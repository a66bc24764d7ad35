r"""Scheduling policies on top of the time-to-train model: the proactive restart and the search over the
micro-batch count m (docs/microbatches.md#how-it-works).

Proactive restart. SPARe keeps running after failures at depth d > 1, i.e. at 1/d of full speed. A policy may
instead *restart voluntarily* once the depth reaches ``D_max``: it writes a checkpoint (cost C, so nothing
is lost), restarts (cost R) and resumes at depth 1 with every group restored. It trades R + C for faster
iterations; it pays where failures accumulate slowly but the restart is cheap. Per epoch the voluntary end
is the first depth breakpoint at a level whose depth is at least ``D_max``
(``montecarlo.apply_restart_depth``); the renewal-reward form holds with the per-epoch yield and cycle of
``montecarlo.epoch_yield``:

.. math::  \mathrm{TTT}(\tau, D_{max}) = W \frac{E[U' + C\,1_{vol}] + R}{E[Y']},

``U' = min(U, V)`` and ``Y'`` the work committed by the last checkpoint (wipe-out) or all the work done by V
(voluntary end). There is no closed form for ``E[Y']`` (the voluntary end is a stopping time of the depth
path), so it is estimated on an epoch pool (``pool.pool_ttt``; the same pool, hence common random numbers,
for every ``D_max`` and tau, and for the no-restart baseline).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..model.cluster import Cluster, Sampling
from .config import Space, Training
from .epochs import apply_restart_depth

DEFAULT_RESTART_DEPTHS = (1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)


def restart_depth_grid(redundancy: int, microbatches: int = 1, depths=None) -> list[float]:
    """The D_max values searched for r and m: ``depths`` (default ``DEFAULT_RESTART_DEPTHS``) rounded up to a
    depth the schedule can reach (a multiple of 1/m) and kept in (1, r]; duplicates removed."""
    m = int(microbatches)
    out = []
    for d in (DEFAULT_RESTART_DEPTHS if depths is None else depths):
        d = math.ceil(float(d) * m - 1e-9) / m
        if 1 < d <= redundancy and d not in out:
            out.append(d)
    return sorted(out)


def _spare_pool(cluster: Cluster, r: int, epochs: int, seed: int):
    from .montecarlo import pilot_epochs

    return pilot_epochs(cluster, "spare", r, Sampling(epochs, seed))


def search_restart_depth(cluster: Cluster, cfg: Training, redundancies, restart_depths=None,
                         sampling: Sampling = Sampling(count=20_000)) -> dict:
    """For ``spare`` on ``cluster`` (its groups, failure law and scenario: micro-batches, job-wide failures,
    and domains, ring order or uneven groups by the scenario kernels) and each r in ``redundancies``: the
    best ``D_max`` (``restart_depth_grid`` of ``restart_depths``) and tau on one pool of ``sampling.count``
    epochs per r (the same ``sampling.seed`` for every r; ``sampling.progress``: a bar over the r), against
    the no-restart policy on the same pool. Returns the best (r, D_max, tau) overall, its TTT with standard
    error, the baseline's, and the curve ``[{r, restart_depth, ckpt_interval_min, ttt_hours,
    ttt_stderr_hours}]`` (D_max None = never)."""
    from ..kernels.progress import Progress

    groups, model, scenario = cluster.groups, cluster.model, cluster.scenario
    epochs, seed = sampling.count, sampling.seed
    m = scenario.microbatches
    gpus = groups * model.gpus_per_group
    rs = [int(r) for r in redundancies if int(r) >= 2]
    if not rs:
        raise ValueError("the proactive restart needs r >= 2 (spare with r = 1 has no depth to watch)")
    bar = Progress(len(rs), f"restart-depth search N={groups} ({epochs} epochs per r)", enabled=sampling.progress,
                   unit="pool")
    curve, best, base = [], None, None
    for r in rs:
        pool = _spare_pool(cluster, r, epochs, seed)
        for d in [None] + restart_depth_grid(r, m, restart_depths):
            row = {"redundancy": r, "restart_depth": d, **pool_restart_ttt(pool, d, cfg, gpus)}
            curve.append(row)
            if d is None and (base is None or row["ttt_hours"] < base["ttt_hours"]):
                base = row
            if best is None or row["ttt_hours"] < best["ttt_hours"]:
                best = row
        bar.update(1)
    bar.close()
    return {"best": best, "no_restart": base, "gain": 1.0 - best["ttt_hours"] / base["ttt_hours"],
            "microbatches": m, "epochs_per_r": int(epochs), "seed": int(seed), "curve": curve,
            "method": "Monte Carlo renewal-reward on one epoch pool per r (common random numbers across D_max "
                      "and tau)"}


def restart_depth_window(r_star: int, r_max: int, below: int = 2, above: int = 3) -> list[int]:
    """The r searched with the proactive restart: around the no-restart optimum r* (pools are Monte Carlo,
    so the search is local; a restart policy makes deeper stacks cheaper, hence the wider upper side)."""
    return list(range(max(2, r_star - below), max(2, min(r_max, r_star + above)) + 1))


def pool_restart_ttt(pool, restart_depth, cfg: Training, gpus: float) -> dict:
    """TTT (hours, with standard error), tau*, the voluntary fraction and the mean epoch on ``pool`` under
    ``restart_depth`` (None: never)."""
    from .pool import best_tau_pool, pool_ttt

    p = apply_restart_depth(pool, restart_depth)
    tau, _ = best_tau_pool(p, cfg, gpus)
    ttt, se, _ = pool_ttt(p, [tau], cfg, gpus)
    return {"ckpt_interval_min": tau, "ttt_hours": float(ttt[0]) / 60.0, "ttt_stderr_hours": float(se[0]) / 60.0,
            "voluntary_fraction": 0.0 if p.voluntary is None else float(np.mean(p.voluntary)),
            "mean_epoch_min": float(p.uptime.mean())}


def optimize_policy(cluster: Cluster, cfg: Training, space: Space = Space(), progress: bool = False) -> dict:
    """``closed_form.optimize_r_tau`` on ``cluster`` extended by the scheduling policies of ``space``
    (``config.Space``): for every m in ``space.microbatches`` (none: m = 1) the spare optimum (closed form,
    or the scenario pools), and with ``space.restart_depths`` (a tuple, or ``()`` for the default grid) the
    proactive-restart search around each m's r* (``search_restart_depth``, pools of ``space.epochs`` epochs,
    None: 20,000). ``space.r_max``, ``ages`` and ``seed`` as in ``optimize_r_tau``. The entry
    ``schemes.spare`` becomes the best policy found; ``policy`` holds every m and the restart search."""
    from .closed_form import optimize_r_tau as optimize
    from .pool import POOL_EPOCHS

    model, scenario, restart_depths = cluster.model, cluster.scenario, space.restart_depths

    def at(m):  # the cluster with m micro-batches per shard
        return dataclasses.replace(cluster, scenario=dataclasses.replace(scenario, microbatches=m))

    ms = sorted({int(m) for m in space.microbatches}) or [1]
    base = optimize(at(ms[0]), cfg, space, progress=progress)
    per_m = {ms[0]: base["schemes"]["spare"]}
    for m in ms[1:]:
        res = optimize(at(m), cfg, space, schemes=("spare",), progress=progress)
        per_m[m] = res["schemes"]["spare"]
    best_m = min(per_m, key=lambda m: per_m[m]["ttt_hours"])
    policy = {"microbatches": {str(m): {k: v[k] for k in ("r_star", "ckpt_interval_min", "ttt_hours")}
                               for m, v in per_m.items()},
              "microbatches_star": best_m}
    spare = dict(per_m[best_m], microbatches=best_m, restart_depth=None)
    if restart_depths is not None:
        if model.distribution != "exponential" and space.ages == "kept":
            raise ValueError("the proactive restart is simulated for i.i.d. epochs (exponential failures or "
                             "ages='renewed')")
        searches = {}
        pools = Sampling(space.epochs or POOL_EPOCHS, space.seed, progress=progress)
        for m in ms:
            window = restart_depth_window(per_m[m]["r_star"], space.r_max)
            searches[str(m)] = search_restart_depth(at(m), cfg, window, restart_depths or None, pools)
        key = min(searches, key=lambda k: searches[k]["best"]["ttt_hours"])
        found = searches[key]["best"]
        policy["restart"] = {k: {kk: vv for kk, vv in v.items() if kk != "curve"} for k, v in searches.items()}
        policy["restart_curves"] = {k: v["curve"] for k, v in searches.items()}
        # the policy's gain on its own pools (common random numbers); the closed form's no-restart optimum
        # stays the reference number for the schemes' comparison
        if found["restart_depth"] is not None:
            spare = {**spare, "r_star": found["redundancy"], "ckpt_interval_min": found["ckpt_interval_min"],
                     "ttt_hours": found["ttt_hours"], "ttt_stderr_hours": found["ttt_stderr_hours"],
                     "microbatches": int(key), "restart_depth": found["restart_depth"],
                     "restart_gain_vs_no_restart": searches[key]["gain"],
                     "voluntary_fraction": found["voluntary_fraction"]}
    base["schemes"]["spare"] = spare
    base["policy"] = policy
    if "rep" in base["schemes"]:
        base["ttt_reduction_vs_rep"] = 1.0 - spare["ttt_hours"] / base["schemes"]["rep"]["ttt_hours"]
    return base
