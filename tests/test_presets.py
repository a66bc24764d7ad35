"""Presets: their settings follow from the quoted sources, and the command line applies them as defaults."""

import json

import pytest

from spare_jax.cli import main
from spare_jax.model.presets import LLAMA3, PRESETS


def _run(args, capsys):
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_llama3_preset_follows_from_the_published_numbers():
    p = PRESETS["llama3-16k"]
    minutes = 54 * 24 * 60
    total_rate = 419 / minutes  # interruptions per minute on 16,384 GPUs
    assert p.derived["gpu_mtbf_hours (all interruptions)"] == pytest.approx(16_384 * minutes / 419 / 60)
    assert 45_000 < p.derived["gpu_mtbf_hours (all interruptions)"] < 55_000  # "about 50k GPU-hours per failure"
    s = p.settings
    assert s["groups"] * s["gpus_per_group"] == LLAMA3["gpus"] and s["groups"] == LLAMA3["data_parallel_groups"]
    group_rate = 1 / s["mtbf"]  # system MTBF of group failures at reference_gpus = the cluster
    job_rate = 1 / s["job_mtbf"]
    domain_rate = sum(-(-s["groups"] // d["size"]) / d["mtbf"] for d in p.domains)
    assert group_rate + job_rate + domain_rate == pytest.approx(total_rate)  # every interruption counted once
    assert domain_rate / total_rate == pytest.approx(0.084) and job_rate / total_rate == pytest.approx(0.219)
    assert all(p.sources) and all(p.assumptions)


def test_presets_scale_the_per_gpu_rate():
    a, b = PRESETS["llama3-16k"], PRESETS["cluster-100k"]
    assert a.derived["gpu_mtbf_hours (all interruptions)"] == b.derived["gpu_mtbf_hours (all interruptions)"]
    ratio = b.settings["reference_gpus"] / a.settings["reference_gpus"]
    assert a.derived["cluster_mtbf_min (all interruptions)"] / b.derived["cluster_mtbf_min (all interruptions)"] \
        == pytest.approx(ratio)


def test_cli_preset_defaults_and_what_wins(tmp_path, capsys):
    base = ["wipeout", "-r", "2", "--trials", "500", "--json", "--quiet"]
    code, out, err = _run(base + ["--preset", "llama3-16k"], capsys)
    assert code == 0, err
    res = json.loads(out)
    assert res["preset"] == "llama3-16k" and res["groups"] == 128
    assert res["scenario"]["domains"][0]["size"] == 8
    assert res["scenario"]["job_mtbf_min"] == pytest.approx(PRESETS["llama3-16k"].settings["job_mtbf"])
    # a flag on the line wins, and --job-fraction replaces the preset's job-wide rate without a conflict
    code, out, err = _run(base + ["--preset", "llama3-16k", "-N", "64", "--job-fraction", "0.1"], capsys)
    assert code == 0, err
    res = json.loads(out)
    assert res["groups"] == 64 and res["scenario"]["job_fraction"] == 0.1 and "job_mtbf_min" not in res["scenario"]
    # a config file wins over the preset
    cfg = tmp_path / "c.toml"
    cfg.write_text("groups = 32\n")
    code, out, err = _run(base + ["--preset=llama3-16k", "--config", str(cfg)], capsys)
    assert code == 0, err
    assert json.loads(out)["groups"] == 32
    # the paper preset is the defaults
    code, out, _ = _run(base + ["--preset", "paper-600k"], capsys)
    code2, out2, _ = _run(base, capsys)
    a, b = json.loads(out), json.loads(out2)
    assert a.pop("preset") == "paper-600k" and a["mc_mean"] == b["mc_mean"]


@pytest.mark.parametrize("args,needle", [
    (["wipeout", "--preset", "nope"], "--preset"),
    (["wipeout", "--preset"], "--preset"),
    (["bench", "--preset", "llama3-16k"], "--preset"),
])
def test_cli_bad_preset(args, needle, capsys):
    code, out, err = _run(args, capsys)
    assert code == 2 and out == "" and needle in err and len(err.strip().splitlines()) == 1


def test_cli_presets_lists_sources(capsys):
    code, out, _ = _run(["presets", "--json"], capsys)
    assert code == 0 and set(json.loads(out)) == set(PRESETS)
    code, out, _ = _run(["presets"], capsys)
    assert code == 0 and "source: Llama 3" in out and "assumption:" in out
