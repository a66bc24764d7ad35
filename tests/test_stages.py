"""Progress by stage on stderr (issue 22, item 4): ``bench`` and ``plan`` print one line per stage, ``--quiet``
silences them and ``--json`` keeps stdout one JSON object. The heavy work is faked (a second or two)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from spare_jax import cli


def _run(capsys, argv):
    code = cli.main(argv)
    cap = capsys.readouterr()
    return code, cap.out, cap.err


@pytest.fixture
def light_bench(monkeypatch):
    """run_bench's measurements replaced by trivial kernels and fixed rates: only its stages stay."""
    import spare_jax.suite.bench as bench
    import spare_jax.kernels.overhead as overhead
    import spare_jax.kernels.wipeout as wipeout

    monkeypatch.setattr(wipeout, "wipeout_kernel", lambda words, ids, pl, model: (ids % 7 + 1,))
    monkeypatch.setattr(wipeout, "scenario_wipeout_kernel", lambda words, ids, pl, model, sc: (ids,))
    monkeypatch.setattr(overhead, "overhead_kernel", lambda words, ids, pl, model, z, **kw: (ids,))
    monkeypatch.setattr(bench, "_timed", lambda fn, seconds: (1000.0, fn()))
    monkeypatch.setattr(bench, "bench_driver", lambda *a, **k: {"driver_trials_per_s": 1000.0})
    monkeypatch.setattr(bench, "roofline", lambda *a, **k: {})
    monkeypatch.setattr(bench, "numpy_wipeout", lambda pl, n, rng: np.full(n, 3.0))
    monkeypatch.setattr(bench, "simpy_wipeout", lambda pl, n, seed=0: np.full(n, 3.0))
    monkeypatch.setattr(bench, "numpy_depth_thresholds", lambda pl, n, rng: None)
    monkeypatch.setattr(bench, "bench_repair", lambda *a, **k: {})
    monkeypatch.setattr(bench, "bench_processes", lambda *a, **k: {})
    monkeypatch.setattr(bench, "bench_runs", lambda *a, **k: {})
    monkeypatch.setattr(bench, "bench_runs_600", lambda *a, **k: {})


@pytest.fixture
def light_plan(monkeypatch):
    """plan's optimiser and Monte Carlo runs replaced by instant fakes: only its stages stay."""
    from spare_jax import ttt
    from spare_jax.planner import plan as planmod

    def optimize(n, r_max, model, cfg, scenario, epochs, seed, progress):
        curves = {"spare": [{"redundancy": r, "ckpt_interval_min": 30.0, "ttt_hours": 900.0 + 40 * (r - 3) ** 2}
                            for r in range(1, r_max + 1)],
                  "rep": [{"redundancy": r, "ckpt_interval_min": 20.0, "ttt_hours": 1000.0 + 10 * r}
                          for r in range(1, r_max + 1) if n % r == 0],
                  "none": [{"redundancy": 1, "ckpt_interval_min": 20.0, "ttt_hours": 1010.0}]}
        schemes = {s: {**min(pts, key=lambda p: p["ttt_hours"]), "availability_pct": 70.0, "mean_uptime_min": 300.0,
                       "ttt_over_w": 1.5} for s, pts in curves.items()}
        for e in schemes.values():
            e["r_star"] = e.pop("redundancy")
        return {"schemes": schemes, "curves": curves, "method": "closed form"}

    monkeypatch.setattr(planmod, "_optimize", optimize)
    # the sensitivity rows call the library's optimiser with the library's values
    monkeypatch.setattr(ttt, "optimize_r_tau", lambda cluster, cfg, space, progress=False: optimize(
        cluster.groups, space.r_max, cluster.model, cfg, cluster.scenario, space.epochs, space.seed, progress))
    monkeypatch.setattr(planmod, "_monte_carlo",
                        lambda scheme, cluster, entry, cfg, gpus, sampling, notes: np.full(
                            sampling.count, float(entry["ttt_hours"])))


BENCH = ["bench", "-N", "60", "-r", "4", "--json"]
PLAN = ["plan", "--gpus", "8192", "--gpus-per-group", "1024", "--runs", "10", "--json"]


def test_bench_prints_its_stages_on_stderr(light_bench, capsys):
    code, out, err = _run(capsys, BENCH)
    assert code == 0, err
    stages = re.findall(r"^bench \[(\d+)/(\d+)\] (.+) \(at \d+ s\)$", err, re.M)
    assert [int(i) for i, _, _ in stages] == list(range(1, 13)) and {t for _, t, _ in stages} == {"12"}, err
    assert any("2 processes" in label for _, _, label in stages)
    assert any("wipe-out kernel, JAX" in label for _, _, label in stages)
    assert any("whole training runs" in label for _, _, label in stages)
    assert isinstance(json.loads(out), dict)  # stdout: one JSON object, nothing else


def test_bench_quiet_is_silent(light_bench, capsys):
    code, out, err = _run(capsys, BENCH + ["--quiet"])
    assert code == 0
    assert "bench [" not in err and err == ""
    assert isinstance(json.loads(out), dict)


@pytest.mark.slow
def test_plan_prints_its_stages_on_stderr(light_plan, capsys):
    code, out, err = _run(capsys, PLAN)
    assert code == 0, err
    stages = re.findall(r"^plan \[(\d+)/(\d+)\] (.+) \(at \d+ s\)$", err, re.M)
    labels = [label for _, _, label in stages]
    assert [int(i) for i, _, _ in stages] == list(range(1, len(stages) + 1))
    assert {t for _, t, _ in stages} == {str(len(stages))}
    assert labels[0].startswith("optimise r and tau per scheme")
    assert [lab.split(":")[0] for lab in labels[1:4]] == ["Monte Carlo 1/3", "Monte Carlo 2/3", "Monte Carlo 3/3"]
    sens = [lab for lab in labels if lab.startswith("sensitivity ")]
    assert sens and sens[0].startswith(f"sensitivity 1/{len(sens)}: ") and sens[-1].startswith(
        f"sensitivity {len(sens)}/{len(sens)}: ")
    data = json.loads(out)
    assert isinstance(data, dict) and "schemes" in data


def test_plan_quiet_is_silent(light_plan, capsys):
    code, out, err = _run(capsys, PLAN + ["--quiet"])
    assert code == 0
    assert "plan [" not in err and err == ""
    assert isinstance(json.loads(out), dict)


def test_a_bar_is_redrawn_while_nothing_updates_it_and_a_shared_bar_stays_open(capsys, monkeypatch):
    """A stage's bar shows its count and time left, redrawn every ``HEARTBEAT_S`` seconds while a kernel compiles
    or a long chunk runs; a bar lent to a driver call (``Progress.of``) takes its updates and outlives it."""
    import time

    from spare_jax.kernels.progress import Progress

    monkeypatch.setattr(Progress, "HEARTBEAT_S", 0.05)
    stage = Progress(16, "the limit", True, unit="run")
    lent = Progress.of(8, "runs", stage)
    lent.update(8)
    lent.close()  # the call's end: the stage's bar stays open
    assert stage.bar.n == 8 and not stage.bar.disable
    time.sleep(0.4)
    stage.set_total(24)
    stage.close()
    err = capsys.readouterr().err
    draws = [d for d in err.replace("\r", "\n").split("\n") if "the limit" in d and "8/16" in d]
    assert len(draws) >= 3, err  # redrawn with nothing new to count
    assert "8/24" in err and ("run/s" in err or "s/run" in err), err
    assert Progress.of(4, "quiet", False).bar is None
