"""Bad input to plan, as tables: command lines, and failure logs (--failure-log) whose text is malformed or
out of range. Each must be refused by tests/refusal.py's rule (exit 2, one line on stderr from spare-jax holding
the row's words, nothing on stdout, no traceback, no hang, no JAX kernel compiled); a log is refused before
the Weibull fit and the plan.

plan's --config: tests/test_cli_refusals_config_files.py; a log that is a FIFO, a device or a directory:
tests/test_cli_refusals_files.py; --report: there too."""

from __future__ import annotations

from pathlib import Path

import pytest

from refusal import BAD_SPARES, number_rows, refused, row

PLAN = ["plan", "--gpus", "16384", "--gpus-per-group", "1024", "--runs", "4", "--no-sensitivity", "--quiet"]

SMALL_TRACE = str(Path(__file__).parent / "data" / "traces" / "small.csv")  # 24 nodes over 100 hours
TRACE_PLAN = ["plan", "--gpus", "24576", "--gpus-per-group", "1024", "--quiet", "--failure-trace", SMALL_TRACE]

ROWS = [
    # a plan on a failure trace: the rate flags, the price and the deadline do not go with it
    *[row(TRACE_PLAN + extra, [extra[0], "--failure-trace"]) for extra in (
        ["--gpu-mtbf-hours", "5e4"], ["--deadline-hours", "100"], ["--gpu-hour-price", "2"],
        ["--failure-log", "tests/data/failure_log_small.csv"])],
    row(TRACE_PLAN[:2] + ["49152"] + TRACE_PLAN[3:], ["24 nodes", "48 groups"]),
    row(TRACE_PLAN + ["--trace-unit", "node", "--gpus-per-node", "3"], ["whole number"]),
    row(["plan", "--gpus", "24576", "--gpus-per-group", "1024", "--quiet", "--trace-time-scale", "0.5"],
        ["--trace-time-scale", "--failure-trace"]),
    # the spare pool
    *[row(PLAN + extra, word, id=f"plan: {' '.join(extra)}") for extra, word in BAD_SPARES],
    # --spares auto: the hardware repair H has no default, the swap is the repair time, the wait and runs go with it
    row(PLAN + ["--spares", "auto", "--repair-time", "30"], ["--spares auto", "--hardware-repair"]),
    row(PLAN + ["--spares", "auto", "--hardware-repair", "1440"], ["--spares auto", "--repair-time"]),
    row(PLAN + ["--max-spare-wait", "30"], ["--max-spare-wait", "--spares auto"]),
    row(PLAN + ["--spares", "auto", "--hardware-repair", "1440", "--repair-time", "30", "--spare-runs", "100"],
        "--spare-runs"),
    row(PLAN + ["--spares", "autox", "--hardware-repair", "1440"], "--spares"),
    # a list of micro-batch counts is searched with repair only
    row(["plan", "--microbatches", "1,2", "--quiet"], "--microbatches"),
    row(["plan", "--job-scaling", "per-job"], ["--job-scaling per-job", "drop --job-scaling"]),
    # values drawn once at random from zero, negative, NaN, inf, 1e300, text, empty, huge integers
    row(["plan", "--gpu-mtbf-hours=-inf", "--quiet"], "--gpu-mtbf-hours"),
    row(["plan", "--gpus=" + "9" * 40, "--quiet"], "--gpus"),
    # huge clusters, r > N, contradictory flags, an unknown preset
    row(["plan", "--gpus", "1000000000", "--gpus-per-group", "1", "--quiet"], ["--gpus", "200,000"]),
    row(["plan", "--gpus", "9" * 400, "--quiet"], "--gpus"),
    row(["plan", "--gpus", "1000", "--gpus-per-group", "3", "--quiet"], ["--gpus", "--gpus-per-group"]),
    row(["plan", "--gpus", "1024", "--gpus-per-group", "2048", "--quiet"], ["--gpus", "--gpus-per-group"]),
    row(["plan", "--gpu-mtbf-hours", "5", "--node-mtbf-hours", "5", "--quiet"],
        ["--node-mtbf-hours", "--gpu-mtbf-hours"]),
    row(["plan", "--gpu-mtbf-hours", "5", "--failure-log", "log.csv", "--quiet"],
        ["--failure-log", "--gpu-mtbf-hours"]),
    row(["plan", "--gpus-per-node", "24", "--quiet"], ["--gpus-per-node", "--gpus-per-group", "whole nodes"]),
    row(["plan", "--log-nodes", "8", "--quiet"], "--log-nodes"),
    row(["plan", "--schemes", "spare,nope", "--quiet"], ["--schemes", "'spare,nope'"]),
    row(["plan", "--preset", "nope", "--quiet"], ["--preset", "'nope'"]),
    row(["plan", "--deadline-hours=--", "--quiet"], ["--deadline-hours", "'--'"]),
    row(["plan", "--epochs", "1000", "--quiet"], ["--epochs 1000", "drop it"]),  # no pool of epochs is sampled
]


@pytest.mark.parametrize("argv, words, kw", ROWS)
def test_refused(argv, words, kw, capsys):
    refused(argv, words, capsys, **kw)


@pytest.mark.parametrize("argv, words, kw", number_rows("plan"))
def test_every_number_flag_refuses_bad_numbers(argv, words, kw, capsys):
    refused(argv, words, capsys, **kw)


# failure logs: (the log's text, the words of the refusal)
LOGS = [
    # directives out of range and an absurd fitted MTBF: refused before the Weibull fit and the plan
    ("# nodes = 100000000000\nnode,time_hours\nn1,5\nn2,7\n", "nodes must be in"),
    ("# window_hours = 1e20\nnode,time_hours\nn1,5\n", "window_hours must be in"),
    ("# window_hours = 1e-9\nnode,time_hours\nn1,5\n", "window_hours must be in"),
    # every directive in range, the fitted group MTBF absurd
    ("# nodes = 1000000000\n# window_hours = 1e9\nnode,time_hours\nn1,5\nn1,6\nn2,7\n", "fitted per-node MTBF"),
    ("node,time_hours\nn1,1e-300\nn2,2e-300\n", "group MTBF"),
    # malformed
    ("", "no header line"),
    ("\n\n   \n", "no header line"),
    ("# nodes = 4\n# window_hours = 100\n", "no header line"),
    ("node,time_hours\n", "no failure"),
    ("node,time_hours\nn1,\nn2,\n", "no failure"),
    ("n1,5\nn2,7\n", ["line 1", "header"]),
    ("node;time_hours\nn1;5\n", ["line 1", "header"]),
    ("time_hours,node\n5,n1\n", ["line 1", "header"]),
    ("node,time_hours\nn1,5,7\n", ["line 2", "2 fields"]),
    ("node,time_hours\nn1\n", ["line 2", "2 fields"]),
    ("node,time_hours\n,5\n", ["line 2", "empty node name"]),
    ("node,time_hours\nn1,soon\n", ["line 2", "time_hours"]),
    ("node,time_hours\nn1,nan\n", ["line 2", "time_hours"]),
    ("node,time_hours\nn1,inf\n", ["line 2", "time_hours"]),
    ("node,time_hours\nn1,-5\n", ["line 2", "time_hours"]),
    ("node,time_hours\nn1,0\n", ["line 2", "time_hours"]),
    ("node,time_hours\nn1,1e308\n", ["--failure-log", "observation window", "1e+308"]),
    ("node,time_hours\nn1,5\nn2,2e9\n", ["--failure-log", "observation window", "2e+09"]),
    ("node,time_hours\nn1,\uff15\n", ["line 2", "time_hours"]),  # fullwidth 5
    ("node,time_hours\nn1,5\nn1,5\n", ["line 3", "fails twice"]),
    ("# window_hours = 10\nnode,time_hours\nn1,5\nn2,50\n", ["line 4", "beyond the observation window"]),
    ("# nodes = 1\nnode,time_hours\nn1,5\nn2,7\n", ["nodes (1)", "fewer"]),
    ("# nodes = 2.5\nnode,time_hours\nn1,5\n", ["line 1", "nodes"]),
    ("# nodes = 0\nnode,time_hours\nn1,5\n", ["line 1", "nodes"]),
    ("# nodes = -4\nnode,time_hours\nn1,5\n", ["line 1", "nodes"]),
    ("# window_hours = nan\nnode,time_hours\nn1,5\n", ["line 1", "window_hours"]),
    ("# window_hours = 100\n# window_hours = 200\nnode,time_hours\nn1,5\n", ["line 2", "window_hours given twice"]),
    ("# window_hours 100\nnode,time_hours\nn1,5\n", ["line 1", "malformed directive"]),
    ("# nodes = many\nnode,time_hours\nn1,5\n", ["line 1", "nodes"]),
    ("node,time_hours\n" + "n1,5\n" * 1 + "n2,7\n" + "x" * 5000 + "\n", ["line 4", "2 fields"]),
]


@pytest.mark.parametrize("text, words", LOGS)
def test_failure_log_refused(text, words, tmp_path, capsys):
    path = tmp_path / "log.csv"
    path.write_text(text, encoding="utf-8")
    words = [words] if isinstance(words, str) else words
    refused(["plan", "--failure-log", str(path), "--quiet"], ["--failure-log", *words], capsys)


@pytest.mark.parametrize("data, words", [
    (b"\xff\xfe\x00n\x00o\x00d\x00e", "not a UTF-8 text file"),  # UTF-16
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "not a UTF-8 text file"),
    (b"node,time_hours\nn1,5\x00\n", "line 2"),
], ids=["utf-16", "png", "nul byte"])
def test_binary_failure_log_refused(data, words, tmp_path, capsys):
    path = tmp_path / "log.csv"
    path.write_bytes(data)
    refused(["plan", "--failure-log", str(path), "--quiet"], ["--failure-log", words], capsys)


def test_failure_log_flags_out_of_range_win_over_the_log(tmp_path, capsys):
    path = tmp_path / "log.csv"
    path.write_text("node,time_hours\nn1,5\nn2,7\n")
    refused(["plan", "--failure-log", str(path), "--log-window-hours", "1", "--quiet"], "beyond the observation window",
            capsys)
    refused(["plan", "--failure-log", str(path), "--log-nodes", "1", "--quiet"], ["nodes (1)", "fewer"], capsys)
