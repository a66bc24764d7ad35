"""Every command's --json speaks the vocabulary of docs/vocabulary.md: each key it prints is listed there, no
forbidden spelling appears, counts are integers and lists are lists. The walk reads the recorded outputs of
tests/golden_cli.py (one case per mode that adds keys: repair, spares, elastic, a failure log, a scenario,
micro-batches, curves, sensitivity), which tests/test_golden_cli.py keeps equal to what the commands print,
the summary that `spare-jax run --full` wrote (figures/summary.json) and the plans of
experiments/best_600k.py (figures/best_600k.json, the joint search with repair)."""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_cli import CASES  # noqa: E402
from vocabulary_keys import ROOT, problems, read_vocabulary, recorded  # noqa: E402

VOCAB = read_vocabulary()
RECORDED = recorded()


@pytest.mark.parametrize("case", sorted(CASES))
def test_recorded_json_speaks_the_vocabulary(case):
    command, doc = RECORDED[case]
    assert problems(doc, command, VOCAB) == []


def test_run_summary_speaks_the_vocabulary():
    with open(os.path.join(ROOT, "figures", "summary.json")) as fh:
        assert problems(json.load(fh), "run", VOCAB) == []


def test_recorded_plans_of_the_joint_search_speak_the_vocabulary():
    """figures/best_600k.json holds two plans' --json (the paper's model, and with repair: the joint search on
    whole training runs, too slow for a recorded case)."""
    with open(os.path.join(ROOT, "figures", "best_600k.json")) as fh:
        record = json.load(fh)
    assert "search" in record["with_repair"]["inputs"]
    for part in ("paper_model", "with_repair"):
        assert problems(record[part], "plan", VOCAB) == []


def test_every_mode_that_adds_keys_has_a_recorded_case():
    flags = {case: " ".join(argv) for case, argv in CASES.items()}
    commands = {argv[0] for argv in CASES.values()}
    assert {"wipeout", "overhead", "reorder", "ttt", "optimize", "place", "presets", "plan"} <= commands
    for flag in ("--repair-time", "--spares", "--scheme elastic", "--failure-log", "--domain-size", "--microbatches",
                 "--curves", "--job-mtbf-min", "--restart-depth"):
        assert any(flag in text for text in flags.values()), flag
    assert any(a[0] == "plan" and "--no-sensitivity" not in a for a in CASES.values())  # the sensitivity rows


def test_the_walk_catches_an_unlisted_key_a_forbidden_spelling_a_float_count_and_a_sentence_list():
    doc = {"groups": 600.0, "r": 8, "brand_new_key": 1, "r_searched": "1, 2, 3", "trials": 5,
           "schemes": {"spare": {"ttt_p05_hours": 1.0, "r_star": 4}}, "depth_at_wipeout": {"2": 3}}
    found = "\n".join(problems(doc, "ttt", VOCAB))
    assert "'groups' is a count, got 600.0" in found
    assert "'r' is a forbidden spelling" in found
    assert "'brand_new_key' is not in docs/vocabulary.md" in found
    assert "'r_searched' is a list" in found
    assert "'trials' is a forbidden spelling" in found  # ttt counts runs
    assert "schemes.spare.ttt_p05_hours: 'ttt_p05_hours' is a forbidden spelling" in found
    assert problems({"trials": 5}, "wipeout", VOCAB) == []  # wipe-out trials are trials
    assert "depth_at_wipeout.2" not in found  # a depth is data, not a name


def test_the_canonical_names_of_the_vocabulary():
    for key in ("groups", "gpus", "redundancy", "r_star", "r_searched", "mc_ttt_ci95_low", "mc_ttt_ci95_high",
                "mc_ttt_p05_hours", "mc_ttt_p95_hours", "notes", "search_epochs", "epochs"):
        assert key in VOCAB["keys"], key
    for key in ("r", "ttt_ci95_low", "mc_ttt_hours_ci95_low", "ttt_p05_hours", "rep_r_searched", "eval_trials",
                "search_trials", "tau_star_min", "availability", "mtbf_ci_hours"):
        assert key in VOCAB["forbidden"], key
    assert {"groups", "gpus", "redundancy", "r_star", "runs", "trials", "epochs"} <= VOCAB["counts"]
    assert {"r_searched", "notes"} <= VOCAB["lists"]


def test_ttt_plan_and_its_verdict_name_the_interval_and_the_quantiles_alike():
    ttt = RECORDED["ttt_repair"][1]
    plan = RECORDED["plan"][1]
    assert ttt["mc_ttt_ci95_low"] < ttt["mc_ttt_hours"] < ttt["mc_ttt_ci95_high"]
    assert ttt["mc_ttt_p05_hours"] <= ttt["mc_ttt_p95_hours"]
    v = plan["verdict"]
    assert v["mc_ttt_ci95_low"] <= v["ttt_hours"] <= v["mc_ttt_ci95_high"] and isinstance(v["r_star"], int)
    for e in plan["schemes"].values():
        assert e["mc_ttt_p05_hours"] <= e["mc_ttt_p95_hours"]
    opt = RECORDED["optimize"][1]
    assert isinstance(opt["gpus"], int) and isinstance(plan["inputs"]["gpus"], int)
    assert all(isinstance(e["r_searched"], list) for e in opt["schemes"].values())
    assert isinstance(opt["notes"], list) and "rep_r_searched" not in opt
    place = RECORDED["place"][1]
    assert place["epochs"] == 200 and place["search_epochs"] == 100
