"""The plan's inputs (docs/planning.md#planning-your-own-cluster-spare-jax-plan): the cluster in GPUs and hours
(``Fleet``), the training and its price (``Costs``), how the plan searches and samples (``PlanOptions``), and
``resolve``, which checks them all (a ValueError naming the first bad one) into one ``Resolved`` value that every
step of ``planner.plan.plan`` reads.

From GPUs and hours to the model. ``N = gpus / gpus_per_group`` data-parallel groups (refused unless
whole). The failure rate comes from one of ``gpu_mtbf_hours``, ``node_mtbf_hours`` with ``gpus_per_node``, or a
fitted log (``fit``, its ``fit_law`` MTBF): the planner's model is exponential with that MTBF
(``planner.plan``'s module docstring).
"""

from __future__ import annotations

import dataclasses

from ..model.bounds import BOUNDS, GROUP_MTBF_RANGE
from ..model.failures import FailureModel
from .assumed import check_number as _check

SCHEMES = ("spare", "rep", "none")
DEFAULT_GPUS = 98_304  # the cluster-100k preset's size (96 groups of 1,024)
DEFAULT_GPUS_PER_GROUP = 1024
# the paper's per-GPU MTBF, 3e6 min (docs/model.md#failures-wipe-out-depth-overhead); Llama 3 saw one interruption
# per ~50,700 GPU-hours
DEFAULT_GPU_MTBF_HOURS = 50_000.0
DEFAULT_GPUS_PER_NODE = 8
DEFAULT_PRICE = 2.0  # per GPU-hour: a placeholder, not a quote
DEFAULT_RUNS = 200
DEFAULT_R_MAX = 16
DEFAULT_R_MAX_POOL = 8  # under a scenario with no closed form: one compiled kernel per (scheme, r)
PLAN_POOL_EPOCHS = 5000  # per (scheme, r) under a scenario with no closed form (ttt and optimize: ttt.pool.POOL_EPOCHS)
FIT_LAWS = ("exponential", "weibull")


def per_gpu_mtbf_hours(gpus_per_group: int, gpu_mtbf_hours, node_mtbf_hours, gpus_per_node, fit, fit_law):
    """(per-GPU MTBF hours, how it was obtained): the group MTBF is this / gpus_per_group."""
    given = [name for name, v in (("gpu_mtbf_hours", gpu_mtbf_hours), ("node_mtbf_hours", node_mtbf_hours),
                                  ("fit", fit)) if v is not None]
    if len(given) > 1:
        raise ValueError(f"give one failure rate: gpu_mtbf_hours, node_mtbf_hours or a fitted log (got "
                         f"{', '.join(given)})")
    if fit_law not in FIT_LAWS:
        raise ValueError(f"fit_law must be one of {', '.join(FIT_LAWS)}, got {fit_law!r}")
    if not given or given[0] == "gpu_mtbf_hours":  # gpus_per_node, where given, makes the groups whole nodes and
        if gpus_per_node is not None:               # the spare pool's node sets (ByteRobust's P99 counts nodes)
            per_node = _check("gpus_per_node", gpus_per_node, 1, True)
            if gpus_per_group % per_node:
                raise ValueError(f"gpus_per_group ({gpus_per_group}) must be a multiple of gpus_per_node ({per_node}): "
                                 "a data-parallel group is made of whole nodes")
        v = DEFAULT_GPU_MTBF_HOURS if gpu_mtbf_hours is None else _check("gpu_mtbf_hours", gpu_mtbf_hours, 1e-6)
        return v, ("default, the paper's 50,000 h" if gpu_mtbf_hours is None else "given")
    per_node = DEFAULT_GPUS_PER_NODE if gpus_per_node is None else _check("gpus_per_node", gpus_per_node, 1, True)
    if gpus_per_group % per_node:
        raise ValueError(f"gpus_per_group ({gpus_per_group}) must be a multiple of gpus_per_node ({per_node}): "
                         "a data-parallel group is made of whole nodes")
    if given[0] == "node_mtbf_hours":
        node = _check("node_mtbf_hours", node_mtbf_hours, 1e-6)
        how = f"per-node MTBF {node:g} h x {per_node} GPUs per node"
    else:
        if fit_law == "weibull" and fit.weibull is None:
            raise ValueError("fit_law 'weibull' needs a Weibull fit (at least 2 failures in the log)")
        node = fit.mtbf_hours if fit_law == "exponential" else fit.weibull.mtbf_hours
        how = f"fitted per-node MTBF ({fit_law}) {node:.6g} h x {per_node} GPUs per node"
    return node * per_node, how


def check_fitted_mtbf(gpus_per_group: int, node_mtbf_hours: float, gpus_per_node=None) -> None:
    """Refuse a fitted per-node MTBF whose group MTBF lies outside ``GROUP_MTBF_RANGE`` (what ``plan`` would
    refuse after the fit), so that an absurd log is refused before the rest of the fit and any planning."""
    per_node = DEFAULT_GPUS_PER_NODE if gpus_per_node is None else _check("gpus_per_node", gpus_per_node, 1, True)
    group_mtbf_min = node_mtbf_hours * per_node * 60.0 / gpus_per_group
    if not GROUP_MTBF_RANGE[0] <= group_mtbf_min <= GROUP_MTBF_RANGE[1]:
        raise ValueError(f"`failure_log`: the fitted per-node MTBF {node_mtbf_hours:.4g} h gives a group MTBF of "
                         f"{group_mtbf_min:.4g} min ({gpus_per_group // per_node if gpus_per_group >= per_node else 1}"
                         f" nodes per group), outside {GROUP_MTBF_RANGE[0]:g}..{GROUP_MTBF_RANGE[1]:g} min")


def failure_model(gpus: int, gpus_per_group: int, gpu_mtbf_hours: float) -> FailureModel:
    group_mtbf_min = gpu_mtbf_hours * 60.0 / gpus_per_group
    if not GROUP_MTBF_RANGE[0] <= group_mtbf_min <= GROUP_MTBF_RANGE[1]:
        raise ValueError(f"the group MTBF (per-GPU MTBF x 60 / gpus_per_group = {group_mtbf_min:g} min) must be "
                         f"in {GROUP_MTBF_RANGE[0]:g}..{GROUP_MTBF_RANGE[1]:g} min")
    # FailureModel quotes a system MTBF at a reference size: the whole cluster here
    return FailureModel("exponential", gpu_mtbf_hours * 60.0 / gpus, float(gpus), float(gpus_per_group))


def plan_cluster(n, model, scenario):
    """The library's ``Cluster`` of the plan's N groups (``scenario`` None: the paper's model)."""
    from ..model.cluster import Cluster
    from ..model.scenario import Scenario

    return Cluster(n, model, Scenario() if scenario is None else scenario)


ALL_SCHEMES = SCHEMES + ("elastic",)


def check_schemes(schemes, repair) -> tuple:
    """The strategies to compare, in the table's order: refused when unknown, empty, or elastic without a
    repair time."""
    has_repair = repair is not None and repair.repair_time_min is not None
    if schemes is None:
        return SCHEMES + (("elastic",) if has_repair else ())
    chosen = tuple(dict.fromkeys(schemes))
    bad = [x for x in chosen if x not in ALL_SCHEMES]
    if bad or not chosen:
        raise ValueError(f"schemes must be a non-empty list of {', '.join(ALL_SCHEMES)}, got "
                         f"{','.join(map(str, schemes)) or 'nothing'}")
    if "elastic" in chosen and not has_repair:
        raise ValueError("the elastic scheme needs a repair time (`repair_time_min`: replacing and restarting one "
                         "replica); without it a failed group never rejoins")
    return tuple(x for x in ALL_SCHEMES if x in chosen)


def cluster_groups(gpus: int, gpus_per_group: int, names=("gpus", "gpus_per_group")) -> int:
    """N = gpus / gpus_per_group data-parallel groups (an integer, at most 200,000); ``names``: how the two
    inputs are called in the messages (API argument names or CLI flags)."""
    if gpus % gpus_per_group:
        below, above = gpus // gpus_per_group * gpus_per_group, (gpus // gpus_per_group + 1) * gpus_per_group
        nearest = f"{below:,} or {above:,}" if below else f"{above:,}"
        raise ValueError(f"{names[0]} ({gpus}) must be a multiple of {names[1]} ({gpus_per_group}): N = "
                         f"{names[0]} / {names[1]} data-parallel groups; the nearest multiples: {nearest}")
    n = gpus // gpus_per_group
    if n > 200_000:
        raise ValueError(f"{names[0]} / {names[1]} = {n} groups: at most 200,000")
    return n


@dataclasses.dataclass(frozen=True)
class Fleet:
    """The cluster in GPUs and hours: its size, its failure rate (one of ``gpu_mtbf_hours``, default
    ``DEFAULT_GPU_MTBF_HOURS``; ``node_mtbf_hours`` with ``gpus_per_node``, default 8; or ``fit``, a
    ``fit.FitResult`` whose ``fit_law`` MTBF is taken), ``mtbf_source`` (how the caller obtained the rate,
    reported instead of the plan's own phrase), the ``scenario`` (None: the paper's model) and the ``repair``
    (a ``model.repair.Repair``; None: a failed group waits for the next global restart)."""

    gpus: int = DEFAULT_GPUS
    gpus_per_group: int = DEFAULT_GPUS_PER_GROUP
    gpu_mtbf_hours: float | None = None
    node_mtbf_hours: float | None = None
    gpus_per_node: int | None = None
    fit: object = None
    fit_law: str = "exponential"
    mtbf_source: str | None = None
    scenario: object = None
    repair: object = None


@dataclasses.dataclass(frozen=True)
class Costs:
    """The training and its price: restart R and checkpoint C (minutes), work W and the deadline (hours), the
    price per GPU-hour and its ``currency`` (a label; None: the price's own unit), and the stalls per failure
    and per rejoin (minutes, docs/runs.md#stalls)."""

    restart_min: float = 60.0
    ckpt_cost_min: float = 5.0
    work_hours: float = 720.0
    gpu_hour_price: float = DEFAULT_PRICE
    deadline_hours: float | None = None
    currency: str | None = None
    failure_stall_min: float = 0.0  # the job's pause per group failure survived without a restart
    rejoin_stall_min: float = 0.0  # the job's pause per group's return from repair


@dataclasses.dataclass(frozen=True)
class PlanOptions:
    """How the plan searches and samples: ``runs`` Monte Carlo training runs per scheme (seeded by ``seed``),
    ``r_max``, ``epochs`` (pools under a scenario with no closed form), the ``sensitivity`` table, the
    proactive restart depth ``restart_depth`` (without repair), the ``schemes`` compared, the joint search's
    ``search`` space (with repair), the ``preset`` (a ``model.presets`` value) the inputs came from, and the
    batch the plan assumes (with repair): ``global_batch_seqs`` B (micro-batches per shard searched up to
    floor(B / N)) or ``max_microbatches`` M, not both (neither: m <= 8)."""

    runs: int = DEFAULT_RUNS
    seed: int = 0
    r_max: int | None = None
    epochs: int | None = None
    sensitivity: bool = True
    restart_depth: float | None = None
    schemes: tuple | None = None
    search: object = None
    preset: object = None
    global_batch_seqs: int | None = None
    max_microbatches: int | None = None
    spares_auto: object = None  # a ``planner.spares.SpareAuto``: choose the spare pool (the repair has none)


@dataclasses.dataclass(frozen=True)
class Resolved:
    """The plan's inputs, checked (``_resolve``): the cluster's N groups and failure model (the per-GPU MTBF
    ``per_gpu`` and how it was obtained, ``how``), the training ``cfg`` (a ``ttt.Training``), the runs, seed,
    r_max and epochs as the plan uses them, the schemes ``chosen``, whether the sensitivity table runs, the
    notes so far and the failure log's rates (``seen``)."""

    fleet: Fleet
    costs: Costs
    options: PlanOptions
    gpus: int
    n: int
    per_gpu: float
    how: str
    model: FailureModel
    cfg: object
    price: float
    deadline_hours: float | None
    runs: int
    seed: int
    r_max: int
    epochs: int | None
    pooled: bool  # each r samples a pool of epochs (``ttt.router.scenario_needs_pool``)
    chosen: tuple
    sensitivity: bool
    notes: list
    seen: dict

    @property
    def cluster(self):
        """The library's ``Cluster`` of the plan (without repair)."""
        return plan_cluster(self.n, self.model, self.fleet.scenario)

    @property
    def space(self):
        """The optimiser's ``ttt.Space``: r up to r_max, the epochs and seed."""
        from .. import ttt

        return ttt.Space(self.r_max, epochs=self.epochs, seed=self.seed)


def resolve(fleet: Fleet, costs: Costs, options: PlanOptions) -> Resolved:
    """Every input checked (a ValueError naming the first bad one), in the order ``plan`` documents, with the
    defaults filled in; the notes the inputs alone give."""
    from ..ttt import Training
    from ..ttt.router import scenario_needs_pool, searches_jointly, stalls_need_runs

    fit, fit_law, scenario, repair = fleet.fit, fleet.fit_law, fleet.scenario, fleet.repair
    gpus = _check("gpus", fleet.gpus, 1, True)
    gpus_per_group = _check("gpus_per_group", fleet.gpus_per_group, 1, True)
    n = cluster_groups(gpus, gpus_per_group)
    per_gpu, how = per_gpu_mtbf_hours(gpus_per_group, fleet.gpu_mtbf_hours, fleet.node_mtbf_hours,
                                       fleet.gpus_per_node, fit, fit_law)
    model = failure_model(gpus, gpus_per_group, per_gpu)
    restart_min = _check("restart_min", costs.restart_min, 0.0)
    ckpt_cost_min = _check("ckpt_cost_min", costs.ckpt_cost_min, 0.0)
    work_hours = _check("work_hours", costs.work_hours, 1e-2)
    price = _check("gpu_hour_price", costs.gpu_hour_price, 0.0)
    deadline_hours = costs.deadline_hours
    if deadline_hours is not None:
        deadline_hours = _check("deadline_hours", deadline_hours, 1e-9)
    runs = _check("runs", options.runs, 2, True, 10_000)
    seed = _check("seed", options.seed, 0, True, 2**63 - 1)
    pooled = scenario_needs_pool(scenario)  # each r samples a pool of epochs (the router's answer)
    r_max = (DEFAULT_R_MAX_POOL if pooled else DEFAULT_R_MAX) if options.r_max is None else options.r_max
    r_max = _check("r_max", r_max, 1, True, 64)
    epochs = options.epochs
    if epochs is not None:
        epochs = _check("epochs", epochs, 100, True, 10_000_000)
        if not pooled:  # no pool of epochs is sampled: the count would be ignored
            raise ValueError(f"`epochs` {epochs}: used only under a scenario with no closed form (domains, a ring "
                             "order, lemons), where each r samples a pool of epochs; this plan samples none, drop it")
    epochs = epochs or (PLAN_POOL_EPOCHS if pooled else None)
    if scenario is not None:
        scenario.check(n)
        scenario.ring_order(n)
    failure_stall = _check("failure_stall_min", costs.failure_stall_min, 0.0, high=BOUNDS["failure_stall"][2])
    rejoin_stall = _check("rejoin_stall_min", costs.rejoin_stall_min, 0.0, high=BOUNDS["rejoin_stall"][2])
    cfg = Training(work_hours, ckpt_cost_min, restart_min, "none", float(gpus),
                   failure_stall_min=failure_stall, rejoin_stall_min=rejoin_stall)
    notes = [n for n in (preset_law_note(options.preset),) if n]
    if fit is not None and fit.weibull is not None and fit.weibull.p_exponential < 0.05:
        notes.append(f"the log rejects the exponential law (Weibull shape {fit.weibull.shape:.3g}, 95% CI "
                     f"{fit.weibull.shape_ci[0]:.3g}..{fit.weibull.shape_ci[1]:.3g}, p = "
                     f"{fit.weibull.p_exponential:.2g}); the plan uses the {fit_law} fit's MTBF in an "
                     "exponential model")
    seen = {}
    if fit is not None:  # a log's events are a hardware rate: what it fitted, and what a synchronous job saw
        from .fit import rates_note, rates_seen

        seen = rates_seen(per_gpu, gpus, cfg.restart_for(float(gpus)))
        notes.append(rates_note(seen, fit_law, cfg.restart_for(float(gpus))))
    chosen = check_schemes(options.schemes, repair)
    if options.spares_auto is not None and (repair is None or not repair.has_repair or repair.spares is not None):
        raise ValueError("`spares` auto needs `repair_time_min` D (the swap: a failed group rejoins D after it takes a "
                         "spare) and no `spares` K of its own")
    if options.search is not None and repair is None:
        raise ValueError("a search over micro-batch counts, restart depths or repair times runs on whole training "
                         "runs: it needs repair (a repair time, or a finite spare pool)")
    sensitivity = options.sensitivity
    if sensitivity and searches_jointly(repair):  # one joint search per scaled input: not run
        sensitivity = False
        notes.append("no sensitivity table with repair: each row would need its own joint search on whole training "
                     "runs; run plan again with the input changed (e.g. --gpu-mtbf-hours, --restart)")
    if sensitivity and stalls_need_runs(cfg):  # the optimiser behind each row has no stall
        sensitivity = False
        notes.append("no sensitivity table with a stall per failure or rejoin: its rows come from the closed-form "
                     "optimiser, which has no stall; run plan again with the input changed")
    return Resolved(fleet, costs, options, gpus, n, per_gpu, how, model, cfg, price, deadline_hours, runs, seed,
                    r_max, epochs, pooled, chosen, sensitivity, notes, seen)


def preset_law_note(preset) -> str | None:
    """The note that a preset's failure law is not the plan's: the plan's failures are exponential (its closed
    forms and scenario kernels are), so a Weibull preset gives the plan its mean, costs and cluster only."""
    if preset is None or preset.settings.get("distribution", "exponential") == "exponential":
        return None
    shape = preset.settings.get("weibull_shape")
    law = f"Weibull law (shape {shape:g})" if shape is not None else f"{preset.settings['distribution']} law"
    return (f"preset {preset.name}: its {law} is not modelled here; the plan's group failures are exponential with "
            f"the same mean (ttt and optimize --preset {preset.name} take the law)")
