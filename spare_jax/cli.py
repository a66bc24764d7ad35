"""The ``spare-jax`` command line (SPEC §6).

Every subcommand takes ``--json`` (one JSON object on stdout, nothing else there) and prints a readable
table otherwise. Progress bars go to stderr. Bad input: exit code 2 and one line on stderr, no traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
import warnings

from .bounds import BOUNDS, GROUP_MTBF_RANGE
from .bounds import check as check_bound
from .bounds import describe as describe_bound
from .bounds import flag as bounds_flag

EXIT_BAD_INPUT = 2


class CLIError(Exception):
    """Bad input at the command line: printed as one line, exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one clear line, exit 2 (argparse prints usage + message otherwise)
        raise CLIError(f"{self.prog}: {message}")


_INT_TEXT = re.compile(r"[+-]?[0-9]+", re.ASCII)
_FLOAT_TEXT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", re.ASCII)


def _bounded(bound, flag=None):
    """An argparse type for the setting ``bound`` of ``bounds.BOUNDS`` (ASCII digits only, in range)."""
    kind = BOUNDS[bound][0]
    flag = flag or bounds_flag(bound)

    def parse(text):
        text = str(text).strip()
        if kind == "int":
            if not _INT_TEXT.fullmatch(text):
                raise argparse.ArgumentTypeError(f"{flag} must be an integer, got {text!r}")
            value = int(text)
        else:
            if not _FLOAT_TEXT.fullmatch(text):
                raise argparse.ArgumentTypeError(f"{flag} must be a finite number, got {text!r}")
            value = float(text)
        try:
            return check_bound(bound, value, flag)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.kind = kind
    return parse


def _help(text, bound):
    return f"{text}; {describe_bound(bound)}"


def _common(p, *, trials: int | None = 100_000, placement=True, redundancy: int | None = 8, groups: int = 600,
            seed=True, trials_bound="trials"):
    p.add_argument("-N", "--groups", type=_bounded("groups"), default=groups,
                   help=_help(f"data-parallel groups N (default {groups})", "groups"))
    if redundancy is not None:
        p.add_argument("-r", "--redundancy", type=_bounded("redundancy"), default=redundancy,
                       help=_help(f"redundancy r: shards per stack and holders per shard (default {redundancy})",
                                  "redundancy"))
    if placement:
        p.add_argument("--placement", choices=("stacked", "block", "random"), default="stacked",
                       help="shard placement (default stacked)")
    if trials is not None:
        p.add_argument("--trials", type=_bounded(trials_bound, "--trials"), default=trials,
                       help=_help(f"Monte Carlo trials (default {trials})", trials_bound))
    if seed:
        p.add_argument("--seed", type=_bounded("seed"), default=0, help=_help("PRNG seed (default 0)", "seed"))
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _failure_args(p):
    p.add_argument("--mtbf", type=_bounded("mtbf"), default=5.0,
                   help=_help("system MTBF in minutes at the reference cluster size (default 5 at 600k GPUs; "
                              "the per-group MTBF mtbf*reference-gpus/gpus-per-group must lie in "
                              f"{GROUP_MTBF_RANGE[0]:g}..{GROUP_MTBF_RANGE[1]:g} min)", "mtbf"))
    p.add_argument("--gpus-per-group", type=_bounded("gpus_per_group"), default=1000.0,
                   help=_help("GPUs per data-parallel group (default 1000)", "gpus_per_group"))
    p.add_argument("--reference-gpus", type=_bounded("reference_gpus"), default=600_000.0,
                   help=_help("GPU count at which --mtbf is quoted (default 600000)", "reference_gpus"))
    p.add_argument("--distribution", choices=("exponential", "weibull"), default="exponential")
    p.add_argument("--weibull-shape", type=_bounded("weibull_shape"), default=1.0,
                   help=_help("Weibull shape k (same mean per group)", "weibull_shape"))


def _scenario_args(p):
    """The ``Scenario`` flags (SPEC §10.1-10.4); a ``[scenario]`` table in ``--config`` sets the same keys,
    plus ``domains = [{size = G, mtbf = MIN}, ...]`` for several levels. Off by default (the §1 model)."""
    g = p.add_argument_group("scenario (SPEC §10; default: the paper's i.i.d. model)")
    g.add_argument("--job-mtbf", type=_bounded("job_mtbf"), default=None,
                   help=_help("mean minutes between job-wide interruptions that no redundancy masks (default off)",
                              "job_mtbf"))
    g.add_argument("--job-fraction", type=_bounded("job_fraction"), default=None,
                   help=_help("or: the fraction of all interruptions that is job-wide (default off)", "job_fraction"))
    g.add_argument("--domain-size", type=_bounded("domain_size"), default=None,
                   help=_help("groups per failure domain (contiguous physical ids; default: no domains)",
                              "domain_size"))
    g.add_argument("--domain-mtbf", type=_bounded("domain_mtbf"), default=None,
                   help=_help("MTBF of one failure domain in minutes (with --domain-size)", "domain_mtbf"))
    g.add_argument("--ring", default=None,
                   help="ring order of the stacked placement: contiguous (default), interleaved (across the "
                        "domains) or a file of physical group ids in ring order")
    g.add_argument("--lemon-fraction", type=_bounded("lemon_fraction"), default=None,
                   help=_help("fraction of groups that are lemons (default 0)", "lemon_fraction"))
    g.add_argument("--lemon-factor", type=_bounded("lemon_factor"), default=None,
                   help=_help("how many times as often a lemon fails (default 1)", "lemon_factor"))
    g.add_argument("--lemon-seed", type=_bounded("lemon_seed"), default=None,
                   help=_help("which groups are lemons (default 0)", "lemon_seed"))
    g.add_argument("--group-mtbf-file", default=None,
                   help="per-group MTBFs in minutes, one per physical group (overrides --mtbf and lemons)")
    p.set_defaults(scenario_domains=None)


def _scenario(args, groups: int):
    """The ``Scenario`` of the flags (and of a ``[scenario]`` table), validated against N."""
    from .scenario import RINGS, DomainLevel, Scenario, read_group_mtbf_file, read_ring_file

    domains = list(args.scenario_domains or [])
    if (args.domain_size is None) != (args.domain_mtbf is None):
        raise ValueError("--domain-size and --domain-mtbf go together")
    if args.domain_size is not None:
        domains = [DomainLevel(args.domain_size, args.domain_mtbf)]
    ring = args.ring or "contiguous"
    if ring not in RINGS:
        ring = read_ring_file(ring)
    if args.job_mtbf is not None and args.job_fraction is not None:
        raise ValueError("--job-mtbf and --job-fraction: give one of them")
    if (args.lemon_fraction or 0) > 0 and args.lemon_factor is None:
        raise ValueError("--lemon-fraction needs --lemon-factor")
    scenario = Scenario(job_mtbf_min=args.job_mtbf, job_fraction=args.job_fraction or None,
                        domains=tuple(domains), ring=ring, lemon_fraction=args.lemon_fraction or 0.0,
                        lemon_factor=1.0 if args.lemon_factor is None else args.lemon_factor,
                        lemon_seed=args.lemon_seed or 0,
                        group_mtbf_min=None if args.group_mtbf_file is None else
                        read_group_mtbf_file(args.group_mtbf_file))
    scenario.check(groups)
    scenario.ring_order(groups)  # e.g. 'interleaved' without domains
    return scenario


def _scenario_table(section, path):
    """``[scenario]`` of a config file: flag settings, plus ``domains`` (a list of {size, mtbf[, name]})."""
    from .scenario import DomainLevel

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


def _run_args(p):
    p.add_argument("--chunk-size", type=_bounded("chunk_size"), default=None,
                   help=_help("trials per chunk (default: chosen from the working-set size; refused when "
                              "its working set exceeds half the RAM)", "chunk_size"))
    p.add_argument("--devices", type=_bounded("devices"), default=None,
                   help="JAX devices to shard trials over (default: all)")
    p.add_argument("--out", default=None, help="directory for per-chunk results; re-running resumes (locked "
                   "while a run uses it)")
    p.add_argument("--distributed", action="store_true",
                   help="call jax.distributed.initialize() first (multi-host; configured by the environment)")


def _model(args):
    from .failures import FailureModel

    group_mtbf = args.mtbf * args.reference_gpus / args.gpus_per_group
    if not GROUP_MTBF_RANGE[0] <= group_mtbf <= GROUP_MTBF_RANGE[1]:
        raise ValueError(f"--mtbf x --reference-gpus / --gpus-per-group (the per-group MTBF) must be in "
                         f"{GROUP_MTBF_RANGE[0]:g}..{GROUP_MTBF_RANGE[1]:g} min, got {group_mtbf:g}")
    return FailureModel(args.distribution, args.mtbf, args.reference_gpus, args.gpus_per_group,
                        args.weibull_shape)


def _fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        if v == 0 or 1e-3 <= abs(v) < 1e7:
            return f"{v:.6g}"
        return f"{v:.4e}"
    if isinstance(v, (list, tuple)):
        return ", ".join(_fmt(x) for x in v)
    if isinstance(v, dict):
        return "; ".join(f"{k}={_fmt(x)}" for k, x in v.items())
    return str(v)


def print_table(title: str, rows: dict, out=None) -> None:
    out = out or sys.stdout
    width = max(len(k) for k in rows) if rows else 0
    print(title, file=out)
    print("-" * max(len(title), 20), file=out)
    for k, v in rows.items():
        print(f"  {k:<{width}}  {_fmt(v)}", file=out)


def emit(args, title: str, result: dict) -> None:
    if args.json:
        print(json.dumps(strict_json(result), allow_nan=False))
    else:
        print_table(title, {k: v for k, v in result.items()
                            if not (isinstance(v, list) and len(v) > 8 or k == "per_event")})


def _json_default(o):
    import numpy as np

    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return None if not np.isfinite(o) else float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o)}")


def strict_json(o):
    """A copy of ``o`` that ``json.dumps(..., allow_nan=False)`` accepts: numpy scalars and arrays become
    Python values, NaN and +-inf become None (strict JSON has no NaN/Infinity)."""
    import numpy as np

    if isinstance(o, dict):
        return {str(k): strict_json(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [strict_json(v) for v in o]
    if isinstance(o, np.ndarray):
        return strict_json(o.tolist())
    if isinstance(o, (bool, np.bool_)):
        return bool(o)
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (float, np.floating)):
        return float(o) if math.isfinite(o) else None
    if o is None or isinstance(o, (int, str)):
        return o
    return _json_default(o)


def _clean(v):
    """NaN/inf -> None so that --json is strict JSON."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


# --------------------------------------------------------------------------------------------------------
def _check_work_inputs(args, width: int, bytes_per_item: int) -> None:
    """Up front, before any work: the chunk's working set fits the memory and ``--out`` can hold a run."""
    from .bounds import chunk_bytes, memory_budget_bytes

    budget = memory_budget_bytes()
    chunk = getattr(args, "chunk_size", None)
    if chunk is not None and chunk_bytes(chunk, width, bytes_per_item) > budget:
        fit = budget // chunk_bytes(1, width, bytes_per_item)
        raise ValueError(f"--chunk-size {chunk}: a chunk needs about "
                         f"{chunk_bytes(chunk, width, bytes_per_item) / 2**30:.3g} GiB here, more than half the RAM "
                         f"({budget / 2**30:.3g} GiB); use at most {fit}")
    if chunk_bytes(64, width, bytes_per_item) > budget:
        raise ValueError(f"--groups {args.groups} (with --redundancy): even a 64-trial chunk needs about "
                         f"{chunk_bytes(64, width, bytes_per_item) / 2**30:.3g} GiB, more than half the RAM")
    if getattr(args, "out", None) is not None:
        from .driver import ChunkStore

        ChunkStore.check_dir(args.out)


def _simulate(args, simulate, width: int, bytes_per_item: int):
    """Build the placement and model from the flags and run a chunked Monte Carlo driver."""
    from .placement import check_groups_redundancy, make_placement

    model = _model(args)
    check_groups_redundancy(args.groups, args.redundancy)
    scenario = _scenario(args, args.groups)
    _check_work_inputs(args, width, bytes_per_item)
    placement = make_placement(args.placement, args.groups, args.redundancy, seed=args.seed)
    t0 = time.perf_counter()
    res = simulate(placement, args.trials, args.seed, model=model, chunk_size=args.chunk_size,
                   devices=args.devices, progress=not args.quiet, out_dir=args.out, scenario=scenario)
    args.scenario_obj = scenario
    return model, placement, res, time.perf_counter() - t0


def cmd_wipeout(args) -> dict:
    from . import theory
    from .wipeout import simulate_wipeout

    from .scenario import job_wide_uptime, single_domain_wipeout_fraction

    model, placement, res, elapsed = _simulate(args, simulate_wipeout, args.groups, 16)
    scenario = args.scenario_obj
    # the §1 theory holds where the scenario changes nothing but the ring order (i.i.d. groups, no domains);
    # job-wide failures compose exactly with it for E[uptime]
    iid = not scenario.domains and not scenario.uneven
    paper = iid and scenario.job_rate_per_min(placement.groups, model.group_mtbf_min) == 0
    surv = theory.survival_exact(placement.kind, placement.groups, placement.redundancy)
    exact_mean, exact_var = (None, None) if surv is None or not paper else theory.moments_from_survival(surv)
    asym = theory.expected_failures_asymptotic(placement.kind, placement.groups, placement.redundancy)
    ref = exact_mean if exact_mean is not None else (asym if paper else None)
    z = None if ref is None else (
        (res.mean - ref) / res.stderr if res.stderr > 0 else (0.0 if res.mean == ref else math.inf))
    up_theory, p_job_theory = None, None
    if model.distribution == "exponential" and iid:
        surv_any = surv if surv is not None else theory.survival_poisson(placement.kind, placement.groups,
                                                                        placement.redundancy)
        up_theory, p_job_theory = job_wide_uptime(surv_any, placement.groups, model.group_rate_per_min,
                                                  scenario.job_rate_per_min(placement.groups, model.group_mtbf_min))
    extra = {}
    if not scenario.is_default:
        extra = {"scenario": scenario.describe(),
                 "p_epoch_end_job_wide": res.ended_by_job / res.trials,
                 "theory_p_epoch_end_job_wide": p_job_theory if iid else None,
                 "p_wipeout_by_domain": res.fatal_by_domain / res.trials,
                 "single_domain_wipeout_fraction": single_domain_wipeout_fraction(scenario, placement)}
    return {
        "groups": placement.groups, "redundancy": placement.redundancy, "placement": placement.kind,
        "trials": res.trials, "seed": res.seed,
        "mc_mean": res.mean, "mc_stderr": res.stderr,
        "theory_exact": exact_mean, "theory_asymptotic": asym if paper else None, "z_score": _clean(z),
        "z_against": "exact" if exact_mean is not None else ("asymptotic" if paper else None),
        "mc_std": math.sqrt(res.var), "theory_std": None if exact_var is None else math.sqrt(exact_var),
        "endurable_failures_mean": res.mean - 1,
        "mc_quantiles": {"p01": res.quantile(0.01), "p50": res.quantile(0.5), "p99": res.quantile(0.99)},
        "distribution": model.distribution,
        "mc_epoch_uptime_min": res.uptime_mean_min, "mc_epoch_uptime_stderr_min": res.uptime_stderr_min,
        "theory_epoch_uptime_min": up_theory, **extra,
        "cluster_mtbf_min": model.cluster_mtbf_min(placement.groups),
        "chunk_size": res.chunk_size, "devices": res.devices,
        "elapsed_s": elapsed, "trials_per_s": res.trials / elapsed if elapsed > 0 else None,
    }


def cmd_overhead(args) -> dict:
    from . import theory
    from .overhead import simulate_overhead

    if args.placement == "random":  # the host matcher path: no chunks, devices or resumable --out
        given = [f for f, v in (("--chunk-size", args.chunk_size), ("--devices", args.devices), ("--out", args.out),
                                ("--distributed", args.distributed)) if v not in (None, False)]
        if given:
            raise ValueError(f"{', '.join(given)}: not used by overhead --placement random (it runs on the host, "
                             "unchunked); drop the flag or use stacked/block")
    model, placement, res, elapsed = _simulate(args, simulate_overhead, args.groups * args.redundancy, 8)
    scenario = args.scenario_obj
    paper = not scenario.domains and not scenario.uneven and not scenario.job_rate_per_min(
        placement.groups, model.group_mtbf_min)
    th = None
    if placement.kind in ("stacked", "block") and model.distribution == "exponential" and paper:
        exact_k = placement.groups <= theory.EXACT_DP_MAX_N
        th = (theory.overhead_theory if exact_k else theory.overhead_theory_any_n)(
            placement.kind, placement.groups, placement.redundancy)
    hist = res.depth_at_wipeout_hist
    return {
        "groups": placement.groups, "redundancy": placement.redundancy, "placement": placement.kind,
        "trials": res.trials, "seed": res.seed,
        "mc_overhead": res.overhead, "mc_overhead_stderr": res.overhead_stderr,
        "mc_time_avg_depth": res.time_avg_depth, "mc_time_avg_depth_stderr": res.time_avg_depth_stderr,
        "theory_overhead": None if th is None else th["overhead"],
        "theory_time_avg_depth": None if th is None else th["time_avg_depth"],
        "rep_overhead": float(placement.redundancy),
        "mc_overhead_sampled_sojourns": res.overhead_sampled,
        "mc_overhead_sampled_sojourns_stderr": res.overhead_sampled_stderr,
        "z_score": None if th is None else _clean((res.overhead - th["overhead"]) / res.overhead_stderr
                                                    if res.overhead_stderr > 0 else 0.0),
        "depth_at_wipeout": {str(d): int(c) for d, c in enumerate(hist) if c},
        "mean_depth_thresholds": [float(x) for x in res.threshold_mean],
        "distribution": model.distribution,
        **({} if scenario.is_default else {"scenario": scenario.describe(),
                                           "mc_epoch_uptime_min": res.uptime_mean_min}),
        "elapsed_s": elapsed, "trials_per_s": res.trials / elapsed if elapsed > 0 else None,
    }


def cmd_reorder(args) -> dict:
    from .placement import make_placement
    from .reorder import parse_failed_list, read_trace, replay

    placement = make_placement(args.placement, args.groups, args.redundancy, seed=args.seed)
    if (args.failed is None) == (args.trace is None):
        raise ValueError("reorder needs exactly one of --failed LIST or --trace FILE")
    times = None
    if args.trace is not None:
        failed, times = read_trace(args.trace)
    else:
        failed = parse_failed_list(args.failed)
    records, ctl = replay(placement, failed, times, solver=args.solver)
    last = records[-1]
    ignored = len(failed) - len(records)
    return {
        "depth": last.depth, "phase": last.phase, "moved": last.moved, "moved_naive": last.moved_naive,
        "wiped_out": last.wiped_out, "lost_shards": last.lost_shards, "latency_ms": last.latency_ms,
        "groups": placement.groups, "redundancy": placement.redundancy, "placement": placement.kind,
        "solver": args.solver, "events": len(records), "ignored_after_wipeout": ignored,
        "total_moved": sum(r.moved for r in records), "total_moved_naive": sum(r.moved_naive for r in records),
        "phases": {str(p): sum(1 for r in records if r.phase == p) for p in (0, 2, -1)
                   if any(r.phase == p for r in records)},
        "per_event": [{"group": r.group, "phase": r.phase, "depth": r.depth, "moved": r.moved,
                       "moved_naive": r.moved_naive, "latency_ms": round(r.latency_ms, 3),
                       **({"time_min": r.time_min} if r.time_min is not None else {})} for r in records],
    }


def _training_args(p):
    p.add_argument("--work-hours", type=_bounded("work_hours"), default=720.0,
                   help=_help("failure-free work W in hours at depth 1 (default 720)", "work_hours"))
    p.add_argument("--ckpt-cost", type=_bounded("ckpt_cost"), default=5.0,
                   help=_help("blocking checkpoint cost C in minutes (default 5)", "ckpt_cost"))
    p.add_argument("--restart", type=_bounded("restart"), default=60.0,
                   help=_help("global restart cost R in minutes at the reference size (default 60)", "restart"))
    p.add_argument("--restart-scaling", choices=("none", "linear", "quadratic"), default="none",
                   help="restart cost vs GPU count relative to --reference-gpus (default none)")


def _ages_arg(p):
    p.add_argument("--ages", choices=("kept", "renewed"), default="kept",
                   help="at a global restart only failed groups are replaced; survivors keep their age (kept, "
                        "default) or every clock restarts (renewed); identical for exponential failures")


def _training(args):
    from .ttt import TrainingConfig

    return TrainingConfig(args.work_hours, args.ckpt_cost, args.restart, args.restart_scaling,
                          args.reference_gpus)


def _check_ttt_feasible(args, cfg, r, tau, gpus, epochs, prof, th) -> None:
    """Refuse, before sampling, runs that would need more than ``TTT_EPOCHS_MAX`` epochs or more than
    ``TTT_CELLS_MAX`` epochs x N x r of sampling: the closed form ``th`` on the profile ``prof`` (for Weibull
    with kept ages: the renewed model's, an estimate) gives the restarts per run; ``epochs`` is the pool the
    MC would sample."""
    from .bounds import TTT_CELLS_MAX, TTT_CKPTS_MAX, TTT_EPOCHS_MAX

    need = args.trials * (th["expected_restarts"] + 1.0)
    width = args.groups * max(r, 2)
    ckpts = 25.0 * prof.mean_uptime_min / (tau + cfg.ckpt_cost_min)  # checkpoints in a long (tail) epoch
    if ckpts > TTT_CKPTS_MAX:
        raise ValueError(f"--ckpt-interval {tau:g} (+ --ckpt-cost {cfg.ckpt_cost_min:g}) is too short for epochs of "
                         f"{prof.mean_uptime_min:.3g} min on average: a long epoch would hold about {ckpts:.3g} "
                         f"checkpoints (limit {TTT_CKPTS_MAX:.3g}); use a longer interval")
    if math.isfinite(need) and need <= TTT_EPOCHS_MAX and max(need, epochs) * width > TTT_CELLS_MAX:
        raise ValueError(f"ttt: {args.trials} run(s) would sample about {max(need, epochs):.3g} epochs of "
                         f"N x r = {width} failure times, over the limit of {TTT_CELLS_MAX:.3g} (minutes of work); "
                         "lower --trials")
    if not (math.isfinite(need) and need <= TTT_EPOCHS_MAX):
        ttt_h = th["ttt_hours"]
        why = (f"the closed form gives TTT = {ttt_h:.3g} h per run" if math.isfinite(ttt_h) else
               "no checkpoint completes in a typical epoch (the closed form gives TTT = inf)")
        raise ValueError(f"ttt: {args.trials} run(s) would need about {need:.3g} epochs (limit {TTT_EPOCHS_MAX:,}): "
                         f"{why} with --ckpt-interval {tau:g}, --ckpt-cost {cfg.ckpt_cost_min:g}, --restart "
                         f"{cfg.restart_for(gpus):g}, --work-hours {cfg.work_hours:g}, mean epoch uptime "
                         f"{prof.mean_uptime_min:.3g} min; lower --trials or --work-hours or change the others")


def cmd_ttt(args) -> dict:
    from . import ttt

    model, cfg = _model(args), _training(args)
    kind, r = ttt.scheme_placement(args.scheme, args.groups, args.redundancy)
    from .placement import check_groups_redundancy

    check_groups_redundancy(args.groups, r)
    _check_work_inputs(args, args.groups * max(r, 2), 8)
    gpus = args.groups * model.gpus_per_group
    theory_ttt, tau, yd, renewed_ttt = None, args.ckpt_interval, None, None
    # closed form: exponential (kept = renewed) or renewed ages; Weibull with kept ages: the renewed model's
    # closed form gives the default tau and a reference number, the Monte Carlo the answer
    kept = model.distribution != "exponential" and args.ages == "kept"
    prof = ttt.epoch_profile(args.scheme, args.groups, r, model, ages="renewed" if kept else args.ages)
    if tau is None:
        tau = ttt.best_tau_grid(prof, cfg, gpus)[0]
    th = ttt.ttt_theory(prof, tau, cfg, gpus)
    if kept:
        renewed_ttt = th["ttt_hours"]
    else:
        theory_ttt = th["ttt_hours"]
        yd = ttt.young_daly(prof, cfg, gpus)
    rate_guess = 1 / th["ttt_over_w"] / th["availability"]
    _check_ttt_feasible(args, cfg, r, tau, gpus, ttt.epochs_needed(prof.mean_uptime_min, cfg, args.trials, rate_guess),
                        prof, th)
    t0 = time.perf_counter()
    mc, pool = ttt.simulate_ttt_runs(args.scheme, args.groups, r, args.trials, tau, cfg, model, gpus, args.seed,
                                     args.ages, prof.mean_uptime_min, rate_guess, progress=not args.quiet)
    half = 1.96 * mc["ttt_stderr_hours"]
    return {
        "scheme": args.scheme, "groups": args.groups, "redundancy": r, "placement": kind,
        "ckpt_interval_min": tau, "trials": mc["runs"],
        "mc_ttt_hours": mc["ttt_hours"], "mc_ttt_stderr_hours": mc["ttt_stderr_hours"],
        "mc_ttt_ci95_hours": [mc["ttt_hours"] - half, mc["ttt_hours"] + half],
        "theory_ttt_hours": theory_ttt, "availability": mc["availability"], "goodput": mc["goodput"],
        "ttt_over_w": mc["ttt_hours"] / cfg.work_hours, "restarts_mean": mc["restarts_mean"],
        "lost_uptime_hours_mean": mc["lost_uptime_hours_mean"],
        "young_interval_min": None if yd is None else yd["young_min"],
        "daly_interval_min": None if yd is None else yd["daly_min"],
        "work_hours": cfg.work_hours, "ckpt_cost_min": cfg.ckpt_cost_min, "restart_min": cfg.restart_for(gpus),
        "epochs_sampled": int(pool.uptime.size), "distribution": model.distribution,
        "ages": args.ages, "renewed_theory_ttt_hours": renewed_ttt,
        "mc_mean_epoch_uptime_min": float(pool.uptime.mean()),
        "elapsed_s": time.perf_counter() - t0,
    }


def cmd_optimize(args) -> dict:
    from . import ttt

    res = ttt.optimize(args.groups, args.r_max, _model(args), _training(args), progress=not args.quiet,
                       ages=args.ages)
    if not args.curves:
        res.pop("curves")
    return res


def cmd_bench(args) -> dict:
    from .bench import run_bench
    from .placement import check_groups_redundancy

    check_groups_redundancy(args.groups, args.redundancy)
    _check_work_inputs(args, args.groups, 16)
    from .bounds import chunk_bytes, memory_budget_bytes

    if chunk_bytes(1024, args.groups * args.redundancy, 8) > memory_budget_bytes():  # bench's overhead chunk
        raise ValueError(f"--groups {args.groups} x --redundancy {args.redundancy}: the overhead kernel's "
                         "1024-trial chunk does not fit half the RAM; lower either")
    seconds = 10.0 if args.full else 3.0
    return run_bench(args.groups, args.redundancy, seconds=seconds, des_trials=200 if args.full else 60,
                     devices=args.devices, chunk_size=args.chunk_size)


def cmd_run(args) -> dict:
    import os

    from .suite import format_summary, run_suite

    out = args.out_dir
    if os.path.exists(out) and not os.path.isdir(out):
        raise ValueError(f"--out-dir {out} exists and is not a directory")
    parent = out if os.path.isdir(out) else os.path.dirname(os.path.abspath(out))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent) or not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"--out-dir {out}: {parent} is not a writable directory")
    summary = run_suite(args.out_dir, quick=args.quick, seed=args.seed, progress=not args.quiet)
    if not args.json:
        print(format_summary(summary))
        args.printed = True
    return summary


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="spare-jax", description="SPARe reliability engine: wipe-out, depth, overhead, "
                     "reordering and time-to-train for 100k-1M GPU pretraining.")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    p = sub.add_parser("run", help="the main job: the default experiment suite, figures and a summary table")
    p.add_argument("--quick", action="store_true", help="a small version (about 2-3 minutes on 2 cores)")
    p.add_argument("--out-dir", default="figures", help="where figures and data go (default figures/)")
    p.add_argument("--seed", type=_bounded("seed"), default=0, help=_help("PRNG seed (default 0)", "seed"))
    p.add_argument("--json", action="store_true")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_run, title="spare-jax run: summary")

    p = sub.add_parser("wipeout", help="failures endured before a wipe-out: Monte Carlo vs exact theory")
    _common(p)
    _failure_args(p)
    _scenario_args(p)
    _run_args(p)
    p.set_defaults(func=cmd_wipeout, title="Failures to wipe-out T (fatal failure included)")

    p = sub.add_parser("overhead", help="compute overhead of SPARe with adaptive reordering vs replication")
    _common(p, trials=20_000)
    _failure_args(p)
    _scenario_args(p)
    _run_args(p)
    p.set_defaults(func=cmd_overhead, title="Compute overhead Omega = E[uptime] / E[useful work]")
    p = sub.add_parser("ttt", help="time-to-train with checkpointing: Monte Carlo and closed form")
    _common(p, trials=200, placement=False, trials_bound="ttt_trials")
    _failure_args(p)
    _training_args(p)
    p.add_argument("--scheme", choices=("spare", "rep", "none"), default="spare")
    p.add_argument("--ckpt-interval", type=_bounded("ckpt_interval"), default=None,
                   help=_help("checkpoint interval tau in minutes of compute (default: the closed-form optimum)",
                              "ckpt_interval"))
    _ages_arg(p)
    p.set_defaults(func=cmd_ttt, title="Time-to-train (trials = training runs)")

    p = sub.add_parser("optimize", help="best redundancy r* and checkpoint interval per scheme (closed form)")
    _common(p, trials=None, placement=False, redundancy=None, seed=False)  # r is searched; no randomness
    _failure_args(p)
    _training_args(p)
    p.add_argument("--r-max", type=_bounded("r_max"), default=20,
                   help=_help("largest r searched (default 20)", "r_max"))
    p.add_argument("--curves", action="store_true", help="include TTT(r) per scheme in the output")
    _ages_arg(p)
    p.set_defaults(func=cmd_optimize, title="Optimal redundancy and checkpoint interval per scheme")

    p = sub.add_parser("bench", help="kernel throughput against NumPy and a SimPy discrete-event simulation")
    _common(p, trials=None, placement=False, seed=False)  # run_bench takes no seed
    p.add_argument("--full", action="store_true", help="longer, steadier measurements")
    p.add_argument("--chunk-size", type=_bounded("chunk_size"), default=None,
                   help=_help("trials per kernel call (default: the driver's choice; larger on accelerators)",
                              "chunk_size"))
    p.add_argument("--devices", type=_bounded("devices"), default=None)
    p.set_defaults(func=cmd_bench, title="Benchmark (same machine, same run)")

    p = sub.add_parser("reorder", help="replay a failure trace through the reorder controller (RECTLR)")
    _common(p, trials=None)
    p.add_argument("--failed", default=None, help="failed group ids in failure order, e.g. 3,17,4")
    p.add_argument("--trace", default=None, help="trace file: CSV 'group[,time_min]' or JSON lines")
    p.add_argument("--solver", choices=("ortools", "networkx", "scipy"), default="ortools",
                   help="min-cost-flow backend for phase 2 (default ortools)")
    p.set_defaults(func=cmd_reorder, title="Reorder controller: state after the last failure")
    return parser


def _config_value(action, key, value):
    """A TOML value checked like the flag it stands for: booleans for switches, numbers (not booleans)
    for numeric settings, strings for the rest."""
    if isinstance(action, argparse._StoreTrueAction):
        if not isinstance(value, bool):
            raise ValueError(f"--config: {key} must be true or false, got {value!r}")
        return value
    kind = getattr(action.type, "kind", None)
    if kind is not None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"--config: {key} must be a number, got {value!r}")
        if kind == "int":
            if isinstance(value, float):
                if not value.is_integer():
                    raise ValueError(f"--config: {key} must be an integer, got {value!r}")
                value = int(value)
            text = str(value)
        else:
            text = repr(float(value)) if math.isfinite(value) else str(value)
        try:
            return action.type(text)
        except argparse.ArgumentTypeError as exc:
            raise ValueError(f"--config: {exc}") from None
    if not isinstance(value, str):
        raise ValueError(f"--config: {key} must be a string, got {value!r}")
    if action.choices is not None and value not in action.choices:
        raise ValueError(f"--config: {key} must be one of {', '.join(map(str, action.choices))}, got {value!r}")
    return value


def _apply_config(parser, argv):
    """``--config FILE.toml``: set the subcommand's defaults from the file; flags on the line win."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--config" not in argv and not any(a.startswith("--config=") for a in argv):
        return argv
    path = None
    rest = []
    it = iter(range(len(argv)))
    for i in it:
        a = argv[i]
        if a == "--config":
            if i + 1 >= len(argv):
                raise CLIError("spare-jax: error: --config needs a file")
            path = argv[i + 1]
            next(it, None)
        elif a.startswith("--config="):
            path = a.split("=", 1)[1]
        else:
            rest.append(a)
    try:
        import tomllib
    except ModuleNotFoundError:  # pragma: no cover - Python < 3.11
        import tomli as tomllib
    try:
        with open(path, "rb") as fh:
            cfg = tomllib.load(fh)
    except OSError as exc:
        raise ValueError(f"--config: cannot read {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"--config: {path} is not valid TOML: {exc}") from None
    command = next((a for a in rest if not a.startswith("-")), None)
    subs = parser._subparsers._group_actions[0].choices
    sub = subs.get(command) if command else None
    if sub is None:
        raise ValueError("--config needs a subcommand (e.g. spare-jax run --config run.toml)")
    for key, value in cfg.items():
        if isinstance(value, dict) and key not in subs and key != "scenario":
            raise ValueError(f"--config: unknown section [{key}] in {path} (sections: scenario, {', '.join(subs)})")
    # top-level keys apply to every subcommand; the subcommand's own table wins over them
    known = {a.dest: a for a in sub._actions}
    defaults = {}
    tables = [{k: v for k, v in cfg.items() if not isinstance(v, dict)}]
    if "scenario" in cfg:
        if "job_mtbf" not in known:
            raise ValueError(f"--config: 'spare-jax {command}' takes no [scenario]")
        scenario_table, levels = _scenario_table(cfg["scenario"], path)
        tables.append(scenario_table)
        if levels is not None:
            defaults["scenario_domains"] = levels
    tables.append(cfg.get(command, {}))
    for table in tables:
        seen = {}
        for key, value in table.items():
            dest = key.replace("-", "_")
            if dest not in known or dest in ("help", "func", "title"):
                where = (f"[{command}]" if table is cfg.get(command) else
                         "[scenario]" if table is not tables[0] else "the top level")
                raise ValueError(f"--config: unknown setting {key!r} for 'spare-jax {command}' (in {where})")
            if dest in seen:
                raise ValueError(f"--config: {key!r} and {seen[dest]!r} set the same thing")
            seen[dest] = key
            defaults[dest] = _config_value(known[dest], key, value)
    sub.set_defaults(**defaults)
    return rest


def main(argv=None) -> int:
    parser = build_parser()
    try:
        argv = _apply_config(parser, argv)
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help(sys.stderr)
            return EXIT_BAD_INPUT
        if getattr(args, "distributed", False):
            from .driver import initialize_distributed

            initialize_distributed()
        with warnings.catch_warnings():  # numerics at the edges of the bounds: results carry None, not noise
            warnings.simplefilter("ignore", RuntimeWarning)
            result = args.func(args)
        if not getattr(args, "printed", False):
            emit(args, args.title, result)
        return 0
    except (CLIError, ValueError) as exc:
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
        if not msg.startswith("spare-jax"):
            msg = f"spare-jax: error: {msg}"
        print(msg, file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # e.g. piped into head
        return 0
    except KeyboardInterrupt:
        print("spare-jax: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
