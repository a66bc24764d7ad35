"""The flags added with the spare pool, the job-wide scaling of the presets and elastic training, tried with bad
input as a user would (flags and ``--config``): one line on stderr naming the flag and its value, exit 2, nothing
on stdout; and a flag that would change nothing is refused, not ignored."""

from __future__ import annotations

import json

import pytest

from refusal import refused  # noqa: F401 (tests/refusal.py: one check for a refusal)
from spare_jax.cli import main

TTT = ["ttt", "-N", "16", "--runs", "4", "--work-hours", "12", "--ckpt-interval", "60", "--group-mtbf-min", "600",
       "--quiet"]
ELASTIC = TTT + ["--scheme", "elastic", "--repair-time", "30"]


@pytest.mark.parametrize("r", ["3", "1"])
def test_elastic_refuses_a_redundancy(r, tmp_path, capsys):
    """Every elastic group holds the whole model: -r was accepted and dropped (the JSON said redundancy 1 and the
    answer was the same for any r), as --scheme none already refuses it."""
    refused(ELASTIC + ["-r", r], ["-r/--redundancy " + r, "--scheme elastic"], capsys)
    path = tmp_path / "c.toml"
    path.write_text(f'scheme = "elastic"\nrepair-time = 30\nr = {r}\n')
    refused(TTT + ["--config", str(path)], ["-r/--redundancy " + r, "--scheme elastic"], capsys)


@pytest.mark.parametrize("scheme", ["spare", "rep"])
def test_elastic_data_with_another_scheme_names_the_value(scheme, tmp_path, capsys):
    refused(TTT + ["-r", "2", "--scheme", scheme, "--elastic-data", "shrink"],
            ["--elastic-data shrink", f"--scheme {scheme}"], capsys)
    path = tmp_path / "c.toml"
    path.write_text('elastic-data = "rebalance"\n')
    refused(TTT + ["-r", "2", "--scheme", scheme, "--config", str(path)],
            ["--elastic-data rebalance", f"--scheme {scheme}"], capsys)


@pytest.mark.parametrize("extra, words", [
    (["--scheme", "elastic"], ["--scheme elastic needs --repair-time"]),
    (["--scheme", "ELASTIC", "--repair-time", "30"], ["--scheme", "'ELASTIC'"]),
    (["--scheme", "elastic", "--repair-time", "30", "--elastic-data", "grow"], ["--elastic-data", "'grow'"]),
    (["--scheme", "elastic", "--repair-time", "30", "--elastic-data", ""], ["--elastic-data", "''"]),
    (["--scheme", "elastic", "--repair-time", "30", "--restart-depth", "2"], ["--restart-depth"]),
])
def test_elastic_bad_flags(extra, words, capsys):
    refused(TTT + extra, words, capsys)


@pytest.mark.parametrize("text, words", [
    ('scheme = "elastic"\n', ["--scheme elastic needs --repair-time"]),
    ('scheme = "elastic"\nrepair-time = 30\nelastic-data = "grow"\n', ["elastic-data", "'grow'"]),
    ('scheme = "elastic"\nrepair-time = 30\nelastic-data = 1\n', ["elastic-data must be a string"]),
    ('scheme = "elastic"\nrepair-time = 30\nelastic-data = ["shrink"]\n', ["elastic-data must be a string"]),
    ('scheme = ["elastic"]\n', ["scheme must be a string"]),
    ('scheme = "elastic"\nelastc-data = "shrink"\n', ["unknown setting 'elastc-data'"]),
])
def test_elastic_bad_config(text, words, tmp_path, capsys):
    path = tmp_path / "c.toml"
    path.write_text(text)
    refused(TTT + ["--config", str(path)], words, capsys)


def test_elastic_json_carries_the_data_policy(tmp_path, capsys):
    assert main(ELASTIC + ["--elastic-data", "shrink", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["scheme"], out["elastic_data"], out["repair_time_min"]) == ("elastic", "shrink", 30.0)
    path = tmp_path / "c.toml"
    path.write_text('[ttt]\nscheme = "elastic"\nrepair-time = 30\nelastic-data = "shrink"\n')
    assert main(TTT + ["--config", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["mc_ttt_hours"] == out["mc_ttt_hours"]


@pytest.mark.parametrize("command", ["wipeout", "overhead", "place", "optimize", "plan"])
def test_job_scaling_without_a_preset_names_the_value(command, capsys):
    refused([command, "--job-scaling", "per-job"], ["--job-scaling per-job", "drop --job-scaling"], capsys)


@pytest.mark.parametrize("preset", ["ft-hsdp-100k", "rsc1-16k", "rsc2-8k"])
def test_job_scaling_with_a_preset_without_job_wide_interruptions(preset, capsys):
    refused(TTT + ["--preset", preset, "--job-scaling", "per-gpu"], ["--job-scaling per-gpu", "drop"], capsys)


@pytest.mark.parametrize("command", ["presets", "reorder", "bench", "run"])
def test_preset_on_a_command_without_it_names_plan_too(command, capsys):
    """The list of the subcommands that take --preset left out plan, which takes it."""
    line = refused([command, "--preset", "llama3-16k"], ["--preset llama3-16k", f"not '{command}'"], capsys)
    assert "plan" in line and "ttt" in line and "wipeout" in line


@pytest.mark.parametrize("command", ["wipeout", "overhead", "place", "presets"])
def test_no_spares_or_elastic_where_they_do_not_apply(command, tmp_path, capsys):
    for flag, value in (("--spares", "2"), ("--hardware-repair", "600"), ("--scheme", "elastic"),
                        ("--elastic-data", "shrink")):
        refused([command, flag, value], [flag], capsys)
        path = tmp_path / "c.toml"
        path.write_text(f"{flag[2:]} = {value if value.isdigit() else repr(value)}\n")
        refused([command, "--config", str(path)], [f"unknown setting '{flag[2:]}'"], capsys)


def test_ttt_quantiles_beyond_the_histogram_are_not_made_up():
    """The last histogram bin holds every run beyond 2^8 W; a quantile there was printed as that bin's centre
    (~256 W, below the mean of the runs it stood for): it is None now."""
    from spare_jax.kernels.run import HIST_BINS, HIST_PER_OCTAVE, ttt_quantiles

    hist = [0] * HIST_BINS
    hist[HIST_PER_OCTAVE] = 6  # six runs at 2 W
    hist[-1] = 4  # four beyond 256 W
    q = ttt_quantiles({"ttt_hist": hist, "work_min": 60.0}, (0.05, 0.5, 0.6, 0.7, 0.99))
    assert 119.0 < q[0] < 121.0 and q[0] == q[1] == q[2]
    assert q[3] is None and q[4] is None


def test_pool_that_runs_dry_prints_no_capped_percentiles(capsys):
    """--spares 0 --hardware-repair 1e5: every run takes far more than 256 W; the percentiles were all the
    same capped 3,071 h (W = 12 h) beside a mean of ~8,700 h."""
    argv = ["ttt", "-N", "16", "-r", "3", "--runs", "4", "--work-hours", "12", "--ckpt-interval", "60",
            "--group-mtbf-min", "600", "--quiet", "--spares", "0", "--hardware-repair", "1e5", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mc_ttt_hours"] > 256 * 12 and out["spares"] == 0 and out["hardware_repair_min"] == 1e5
    assert all(out[f"mc_ttt_hours_p{q}"] is None for q in ("05", "50", "90", "95", "99"))
    assert 0.0 <= out["availability_pct"] < 5.0


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


def test_config_or_preset_given_twice_is_refused(tmp_path, capsys):
    """Only the last --config FILE (or --preset NAME) was read: the first one's settings (here --scheme elastic)
    were dropped without a word."""
    first, second = tmp_path / "a.toml", tmp_path / "b.toml"
    first.write_text('scheme = "elastic"\nrepair-time = 30\n')
    second.write_text("runs = 3\n")
    refused(TTT + ["--config", str(first), "--config=" + str(second)],
            ["--config given twice", str(first), str(second)], capsys)
    refused(TTT + ["--preset", "llama3-16k", "--pres", "rsc1-16k"],
            ["--preset given twice", "llama3-16k", "rsc1-16k"], capsys)
    refused(TTT + ["--preset", "llama3-16k", "--preset"], ["--preset needs a name"], capsys)
