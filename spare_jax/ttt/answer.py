"""Time-to-train of one strategy on one cluster: ``time_to_train(cluster, training, policy, sampling)``.

The Monte Carlo of training runs beside the closed form where one exists (exponential failures, renewed
ages), the renewal-reward estimate on a pilot pool of epochs where none does (domains, ring orders, lemons,
the proactive restart), or a pool of epochs with rejoins (repair). Returns a ``Report`` whose ``to_json()``
is what ``spare-jax ttt --json`` prints.
"""

from __future__ import annotations

import dataclasses
import math
import time
import types

from ..model.cluster import Cluster, Sampling
from ..model.coverage import METHODS  # closed_form, closed_form_approx, epoch_pool, whole_runs
from ..model.training import Training
from ..results import Report
from .config import (  # noqa: F401 (Policy, Space: part of this API)
    AGES, SCHEMES, Policy, Space, check_ages, scheme_placement)
from .exact import closed_form_answers  # noqa: F401 (part of this API: the router's interval form)
from .interval import ttt_interval


def time_to_train(cluster: Cluster, training: Training, policy: Policy = Policy(),
                  sampling: Sampling = Sampling(count=200)) -> Report:
    """``sampling.count`` training runs of ``policy`` on ``cluster`` with the costs of ``training`` (its
    checkpoint interval, or the optimum when it is None: a note says so when that optimum is the interval
    search's floor). A ``Report`` whose ``to_json()`` is what ``spare-jax ttt --json`` prints."""
    from .edges import tau_floor_note

    out = _time_to_train(cluster, training, policy, sampling)
    note = None if training.ckpt_interval_min is not None else tau_floor_note(out.get("ckpt_interval_min"))
    return _with_notes(out, [note] if note else [])


def _with_notes(out: Report, notes: list) -> Report:
    """``out`` with ``notes`` after its own (``out`` itself when there are none)."""
    return Report({**out, "notes": list(out.get("notes") or []) + notes}) if notes else out


def _time_to_train(cluster: Cluster, training: Training, policy: Policy, sampling: Sampling) -> Report:
    if policy.restart_depth is not None and policy.scheme != "spare":
        raise ValueError(f"`restart_depth` applies to `scheme` spare only ({policy.scheme} has a constant depth)")
    if cluster.scenario.microbatches > 1 and policy.scheme not in ("spare", "elastic"):
        raise ValueError(f"`microbatches` applies to `scheme` spare and elastic only ({policy.scheme} computes "
                         "whole replicas)")
    if policy.scheme == "elastic":
        check_elastic(cluster)
    if policy.scheme == "none" and cluster.repair is not None and cluster.repair.spares is None:
        raise ValueError("`scheme` none with `repair_time_min`: every group failure is a wipe-out, whose global "
                         "restart replaces the group, so a repair never completes and the repair time changes "
                         "nothing; drop `repair_time_min` (with a finite pool, `spares` and `hardware_repair_min`, the "
                         "restart waits for spares and the run is simulated)")
    from .router import Problem, choose

    return choose(Problem(cluster, policy, training, optimum=False)).answer(cluster, training, policy, sampling)


def _epoch_pool_ttt(cluster: Cluster, training: Training, policy: Policy, sampling: Sampling) -> Report:
    """``ttt``'s runs assembled from epochs sampled by the kernels (``router.EPOCH_POOL``), with the closed form
    beside them where one answers the optimum, else a pilot pool's renewal-reward estimate."""
    from ..kernels.driver import check_work_inputs
    from . import router
    from .closed_form import best_tau_grid, epoch_profile, ttt_theory, young_daly
    from .montecarlo import epochs_needed, simulate_ttt_runs
    from ..model.placement import check_groups_redundancy

    model, cfg, scenario, groups, runs = cluster.model, training, cluster.scenario, cluster.groups, sampling.count
    kind, r = scheme_placement(policy.scheme, groups, policy.redundancy)
    check_groups_redundancy(groups, r)
    check_work_inputs(groups, sampling, groups * max(r, 2), 8)
    gpus = cluster.gpus
    theory_ttt, tau, yd, renewed_ttt, pool_est = None, training.ckpt_interval_min, None, None, None
    theory_method = None  # closed_form (exact) or closed_form_approx: how theory_ttt_hours was computed
    # closed form: exponential (kept = renewed) or renewed ages (kept Weibull ages run whole training runs).
    # Domains, ring orders, lemons and the proactive restart have no closed form (the router's choice for the
    # optimum is the epoch pool): a pilot pool of epochs gives tau and the renewal-reward estimate
    job_rate = scenario.job_rate_per_min(groups, model.group_mtbf_min)
    if router.choose(router.Problem(cluster, policy, training)) is router.EPOCH_POOL:
        from .epochs import apply_restart_depth
        from .montecarlo import pilot_epochs
        from .pool import POOL_EPOCHS, best_tau_pool, pool_theory

        pilot = pilot_epochs(cluster, policy.scheme, r,
                             Sampling(POOL_EPOCHS, sampling.seed, progress=sampling.progress))
        pilot = apply_restart_depth(pilot, policy.restart_depth)
        prof = types.SimpleNamespace(mean_uptime_min=float(pilot.uptime.mean()))
        if tau is None:
            tau = best_tau_pool(pilot, cfg, gpus)[0]
        th = pool_est = pool_theory(pilot, tau, cfg, gpus)
    else:
        prof = epoch_profile(policy.scheme, groups, r, model, ages=policy.ages, job_rate=job_rate,
                             microbatches=scenario.microbatches)
        form = router.interval_form(router.Problem(cluster, dataclasses.replace(policy, redundancy=r)))
        # up front, before the exact form's search: a sample the renewal-reward form already puts over the limit
        tau_early = tau if tau is not None else best_tau_grid(prof, cfg, gpus)[0]
        early = ttt_theory(prof, tau_early, cfg, gpus)
        _check_ttt_feasible(cluster, cfg, runs, r, tau_early,
                            epochs_needed(prof.mean_uptime_min, cfg, runs, 1 / early["ttt_over_w"] / early["availability"]),
                            prof, early)
        th = None
        if form is not None:  # the interval-by-interval form (exact for rep and none): tau* and the theory
            from .exact import closed_form_ttt

            try:
                th = closed_form_ttt(cluster, cfg, policy.scheme, r, tau,
                                     tau_hint=None if tau is not None else best_tau_grid(prof, cfg, gpus)[0])
                tau, theory_method = th["ckpt_interval_min"], form
            except ValueError:  # spare at an interval far below the epoch: too many intervals to sum
                if policy.scheme != "spare":
                    raise
        if th is None:
            theory_method = "closed_form_approx"  # the renewal-reward form (e.g. Weibull clocks, renewed ages)
            if tau is None:
                tau = best_tau_grid(prof, cfg, gpus)[0]
            th = ttt_theory(prof, tau, cfg, gpus)
        theory_ttt = th["ttt_hours"]
        yd = young_daly(prof, cfg, gpus)
    rate_guess = 1 / th["ttt_over_w"] / th["availability"]
    _check_ttt_feasible(cluster, cfg, runs, r, tau, epochs_needed(prof.mean_uptime_min, cfg, runs, rate_guess),
                        prof, th)
    t0 = time.perf_counter()
    mc, pool = simulate_ttt_runs(cluster, cfg, dataclasses.replace(policy, redundancy=r), sampling, tau,
                                 prof.mean_uptime_min, rate_guess)
    ci = ttt_interval(mc["run_ttt_hours"], floor=cfg.work_hours)
    out = {
        "scheme": policy.scheme, "groups": groups, "redundancy": r, "placement": kind,
        "ckpt_interval_min": tau, "runs": mc["runs"],
        "mc_ttt_hours": mc["ttt_hours"], "mc_ttt_stderr_hours": mc["ttt_stderr_hours"],
        "mc_ttt_ci95_low": ci["low"], "mc_ttt_ci95_high": ci["high"],
        "theory_ttt_hours": theory_ttt, "theory_method": theory_method, "availability_pct": 100.0 * mc["availability"], "goodput": mc["goodput"],
        "ttt_over_w": mc["ttt_hours"] / cfg.work_hours, "restarts_mean": mc["restarts_mean"],
        "lost_uptime_hours_mean": mc["lost_uptime_hours_mean"],
        "young_interval_min": None if yd is None else yd["young_min"],
        "daly_interval_min": None if yd is None else yd["daly_min"],
        "work_hours": cfg.work_hours, "ckpt_cost_min": cfg.ckpt_cost_min, "restart_min": cfg.restart_for(gpus),
        "epochs_sampled": int(pool.uptime.size), "distribution": model.distribution,
        "ages": policy.ages, "renewed_theory_ttt_hours": renewed_ttt,
        "job_mtbf_min": 1.0 / job_rate if job_rate > 0 else None,
        "mc_epoch_uptime_min": float(pool.uptime.mean()),
        **per_day(cluster, mc["restarts_mean"], mc["ttt_hours"]),
        "method": "epoch_pool",
        "method_detail": "training runs assembled from epochs sampled by the kernels; the checkpoint interval "
                         + ("and the renewal-reward estimate from a pilot pool of epochs" if pool_est is not None
                            else "from the closed form beside them"),
        "elapsed_s": time.perf_counter() - t0,
    }
    if theory_method is None:  # no closed form beside the runs (a pilot pool's renewal estimate instead)
        out.pop("theory_method")
    if not scenario.is_default or scenario.microbatches > 1:
        out["scenario"] = scenario.describe()
    if scenario.microbatches > 1:
        out["microbatches"] = scenario.microbatches
    if policy.restart_depth is not None:
        vol = pool.voluntary
        out["restart_depth"] = policy.restart_depth
        out["voluntary_restart_fraction"] = 0.0 if vol is None else float(vol.mean())
    if training.stalls:  # checkpointing alone: every failure is a global restart, nothing stalls
        out.update(failure_stall_hours=0.0, rejoin_stall_hours=0.0, stall_pct=0.0,
                   failure_stall_min=training.failure_stall_min, rejoin_stall_min=training.rejoin_stall_min)
    if pool_est is not None:
        # the renewal-reward estimate W (mean U + R) / mean committed work on the pilot pool (no closed form)
        out["renewal_ttt_hours"] = pool_est["ttt_hours"]
        out["renewal_ttt_stderr_hours"] = pool_est["ttt_stderr_hours"]
        out["renewal_epochs"] = pool_est["epochs"]
    if ci["why"]:
        out["notes"] = [ci["why"]]
    return Report({**out, **cluster.failure_clock()})


def per_day(cluster: Cluster, restarts_mean: float, ttt_hours: float) -> dict:
    """``failures_per_day`` (the group failures of the clock per day: every group's rate, lemons' and per-group
    MTBFs included, and each domain event's groups) and ``interruptions_per_day`` (the runs' global restarts
    per day of their wall time), as whole training runs report them, for an answer from epochs."""
    scen, model, n = cluster.scenario, cluster.model, cluster.groups
    rate = float(scen.rate_multipliers(n, model.group_mtbf_min).sum()) / model.group_mtbf_min
    rate += sum(n / level.mtbf_min for level in scen.domains)
    days = ttt_hours / 24.0
    return {"failures_per_day": 1440.0 * rate,
            "interruptions_per_day": restarts_mean / days if days > 0 and math.isfinite(days) else None}


def check_elastic(cluster: Cluster) -> None:
    """Elastic training needs a repair time: a failed group that never rejoins makes it a slow ``none``."""
    if cluster.repair is None or cluster.repair.repair_time_min is None:
        raise ValueError("`scheme` elastic needs `repair_time_min` (the time to replace and restart one replica): "
                         "without it a failed group never rejoins and the run is a slower checkpointing alone")


def ttt_method(cluster: Cluster, policy: Policy, optimum: bool = False, training: Training | None = None) -> str:
    """How a time-to-train of ``policy`` on ``cluster`` (with the costs of ``training``, where given) is
    computed, one of ``METHODS``: the router's choice (``ttt.router.choose``), the one place that decides it
    for ``ttt``, ``optimize``, ``plan`` and the joint search (each result says it in ``method``).

    * ``whole_runs``: the whole-run kernel (repair or a spare pool, elastic, Weibull clocks that no epoch
      pool follows, a stall per failure or rejoin for any scheme but checkpointing alone). Bounded by
      construction: a run ends when its work W is committed.
    * ``epoch_pool``: epochs sampled by the kernels, without repair: under a scenario with no closed form
      (domains, ring orders, lemons) or with the proactive restart; and ``ttt``'s own runs, assembled from
      sampled epochs (``optimum=False``).
    * ``closed_form``: the optimum from the interval-by-interval form (``exact.closed_form_answers``), exact for
      ``rep`` and ``none``.
    * ``closed_form_approx``: the same form for ``spare`` (approximate: within 0.1% of whole runs where
      measured), or the renewal-reward form where the interval form does not apply (Weibull clocks with
      renewed ages; ``spare`` beyond the size the interval form is computed at).

    Checkpointing alone with repair but no finite spare pool is answered as without repair: every failure is
    a global restart that replaces the group, so a repair never completes."""
    from .router import method

    return method(cluster, policy, optimum, training)


def _optimize_weibull(cluster: Cluster, training: Training, space: Space) -> Report:
    """Weibull clocks with kept ages, or under a scenario with no closed form, or a stall per failure or rejoin:
    r and tau screened on whole training runs. Without a scenario kernel the renewed model's closed-form r* per scheme centres the
    window (r* - 2 .. r* + 2); otherwise r = 2 .. 8."""
    from .closed_form import optimize_r_tau
    from .router import closed_form_guides
    from .runs import screen_whole_runs

    ms, ds = list(space.microbatches) or [1], list(space.restart_depths or [None])
    if len(ms) > 1 or len(ds) > 1:
        raise ValueError("with Weibull clocks (kept ages, or under domains, lemons or a ring order) or a stall "
                         "(`failure_stall_min`, `rejoin_stall_min`) without repair, give one "
                         "`microbatches` and one `restart_depth` (optimize screens r and tau on whole training "
                         "runs for one of each; run it once per value to compare)")
    n, scenario = cluster.groups, cluster.scenario
    scen = dataclasses.replace(scenario, microbatches=max(ms[0], scenario.microbatches))
    grid = None
    if closed_form_guides(cluster):  # (one micro-batch: the renewed model's r* of whole shards centres the window)
        renewed = optimize_r_tau(dataclasses.replace(cluster, scenario=dataclasses.replace(scenario, microbatches=1)),
                                 training, dataclasses.replace(space, ages="renewed"))
        grid = {}
        for s, e in renewed["schemes"].items():
            lo, hi = max(1, int(e["r_star"]) - 2), min(space.r_max, int(e["r_star"]) + 2)
            ok = [r for r in range(lo, hi + 1) if (s != "rep" or n % r == 0) and r < n and (s == "none" or r > 1)]
            grid[s] = [1] if s == "none" else ok
    res = screen_whole_runs(dataclasses.replace(cluster, scenario=scen), training, space.r_max, ds[0], space.seed,
                            grid, space.ages)
    if not space.curves:
        res.pop("curves")
    return Report({**res, **cluster.failure_clock()})


SEARCH_FINAL_RUNS = 64  # optimize's chosen configuration (plan: --runs)


def _optimize_searched(cluster: Cluster, training: Training, space: Space, progress: bool) -> Report:
    """With repair and a micro-batch count, a restart depth, Weibull clocks or a spare pool, or without repair
    where only whole runs follow a run (Weibull clocks with kept ages, a stall) and no scenario kernel is
    needed: the joint search on whole training runs (``ttt.search``) over spare, rep and none x r x the m and
    D_max listed x tau. Without repair r goes from the renewed model's r* - 2 to r* + 2 (its closed form)."""
    from ..stages import Stages
    from .router import closed_form_guides
    from .runs import SCREEN_R_MAX, mean_uptime_min
    from .search import DEFAULT_RESTART_DEPTHS, Budget, SearchSpace, joint_search

    ms = sorted({max(int(m), 1) for m in space.microbatches} | ({cluster.scenario.microbatches} - {1})) or [1]
    ds = space.restart_depths
    rs = None
    if closed_form_guides(cluster):  # without repair r* can be larger: around the renewed model's r* (closed form)
        from .closed_form import optimize_r_tau

        plain = dataclasses.replace(cluster, scenario=dataclasses.replace(cluster.scenario, microbatches=1))
        renewed = optimize_r_tau(plain, training, dataclasses.replace(space, ages="renewed"), schemes=("spare", "rep"))
        stars = [int(e["r_star"]) for e in renewed["schemes"].values()]
        rs = tuple(range(max(2, min(stars) - 2), min(space.r_max, max(stars) + 2, cluster.groups - 1) + 1)) or (2,)
    search = SearchSpace(schemes=("spare", "rep", "none"), r_max=min(space.r_max, SCREEN_R_MAX), redundancies=rs,
                         microbatches=tuple(ms), restart_depths=() if ds is None else tuple(ds or DEFAULT_RESTART_DEPTHS),
                         repair_times=space.repair_times)
    scen = dataclasses.replace(cluster.scenario, microbatches=1)
    res = joint_search(dataclasses.replace(cluster, scenario=scen), training, search,
                       Budget(final_runs=SEARCH_FINAL_RUNS), space.seed, space.ages, Stages("optimize", 5, progress))
    schemes = {}
    for s, rep in res["schemes"].items():
        t = rep["mc_ttt_hours"]
        schemes[s] = {"r_star": int(rep["redundancy"]), "microbatches": int(rep["microbatches"]),
                      "restart_depth": rep["restart_depth"], "ckpt_interval_min": rep["ckpt_interval_min"],
                      "ttt_hours": t, "ttt_stderr_hours": rep["mc_ttt_stderr_hours"], "runs": rep["runs"],
                      "availability_pct": rep["availability_pct"],
                      "mean_uptime_min": mean_uptime_min(rep),
                      "ttt_over_w": t / training.work_hours, "method": "whole_runs"}
        if space.repair_times:
            schemes[s]["repair_time_min"] = rep["repair_time_min"]
    gpus = int(cluster.gpus) if float(cluster.gpus).is_integer() else cluster.gpus  # a count: an integer
    out = {"schemes": schemes, "chosen": res["chosen"], "groups": cluster.groups, "gpus": gpus,
           "restart_min": training.restart_for(cluster.gpus), "ckpt_cost_min": training.ckpt_cost_min,
           "work_hours": training.work_hours, **({} if cluster.repair is None else cluster.repair.describe()),
           "distribution": cluster.model.distribution,
           "ages": space.ages, "method": "whole_runs",
           "method_detail": "whole training runs: joint search over r, m, D_max and tau (successive halving, "
                            "common random numbers)", "search": res["search"]}
    if space.curves:
        out["curves"] = res["curves"]
    return Report({**out, **cluster.failure_clock()})


def _runs_at_approximate_optima(cluster: Cluster, training: Training, res: dict, methods: dict, space: Space,
                                progress: bool) -> None:
    """Where an approximate form chose r* and tau* (``closed_form_approx``: spare's (failures, depth) chain,
    the renewal-reward form), it only ranks them: ``SEARCH_FINAL_RUNS`` training runs at that optimum
    (``time_to_train``, seed ``space.seed``) give its expected TTT, its standard error and availability, and
    the form's figure stays beside them as ``theory_ttt_hours`` with ``theory_method``. ``methods`` (per
    scheme) becomes the runs' method. Where the runs are refused (too many epochs to sample), the form
    answers, labelled approximate, and a note says why."""
    notes, ran = [], []
    for s, e in res["schemes"].items():
        policy = Policy(scheme=s, redundancy=int(e["r_star"]), ages=space.ages)
        methods[s] = ttt_method(cluster, policy, optimum=True, training=training)
        if methods[s] != "closed_form_approx":
            continue
        try:
            mc = time_to_train(cluster, dataclasses.replace(training, ckpt_interval_min=e["ckpt_interval_min"]),
                               policy, Sampling(SEARCH_FINAL_RUNS, space.seed, progress=progress))
        except ValueError as exc:
            notes.append(f"{s}: its approximate form answers (no training runs at r* = {e['r_star']}: {exc})")
            continue
        t = mc["mc_ttt_hours"]
        e.update(theory_ttt_hours=e["ttt_hours"], theory_method="closed_form_approx", ttt_hours=t,
                 ttt_stderr_hours=mc["mc_ttt_stderr_hours"], runs=mc["runs"],
                 availability_pct=mc["availability_pct"], ttt_over_w=t / training.work_hours,
                 goodput=mc["goodput"])
        methods[s] = mc["method"]
        ran.append(s)
    if ran:
        res["method"] = (f"{res.get('method', 'closed form')}; then {SEARCH_FINAL_RUNS} training runs at r*, tau* "
                         f"where the form is approximate ({', '.join(ran)}): the runs answer")
    if "spare" in res["schemes"] and "rep" in res["schemes"]:
        res["ttt_reduction_vs_rep"] = 1.0 - res["schemes"]["spare"]["ttt_hours"] / res["schemes"]["rep"]["ttt_hours"]
    if notes:
        res["notes"] = list(res.get("notes") or []) + notes


def _label(res: dict, methods: dict) -> None:
    """``res["method"]`` (one of ``METHODS``, the router's one rule: ``ttt.router.merge``) and each
    scheme's, with the sentence the computation left in ``method`` moved to ``method_detail``."""
    from .router import merge

    detail = res.pop("method", None)
    res["method"] = merge(methods.values())
    res["method_detail"] = detail if detail is not None else "closed form"
    for s, entry in res.get("schemes", {}).items():
        if isinstance(entry, dict) and s in methods:
            entry["method"] = methods[s]


def _check_ttt_feasible(cluster, cfg, runs, r, tau, epochs, prof, th) -> None:
    """Refuse, before sampling, runs that would need more than ``TTT_EPOCHS_MAX`` epochs or more than
    ``TTT_CELLS_MAX`` epochs x N x r of sampling on ``cluster``: the closed form ``th`` on the profile ``prof``
    (for Weibull with kept ages: the renewed model's, an estimate) gives the restarts per run; ``epochs`` is the
    pool the MC would sample."""
    from ..model.bounds import TTT_CELLS_MAX, TTT_EPOCHS_MAX

    groups, gpus = cluster.groups, cluster.gpus
    need = runs * (th["expected_restarts"] + 1.0)
    width = groups * max(r, 2)
    if math.isfinite(need) and need <= TTT_EPOCHS_MAX and max(need, epochs) * width > TTT_CELLS_MAX:
        most = int(TTT_CELLS_MAX / (width * max(need / runs, epochs / runs)))
        raise ValueError(f"ttt: {runs} run(s) would sample about {max(need, epochs):.3g} epochs of "
                         f"N x r = {width} failure times, over the limit of {TTT_CELLS_MAX:.3g}; at most about "
                         f"{most:,} runs here: lower `Sampling.count`")
    if not (math.isfinite(need) and need <= TTT_EPOCHS_MAX):
        ttt_h = th["ttt_hours"]
        why = (f"the closed form gives TTT = {ttt_h:.3g} h per run" if math.isfinite(ttt_h) else
               "no checkpoint completes in a typical epoch (the closed form gives TTT = inf)")
        raise ValueError(f"ttt: {runs} run(s) would need about {need:.3g} epochs (limit {TTT_EPOCHS_MAX:,}): "
                         f"{why} with `ckpt_interval_min` {tau:g}, `ckpt_cost_min` {cfg.ckpt_cost_min:g}, `restart_min` "
                         f"{cfg.restart_for(gpus):g}, `work_hours` {cfg.work_hours:g}, mean epoch uptime "
                         f"{prof.mean_uptime_min:.3g} min; lower `Sampling.count` or `work_hours` or change the others")


def optimize(cluster: Cluster, training: Training, space: Space = Space(), progress: bool = False) -> Report:
    """The best redundancy r* and checkpoint interval tau* per scheme on ``cluster``: the closed form where it
    exists, epoch pools under a scenario without one or with repair, and the scheduling policies when
    ``space`` lists several micro-batch counts or restart depths; ``notes`` say where an answer sits at the
    edge of its search (tau* at the floor, r* at ``space.r_max``, m* at the largest count listed). A ``Report``
    whose ``to_json()`` is what ``spare-jax optimize --json`` prints."""
    from .edges import edge_notes

    out = _optimize(cluster, training, space, progress)
    return _with_notes(out, edge_notes(out, cluster.groups, space.r_max, space.microbatches))


def _optimize(cluster: Cluster, training: Training, space: Space, progress: bool) -> Report:
    """The router's optimum: each scheme's method, and the most general of them finds it (whole runs: the
    joint search or the screen; else ``_optimize_forms``)."""
    from .router import optimum

    return optimum(cluster, training, space, progress)


def _optimize_forms(cluster: Cluster, training: Training, space: Space, progress: bool, methods: dict) -> Report:
    """The optimum where no scheme needs whole runs: the scheduling policies on epoch pools when ``space``
    lists several micro-batch counts or restart depths, else ``optimize_r_tau`` (closed forms, or pools under a
    scenario with no closed form) and training runs where its form is approximate. ``methods``: each scheme's
    method (the router's), updated where the runs answer."""
    from .closed_form import optimize_r_tau

    scenario = cluster.scenario
    methods = dict(methods)
    ms = list(space.microbatches) or [1]
    if len(ms) > 1 or space.restart_depths is not None:
        from .policy import optimize_policy

        res = optimize_policy(cluster, training, space, progress)
        if not space.curves:
            res["policy"].pop("restart_curves", None)
        spare = res["schemes"].get("spare", {})  # the proactive restart found on its epoch pools
        methods["spare"] = ttt_method(cluster, Policy("spare", 2, spare.get("restart_depth"), space.ages), optimum=True,
                                      training=training)
    else:
        res = dict(optimize_r_tau(cluster, training, space, progress=progress))
        _runs_at_approximate_optima(cluster, training, res, methods, space, progress)
    _label(res, {s: methods[s] for s in res.get("schemes", methods)})
    if not scenario.is_default:
        res.setdefault("scenario", scenario.describe())
    if not space.curves:
        res.pop("curves")
    return Report({**res, **cluster.failure_clock()})


def _closed_form_answer(cluster: Cluster, training: Training, policy: Policy, sampling=None) -> Report:
    """The interval-by-interval form's expected time-to-train (``router.CLOSED_FORM``)."""
    from .exact import closed_form_ttt

    return closed_form_ttt(cluster, training, policy.scheme, policy.redundancy)


def _approx_answer(cluster: Cluster, training: Training, policy: Policy, sampling=None) -> Report:
    """``router.CLOSED_FORM_APPROX``: the interval form where it applies (``spare``'s chain), else the
    renewal-reward form on the epoch profile."""
    from ..model.placement import check_groups_redundancy
    from .closed_form import best_tau_grid, epoch_profile, ttt_theory
    from .exact import closed_form_ttt
    from .router import Problem, interval_form

    if interval_form(Problem(cluster, policy, training)) is not None:
        return closed_form_ttt(cluster, training, policy.scheme, policy.redundancy)
    _, r = scheme_placement(policy.scheme, cluster.groups, policy.redundancy)
    check_groups_redundancy(cluster.groups, r)
    model, scenario = cluster.model, cluster.scenario
    prof = epoch_profile(policy.scheme, cluster.groups, r, model, ages=policy.ages,
                         job_rate=scenario.job_rate_per_min(cluster.groups, model.group_mtbf_min),
                         microbatches=scenario.microbatches)
    tau = training.ckpt_interval_min
    if tau is None:
        tau = best_tau_grid(prof, training, cluster.gpus)[0]
    return Report({**ttt_theory(prof, tau, training, cluster.gpus), "method": "closed_form_approx"})


def _whole_runs_answer(cluster: Cluster, training: Training, policy: Policy, sampling: Sampling) -> Report:
    from .runs import whole_run_ttt

    return whole_run_ttt(cluster, training, policy, sampling)


def _register() -> None:
    """The functions that compute each of the router's methods (``ttt.router.implement``)."""
    from . import router

    router.implement("closed_form", answer=_closed_form_answer, optimum=_optimize_forms)
    router.implement("closed_form_approx", answer=_approx_answer, optimum=_optimize_forms)
    router.implement("epoch_pool", answer=_epoch_pool_ttt, optimum=_optimize_forms)
    router.implement("whole_runs", answer=_whole_runs_answer, optimum=_optimize_searched, screen=_optimize_weibull)


_register()

__all__ = ["AGES", "METHODS", "Policy", "Space", "closed_form_answers", "optimize", "time_to_train", "ttt_method"]
