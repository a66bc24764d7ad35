"""``spare-jax plan`` (docs/planning.md#planning-your-own-cluster-spare-jax-plan): the flags, and the thin command
that calls ``planner.inputs.plan_inputs`` and formats it.

Where each setting comes from (a flag on the line, ``--config``, ``--preset``, the built-in default) is the
planner's (``planner.inputs``). The numeric flags default to None here so that it can tell a preset's value
(or a default) from one given by the user, for the report's "source" column.
"""

from __future__ import annotations

import os

from .args import policy_search_args, repair_args, scenario_args, stall_args, trace_args
from .base import bounded, bound_help
from .model_from_flags import (
    preset_job_wide, repair_from_flags, repair_times_from_flags, scenario_from_flags, scheme_list, trace_from_flags)
from ..planner import plan as planmod
from ..planner.inputs import SETTINGS, Origins, PlanInputs, RateInputs, plan_inputs, resolve_settings


PLAN_DESCRIPTION = """\
Plan a training run on your cluster: per scheme (spare, rep, none) the best redundancy r*, checkpoint
interval tau*, expected time-to-train with its Monte Carlo 5-95% range, availability, GPU-hours, cost and
the sensitivity of the choice to the uncertain inputs.

Per-GPU MTBF (--gpu-mtbf-hours) means GPU-hours per failure that takes down one data-parallel group, as in
every spare-jax command and in `spare-jax presets` (gpu_mtbf_hours); the cluster MTBF is the mean time
between such failures of the whole job. Job-wide and failure-domain interruptions are separate inputs.

Failure log format (--failure-log FILE): a UTF-8 CSV text file. Lines starting with # are comments, except
two directives:
  # nodes = M            nodes watched, those that never failed included
  # window_hours = H     the observation window [0, H] in hours
The first other line is the header node,time_hours; then one record per line:
  NODE,T                 node NODE failed T hours after the window's start (0 < T <= H)
  NODE,                  node NODE was watched and never failed
Example:
  # nodes = 512
  # window_hours = 720
  node,time_hours
  n17,12.5
  n204,330
  n17,401.25
Without '# nodes =' (or --log-nodes) the node count is the distinct nodes listed, and without
'# window_hours =' (or --log-window-hours) the window ends at the last failure: both are then guessed and
a warning on stderr says so (nodes that never failed are missed, so the MTBF comes out too short)."""


def add_plan_parser(sub) -> None:
    from ..model.presets import PRESETS

    p = sub.add_parser("plan", help="plan a run on your cluster in GPUs and hours: per scheme r*, tau*, "
                                    "time-to-train with its spread, availability, GPU-hours, cost, sensitivity",
                          description=PLAN_DESCRIPTION)
    g = p.add_argument_group("cluster")
    g.add_argument("--gpus", type=bounded("gpus"), default=None,
                   help=bound_help(f"GPUs in the job (default {planmod.DEFAULT_GPUS:,}, the size of the cluster-100k "
                                   "preset; with --preset: the preset's; the other commands' default cluster, 600 "
                                   "groups of 1,000 GPUs, is --preset paper-600k)", "gpus"))
    g.add_argument("--gpus-per-group", type=bounded("gpus_per_group"), default=None,
                   help=bound_help(f"GPUs per data-parallel group, a whole number dividing --gpus (default "
                                   f"{planmod.DEFAULT_GPUS_PER_GROUP:,}; with --preset: the preset's)",
                                   "gpus_per_group"))
    rate = g.add_mutually_exclusive_group()
    rate.add_argument("--gpu-mtbf-hours", type=bounded("gpu_mtbf_hours"), default=None,
                      help=bound_help(f"per-GPU MTBF in hours: GPU-hours per failure that takes down one group "
                                      f"(default {planmod.DEFAULT_GPU_MTBF_HOURS:,.0f} h, the paper's; with --preset: "
                                      "the preset's group-failure rate)", "gpu_mtbf_hours"))
    rate.add_argument("--node-mtbf-hours", type=bounded("node_mtbf_hours"), default=None,
                      help=bound_help("or: per-node MTBF in hours (a group = --gpus-per-group / --gpus-per-node nodes; "
                                      "default: not used)",
                                      "node_mtbf_hours"))
    rate.add_argument("--failure-log", default=None, metavar="FILE",
                      help="or: a CSV failure log fitted by maximum likelihood, its per-node MTBF in hours used "
                           "(default: none); format below")
    g.add_argument("--gpus-per-node", type=bounded("gpus_per_node"), default=None,
                   help=bound_help(f"GPUs per node: a group is --gpus-per-group / --gpus-per-node whole nodes; the "
                                   "per-node MTBF's unit with --node-mtbf-hours or --failure-log, and the nodes of "
                                   f"a spare node set with --spares (default {planmod.DEFAULT_GPUS_PER_NODE})",
                                   "gpus_per_node"))
    g.add_argument("--log-window-hours", type=bounded("log_window_hours"), default=None,
                   help=bound_help("observation window of --failure-log in hours, from 0 (default: the log's "
                                   "'# window_hours' line, else its last failure time)", "log_window_hours"))
    g.add_argument("--log-nodes", type=bounded("log_nodes"), default=None,
                   help=bound_help("nodes watched by --failure-log, those that never failed included (default: the "
                                   "log's '# nodes' line, else the distinct nodes it lists)", "log_nodes"))
    g.add_argument("--fit-law", choices=planmod.FIT_LAWS, default=None,
                   help="which fit's per-node MTBF --failure-log gives: exponential (failures / node-hours, "
                        "default) or weibull (the renewal mean); the plan's model is exponential either way")
    p.add_argument("--preset", choices=tuple(PRESETS), default=None,
                   help="published cluster parameters as defaults (flags and --config win); `spare-jax presets` "
                        "lists them with their sources")
    p.set_defaults(preset_job_mtbf=None)
    t = p.add_argument_group("training")
    t.add_argument("--restart", type=bounded("restart"), default=None,
                   help=bound_help("global restart cost R in minutes (default 60; with --preset: the preset's)", "restart"))
    t.add_argument("--ckpt-cost", type=bounded("ckpt_cost"), default=None,
                   help=bound_help("blocking checkpoint cost C in minutes (default 5)", "ckpt_cost"))
    t.add_argument("--work-hours", type=bounded("work_hours"), default=None,
                   help=bound_help("failure-free work W in hours at depth 1 (default 720; with --preset: the preset's)",
                              "work_hours"))
    stall_args(t, default=None)
    t.add_argument("--gpu-hour-price", type=bounded("gpu_hour_price"), default=None,
                   help=bound_help(f"price of one GPU-hour (default {planmod.DEFAULT_PRICE:g}, a placeholder: give "
                              "yours; the cost column is in the same currency)", "gpu_hour_price"))
    t.add_argument("--currency", type=_currency, default=None, metavar="NAME",
                   help="the price's currency, e.g. USD, for the cost column's title (default: none, the cost is "
                        "in the unit of --gpu-hour-price, 'per GPU-hour')")
    t.add_argument("--deadline-hours", type=bounded("deadline_hours"), default=None,
                   help=bound_help("wall-clock deadline in hours: report P(TTT > deadline) (default: none)",
                                   "deadline_hours"))
    scenario_args(p, mtbf_flags=False)
    policy_search_args(p, plan=True)
    repair_args(p, spares=True, listed=True, spares_auto=True, trace=True)
    spare_pool_args(p)
    trace_args(p, nodes=False)
    m = p.add_argument_group("search and Monte Carlo")
    m.add_argument("--schemes", type=scheme_list, default=None, metavar="LIST",
                   help="strategies compared, comma-separated from spare, rep, none, elastic (default "
                        "spare,rep,none, and elastic with --repair-time: every group holds the whole model and a "
                        "failed one rejoins after the repair while the others go on)")
    m.add_argument("--r-max", type=bounded("r_max"), default=None,
                   help=bound_help(f"largest redundancy r searched (default {planmod.DEFAULT_R_MAX}; "
                                   f"{planmod.DEFAULT_R_MAX_POOL} under a scenario with no closed form -- domains, a "
                                   "ring order, lemons -- where each r costs a compiled kernel and a pool of epochs)",
                                   "r_max"))
    m.add_argument("--runs", type=bounded("ttt_trials", "--runs"), default=planmod.DEFAULT_RUNS,
                   help=bound_help(f"Monte Carlo training runs per scheme for the spread (default "
                                   f"{planmod.DEFAULT_RUNS}; fewer when one run needs too many epochs)", "ttt_trials"))
    m.add_argument("--epochs", type=bounded("pool_epochs", "--epochs"), default=None,
                   help=bound_help(f"epochs sampled per scheme and r under a scenario with no closed form (domains, a "
                                   f"ring order, lemons; default {planmod.PLAN_POOL_EPOCHS})", "pool_epochs"))
    batch = m.add_mutually_exclusive_group()
    batch.add_argument("--global-batch-seqs", type=_positive_int("--global-batch-seqs"), default=None, metavar="B",
                       help="the global batch in sequences, with repair: a shard cannot be cut into more micro-batches "
                            "than it has sequences, so micro-batches per shard are searched over the powers of two up "
                            "to floor(B / N), and that bound (default: not given, m <= 8 searched, and the verdict "
                            "says so)")
    batch.add_argument("--max-microbatches", type=_positive_int("--max-microbatches"), default=None, metavar="M",
                       help="or: the most micro-batches per shard, with repair: m searched over the powers of two up "
                            "to M, and M (default: not given)")
    m.add_argument("--seed", type=bounded("seed"), default=0, help=bound_help("PRNG seed (default 0)", "seed"))
    m.add_argument("--no-sensitivity", action="store_true",
                   help="skip the sensitivity table (it re-runs the optimiser 6-8 times)")
    p.add_argument("--report", default=None, metavar="FILE.html",
                   help="also write a self-contained HTML report (tables, parameters with sources, figures; "
                        "default: none)")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_plan, title="spare-jax plan")


def _positive_int(flag: str):
    """A whole number >= 1 for ``flag``."""
    import argparse

    def parse(text):
        try:
            v = int(str(text).replace("_", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} must be a whole number >= 1, got {text!r}") from None
        if v < 1:
            raise argparse.ArgumentTypeError(f"{flag} must be a whole number >= 1, got {text!r}")
        return v
    return parse


def spare_pool_args(p) -> None:
    """The flags of ``--spares auto`` (``planner.spares``)."""
    from ..planner import spares

    g = p.add_argument_group("choosing the spare pool (--spares auto)")
    g.add_argument("--max-spare-wait", type=bounded("max_spare_wait"), default=None,
                   help=bound_help(f"with --spares auto: the longest wait of a failed group for a spare allowed in a "
                                   f"run, minutes; the pool must keep P(a run's longest wait is longer) at most "
                                   f"{100 * spares.WAIT_LEVEL:g}%% (its Clopper-Pearson 95%% upper bound) (default "
                                   f"{spares.MAX_SPARE_WAIT_MIN:g})", "max_spare_wait"))
    g.add_argument("--spare-runs", type=bounded("spare_runs"), default=None,
                   help=bound_help(f"with --spares auto: whole training runs per pool size K (default "
                                   f"{spares.DEFAULT_SPARE_RUNS}; at least {spares.fewest_runs()}, the fewest that "
                                   "can meet the wait bound)", "spare_runs"))


def spares_auto_from_flags(args):
    """``--spares auto`` as a ``planner.spares.SpareAuto`` (None without it), refused in one line without
    ``--hardware-repair`` or ``--repair-time``; the repair then has no pool of its own (``args.spares`` and
    ``args.hardware_repair`` are cleared)."""
    from ..planner.spares import DEFAULT_SPARE_RUNS, MAX_SPARE_WAIT_MIN, SpareAuto

    if args.spares != "auto":
        given = [f for f, v in (("--max-spare-wait", args.max_spare_wait), ("--spare-runs", args.spare_runs))
                 if v is not None]
        if given:
            raise ValueError(f"{', '.join(given)} go(es) with --spares auto")
        return None
    if args.hardware_repair is None:
        raise ValueError("--spares auto needs --hardware-repair H: the minutes a failed group's node set spends in "
                         "hardware repair before it returns to the pool (no default: give your own)")
    if args.repair_time is None:
        raise ValueError("--spares auto needs --repair-time D: the swap, from taking a spare to rejoining")
    auto = SpareAuto(args.hardware_repair, MAX_SPARE_WAIT_MIN if args.max_spare_wait is None else args.max_spare_wait,
                     DEFAULT_SPARE_RUNS if args.spare_runs is None else args.spare_runs)
    args.spares, args.hardware_repair = None, None
    return auto


CURRENCY_MAX = 12  # characters: a code (USD), a symbol or a short word, as the cost column's title shows it


def _currency(text: str) -> str:
    """``--currency``: a short printable name, refused when longer than ``CURRENCY_MAX`` characters."""
    import argparse

    from .base import quoted

    text = str(text).strip()
    if not text or not text.isprintable() or len(text) > CURRENCY_MAX:
        raise argparse.ArgumentTypeError(f"--currency must be a short name (1 to {CURRENCY_MAX} printable "
                                         f"characters, e.g. USD), got {quoted(text)}")
    return text


def _check_report_path(path: str) -> None:
    parent = os.path.dirname(os.path.abspath(path)) if path else ""
    if not path or os.path.isdir(path):
        raise ValueError(f"--report must name a file, got {path!r}")
    if not os.path.isdir(parent) or not os.access(parent, os.W_OK) or (
            os.path.exists(path) and not os.access(path, os.W_OK)):
        raise ValueError(f"--report: cannot write to {path}")


def _resolve(args):
    """The settings with their sources, ``planner.inputs.resolve_settings`` of the flags: (preset, {name: (value,
    source)})."""
    return resolve_settings({name: getattr(args, name) for name in SETTINGS}, args.preset)


TRACE_RUNS = 16  # plan --failure-trace: runs per strategy unless --runs is given


def _plan_trace(args, trace) -> dict:
    """``plan --failure-trace``: the strategies ranked on the trace's replay, the model's ranking beside it
    (``planner.trace_report.plan_on_trace``), and with ``--report`` its HTML report."""
    import dataclasses

    from ..model.cluster import Cluster, Sampling
    from ..model.failures import FailureModel
    from ..model.trace_units import nodes_per_group
    from ..model.training import Training
    from ..planner.trace_report import plan_on_trace, write_trace_report

    given = [f for f, v in (("--failure-log", args.failure_log), ("--node-mtbf-hours", args.node_mtbf_hours),
                            ("--gpu-mtbf-hours", args.gpu_mtbf_hours), ("--deadline-hours", args.deadline_hours),
                            ("--gpu-hour-price", args.gpu_hour_price)) if v is not None]
    if given:
        raise ValueError(f"{', '.join(given)}: not used with --failure-trace (the trace gives the failures; a plan "
                         "on a trace ranks time-to-train only); drop it")
    if args.report is not None:
        _check_report_path(args.report)
    preset, s = _resolve(args)
    gpus, gpg = s["gpus"][0], s["gpus_per_group"][0]
    n = planmod.cluster_groups(gpus, gpg, ("--gpus", "--gpus-per-group"))
    if trace.unit == "node":
        trace = dataclasses.replace(trace, nodes_per_group=nodes_per_group(gpg, args.gpus_per_node or 8))
    elif args.gpus_per_node is not None:
        raise ValueError("--gpus-per-node goes with --trace-unit node here (n = GPUs per group / GPUs per node)")
    repair = repair_from_flags(args)
    cluster = Cluster(n, FailureModel(reference_gpus=float(gpus), gpus_per_group=float(gpg)),
                      scenario_from_flags(args, n, gpus), repair)
    training = Training(s["work_hours"][0], s["ckpt_cost"][0], s["restart"][0],
                        failure_stall_min=s["failure_stall"][0], rejoin_stall_min=s["rejoin_stall"][0])
    runs = args.runs if "runs" in getattr(args, "given", set()) else TRACE_RUNS
    out = plan_on_trace(cluster, training, trace, args.r_max or 5, Sampling(runs, seed=args.seed)).to_json()
    if args.report is not None:
        write_trace_report(out, trace, args.report)
        out["report"] = args.report
    return out


def cmd_plan(args) -> dict:
    trace = trace_from_flags(args)
    if trace is not None:
        return _plan_trace(args, trace)

    if args.failure_log is None:
        given = [f for f, v in (("--log-window-hours", args.log_window_hours), ("--log-nodes", args.log_nodes),
                                ("--fit-law", args.fit_law)) if v is not None]
        if given:
            raise ValueError(f"{', '.join(given)} go(es) with --failure-log")
    if args.report is not None:
        _check_report_path(args.report)
    preset, s = _resolve(args)
    gpus, gpg = s["gpus"][0], s["gpus_per_group"][0]
    n = planmod.cluster_groups(gpus, gpg, ("--gpus", "--gpus-per-group"))
    if args.gpus_per_node is not None and gpg % int(args.gpus_per_node):
        raise ValueError(f"--gpus-per-group ({gpg}) must be a multiple of --gpus-per-node ({args.gpus_per_node:g}): "
                         "a data-parallel group is made of whole nodes")
    spares_auto = spares_auto_from_flags(args)
    repair = repair_from_flags(args)
    search, args.microbatches, depth = planmod.policy_search(args.microbatch_set, args.restart_depths, repair,
                                                             repair_times_from_flags(args))
    scenario = scenario_from_flags(args, n, gpus)
    rate = RateInputs(args.gpu_mtbf_hours, args.node_mtbf_hours, args.gpus_per_node, args.failure_log,
                      args.log_window_hours, args.log_nodes, args.fit_law)
    options = planmod.PlanOptions(args.runs, args.seed, args.r_max, args.epochs, not args.no_sensitivity, depth,
                                  args.schemes, search, preset, args.global_batch_seqs, args.max_microbatches,
                                  spares_auto)
    origins = Origins(getattr(args, "repair_from_preset", False), args.gpus_per_node is not None,
                      preset_job_wide(args), args.job_scaling, args.domain_size is not None)
    result, notes = plan_inputs(PlanInputs(s, rate, options, scenario, repair, args.deadline_hours, args.currency,
                                           args.microbatch_set is not None, origins), progress=not args.quiet)
    args.late_notes = list(notes)  # printed by main once the plan is done
    if args.report is not None:
        from ..planner.report import write_report

        write_report(result, args.report)
    if args.json:
        out = result.to_json()
        if args.report is not None:
            out["report"] = args.report
        return out
    print(planmod.format_table(result))
    if result.spares is not None:
        from ..planner.spares import spares_text

        print(spares_text(result.spares))
    if args.report is not None:
        print(f"report: {args.report}")
    args.printed = True
    return {}
