"""Bad input to the time-to-train commands, ttt and optimize, as one table: each row is a command line that must
be refused by tests/refusal.py's rule (exit 2, one line on stderr from spare-jax holding the row's words,
nothing on stdout, no traceback, no hang, no JAX kernel compiled). A flag that would change nothing is refused,
not ignored: the spare pool (--spares/--hardware-repair), elastic training (--scheme elastic, --elastic-data),
--job-scaling and a failure trace's flags (--failure-trace, --trace-*, --no-repair, --burst-window) are tried
with bad values and where they do not apply.

Their --config settings: tests/test_cli_refusals_config_files.py; plan: tests/test_cli_refusals_plan.py."""

from __future__ import annotations

import pytest

from pathlib import Path

from refusal import BAD_SPARES, ELASTIC, OPT, TTT, TTT1, number_rows, refused, row

SMALL_TRACE = str(Path(__file__).parent / "data" / "traces" / "small.csv")  # 24 nodes over 100 hours
TRACE_TTT = ["ttt", "-N", "16", "-r", "2", "--runs", "4", "--work-hours", "10", "--ckpt-interval", "60", "--quiet",
             "--failure-trace", SMALL_TRACE]
TRACE_OPT = ["optimize", "-N", "16", "--work-hours", "10", "--quiet", "--failure-trace", SMALL_TRACE]

ROWS = [
    # values out of range (checked before any sampling)
    row(["ttt", "--mtbf", "1e308", "--quiet"], "--mtbf", max_s=10),
    row(["ttt", "--mtbf", "1e-308", "--quiet"], "--mtbf", max_s=10),
    row(["ttt", "--ckpt-interval", "1e-300", "--quiet"], "--ckpt-interval", max_s=10),
    row(["ttt", "--ckpt-interval", "1e300", "--quiet"], "--ckpt-interval", max_s=10),
    row(["ttt", "--work-hours", "1e300", "--quiet"], "--work-hours", max_s=10),
    row(["ttt", "--ckpt-cost", "1e300", "--quiet"], "--ckpt-cost", max_s=10),
    row(["ttt", "--restart", "1e300", "--quiet"], "--restart", max_s=10),
    row(["ttt", "--trials", "4294967296", "--quiet"], "--trials", max_s=10),
    row(["optimize", "--r-max", "1000", "--quiet"], "--r-max", max_s=10),
    # flags optimize would ignore are not there
    row(["optimize", "-r", "3", "--quiet"], "-r", max_s=10),
    row(["optimize", "--seed", "1", "--quiet"], "--seed", max_s=10),
    # runs the closed form says are infeasible: refused before sampling
    row(["ttt", "-N", "60", "-r", "3", "--ckpt-interval", "100000", "--quiet", "--json"], "--ckpt-interval", max_s=60),
    row(["ttt", "-N", "60", "-r", "3", "--work-hours", "1000000", "--quiet", "--json"], "--work-hours", max_s=60, slow=True),
    # a sample over the sampling limit: refused before the exact form's search, with the count that fits
    row(["ttt", "--runs", "10000", "--quiet", "--json"], ["--runs", "at most about"], max_s=8),
    # values drawn once at random from zero, negative, NaN, inf, 1e300, text, empty, huge integers
    row(["optimize", "--r-max=nan", "--quiet"], "--r-max"),
    row(["ttt", "--work-hours=1e-300", "--quiet"], "--work-hours"),
    row(["ttt", "--ckpt-interval=" + "9" * 40, "--quiet"], "--ckpt-interval"),
    row(["ttt", "--work-hours=1e300", "--quiet"], "--work-hours"),
    row(["optimize", "--r-max=-1", "--quiet"], "--r-max"),
    row(["ttt", "--ckpt-cost=nan", "--quiet"], "--ckpt-cost"),
    row(["ttt", "--work-hours=-1", "--quiet"], "--work-hours"),
    row(["ttt", "--ckpt-cost= ", "--quiet"], "--ckpt-cost"),
    row(["ttt", "--restart=1e", "--quiet"], "--restart"),
    row(["ttt", "--ckpt-interval=--", "--quiet"], ["--ckpt-interval", "'--'"]),
    # huge N, r > N, r that does not divide N (rep), contradictory flags
    *[row([cmd, "-N", "1000000000000", "--quiet"], "--groups") for cmd in ("ttt", "optimize")],
    *[row([cmd, "-N", "9" * 400, "--quiet"], "--groups") for cmd in ("ttt", "optimize")],
    row(["ttt", "-N", "10", "-r", "11", "--quiet"], ["redundancy", "r=11 > N=10"]),
    row(["ttt", "--scheme", "rep", "-N", "10", "-r", "3", "--quiet"], ["'rep'", "divide"]),
    row(["ttt", "--scheme", "none", "-r", "4", "--quiet"], "--scheme none"),
    row(["optimize", "--epochs", "1000", "--quiet"], "--epochs"),
    row(["optimize", "--pool-seed", "3", "--quiet"], "--pool-seed"),
    row(["ttt", "--group-mtbf-min", "600", "--gpu-mtbf-hours", "5e4", "--quiet"],
        ["--group-mtbf-min", "--gpu-mtbf-hours"]),
    row(["optimize", "--domain-mtbf-min", "600", "--quiet"], ["--domain-size", "--domain-mtbf-min"]),
    row(["ttt", "--peer-timeout", "30", "--quiet"], "--peer-timeout"),
    # elastic training: no -r, the data policy with elastic only, a repair time needed
    *[row(ELASTIC + ["-r", r], ["-r/--redundancy " + r, "--scheme elastic"]) for r in ("3", "1")],
    *[row(TTT1 + ["-r", "2", "--scheme", scheme, "--elastic-data", "shrink"],
          ["--elastic-data shrink", f"--scheme {scheme}"]) for scheme in ("spare", "rep")],
    row(TTT1 + ["--scheme", "elastic"], ["--scheme elastic needs --repair-time"]),
    row(TTT1 + ["--scheme", "ELASTIC", "--repair-time", "30"], ["--scheme", "'ELASTIC'"]),
    row(TTT1 + ["--scheme", "elastic", "--repair-time", "30", "--elastic-data", "grow"], ["--elastic-data", "'grow'"]),
    row(TTT1 + ["--scheme", "elastic", "--repair-time", "30", "--elastic-data", ""], ["--elastic-data", "''"]),
    row(TTT1 + ["--scheme", "elastic", "--repair-time", "30", "--restart-depth", "2"], ["--restart-depth"]),
    # --job-scaling: only with a preset that has job-wide interruptions
    row(["optimize", "--job-scaling", "per-job"], ["--job-scaling per-job", "drop --job-scaling"]),
    *[row(TTT1 + ["--preset", preset, "--job-scaling", "per-gpu"], ["--job-scaling per-gpu", "drop"])
      for preset in ("ft-hsdp-100k", "rsc1-16k", "rsc2-8k")],
    *[row([cmd, "--preset", "nope", "--quiet"], ["--preset", "'nope'"]) for cmd in ("ttt", "optimize")],
    # the spare pool
    *[row(base + extra, word, id=f"{name}: {' '.join(extra)}")
      for name, base in (("ttt", TTT), ("optimize", OPT)) for extra, word in BAD_SPARES],
    row(["ttt", "-N", "16", "--runs", "4", "--work-hours", "10", "--quiet", "--scheme", "none", "--repair-time", "60",
         "--repair-law", "exp"], ["--scheme none", "--repair-time", "--spares"]),
    row(OPT + ["--spares", "2", "--hardware-repair", "600", "--epochs", "1000"], "--epochs"),
    row(["ttt", "--trials", "5", "--runs", "4", "--quiet"], ["--trials", "--runs", "same setting"]),
    # a failure trace: its flags without it, repair choices that contradict, parts a replay cannot honour
    *[row(TTT + extra, words, id=f"trace flag without a trace: {' '.join(extra)}")
      for extra, words in ((["--trace-unit", "node"], "--trace-unit"), (["--no-repair"], "--no-repair"),
                           (["--trace-time-scale", "0.5"], "--trace-time-scale"),
                           (["--burst-window", "5"], "--burst-window"),
                           (["--repair-time", "trace"], "--repair-time trace"))],
    *[row(TRACE_TTT + extra, words, id=f"trace: {' '.join(extra)}")
      for extra, words in ((["--trace-time-scale", "0"], "--trace-time-scale"),
                           (["--trace-time-scale", "nan"], "--trace-time-scale"),
                           (["--burst-window", "-1"], "--burst-window"),
                           (["--no-repair", "--repair-time", "5"], ["--no-repair", "--repair-time"]),
                           (["--trace-nodes-per-group", "2"], ["--trace-nodes-per-group", "--trace-unit node"]),
                           (["--trace-unit", "node", "--trace-nodes-per-group", "2"], ["24 nodes", "need"]),
                           (["--trace-unit", "rack"], "--trace-unit"),
                           (["--domain-size", "4", "--domain-mtbf-min", "1000"], "failure domains"),
                           (["--lemon-fraction", "0.1", "--lemon-factor", "5"], "lemons"),
                           (["--distribution", "weibull", "--weibull-shape", "0.7"], ["--weibull-shape", "drop"]),
                           (["--distribution", "weibull"], "failure law"),
                           (["--repair-time", "5", "--repair-law", "exp"], "a fixed time or none"),
                           (["--spares", "2", "--hardware-repair", "60"], "spare pool"),
                           (["--gpu-mtbf-hours", "5e4"], ["--gpu-mtbf-hours", "--failure-trace"]),
                           (["--ages", "renewed"], ["--ages", "--failure-trace"]))],
    row([x for x in TRACE_TTT if x not in ("-r", "2")] + ["--scheme", "elastic", "--no-repair"],
        "elastic without repair"),
    row([x for x in TRACE_TTT if x not in ("-N", "16")] + ["-N", "30"], ["24 nodes", "30 groups"]),
    row(TRACE_OPT + ["--repair-time", "5,10"], ["--repair-time", "one value"]),
    row(TRACE_OPT + ["--microbatches", "1,2"], ["--microbatches", "--failure-trace"]),
]


@pytest.mark.parametrize("argv, words, kw", ROWS)
def test_refused(argv, words, kw, capsys):
    refused(argv, words, capsys, **kw)


@pytest.mark.parametrize("argv, words, kw", [r for cmd in ("ttt", "optimize") for r in number_rows(cmd)])
def test_every_number_flag_refuses_bad_numbers(argv, words, kw, capsys):
    refused(argv, words, capsys, **kw)
