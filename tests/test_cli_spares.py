"""The finite spare pool at the command line and in the model: ``--spares K --hardware-repair H`` on ttt,
optimize and plan (flags and ``--config``), refused with one line where the input is bad or the path would
ignore it, and answered by whole training runs where it is given."""

from __future__ import annotations

import json
import math

import pytest

from refusal import refused  # noqa: F401 (tests/refusal.py: one check for a refusal)
from spare_jax.cli import main
from spare_jax.model.cluster import Cluster
from spare_jax.model.repair import Repair

TTT = ["ttt", "-N", "16", "-r", "3", "--runs", "8", "--work-hours", "10", "--ckpt-interval", "60",
       "--group-mtbf-min", "600", "--quiet"]
OPT = ["optimize", "-N", "16", "--work-hours", "10", "--group-mtbf-min", "600", "--quiet"]
PLAN = ["plan", "--gpus", "16384", "--gpus-per-group", "1024", "--runs", "4", "--no-sensitivity", "--quiet"]


BAD_VALUES = [
    (["--spares", "-1", "--hardware-repair", "600"], "--spares"),
    (["--spares", "2.5", "--hardware-repair", "600"], "--spares"),
    (["--spares", "abc", "--hardware-repair", "600"], "--spares"),
    (["--spares", "inf", "--hardware-repair", "600"], "--spares"),
    (["--spares", "", "--hardware-repair", "600"], "--spares"),
    (["--spares", "300000", "--hardware-repair", "600"], "--spares"),
    (["--spares", "2", "--hardware-repair", "0"], "--hardware-repair"),
    (["--spares", "2", "--hardware-repair", "-5"], "--hardware-repair"),
    (["--spares", "2", "--hardware-repair", "inf"], "--hardware-repair"),
    (["--spares", "2", "--hardware-repair", "nan"], "--hardware-repair"),
    (["--spares", "2", "--hardware-repair", "soon"], "--hardware-repair"),
    (["--spares", "2", "--hardware-repair", "1e300"], "--hardware-repair"),
    (["--hardware-repair", "600"], "--hardware-repair goes with --spares"),
    (["--hardware-repair", "600", "--repair-time", "30"], "--hardware-repair goes with --spares"),
    (["--spares", "2"], "--spares needs --hardware-repair"),
    (["--spares", "2", "--repair-time", "30"], "--spares needs --hardware-repair"),
    (["--spares", "2", "--hardware-repair", "600", "--repair-law", "exp"], "--repair-law"),
]


@pytest.mark.parametrize("base", [TTT, OPT, PLAN], ids=["ttt", "optimize", "plan"])
@pytest.mark.parametrize("extra, word", BAD_VALUES)
def test_bad_spare_flags_are_refused_in_one_line(base, extra, word, capsys):
    refused(base + extra, word, capsys)


BAD_CONFIG = [
    ("spares = -1\nhardware-repair = 600", "spares"),
    ("spares = 2.5\nhardware-repair = 600", "spares"),
    ("spares = '2'\nhardware-repair = 600", "spares"),
    ("spares = true\nhardware-repair = 600", "spares"),
    ("spares = inf\nhardware-repair = 600", "spares"),
    ("spares = 2\nhardware-repair = 0", "hardware"),
    ("spares = 2\nhardware-repair = -600", "hardware"),
    ("spares = 2\nhardware-repair = inf", "hardware"),
    ("spares = 2\nhardware-repair = nan", "hardware"),
    ("spares = 2\nhardware_repair = 'later'", "hardware"),
    ("hardware-repair = 600", "--hardware-repair goes with --spares"),
    ("spares = 2", "--spares needs --hardware-repair"),
    ("[ttt]\nspares = 2\nrepair-time = 30", "--spares needs --hardware-repair"),
]


@pytest.mark.parametrize("text, word", BAD_CONFIG)
def test_bad_spare_settings_in_config_are_refused(text, word, tmp_path, capsys):
    path = tmp_path / "c.toml"
    path.write_text(text + "\n")
    refused(TTT + ["--config", str(path)], word, capsys)


@pytest.mark.parametrize("command", ["wipeout", "overhead"])
def test_commands_on_epochs_take_no_spares(command, tmp_path, capsys):
    """wipeout and overhead simulate epochs with rejoins, which have no spare pool: no such flag or key."""
    refused([command, "-N", "16", "-r", "2", "--repair-time", "30", "--spares", "2", "--hardware-repair", "60",
             "--quiet"], "--spares", capsys)
    path = tmp_path / "c.toml"
    path.write_text("spares = 2\nhardware-repair = 60\n")
    refused([command, "-N", "16", "-r", "2", "--repair-time", "30", "--config", str(path), "--quiet"], "spares",
            capsys)


def test_library_epochs_refuse_a_finite_pool():
    from spare_jax.measure import overhead, wipeout

    cluster = Cluster(16, repair=Repair(30.0, spares=2, hardware_repair_min=60.0))
    for fn in (wipeout, overhead):
        with pytest.raises(ValueError, match="whole training runs only"):
            fn(cluster, 2)


def test_scheme_none_with_repair_and_no_pool_is_refused(capsys):
    """Every failure of ``none`` is a wipe-out whose restart replaces the group: a repair time is never used
    (it was accepted and ignored before); with a finite pool the restart waits for spares, so it runs."""
    base = ["ttt", "-N", "16", "--runs", "4", "--work-hours", "10", "--quiet", "--scheme", "none"]
    line = refused(base + ["--repair-time", "60", "--repair-law", "exp"], "--scheme none", capsys)
    assert "--repair-time" in line and "--spares" in line


def test_optimize_refuses_epochs_with_spares(capsys):
    refused(OPT + ["--spares", "2", "--hardware-repair", "600", "--epochs", "1000"], "--epochs", capsys)


def test_repair_model_validation():
    ok = Repair(30.0, "exp", spares=2.0, hardware_repair_min=600)
    assert ok.spares == 2 and isinstance(ok.spares, int) and ok.hardware_repair_min == 600.0
    assert ok.describe() == {"repair_time_min": 30.0, "repair_law": "exp", "spares": 2,
                             "hardware_repair_min": 600.0}
    pool_only = Repair(None, spares=0, hardware_repair_min=60.0)
    assert pool_only.describe() == {"repair_time_min": None, "spares": 0, "hardware_repair_min": 60.0}
    for kw, word in [(dict(spares=-1, hardware_repair_min=60.0), "--spares"),
                     (dict(spares=True, hardware_repair_min=60.0), "--spares"),
                     (dict(spares=1.5, hardware_repair_min=60.0), "--spares"),
                     (dict(spares=2), "--spares needs --hardware-repair"),
                     (dict(hardware_repair_min=60.0), "--hardware-repair goes with --spares"),
                     (dict(spares=2, hardware_repair_min=0.0), "--hardware-repair"),
                     (dict(spares=2, hardware_repair_min=math.inf), "--hardware-repair"),
                     (dict(spares=2, hardware_repair_min=math.nan), "--hardware-repair"),
                     (dict(spares=2, hardware_repair_min="soon"), "--hardware-repair")]:
        with pytest.raises(ValueError, match=word):
            Repair(30.0, **kw)
    with pytest.raises(ValueError, match="repair time"):
        Repair(None)


def test_ttt_with_spares_answers_by_whole_runs(tmp_path, capsys):
    """Flags and --config give the same pool; the answer is whole training runs with the pool echoed and the
    mean stall (restarts waiting for spares beyond R) reported; without repair the pool alone runs too."""
    path = tmp_path / "c.toml"
    path.write_text("[ttt]\nspares = 2\nhardware-repair = 600\nrepair-time = 60\n")
    assert main(TTT + ["--config", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "whole training runs, event by event"
    assert out["spares"] == 2 and out["hardware_repair_min"] == 600.0 and out["repair_time_min"] == 60.0
    assert out["mc_stall_hours_mean"] > 0 and out["theory_slowdown"] is None
    assert main(TTT + ["--spares", "2", "--hardware-repair", "600", "--repair-time", "60", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["mc_ttt_hours"] == out["mc_ttt_hours"]
    argv = ["ttt", "-N", "16", "--runs", "4", "--work-hours", "10", "--ckpt-interval", "60", "--group-mtbf-min",
            "2000", "--quiet", "--scheme", "none", "--spares", "1", "--hardware-repair", "600", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["repair_time_min"] is None and out["spares"] == 1 and out["mc_stall_hours_mean"] > 0


def test_optimize_and_plan_screen_with_whole_runs_under_a_pool(monkeypatch, capsys):
    """With --spares, optimize and plan take the joint search on whole training runs (the closed form and the
    epoch pools have no spare pool); the search is replaced here by a stub that records the pool it was given."""
    import spare_jax.ttt.search as search

    seen = []

    def joint(cluster, training, space, budget, seed=0, ages="kept", stages=None):
        seen.append((cluster.repair, space.schemes, budget.final_runs))
        rep = {"redundancy": 2, "microbatches": 1, "restart_depth": None, "repair_time_min": None,
               "ckpt_interval_min": 60.0, "mc_ttt_hours": 12.0, "mc_ttt_stderr_hours": 0.1, "runs": 4,
               "mc_ttt_p05_hours": 11.0, "mc_ttt_p95_hours": 13.0, "mc_slowdown": 1.0, "mc_slowdown_stderr": 0.0,
               "theory_slowdown": None, "availability_pct": 90.0, "restarts_mean": 1.0, "elastic_data": "rebalance"}
        out = {s: dict(rep, redundancy=1 if s in ("none", "elastic") else 2) for s in space.schemes}
        return {"schemes": out, "chosen": space.schemes[0], "curves": {s: [] for s in space.schemes},
                "search": {"stub": True}}

    monkeypatch.setattr(search, "joint_search", joint)
    assert main(OPT + ["--spares", "3", "--hardware-repair", "900", "--repair-time", "30", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["search"] == {"stub": True}
    assert (seen[-1][0].spares, seen[-1][0].hardware_repair_min, seen[-1][0].repair_time_min) == (3, 900.0, 30.0)
    assert main(OPT + ["--spares", "0", "--hardware-repair", "900", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["search"] == {"stub": True}
    assert (seen[-1][0].spares, seen[-1][0].repair_time_min) == (0, None)

    assert main(PLAN + ["--spares", "4", "--hardware-repair", "600", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # checkpointing alone's restarts wait for spares too: it joins the search (no closed form has a pool)
    assert seen[-1][0].spares == 4 and seen[-1][1] == ("spare", "rep", "none") and seen[-1][2] == 4
    assert out["inputs"]["spares"] == 4 and out["inputs"]["hardware_repair_min"] == 600.0
    assert out["inputs"]["search"] == {"stub": True}
