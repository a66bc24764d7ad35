"""The command line's parser: every subcommand's flags, its ``--config`` example, and the refusal of flags
that the chosen path would ignore."""

from __future__ import annotations

import argparse

from .args import (
    SampleFlag, ages_arg, common_args, failure_args, gpus_args, job_scaling_arg, microbatch_args, policy_search_args, repair_args,
    run_args, scenario_args, trace_args, training_args)
from .base import Parser, bounded, bound_help
from .deprecation import deprecated_alias
from .model_from_flags import scenario_from_flags
from .commands import (
    cmd_bench, cmd_optimize, cmd_overhead, cmd_place, cmd_presets, cmd_reorder, cmd_run, cmd_ttt, cmd_wipeout)


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
    parser = Parser(prog="spare-jax", description="SPARe reliability engine: wipe-out, depth, overhead, "
                    "reordering and time-to-train for 100k-1M GPU pretraining.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}",
                        help="print the version and exit")
    sub = parser.add_subparsers(dest="command", parser_class=Parser)

    p = sub.add_parser("run", help="the main job: a quick answer at N = 600 (a few minutes on 2 cores) into "
                                   "results/; --full reproduces the paper's figures into figures/")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--full", action="store_true",
                      help="the full suite (N up to 100,000 groups, about 25-40 minutes on 2 cores) that draws the "
                           "figures of the README into figures/ (default: the quick answer)")
    mode.add_argument("--quick", action="store_true",
                      help="the quick answer: what `spare-jax run` does without --full (kept for older scripts)")
    p.add_argument("--out-dir", default=None,
                   help="where figures and data go (default results/, or figures/ with --full)")
    p.add_argument("--seed", type=bounded("seed"), default=0, help=bound_help("PRNG seed (default 0)", "seed"))
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout (default: a table)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr (default: progress shown)")
    p.set_defaults(func=cmd_run, title="spare-jax run: summary")

    p = sub.add_parser("wipeout", help="failures endured before a wipe-out: Monte Carlo vs exact theory")
    common_args(p)
    failure_args(p)
    scenario_args(p)
    repair_args(p)
    a = p.add_argument("--work-hours", type=bounded("work_hours"), default=720.0,
                       help=bound_help("with repair: the training run's length W in hours (default 720; formerly "
                                       "--run-hours); when the first-order time to wipe-out exceeds 10 W, report P(a "
                                       "wipe-out during W) with its exact interval", "work_hours"))
    deprecated_alias(p, "--run-hours", a)
    run_args(p)
    p.set_defaults(func=cmd_wipeout, title="Failures to wipe-out T (fatal failure included)")

    p = sub.add_parser("overhead", help="compute overhead of SPARe with adaptive reordering vs replication")
    common_args(p, sample=SampleFlag(20_000, name="epochs", help="Monte Carlo epochs, restart to wipe-out",
                                     former="--trials"))
    failure_args(p)
    scenario_args(p)
    microbatch_args(p)
    repair_args(p)
    run_args(p)
    p.set_defaults(func=cmd_overhead, title="Compute overhead Omega = E[uptime] / E[useful work]")
    p = sub.add_parser("ttt", help="time-to-train with checkpointing: Monte Carlo and closed form")
    from ..model.bounds import TTT_CELLS_MAX

    common_args(p, sample=SampleFlag(200, "ttt_trials", "runs", "Monte Carlo training runs; effectively at most "
                                     f"{TTT_CELLS_MAX:.3g} / (epochs per run x N x max(r, 2)) sampled failure times, "
                                     "refused before any work beyond that with the count that fits",
                                     former="--trials"),
                placement=False)
    failure_args(p)
    training_args(p)
    p.add_argument("--scheme", choices=("spare", "rep", "none", "elastic"), default="spare",
                   help="spare: SPARe+CKPT; rep: replica sets of r groups (r must divide N) + CKPT; none: "
                        "checkpointing only, r = 1; elastic: every group holds the whole model, a failed group "
                        "leaves and rejoins after --repair-time while the others go on (needs --repair-time; "
                        "whole training runs) (default spare)")
    p.add_argument("--elastic-data", choices=("rebalance", "shrink"), default=None,
                   help="with --scheme elastic: rebalance (the survivors share the whole batch, depth "
                        "ceil(N m / alive) / m) or shrink (each survivor keeps its shard: a smaller batch, work "
                        "rate alive / N) (default rebalance)")
    p.add_argument("--ckpt-interval", type=bounded("ckpt_interval"), default=None,
                   help=bound_help("checkpoint interval tau in minutes of compute (default: the closed-form optimum; "
                                   "under a scenario with domains, a ring order or lemons: the optimum on the "
                                   "sampled epochs)", "ckpt_interval"))
    ages_arg(p)
    scenario_args(p)
    repair_args(p, spares=True, trace=True)
    trace_args(p)
    microbatch_args(p, restart=True)
    p.set_defaults(func=cmd_ttt, title="Time-to-train")

    p = sub.add_parser("optimize", help="best redundancy r* and checkpoint interval per scheme (closed form)")
    common_args(p, sample=None, placement=False, redundancy=None, seed=False)  # r is searched; no randomness
    failure_args(p)
    training_args(p)
    p.add_argument("--r-max", type=bounded("r_max"), default=20,
                   help=bound_help("largest r searched (default 20)", "r_max"))
    p.add_argument("--curves", action="store_true", help="include TTT(r) per scheme in the output (default off)")
    ages_arg(p)
    scenario_args(p)
    p.add_argument("--epochs", type=bounded("pool_epochs", "--epochs"), default=None,
                   help=bound_help("epochs sampled per scheme and r under a scenario with no closed form (domains, "
                                   "a ring order, lemons; default 20000)", "pool_epochs"))
    p.add_argument("--pool-seed", type=bounded("seed", "--pool-seed"), default=0,
                   help=bound_help("PRNG seed of those epochs (default 0; the closed form uses none)", "seed"))
    repair_args(p, spares=True, listed=True, trace=True)
    trace_args(p)
    policy_search_args(p)
    p.set_defaults(func=cmd_optimize, title="Optimal redundancy and checkpoint interval per scheme")

    p = sub.add_parser("place", help="search the ring order that maximises E[epoch uptime] under a scenario, "
                                     "against contiguous, interleaved and random orders")
    common_args(p, sample=SampleFlag(100_000, "eval_trials", "epochs", "epochs per final evaluation of each order",
                                     former="--trials"), placement=False)
    p.add_argument("--placement", choices=("stacked", "block"), default="stacked",
                   help="shard placement over the ring (default stacked)")
    failure_args(p)
    scenario_args(p)
    p.add_argument("--steps", type=bounded("search_steps", "--steps"), default=200,
                   help=bound_help("local-search steps (default 200)", "search_steps"))
    a = p.add_argument("--search-epochs", type=bounded("search_trials", "--search-epochs"), default=2000,
                       help=bound_help("fresh epochs per search step (default 2,000; formerly --search-trials)",
                                       "search_trials"))
    deprecated_alias(p, "--search-trials", a)
    p.add_argument("--proposals", type=bounded("proposals"), default=8,
                   help=bound_help("random swaps tried per step (default 8)", "proposals"))
    p.add_argument("--random-orders", type=bounded("random_orders"), default=3,
                   help=bound_help("seeded random orders among the starting points (default 3)", "random_orders"))
    p.add_argument("--ring-out", default=None,
                   help="write the best order here, a ring file for --ring (default: none, not written)")
    p.set_defaults(func=cmd_place, title="Ring order search")

    p = sub.add_parser("presets", help="the --preset clusters: one line each; with NAME or --long their settings, "
                                       "sources and assumptions")
    p.add_argument("name", nargs="?", default=None, metavar="NAME",
                   help="one preset, in full: its settings, sources, assumptions and checks (default: every preset, "
                        "one line each)")
    p.add_argument("--long", action="store_true",
                   help="every preset in full (default: one line each; --json always gives every field)")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout (default: text)")
    p.add_argument("--quiet", action="store_true", help=argparse.SUPPRESS)
    job_scaling_arg(p)
    p.set_defaults(func=cmd_presets, title="Presets")

    p = sub.add_parser("bench", help="kernel throughput against NumPy and a SimPy discrete-event simulation")
    common_args(p, sample=None, placement=False, seed=False)  # run_bench takes no seed
    p.add_argument("--full", action="store_true",
                   help="longer, steadier measurements: 10 s per kernel instead of 3 s (default off)")
    p.add_argument("--chunk-size", type=bounded("chunk_size"), default=None,
                   help=bound_help("trials per kernel call (default: the driver's choice; larger on accelerators)",
                              "chunk_size"))
    p.add_argument("--devices", type=bounded("devices"), default=None,
                   help=bound_help("JAX devices to shard trials over (default: all)", "devices"))
    gpus_args(p)
    p.set_defaults(func=cmd_bench, title="Benchmark (same machine, same run)")

    p = sub.add_parser("reorder", help="replay a failure trace through the reorder controller (RECTLR)")
    common_args(p, sample=None)
    p.add_argument("--failed", default=None,
                   help="failed group ids in failure order, e.g. 3,17,4 (default: none; this or --trace)")
    p.add_argument("--trace", default=None,
                   help="trace file: CSV 'group[,time_min]' (minutes) or JSON lines (default: none; this or "
                        "--failed)")
    p.add_argument("--solver", choices=("ortools", "networkx", "scipy"), default="ortools",
                   help="min-cost-flow backend for phase 2 (default ortools)")
    microbatch_args(p)
    gpus_args(p)
    p.set_defaults(func=cmd_reorder, title="Reorder controller: state after the last failure")

    from .plan import add_plan_parser  # spare-jax plan (docs/planning.md#planning-your-own-cluster-spare-jax-plan)

    add_plan_parser(sub)
    for name, sp in sub.choices.items():  # read before argparse (cli_args.apply_config); listed in --help
        sp.add_argument("--config", metavar="FILE", default=None,
                        help="TOML file of settings for this subcommand (default: none): keys are its flag names "
                             "without the dashes (N or groups, r or redundancy), e.g. a file of the lines: "
                             + " | ".join(CONFIG_EXAMPLES[name]) + f" (at the top level or in a [{name}] table); "
                             "flags on the line win")
    return parser


def refuse_unused(args) -> None:
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
    if cmd == "ttt" and args.scheme == "elastic" and named("redundancy"):
        raise ValueError(f"-r/--redundancy {args.redundancy}: --scheme elastic keeps the whole model in every group "
                         "(r = 1, no shards to spread); drop -r or pick spare/rep")
    if cmd == "optimize":
        policy = len(args.microbatch_set or [1]) > 1 or args.restart_depths is not None
        if (repair or getattr(args, "spares", None) is not None) and named("epochs"):
            raise ValueError("--epochs: with repair or --spares optimize screens r and tau on whole training runs, "
                             "not on epoch pools; drop the flag")
        if (not repair and not policy and named("epochs", "pool_seed")
                and not scenario_from_flags(args, args.groups).needs_kernel):
            raise ValueError(f"{flags(named('epochs', 'pool_seed'))}: used only where there is no closed "
                             "form (domains, a ring order, lemons, a micro-batch or restart-depth "
                             "search); this run uses the closed form, drop the flag")
    if cmd == "reorder" and named("gpus_per_group") and getattr(args, "gpus", None) is None:
        raise ValueError("--gpus-per-group: reorder uses it only to count the groups of --gpus (N = GPUs / "
                         "--gpus-per-group); drop it or give --gpus")
    if cmd == "reorder" and args.placement != "random" and named("seed"):
        raise ValueError(f"--seed: the {args.placement} placement is deterministic (the seed draws only "
                         "--placement random); drop it")
