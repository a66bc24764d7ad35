"""The model's values from the flags: the failure law, the scenario (with a ``[scenario]`` config table), the
repair law and the training costs."""

from __future__ import annotations


from ..model.bounds import GROUP_MTBF_RANGE
from ..model.bounds import check as check_bound
from .args import check_job_flags
from .base import was_given


def preset_job_wide(args) -> bool:
    """Whether the job-wide rate comes from the preset: it has one, and no flag or ``--config`` sets
    ``--job-mtbf-min`` or ``--job-fraction``."""
    return (getattr(args, "preset_job_mtbf", None) is not None and args.job_mtbf is None
            and args.job_fraction is None and getattr(args, "cfg_job_mtbf", None) is None
            and getattr(args, "cfg_job_fraction", None) is None)


def scenario_from_flags(args, groups: int, gpus: float | None = None):
    """The ``Scenario`` of the flags (and of a ``[scenario]`` table), validated against N; a preset's job-wide
    MTBF carried to this cluster's ``gpus`` (default N x --gpus-per-group) by ``--job-scaling``."""
    from ..model.scenario import RINGS, DomainLevel, Scenario, read_group_mtbf_file, read_ring_file

    domains = list(args.scenario_domains or [])
    if (args.domain_size is None) != (args.domain_mtbf is None):
        raise ValueError("--domain-size and --domain-mtbf-min go together")
    if args.domain_size is not None:
        if args.scenario_domains:
            raise ValueError("--domain-size/--domain-mtbf-min and [scenario] domains in --config: give one of them")
        domains = [DomainLevel(args.domain_size, args.domain_mtbf)]
    if args.ring is not None and not str(args.ring).strip():
        raise ValueError("--ring must be contiguous, interleaved or a ring file, got ''")
    ring = args.ring or "contiguous"
    if ring not in RINGS:
        ring = read_ring_file(ring)
    check_job_flags(args)
    job_mtbf, job_fraction = args.job_mtbf, args.job_fraction
    if job_mtbf is None and job_fraction is None:
        # flags win over --config, which wins over a preset
        job_mtbf, job_fraction = getattr(args, "cfg_job_mtbf", None), getattr(args, "cfg_job_fraction", None)
        if job_mtbf is not None and job_fraction is not None:
            raise ValueError("--config: job_mtbf and job_fraction: give one of them")
    scaling = getattr(args, "job_scaling", "per-gpu")
    if preset_job_wide(args):
        from ..model.presets import get_preset

        job_mtbf = get_preset(args.preset).job_mtbf_min(groups * args.gpus_per_group if gpus is None else gpus,
                                                        scaling)
        check_bound("job_mtbf", job_mtbf, f"the preset's job-wide MTBF at this size (--job-scaling {scaling})")
    elif "job_scaling" in getattr(args, "given", ()):
        raise ValueError(f"--job-scaling {scaling} carries a --preset's job-wide interruptions to another cluster "
                         "size, and this run takes none from a preset (no preset, a preset without them, or "
                         "--job-mtbf-min or --job-fraction, which describe this cluster itself): drop --job-scaling")
    if (args.lemon_fraction or 0) > 0 and args.lemon_factor is None:
        raise ValueError("--lemon-fraction needs --lemon-factor")
    if args.lemon_fraction is None and (args.lemon_factor is not None or args.lemon_seed is not None):
        raise ValueError("--lemon-factor/--lemon-seed need --lemon-fraction (which groups are lemons)")
    if args.group_mtbf_file is not None:
        mtbfs = read_group_mtbf_file(args.group_mtbf_file)
        bad = [v for v in mtbfs if not GROUP_MTBF_RANGE[0] <= v <= GROUP_MTBF_RANGE[1]]
        if bad:
            raise ValueError(f"--group-mtbf-file: every per-group MTBF must be in {GROUP_MTBF_RANGE[0]:g}.."
                             f"{GROUP_MTBF_RANGE[1]:g} min, got {bad[0]:g}")
    scenario = Scenario(job_mtbf_min=job_mtbf, job_fraction=job_fraction or None,
                        domains=tuple(domains), ring=ring, lemon_fraction=args.lemon_fraction or 0.0,
                        lemon_factor=1.0 if args.lemon_factor is None else args.lemon_factor,
                        lemon_seed=args.lemon_seed or 0,
                        group_mtbf_min=None if args.group_mtbf_file is None else mtbfs,
                        microbatches=getattr(args, "microbatches", None)
                        or min(getattr(args, "microbatch_set", None) or [1]))
    scenario.check(groups)
    scenario.ring_order(groups)  # e.g. 'interleaved' without domains
    return scenario


def parse_scenario_table(section, path):
    """``[scenario]`` of a config file: flag settings, plus ``domains`` (a list of {size, mtbf[, name]})."""
    from ..model.scenario import DomainLevel

    if not isinstance(section, dict):
        raise ValueError(f"--config: [scenario] in {path} must be a table")
    table = dict(section)
    levels = table.pop("domains", None)
    parsed = None
    if levels is not None:
        if not isinstance(levels, list) or not all(isinstance(x, dict) for x in levels) or not levels:
            raise ValueError("--config: scenario.domains must be a list of tables {size = G, mtbf = MIN}")
        parsed = []
        for level in levels:
            extra = set(level) - {"size", "mtbf", "name"}
            if extra or "size" not in level or "mtbf" not in level:
                raise ValueError(f"--config: each scenario.domains entry needs size and mtbf (and may have a name), "
                                 f"got {sorted(level)}")
            size = check_bound("domain_size", level["size"], "scenario.domains.size")
            mtbf = check_bound("domain_mtbf", level["mtbf"], "scenario.domains.mtbf")
            name = level.get("name", "")
            if not isinstance(name, str):
                raise ValueError("--config: scenario.domains.name must be a string")
            parsed.append(DomainLevel(size, mtbf, name))
    return table, parsed


def repair_from_flags(args):
    """The ``Repair`` of the flags (with the spare pool of ``--spares``/``--hardware-repair`` where the command
    takes them), or None when neither ``--repair-time`` nor ``--spares`` is given."""
    spares, hardware = getattr(args, "spares", None), getattr(args, "hardware_repair", None)
    if spares is None and hardware is not None:
        raise ValueError("--hardware-repair goes with --spares: it is the time a failed group's node set takes "
                         "to come back to a finite spare pool; give --spares K or drop it")
    if spares is not None and hardware is None:
        raise ValueError("--spares needs --hardware-repair H: the minutes a failed group's node set spends in "
                         "hardware repair before it returns to the pool as a spare")
    wants_elastic = getattr(args, "scheme", None) == "elastic" or "elastic" in (getattr(args, "schemes", None) or ())
    if args.repair_time is None and wants_elastic and getattr(args, "preset_repair_time", None) is not None:
        args.repair_time = args.preset_repair_time  # the preset's documented repair time, which elastic needs
        args.repair_from_preset = True
    if args.repair_time is None:
        if args.repair_law is not None or args.repair_sigma is not None:
            raise ValueError("--repair-law and --repair-sigma need --repair-time")
        if spares is None:
            return None
    if args.repair_sigma is not None and args.repair_law != "lognormal":
        raise ValueError("--repair-sigma goes with --repair-law lognormal")
    from ..model.repair import Repair

    first = args.repair_time[0] if isinstance(args.repair_time, list) else args.repair_time  # a list: searched
    return Repair(first, args.repair_law or "fixed",
                  1.0 if args.repair_sigma is None else args.repair_sigma, spares, hardware)


def repair_times_from_flags(args) -> tuple | None:
    """The repair times to search where ``--repair-time`` lists several (None: one or none)."""
    times = getattr(args, "repair_time", None)
    return tuple(times) if isinstance(times, list) and len(times) > 1 else None


def failure_model_from_flags(args):
    """The ``FailureModel`` of the flags: the reference MTBF, or ``--group-mtbf-min``/``--gpu-mtbf-hours``,
    checked against the per-group MTBF range."""
    from ..model.failures import FailureModel

    mtbf = args.mtbf  # the reference cluster's MTBF in minutes (FailureModel.system_mtbf_min)
    if getattr(args, "group_mtbf", None) is not None and getattr(args, "gpu_mtbf_hours", None) is not None:
        raise ValueError("--group-mtbf-min and --gpu-mtbf-hours: give one of them")
    if getattr(args, "group_mtbf", None) is not None:
        mtbf = args.group_mtbf * args.gpus_per_group / args.reference_gpus
    elif getattr(args, "gpu_mtbf_hours", None) is not None:
        mtbf = args.gpu_mtbf_hours * 60.0 / args.reference_gpus
    if (args.weibull_shape != 1.0 and args.distribution == "exponential"
            and was_given(args, "weibull_shape")):
        raise ValueError("--weibull-shape applies to --distribution weibull only (exponential failures have no "
                         "shape); add --distribution weibull or drop it")
    group_mtbf = mtbf * args.reference_gpus / args.gpus_per_group
    if not GROUP_MTBF_RANGE[0] <= group_mtbf <= GROUP_MTBF_RANGE[1]:
        raise ValueError(f"the per-group MTBF (--reference-mtbf-min x --reference-gpus / --gpus-per-group, or --group-mtbf-min, or "
                         f"--gpu-mtbf-hours x 60 / --gpus-per-group) must be in "
                         f"{GROUP_MTBF_RANGE[0]:g}..{GROUP_MTBF_RANGE[1]:g} min, got {group_mtbf:g}")
    return FailureModel(args.distribution, mtbf, args.reference_gpus, args.gpus_per_group,
                        args.weibull_shape)


def training_from_flags(args):
    """The ``Training`` of the flags: W, C, R, its scaling, the reference GPU count and the stalls."""
    from ..ttt import Training

    return Training(args.work_hours, args.ckpt_cost, args.restart, args.restart_scaling,
                          args.reference_gpus, failure_stall_min=getattr(args, "failure_stall", 0.0),
                          rejoin_stall_min=getattr(args, "rejoin_stall", 0.0))


def scheme_list(text: str) -> tuple:
    """An argparse type: a comma-separated list of schemes."""
    import argparse

    items = tuple(x.strip() for x in str(text).split(","))
    known = ("spare", "rep", "none", "elastic")
    if not items or any(x not in known for x in items):
        raise argparse.ArgumentTypeError(f"must be a comma-separated list of {', '.join(known)}, got {text!r}")
    return items


TRACE_FLAGS = ("trace_unit", "trace_nodes_per_group", "trace_time_scale", "burst_window", "no_repair")


def trace_from_flags(args):
    """The ``planner.trace_replay.TraceOptions`` of ``--failure-trace`` and its flags (None without a trace;
    each of its flags then refused). ``--repair-time trace`` (the default with a trace) and ``--no-repair`` set
    the repair mode and leave ``args.repair_time`` None; a number is the fixed repair time."""
    path = getattr(args, "failure_trace", None)
    repair_time = getattr(args, "repair_time", None)
    if path is None:
        given = [f for f in TRACE_FLAGS if getattr(args, f, None) not in (None, False)]
        if given:
            raise ValueError(f"{', '.join('--' + f.replace('_', '-') for f in given)} go(es) with --failure-trace")
        if repair_time == "trace" or (isinstance(repair_time, list) and "trace" in repair_time):
            raise ValueError("--repair-time trace goes with --failure-trace (repair at the end of each down period)")
        return None
    from ..model.trace import read_trace
    from ..planner.trace_replay import TraceOptions

    rate_flags = {"mtbf": "--reference-mtbf-min", "group_mtbf": "--group-mtbf-min", "gpu_mtbf_hours": "--gpu-mtbf-hours",
                  "group_mtbf_file": "--group-mtbf-file", "weibull_shape": "--weibull-shape",
                  "ages": "--ages"}
    named = [flag for dest, flag in rate_flags.items() if dest in getattr(args, "given", set())]
    if named:
        raise ValueError(f"{', '.join(named)}: not used with --failure-trace (the trace's down periods are the "
                         "failures); drop it")

    try:  # the file checked before any work (the replay reads it again)
        read_trace(path)
    except ValueError as exc:
        raise ValueError(f"--failure-trace: {exc}") from None
    if isinstance(repair_time, list):
        if len(repair_time) > 1:
            raise ValueError("--repair-time with --failure-trace takes one value (trace or a number of minutes), "
                             "not a list to search")
        repair_time = args.repair_time = repair_time[0]
    if args.no_repair and repair_time is not None:
        raise ValueError("--no-repair and --repair-time: give one of them")
    if repair_time == "trace":
        args.repair_time = None
    repair = "none" if args.no_repair else ("trace" if repair_time in (None, "trace") else "fixed")
    unit = args.trace_unit or "group"
    npg = getattr(args, "trace_nodes_per_group", None)
    if npg is not None and unit != "node":
        raise ValueError("--trace-nodes-per-group goes with --trace-unit node")
    return TraceOptions(path, unit, 1 if npg is None else npg,
                        1.0 if args.trace_time_scale is None else args.trace_time_scale, repair,
                        10.0 if args.burst_window is None else args.burst_window)
