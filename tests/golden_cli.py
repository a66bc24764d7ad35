"""Fixed-seed invocations of every command, whose ``--json`` must not change when the code is reorganised.

``python tests/golden_cli.py --write`` records them in tests/data/golden_cli/ (do that only when an output is
meant to change, and say which and why in the commit); ``tests/test_golden_cli.py`` compares against them.
Timing keys (and bench's measurements) are left out of the comparison.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "data", "golden_cli")
TIMING = {"elapsed_s", "trials_per_s", "epochs_per_s", "events_per_s", "latency_ms", "latency_ms_mean",
          "latency_ms_p50", "latency_ms_p99", "latency_ms_max", "per_event"}

CASES = {
    "wipeout": ["wipeout", "-N", "48", "-r", "3", "--trials", "2000", "--seed", "3"],
    "wipeout_scenario": ["wipeout", "-N", "48", "-r", "3", "--trials", "2000", "--seed", "3", "--job-mtbf-min",
                         "3000", "--domain-size", "4", "--domain-mtbf-min", "20000"],
    "wipeout_repair": ["wipeout", "-N", "24", "-r", "2", "--trials", "200", "--seed", "3", "--repair-time", "30"],
    "overhead": ["overhead", "-N", "24", "-r", "4", "--epochs", "300", "--seed", "2"],
    "overhead_microbatches": ["overhead", "-N", "24", "-r", "3", "--epochs", "200", "--seed", "2",
                              "--microbatches", "4"],
    "reorder": ["reorder", "-N", "12", "-r", "3", "--failed", "3,7,4,11"],
    "ttt": ["ttt", "-N", "48", "-r", "3", "--runs", "20", "--seed", "1", "--work-hours", "100"],
    "ttt_none": ["ttt", "-N", "48", "--scheme", "none", "--runs", "20", "--seed", "1", "--work-hours", "100"],
    "optimize": ["optimize", "-N", "100"],
    "place": ["place", "-N", "24", "-r", "3", "--epochs", "200", "--seed", "1", "--domain-size", "4",
              "--domain-mtbf-min", "20000", "--steps", "2", "--search-epochs", "100"],
    "presets": ["presets"],
    "plan": ["plan", "--gpus", "16384", "--gpus-per-group", "512", "--runs", "20", "--no-sensitivity", "--seed",
             "1"],
    # one case per mode that adds keys (tests/test_vocabulary_keys.py walks them all)
    "ttt_repair": ["ttt", "-N", "24", "-r", "2", "--runs", "20", "--seed", "1", "--work-hours", "50", "--repair-time",
                   "30"],
    "ttt_spares": ["ttt", "-N", "24", "-r", "2", "--runs", "20", "--seed", "1", "--work-hours", "50", "--repair-time",
                   "30", "--spares", "2", "--hardware-repair", "600"],
    "ttt_elastic": ["ttt", "-N", "24", "--scheme", "elastic", "--runs", "20", "--seed", "1", "--work-hours", "50",
                    "--repair-time", "30"],
    "ttt_scenario": ["ttt", "-N", "24", "-r", "2", "--runs", "20", "--seed", "1", "--work-hours", "50",
                     "--domain-size", "4", "--domain-mtbf-min", "20000", "--job-mtbf-min", "3000"],
    "ttt_microbatches": ["ttt", "-N", "12", "-r", "2", "--runs", "10", "--seed", "1", "--work-hours", "20",
                         "--microbatches", "2", "--restart-depth", "1.5"],
    "overhead_repair": ["overhead", "-N", "24", "-r", "2", "--epochs", "100", "--seed", "1", "--repair-time", "30"],
    "optimize_curves": ["optimize", "-N", "60", "--r-max", "6", "--curves"],
    "optimize_repair": ["optimize", "-N", "24", "--r-max", "3", "--work-hours", "50", "--repair-time", "30",
                        "--curves"],
    "plan_failure_log": ["plan", "--gpus", "8192", "--gpus-per-group", "1024", "--gpus-per-node", "8",
                         "--failure-log", "tests/data/failure_log_small.csv", "--runs", "10", "--no-sensitivity",
                         "--seed", "1"],
    "plan_scenario": ["plan", "--gpus", "8192", "--gpus-per-group", "512", "--runs", "10", "--seed", "1",
                      "--domain-size", "4", "--domain-mtbf-min", "20000", "--job-mtbf-min", "3000", "--epochs",
                      "200", "--r-max", "4", "--microbatches", "2", "--no-sensitivity"],
    "plan_sensitivity": ["plan", "--gpus", "8192", "--gpus-per-group", "1024", "--runs", "10", "--seed", "1",
                         "--deadline-hours", "1500"],
    "ttt_trace": ["ttt", "-N", "24", "-r", "2", "--runs", "8", "--seed", "1", "--work-hours", "50",
                  "--ckpt-interval", "60", "--failure-trace", "tests/data/traces/small.csv", "--trace-time-scale", "0.5"],
    "optimize_trace": ["optimize", "-N", "24", "--r-max", "3", "--work-hours", "50", "--failure-trace",
                       "tests/data/traces/small.csv", "--repair-time", "30"],
}


def _strip(obj):
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k not in TIMING}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


def run_cases(names) -> dict:
    """``{name: --json output}`` of the cases ``names``, run one after the other by ``spare_jax.cli.main`` in one
    fresh Python process: one device, and XLA's default optimisation level (not the suite's level 0, which
    moves float32 transcendentals in their last bits): the goldens check the numbers a user's command prints,
    exactly. One process for several cases saves a start and an import of JAX per case; a number that
    depended on what ran before it in the process would be a bug, and would show here."""
    env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS="--xla_force_host_platform_device_count=1")
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--print", *names], capture_output=True,
                          text=True, env=env, timeout=900, cwd=os.path.dirname(HERE))
    if proc.returncode != 0:
        raise RuntimeError(f"{', '.join(names)}: exit {proc.returncode}: {proc.stderr.strip()[-800:]}")
    return json.loads(proc.stdout)


def run_case(name: str) -> dict:
    return run_cases([name])[name]


def _print_cases(names):
    """The child of ``run_cases``: each case's ``--json --quiet`` through the command's own entry point."""
    import contextlib
    import io

    from spare_jax.cli import main

    out = {}
    for name in names:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            code = main([*CASES[name], "--json", "--quiet"])
        if code != 0:
            sys.exit(f"{name}: exit {code}")
        out[name] = _strip(json.loads(buf.getvalue()))
    json.dump(out, sys.stdout)


def golden(name: str) -> dict:
    with open(os.path.join(GOLDEN, f"{name}.json")) as fh:
        return json.load(fh)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--print"]:
        _print_cases(sys.argv[2:])
        sys.exit(0)
    if not sys.argv[1:] or sys.argv[1] != "--write" or any(a not in CASES for a in sys.argv[2:]):
        sys.exit("usage: python tests/golden_cli.py --write [CASE ...]")
    os.makedirs(GOLDEN, exist_ok=True)
    for case in sys.argv[2:] or CASES:
        data = run_case(case)  # the file is opened once the command has answered (never left empty)
        with open(os.path.join(GOLDEN, f"{case}.json"), "w") as fh:
            json.dump(data, fh, indent=1, sort_keys=True)
            fh.write("\n")
        print("wrote", case)
