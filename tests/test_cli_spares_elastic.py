"""What ttt, optimize and plan answer with a finite spare pool (``--spares K --hardware-repair H``: whole
training runs) and with elastic training (``--scheme elastic``): flags and ``--config`` give the same answer,
the pool and the data policy are echoed, and percentiles beyond the runs' histogram are not made up. Their
bad input: tests/test_cli_refusals_ttt_optimize.py, tests/test_cli_refusals_plan.py and
tests/test_cli_refusals_config_files.py."""

from __future__ import annotations

import json

import pytest

from spare_jax.cli import main

TTT = ["ttt", "-N", "16", "-r", "3", "--runs", "8", "--work-hours", "10", "--ckpt-interval", "60",
       "--group-mtbf-min", "600", "--quiet"]
OPT = ["optimize", "-N", "16", "--work-hours", "10", "--group-mtbf-min", "600", "--quiet"]
PLAN = ["plan", "--gpus", "16384", "--gpus-per-group", "1024", "--runs", "4", "--no-sensitivity", "--quiet"]
# elastic: no -r (every group holds the whole model)
TTT1 = ["ttt", "-N", "16", "--runs", "4", "--work-hours", "12", "--ckpt-interval", "60", "--group-mtbf-min", "600",
        "--quiet"]
ELASTIC = TTT1 + ["--scheme", "elastic", "--repair-time", "30"]


@pytest.mark.slow
def test_ttt_with_spares_answers_by_whole_runs(tmp_path, capsys):
    """Flags and --config give the same pool; the answer is whole training runs with the pool echoed and the
    mean stall (restarts waiting for spares beyond R) reported; without repair the pool alone runs too."""
    path = tmp_path / "c.toml"
    path.write_text("[ttt]\nspares = 2\nhardware-repair = 600\nrepair-time = 60\n")
    assert main(TTT + ["--config", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method_detail"] == "whole training runs, event by event" and out["method"] == "whole_runs"
    assert out["spares"] == 2 and out["hardware_repair_min"] == 600.0 and out["repair_time_min"] == 60.0
    assert out["spare_wait_hours"] > 0 and out["theory_slowdown"] is None
    assert main(TTT + ["--spares", "2", "--hardware-repair", "600", "--repair-time", "60", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["mc_ttt_hours"] == out["mc_ttt_hours"]
    argv = ["ttt", "-N", "16", "--runs", "4", "--work-hours", "10", "--ckpt-interval", "60", "--group-mtbf-min",
            "2000", "--quiet", "--scheme", "none", "--spares", "1", "--hardware-repair", "600", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["repair_time_min"] is None and out["spares"] == 1 and out["spare_wait_hours"] > 0


@pytest.mark.slow
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
               "theory_slowdown": None, "availability_pct": 90.0, "restarts_mean": 1.0, "elastic_data": "rebalance",
               "group_failures_mean": 2.0, "wipeouts_mean": 1.0}
        out = {s: dict(rep, scheme=s, redundancy=1 if s in ("none", "elastic") else 2) for s in space.schemes}
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


@pytest.mark.slow
def test_elastic_json_carries_the_data_policy(tmp_path, capsys):
    assert main(ELASTIC + ["--elastic-data", "shrink", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["scheme"], out["elastic_data"], out["repair_time_min"]) == ("elastic", "shrink", 30.0)
    path = tmp_path / "c.toml"
    path.write_text('[ttt]\nscheme = "elastic"\nrepair-time = 30\nelastic-data = "shrink"\n')
    assert main(TTT1 + ["--config", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["mc_ttt_hours"] == out["mc_ttt_hours"]


def test_ttt_quantiles_beyond_the_histogram_are_not_made_up():
    """The last histogram bin holds every run beyond 2^8 W; a quantile there was printed as that bin's centre
    (~256 W, below the mean of the runs it stood for): it is None now."""
    from spare_jax.kernels.run_driver import HIST_BINS, HIST_PER_OCTAVE, ttt_quantiles

    hist = [0] * HIST_BINS
    hist[HIST_PER_OCTAVE] = 6  # six runs at 2 W
    hist[-1] = 4  # four beyond 256 W
    q = ttt_quantiles({"ttt_hist": hist, "work_min": 60.0}, (0.05, 0.5, 0.6, 0.7, 0.99))
    assert 119.0 < q[0] < 121.0 and q[0] == q[1] == q[2]
    assert q[3] is None and q[4] is None


@pytest.mark.slow
def test_pool_that_runs_dry_prints_no_capped_percentiles(capsys):
    """--spares 0 --hardware-repair 1e5: every run takes far more than 256 W; the percentiles were all the
    same capped 3,071 h (W = 12 h) beside a mean of ~8,700 h."""
    argv = ["ttt", "-N", "16", "-r", "3", "--runs", "4", "--work-hours", "12", "--ckpt-interval", "60",
            "--group-mtbf-min", "600", "--quiet", "--spares", "0", "--hardware-repair", "1e5", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mc_ttt_hours"] > 256 * 12 and out["spares"] == 0 and out["hardware_repair_min"] == 1e5
    assert all(out[f"mc_ttt_p{q}_hours"] is None for q in ("05", "50", "90", "95", "99"))
    assert 0.0 <= out["availability_pct"] < 5.0


@pytest.mark.slow
def test_availability_is_never_negative_at_the_largest_hardware_repair(capsys):
    """At --hardware-repair 1e12 the float32 run sums round the work away and availability came out -6e-9 %."""
    argv = ["ttt", "-N", "16", "-r", "3", "--runs", "4", "--work-hours", "12", "--ckpt-interval", "60",
            "--group-mtbf-min", "600", "--quiet", "--spares", "2", "--hardware-repair", "1e12", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["availability_pct"] >= 0.0 and out["mc_ttt_p50_hours"] is None


def test_plan_tables_show_an_unresolved_p95():
    from spare_jax.planner.plan import PlanResult, format_table
    from spare_jax.planner.report import render_html

    res = PlanResult({"gpus": 8, "gpus_per_group": 4, "groups": 2, "work_hours": 1.0, "method": "x",
                      "deadline_hours": None, "restart_min": 1.0, "ckpt_cost_min": 1.0, "gpu_hour_price": 2.0,
                      "gpu_mtbf_hours": 5e4, "gpu_mtbf_from": "x", "cluster_mtbf_min": 3000.0},
                     {"spare": {"r_star": 1, "ckpt_interval_min": 1.0, "ttt_hours": 2.0, "mc_ttt_p05_hours": 1.5,
                                "mc_ttt_p95_hours": None, "p_over_deadline": None, "availability_pct": 50.0,
                                "failures_endured": 0.0, "gpu_hours": 16.0, "cost": 32.0, "mc_runs": 0}},
                     [], None, {"spare": [{"redundancy": 1, "ckpt_interval_min": 1.0, "ttt_hours": 2.0}]},
                     {"spare": None}, [])
    assert "2 – ?" in render_html(res)
    assert "2-?" in format_table(res)
