"""``main``: parse, join a multi-process run if asked, run the command, print its result; the exit codes
(0 the result, 2 bad input, 3 a lost peer or an incomplete run)."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
import warnings

from ..kernels import compile_cache, cpu_devices
from .base import CLIError, as_flags
from .config import apply_config
from .output import emit
from .model_from_flags import failure_model_from_flags
from .commands import EXIT_BAD_INPUT
from .args import resolve_gpus
from .paths import check_outputs
from .parser import refuse_unused, build_parser


def _add_mtbf(args, result) -> None:
    """The resolved failure clock beside the results: per-group MTBF and the MTBF of the N groups run."""
    if not isinstance(result, dict) or not result or not hasattr(args, "mtbf") or not hasattr(args, "groups"):
        return
    if getattr(args, "group_mtbf_file", None) is not None or getattr(args, "failure_trace", None) is not None:
        return  # (a trace's down periods are the failures: no failure clock to show)
    from ..model.cluster import Cluster

    for key, value in Cluster(args.groups, failure_model_from_flags(args)).failure_clock().items():
        result.setdefault(key, value)


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


def _joins_processes(args) -> bool:
    """Whether this command joins a multi-process run (each process then keeps JAX's one CPU device)."""
    return getattr(args, "distributed", False) or any(
        getattr(args, k, None) is not None for k in ("coordinator", "num_processes", "process_id"))


def _join_processes(args):
    """With --coordinator/--num-processes/--process-id (or --distributed): join the run, native logs to a
    file (unless --verbose), and start the watchdog. Returns the coordinator (None for one process)."""
    from ..kernels import multiproc

    if not _joins_processes(args):
        return None
    dist = [getattr(args, k, None) for k in ("coordinator", "num_processes", "process_id")]
    explicit = any(v is not None for v in dist)
    from ..kernels.devices import check_distributed_args, initialize_distributed

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


def interrupted_line(command_line: list, resumable: bool = False) -> str:
    """What Ctrl-C says: with a state directory, what was saved there and the command that resumes it;
    ``resumable``: the command takes --state-dir."""
    state_files = sys.modules.get("spare_jax.kernels.state_files")
    saved = dict(getattr(state_files, "SAVED", None) or {})
    if not saved:
        return "spare-jax: interrupted; nothing saved" + (
            " (--state-dir DIR keeps a run's progress, to resume it)" if resumable else "")
    import shlex

    return (f"spare-jax: interrupted; saved {saved['done']:,} of {saved['total']:,} {saved['unit']} in "
            f"{saved['out_dir']}; resume with: spare-jax {shlex.join(command_line)}")


COMPILE_LOG_ENV = "SPARE_JAX_COMPILE_LOG"


@contextlib.contextmanager
def _compile_log(command: str, argv: list):
    """With ``SPARE_JAX_COMPILE_LOG=FILE`` set, the command's XLA compiles, their seconds, its lowerings and its
    wall time are written to FILE as JSON once it is done (what ``bench --full`` reads of a ``plan``), with
    the command line (``argv``) and the persistent compilation cache it ran with (a directory, or null: off)."""
    path = os.environ.get(COMPILE_LOG_ENV)
    if not path:
        yield
        return
    from ..kernels.compiles import count_compiles

    try:  # opened before the work, so that a path that cannot be written is refused at once
        fh = open(path, "w", encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"{COMPILE_LOG_ENV}={path}: cannot write it ({exc.strerror})") from None
    t0 = time.perf_counter()
    with fh, count_compiles() as seen:
        yield
        import jax

        json.dump({"command": command, "argv": argv, "compiles": seen.compiles, "compile_seconds": seen.seconds,
                   "lowerings": seen.lowerings, "wall_seconds": time.perf_counter() - t0,
                   "compile_cache": jax.config.jax_compilation_cache_dir
                   if jax.config.jax_enable_compilation_cache else None}, fh)


def main(argv=None) -> int:
    _NATIVE_LOG[0] = None
    command_line = list(sys.argv[1:] if argv is None else argv)
    resumable = False
    state_files = sys.modules.get("spare_jax.kernels.state_files")
    if state_files is not None:
        state_files.SAVED.clear()
    parser = build_parser()
    try:
        argv = apply_config(parser, argv)
        args = parser.parse_args(argv)
        resumable = hasattr(args, "state_dir")
        if args.command is None:
            parser.print_help(sys.stderr)
            return EXIT_BAD_INPUT
        from .base import explicit_dests

        args.given = explicit_dests(parser._subparsers._group_actions[0].choices[args.command], argv) | set(
            getattr(args, "config_given", ()))
        check_outputs(args)  # every output location, before any work
        resolve_gpus(args)
        refuse_unused(args)
        compile_cache.enable_compile_cache()  # before the first compile (SPARE_JAX_COMPILE_CACHE=off: none)
        if not _joins_processes(args):  # one CPU device per core (SPARE_JAX_CPU_DEVICES), before JAX starts
            cpu_devices.use_cpu_cores()
        coord = _join_processes(args)
        with warnings.catch_warnings(), _compile_log(args.command, command_line):  # numerics at the edges of the bounds:
            warnings.simplefilter("ignore", RuntimeWarning)  # results carry None, not noise
            result = args.func(args)
            _add_mtbf(args, result)
        if getattr(args, "preset", None) and isinstance(result, dict):
            scaling = {"job_scaling": args.job_scaling} if "job_scaling" in args.given else {}
            result = {"preset": args.preset, **scaling, **result}
        if not getattr(args, "printed", False):
            emit(args, args.title, result)
        # former flag names: one note each, once the run succeeded (bad input stays one line on stderr)
        for note in [*(getattr(args, "deprecations", None) or ()), *getattr(args, "late_notes", ())]:
            print(note, file=sys.stderr)
        _leave_processes(coord)
        return 0
    except (CLIError, ValueError) as exc:
        msg = as_flags(str(exc).strip().splitlines()[0]) if str(exc).strip() else exc.__class__.__name__
        if not msg.startswith("spare-jax"):
            msg = f"spare-jax: error: {msg}"
        print(msg, file=sys.stderr)
        if _NATIVE_LOG[0] is not None:  # bad input writes no log
            _NATIVE_LOG[0].discard()
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # e.g. piped into head
        return 0
    except KeyboardInterrupt:
        print(interrupted_line(command_line, resumable), file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - in a multi-process run: one line, the details in the log
        if _NATIVE_LOG[0] is None and _coordinator() is None:
            raise
        return _multiprocess_failure(exc)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
