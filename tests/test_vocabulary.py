"""The one vocabulary of the command line (docs/vocabulary.md): --config examples in --help that run as
written, availability_pct and ckpt_interval_min in the JSON, former flag names with one deprecation line,
readable text output, the failure-log warning, and no internal words in --help."""

import json
import re

import pytest

from spare_jax import cli

COMMANDS = ("run", "wipeout", "overhead", "ttt", "optimize", "place", "presets", "bench", "reorder", "plan")


def _help(capsys, *argv) -> str:
    with pytest.raises(SystemExit):
        cli.main([*argv, "--help"])
    return capsys.readouterr().out


def _run(capsys, argv):
    code = cli.main(argv)
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def _config_example(text: str) -> list:
    flat = " ".join(text.split())
    m = re.search(r"e\.g\. a file of the lines: (.*?) \(at the top level", flat)
    assert m, "no --config example in the help"
    return m.group(1).split(" | ")


@pytest.mark.parametrize("command", [pytest.param(c, marks=pytest.mark.slow) if c in ("overhead", "plan") else c
                                     for c in COMMANDS])
def test_config_example_of_each_help_runs_as_written(command, capsys, tmp_path, monkeypatch):
    lines = _config_example(_help(capsys, command))
    cfg = tmp_path / f"{command}.toml"
    cfg.write_text("\n".join(lines) + "\n")
    if command == "run":  # the suite takes minutes: the config is parsed and handed over, the work faked
        from spare_jax import suite

        seen = {}
        monkeypatch.setattr(suite.summary, "run_suite", lambda out, full=False, seed=0, progress=True:
                            seen.setdefault("summary", {"seed": seed}))
        monkeypatch.chdir(tmp_path)
    if command == "bench":
        import spare_jax.suite.bench

        monkeypatch.setattr(spare_jax.suite.bench, "run_bench", lambda groups, r, **kw: {"groups": groups,
                                                                                    "redundancy": r})
    code, out, err = _run(capsys, [command, "--config", str(cfg), "--json", "--quiet"])
    assert code == 0, err
    assert err == ""
    json.loads(out)


@pytest.mark.slow
def test_ttt_and_plan_carry_availability_pct_and_no_tau_star(capsys):
    code, out, _ = _run(capsys, ["ttt", "-N", "30", "-r", "3", "--runs", "8", "--work-hours", "50", "--json",
                                 "--quiet"])
    assert code == 0
    ttt = json.loads(out)
    assert 0 < ttt["availability_pct"] <= 100 and "availability" not in ttt
    assert ttt["mc_ttt_ci95_low"] < ttt["mc_ttt_hours"] < ttt["mc_ttt_ci95_high"]
    assert "ckpt_interval_min" in ttt and ttt["runs"] == 8
    code, out, _ = _run(capsys, ["plan", "--gpus", "8192", "--gpus-per-group", "1024", "--runs", "10",
                                 "--no-sensitivity", "--json", "--quiet"])
    assert code == 0
    plan = json.loads(out)
    assert all(0 < e["availability_pct"] <= 100 for e in plan["schemes"].values())
    code, out, _ = _run(capsys, ["optimize", "-N", "60", "--json", "--quiet"])
    opt = json.loads(out)
    assert all("availability_pct" in e and "availability" not in e for e in opt["schemes"].values())
    for text in (json.dumps(ttt), json.dumps(plan), json.dumps(opt)):
        assert "tau_star" not in text and '"availability"' not in text and "ci95_hours" not in text


@pytest.mark.parametrize("old, new, base", [
    pytest.param(["--trials", "300"], ["--epochs", "300"], ["overhead", "-N", "20", "-r", "2"], marks=pytest.mark.slow),
    (["--trials", "6"], ["--runs", "6"], ["ttt", "-N", "20", "-r", "2", "--work-hours", "20"]),
    pytest.param(["--group-mtbf", "2000"], ["--group-mtbf-min", "2000"], ["wipeout", "-N", "20", "-r", "2", "--trials", "300"],
                 marks=pytest.mark.slow),
])
def test_former_flag_name_works_with_one_note(old, new, base, capsys):
    code, out_new, err_new = _run(capsys, [*base, *new, "--json", "--quiet"])
    assert code == 0 and err_new == ""
    code, out_old, err_old = _run(capsys, [*base, *old, "--json", "--quiet"])
    assert code == 0
    assert err_old.count("\n") == 1 and err_old.startswith("spare-jax: note: " + old[0] + " is deprecated")
    assert new[0] in err_old
    strip = lambda d: {k: v for k, v in d.items() if not k.startswith("elapsed") and not k.endswith("_per_s")}  # noqa
    assert strip(json.loads(out_old)) == strip(json.loads(out_new))


@pytest.mark.slow
def test_former_name_in_a_config_file_gets_the_note(capsys, tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("N = 20\nr = 2\ntrials = 300\n")
    code, out, err = _run(capsys, ["overhead", "--config", str(cfg), "--json", "--quiet"])
    assert code == 0 and json.loads(out)["epochs"] == 300
    assert err.count("\n") == 1 and "deprecated for overhead" in err and "epochs" in err


@pytest.mark.slow
def test_optimize_text_one_block_per_scheme(capsys):
    code, out, _ = _run(capsys, ["optimize", "-N", "60", "--quiet"])
    assert code == 0
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 160
    for scheme in ("spare", "rep", "none"):
        assert sum(1 for line in lines if line.strip() == f"schemes {scheme}:") == 1


@pytest.mark.slow
def test_wipeout_text_rows_carry_units(capsys):
    code, out, _ = _run(capsys, ["overhead", "-N", "20", "-r", "2", "--epochs", "200", "--quiet"])
    assert code == 0
    assert "mean_depth_thresholds" not in out
    uptime = [line for line in out.splitlines() if "elapsed_s" in line]
    assert uptime and uptime[0].rstrip().endswith(" s")
    code, out, _ = _run(capsys, ["wipeout", "-N", "20", "-r", "2", "--trials", "200", "--quiet"])
    row = next(line for line in out.splitlines() if line.strip().startswith("mc_epoch_uptime_min"))
    assert "min (= " in row and row.rstrip().endswith(" h)")


@pytest.mark.slow
def test_failure_log_without_directives_warns(capsys, tmp_path):
    log = tmp_path / "log.csv"
    log.write_text("node,time_hours\nn1,100\nn2,250.5\nn3,400\n")
    argv = ["plan", "--gpus", "8192", "--gpus-per-group", "1024", "--failure-log", str(log), "--runs", "4",
            "--no-sensitivity", "--json", "--quiet"]
    code, out, err = _run(capsys, argv)
    assert code == 0, err
    json.loads(out)
    assert err.count("\n") == 1 and "warning" in err
    assert "node count" in err and "window" in err
    log.write_text("# nodes = 64\n# window_hours = 500\nnode,time_hours\nn1,100\nn2,250.5\nn3,400\n")
    code, out, err = _run(capsys, argv)
    assert code == 0 and err == ""


@pytest.mark.parametrize("command", (None,) + COMMANDS)
def test_no_internal_words_in_help(command, capsys):
    text = _help(capsys, *([] if command is None else [command]))
    for word in ("SPEC", "§", "issue", "built by a helper", "(in progress)"):
        assert word not in text, (command, word)


def test_plan_help_documents_the_log_and_names_only_its_flags(capsys):
    text = _help(capsys, "plan")
    assert "# nodes = M" in text and "# window_hours = H" in text and "node,time_hours" in text
    flat = " ".join(text.split())
    start = flat.index("--group-mtbf-file GROUP_MTBF_FILE")
    part = flat[start:start + 400]
    for foreign in ("--mtbf", "--group-mtbf ", "--reference-mtbf-min", "--group-mtbf-min"):
        assert foreign not in part


@pytest.mark.slow
def test_plan_text_names_currency_and_model(capsys):
    code, out, _ = _run(capsys, ["plan", "--gpus", "8192", "--gpus-per-group", "1024", "--runs", "4",
                                 "--no-sensitivity", "--quiet", "--currency", "USD", "--microbatches", "2"])
    assert code == 0
    assert "USD per GPU-hour" in out and "cost (USD)" in out and "2 micro-batches per shard" in out
    code, out, _ = _run(capsys, ["plan", "--gpus", "8192", "--gpus-per-group", "1024", "--runs", "4",
                                 "--no-sensitivity", "--quiet"])
    assert "2 per GPU-hour" in out and "model: the paper's" in out
