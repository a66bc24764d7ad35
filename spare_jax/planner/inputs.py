"""Where each of plan's inputs comes from (docs/planning.md#planning-your-own-cluster-spare-jax-plan), in order: a
flag on the line, ``--config``, ``--preset``, the built-in default.

``resolve_settings`` gives the numeric settings with their sources (a setting not given is None, so that a
preset's value, or a default, is told from one the user gave); ``resolve_rate`` the failure rate (a per-GPU or
per-node MTBF, a failure log fitted by maximum likelihood, or the preset's group-failure rate) with its source;
``input_sources`` the table of every input with its source that the HTML report shows. ``plan_inputs`` runs
``plan.plan`` on inputs gathered so, and gives the result with that table.
"""

from __future__ import annotations

import dataclasses

from .plan import DEFAULT_GPUS, DEFAULT_GPUS_PER_GROUP, DEFAULT_PRICE, Costs, Fleet, PlanOptions
from .table import price_text

BUILTIN = {"gpus": DEFAULT_GPUS, "gpus_per_group": DEFAULT_GPUS_PER_GROUP,
           "restart": 60.0, "ckpt_cost": 5.0, "work_hours": 720.0, "gpu_hour_price": DEFAULT_PRICE,
           "failure_stall": 0.0, "rejoin_stall": 0.0}
SETTINGS = tuple(BUILTIN)  # the settings ``resolve_settings`` reads, by their flags' internal names


def resolve_settings(given: dict, preset_name: str | None = None):
    """``(preset, {name: (value, source)})``: the preset named (None: none) and each of ``SETTINGS`` from
    ``given`` (``{name: value}``, None or missing: not given), else the preset's, else the built-in default;
    the GPU counts refused unless whole numbers."""
    from ..model.presets import get_preset

    preset = get_preset(preset_name) if preset_name else None
    ps = preset.settings if preset else {}
    out = {}

    def pick(name, preset_value=None):
        value = given.get(name)
        if value is None:
            if preset_value is not None:
                return preset_value, f"preset {preset.name}"
            return BUILTIN[name], "default"
        if preset is not None and preset_value is not None and value == preset_value:
            return value, f"preset {preset.name}"
        return value, "user input"

    out["gpus"] = pick("gpus", ps.get("reference_gpus"))
    out["gpus_per_group"] = pick("gpus_per_group", ps.get("gpus_per_group"))
    for name in ("restart", "ckpt_cost", "work_hours", "failure_stall", "rejoin_stall"):
        out[name] = pick(name, ps.get(name))
    out["gpu_hour_price"] = pick("gpu_hour_price")
    for name in ("gpus", "gpus_per_group"):
        value, src = out[name]
        if float(value) != int(value):
            raise ValueError(f"`{name}` must be a whole number, got {value!r}")
        out[name] = (int(value), src)
    return preset, out


@dataclasses.dataclass(frozen=True)
class RateInputs:
    """How the failure rate was given: ``gpu_mtbf_hours``, ``node_mtbf_hours`` (with ``gpus_per_node``) or a
    ``failure_log`` (a path; its window, node count and the law whose MTBF is taken), at most one; none: the
    preset's group-failure rate, else the default."""

    gpu_mtbf_hours: float | None = None
    node_mtbf_hours: float | None = None
    gpus_per_node: float | None = None
    failure_log: str | None = None
    log_window_hours: float | None = None
    log_nodes: int | None = None
    fit_law: str | None = None


@dataclasses.dataclass(frozen=True)
class Rate:
    """The failure rate resolved: the per-GPU MTBF in hours (None: from the node MTBF, the fit or the
    default), the ``fit`` of a failure log (None: none), how the rate was obtained (``source``) and the
    ``notes`` for stderr once the plan is done (a guessed window or node count)."""

    gpu_mtbf_hours: float | None
    source: str
    fit: object = None
    notes: tuple = ()


def resolve_rate(rate: RateInputs, preset, gpus_per_group: int) -> Rate:
    """The failure rate of ``rate`` with its source; a failure log is read and fitted here (its errors name
    ``failure_log``), an absurd exponential fit refused before more work."""
    from ..model.bounds import BOUNDS
    from .fit import fit_log, read_failure_log
    from .plan import check_fitted_mtbf

    fit, notes = None, ()
    gpu_mtbf, mtbf_src = rate.gpu_mtbf_hours, "user input"
    if rate.failure_log is not None:
        check = None
        if (rate.fit_law or "exponential") == "exponential":  # an absurd fitted MTBF: refused before more work
            def check(node_mtbf_hours):
                check_fitted_mtbf(gpus_per_group, node_mtbf_hours, rate.gpus_per_node)
        try:
            log = read_failure_log(rate.failure_log, rate.log_window_hours, rate.log_nodes)
        except ValueError as exc:  # the log's own messages name its path and line: say which parameter gave it
            raise ValueError(str(exc) if str(exc).startswith("`failure_log`") else f"`failure_log`: {exc}") from None
        top = BOUNDS["log_window_hours"][2]  # a window taken from the last failure is unchecked otherwise
        if log.window_hours > top:
            raise ValueError(f"`failure_log` {rate.failure_log}: the observation window (its last failure time) "
                             f"must be at most {top:g} h, got {log.window_hours:g}")
        notes = tuple(m for m in [guessed_warning(log)] if m)  # printed once the plan is done
        fit = fit_log(log, check=check)
        mtbf_src = f"fitted from {rate.failure_log} ({rate.fit_law or 'exponential'} law)"
    elif rate.node_mtbf_hours is not None:
        mtbf_src = "user input (per node)"
    elif gpu_mtbf is None:
        if preset is not None and "mtbf" in preset.settings:
            ps = preset.settings
            gpu_mtbf = ps["mtbf"] * ps["reference_gpus"] / 60.0
            mtbf_src = f"preset {preset.name}: its group-failure rate (system MTBF {ps['mtbf']:.4g} min at " \
                       f"{ps['reference_gpus']:,.0f} GPUs)"
        else:
            mtbf_src = "default (the paper's 50,000 h per GPU)"
    return Rate(gpu_mtbf, mtbf_src, fit, notes)


def guessed_warning(log) -> str | None:
    """One line for stderr when the log's window or node count was not stated but taken from its records."""
    what = []
    if "nodes" in log.guessed:
        what.append(f"the node count ({log.nodes:,}, the distinct nodes it lists; nodes that never failed are "
                    "missed; add '# nodes = M' or --log-nodes)")
    if "window_hours" in log.guessed:
        what.append(f"the window ({log.window_hours:,.6g} h, its last failure time; add '# window_hours = H' or "
                    "--log-window-hours)")
    return f"spare-jax: warning: {log.path}: guessed " + " and ".join(what) if what else None


@dataclasses.dataclass(frozen=True)
class Origins:
    """Where the inputs made from flags came from, for ``input_sources``: the repair time from the preset (elastic
    needs one), ``--gpus-per-node`` given, the job-wide rate from the preset and its ``job_scaling``, and
    ``--domain-size`` given (else the preset's domains)."""

    repair_from_preset: bool = False
    gpus_per_node_given: bool = False
    job_wide_from_preset: bool = False
    job_scaling: str = "per-gpu"
    domain_size_given: bool = False


def input_sources(result, s: dict, mtbf_src: str, scenario, preset, origins: Origins) -> list:
    """Every input of ``result`` (a ``PlanResult``) with its value and its source: the rows of the report's
    parameters table. ``s``: ``resolve_settings``'s settings; ``mtbf_src``: ``Rate.source``."""
    inp = result.inputs
    rows = [("GPUs", f"{inp['gpus']:,}", s["gpus"][1]),
            ("GPUs per data-parallel group", f"{inp['gpus_per_group']:,}", s["gpus_per_group"][1]),
            ("groups N", f"{inp['groups']:,}", "GPUs / GPUs per group"),
            ("per-GPU MTBF (group failures)", f"{inp['gpu_mtbf_hours']:,.6g} h", mtbf_src),
            ("group MTBF", f"{inp['group_mtbf_hours']:,.6g} h", "per-GPU MTBF / GPUs per group"),
            ("restart cost R", f"{inp['restart_min']:g} min", s["restart"][1]),
            ("checkpoint cost C", f"{inp['ckpt_cost_min']:g} min", s["ckpt_cost"][1]),
            ("work W", f"{inp['work_hours']:g} h", s["work_hours"][1]),
            *([("stall per failure", f"{inp['failure_stall_min']:g} min", s["failure_stall"][1]),
               ("stall per rejoin", f"{inp['rejoin_stall_min']:g} min", s["rejoin_stall"][1])]
              if "failure_stall_min" in inp else []),
            ("price per GPU-hour", price_text(inp), s["gpu_hour_price"][1]),
            ("deadline", "-" if inp["deadline_hours"] is None else f"{inp['deadline_hours']:g} h",
             "user input" if inp["deadline_hours"] is not None else "none given")]
    if preset is not None:
        rows.insert(0, ("preset", preset.name, "--preset"))
    if inp.get("repair_time_min") is not None:
        src = f"preset {preset.name} (elastic needs a repair time)" if origins.repair_from_preset else "user input"
        law = inp.get("repair_law", "fixed") + (f", sigma {inp['repair_sigma']:g}" if "repair_sigma" in inp else "")
        rows.append(("repair time D", f"{inp['repair_time_min']:g} min ({law})", src))
    elif "repair_time_min" in inp:
        rows.append(("repair time D", "none: a failed group waits for the next global restart", "none given"))
    if inp.get("spares") is not None:
        rows.append(("spare pool", f"{inp['spares']:,} node sets, hardware repair {inp['hardware_repair_min']:g} min",
                     "user input"))
    elif inp.get("repair_time_min") is not None:
        rows.append(("spare pool", "unlimited: a spare always at hand",
                     "--spares auto (chosen below)" if result.spares is not None else "default"))
    if inp.get("restart_depth") is not None:
        rows.append(("proactive restart depth D_max (spare)", f"{inp['restart_depth']:g}", "user input"))
    b_given = [(k, v) for k, v in (("global batch", inp.get("global_batch_seqs")),
                                   ("most micro-batches per shard", inp.get("max_microbatches"))) if v is not None]
    rows += [(k, f"{v:,}", "user input") for k, v in b_given]
    if not b_given and inp.get("repair_time_min") is not None:
        rows.append(("batch", "not given: micro-batches per shard searched over the default grid", "default"))
    if "gpus_per_node" in inp:
        rows.append(("GPUs per node", str(inp["gpus_per_node"]),
                     "user input" if origins.gpus_per_node_given else "default"))
    if scenario.microbatches > 1:
        rows.append(("micro-batches per shard", str(scenario.microbatches), "user input"))
    if not scenario.is_default:
        pname = f"preset {preset.name}" if preset is not None else None
        desc = scenario.describe()
        if "job_mtbf_min" in desc:
            src = "user input"
            if origins.job_wide_from_preset:
                src = pname
                if origins.job_scaling == "per-job" or inp["gpus"] != preset.settings["reference_gpus"]:
                    how = "per GPU" if origins.job_scaling == "per-gpu" else "per job"
                    src += f", {how} from its source's {preset.job_wide['gpus']:,.0f} GPUs (--job-scaling)"
            rows.append(("job-wide MTBF", f"{desc['job_mtbf_min']:.6g} min", src))
        if "job_fraction" in desc:
            rows.append(("job-wide fraction", f"{desc['job_fraction']:g}", "user input"))
        for d in desc.get("domains", []):
            from_preset = pname and not origins.domain_size_given
            rows.append((f"failure domain {d.get('name', '')}".strip(),
                         f"{d['size']} groups, MTBF {d['mtbf_min']:.6g} min", pname if from_preset else "user input"))
        if desc.get("ring") != "contiguous":
            rows.append(("ring order", str(desc["ring"]), "user input"))
        if "lemon_fraction" in desc:
            rows.append(("lemons", f"{desc['lemon_fraction']:g} of groups x{desc['lemon_factor']:g}", "user input"))
    rows += [("search", f"r = 1..{inp['r_max']}; {inp.get('method_detail', inp['method'])}", "--r-max"),
             ("Monte Carlo", f"{inp['runs']} runs per scheme, seed {inp['seed']}", "--runs, --seed")]
    return [{"parameter": a, "value": b, "source": c} for a, b, c in rows]


@dataclasses.dataclass(frozen=True)
class PlanInputs:
    """What ``plan_inputs`` plans: the ``settings`` of ``resolve_settings``, the failure ``rate`` as given, the
    search and sampling ``options`` (its ``preset`` the one the settings came from), the ``scenario`` and
    ``repair``, the deadline and the currency, whether a list of micro-batch counts was given (refused beside
    a batch), and the ``origins`` of the inputs made from flags."""

    settings: dict
    rate: RateInputs = RateInputs()
    options: PlanOptions = PlanOptions()
    scenario: object = None
    repair: object = None
    deadline_hours: float | None = None
    currency: str | None = None
    microbatches_listed: bool = False
    origins: Origins = Origins()


def plan_inputs(inputs: PlanInputs, progress: bool = True):
    """``(result, notes)``: ``plan.plan`` on ``inputs`` (its failure rate resolved by ``resolve_rate``), the
    result's ``sources`` set to ``input_sources`` (for the report, not in the JSON), and the notes for stderr
    once the plan is done."""
    from .plan import plan

    s, options = inputs.settings, inputs.options
    preset = options.preset
    gpus, gpg = s["gpus"][0], s["gpus_per_group"][0]
    rate = resolve_rate(inputs.rate, preset, gpg)
    given = inputs.rate
    fleet = Fleet(gpus, gpg, rate.gpu_mtbf_hours, given.node_mtbf_hours, given.gpus_per_node, rate.fit,
                  given.fit_law or "exponential",
                  rate.source if rate.gpu_mtbf_hours is not None and given.gpu_mtbf_hours is None else None,  # the preset's
                  inputs.scenario, inputs.repair)
    costs = Costs(s["restart"][0], s["ckpt_cost"][0], s["work_hours"][0], s["gpu_hour_price"][0],
                  inputs.deadline_hours, inputs.currency, s["failure_stall"][0], s["rejoin_stall"][0])
    if (options.global_batch_seqs or options.max_microbatches) and inputs.microbatches_listed:
        raise ValueError("give `microbatches` or the batch (`global_batch_seqs`, `max_microbatches`), not both: "
                         "the batch sets the micro-batch counts searched")
    result = plan(fleet, costs, options, progress=progress)
    result.sources = input_sources(result, s, rate.source, inputs.scenario, preset, inputs.origins)
    return result, rate.notes
