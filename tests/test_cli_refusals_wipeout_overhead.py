"""Bad input to the epoch commands (wipeout, overhead, place), bench, reorder, presets and run, as one table:
each row is a command line that must be refused by tests/refusal.py's rule (exit 2, one line on stderr from
spare-jax holding the row's words, nothing on stdout, no traceback, no hang, no JAX kernel compiled).

Input files and output locations: tests/test_cli_refusals_files.py; --config and --preset:
tests/test_cli_refusals_config_files.py."""

from __future__ import annotations

import subprocess
import sys

import pytest

from refusal import number_rows, refused, row

SMALL = ["--trials", "10", "--quiet"]

ROWS = [
    # wipeout: values out of range, a placement that cannot hold r, an unknown placement
    row(["wipeout", *SMALL, "-N", "10", "-r", "11"], "redundancy"),
    row(["wipeout", *SMALL, "-r", "0"], "redundancy"),
    row(["wipeout", *SMALL, "-N", "10", "-r", "3", "--placement", "block"], "divide"),
    row(["wipeout", "--quiet", "--trials", "0"], "trials"),
    row(["wipeout", "--quiet", "--trials", "-5"], "trials"),
    row(["wipeout", *SMALL, "--placement", "ring"], "placement"),
    row(["wipeout", *SMALL, "--mtbf", "nan"], "mtbf"),
    row(["wipeout", *SMALL, "--mtbf", "-1"], "mtbf"),
    row(["wipeout", *SMALL, "-N", "abc"], "groups"),
    row(["wipeout", *SMALL, "--seed", "-1"], "seed"),
    row(["wipeout", "--weibull-shape", "0.001", "--quiet"], "--weibull-shape", max_s=10),
    row(["wipeout", "--weibull-shape", "50", "--quiet"], "--weibull-shape", max_s=10),
    row(["wipeout", "--seed", str(2**63), "--quiet"], "--seed", max_s=10),
    row(["wipeout", "--seed", str(2**64), "--quiet"], "--seed", max_s=10),
    row(["overhead", "--seed", str(2**64 + 5), "--quiet"], "--seed", max_s=10),
    row(["overhead", "--mtbf", "1e308", "--quiet"], "--mtbf", max_s=10),
    row(["overhead", "--mtbf", "1e-308", "--quiet"], "--mtbf", max_s=10),
    row(["wipeout", "--mtbf", "inf", "--quiet"], "--mtbf", max_s=10),
    row(["wipeout", "--gpus-per-group", "1e-300", "--quiet"], "--gpus-per-group", max_s=10),
    row(["wipeout", "--reference-gpus", "1e400", "--quiet"], "--reference-gpus", max_s=10),
    # per-group MTBF = 0.01 * 1 / 1e6 min: every flag in range, the combination is not
    row(["wipeout", "--mtbf", "0.01", "--reference-gpus", "1", "--gpus-per-group", "1e6", "--quiet"],
        "per-group MTBF", max_s=10),
    row(["wipeout", "--mtbf", "1e6", "--reference-gpus", "1e4", "--gpus-per-group", "1", "--quiet"],
        "per-group MTBF", max_s=10),
    row(["wipeout", "--chunk-size", "1e8", "--quiet"], "--chunk-size", max_s=10),
    row(["wipeout", "--chunk-size", "100000000", "--quiet"], "--chunk-size", max_s=10),
    row(["wipeout", "--chunk-size", "2000000000", "--quiet"], "--chunk-size", max_s=10),
    row(["wipeout", "-N", "10000000", "--quiet"], "--groups", max_s=10),
    row(["wipeout", "-N", "\uff13", "--quiet"], "--groups", max_s=10),  # fullwidth 3
    row(["overhead", "--trials", "4294967296", "--quiet"], "--trials", max_s=10),
    row(["wipeout", "--trials", "4294967296", "--quiet"], "--trials", max_s=10),
    row(["wipeout", "-r", "1000", "-N", "2000", "--quiet"], "--redundancy", max_s=10),
    row(["wipeout", "-N", "600", "-r", "4", "--repair-time", "30", "--repair-law", "lognormal", "--repair-sigma", "5",
         "--trials", "1000"], "--repair-sigma"),
    # values drawn once at random from zero, negative, NaN, inf, 1e300, text, empty, huge integers
    row(["overhead", "--microbatches=-1", "--quiet"], "--microbatches"),
    row(["wipeout", "--seed= ", "--quiet"], "--seed"),
    row(["wipeout", "-N=-1e300", "--quiet"], "--groups"),
    row(["wipeout", "--trials=\u0663", "--quiet"], "--trials"),  # Arabic-Indic 3
    row(["overhead", "--trials=1e", "--quiet"], "--trials"),
    row(["overhead", "--trials=" + "9" * 40, "--quiet"], "--trials"),
    row(["wipeout", "-N=0", "--quiet"], "--groups"),
    row(["wipeout", "--seed=abc", "--quiet"], "--seed"),
    row(["wipeout", "--trials=", "--quiet"], "--trials"),
    row(["wipeout", "--repair-time=0", "--quiet"], "--repair-time"),
    row(["overhead", "--microbatches=-inf", "--quiet"], "--microbatches"),
    row(["overhead", "--trials=NaN", "--quiet"], "--trials"),
    row(["wipeout", "--job-mtbf=1e300", "--quiet"], "--job-mtbf"),
    row(["wipeout", "--job-mtbf=--", "--quiet"], "--job-mtbf"),
    row(["wipeout", "--seed=1e300", "--quiet"], "--seed"),
    row(["wipeout", "--seed=1e-300", "--quiet"], "--seed"),
    row(["overhead", "--microbatches=1e300", "--quiet"], "--microbatches"),
    row(["overhead", "--trials=1e-300", "--quiet"], "--trials"),
    row(["overhead", "--trials=abc", "--quiet"], "--trials"),
    # '--flag=--': argparse drops the '--' and stores an empty list without calling the flag's type
    row(["wipeout", "--mtbf=--", "--quiet"], ["--reference-mtbf-min", "'--'"]),
    row(["wipeout", "--ring=--", "--quiet"], ["--ring", "'--'"]),
    row(["overhead", "-N=--", "--quiet"], ["--groups", "'--'"]),
    # huge N, r > N on every command that takes them
    *[row([cmd, "-N", "1000000000000", "--quiet"], "--groups")
      for cmd in ("wipeout", "overhead", "place", "bench", "reorder")],
    *[row([cmd, "-N", "9" * 400, "--quiet"], "--groups") for cmd in ("wipeout", "overhead", "place", "bench")],
    *[row([cmd, "-N", "10", "-r", "11", "--quiet"], ["redundancy", "r=11 > N=10"])
      for cmd in ("wipeout", "overhead", "place", "bench")],
    row(["reorder", "-N", "10", "-r", "11", "--failed", "1", "--quiet"], ["redundancy", "r=11 > N=10"]),
    row(["overhead", "-N", "10", "-r", "3", "--placement", "block", "--quiet"], "divide"),
    # flags that do not apply, or contradict each other
    row(["wipeout", "--work-hours", "100", "--quiet"], "--work-hours"),
    row(["reorder", "-N", "10", "-r", "2", "--failed", "1", "--seed", "3", "--quiet"], "--seed"),
    row(["wipeout", "--weibull-shape", "2", "--quiet"], "--weibull-shape"),
    row(["wipeout", "--mtbf", "5", "--group-mtbf", "3000", "--quiet"], "--group-mtbf"),
    row(["wipeout", "--group-mtbf", "3000", "--gpu-mtbf-hours", "50000", "--quiet"], "--gpu-mtbf-hours"),
    row(["wipeout", "-N", "20", "--ring", "", "--quiet"], "--ring"),
    row(["wipeout", "-N", "20", "--lemon-factor", "5", "--quiet"], "--lemon-fraction"),
    row(["wipeout", "-N", "20", "--lemon-seed", "5", "--quiet"], "--lemon-fraction"),
    row(["wipeout", "--domain-size", "4", "--quiet"], ["--domain-size", "--domain-mtbf-min"]),
    row(["overhead", "--job-mtbf-min", "100", "--job-fraction", "0.1", "--quiet"],
        ["--job-mtbf-min", "--job-fraction"]),
    row(["wipeout", "--repair-law", "lognormal", "--quiet"], ["--repair-law", "--repair-time"]),
    row(["place", "-N", "20", "-r", "2", "--trials", "1", "--quiet"], "--trials"),
    row(["place", "-N", "20", "-r", "2", "--placement", "random", "--quiet"], "--placement"),
    row(["place", "-N", "20", "-r", "2", "--ring-out", "", "--quiet"], "--ring-out"),
    row(["reorder", "-N", "10", "-r", "2", "--quiet"], ["--failed", "--trace"]),
    row(["run", "--full", "--quick", "--quiet"], ["--quick", "--full"]),
    row(["bench", "--seed", "1", "--quiet"], "--seed", max_s=10),
    row(["bench", "-N", "200000", "-r", "64", "--quiet"], "--groups", max_s=10),
    row(["presets", "--job-scaling", "abc"], "--job-scaling"),
    row(["reorder", "-N", "20", "-r", "2", "--failed", "3,17,", "--quiet"], "--failed", max_s=10),
    row(["reorder", "-N", "20", "-r", "2", "--failed", "3,,4", "--quiet"], "--failed", max_s=10),
    row(["reorder", "-N", "20", "-r", "2", "--failed", "\uff13,4", "--quiet"], "--failed", max_s=10),
    row(["reorder", "-N", "20", "-r", "2", "--failed", "\u0663,4", "--quiet"], "--failed", max_s=10),  # Arabic-Indic 3
    row(["reorder", "-N", "20", "-r", "2", "--failed", " , ", "--quiet"], "--failed", max_s=10),
    row(["reorder", "-N", "20", "-r", "2", "--failed", "20", "--quiet"], "failed"),
    row(["reorder", "-N", "20", "-r", "2", "--failed", "-1", "--quiet"], "failed"),
    # the spare pool and elastic training belong to whole training runs (ttt, optimize, plan)
    *[row([cmd, flag, value], flag) for cmd in ("wipeout", "overhead", "place", "presets")
      for flag, value in (("--spares", "2"), ("--hardware-repair", "600"), ("--scheme", "elastic"),
                          ("--elastic-data", "shrink"))],
    *[row([cmd, "-N", "16", "-r", "2", "--repair-time", "30", "--spares", "2", "--hardware-repair", "60", "--quiet"],
          "--spares") for cmd in ("wipeout", "overhead")],
    # --job-scaling carries a preset's job-wide interruptions: none here
    *[row([cmd, "--job-scaling", "per-job"], ["--job-scaling per-job", "drop --job-scaling"])
      for cmd in ("wipeout", "overhead", "place")],
    # --preset on a command without it names every command that takes it (plan was left out); an unknown one
    *[row([cmd, "--preset", "llama3-16k"], ["--preset llama3-16k", f"not '{cmd}'", "plan", "ttt", "wipeout"])
      for cmd in ("presets", "reorder", "bench", "run")],
    *[row([cmd, "--preset", "nope", "--quiet"], ["--preset", "'nope'"])
      for cmd in ("wipeout", "overhead", "place", "presets", "reorder", "bench", "run")],
    # a setting given twice with different values (one would be dropped in silence), a former name beside the new
    row(["wipeout", "-N", "16", "-N", "20", "--quiet"], ["-N", "given twice", "'16'", "'20'"]),
    row(["wipeout", "--repair-time", "30", "--run-hours", "10", "--work-hours", "20", "--quiet"],
        ["--run-hours", "--work-hours", "same setting"]),
    row(["reorder", "-N", "12", "-r", "3", "--failed", "3,7", "--gpus-per-group", "8"], ["--gpus-per-group", "--gpus"]),
    # work estimated before any compile: epochs with repair that would run for hours
    row(["overhead", "-N", "16", "-r", "2", "--repair-time", "0.001", "--epochs", "200", "--quiet"],
        ["--repair-time 0.001", "events", "at least about", "wipeout"], max_s=10),
    row(["overhead", "-N", "16", "-r", "2", "--repair-time", "0.05", "--epochs", "2000", "--quiet"],
        ["--epochs 2,000", "events in all", "at most 333 --epochs"], max_s=10),
    row(["overhead", "-N", "16", "-r", "2", "--microbatches", "1024", "--epochs", "500", "--quiet"],
        ["--microbatches 1024", "at most 256", "ttt"], max_s=10),
    row(["overhead", "-N", "16", "-r", "2", "--microbatches", "256", "--epochs", "100000", "--quiet"],
        ["--epochs 100,000", "at most 24,509 --epochs"], max_s=10),
    # multi-process numbers beyond any run (a foreign TypeError from the runtime otherwise)
    row(["wipeout", "--coordinator", "localhost:1", "--num-processes", "99999999999999999999", "--process-id", "0",
         "--quiet"], ["--num-processes", "65,536"]),
    row(["wipeout", "--coordinator", "localhost:1", "--num-processes", "2", "--process-id", "99999999999999999999",
         "--quiet"], "--process-id"),
]


@pytest.mark.parametrize("argv, words, kw", ROWS)
def test_refused(argv, words, kw, capsys):
    refused(argv, words, capsys, **kw)


@pytest.mark.parametrize("argv, words, kw", [r for cmd in ("wipeout", "overhead", "place", "bench", "reorder", "run")
                                             for r in number_rows(cmd)])
def test_every_number_flag_refuses_bad_numbers(argv, words, kw, capsys):
    refused(argv, words, capsys, **kw)


def test_python_dash_m_entry_point_and_exit_code():
    proc = subprocess.run([sys.executable, "-m", "spare_jax", "wipeout", "-r", "0"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1


def test_the_refusal_check_sees_a_compile_and_ends_a_hang(monkeypatch, capsys):
    """tests/refusal.py itself: its compile counter counts (a renamed JAX event would leave it at 0) and its
    alarm ends a command that does not return."""
    import time

    import jax
    import jax.numpy as jnp

    import refusal

    before = refusal._COMPILES[0]
    jax.jit(lambda x: x * 3 + 1)(jnp.arange(7.0))
    assert refusal._COMPILES[0] > before
    monkeypatch.setattr(refusal, "main", lambda argv: time.sleep(30))
    t0 = time.perf_counter()
    with pytest.raises(refusal.RefusalHang):
        refused(["wipeout"], [], capsys, max_s=0.5)
    assert time.perf_counter() - t0 < 5
