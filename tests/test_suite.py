"""The experiment suite end to end at toy sizes: every stage writes its figure and data."""
import os

import pytest

from spare_jax import suite
from spare_jax.model.cluster import Sampling


@pytest.mark.slow
def test_every_stage_runs_and_writes_its_outputs(tmp_path):
    out = str(tmp_path)
    rows = suite.wipeout_validation(out, groups=(60,), rs=(2, 3), trials={60: 2000}, progress=False)
    assert len(rows) == 4 and all(abs(r["z_score"]) < 5 for r in rows)  # stacked and block, r = 2, 3
    rows = suite.overhead_vs_r(out, groups=(60,), rs=(1, 3), trials={60: 300}, progress=False)
    assert rows[1]["theory_overhead"] > 1
    suite.reorder_movement(out, groups=60, rs=(3,), traces=1, large=None, solver_compare_events=20)
    rows = suite.ttt_vs_r(out, groups=60, rs=(1, 3), ckpt_costs=(5.0,), sampling=Sampling(4))
    assert {r["scheme"] for r in rows} == {"spare", "rep", "none"}
    rows = suite.rstar_vs_n(out, groups=(60,), r_max=4, progress=False)
    assert 1 <= rows[0]["r_star_spare"] <= 4
    for name in ("wipeout_theory_vs_mc.png", "wipeout_validation.csv", "overhead_vs_r.png", "depth_at_wipeout.csv",
                 "reorder_movement.png", "reorder_solvers.csv", "ttt_vs_r.png", "rstar_vs_n.png"):
        assert os.path.getsize(os.path.join(out, name)) > 0, name
    text = suite.format_summary({"rows": [{"quantity": "x", "theory": 1.0, "mc": 1.01, "mc_ci95_low": 0.99,
                                           "mc_ci95_high": 1.03,
                                           "paper": "y"}], "elapsed_s": 1.0})
    assert "theory" in text and "paper" in text


@pytest.mark.slow
def test_scenarios_experiment_at_toy_size(tmp_path):
    from spare_jax import suite

    out = suite.scenarios(str(tmp_path), groups=40, rs=(2, 3), sampling=Sampling(400), job_fractions=(0.0, 0.3),
                          r_max=4)
    assert (tmp_path / "scenarios.png").stat().st_size > 0
    assert len(out["uptime"]) == 2 * 3 * 2 and len(out["job_wide"]) == 2
    contiguous = [x for x in out["uptime"] if x["ring"] == "contiguous" and x["job_mtbf_min"] is None]
    assert all(x["single_domain_wipeout_fraction"] == 1.0 for x in contiguous)  # domains of 5 >= r
    assert out["job_wide"][1]["spare_ttt_hours"] > out["job_wide"][0]["spare_ttt_hours"]
    # the figure's exact no-domain reference is kept in the CSV, so that scenarios.png redraws from it alone
    import csv

    rows = list(csv.DictReader(open(tmp_path / "scenarios_uptime.csv")))
    assert all(float(x["exact_uptime_no_domains_min"]) > 0 for x in rows)
    by_job = {x["job_mtbf_min"] != "": float(x["exact_uptime_no_domains_min"]) for x in rows if x["redundancy"] == "3"}
    assert by_job[True] < by_job[False]  # job-wide interruptions shorten the epoch


def test_run_defaults_to_the_quick_answer_in_results_and_full_writes_figures(monkeypatch, tmp_path, capsys):
    """``spare-jax run`` writes results/ (git-ignored); only ``--full`` writes figures/; the closing table
    names r per row and gives TTT in hours, availability in percent and tau*."""
    from spare_jax import cli

    calls = []

    def fake(out_dir, full=False, seed=0, progress=True):
        calls.append((out_dir, full))
        return {"full": full, "out_dir": out_dir,
                "setting": {"groups": 600, "gpus": 600_000, "gpus_per_group": 1000.0, "group_mtbf_min": 3000.0,
                            "cluster_mtbf_min": 5.0, "work_hours": 720.0, "ckpt_cost_min": 5.0, "restart_min": 60.0},
                "plan": [{"scheme": "SPARe+CKPT", "r_star": 6, "ckpt_interval_min": 118.9, "ttt_hours": 1766.0,
                          "mc_ttt_hours": 1763.0, "mc_ttt_ci95_low": 1759.0,
                          "mc_ttt_ci95_high": 1767.0, "availability_pct": 95.5,
                          "mc_availability_pct": 95.4, "ttt_vs_best_rep": 0.68}],
                "rows": [{"quantity": "E[T]", "redundancy": 8, "theory": 275.1, "mc": 274.9, "mc_ci95_low": 274.6,
                          "mc_ci95_high": 275.2, "paper": "-"}]}

    monkeypatch.setattr(suite.summary, "run_suite", fake)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["run", "--quiet"]) == 0
    assert cli.main(["run", "--quick", "--quiet"]) == 0
    assert cli.main(["run", "--full", "--quiet"]) == 0
    assert calls == [("results", False), ("results", False), ("figures", True)]
    out = capsys.readouterr().out
    assert "r*" in out and "tau* (min)" in out and "TTT (h)" in out and "95.5%" in out and "results/summary.json" in out
    assert cli.main(["run", "--full", "--quick", "--quiet"]) == 2


def test_results_dir_is_git_ignored():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, ".gitignore")) as fh:
        assert "results/" in fh.read().split()
