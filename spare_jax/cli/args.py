"""The flags the commands share: sample sizes, placement, failure law and MTBFs, scenario parts, repair,
micro-batches and the policy search, execution (chunks, devices, --state-dir, processes), training costs.

Their building blocks are in ``base`` (bounded numbers, help lines), the values they make in
``model_from_flags``, ``--config`` files in ``config``, what a command prints in ``output``.
"""

from __future__ import annotations

import argparse
import dataclasses

from ..model.bounds import GROUP_MTBF_RANGE
from ..model.bounds import describe as describe_bound
from .base import bounded, bound_help
from .deprecation import deprecated_alias


@dataclasses.dataclass(frozen=True)
class SampleFlag:
    """A command's sample-size flag: ``--NAME`` (also its dest: trials, wipe-out trials; epochs; runs, training
    runs) with its ``default``, the ``bound`` it is checked against, its ``help`` and its ``former`` name (a
    deprecated alias, or None)."""

    default: int = 100_000
    bound: str = "trials"
    name: str = "trials"
    help: str = "Monte Carlo wipe-out trials (epochs from a restart to the wipe-out)"
    former: str | None = None


def common_args(p, *, sample: SampleFlag | None = SampleFlag(), placement=True, redundancy: int | None = 8,
                groups: int = 600, seed=True):
    """The flags most subcommands share; ``sample``: the sample-size flag (None: the command has none)."""
    p.add_argument("-N", "--groups", type=bounded("groups"), default=groups,
                   help=bound_help(f"data-parallel groups N (default {groups}; or --gpus G with --gpus-per-group)",
                                   "groups"))
    if redundancy is not None:
        p.add_argument("-r", "--redundancy", type=bounded("redundancy"), default=redundancy,
                       help=bound_help(f"redundancy r: shards per stack and holders per shard (default {redundancy})",
                                       "redundancy"))
    if placement:
        p.add_argument("--placement", choices=("stacked", "block", "random"), default="stacked",
                       help="shard placement (default stacked)")
    if sample is not None:
        flag = "--" + sample.name
        a = p.add_argument(flag, dest=sample.name, type=bounded(sample.bound, flag), default=sample.default,
                           help=bound_help(f"{sample.help} (default {sample.default:,}"
                                           + (f"; formerly {sample.former}" if sample.former else "") + ")",
                                           sample.bound))
        if sample.former:
            deprecated_alias(p, sample.former, a)
    if seed:
        p.add_argument("--seed", type=bounded("seed"), default=0, help=bound_help("PRNG seed (default 0)", "seed"))
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout (default: a table)")
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr (default: progress shown)")


def failure_args(p):
    """The failure law and its MTBF (reference, per group or per GPU), the GPU counts and ``--preset``."""
    g = p.add_mutually_exclusive_group()
    a = g.add_argument("--reference-mtbf-min", dest="mtbf", type=bounded("mtbf", "--reference-mtbf-min"),
                       default=5.0,
                       help=f"{describe_bound('mtbf')}: MTBF in minutes of the whole REFERENCE cluster of "
                            "--reference-gpus GPUs (group failures), not of the -N groups run (default 5 min at "
                            "600,000 GPUs, i.e. a per-GPU MTBF of 50,000 h); the per-group MTBF, this x "
                            "reference-gpus / gpus-per-group, must lie in "
                            f"{GROUP_MTBF_RANGE[0]:g}..{GROUP_MTBF_RANGE[1]:g} min (formerly --mtbf). Or give "
                            "--group-mtbf-min or --gpu-mtbf-hours instead")
    deprecated_alias(g, "--mtbf", a)
    a = g.add_argument("--group-mtbf-min", dest="group_mtbf", type=bounded("group_mtbf", "--group-mtbf-min"),
                       default=None,
                       help=bound_help("instead of --reference-mtbf-min: MTBF of ONE data-parallel group in minutes "
                                       "(default: from --reference-mtbf-min, 3000 min; formerly --group-mtbf)",
                                       "group_mtbf"))
    deprecated_alias(g, "--group-mtbf", a)
    g.add_argument("--gpu-mtbf-hours", type=bounded("gpu_mtbf_hours"), default=None,
                   help=bound_help("instead of --reference-mtbf-min: per-GPU MTBF in hours, GPU-hours per group "
                                   "failure (default: from --reference-mtbf-min, 50,000 h)", "gpu_mtbf_hours"))
    gpus_args(p)
    p.add_argument("--reference-gpus", type=bounded("reference_gpus"), default=600_000.0,
                   help=bound_help("GPU count at which --reference-mtbf-min is quoted, and at which --restart is "
                                   "quoted when --restart-scaling is not none (default 600000 GPUs)", "reference_gpus"))
    p.add_argument("--distribution", choices=("exponential", "weibull"), default="exponential",
                   help="law of each group's time to failure (default exponential; weibull keeps the same mean)")
    p.add_argument("--weibull-shape", type=bounded("weibull_shape"), default=1.0,
                   help=bound_help("Weibull shape k, same mean per group (default 1; only with --distribution weibull)",
                                   "weibull_shape"))
    from ..model.presets import PRESETS

    p.add_argument("--preset", choices=tuple(PRESETS), default=None,
                   help="published cluster parameters as defaults (default: none; flags and --config win); "
                        "`spare-jax presets` lists them with their sources")
    p.set_defaults(preset_job_mtbf=None)


def gpus_args(p):
    """``--gpus G`` and ``--gpus-per-group``: the cluster in GPUs; ``--gpus`` sets N = G / --gpus-per-group
    (``main`` resolves it, and refuses a -N that disagrees)."""
    p.add_argument("--gpus", type=bounded("gpus"), default=None,
                   help=bound_help("GPUs in the job, instead of -N: N = GPUs / --gpus-per-group (default: from -N)",
                              "gpus"))
    p.add_argument("--gpus-per-group", type=bounded("gpus_per_group"), default=1000.0,
                   help=bound_help("GPUs per data-parallel group (default 1000 GPUs)", "gpus_per_group"))


def resolve_gpus(args) -> None:
    """``--gpus G``: N = G / --gpus-per-group (a whole number of groups); a -N given too must agree."""
    gpus = getattr(args, "gpus", None)
    if gpus is None or args.command == "plan":
        return
    from ..planner.plan import cluster_groups

    gpg = args.gpus_per_group
    if float(gpg) != int(gpg):
        raise ValueError(f"--gpus-per-group must be a whole number with --gpus, got {gpg:g}")
    n = cluster_groups(gpus, int(gpg), ("--gpus", "--gpus-per-group"))
    if "groups" in getattr(args, "given", ()) and args.groups != n:
        raise ValueError(f"-N {args.groups} and --gpus {gpus:,} disagree (--gpus / --gpus-per-group = {gpus:,} / "
                         f"{int(gpg):,} = {n:,} groups); give one of them")
    args.groups = n


def _job_args(p):
    """The job-wide part of the scenario flags."""
    g = p.add_argument_group("scenario (default: the paper's model, i.i.d. group failures only)")
    a = g.add_argument("--job-mtbf-min", dest="job_mtbf", type=bounded("job_mtbf", "--job-mtbf-min"), default=None,
                       help=bound_help("mean minutes between job-wide interruptions that no redundancy masks "
                                       "(default off; formerly --job-mtbf)", "job_mtbf"))
    deprecated_alias(g, "--job-mtbf", a)
    g.add_argument("--job-fraction", type=bounded("job_fraction"), default=None,
                   help=bound_help("or: the fraction of all interruptions that is job-wide (default off)",
                                   "job_fraction"))
    job_scaling_arg(g)
    p.set_defaults(cfg_job_mtbf=None, cfg_job_fraction=None)  # from --config: yield to either flag
    return g


JOB_SCALING_HELP = ("how a --preset's job-wide interruptions, measured on its source's cluster, carry to this "
                    "cluster's GPU count: per-gpu (a fixed rate per GPU: twice the GPUs, half the job-wide MTBF; "
                    "default, as the presets are built) or per-job (a fixed rate per job: the source's job-wide "
                    "MTBF at any size)")


def job_scaling_arg(p):
    """``--job-scaling``: how a preset's job-wide interruptions carry to another cluster size."""
    from ..model.presets import JOB_SCALINGS

    p.add_argument("--job-scaling", choices=JOB_SCALINGS, default="per-gpu", help=JOB_SCALING_HELP)


def check_job_flags(args) -> None:
    """``--job-mtbf-min`` and ``--job-fraction`` exclude each other."""
    if args.job_mtbf is not None and args.job_fraction is not None:
        raise ValueError("--job-mtbf-min and --job-fraction: give one of them")


def scenario_args(p, mtbf_flags=True):
    """The ``Scenario`` flags; a ``[scenario]`` table in ``--config`` sets the same keys, plus
    ``domains = [{size = G, mtbf = MIN}, ...]`` for several levels. Off by default (the paper's model)."""
    g = _job_args(p)
    g.add_argument("--domain-size", type=bounded("domain_size"), default=None,
                   help=bound_help("groups per failure domain (contiguous physical ids; default: no domains)",
                                   "domain_size"))
    a = g.add_argument("--domain-mtbf-min", dest="domain_mtbf", type=bounded("domain_mtbf", "--domain-mtbf-min"),
                       default=None, help=bound_help("MTBF of one failure domain in minutes (with --domain-size; "
                                                     "default: no domains; formerly --domain-mtbf)", "domain_mtbf"))
    deprecated_alias(g, "--domain-mtbf", a)
    g.add_argument("--ring", default=None,
                   help="ring order of the placement (stacked or block over ring positions): contiguous "
                        "(default), interleaved (across the domains) or a file of physical group ids in ring order")
    g.add_argument("--lemon-fraction", type=bounded("lemon_fraction"), default=None,
                   help=bound_help("fraction of groups that are lemons (default 0)", "lemon_fraction"))
    g.add_argument("--lemon-factor", type=bounded("lemon_factor"), default=None,
                   help=bound_help("how many times as often a lemon fails (default 1)", "lemon_factor"))
    g.add_argument("--lemon-seed", type=bounded("lemon_seed"), default=None,
                   help=bound_help("which groups are lemons (default 0)", "lemon_seed"))
    g.add_argument("--group-mtbf-file", default=None,
                   help="a text file of per-group MTBFs in minutes, one number per line for each physical group "
                        "(# comments allowed), replacing the uniform group MTBF (default: none, every group at the "
                        "same rate); not with lemons" + (" or the other MTBF flags" if mtbf_flags else ""))
    p.set_defaults(scenario_domains=None)


def microbatch_args(p, restart: bool = False):
    """``--microbatches`` and, where time-to-train is computed, ``--restart-depth``."""
    p.add_argument("--microbatches", type=bounded("microbatches"), default=None,
                   help=bound_help("micro-batches per shard m: survivors share a lost shard's work in 1/m pieces "
                                   "(depth = c/m; default 1, whole shards as in the paper)", "microbatches"))
    if restart:
        p.add_argument("--restart-depth", type=bounded("restart_depth"), default=None,
                       help=bound_help("proactive restart: end an epoch voluntarily (a checkpoint, then a restart) "
                                       "once the depth reaches this value (default: never; spare only)",
                                       "restart_depth"))


def _number_list(bound, flag, allow_auto=False):
    """An argparse type for a comma-separated list of ``bound`` values (``auto``: an empty tuple, the
    default grid)."""
    one = bounded(bound, flag)

    def parse(text):
        text = str(text).strip()
        if allow_auto and text == "auto":
            return ()
        items = text.split(",")
        if not text or any(not t.strip() for t in items):
            raise argparse.ArgumentTypeError(f"{flag} must be a comma-separated list of values"
                                             + (" or auto" if allow_auto else "") + f", got {text!r}")
        return sorted({one(t) for t in items})

    parse.list_of = one.kind  # --config takes a number, a list of numbers or the comma text
    return parse


def policy_search_args(p, plan: bool = False):
    """``optimize`` and ``plan``: the micro-batch counts and proactive-restart depths searched."""
    p.add_argument("--microbatches", dest="microbatch_set", type=_number_list("microbatches", "--microbatches"),
                   default=None, help=bound_help("micro-batches per shard m, or a comma list to search (e.g. "
                                                 "1,2,4,8; default 1"
                                                 + (", or 1,2,4,8 with --repair-time" if plan else "") + ")",
                                                 "microbatches"))
    where = ("with --repair-time on whole training runs, else one value (default: with --repair-time never, "
             "1.5, 2, 3; else no proactive restart)" if plan else
             "on epoch pools of --epochs (default: no proactive restart)")
    p.add_argument("--restart-depth", dest="restart_depths",
                   type=_number_list("restart_depth", "--restart-depth", allow_auto=True), default=None,
                   help=bound_help("proactive restart: search these depths D_max (comma list, or auto for "
                                   f"the default grid) with r and tau, {where}", "restart_depth"))
    p.set_defaults(microbatches=None)


def _with_trace_word(parse):
    """``parse`` that also takes the word ``trace`` (``--repair-time trace``: repair from a failure trace)."""
    def with_word(text):
        return "trace" if str(text).strip() == "trace" else parse(text)

    for name in ("kind", "bound", "list_of"):
        if hasattr(parse, name):
            setattr(with_word, name, getattr(parse, name))
    with_word.words = ("trace",)
    return with_word


def trace_args(p, nodes: bool = True):
    """A failure trace replayed in whole training runs (ttt, optimize, plan): its file, units, time scale, the
    fit's burst window, and no repair (``--repair-time trace`` is the default with a trace)."""
    g = p.add_argument_group("a failure trace replayed (default off)")
    g.add_argument("--failure-trace", default=None, metavar="FILE",
                   help="a CSV of down periods ('# nodes = M', '# window_hours = H', then node,failed_hours,"
                        "returned_hours): its periods replace the group clocks in whole training runs, run k of "
                        "--runs starting at k/runs of the window and wrapping round; the fitted independent "
                        "model is simulated beside it (default: none)")
    g.add_argument("--trace-unit", choices=("group", "node"), default=None,
                   help="with --failure-trace: group (trace node g is group g) or node (group g is nodes g n .. "
                        "g n + n - 1, n = --trace-nodes-per-group) (default group)")
    if nodes:
        g.add_argument("--trace-nodes-per-group", type=bounded("trace_nodes_per_group"), default=None,
                       help=bound_help("with --trace-unit node: the trace's nodes per group, GPUs per group / GPUs "
                                       "per node (default 1)", "trace_nodes_per_group"))
    g.add_argument("--trace-time-scale", type=bounded("trace_time_scale"), default=None,
                   help=bound_help("with --failure-trace: multiply every failure time and the window by this, "
                                   "keeping each down period's length (below 1: a larger cluster's rate) "
                                   "(default 1)", "trace_time_scale"))
    g.add_argument("--burst-window", type=bounded("burst_window"), default=None,
                   help=bound_help("with --failure-trace: the fit's burst window, minutes of scaled time "
                                   "(default 10)", "burst_window"))
    g.add_argument("--no-repair", action="store_true",
                   help="with --failure-trace: a failed group stays down until the next global restart "
                        "(default: it returns at the end of its down period, --repair-time trace)")


def repair_args(p, spares: bool = False, listed: bool = False, spares_auto: bool = False, trace: bool = False):
    """Repair without a global restart; off by default (the paper's model). ``spares``: also the finite spare
    pool (``--spares``, ``--hardware-repair``), where whole training runs answer (ttt, optimize, plan).
    ``listed``: ``--repair-time`` takes a comma list, searched with the rest (optimize, plan). ``spares_auto``:
    ``--spares`` also takes ``auto`` (plan: the pool size is chosen)."""
    g = p.add_argument_group("repair without a global restart (default off)")
    repair_type = _number_list("repair_time", "--repair-time") if listed else bounded("repair_time")
    g.add_argument("--repair-time", type=_with_trace_word(repair_type) if trace else repair_type, default=None,
                   help=bound_help("mean minutes for a failed group to rejoin while the others keep going"
                                   + (", or a comma list to search with r, m, D_max and tau on whole training runs"
                                 if listed else "")
                                   + ("; with --failure-trace a fixed time D after the failure, or trace: at "
                                      "the end of its down period (the default with a trace)" if trace else "")
                                   + " (default: no repair)", "repair_time"))
    g.add_argument("--repair-law", choices=("fixed", "exp", "lognormal"), default=None,
                   help="law of the repair time (default fixed; lognormal keeps the mean)")
    g.add_argument("--repair-sigma", type=bounded("repair_sigma"), default=None,
                   help=bound_help("log-sd of the lognormal repair law (default 1.0)", "repair_sigma"))
    if spares:
        number = bounded("spares")

        def spares_type(text):
            return "auto" if spares_auto and str(text).strip() == "auto" else number(text)

        spares_type.kind, spares_type.bound = number.kind, number.bound
        spares_type.words = ("auto",) if spares_auto else ()  # the word a --config file may give instead
        g.add_argument("--spares", type=spares_type, default=None,
                       help=bound_help("a finite pool of K spare node sets: a failed group takes a free one or waits "
                                       "for one, first come first served, and a global restart waits until every "
                                       "down group has one (default: unlimited; with --hardware-repair)"
                                       + ("; auto: choose K, the cheapest pool whose longest wait for a spare "
                                          "meets --max-spare-wait (needs --hardware-repair and --repair-time)"
                                          if spares_auto else ""), "spares"))
        g.add_argument("--hardware-repair", type=bounded("hardware_repair"), default=None,
                       help=bound_help("minutes a failed group's node set spends in hardware repair before it returns "
                                       "to the pool as a spare (with --spares; default: none)", "hardware_repair"))


def run_args(p):
    """How a Monte Carlo runs: chunks, devices, the resumable ``--state-dir`` and the multi-process flags."""
    p.add_argument("--chunk-size", type=bounded("chunk_size"), default=None,
                   help=bound_help("trials per chunk (default: chosen from the working-set size; refused when "
                                   "its working set exceeds half the RAM)", "chunk_size"))
    p.add_argument("--devices", type=bounded("devices"), default=None,
                   help=bound_help("JAX devices to shard trials over (default: all)", "devices"))
    a = p.add_argument("--state-dir", default=None, metavar="DIR",
                       help="directory for this command's saved state (what the chunks done so far found); "
                       "re-running the same command resumes from it (locked while a run uses it; "
                       "default: none, nothing kept; formerly --out)")
    deprecated_alias(p, "--out", a)
    p.add_argument("--distributed", action="store_true",
                   help="call jax.distributed.initialize() first (multi-host; configured by the environment)")
    p.add_argument("--coordinator", default=None, metavar="HOST:PORT",
                   help="multi-process run: the coordinator's address (process 0 listens there); with "
                   "--num-processes and --process-id. P copies of one command give the JSON of one process "
                   "(default: none, one process)")
    p.add_argument("--num-processes", type=bounded("num_processes"), default=None,
                   help=bound_help("multi-process run: the number of processes (default: none, one process)",
                                   "num_processes"))
    p.add_argument("--process-id", type=bounded("process_id"), default=None,
                   help=bound_help("multi-process run: this process's id, 0..P-1 (default: none, one process)",
                                   "process_id"))
    p.add_argument("--peer-timeout", type=bounded("peer_timeout"), default=None,
                   help=bound_help("multi-process run: seconds a process waits for a peer that stopped answering "
                                   "(to join, during the run, to leave) before every process exits with code 3 and "
                                   "one line naming it (default: 60)", "peer_timeout"))
    p.add_argument("--verbose", action="store_true",
                   help="multi-process run: show JAX's, XLA's and gloo's native logs on stderr (default: off; "
                   "they go to a log file whose path an error line gives, removed after a good run)")


def training_args(p):
    """The training costs: W, C, R and how R scales with the GPU count."""
    p.add_argument("--work-hours", type=bounded("work_hours"), default=720.0,
                   help=bound_help("failure-free work W in hours at depth 1 (default 720)", "work_hours"))
    p.add_argument("--ckpt-cost", type=bounded("ckpt_cost"), default=5.0,
                   help=bound_help("blocking checkpoint cost C in minutes (default 5)", "ckpt_cost"))
    p.add_argument("--restart", type=bounded("restart"), default=60.0,
                   help=bound_help("global restart cost R in minutes at the reference size (default 60)", "restart"))
    p.add_argument("--restart-scaling", choices=("none", "linear", "quadratic"), default="none",
                   help="restart cost vs GPU count relative to --reference-gpus (default none)")
    stall_args(p)


def stall_args(p, default=0.0):
    """The stalls: the whole job's pause per group failure survived without a global restart, and per group's
    return from repair (docs/runs.md#stalls)."""
    p.add_argument("--failure-stall", type=bounded("failure_stall"), default=default, metavar="MIN",
                   help=bound_help("minutes the whole job pauses after each group failure it survives without a "
                                   "global restart: detection, agreeing on the new membership, reassigning the work "
                                   "(whole training runs answer when > 0) (default 0)", "failure_stall"))
    p.add_argument("--rejoin-stall", type=bounded("rejoin_stall"), default=default, metavar="MIN",
                   help=bound_help("minutes the whole job pauses after each group's return from repair (whole "
                                   "training runs answer when > 0) (default 0)", "rejoin_stall"))


def ages_arg(p):
    """``--ages``: whether survivors keep their age at a global restart."""
    p.add_argument("--ages", choices=("kept", "renewed"), default="kept",
                   help="at a global restart only failed groups are replaced; survivors keep their age (kept, "
                        "default) or every clock restarts (renewed); identical for exponential failures")


