"""The command line's building blocks: flags with their bounds and help, the scenario flags and the
``[scenario]`` config table, ``--config`` files, and the output (tables and strict JSON). The commands
themselves are in ``spare_jax.cli``.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys

from ..model.bounds import BOUNDS, GROUP_MTBF_RANGE
from ..model.bounds import check as check_bound
from ..model.bounds import describe as describe_bound
from ..model.bounds import flag as bounds_flag


class CLIError(Exception):
    """Bad input at the command line: printed as one line, exit 2."""


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Help lines wrapped at spaces only (a flag name such as --ckpt-interval is never split at its hyphen);
    descriptions kept as written."""

    def _split_lines(self, text, width):
        import textwrap

        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False, break_long_words=False)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *a, **kw):
        kw.setdefault("formatter_class", _Formatter)
        super().__init__(*a, **kw)

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
    parse.bound = bound
    return parse


# Former flag names (kept for one release): a hidden option on the same dest that records a one-line note,
# printed on stderr by ``main`` (``deprecation_notes``). ``--config`` keys that spell a former name get the
# same note (``_apply_config``). docs/vocabulary.md lists them.
class _Deprecated(argparse.Action):
    def __init__(self, option_strings, dest, new=None, **kw):
        super().__init__(option_strings, dest, **kw)
        self.new = new

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
        _record(namespace, deprecation_note(option_string, self.new, parser.prog.split()[-1]))


def deprecation_note(old: str, new: str, command: str) -> str:
    return f"spare-jax: note: {old} is deprecated for {command}; use {new}"


def _record(namespace, note: str) -> None:
    notes = list(getattr(namespace, "deprecations", None) or ())
    if note not in notes:
        notes.append(note)
    setattr(namespace, "deprecations", notes)


def deprecated_alias(container, old: str, primary) -> None:
    """Add ``old`` as a former name of the option ``primary`` (an argparse action) to ``container`` (the
    parser, or the group ``primary`` is in): same dest and bounds, hidden from --help, a note when used."""
    kind = primary.type
    if getattr(kind, "bound", None) is not None:
        kind = _bounded(kind.bound, old)  # errors name the flag as typed
    container.add_argument(old, dest=primary.dest, type=kind, choices=primary.choices, default=argparse.SUPPRESS,
                           help=argparse.SUPPRESS, action=_Deprecated, new=primary.option_strings[-1],
                           metavar=primary.metavar)


def _help(text, bound):
    return f"{text}; {describe_bound(bound)}"


def _common(p, *, trials: int | None = 100_000, placement=True, redundancy: int | None = 8, groups: int = 600,
            seed=True, trials_bound="trials", sample="trials", sample_help="Monte Carlo wipe-out trials (epochs "
            "from a restart to the wipe-out)", old_sample=None):
    """The flags most subcommands share. ``sample``: the sample-size flag's name and dest (trials: wipe-out
    trials; epochs; runs: training runs), ``old_sample``: its former name (a deprecated alias)."""
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
        a = p.add_argument("--" + sample, dest=sample, type=_bounded(trials_bound, "--" + sample), default=trials,
                           help=_help(f"{sample_help} (default {trials:,}"
                                      + (f"; formerly {old_sample}" if old_sample else "") + ")", trials_bound))
        if old_sample:
            deprecated_alias(p, old_sample, a)
    if seed:
        p.add_argument("--seed", type=_bounded("seed"), default=0, help=_help("PRNG seed (default 0)", "seed"))
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout (default: a table)")
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr (default: progress shown)")


def _failure_args(p):
    g = p.add_mutually_exclusive_group()
    a = g.add_argument("--reference-mtbf-min", dest="mtbf", type=_bounded("mtbf", "--reference-mtbf-min"),
                       default=5.0,
                       help=f"{describe_bound('mtbf')}: MTBF in minutes of the whole REFERENCE cluster of "
                            "--reference-gpus GPUs (group failures), not of the -N groups run (default 5 min at "
                            "600,000 GPUs, i.e. a per-GPU MTBF of 50,000 h); the per-group MTBF, this x "
                            "reference-gpus / gpus-per-group, must lie in "
                            f"{GROUP_MTBF_RANGE[0]:g}..{GROUP_MTBF_RANGE[1]:g} min (formerly --mtbf). Or give "
                            "--group-mtbf-min or --gpu-mtbf-hours instead")
    deprecated_alias(g, "--mtbf", a)
    a = g.add_argument("--group-mtbf-min", dest="group_mtbf", type=_bounded("group_mtbf", "--group-mtbf-min"),
                       default=None,
                       help=_help("instead of --reference-mtbf-min: MTBF of ONE data-parallel group in minutes "
                                  "(default: from --reference-mtbf-min, 3000 min; formerly --group-mtbf)",
                                  "group_mtbf"))
    deprecated_alias(g, "--group-mtbf", a)
    g.add_argument("--gpu-mtbf-hours", type=_bounded("gpu_mtbf_hours"), default=None,
                   help=_help("instead of --reference-mtbf-min: per-GPU MTBF in hours, GPU-hours per group failure "
                              "(default: from --reference-mtbf-min, 50,000 h)", "gpu_mtbf_hours"))
    p.add_argument("--gpus-per-group", type=_bounded("gpus_per_group"), default=1000.0,
                   help=_help("GPUs per data-parallel group (default 1000 GPUs)", "gpus_per_group"))
    p.add_argument("--reference-gpus", type=_bounded("reference_gpus"), default=600_000.0,
                   help=_help("GPU count at which --reference-mtbf-min is quoted, and at which --restart is quoted when "
                              "--restart-scaling is not none (default 600000 GPUs)", "reference_gpus"))
    p.add_argument("--distribution", choices=("exponential", "weibull"), default="exponential",
                   help="law of each group's time to failure (default exponential; weibull keeps the same mean)")
    p.add_argument("--weibull-shape", type=_bounded("weibull_shape"), default=1.0,
                   help=_help("Weibull shape k, same mean per group (default 1; only with --distribution weibull)",
                              "weibull_shape"))
    from ..model.presets import PRESETS

    p.add_argument("--preset", choices=tuple(PRESETS), default=None,
                   help="published cluster parameters as defaults (default: none; flags and --config win); "
                        "`spare-jax presets` lists them with their sources")
    p.set_defaults(preset_job_mtbf=None)


def _job_args(p):
    """The job-wide part of the scenario flags."""
    g = p.add_argument_group("scenario (default: the paper's model, i.i.d. group failures only)")
    a = g.add_argument("--job-mtbf-min", dest="job_mtbf", type=_bounded("job_mtbf", "--job-mtbf-min"), default=None,
                       help=_help("mean minutes between job-wide interruptions that no redundancy masks (default off;"
                                  " formerly --job-mtbf)", "job_mtbf"))
    deprecated_alias(g, "--job-mtbf", a)
    g.add_argument("--job-fraction", type=_bounded("job_fraction"), default=None,
                   help=_help("or: the fraction of all interruptions that is job-wide (default off)", "job_fraction"))
    p.set_defaults(cfg_job_mtbf=None, cfg_job_fraction=None)  # from --config: yield to either flag
    return g


def _check_job_flags(args) -> None:
    if args.job_mtbf is not None and args.job_fraction is not None:
        raise ValueError("--job-mtbf-min and --job-fraction: give one of them")


def _scenario_args(p, mtbf_flags=True):
    """The ``Scenario`` flags; a ``[scenario]`` table in ``--config`` sets the same keys, plus
    ``domains = [{size = G, mtbf = MIN}, ...]`` for several levels. Off by default (the paper's model)."""
    g = _job_args(p)
    g.add_argument("--domain-size", type=_bounded("domain_size"), default=None,
                   help=_help("groups per failure domain (contiguous physical ids; default: no domains)",
                              "domain_size"))
    a = g.add_argument("--domain-mtbf-min", dest="domain_mtbf", type=_bounded("domain_mtbf", "--domain-mtbf-min"),
                       default=None, help=_help("MTBF of one failure domain in minutes (with --domain-size; default: "
                                                "no domains; formerly --domain-mtbf)", "domain_mtbf"))
    deprecated_alias(g, "--domain-mtbf", a)
    g.add_argument("--ring", default=None,
                   help="ring order of the placement (stacked or block over ring positions): contiguous "
                        "(default), interleaved (across the domains) or a file of physical group ids in ring order")
    g.add_argument("--lemon-fraction", type=_bounded("lemon_fraction"), default=None,
                   help=_help("fraction of groups that are lemons (default 0)", "lemon_fraction"))
    g.add_argument("--lemon-factor", type=_bounded("lemon_factor"), default=None,
                   help=_help("how many times as often a lemon fails (default 1)", "lemon_factor"))
    g.add_argument("--lemon-seed", type=_bounded("lemon_seed"), default=None,
                   help=_help("which groups are lemons (default 0)", "lemon_seed"))
    g.add_argument("--group-mtbf-file", default=None,
                   help="a text file of per-group MTBFs in minutes, one number per line for each physical group "
                        "(# comments allowed), replacing the uniform group MTBF (default: none, every group at the "
                        "same rate); not with lemons" + (" or the other MTBF flags" if mtbf_flags else ""))
    p.set_defaults(scenario_domains=None)


def _microbatch_args(p, restart: bool = False):
    """``--microbatches`` and, where time-to-train is computed, ``--restart-depth``."""
    p.add_argument("--microbatches", type=_bounded("microbatches"), default=None,
                   help=_help("micro-batches per shard m: survivors share a lost shard's work in 1/m pieces "
                              "(depth = c/m; default 1, whole shards as in the paper)", "microbatches"))
    if restart:
        p.add_argument("--restart-depth", type=_bounded("restart_depth"), default=None,
                       help=_help("proactive restart: end an epoch voluntarily (a checkpoint, then a restart) "
                                  "once the depth reaches this value (default: never; spare only)",
                                  "restart_depth"))


def _number_list(bound, flag, allow_auto=False):
    """An argparse type for a comma-separated list of ``bound`` values (``auto``: an empty tuple, the
    default grid)."""
    one = _bounded(bound, flag)

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


def _policy_search_args(p):
    """``optimize``: the micro-batch counts and proactive-restart depths searched."""
    p.add_argument("--microbatches", dest="microbatch_set", type=_number_list("microbatches", "--microbatches"),
                   default=None, help=_help("micro-batches per shard m, or a comma list to search (e.g. 1,2,4,8; "
                                            "default 1)", "microbatches"))
    p.add_argument("--restart-depth", dest="restart_depths",
                   type=_number_list("restart_depth", "--restart-depth", allow_auto=True), default=None,
                   help=_help("proactive restart: search these depths D_max (comma list, or auto for "
                              "1.25..8) with r and tau, on epoch pools of --epochs (default: no proactive "
                              "restart)", "restart_depth"))
    p.set_defaults(microbatches=None)


def _scenario(args, groups: int):
    """The ``Scenario`` of the flags (and of a ``[scenario]`` table), validated against N."""
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
    _check_job_flags(args)
    job_mtbf, job_fraction = args.job_mtbf, args.job_fraction
    if job_mtbf is None and job_fraction is None:
        # flags win over --config, which wins over a preset
        job_mtbf, job_fraction = getattr(args, "cfg_job_mtbf", None), getattr(args, "cfg_job_fraction", None)
        if job_mtbf is not None and job_fraction is not None:
            raise ValueError("--config: job_mtbf and job_fraction: give one of them")
        if job_mtbf is None and job_fraction is None:
            job_mtbf = getattr(args, "preset_job_mtbf", None)
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


def _scenario_table(section, path):
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


def _repair_args(p):
    """Repair without a global restart; off by default (the paper's model)."""
    g = p.add_argument_group("repair without a global restart (default off)")
    g.add_argument("--repair-time", type=_bounded("repair_time"), default=None,
                   help=_help("mean minutes for a failed group to rejoin while the others keep going "
                              "(default: no repair)", "repair_time"))
    g.add_argument("--repair-law", choices=("fixed", "exp", "lognormal"), default=None,
                   help="law of the repair time (default fixed; lognormal keeps the mean)")
    g.add_argument("--repair-sigma", type=_bounded("repair_sigma"), default=None,
                   help=_help("log-sd of the lognormal repair law (default 1.0)", "repair_sigma"))


def _repair(args):
    """The ``Repair`` of the flags, or None when ``--repair-time`` is not given."""
    if args.repair_time is None:
        if args.repair_law is not None or args.repair_sigma is not None:
            raise ValueError("--repair-law and --repair-sigma need --repair-time")
        return None
    if args.repair_sigma is not None and args.repair_law != "lognormal":
        raise ValueError("--repair-sigma goes with --repair-law lognormal")
    from ..model.repair import Repair

    return Repair(args.repair_time, args.repair_law or "fixed",
                  1.0 if args.repair_sigma is None else args.repair_sigma)


def _run_args(p):
    p.add_argument("--chunk-size", type=_bounded("chunk_size"), default=None,
                   help=_help("trials per chunk (default: chosen from the working-set size; refused when "
                              "its working set exceeds half the RAM)", "chunk_size"))
    p.add_argument("--devices", type=_bounded("devices"), default=None,
                   help=_help("JAX devices to shard trials over (default: all)", "devices"))
    p.add_argument("--out", default=None, help="directory for the run's state file (wipeout, overhead: one "
                   "state.json; repair, ttt: per-chunk files); re-running resumes (locked while a run uses it; "
                   "default: none, nothing kept)")
    p.add_argument("--distributed", action="store_true",
                   help="call jax.distributed.initialize() first (multi-host; configured by the environment)")
    p.add_argument("--coordinator", default=None, metavar="HOST:PORT",
                   help="multi-process run: the coordinator's address (process 0 listens there); with "
                   "--num-processes and --process-id. P copies of one command give the JSON of one process "
                   "(default: none, one process)")
    p.add_argument("--num-processes", type=int, default=None,
                   help="multi-process run: the number of processes (default: none, one process)")
    p.add_argument("--process-id", type=int, default=None,
                   help="multi-process run: this process's id, 0..P-1 (default: none, one process)")
    p.add_argument("--peer-timeout", type=_bounded("peer_timeout"), default=None,
                   help=_help("multi-process run: seconds a process waits for a peer that stopped answering "
                              "(to join, during the run, to leave) before every process exits with code 3 and "
                              "one line naming it (default: 60)", "peer_timeout"))
    p.add_argument("--verbose", action="store_true",
                   help="multi-process run: show JAX's, XLA's and gloo's native logs on stderr (default: off; "
                   "they go to a log file whose path an error line gives, removed after a good run)")


def _model(args):
    from ..model.failures import FailureModel

    mtbf = args.mtbf  # the reference cluster's MTBF in minutes (FailureModel.system_mtbf_min)
    if getattr(args, "group_mtbf", None) is not None and getattr(args, "gpu_mtbf_hours", None) is not None:
        raise ValueError("--group-mtbf-min and --gpu-mtbf-hours: give one of them")
    if getattr(args, "group_mtbf", None) is not None:
        mtbf = args.group_mtbf * args.gpus_per_group / args.reference_gpus
    elif getattr(args, "gpu_mtbf_hours", None) is not None:
        mtbf = args.gpu_mtbf_hours * 60.0 / args.reference_gpus
    if (args.weibull_shape != 1.0 and args.distribution == "exponential"
            and _given(args, "weibull_shape")):
        raise ValueError("--weibull-shape applies to --distribution weibull only (exponential failures have no "
                         "shape); add --distribution weibull or drop it")
    group_mtbf = mtbf * args.reference_gpus / args.gpus_per_group
    if not GROUP_MTBF_RANGE[0] <= group_mtbf <= GROUP_MTBF_RANGE[1]:
        raise ValueError(f"the per-group MTBF (--reference-mtbf-min x --reference-gpus / --gpus-per-group, or --group-mtbf-min, or "
                         f"--gpu-mtbf-hours x 60 / --gpus-per-group) must be in "
                         f"{GROUP_MTBF_RANGE[0]:g}..{GROUP_MTBF_RANGE[1]:g} min, got {group_mtbf:g}")
    return FailureModel(args.distribution, mtbf, args.reference_gpus, args.gpus_per_group,
                        args.weibull_shape)


def _given(args, dest) -> bool:
    """Whether ``dest`` was set explicitly: on the command line or in ``--config`` (``main`` records both in
    ``args.given``); True when unknown (library callers), so the checks stay on the safe side."""
    given = getattr(args, "given", None)
    return True if given is None else dest in given


def explicit_dests(parser, argv) -> set:
    """The dests of the options that appear in ``argv`` (the subcommand's parser; exact names, ``--flag=x``,
    the unique prefixes argparse accepts, and ``-r8``-style short options)."""
    out = set()
    longs = [(o, a.dest) for a in parser._actions for o in a.option_strings if o.startswith("--")]
    shorts = {o: a.dest for a in parser._actions for o in a.option_strings if not o.startswith("--")}
    for tok in argv:
        if tok == "--":
            break
        if not tok.startswith("-") or tok == "-":
            continue
        name = tok.split("=", 1)[0]
        if name.startswith("--"):
            hits = {d for o, d in longs if o == name} or {d for o, d in longs if o.startswith(name)}
            if len(hits) == 1:
                out |= hits
        elif name[:2] in shorts:
            out.add(shorts[name[:2]])
    return out


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


# keys left to --json in the text tables (internal detail, or too long to read in a row)
TEXT_HIDDEN = {"per_event", "mean_depth_thresholds", "restart_curves", "curves"}
LINE_MAX = 160


def unit_of(key: str) -> str:
    """The unit a key's name carries (the vocabulary's suffixes: _pct, _hours, _min, _s, _ms, ...)."""
    parts = key.split("_")
    if "pct" in parts:
        return "%"
    if key.endswith("per_min"):
        return "per min"
    if key.endswith("_per_s"):
        return "per s"
    if "hours" in parts:
        return "h"
    if "min" in parts:
        return "min"
    if key.endswith("_ms"):
        return "ms"
    if key.endswith("_s"):
        return "s"
    if key == "ttt_over_w":
        return "x W"
    if "overhead" in parts and not key.startswith("z"):
        return "x"
    if key == "z_score":
        return "s.e."
    if key in ("trials", "epochs", "runs", "groups", "events"):
        return key
    if key in ("mc_mean", "theory_exact", "theory_asymptotic", "endurable_failures_mean", "mc_std", "theory_std",
               "mc_stderr", "exact_failures_mean"):
        return "failures"
    return ""


def _rows(rows: dict, indent: str = "  ") -> list:
    """Aligned ``name  value  unit`` lines; an uptime in minutes also in hours; nested tables as blocks."""
    flat, blocks = [], []
    for k, v in rows.items():
        if k in TEXT_HIDDEN or isinstance(v, list) and len(v) > 8:
            continue
        if isinstance(v, dict) and v and all(isinstance(x, dict) for x in v.values()):
            blocks.append((k, v))
            continue
        text, unit = _fmt(v), unit_of(k)
        if unit == "min" and "uptime" in k and isinstance(v, (int, float)) and not isinstance(v, bool):
            unit = f"min (= {v / 60:.4g} h)"
        flat.append((k, text, unit))
    numeric = {k for k, v in rows.items() if isinstance(v, (int, float)) or v is None}
    wk = max((len(k) for k, _, _ in flat), default=0)
    wv = max((len(t) for k, t, _ in flat if k in numeric), default=0)
    lines = []
    for k, v in blocks:  # e.g. optimize's schemes: one block each
        for name, sub in v.items():
            lines += [f"{indent}{k} {name}:"] + _rows(sub, indent + "  ") + [""]
    for k, text, unit in flat:
        text = f"{text:>{wv}}" if k in numeric else text  # numbers right-aligned, words as they are
        line = f"{indent}{k:<{wk}}  {text}  {unit}".rstrip()
        if len(line) > LINE_MAX:
            line = f"{indent}{k:<{wk}}  (see --json)"
        lines.append(line)
    return lines


def print_table(title: str, rows: dict, out=None) -> None:
    out = out or sys.stdout
    print(title, file=out)
    print("-" * max(len(title), 20), file=out)
    for line in _rows(rows):
        print(line, file=out)


def emit(args, title: str, result: dict) -> None:
    if args.json:
        print(json.dumps(strict_json(result), allow_nan=False))
    else:
        print_table(title, result)


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
    from ..ttt import TrainingConfig

    return TrainingConfig(args.work_hours, args.ckpt_cost, args.restart, args.restart_scaling,
                          args.reference_gpus)


def _config_value(action, key, value):
    """A TOML value checked like the flag it stands for: booleans for switches, numbers (not booleans)
    for numeric settings, strings for the rest."""
    if isinstance(action, argparse._StoreTrueAction):
        if not isinstance(value, bool):
            raise ValueError(f"--config: {key} must be true or false, got {value!r}")
        return value
    if getattr(action.type, "list_of", None) is not None:
        items = value if isinstance(value, list) else [value]
        if isinstance(value, str):
            text = value
        elif items and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in items):
            text = ",".join(str(v) for v in items)
        else:
            raise ValueError(f"--config: {key} must be a number, a list of numbers or a comma list, got {value!r}")
        try:
            return action.type(text)
        except argparse.ArgumentTypeError as exc:
            raise ValueError(f"--config: {exc}") from None
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


def _take_flag(argv, flag: str, what: str, abbrev: bool = False):
    """Take ``flag VALUE`` or ``flag=VALUE`` (the last one given) out of ``argv``, before argparse sees it.
    Returns ``(value or None, its position in the remaining argv, the remaining argv)``; ``abbrev`` also
    matches the prefixes argparse would accept (at least ``--pre``)."""
    rest, value, where = [], None, None
    it = iter(range(len(argv)))
    for i in it:
        a = argv[i]
        name = a.split("=", 1)[0]
        if name == flag or (abbrev and len(name) >= 5 and flag.startswith(name)):
            if "=" in a:
                value = a.split("=", 1)[1]
            else:
                if i + 1 >= len(argv):
                    raise CLIError(f"spare-jax: error: {flag} needs {what}")
                value = argv[i + 1]
                next(it, None)
            where = len(rest)
        else:
            rest.append(a)
    return value, where, rest


def _apply_config(parser, argv):
    """``--config FILE.toml``: set the subcommand's defaults from the file; flags on the line win."""
    argv = list(sys.argv[1:] if argv is None else argv)
    argv = _apply_preset(parser, argv)
    path, _, rest = _take_flag(argv, "--config", "a file")
    if path is None:
        return argv
    try:
        import tomllib
    except ModuleNotFoundError:  # pragma: no cover - Python < 3.11
        import tomli as tomllib
    from ..model.inputfile import read_text

    text = read_text(path, "--config")  # a regular file only (a FIFO would wait for a writer for ever)
    try:
        cfg = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"--config: {path} is not valid TOML: {exc}") from None
    except RecursionError:  # arrays or inline tables nested thousands deep
        raise ValueError(f"--config: {path} nests arrays or tables too deeply") from None
    command = next((a for a in rest if not a.startswith("-")), None)
    subs = parser._subparsers._group_actions[0].choices
    sub = subs.get(command) if command else None
    if sub is None:
        raise ValueError("--config needs a subcommand (e.g. spare-jax run --config run.toml)")
    for key, value in cfg.items():
        if isinstance(value, dict) and key not in subs and key != "scenario":
            raise ValueError(f"--config: unknown section [{key}] in {path} (sections: scenario, {', '.join(subs)})")
    # top-level keys apply to every subcommand; the subcommand's own table wins over them
    known = {a.dest: a for a in sub._actions if a.dest not in ("config", "version")}
    # the flag names are keys too: N = 600, r = 8, ckpt-interval = 30 (besides the dests groups, redundancy, ...)
    alias = {o.lstrip("-").replace("-", "_"): a.dest for a in sub._actions for o in a.option_strings
             if a.dest in known}
    former = {o.lstrip("-").replace("-", "_"): a.new.lstrip("-") for a in sub._actions
              if isinstance(a, _Deprecated) for o in a.option_strings}
    notes = []
    defaults = {}
    tables = [{k: v for k, v in cfg.items() if not isinstance(v, dict)}]
    if "scenario" in cfg:
        if "job_mtbf" not in known:
            raise ValueError(f"--config: 'spare-jax {command}' takes no [scenario]")
        scenario_table, levels = _scenario_table(cfg["scenario"], path)
        tables.append(scenario_table)
        if levels is not None:
            if "domain_size" not in known:
                raise ValueError(f"--config: 'spare-jax {command}' takes no failure domains (scenario.domains) yet")
            defaults["scenario_domains"] = levels
    tables.append(cfg.get(command, {}))
    for table in tables:
        seen = {}
        for key, value in table.items():
            dest = key.replace("-", "_")
            if dest in former:  # a former flag name: works, with the note
                note = deprecation_note(f"--config key {key!r}", repr(former[dest]), command)
                notes += [note] if note not in notes else []
            dest = dest if dest in known else alias.get(dest, dest)
            if dest not in known or dest in ("help", "func", "title"):
                where = (f"[{command}]" if table is cfg.get(command) else
                         "[scenario]" if table is not tables[0] else "the top level")
                raise ValueError(f"--config: unknown setting {key!r} for 'spare-jax {command}' (in {where})")
            if dest in seen:
                raise ValueError(f"--config: {key!r} and {seen[dest]!r} set the same thing")
            if dest == "preset":
                raise ValueError("--config: preset is a command-line flag (--preset NAME); a config file holds "
                                 "the settings themselves")
            seen[dest] = key
            defaults[dest] = _config_value(known[dest], key, value)
    given = tuple(k for k in defaults if k in known)  # set explicitly (main's args.given)
    for key in ("job_mtbf", "job_fraction"):  # flags on the line win over these (see _scenario)
        if key in defaults:
            defaults["cfg_" + key] = defaults.pop(key)
    sub.set_defaults(config_given=given, deprecations=notes, **defaults)
    return rest


def _apply_preset(parser, argv):
    """``--preset NAME``: the preset's settings become the subcommand's defaults (``--config`` and flags on
    the line win); settings a subcommand does not take are skipped. Returns argv without the flag."""
    from ..model.presets import get_preset
    from ..model.scenario import DomainLevel

    name, where, rest = _take_flag(argv, "--preset", "a name", abbrev=True)  # argparse takes --pres too
    if name is None:
        return argv
    preset = get_preset(name)
    first = next((i for i, a in enumerate(rest) if not a.startswith("-")), None)
    command = None if first is None else rest[first]
    if command is not None and where <= first:
        raise ValueError("--preset goes after the subcommand (e.g. spare-jax wipeout --preset llama3-16k)")
    sub = parser._subparsers._group_actions[0].choices.get(command) if command else None
    if sub is None or "preset" not in {a.dest for a in sub._actions}:
        raise ValueError("--preset needs a subcommand that takes it (wipeout, overhead, ttt, optimize, place)"
                         + (f", not {command!r}" if command else ""))
    known = {a.dest for a in sub._actions}
    defaults = {k: v for k, v in preset.settings.items() if k in known and k != "job_mtbf"}
    defaults["preset"] = name
    if "job_mtbf" in preset.settings and "job_mtbf" in known:
        defaults["preset_job_mtbf"] = preset.settings["job_mtbf"]
    if preset.domains and "domain_size" in known:
        defaults["scenario_domains"] = [DomainLevel(d["size"], d["mtbf"], d.get("name", "")) for d in preset.domains]
    sub.set_defaults(**defaults)
    return rest
