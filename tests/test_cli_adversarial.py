"""Bad input found by an adversarial walk: every case ends within 20 s with exit 2, exactly one line on
stderr, no traceback and nothing on stdout. In-process (``main([...])``) where that is enough; a FIFO
case in a subprocess too, since a hang there would hang the test run (the subprocess has a timeout)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from spare_jax.cli import main

CASE_S = 20.0


def refused(argv, capsys):
    t0 = time.perf_counter()
    code = main(argv)
    elapsed = time.perf_counter() - t0
    cap = capsys.readouterr()
    lines = [ln for ln in cap.err.splitlines() if ln.strip()]
    assert code == 2, (argv, code, cap.err[-2000:])
    assert cap.out == "", argv
    assert len(lines) == 1, (argv, lines)
    assert "Traceback" not in cap.err
    assert elapsed < CASE_S, f"{argv}: refusal took {elapsed:.1f} s"
    return lines[0]


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return str(path)


def _fifo_cases(f):
    return [["wipeout", "--config", f], ["wipeout", "-N", "20", "-r", "2", "--ring", f],
            ["wipeout", "-N", "20", "-r", "2", "--group-mtbf-file", f], ["reorder", "-N", "20", "-r", "2",
                                                                        "--trace", f],
            ["plan", "--failure-log", f]]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_and_other_non_regular_files_refused_at_once(fifo, tmp_path, capsys):
    for argv in _fifo_cases(fifo):
        line = refused(argv + ["--quiet"], capsys)
        assert "FIFO" in line and "not a regular file" in line, line
    for other, word in (("/dev/null", "device"), (str(tmp_path), "directory")):
        assert word in refused(["wipeout", "--config", other], capsys)
        assert word in refused(["plan", "--failure-log", other], capsys)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_config_in_a_subprocess_does_not_wait_for_a_writer(fifo):
    proc = subprocess.run([sys.executable, "-m", "spare_jax", "wipeout", "--config", fifo], capture_output=True,
                          text=True, timeout=60)  # the process start (JAX import) is most of it
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2 and proc.stdout == "" and len(lines) == 1, (proc.returncode, proc.stderr)
    assert "not a regular file" in lines[0]


def test_config_nested_thousands_deep(tmp_path, capsys):
    for text in ("a = " + "[" * 5000 + "]" * 5000, "a = " + "{b = " * 3000 + "1" + "}" * 3000):
        path = tmp_path / "deep.toml"
        path.write_text(text)
        assert "--config" in refused(["wipeout", "--config", str(path)], capsys)


def _log(tmp_path, text, name="log.csv"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("text,word", [
    ("# nodes = 100000000000\nnode,time_hours\nn1,5\nn2,7\n", "nodes must be in"),
    ("# window_hours = 1e20\nnode,time_hours\nn1,5\n", "window_hours must be in"),
    ("# window_hours = 1e-9\nnode,time_hours\nn1,5\n", "window_hours must be in"),
    # every directive in range, the fitted group MTBF absurd: refused before the Weibull fit and the plan
    ("# nodes = 1000000000\n# window_hours = 1e9\nnode,time_hours\nn1,5\nn1,6\nn2,7\n", "fitted per-node MTBF"),
    ("node,time_hours\nn1,1e-300\nn2,2e-300\n", "group MTBF"),
])
def test_failure_log_directives_and_fitted_mtbf_checked_first(tmp_path, capsys, text, word):
    line = refused(["plan", "--failure-log", _log(tmp_path, text), "--quiet"], capsys)
    assert word in line, line


def test_weighted_censoring_equals_listing_every_node(monkeypatch):
    from failure_logs import synthetic_log
    from spare_jax.planner import fit

    log = synthetic_log(50, 2000.0, 800.0, shape=1.3, rng=np.random.default_rng(3))
    log = fit.FailureLog(log.times, log.window_hours, 5000, log.path)  # 4,9xx nodes that never failed
    listed = fit.fit_log(log)
    monkeypatch.setattr(fit, "_EXPAND_MAX", 10)
    weighted = fit.fit_log(log)
    assert weighted.exponential == listed.exponential

    def numbers(w):
        return [w.shape, w.scale_hours, w.mtbf_hours, *w.mtbf_ci_hours, *w.shape_ci, w.p_exponential]

    for a, b in zip(numbers(weighted.weibull), numbers(listed.weibull)):
        assert math.isclose(a, b, rel_tol=1e-7), (a, b)


def test_repair_sigma_bounded_and_theory_work_bounded(capsys):
    line = refused(["wipeout", "-N", "600", "-r", "4", "--repair-time", "30", "--repair-law", "lognormal",
                    "--repair-sigma", "5", "--trials", "1000"], capsys)
    assert "--repair-sigma" in line
    from spare_jax.model.failures import FailureModel
    from spare_jax.model.placement import make_placement
    from spare_jax.model.repair import Repair
    from spare_jax.theory.repair import TRANSIENT_CLI_WORK, TheoryTooCostly, start_shift_min, transient_uptime

    model = FailureModel("exponential", 5.0, 600000.0, 1000.0, 1.0)
    t0 = time.perf_counter()
    with pytest.raises(TheoryTooCostly, match="operations"):
        transient_uptime(make_placement("stacked", 600, 4), model, Repair(30.0, "lognormal", 3.0),
                         max_work=TRANSIENT_CLI_WORK)
    assert time.perf_counter() - t0 < 5.0  # refused up front, not after the work
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no IntegrationWarning at the widest sigma allowed
        s = start_shift_min(Repair(30.0, "lognormal", 3.0), 4)
    assert math.isfinite(s) and s > 0


def _random_argvs(seed=22, count=30):
    """A sample of adversarial flag values: zero, negative, NaN, inf, 1e300, text, empty, huge ints."""
    rng = np.random.default_rng(seed)
    values = ["0", "-1", "-0.5", "nan", "NaN", "inf", "-inf", "1e300", "-1e300", "1e-300", "abc", "", " ",
              "1,2", "0x10", "9" * 40, "1e", "--", "\u0663"]
    flags = [("wipeout", "-N"), ("wipeout", "-r"), ("wipeout", "--trials"), ("wipeout", "--mtbf"),
             ("wipeout", "--seed"), ("overhead", "--trials"), ("ttt", "--work-hours"), ("ttt", "--ckpt-cost"),
             ("ttt", "--ckpt-interval"), ("wipeout", "--repair-time"), ("wipeout", "--job-mtbf"),
             ("optimize", "--r-max"), ("plan", "--gpus"), ("plan", "--gpu-mtbf-hours"), ("plan", "--runs"),
             ("wipeout", "--weibull-shape"), ("overhead", "--microbatches"), ("ttt", "--restart")]
    out = []
    for _ in range(count):
        cmd, flag = flags[rng.integers(len(flags))]
        value = values[rng.integers(len(values))]
        out.append([cmd, f"{flag}={value}"])
    return out


# wrong types and values in --config (TOML): every one refused naming the setting
CONFIG_CASES = ["N = 0", "N = -5", "N = nan", "N = inf", "N = 1e300", "N = '600'", "N = true", "N = [600]",
                "N = {a = 1}", "r = 2.5", "mtbf = -inf", "mtbf = nan", "mtbf = 0", "trials = 1e300",
                "seed = -1", "placement = 3", "json = 'yes'", "[wipeout]\nN = 1970-01-01",
                "repair-time = 30\nrepair-law = 'lognormal'\nrepair-sigma = 5", "nope = 1", "[nowhere]\nN = 3"]


@pytest.mark.parametrize("argv", _random_argvs())
def test_random_flag_values(argv, capsys):
    refused(argv + ["--quiet"], capsys)


@pytest.mark.parametrize("text", CONFIG_CASES)
def test_wrong_types_in_config(tmp_path, capsys, text):
    path = tmp_path / "c.toml"
    path.write_text(text + "\n")
    refused(["wipeout", "--config", str(path), "--quiet"], capsys)
