r"""Planning a real run (docs/planning.md#planning-your-own-cluster-spare-jax-plan): a cluster stated in GPUs and
hours -> per scheme r*, tau*, the time-to-train with its spread, availability, failures endured, GPU-hours, cost, and
the sensitivity of the choice to the uncertain inputs.

From GPUs and hours to the model. ``N = gpus / gpus_per_group`` data-parallel groups (refused unless
whole). The failure rate comes from one of:

* ``gpu_mtbf_hours``: the per-GPU MTBF of failures that take down one group (hardware: a GPU, its host);
  a group of G GPUs then fails at rate ``G / gpu_mtbf`` (exponential, docs/model.md#failures-wipe-out-depth-overhead);
* ``node_mtbf_hours`` with ``gpus_per_node``: a group is ``G / gpus_per_node`` whole nodes (refused
  otherwise), so the group MTBF is ``node_mtbf / nodes_per_group``;
* ``fit``: a fitted failure log (``spare_jax.planner.fit``); its per-node MTBF goes the node way. ``fit_law``
  says which: ``exponential`` (failures / node-hours over the window, the default) or ``weibull`` (the
  renewal mean ``scale * Gamma(1 + 1/shape)``: the long-run rate of a node in service; with shape < 1 a
  short window of new nodes sees more failures than that). Either way the planner's model is exponential
  with that MTBF (the time-to-train closed form and the scenario kernels are exponential); the Weibull
  fit's shape and its test against 1 are reported so that a planner sees when that is doubtful.

Job-wide interruptions, failure domains, ring orders and lemons come from the ``Scenario``
(docs/scenarios.md#real-clusters-scenarios). Per scheme the optimiser is the library's (``ttt.optimize``: the closed
form, or ``ttt.pool.optimize_pool`` under a scenario with no closed form); the spread is the time-to-train Monte Carlo
(``ttt.simulate_ttt_runs``) of ``runs`` whole training runs at (r*, tau*), seeded. Failures endured is the i.i.d.
theory's ``E[T] - 1`` at r*: the group failures the layout absorbs, on average, before the failure that wipes it out
(i.i.d. group failures; domain events, which fail several groups at once, and job-wide interruptions, which no
redundancy masks, are not counted). GPU-hours = TTT x gpus (every GPU is held for the whole run, restarts included);
cost = GPU-hours x ``gpu_hour_price`` (default 2.0 per GPU-hour, a placeholder: give yours).

Sensitivity: the optimiser re-run with one uncertain input scaled (the failure MTBFs x2 and /2 -- every
failure clock together: group, domain, job-wide given as an MTBF, per-group MTBFs; the restart cost and
the checkpoint cost x2 and /2; the job-wide interruption rate x2 and /2 when the scenario has one), each
reporting r*, tau* and the expected TTT per scheme, and the TTT of keeping the base r* (tau re-optimised;
the cost of having planned with the wrong input).
"""

from __future__ import annotations

import dataclasses
import math
import typing

import numpy as np

from ..model.bounds import TTT_EPOCHS_MAX
from ..results import Result
from .fleet import (ALL_SCHEMES, DEFAULT_GPU_MTBF_HOURS, DEFAULT_GPUS, DEFAULT_GPUS_PER_GROUP,  # noqa: F401
                    DEFAULT_GPUS_PER_NODE, DEFAULT_PRICE, DEFAULT_R_MAX, DEFAULT_R_MAX_POOL, DEFAULT_RUNS, FIT_LAWS,
                    PLAN_POOL_EPOCHS, SCHEMES, Costs, Fleet, PlanOptions, Resolved, check_fitted_mtbf, cluster_groups,
                    preset_law_note, check_schemes as _check_schemes, failure_model as _model,
                    per_gpu_mtbf_hours as _per_gpu_mtbf_hours,
                    plan_cluster as _cluster, resolve as _resolve)
from .sensitivity import (SENSITIVITY, has_job as _has_job, scaled_scenario as _scaled_scenario,  # noqa: F401
                          sensitivity as _sensitivity, time_scaled as _time_scaled)
from .verdict import HANDFUL, bound, limit, verdict
from .assumed import assumptions, batch_assumed as _batch, check_number as _check, trade_lines
from .table import (cost_head, describe_scenario, format_table, model_text,  # noqa: F401
                    price_text, ttt_text)
from .searched_rows import (failures_endured, quantile_fields, run_fields, run_hours_each,  # noqa: F401
                            searched_rows)

PLAN_CELLS_MAX = 5e8  # Monte Carlo sampling per scheme: epochs x N x max(r, 2) failure times (~10 s on 2 cores)


@dataclasses.dataclass
class PlanResult(Result):
    """What ``plan`` found. ``to_json()`` gives the ``spare-jax plan --json`` object."""

    inputs: dict
    schemes: dict  # scheme -> {r_star, ckpt_interval_min, ttt_hours, mc_ttt_p05_hours, ...}
    sensitivity: list  # [{input, factor, label, schemes: {scheme: {r_star, ckpt_interval_min, ttt_hours, ...}}}]
    fit: dict | None
    curves: dict  # scheme -> [{redundancy, ckpt_interval_min, ttt_hours}] (expected TTT vs r, tau optimised per r)
    runs_hours: dict  # scheme -> float64[runs]: each Monte Carlo run's time-to-train
    notes: list
    sources: list = dataclasses.field(default_factory=list)  # [{parameter, value, source}]
    preset: dict | None = None  # the preset's description, sources and assumptions, when one was used
    verdict: dict | None = None  # ``planner.verdict.verdict``: what to run, by how much, with uncertainty
    bound: dict | None = None  # the TTT of a run whose group failures cost nothing (``planner.verdict.bound``)
    limit: dict | None = None  # the TTT of the ideal scheme at alive/N (``planner.verdict.limit``)
    spares: dict | None = None  # ``plan --spares auto``: the pool chosen (``planner.spares.spares_block``)

    def to_json(self) -> dict:
        """What ``spare-jax plan --json`` prints (the name every command's result shares)."""
        out = {} if self.verdict is None else {"verdict": self.verdict, "bound": self.bound, "limit": self.limit}
        out.update({"inputs": self.inputs, "schemes": self.schemes, "sensitivity": self.sensitivity})
        if self.fit is not None:
            out["fit"] = self.fit
        if self.spares is not None:
            out["spare_pool"] = self.spares
        out["notes"] = self.notes
        return out


def searches_jointly(repair) -> bool:
    """The router's answer (``ttt.router.searches_jointly``), imported when asked: the command line's help
    loads this module and must not load JAX."""
    from ..ttt.router import searches_jointly as ask

    return ask(repair)


def _optimize(n, r_max, model, cfg, scenario, epochs, seed, progress):
    from .. import ttt

    return ttt.optimize_r_tau(_cluster(n, model, scenario), cfg, ttt.Space(r_max, epochs=epochs, seed=seed),
                              progress=progress)


def _methods(chosen, n, model, scenario, repair, cfg=None) -> dict:
    """Each scheme's method (``ttt.answer.ttt_method``) for the optimum on this cluster."""
    from ..model.cluster import Cluster
    from ..model.scenario import Scenario
    from ..ttt.answer import ttt_method
    from ..ttt.config import Policy

    cluster = Cluster(n, model, Scenario() if scenario is None else scenario, repair)
    return {s: ttt_method(cluster, Policy(scheme=s, redundancy=2), optimum=True, training=cfg) for s in chosen}


def _whole_set(chosen, n, model, scenario, repair, cfg, restart_depth) -> set:
    """The schemes whose runs at the optimum are whole runs (``ttt.router.plan_whole_runs``)."""
    from ..model.cluster import Cluster
    from ..model.scenario import Scenario
    from ..ttt.router import plan_whole_runs

    return plan_whole_runs(Cluster(n, model, Scenario() if scenario is None else scenario, repair), cfg, chosen,
                           restart_depth)


def _method_at(scheme, r, n, model, scenario) -> str:
    """The method of the optimum at its r* (``ttt.answer.ttt_method``): spare at r* = 1 is exact."""
    from ..ttt.answer import ttt_method
    from ..ttt.config import Policy

    return ttt_method(_cluster(n, model, scenario), Policy(scheme=scheme, redundancy=r), optimum=True)


def _overall(methods: dict) -> str:
    """The plan's ``method``: the router's one rule (``ttt.router.merge``) over its schemes' methods."""
    from ..ttt.router import merge

    return merge(methods.values())


def _whole_runs(scheme, cluster, entry, cfg, restart_depth, sampling):
    """Whole training runs at (r*, tau*) with every lever on (``cluster``: the plan's, its repair included;
    ``sampling``: the runs, seed and progress bar): ``(hours, fields)``, each run's TTT and the fields of the
    scheme's row from the runs (mean TTT and its standard error, quantiles of the runs listed, slowdown)."""
    from ..ttt import Policy
    from ..ttt.runs import whole_run_ttt

    if scheme != "spare":
        cluster = dataclasses.replace(cluster, scenario=dataclasses.replace(cluster.scenario, microbatches=1))
    training = dataclasses.replace(cfg, ckpt_interval_min=float(entry["ckpt_interval_min"]))
    policy = Policy(scheme, int(entry["r_star"]), restart_depth if scheme == "spare" else None, "kept")
    rep = whole_run_ttt(cluster, training, policy, sampling).to_json()
    hours = run_hours_each(cluster, training, rep, sampling.count, sampling.seed, sampling.progress)
    return hours, run_fields(rep, hours)


def _monte_carlo(scheme, cluster, entry, cfg, gpus, sampling, notes):
    """Training runs at (r*, tau*) on ``cluster`` (the plan's, without repair; ``sampling``: the runs asked,
    seed and progress bar): the per-run TTT in hours (fewer runs when the sampling would be too large; None
    when even 2 runs would be)."""
    from .. import ttt
    from ..model.cluster import Sampling

    n, runs = cluster.groups, sampling.count
    r, tau = entry["r_star"], entry["ckpt_interval_min"]
    restarts = entry["ttt_hours"] * 60.0 / (entry["mean_uptime_min"] + cfg.restart_min)
    if not math.isfinite(restarts):
        notes.append(f"{scheme}: no Monte Carlo (the expected TTT is infinite)")
        return None
    per_run = (restarts + 1.0) * 1.3
    width = n * max(r, 2)
    fit = int(min(runs, TTT_EPOCHS_MAX / per_run, PLAN_CELLS_MAX / (width * per_run)))
    if fit < 2:
        notes.append(f"{scheme}: no Monte Carlo spread (one run needs about {per_run:,.0f} epochs of {width:,} "
                     "failure times, beyond the sampling limit)")
        return None
    if fit < runs:
        notes.append(f"{scheme}: {fit} Monte Carlo runs instead of {runs} (each needs about {per_run:,.0f} epochs; "
                     "sampling limit)" + ("; its 5-95% range is only indicative" if fit < 20 else ""))
    # the availability E[U] / (E[U] + R) as the optimiser computed it (its output carries the percentage)
    availability = entry["mean_uptime_min"] / (entry["mean_uptime_min"] + cfg.restart_for(gpus))
    rate_guess = 1.0 / entry["ttt_over_w"] / availability
    mc, _ = ttt.simulate_ttt_runs(cluster, cfg, ttt.Policy(scheme, r),
                                  Sampling(fit, sampling.seed, progress=sampling.progress), tau,
                                  entry["mean_uptime_min"], rate_guess)
    return np.asarray(mc["run_ttt_hours"], np.float64)


def policy_search(microbatches, restart_depths, repair, repair_times=None):
    """``(search, m, D_max)`` from the micro-batch counts, restart depths and repair times asked (None: not
    given; ``()`` for the depths: the default grid): with repair a ``ttt.search.SearchSpace`` of them
    (defaults: m in 1, 2, 4, 8; D_max never, 1.5, 2, 3; the repair's time) and no single value; without
    repair one value of each, a list refused."""
    from ..ttt.search import DEFAULT_RESTART_DEPTHS, SearchSpace

    if searches_jointly(repair):  # microbatches None: the default grid (a grid given is said at its edge)
        return SearchSpace(microbatches=tuple(microbatches) if microbatches else None,
                           restart_depths=tuple(restart_depths or DEFAULT_RESTART_DEPTHS),
                           repair_times=repair_times), None, None
    if len(microbatches or [1]) > 1 or (restart_depths is not None and len(restart_depths) != 1):
        raise ValueError("a list of `microbatches` or `restart_depth` values (or auto) is searched on whole training "
                         "runs, with `repair_time_min`; without repair give one value of each")
    return None, (microbatches or [None])[0], None if restart_depths is None else restart_depths[0]


class SchemeRow(typing.NamedTuple):
    """One scheme's row from its optimum (r*, tau*, the expected TTT) and its Monte Carlo runs at them:
    ``as_dict()`` is its entry in ``plan --json``'s ``schemes``, in this order."""

    r_star: int
    ckpt_interval_min: float
    ttt_hours: float
    mc_ttt_p05_hours: float | None
    mc_ttt_p95_hours: float | None
    p_over_deadline: float | None
    availability_pct: float
    failures_endured: float | None
    gpu_hours: float
    cost: float
    mc_runs: int
    mc_ttt_hours: float | None
    mc_ttt_stderr_hours: float | None
    mean_uptime_min: float
    ttt_over_w: float
    method: str

    @classmethod
    def of(cls, scheme: str, e: dict, hours, inp: Resolved, method: str) -> "SchemeRow":
        """The row of ``scheme``'s optimum ``e`` and its runs' TTTs ``hours`` (None: no runs)."""
        q = (None, None) if hours is None else tuple(float(x) for x in np.quantile(hours, [0.05, 0.95]))
        deadline, ttt_h = inp.deadline_hours, float(e["ttt_hours"])
        return cls(int(e["r_star"]), float(e["ckpt_interval_min"]), ttt_h, q[0], q[1],
                   None if hours is None or deadline is None else float(np.mean(hours > deadline)),
                   float(e["availability_pct"]), failures_endured(scheme, inp.n, int(e["r_star"])),
                   ttt_h * inp.gpus, ttt_h * inp.gpus * inp.price, 0 if hours is None else int(hours.size),
                   None if hours is None else float(hours.mean()),
                   None if hours is None or hours.size < 2 else float(hours.std(ddof=1) / math.sqrt(hours.size)),
                   float(e["mean_uptime_min"]), float(e["ttt_over_w"]), method)

    def as_dict(self) -> dict:
        return dict(zip(self._fields, self))


def plan(fleet: Fleet = Fleet(), costs: Costs = Costs(), options: PlanOptions = PlanOptions(),
         progress: bool = False) -> PlanResult:
    """Plan a run (module docstring): ``fleet`` the cluster, ``costs`` the training, ``options`` the search.
    Bad input: ValueError naming the parameter. The fields:

    ``gpus``, ``gpus_per_group``: whole numbers, ``gpus_per_group`` dividing ``gpus``. One of
    ``gpu_mtbf_hours`` (default ``DEFAULT_GPU_MTBF_HOURS``), ``node_mtbf_hours`` (with ``gpus_per_node``,
    default 8) or ``fit`` (a ``fit.FitResult``; ``fit_law`` picks its MTBF). ``scenario``: a
    ``scenario.Scenario`` (None: the paper's model). Costs in minutes, work and deadline in hours. ``runs``
    Monte Carlo training runs per scheme (seeded by ``seed``), ``r_max`` the largest r searched (default
    ``DEFAULT_R_MAX``, or ``DEFAULT_R_MAX_POOL`` under a scenario with no closed form), ``epochs``
    the pool per (scheme, r) under a scenario with no closed form (default ``PLAN_POOL_EPOCHS``).
    ``repair`` (a ``model.repair.Repair``): each scheme's configuration (r, m, D_max, tau; the repair time
    where ``search`` lists several) from the joint search on whole training runs (``ttt.search``; ``search``
    a ``ttt.search.SearchSpace``, default: m in 1, 2, 4, 8 unless the scenario fixes one, D_max never or
    1.5, 2, 3, or ``restart_depth`` where given), the chosen configuration with ``runs`` runs; checkpointing
    alone keeps its exact closed form unless a finite spare pool makes its restarts wait. Without repair,
    ``restart_depth`` (D_max, spare only) makes each scheme's Monte Carlo at (r*, tau*) whole training runs.
    ``schemes``: which strategies to compare (default ``spare``, ``rep``, ``none``, and ``elastic`` where
    ``repair`` has a repair time; ``elastic``'s data policy is rebalance).
    """
    from ..stages import Stages

    inp = _resolve(fleet, costs, options)
    chosen, n, model, cfg, restart_depth = inp.chosen, inp.n, inp.model, inp.cfg, options.restart_depth
    scenario, repair = fleet.scenario, fleet.repair
    # whole training runs where repair, a spare pool or the proactive restart changes the run; checkpointing
    # alone ignores repair and D_max (every failure is a global restart that replaces the group), so its
    # exact closed form answers unless a finite spare pool makes the restart wait
    # (with repair: ``ttt.answer.ttt_method`` decides, as for ttt and optimize; without repair, D_max is
    # answered by whole runs at the optimiser's r* and tau* for every scheme but checkpointing alone)
    # (a stall per failure or rejoin: whole runs for every scheme but checkpointing alone, which has none; without
    # repair at the optimiser's r* and tau*)
    methods = _methods(chosen, n, model, scenario, repair, cfg)
    whole_set = _whole_set(chosen, n, model, scenario, repair, cfg, restart_depth)
    joint = searches_jointly(repair)  # the router: the joint search on whole runs, or the optimiser per scheme
    rest = [x for x in chosen if not joint or x not in whole_set]
    searching = joint and len(rest) < len(chosen)
    from ..ttt.search import SearchSpace as _Space

    batch = _batch(options.global_batch_seqs, options.max_microbatches, n, repair,
                   (options.search or _Space()) if joint else None,
                   1 if scenario is None else scenario.microbatches)
    n_sens = sum(1 for what, _, _ in SENSITIVITY if what != "job_rate" or _has_job(scenario)) if inp.sensitivity else 0
    stages = Stages("plan", (6 * searching + 2 * len(rest) if joint else 1 + len(rest)) + n_sens + 1,
                    progress)
    # each scheme's optimum, then its runs (the spread), the spare pool and the sensitivity
    base, searched = _optima(inp, whole_set, rest, batch, stages, progress)
    schemes, runs_hours, ranked = _scheme_rows(inp, base, searched, (methods, whole_set), stages, progress)
    spares = _spare_pool(inp, schemes, stages)
    sens = _sensitivity_rows(inp, base, schemes, stages, progress)
    # the report's inputs; the limit, each row's spread against it, and the verdict
    inputs = _report_inputs(inp, schemes, (base, searched, whole_set, ranked), batch)
    preset = _preset_block(options.preset)
    _merge_r_one(schemes, runs_hours, inp.notes)
    lim = _the_limit(inp, stages, progress)
    sources = _spread(schemes, runs_hours, lim, inp.deadline_hours)
    inp.notes.extend(_edge_notes(schemes, inputs, n, options.search, batch))
    best_possible = _bound(inp)
    context = {"assumes": assumptions(cfg, repair, scenario), "batch": batch["text"],
               "trade": trade_lines(n, model, repair, lim), "work_hours": cfg.work_hours}
    return PlanResult(inputs, schemes, sens, None if fleet.fit is None else {**fleet.fit.to_json(), **inp.seen},
                      {k: v for k, v in base["curves"].items() if k in schemes}, runs_hours, inp.notes, preset=preset,
                      verdict=verdict(schemes, best_possible, lim, sources, context), bound=best_possible, limit=lim,
                      spares=spares)


def _optima(inp: Resolved, whole_set: set, rest: list, batch: dict, stages, progress) -> tuple:
    """``(base, searched)``: each scheme's optimum. With repair, the joint search on whole training runs for the
    schemes whole runs answer (``searched_rows``; ``searched`` their rows) and checkpointing alone's exact
    closed form; without, the optimiser (``_optimize``) for every scheme (``searched`` None)."""
    n, model, scenario, repair = inp.n, inp.model, inp.fleet.scenario, inp.fleet.repair
    search, restart_depth = inp.options.search, inp.options.restart_depth
    if not searches_jointly(repair):
        stages.stage(f"optimise r and tau per scheme (N = {n:,}, r = 1..{inp.r_max})")
        return _optimize(n, inp.r_max, model, inp.cfg, scenario, inp.epochs, inp.seed, progress), None
    from ..model.cluster import Cluster
    from ..model.scenario import Scenario
    from ..ttt.search import SearchSpace

    scen = Scenario() if scenario is None else scenario
    space = search or SearchSpace()
    if batch["microbatches"] is not None:
        space = dataclasses.replace(space, microbatches=batch["microbatches"])
    if search is None and scen.microbatches > 1:
        space = dataclasses.replace(space, microbatches=(scen.microbatches,))
    if search is None and restart_depth is not None:
        space = dataclasses.replace(space, restart_depths=(restart_depth,))
    wanted = [x for x in inp.chosen if x in whole_set]
    searched = (searched_rows(Cluster(n, model, dataclasses.replace(scen, microbatches=1), repair), inp.cfg, wanted,
                              space, inp.runs, inp.seed, inp.price, stages)
                if wanted else {"schemes": {}, "curves": {}, "search": None})
    base = {"schemes": {}, "curves": dict(searched["curves"]),
            "method": "whole training runs: joint search over r, m, D_max and tau (successive halving)"
            if wanted else "closed form"}
    if "none" in rest:
        from .. import ttt

        stages.stage(f"checkpointing alone: exact closed form, tau by even splits of W (N = {n:,})")
        alone = ttt.optimize_r_tau(inp.cluster, inp.cfg, inp.space, ("none",), progress)
        base["schemes"]["none"], base["curves"]["none"] = alone["schemes"]["none"], alone["curves"]["none"]
    return base, searched


def _scheme_rows(inp: Resolved, base: dict, searched, how: tuple, stages, progress) -> tuple:
    """``(schemes, runs_hours, ranked)``: each scheme's row (the searched rows as they are; the others a
    ``SchemeRow`` of the optimum and its Monte Carlo runs, whole runs where ``how`` = (methods, whole_set) says
    so), each scheme's runs, and the schemes whose approximate form chose r*, tau* (their runs answer)."""
    from ..model.cluster import Sampling

    (methods, whole_set), repair, runs = how, inp.fleet.repair, inp.runs
    plan_cluster, sampling = inp.cluster, Sampling(runs, inp.seed, progress=progress)
    schemes, runs_hours, extra, ranked = {}, {}, {}, []
    for i, s in enumerate(inp.chosen, 1):
        if searched is not None and s in searched["schemes"]:
            schemes[s] = {**searched["schemes"][s], "method": "whole_runs"}
            continue
        e = base["schemes"][s]
        whole = s in whole_set
        stages.stage(f"Monte Carlo {i}/{len(inp.chosen)}: {s} at r = {int(e['r_star'])} ({runs} runs"
                     + (", whole training runs)" if whole else ")"))
        if whole:
            hours, extra[s] = _whole_runs(s, dataclasses.replace(plan_cluster, repair=repair), e, inp.cfg,
                                          inp.options.restart_depth, sampling)
        else:
            hours = _monte_carlo(s, plan_cluster, e, inp.cfg, inp.gpus, sampling, inp.notes)
        runs_hours[s] = hours
        schemes[s] = SchemeRow.of(s, e, hours, inp, "whole_runs" if whole else methods[s]).as_dict()
        if "ttt_stderr_hours" in e:
            schemes[s]["ttt_stderr_hours"] = float(e["ttt_stderr_hours"])
        if hours is not None:  # each run listed; the quantiles are theirs
            schemes[s].update(quantile_fields(hours))
            schemes[s]["failures_survived_per_run"] = 0.0 if s == "none" else None
            if not whole and hours.size < HANDFUL:  # no quantiles of a handful of runs beside a closed form
                schemes[s].update(mc_ttt_p05_hours=None, mc_ttt_p50_hours=None, mc_ttt_p95_hours=None)
                inp.notes.append(f"{s}: no 5-95% range: {hours.size} Monte Carlo runs are too few beside its "
                                 "closed-form mean (their TTTs are listed)")
        if repair is not None:  # what the runs survived, not the no-repair theory's E[T] - 1
            schemes[s]["failures_endured"] = None
        if s not in extra and hours is not None and methods[s] in ("closed_form", "closed_form_approx"):
            schemes[s]["method"] = _method_at(s, int(e["r_star"]), inp.n, inp.model, inp.fleet.scenario)
            if schemes[s]["method"] == "closed_form_approx":  # an approximate form chose r*, tau*: runs answer
                extra[s] = {"method": "epoch_pool"}
                ranked.append(s)
        if s in extra:  # the whole runs (or the runs where the form is approximate) at (r*, tau*) are the answer
            schemes[s].update(extra[s])
            t = schemes[s]["mc_ttt_hours"]
            schemes[s].update(ttt_hours=t, ttt_over_w=t / inp.cfg.work_hours, gpu_hours=t * inp.gpus,
                              cost=t * inp.gpus * inp.price)
    return schemes, runs_hours, ranked


def _spare_pool(inp: Resolved, schemes: dict, stages):
    """``plan --spares auto``: the pool size K at each scheme's configuration (``planner.spares``; its rows
    gain their ``spares_*`` keys), or None."""
    if inp.options.spares_auto is None:
        return None
    from ..model.cluster import Cluster
    from ..model.scenario import Scenario
    from .spares import plan_spares

    scenario, per_node = inp.fleet.scenario, inp.fleet.gpus_per_node
    spares, more = plan_spares(Cluster(inp.n, inp.model, Scenario() if scenario is None else scenario,
                                       inp.fleet.repair), inp.cfg, schemes, inp.options.spares_auto, inp.price,
                               inp.seed, stages, DEFAULT_GPUS_PER_NODE if per_node is None else int(per_node))
    inp.notes.extend(more)
    return spares


def _sensitivity_rows(inp: Resolved, base: dict, schemes: dict, stages, progress) -> list:
    """The sensitivity table (``_sensitivity``) over the schemes compared, where it runs."""
    if not inp.sensitivity:
        return []
    sens = _sensitivity(inp.cluster, inp.cfg, inp.space, base, inp.gpus, inp.price, progress, stages)
    for row in sens:  # the optimiser's schemes among those compared
        row["schemes"] = {k: v for k, v in row["schemes"].items() if k in schemes}
    return sens


def _report_inputs(inp: Resolved, schemes: dict, found: tuple, batch: dict) -> dict:
    """The ``inputs`` object of ``plan --json``: every input as the plan used it, the method, the search spent
    (``found`` = (base, searched, whole_set, ranked)). The rows gain the proactive restart and micro-batches
    given (without a search)."""
    base, searched, whole_set, ranked = found
    fleet, cfg, n, model, chosen = inp.fleet, inp.cfg, inp.n, inp.model, inp.chosen
    scenario, repair, restart_depth = fleet.scenario, fleet.repair, inp.options.restart_depth
    inputs = {
        "gpus": inp.gpus, "gpus_per_group": fleet.gpus_per_group, "groups": n, "gpu_mtbf_hours": inp.per_gpu,
        "gpu_mtbf_from": inp.how, "group_mtbf_hours": model.group_mtbf_min / 60.0,
        "cluster_mtbf_min": model.cluster_mtbf_min(n),
        "restart_min": cfg.restart_min, "ckpt_cost_min": cfg.ckpt_cost_min, "work_hours": cfg.work_hours,
        "gpu_hour_price": inp.price, "deadline_hours": inp.deadline_hours, "runs": inp.runs, "seed": inp.seed,
        "r_max": inp.r_max, "method": _overall({s: schemes[s]["method"] for s in chosen if s in schemes}),
        "method_detail": base.get("method", "closed form") + (
            "; then whole training runs at each r* and tau* with the stall (no closed form or epoch pool models "
            "one)" if repair is None and cfg.stalls and whole_set else "") + (
            f"; {', '.join(ranked)}: the mean of the Monte Carlo runs at r*, tau* (the form that chose them is "
            "approximate)" if ranked else ""),
        "job_mtbf_min": base.get("job_mtbf_min"),
        "scenario": None if scenario is None or (scenario.is_default and scenario.microbatches == 1)
        else scenario.describe(),
    }
    if inp.epochs is not None and inp.pooled:
        inputs["pool_epochs"] = inp.epochs
    if cfg.stalls:
        inputs.update(failure_stall_min=cfg.failure_stall_min, rejoin_stall_min=cfg.rejoin_stall_min)
    if repair is not None:
        inputs.update(repair.describe())
    if restart_depth is not None:
        inputs["restart_depth"] = restart_depth
    if fleet.gpus_per_node is not None or fleet.node_mtbf_hours is not None or fleet.fit is not None:
        inputs["gpus_per_node"] = DEFAULT_GPUS_PER_NODE if fleet.gpus_per_node is None else int(fleet.gpus_per_node)
    if fleet.fit is not None:
        inputs["fit_law"] = fleet.fit_law
    if searched is not None and searched["search"] is not None:
        inputs["search"] = searched["search"]
    elif restart_depth is not None and "spare" in schemes:
        schemes["spare"]["restart_depth"] = restart_depth
    if searched is None and scenario is not None and scenario.microbatches > 1 and "spare" in schemes:
        schemes["spare"]["microbatches"] = scenario.microbatches
    inputs["currency"] = inp.costs.currency
    if fleet.mtbf_source is not None:
        inputs["gpu_mtbf_from"] = fleet.mtbf_source
    if inp.options.preset is not None:
        inputs["preset"] = inp.options.preset.name
    inputs.update(batch["inputs"])
    return inputs


def _preset_block(preset) -> dict | None:
    """The preset's description, sources and assumptions, where one was used."""
    if preset is None:
        return None
    return {"name": preset.name, "description": preset.description, "sources": list(preset.sources),
            "assumptions": list(preset.assumptions)}


def _merge_r_one(schemes: dict, runs_hours: dict, notes: list) -> None:
    """At r* = 1 a redundant scheme is checkpointing alone: the same run, the same row."""
    for s in ("spare", "rep"):
        if s in schemes and "none" in schemes and int(schemes[s]["r_star"]) == 1:
            keep = {k: schemes[s][k] for k in ("microbatches", "restart_depth") if k in schemes[s]}
            schemes[s] = {**schemes["none"], **keep}
            runs_hours[s] = runs_hours.get("none")
            notes.append(f"{s}: r* = 1 is checkpointing alone; its row is checkpointing alone's")


def _the_limit(inp: Resolved, stages, progress) -> dict:
    """The limit (``verdict.limit``) on the plan's cluster with its repair, from ``runs`` whole runs."""
    repair = inp.fleet.repair
    stages.stage(f"the limit: an ideal scheme at alive/N, its own best tau ({inp.runs} whole runs)")
    lim = limit(dataclasses.replace(inp.cluster, repair=repair), inp.cfg, inp.runs,
                inp.seed, progress)
    if lim.get("ttt_hours") is None:
        inp.notes.append(f"the limit was {lim['what']}")
    return lim


def _spread(schemes: dict, runs_hours: dict, lim: dict, deadline_hours) -> dict:
    """Each row's runs listed become its spread (``runs_hours``, the share over the deadline) and its distance to
    the limit (``left_to_gain_pct``); returns where each row's random numbers come from (the verdict pairs the
    sides that share them)."""
    sources = {}
    for s, e in schemes.items():
        if e.get("mc_ttt_runs_hours") is not None:
            runs_hours[s] = np.asarray(e["mc_ttt_runs_hours"], np.float64)
            # whole runs share the limit's random numbers (run i: run id i, one seed); epoch pools do not
            sources[s] = "kernel" if e.get("method") == "whole_runs" else "pool"
            if deadline_hours is not None:
                e["p_over_deadline"] = float(np.mean(runs_hours[s] > deadline_hours))
        if lim.get("ttt_hours") is not None:
            e["left_to_gain_pct"] = 100.0 * (e["ttt_hours"] - lim["ttt_hours"]) / lim["ttt_hours"]
    return sources


def _bound(inp: Resolved) -> dict:
    """The looser figure (``verdict.bound``): a run whose group failures cost nothing, with the scenario's
    job-wide interruptions."""
    scenario, cfg = inp.fleet.scenario, inp.cfg
    job_rate = 0.0 if scenario is None else scenario.job_rate_per_min(inp.n, inp.model.group_mtbf_min)
    return bound(cfg.work_hours, cfg.ckpt_cost_min, cfg.restart_for(float(inp.gpus)),
                 1.0 / job_rate if job_rate > 0 else None)


def _edge_notes(schemes: dict, inputs: dict, n: int, search, batch: dict) -> list:
    """The notes on answers at the edge of their search (``ttt.edges``): tau* at the floor, r* at ``r_max``, and
    m* at the largest micro-batch count of a grid given in ``search`` (its ``microbatches`` set, even to the
    default grid's counts). The default grid's edge, and the grid a batch sets, are said by the batch sentence
    of the verdict instead."""
    from ..ttt.edges import edge_notes

    listed = None
    if search is not None and batch["microbatches"] is None and search.microbatches is not None:
        listed = tuple(search.microbatches)
    return edge_notes({"schemes": schemes, "search": inputs.get("search")}, n, inputs["r_max"], listed)


