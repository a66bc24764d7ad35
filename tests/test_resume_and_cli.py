"""Resumable runs (kill midway, re-run, same statistics), config files, and every CLI error path."""
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from spare_jax.cli import main
from spare_jax.model.placement import make_placement
from spare_jax.kernels.wipeout import simulate_wipeout

ARGS = ["wipeout", "-N", "300", "-r", "5", "--trials", "600000", "--chunk-size", "4096", "--seed", "3", "--json",
        "--quiet"]


def _run(args, **kw):
    return subprocess.run([sys.executable, "-m", "spare_jax", *args], capture_output=True, text=True, **kw)


@pytest.mark.slow
def test_killed_run_resumes_to_the_uninterrupted_result(tmp_path):
    """SIGKILL at a random moment (after the first state write), resume: the same final statistics."""
    import random

    out = tmp_path / "run"
    state = out / "state.json"
    proc = subprocess.Popen([sys.executable, "-m", "spare_jax", *ARGS, "--state-dir", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while time.time() < deadline and not state.exists() and proc.poll() is None:
        time.sleep(0.02)
    time.sleep(random.uniform(0.0, 0.5))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = json.loads(state.read_text())["body"]["trials_done"]
    assert 0 < done < 600_000, "the run must be interrupted midway for this test to mean anything"
    resumed = _run([*ARGS, "--state-dir", str(out)], timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    fresh = _run(ARGS, timeout=300)
    a, b = json.loads(resumed.stdout), json.loads(fresh.stdout)
    for key in ("mc_mean", "mc_stderr", "mc_quantiles", "mc_epoch_uptime_min", "trials"):
        assert a[key] == b[key], key
    assert json.loads(state.read_text())["body"]["trials_done"] == 600_000
    assert sorted(os.listdir(out)) == [".lock", "state.json"]


def test_rerun_with_other_redundancy_after_run_json_deleted_is_refused(tmp_path, capsys):
    out = str(tmp_path / "r")
    assert main(["wipeout", "-N", "40", "-r", "8", "--trials", "2000", "--state-dir", out, "--quiet", "--json"]) == 0
    capsys.readouterr()
    if os.path.exists(os.path.join(out, "run.json")):
        os.remove(os.path.join(out, "run.json"))
    assert main(["wipeout", "-N", "40", "-r", "4", "--trials", "2000", "--state-dir", out, "--quiet", "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "other parameters" in captured.err and "redundancy" in captured.err


def test_resume_refuses_other_parameters(tmp_path, capsys):
    out = str(tmp_path / "r")
    assert main(["wipeout", "-N", "40", "-r", "3", "--trials", "2000", "--state-dir", out, "--quiet", "--json"]) == 0
    capsys.readouterr()
    assert main(["wipeout", "-N", "40", "-r", "4", "--trials", "2000", "--state-dir", out, "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "other parameters" in err[0] and "redundancy" in err[0]


def test_config_file_sets_defaults_and_flags_override(tmp_path, capsys):
    cfg = tmp_path / "run.toml"
    cfg.write_text("[wipeout]\ngroups = 40\nredundancy = 4\ntrials = 1000\nplacement = \"block\"\n")
    assert main(["wipeout", "--config", str(cfg), "-r", "5", "--json", "--quiet"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["groups"], data["redundancy"], data["placement"], data["trials"]) == (40, 5, "block", 1000)


CLI_ERRORS = [
    ["wipeout", "-N", "10", "-r", "11"],
    ["wipeout", "-r", "0"],
    ["wipeout", "-N", "10", "-r", "3", "--placement", "block"],
    ["wipeout", "--trials", "0"],
    ["wipeout", "--placement", "ring"],
    ["wipeout", "--mtbf", "nan"],
    ["wipeout", "--weibull-shape", "0"],
    ["wipeout", "--chunk-size", "0"],
    ["wipeout", "--devices", "99", "--trials", "10"],
    ["overhead", "-N", "10", "-r", "11"],
    ["overhead", "--trials", "-1"],
    ["overhead", "-N", "12", "-r", "5", "--placement", "block"],
    ["reorder", "-N", "10", "-r", "2", "--failed", "1,1"],
    ["reorder", "-N", "10", "-r", "2", "--failed", "1,10"],
    ["reorder", "-N", "10", "-r", "2", "--failed", ""],
    ["reorder", "-N", "10", "-r", "2"],
    ["reorder", "-N", "10", "-r", "2", "--trace", "/nonexistent/trace.csv"],
    ["ttt", "--scheme", "raid"],
    ["ttt", "--ckpt-interval", "0"],
    ["ttt", "--restart", "nan"],
    ["optimize", "--r-max", "0"],
    ["optimize", "-N", "0"],
    ["bench", "-N", "5", "-r", "6"],
    ["run", "--seed", "-2"],
    ["nosuchcommand"],
    ["wipeout", "--config", "/nonexistent.toml"],
    [],
]


@pytest.mark.parametrize("argv", CLI_ERRORS, ids=lambda a: " ".join(a) or "(none)")
def test_every_error_path_is_one_line_exit_2(argv, capsys):
    code = main([*argv, "--quiet"] if argv and argv[0] not in ("nosuchcommand",) and argv[-1] != "--quiet"
                and "--config" not in argv else argv)
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    lines = [ln for ln in captured.err.splitlines() if ln.strip()]
    assert len(lines) == 1 or not argv, lines  # no subcommand prints the usage (still exit 2)
    assert "Traceback" not in captured.err
