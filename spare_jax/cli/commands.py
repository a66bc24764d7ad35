"""The `spare-jax` commands and `main`.

Every subcommand takes ``--json`` (one JSON object on stdout, nothing else there) and prints a readable
table otherwise. Progress bars go to stderr. Bad input: exit code 2 and one line on stderr, no traceback.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

from .args import (  # noqa: F401  (CLIError and strict_json are part of the CLI's API)
    CLIError, strict_json, _Parser, _bounded, _help, _common, _failure_args, _scenario_args, _scenario, _run_args,
    _repair_args, _repair, _model, emit, _clean, _training_args, _ages_arg, _training, _apply_config,
    _microbatch_args, _policy_search_args, deprecated_alias)

EXIT_BAD_INPUT = 2


def _sampling(args, count: int):
    """The Monte Carlo's execution from the flags: sample size, seed, chunks, devices, --out, progress."""
    from ..model.cluster import Sampling

    return Sampling(count, getattr(args, "seed", 0), getattr(args, "chunk_size", None), getattr(args, "devices", None),
                    getattr(args, "out", None), not getattr(args, "quiet", False))


def _check_work_inputs(args, width: int, bytes_per_item: int) -> None:
    """Up front, before any work: the chunk's working set fits the memory and ``--out`` can hold a run."""
    from ..kernels.driver import check_work_inputs

    check_work_inputs(args.groups, _sampling(args, 1), width, bytes_per_item)


def _cluster(args, check_redundancy: bool = True):
    """The cluster of the flags: groups, failure law, scenario, repair law (checked in the flags' order)."""
    from ..model.cluster import Cluster
    from ..model.placement import check_groups_redundancy

    repair = _repair(args)
    model = _model(args)
    if check_redundancy:
        check_groups_redundancy(args.groups, args.redundancy)
    return Cluster(args.groups, model, _scenario(args, args.groups), repair)


def cmd_wipeout(args) -> dict:
    from ..measure import wipeout

    return wipeout(_cluster(args), args.redundancy, args.placement, _sampling(args, args.trials),
                   work_hours=args.work_hours).to_json()


def cmd_overhead(args) -> dict:
    from ..measure import overhead

    if args.placement == "random":  # the host matcher path: no chunks, devices or resumable --out
        given = [f for f, v in (("--chunk-size", args.chunk_size), ("--devices", args.devices), ("--out", args.out),
                                ("--distributed", args.distributed)) if v not in (None, False)]
        if given:
            raise ValueError(f"{', '.join(given)}: not used by overhead --placement random (it runs on the host, "
                             "unchunked); drop the flag or use stacked/block")
    return overhead(_cluster(args), args.redundancy, args.placement, _sampling(args, args.epochs)).to_json()


def cmd_reorder(args) -> dict:
    from ..model.placement import make_placement
    from ..rectlr.reorder import parse_failed_list, read_trace, replay

    placement = make_placement(args.placement, args.groups, args.redundancy, seed=args.seed)
    if (args.failed is None) == (args.trace is None):
        raise ValueError("reorder needs exactly one of --failed LIST or --trace FILE")
    times = None
    if args.trace is not None:
        failed, times = read_trace(args.trace)
    else:
        failed = parse_failed_list(args.failed)
    if (args.microbatches or 1) > 1:
        return _reorder_microbatches(args, placement, failed, times)
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


def _reorder_microbatches(args, placement, failed, times) -> dict:
    """``reorder --microbatches m``: the micro-batch controller (``reorder_mb``)."""
    from ..rectlr.reorder_mb import replay_microbatches

    if args.solver == "scipy":
        raise ValueError("--solver scipy has no capacities: use ortools or networkx with --microbatches")
    records, ctl = replay_microbatches(placement, failed, args.microbatches, times, solver=args.solver)
    last = records[-1]
    return {
        "microbatches": ctl.m, "capacity": last.capacity, "depth": last.depth, "phase": last.phase,
        "moved_microbatches": last.moved, "wiped_out": last.wiped_out, "lost_shards": last.lost_shards,
        "latency_ms": last.latency_ms, "groups": placement.groups, "redundancy": placement.redundancy,
        "placement": placement.kind, "solver": args.solver, "events": len(records),
        "ignored_after_wipeout": len(failed) - len(records),
        "total_moved_microbatches": sum(r.moved for r in records),
        "per_event": [{"group": r.group, "phase": r.phase, "capacity": r.capacity, "depth": r.depth,
                       "moved_microbatches": r.moved, "latency_ms": round(r.latency_ms, 3),
                       **({"time_min": r.time_min} if r.time_min is not None else {})} for r in records],
    }


def cmd_ttt(args) -> dict:
    import dataclasses

    from ..ttt.answer import Policy, time_to_train

    cluster = _cluster(args, check_redundancy=False)  # the scheme decides r (none: 1)
    training = dataclasses.replace(_training(args), ckpt_interval_min=args.ckpt_interval)
    policy = Policy(args.scheme, args.redundancy, args.restart_depth, args.ages)
    return time_to_train(cluster, training, policy, _sampling(args, args.runs)).to_json()


def cmd_optimize(args) -> dict:
    from ..ttt.answer import Space, optimize

    space = Space(args.r_max, tuple(args.microbatch_set or [1]),
                  None if args.restart_depths is None else tuple(args.restart_depths), args.epochs, args.pool_seed,
                  args.ages, args.curves)
    return optimize(_cluster(args, check_redundancy=False), _training(args), space, not args.quiet).to_json()


def cmd_place(args) -> dict:
    import os

    from ..rectlr.place import search_ring

    model = _model(args)
    scenario = _scenario(args, args.groups)
    _check_work_inputs(args, args.groups, 16)
    if args.ring_out is not None:
        parent = os.path.dirname(os.path.abspath(args.ring_out)) if args.ring_out else ""
        if not args.ring_out or os.path.isdir(args.ring_out):
            raise ValueError(f"--ring-out must name a file, got {args.ring_out!r}")
        if not os.path.isdir(parent) or not os.access(parent, os.W_OK) or (
                os.path.exists(args.ring_out) and not os.access(args.ring_out, os.W_OK)):
            raise ValueError(f"--ring-out: cannot write to {args.ring_out}")
    res = search_ring(args.groups, args.redundancy, model, scenario, args.placement, args.search_epochs,
                      args.steps, args.proposals, args.epochs, args.random_orders, args.seed,
                      progress=not args.quiet)
    out = res.as_dict()
    ring = out.pop("best_ring")
    if args.ring_out is not None:
        text = ("# ring order found by spare-jax place (ring position i: physical group), best: "
                f"{res.best_name}\n" + "\n".join(map(str, ring)) + "\n")
        try:
            with open(args.ring_out, "w") as fh:
                fh.write(text)
        except OSError as exc:
            raise ValueError(f"--ring-out: cannot write {args.ring_out}: {exc.strerror}") from None
        out["ring_file"] = args.ring_out
    if args.json:
        out["best_ring"] = list(ring)
    else:
        out["orders"] = "; ".join(f"{o['name']} {o['uptime_min']:.1f}±{o['uptime_stderr_min']:.1f}"
                                  for o in res.orders)
    return out


def cmd_presets(args) -> dict:
    from ..model.presets import PRESETS

    if args.json:
        return {name: p.as_dict() for name, p in PRESETS.items()}

    def num(v):
        if isinstance(v, (list, tuple)):
            return ", ".join(num(x) for x in v)
        if isinstance(v, float):
            return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.4g}"
        return f"{v:,}" if isinstance(v, int) else str(v)

    flag = {"mtbf": "--reference-mtbf-min", "job_mtbf": "--job-mtbf-min"}  # dests whose flags carry a unit
    for name, p in PRESETS.items():
        print(f"{name}: {p.description}")
        print("  settings: " + ", ".join(f"{flag.get(k, '--' + k.replace('_', '-'))} {num(v)}"
                                         for k, v in p.settings.items()))
        for d in p.domains:
            print(f"  domain level {d.get('name', '')}: {d['size']} groups, MTBF {num(float(d['mtbf']))} min per domain")
        for k, v in p.derived.items():
            print(f"  derived {k}: {num(v)}")
        for src in p.sources:
            print(f"  source: {src}")
        for a in p.assumptions:
            print(f"  assumption: {a}")
    args.printed = True
    return {}


def cmd_bench(args) -> dict:
    from ..suite.bench import run_bench
    from ..model.placement import check_groups_redundancy

    check_groups_redundancy(args.groups, args.redundancy)
    _check_work_inputs(args, args.groups, 16)
    from ..model.bounds import chunk_bytes, memory_budget_bytes

    if chunk_bytes(1024, args.groups * args.redundancy, 8) > memory_budget_bytes():  # bench's overhead chunk
        raise ValueError(f"--groups {args.groups} x --redundancy {args.redundancy}: the overhead kernel's "
                         "1024-trial chunk does not fit half the RAM; lower either")
    seconds = 10.0 if args.full else 3.0
    return run_bench(args.groups, args.redundancy, seconds=seconds, des_trials=200 if args.full else 60,
                     devices=args.devices, chunk_size=args.chunk_size, progress=not args.quiet)


def cmd_run(args) -> dict:
    import os

    from ..kernels.driver import check_writable_dir
    from ..suite import format_summary, run_suite

    out = args.out_dir or ("figures" if args.full else "results")
    if os.path.exists(out) and not os.path.isdir(out):
        raise ValueError(f"--out-dir {out} exists and is not a directory")
    check_writable_dir(out, "--out-dir")
    summary = run_suite(out, full=args.full, seed=args.seed, progress=not args.quiet)
    if not args.json:
        print(format_summary(summary))
        args.printed = True
    return summary


def _version() -> str:
    try:
        from importlib.metadata import PackageNotFoundError, version

        return version("spare-jax")
    except (ImportError, PackageNotFoundError):  # not installed (PYTHONPATH checkout)
        from .. import __version__

        return __version__


# each subcommand's --config example in its --help (tests/test_vocabulary.py runs every one as written)
CONFIG_EXAMPLES = {
    "run": ["seed = 1"],
    "wipeout": ["N = 60", "r = 3", "trials = 2000"],
    "overhead": ["N = 60", "r = 3", "epochs = 2000"],
    "ttt": ["N = 60", "r = 3", "runs = 20", "work-hours = 100", "ckpt-interval = 30"],
    "optimize": ["N = 60", "r-max = 8", "work-hours = 100"],
    "place": ["N = 12", "r = 2", "domain-size = 4", "domain-mtbf-min = 5000", "steps = 2", "epochs = 400",
              "search-epochs = 100"],
    "presets": ["quiet = true"],
    "bench": ["N = 60", "r = 4"],
    "reorder": ["N = 60", "r = 3", 'failed = "3,17,4"'],
    "plan": ["gpus = 8192", "gpus-per-group = 1024", "gpu-mtbf-hours = 50000", "runs = 20",
             "no-sensitivity = true"],
}


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="spare-jax", description="SPARe reliability engine: wipe-out, depth, overhead, "
                     "reordering and time-to-train for 100k-1M GPU pretraining.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}",
                        help="print the version and exit")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    p = sub.add_parser("run", help="the main job: a quick answer at N = 600 (about 2-3 minutes on 2 cores) into "
                                   "results/; --full reproduces the paper's figures into figures/")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--full", action="store_true",
                      help="the full suite (N up to 100,000 groups, about 25-40 minutes on 2 cores) that draws the "
                           "figures of the README into figures/ (default: the quick answer)")
    mode.add_argument("--quick", action="store_true",
                      help="the quick answer: what `spare-jax run` does without --full (kept for older scripts)")
    p.add_argument("--out-dir", default=None,
                   help="where figures and data go (default results/, or figures/ with --full)")
    p.add_argument("--seed", type=_bounded("seed"), default=0, help=_help("PRNG seed (default 0)", "seed"))
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout (default: a table)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr (default: progress shown)")
    p.set_defaults(func=cmd_run, title="spare-jax run: summary")

    p = sub.add_parser("wipeout", help="failures endured before a wipe-out: Monte Carlo vs exact theory")
    _common(p)
    _failure_args(p)
    _scenario_args(p)
    _repair_args(p)
    a = p.add_argument("--work-hours", type=_bounded("work_hours"), default=720.0,
                       help=_help("with repair: the training run's length W in hours (default 720; formerly "
                                  "--run-hours); when the first-order time to wipe-out exceeds 10 W, report P(a "
                                  "wipe-out during W) with its exact interval", "work_hours"))
    deprecated_alias(p, "--run-hours", a)
    _run_args(p)
    p.set_defaults(func=cmd_wipeout, title="Failures to wipe-out T (fatal failure included)")

    p = sub.add_parser("overhead", help="compute overhead of SPARe with adaptive reordering vs replication")
    _common(p, trials=20_000, sample="epochs", sample_help="Monte Carlo epochs, restart to wipe-out",
            old_sample="--trials")
    _failure_args(p)
    _scenario_args(p)
    _microbatch_args(p)
    _repair_args(p)
    _run_args(p)
    p.set_defaults(func=cmd_overhead, title="Compute overhead Omega = E[uptime] / E[useful work]")
    p = sub.add_parser("ttt", help="time-to-train with checkpointing: Monte Carlo and closed form")
    _common(p, trials=200, placement=False, trials_bound="ttt_trials", sample="runs",
            sample_help="Monte Carlo training runs", old_sample="--trials")
    _failure_args(p)
    _training_args(p)
    p.add_argument("--scheme", choices=("spare", "rep", "none"), default="spare",
                   help="spare: SPARe+CKPT; rep: replica sets of r groups (r must divide N) + CKPT; none: "
                        "checkpointing only, r = 1 (default spare)")
    p.add_argument("--ckpt-interval", type=_bounded("ckpt_interval"), default=None,
                   help=_help("checkpoint interval tau in minutes of compute (default: the closed-form optimum; "
                              "under a scenario with domains, a ring order or lemons: the optimum on the "
                              "sampled epochs)", "ckpt_interval"))
    _ages_arg(p)
    _scenario_args(p)
    _repair_args(p)
    _microbatch_args(p, restart=True)
    p.set_defaults(func=cmd_ttt, title="Time-to-train")

    p = sub.add_parser("optimize", help="best redundancy r* and checkpoint interval per scheme (closed form)")
    _common(p, trials=None, placement=False, redundancy=None, seed=False)  # r is searched; no randomness
    _failure_args(p)
    _training_args(p)
    p.add_argument("--r-max", type=_bounded("r_max"), default=20,
                   help=_help("largest r searched (default 20)", "r_max"))
    p.add_argument("--curves", action="store_true", help="include TTT(r) per scheme in the output (default off)")
    _ages_arg(p)
    _scenario_args(p)
    p.add_argument("--epochs", type=_bounded("pool_epochs", "--epochs"), default=None,
                   help=_help("epochs sampled per scheme and r under a scenario with no closed form (domains, "
                              "a ring order, lemons; default 20000)", "pool_epochs"))
    p.add_argument("--pool-seed", type=_bounded("seed", "--pool-seed"), default=0,
                   help=_help("PRNG seed of those epochs (default 0; the closed form uses none)", "seed"))
    _repair_args(p)
    _policy_search_args(p)
    p.set_defaults(func=cmd_optimize, title="Optimal redundancy and checkpoint interval per scheme")

    p = sub.add_parser("place", help="search the ring order that maximises E[epoch uptime] under a scenario, "
                                     "against contiguous, interleaved and random orders")
    _common(p, trials=100_000, placement=False, trials_bound="eval_trials", sample="epochs",
            sample_help="epochs per final evaluation of each order", old_sample="--trials")
    p.add_argument("--placement", choices=("stacked", "block"), default="stacked",
                   help="shard placement over the ring (default stacked)")
    _failure_args(p)
    _scenario_args(p)
    p.add_argument("--steps", type=_bounded("search_steps", "--steps"), default=200,
                   help=_help("local-search steps (default 200)", "search_steps"))
    a = p.add_argument("--search-epochs", type=_bounded("search_trials", "--search-epochs"), default=2000,
                       help=_help("fresh epochs per search step (default 2,000; formerly --search-trials)",
                                  "search_trials"))
    deprecated_alias(p, "--search-trials", a)
    p.add_argument("--proposals", type=_bounded("proposals"), default=8,
                   help=_help("random swaps tried per step (default 8)", "proposals"))
    p.add_argument("--random-orders", type=_bounded("random_orders"), default=3,
                   help=_help("seeded random orders among the starting points (default 3)", "random_orders"))
    p.add_argument("--ring-out", default=None,
                   help="write the best order here, a ring file for --ring (default: none, not written)")
    p.set_defaults(func=cmd_place, title="Ring order search")

    p = sub.add_parser("presets", help="the --preset clusters: settings, sources and assumptions")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout (default: text)")
    p.add_argument("--quiet", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_presets, title="Presets")

    p = sub.add_parser("bench", help="kernel throughput against NumPy and a SimPy discrete-event simulation")
    _common(p, trials=None, placement=False, seed=False)  # run_bench takes no seed
    p.add_argument("--full", action="store_true",
                   help="longer, steadier measurements: 10 s per kernel instead of 3 s (default off)")
    p.add_argument("--chunk-size", type=_bounded("chunk_size"), default=None,
                   help=_help("trials per kernel call (default: the driver's choice; larger on accelerators)",
                              "chunk_size"))
    p.add_argument("--devices", type=_bounded("devices"), default=None,
                   help=_help("JAX devices to shard trials over (default: all)", "devices"))
    p.set_defaults(func=cmd_bench, title="Benchmark (same machine, same run)")

    p = sub.add_parser("reorder", help="replay a failure trace through the reorder controller (RECTLR)")
    _common(p, trials=None)
    p.add_argument("--failed", default=None,
                   help="failed group ids in failure order, e.g. 3,17,4 (default: none; this or --trace)")
    p.add_argument("--trace", default=None,
                   help="trace file: CSV 'group[,time_min]' (minutes) or JSON lines (default: none; this or "
                        "--failed)")
    p.add_argument("--solver", choices=("ortools", "networkx", "scipy"), default="ortools",
                   help="min-cost-flow backend for phase 2 (default ortools)")
    _microbatch_args(p)
    p.set_defaults(func=cmd_reorder, title="Reorder controller: state after the last failure")

    from .plan import add_plan_parser  # spare-jax plan (SPEC §11)

    add_plan_parser(sub)
    for name, sp in sub.choices.items():  # read before argparse (cli_args._apply_config); listed in --help
        sp.add_argument("--config", metavar="FILE", default=None,
                        help="TOML file of settings for this subcommand (default: none): keys are its flag names "
                             "without the dashes (N or groups, r or redundancy), e.g. a file of the lines: "
                             + " | ".join(CONFIG_EXAMPLES[name]) + f" (at the top level or in a [{name}] table); "
                             "flags on the line win")
    return parser


def _refuse_unused(args) -> None:
    """A flag that the chosen path would ignore is refused, not ignored (flags on the line or in --config)."""
    given = getattr(args, "given", set())

    def named(*dests):
        return [d for d in dests if d in given]

    def flags(ds):
        return "/".join("--" + d.replace("_", "-") for d in ds)

    cmd = args.command
    repair = getattr(args, "repair_time", None) is not None
    several = getattr(args, "coordinator", None) is not None or getattr(args, "distributed", False)
    if not several and named("peer_timeout", "verbose"):
        raise ValueError(f"{flags(named('peer_timeout', 'verbose'))}: used by multi-process runs only "
                         "(--coordinator/--num-processes/--process-id or --distributed); drop it")
    if getattr(args, "group_mtbf_file", None) is not None:
        names = {"mtbf": "reference_mtbf_min", "group_mtbf": "group_mtbf_min"}
        extra = named("mtbf", "group_mtbf", "gpu_mtbf_hours", "lemon_fraction", "lemon_factor", "lemon_seed")
        if extra:
            raise ValueError(f"{flags([names.get(d, d) for d in extra])}: not used with --group-mtbf-file (its per-group MTBFs replace them); "
                             "drop one of them")
    if cmd == "wipeout" and not repair and named("work_hours"):
        raise ValueError("--work-hours applies with repair only (--repair-time); drop it")
    if cmd == "ttt" and args.scheme == "none" and named("redundancy"):
        raise ValueError("-r/--redundancy: --scheme none is checkpointing only (r = 1); drop -r or pick spare/rep")
    if cmd == "optimize":
        policy = len(args.microbatch_set or [1]) > 1 or args.restart_depths is not None
        if repair and named("microbatch_set", "restart_depths"):
            raise ValueError("--microbatches/--restart-depth with repair (--repair-time) are not searched yet; "
                             "drop one of them")
        if not repair and not policy and named("epochs", "pool_seed"):
            scenario = _scenario(args, args.groups)
            if not scenario.needs_kernel:
                raise ValueError(f"{flags(named('epochs', 'pool_seed'))}: used only where there is no closed "
                                 "form (domains, a ring order, lemons, repair, a micro-batch or restart-depth "
                                 "search); this run uses the closed form, drop the flag")
    if cmd == "reorder" and args.placement != "random" and named("seed"):
        raise ValueError(f"--seed: the {args.placement} placement is deterministic (the seed draws only "
                         "--placement random); drop it")


def _add_mtbf(args, result) -> None:
    """The resolved failure clock beside the results: per-group MTBF and the MTBF of the N groups run."""
    if not isinstance(result, dict) or not result or not hasattr(args, "mtbf") or not hasattr(args, "groups"):
        return
    if getattr(args, "group_mtbf_file", None) is not None:
        return
    model = _model(args)
    result.setdefault("group_mtbf_min", model.group_mtbf_min)
    result.setdefault("cluster_mtbf_min", model.cluster_mtbf_min(args.groups))
    result.setdefault("gpu_mtbf_hours", model.group_mtbf_min * model.gpus_per_group / 60.0)


def _stdout_to_python_only() -> None:
    """Point file descriptor 1 at stderr and give Python's ``sys.stdout`` the original stdout, so native
    libraries (gloo's "[Gloo] Rank ... connected" lines) cannot write into the JSON on stdout."""
    import os

    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = os.fdopen(saved, "w", buffering=1)


_NATIVE_LOG = [None]  # the multi-process run's native log (multiproc.NativeLog), if any


def _coordinator():
    from ..kernels import multiproc

    return multiproc.coordinator()


def _join_processes(args):
    """With --coordinator/--num-processes/--process-id (or --distributed): join the run, native logs to a
    file (unless --verbose), and start the watchdog. Returns the coordinator (None for one process)."""
    from ..kernels import multiproc

    dist = [getattr(args, k, None) for k in ("coordinator", "num_processes", "process_id")]
    explicit = any(v is not None for v in dist)
    if not explicit and not getattr(args, "distributed", False):
        return None
    from ..kernels.driver import check_distributed_args, initialize_distributed

    if explicit:
        if any(v is None for v in dist):
            raise ValueError("--coordinator, --num-processes and --process-id go together")
        check_distributed_args(*dist)
    timeout = getattr(args, "peer_timeout", None) or multiproc.DEFAULT_PEER_TIMEOUT_S
    if not getattr(args, "verbose", False):
        _NATIVE_LOG[0] = multiproc.NativeLog("?" if dist[2] is None else dist[2])
    _stdout_to_python_only()  # gloo prints connection lines on the C stdout: keep stdout JSON-only
    initialize_distributed(*dist, peer_timeout=timeout) if explicit else initialize_distributed(
        peer_timeout=timeout)
    return multiproc.start(timeout, _NATIVE_LOG[0])


def _leave_processes(coord) -> None:
    """A finished run: stop the watchdog, leave the coordination service (bounded by --peer-timeout), and
    drop the native log (nothing went wrong)."""
    if coord is not None:
        import jax

        sys.stdout.flush()
        coord.stop()
        jax.distributed.shutdown()
    if _NATIVE_LOG[0] is not None:
        _NATIVE_LOG[0].discard()


def _multiprocess_failure(exc) -> int:
    """A multi-process run that failed: give the watchdog the time to name a lost peer, else say what failed;
    one line on the terminal, the traceback in the native log."""
    import traceback

    from ..kernels import multiproc

    log, coord = _NATIVE_LOG[0], _coordinator()
    traceback.print_exc(file=sys.__stderr__)  # file descriptor 2: the native log (the terminal with --verbose)
    if coord is not None and not isinstance(exc, multiproc.IncompleteRun):
        time.sleep(coord.peer_timeout + 2)  # a dead peer: the watchdog ends this process with its name
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
    msg = first if isinstance(exc, multiproc.IncompleteRun) else (
        f"the multi-process run failed ({type(exc).__name__}: {first})")
    if coord is not None:
        coord.fail(msg)  # one line naming this process, exit EXIT_PEER_LOST
    line = f"spare-jax: error: {msg}; no result"
    if log is not None:
        log.say(f"{line}; native log: {log.path}")
    else:
        print(line, file=sys.stderr)
    return multiproc.EXIT_PEER_LOST


def main(argv=None) -> int:
    _NATIVE_LOG[0] = None
    parser = build_parser()
    try:
        argv = _apply_config(parser, argv)
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help(sys.stderr)
            return EXIT_BAD_INPUT
        from .args import explicit_dests

        args.given = explicit_dests(parser._subparsers._group_actions[0].choices[args.command], argv) | set(
            getattr(args, "config_given", ()))
        _refuse_unused(args)
        coord = _join_processes(args)
        with warnings.catch_warnings():  # numerics at the edges of the bounds: results carry None, not noise
            warnings.simplefilter("ignore", RuntimeWarning)
            result = args.func(args)
            _add_mtbf(args, result)
        if getattr(args, "preset", None) and isinstance(result, dict):
            result = {"preset": args.preset, **result}
        if not getattr(args, "printed", False):
            emit(args, args.title, result)
        # former flag names: one note each, once the run succeeded (bad input stays one line on stderr)
        for note in [*(getattr(args, "deprecations", None) or ()), *getattr(args, "late_notes", ())]:
            print(note, file=sys.stderr)
        _leave_processes(coord)
        return 0
    except (CLIError, ValueError) as exc:
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
        if not msg.startswith("spare-jax"):
            msg = f"spare-jax: error: {msg}"
        print(msg, file=sys.stderr)
        if _NATIVE_LOG[0] is not None:  # bad input writes no log
            _NATIVE_LOG[0].discard()
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # e.g. piped into head
        return 0
    except KeyboardInterrupt:
        print("spare-jax: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - in a multi-process run: one line, the details in the log
        if _NATIVE_LOG[0] is None and _coordinator() is None:
            raise
        return _multiprocess_failure(exc)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
