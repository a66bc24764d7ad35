"""The ``spare-jax`` command line (SPEC §6).

Every subcommand takes ``--json`` (one JSON object on stdout, nothing else there) and prints a readable
table otherwise. Progress bars go to stderr. Bad input: exit code 2 and one line on stderr, no traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

EXIT_BAD_INPUT = 2


class CLIError(Exception):
    """Bad input at the command line: printed as one line, exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one clear line, exit 2 (argparse prints usage + message otherwise)
        raise CLIError(f"{self.prog}: {message}")


def _positive_float(name):
    def parse(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}") from None
        if not math.isfinite(v) or v <= 0:
            raise argparse.ArgumentTypeError(f"{name} must be a positive finite number, got {text!r}")
        return v

    return parse


def _nonneg_float(name):
    def parse(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}") from None
        if not math.isfinite(v) or v < 0:
            raise argparse.ArgumentTypeError(f"{name} must be a finite number >= 0, got {text!r}")
        return v

    return parse


def _int_at_least(name, lo):
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer, got {text!r}") from None
        if v < lo:
            raise argparse.ArgumentTypeError(f"{name} must be >= {lo}, got {v}")
        return v

    return parse


def _common(p, *, trials: int | None = 100_000, placement=True, redundancy: int = 8, groups: int = 600):
    p.add_argument("-N", "--groups", type=_int_at_least("--groups", 1), default=groups,
                   help=f"data-parallel groups N (default {groups})")
    p.add_argument("-r", "--redundancy", type=_int_at_least("--redundancy", 1), default=redundancy,
                   help=f"redundancy r: shards per stack and holders per shard (default {redundancy})")
    if placement:
        p.add_argument("--placement", choices=("stacked", "block", "random"), default="stacked",
                       help="shard placement (default stacked)")
    if trials is not None:
        p.add_argument("--trials", type=_int_at_least("--trials", 1), default=trials,
                       help=f"Monte Carlo trials (default {trials})")
    p.add_argument("--seed", type=_int_at_least("--seed", 0), default=0, help="PRNG seed (default 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _failure_args(p):
    p.add_argument("--mtbf", type=_positive_float("--mtbf"), default=5.0,
                   help="system MTBF in minutes at the reference cluster size (default 5 at 600k GPUs)")
    p.add_argument("--gpus-per-group", type=_positive_float("--gpus-per-group"), default=1000.0,
                   help="GPUs per data-parallel group (default 1000)")
    p.add_argument("--reference-gpus", type=_positive_float("--reference-gpus"), default=600_000.0,
                   help="GPU count at which --mtbf is quoted (default 600000)")
    p.add_argument("--distribution", choices=("exponential", "weibull"), default="exponential")
    p.add_argument("--weibull-shape", type=_positive_float("--weibull-shape"), default=1.0,
                   help="Weibull shape k (same mean per group)")


def _run_args(p):
    p.add_argument("--chunk-size", type=_int_at_least("--chunk-size", 1), default=None,
                   help="trials per chunk (default: chosen from the working-set size)")
    p.add_argument("--devices", type=_int_at_least("--devices", 1), default=None,
                   help="JAX devices to shard trials over (default: all)")
    p.add_argument("--out", default=None, help="directory for per-chunk results; re-running resumes")
    p.add_argument("--distributed", action="store_true",
                   help="call jax.distributed.initialize() first (multi-host; configured by the environment)")


def _model(args):
    from .failures import FailureModel

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
        print(json.dumps(result, default=_json_default))
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


def _clean(v):
    """NaN/inf -> None so that --json is strict JSON."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


# --------------------------------------------------------------------------------------------------------
def _simulate(args, simulate):
    """Build the placement and model from the flags and run a chunked Monte Carlo driver."""
    from .placement import make_placement

    model = _model(args)
    placement = make_placement(args.placement, args.groups, args.redundancy, seed=args.seed)
    t0 = time.perf_counter()
    res = simulate(placement, args.trials, args.seed, model=model, chunk_size=args.chunk_size,
                   devices=args.devices, progress=not args.quiet, out_dir=args.out)
    return model, placement, res, time.perf_counter() - t0


def cmd_wipeout(args) -> dict:
    from . import theory
    from .wipeout import simulate_wipeout

    model, placement, res, elapsed = _simulate(args, simulate_wipeout)
    surv = theory.survival_exact(placement.kind, placement.groups, placement.redundancy)
    exact_mean, exact_var = (None, None) if surv is None else theory.moments_from_survival(surv)
    asym = theory.expected_failures_asymptotic(placement.kind, placement.groups, placement.redundancy)
    ref = exact_mean if exact_mean is not None else asym
    z = (res.mean - ref) / res.stderr if res.stderr > 0 else (0.0 if res.mean == ref else math.inf)
    up_theory = None
    if model.distribution == "exponential":
        up_theory = theory.expected_uptime(surv if surv is not None else
                                           theory.survival_poisson(placement.kind, placement.groups,
                                                                   placement.redundancy),
                                           placement.groups, model.group_rate_per_min)
    return {
        "groups": placement.groups, "redundancy": placement.redundancy, "placement": placement.kind,
        "trials": res.trials, "seed": res.seed,
        "mc_mean": res.mean, "mc_stderr": res.stderr,
        "theory_exact": exact_mean, "theory_asymptotic": asym, "z_score": _clean(z),
        "z_against": "exact" if exact_mean is not None else "asymptotic",
        "mc_std": math.sqrt(res.var), "theory_std": None if exact_var is None else math.sqrt(exact_var),
        "endurable_failures_mean": res.mean - 1,
        "mc_quantiles": {"p01": res.quantile(0.01), "p50": res.quantile(0.5), "p99": res.quantile(0.99)},
        "distribution": model.distribution,
        "mc_epoch_uptime_min": res.uptime_mean_min, "mc_epoch_uptime_stderr_min": res.uptime_stderr_min,
        "theory_epoch_uptime_min": up_theory,
        "cluster_mtbf_min": model.cluster_mtbf_min(placement.groups),
        "chunk_size": res.chunk_size, "devices": res.devices,
        "elapsed_s": elapsed, "trials_per_s": res.trials / elapsed if elapsed > 0 else None,
    }


def cmd_overhead(args) -> dict:
    from . import theory
    from .overhead import simulate_overhead

    model, placement, res, elapsed = _simulate(args, simulate_overhead)
    th = None
    if placement.kind in ("stacked", "block") and model.distribution == "exponential":
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
        "elapsed_s": elapsed, "trials_per_s": res.trials / elapsed if elapsed > 0 else None,
    }


def cmd_reorder(args) -> dict:
    from .placement import make_placement
    from .reorder import read_trace, replay

    placement = make_placement(args.placement, args.groups, args.redundancy, seed=args.seed)
    if (args.failed is None) == (args.trace is None):
        raise ValueError("reorder needs exactly one of --failed LIST or --trace FILE")
    times = None
    if args.trace is not None:
        failed, times = read_trace(args.trace)
    else:
        failed = [x.strip() for x in args.failed.split(",") if x.strip()]
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
    p.add_argument("--work-hours", type=_positive_float("--work-hours"), default=720.0,
                   help="failure-free work W in hours at depth 1 (default 720)")
    p.add_argument("--ckpt-cost", type=_nonneg_float("--ckpt-cost"), default=5.0,
                   help="blocking checkpoint cost C in minutes (default 5)")
    p.add_argument("--restart", type=_nonneg_float("--restart"), default=60.0,
                   help="global restart cost R in minutes at the reference size (default 60)")
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


def cmd_ttt(args) -> dict:
    from . import ttt

    model, cfg = _model(args), _training(args)
    kind, r = ttt.scheme_placement(args.scheme, args.groups, args.redundancy)
    from .placement import check_groups_redundancy

    check_groups_redundancy(args.groups, r)
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
    seconds = 10.0 if args.full else 3.0
    return run_bench(args.groups, args.redundancy, seconds=seconds, des_trials=200 if args.full else 60,
                     devices=args.devices, chunk_size=args.chunk_size)


def cmd_run(args) -> dict:
    from .suite import format_summary, run_suite

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
    p.add_argument("--seed", type=_int_at_least("--seed", 0), default=0)
    p.add_argument("--json", action="store_true")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_run, title="spare-jax run: summary")

    p = sub.add_parser("wipeout", help="failures endured before a wipe-out: Monte Carlo vs exact theory")
    _common(p)
    _failure_args(p)
    _run_args(p)
    p.set_defaults(func=cmd_wipeout, title="Failures to wipe-out T (fatal failure included)")

    p = sub.add_parser("overhead", help="compute overhead of SPARe with adaptive reordering vs replication")
    _common(p, trials=20_000)
    _failure_args(p)
    _run_args(p)
    p.set_defaults(func=cmd_overhead, title="Compute overhead Omega = E[uptime] / E[useful work]")
    p = sub.add_parser("ttt", help="time-to-train with checkpointing: Monte Carlo and closed form")
    _common(p, trials=200, placement=False)
    _failure_args(p)
    _training_args(p)
    p.add_argument("--scheme", choices=("spare", "rep", "none"), default="spare")
    p.add_argument("--ckpt-interval", type=_positive_float("--ckpt-interval"), default=None,
                   help="checkpoint interval tau in minutes of compute (default: the closed-form optimum)")
    _ages_arg(p)
    p.set_defaults(func=cmd_ttt, title="Time-to-train (trials = training runs)")

    p = sub.add_parser("optimize", help="best redundancy r* and checkpoint interval per scheme (closed form)")
    _common(p, trials=None, placement=False)
    _failure_args(p)
    _training_args(p)
    p.add_argument("--r-max", type=_int_at_least("--r-max", 1), default=20, help="largest r searched (default 20)")
    p.add_argument("--curves", action="store_true", help="include TTT(r) per scheme in the output")
    _ages_arg(p)
    p.set_defaults(func=cmd_optimize, title="Optimal redundancy and checkpoint interval per scheme")

    p = sub.add_parser("bench", help="kernel throughput against NumPy and a SimPy discrete-event simulation")
    _common(p, trials=None, placement=False)
    p.add_argument("--full", action="store_true", help="longer, steadier measurements")
    p.add_argument("--chunk-size", type=_int_at_least("--chunk-size", 1), default=None,
                   help="trials per kernel call (default: the driver's choice; larger on accelerators)")
    p.add_argument("--devices", type=_int_at_least("--devices", 1), default=None)
    p.set_defaults(func=cmd_bench, title="Benchmark (same machine, same run)")

    p = sub.add_parser("reorder", help="replay a failure trace through the reorder controller (RECTLR)")
    _common(p, trials=None)
    p.add_argument("--failed", default=None, help="failed group ids in failure order, e.g. 3,17,4")
    p.add_argument("--trace", default=None, help="trace file: CSV 'group[,time_min]' or JSON lines")
    p.add_argument("--solver", choices=("ortools", "networkx", "scipy"), default="ortools",
                   help="min-cost-flow backend for phase 2 (default ortools)")
    p.set_defaults(func=cmd_reorder, title="Reorder controller: state after the last failure")
    return parser


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
    sub = parser._subparsers._group_actions[0].choices.get(command) if command else None
    if sub is None:
        raise ValueError("--config needs a subcommand (e.g. spare-jax run --config run.toml)")
    section = cfg.get(command, cfg)
    known = {a.dest: a for a in sub._actions}
    defaults = {}
    for key, value in section.items():
        if isinstance(value, dict):
            continue
        dest = key.replace("-", "_")
        if dest not in known or dest in ("help", "func", "title"):
            raise ValueError(f"--config: unknown setting {key!r} for 'spare-jax {command}'")
        action = known[dest]
        if action.type is not None and not isinstance(value, bool):
            try:
                value = action.type(str(value))
            except argparse.ArgumentTypeError as exc:
                raise ValueError(f"--config: {exc}") from None
        if action.choices is not None and value not in action.choices:
            raise ValueError(f"--config: {key} must be one of {', '.join(map(str, action.choices))}")
        defaults[dest] = value
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
