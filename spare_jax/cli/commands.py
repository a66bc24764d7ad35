"""The `spare-jax` commands: each maps its flags to the model's values and makes one library call.

Every subcommand takes ``--json`` (one JSON object on stdout, nothing else there) and prints a readable
table otherwise. Progress bars go to stderr. Bad input: exit code 2 and one line on stderr, no traceback.
"""

from __future__ import annotations

from .model_from_flags import (
    failure_model_from_flags, repair_from_flags, repair_times_from_flags, scenario_from_flags, trace_from_flags,
    training_from_flags)

TRACE_RUNS = 16  # optimize --failure-trace: runs per scheme, from evenly spaced offsets of the trace

EXIT_BAD_INPUT = 2


def _sampling(args, count: int):
    """The Monte Carlo's execution from the flags: sample size, seed, chunks, devices, --state-dir, progress."""
    from ..model.cluster import Sampling

    out = getattr(args, "out", None)
    if out:  # before the kernels are compiled: a place that cannot hold the run is refused at once
        from ..kernels.state_files import ChunkStore

        ChunkStore.check_dir(out)
        _check_out_dir(out, "--out")
    return Sampling(count, getattr(args, "seed", 0), getattr(args, "chunk_size", None), getattr(args, "devices", None),
                    getattr(args, "state_dir", None), not getattr(args, "quiet", False))


def _cluster(args, check_redundancy: bool = True):
    """The cluster of the flags: groups, failure law, scenario, repair law (checked in the flags' order)."""
    from ..model.cluster import Cluster
    from ..model.placement import check_groups_redundancy

    repair = repair_from_flags(args)
    model = failure_model_from_flags(args)
    if check_redundancy:
        check_groups_redundancy(args.groups, args.redundancy)
    return Cluster(args.groups, model, scenario_from_flags(args, args.groups), repair)


def cmd_wipeout(args) -> dict:
    from ..measure import wipeout

    return wipeout(_cluster(args), args.redundancy, args.placement, _sampling(args, args.trials),
                   work_hours=args.work_hours).to_json()


def cmd_overhead(args) -> dict:
    from ..measure import overhead

    if args.placement == "random":  # the host matcher path: no chunks, devices or resumable --state-dir
        given = [f for f, v in (("--chunk-size", args.chunk_size), ("--devices", args.devices),
                                ("--state-dir", args.state_dir),
                                ("--distributed", args.distributed)) if v not in (None, False)]
        if given:
            raise ValueError(f"{', '.join(given)}: not used by overhead --placement random (it runs on the host, "
                             "unchunked); drop the flag or use stacked/block")
    return overhead(_cluster(args), args.redundancy, args.placement, _sampling(args, args.epochs)).to_json()


def cmd_reorder(args) -> dict:
    from ..model.placement import make_placement
    from ..rectlr.reports import reorder
    from ..rectlr.reorder import parse_failed_list, read_trace

    placement = make_placement(args.placement, args.groups, args.redundancy, seed=args.seed)
    if (args.failed is None) == (args.trace is None):
        raise ValueError("reorder needs exactly one of --failed LIST or --trace FILE")
    times = None
    if args.trace is not None:
        failed, times = read_trace(args.trace)
    else:
        failed = parse_failed_list(args.failed)
    return reorder(placement, failed, times, args.solver, args.microbatches or 1).to_json()


def cmd_ttt(args) -> dict:
    import dataclasses

    from ..ttt.answer import Policy, time_to_train

    trace = trace_from_flags(args)  # before the cluster: --repair-time trace is not a repair time
    cluster = _cluster(args, check_redundancy=False)  # the scheme decides r (none: 1)
    training = dataclasses.replace(training_from_flags(args), ckpt_interval_min=args.ckpt_interval)
    if args.elastic_data is not None and args.scheme != "elastic":
        raise ValueError(f"--elastic-data applies to --scheme elastic only (got --elastic-data {args.elastic_data} "
                         f"with --scheme {args.scheme})")
    policy = Policy(args.scheme, args.redundancy, args.restart_depth, args.ages, args.elastic_data or "rebalance")
    if trace is not None:  # the trace replayed beside the model it fits
        from ..planner.trace_replay import replay_ttt

        return replay_ttt(cluster, training, policy, trace, _sampling(args, args.runs)).to_json()
    return time_to_train(cluster, training, policy, _sampling(args, args.runs)).to_json()


def cmd_optimize(args) -> dict:
    from ..ttt.answer import Space, optimize

    trace = trace_from_flags(args)
    if trace is not None:  # every scheme replayed on the trace, ranked, beside the fitted model
        from ..model.cluster import Sampling
        from ..planner.trace_replay import compare_schemes, trace_policies

        if args.microbatch_set is not None and len(args.microbatch_set) > 1 or args.restart_depths is not None:
            raise ValueError("--microbatches lists and --restart-depth: not searched with --failure-trace (each "
                             "scheme is replayed at one m, no proactive restart); give one --microbatches value")
        if args.microbatch_set:
            args.microbatches = args.microbatch_set[0]
        cluster = _cluster(args, check_redundancy=False)
        policies = trace_policies(cluster.groups, args.r_max, trace.repair != "none")
        return compare_schemes(cluster, training_from_flags(args), policies, trace,
                               Sampling(TRACE_RUNS, seed=0)).to_json()
    space = Space(args.r_max, tuple(args.microbatch_set or [1]),
                  None if args.restart_depths is None else tuple(args.restart_depths), args.epochs, args.pool_seed,
                  args.ages, args.curves, repair_times_from_flags(args))
    return optimize(_cluster(args, check_redundancy=False), training_from_flags(args), space, not args.quiet).to_json()


def cmd_place(args) -> dict:
    import os

    from ..model.cluster import Cluster
    from ..rectlr.reports import place_report
    from ..rectlr.place import RingSearch

    model = failure_model_from_flags(args)
    scenario = scenario_from_flags(args, args.groups)
    if args.ring_out is not None:
        parent = os.path.dirname(os.path.abspath(args.ring_out)) if args.ring_out else ""
        if not args.ring_out or os.path.isdir(args.ring_out):
            raise ValueError(f"--ring-out must name a file, got {args.ring_out!r}")
        if not os.path.isdir(parent) or not os.access(parent, os.W_OK) or (
                os.path.exists(args.ring_out) and not os.access(args.ring_out, os.W_OK)):
            raise ValueError(f"--ring-out: cannot write to {args.ring_out}")
    report = place_report(Cluster(args.groups, model, scenario), args.redundancy, args.placement,
                          RingSearch(args.search_epochs, args.steps, args.proposals, args.random_orders),
                          _sampling(args, args.epochs))
    if args.ring_out is not None:
        text = ("# ring order found by spare-jax place (ring position i: physical group), best: "
                f"{report['best_name']}\n" + "\n".join(map(str, report["best_ring"])) + "\n")
        try:
            with open(args.ring_out, "w") as fh:
                fh.write(text)
        except OSError as exc:
            raise ValueError(f"--ring-out: cannot write {args.ring_out}: {exc.strerror}") from None
    out = {}  # the report; --ring-out names its file where the ring stands, a table shows the orders in one line
    for key, value in report.to_json().items():
        if key == "best_ring" and args.ring_out is not None:
            out["ring_file"] = args.ring_out
        if key != "best_ring" or args.json:
            out[key] = value
    if not args.json:
        out["orders"] = "; ".join(f"{o['name']} {o['uptime_min']:.1f} ± {o['uptime_stderr_min']:.1f} min"
                                  for o in report["orders"])
    return out


def cmd_presets(args) -> dict:
    from ..model.preset_report import presets_report
    from ..model.presets import PRESETS

    if args.name is not None and args.name not in PRESETS:
        raise ValueError(f"presets NAME: no preset {args.name!r} (the presets: {', '.join(PRESETS)})")
    if args.json:
        every = presets_report(args.job_scaling).to_json()
        return every if args.name is None else {args.name: every[args.name]}
    if args.name is None and not args.long:  # the short list: one line per preset
        width = max(len(name) for name in PRESETS)
        for name, p in PRESETS.items():
            print(f"{name:<{width}}  {p.description}")
        print("(spare-jax presets NAME: one preset in full, with its sources; --long: every preset in full)")
        args.printed = True
        return {}

    def num(v):
        if isinstance(v, (list, tuple)):
            return ", ".join(num(x) for x in v)
        if isinstance(v, dict):
            return "{" + ", ".join(f"{k} {num(x)}" for k, x in v.items()) + "}"
        if isinstance(v, float):
            return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.4g}"
        return f"{v:,}" if isinstance(v, int) else str(v)

    flag = {"mtbf": "--reference-mtbf-min", "job_mtbf": "--job-mtbf-min"}  # dests whose flags carry a unit
    for name, p in PRESETS.items():
        if args.name is not None and name != args.name:
            continue
        p = p.under(args.job_scaling)
        print(f"{name}: {p.description}")
        print("  settings: " + ", ".join(f"{flag.get(k, '--' + k.replace('_', '-'))} {num(v)}"
                                         for k, v in p.settings.items()))
        for d in p.domains:
            print(f"  domain level {d.get('name', '')}: {d['size']} groups, MTBF {num(float(d['mtbf']))} min per domain")
        for k, v in p.derived.items():
            print(f"  derived {k}: {num(v)}")
        if p.job_wide:
            print(f"  job-wide interruptions as measured: MTBF {num(p.job_wide['mtbf_min'])} min on "
                  f"{num(p.job_wide['gpus'])} GPUs (--job-scaling carries them to another size)")
        for src in p.sources:
            print(f"  source: {src}")
        for item in p.provenance:
            rate = {"hardware": "; rate: a hardware failure rate", "interruptions": "; rate: an interruption "
                    "count, converted to a clock rate"}.get(item.get("rate"), "")
            print(f"  input {item['input']} = {num(item['value'])} [{item['kind']}{rate}]: {item['basis']}")
        for a in p.assumptions:
            print(f"  assumption: {a}")
        for o in p.outcomes:
            tol = f"+- {o['abs_tol']:g}" if "abs_tol" in o else f"within {o['rel_tol']:.0%}"
            print(f"  {'fitted to' if o['fitted'] else 'reproduces (not fitted)'}: {o['reported']}; spare-jax "
                  f"{' '.join(o['args'])} --preset {name}: {o['key']} {num(float(o['value']))} {tol}")
        if p.unfitted:
            print(f"  not fitted to: {p.unfitted}")
    args.printed = True
    return {}


def cmd_bench(args) -> dict:
    from ..suite.bench import bench_report

    return bench_report(args.groups, args.redundancy, args.full, args.chunk_size, args.devices,
                        not args.quiet).to_json()


def _check_out_dir(path: str, flag: str) -> None:
    """Create the result directory ``path`` and write a file in it before any work (ValueError naming ``flag``
    otherwise): a permission check alone passes where writing fails (``/proc/nope`` for root)."""
    import os
    import tempfile

    if os.path.exists(path) and not os.path.isdir(path):
        return  # the caller says it is not a directory
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise ValueError(f"{flag} {path}: cannot write there: {exc.strerror}") from None


def cmd_run(args) -> dict:
    _check_out_dir(args.out_dir or ("figures" if args.full else "results"), "--out-dir")
    from ..suite import format_summary, run_report

    summary = run_report(args.out_dir, full=args.full, seed=args.seed, progress=not args.quiet).to_json()
    if not args.json:
        print(format_summary(summary))
        args.printed = True
    return summary
