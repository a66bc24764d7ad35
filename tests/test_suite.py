"""The experiment suite end to end at toy sizes: every stage writes its figure and data."""
import os

from spare_jax import suite


def test_every_stage_runs_and_writes_its_outputs(tmp_path):
    out = str(tmp_path)
    rows = suite.wipeout_validation(out, groups=(60,), rs=(2, 3), trials={60: 2000}, progress=False)
    assert len(rows) == 4 and all(abs(r["z_score"]) < 5 for r in rows)  # stacked and block, r = 2, 3
    rows = suite.overhead_vs_r(out, groups=(60,), rs=(1, 3), trials={60: 300}, progress=False)
    assert rows[1]["theory_overhead"] > 1
    suite.reorder_movement(out, groups=60, rs=(3,), traces=1, large=None, solver_compare_events=20)
    rows = suite.ttt_vs_r(out, groups=60, rs=(1, 3), ckpt_costs=(5.0,), runs=4, progress=False)
    assert {r["scheme"] for r in rows} == {"spare", "rep", "none"}
    rows = suite.rstar_vs_n(out, groups=(60,), r_max=4, progress=False)
    assert 1 <= rows[0]["r_star_spare"] <= 4
    for name in ("wipeout_theory_vs_mc.png", "wipeout_validation.csv", "overhead_vs_r.png", "depth_at_wipeout.csv",
                 "reorder_movement.png", "reorder_solvers.csv", "ttt_vs_r.png", "rstar_vs_n.png"):
        assert os.path.getsize(os.path.join(out, name)) > 0, name
    text = suite.format_summary({"rows": [{"quantity": "x", "theory": 1.0, "mc": 1.01, "mc_ci95": 0.02,
                                           "paper": "y"}], "elapsed_s": 1.0})
    assert "theory" in text and "paper" in text


def test_scenarios_experiment_at_toy_size(tmp_path):
    from spare_jax import suite

    out = suite.scenarios(str(tmp_path), groups=40, rs=(2, 3), trials=400, job_fractions=(0.0, 0.3), r_max=4,
                          progress=False)
    assert (tmp_path / "scenarios.png").stat().st_size > 0
    assert len(out["uptime"]) == 2 * 3 * 2 and len(out["job_wide"]) == 2
    contiguous = [x for x in out["uptime"] if x["ring"] == "contiguous" and x["job_mtbf_min"] is None]
    assert all(x["single_domain_wipeout_fraction"] == 1.0 for x in contiguous)  # domains of 5 >= r
    assert out["job_wide"][1]["spare_ttt_hours"] > out["job_wide"][0]["spare_ttt_hours"]
