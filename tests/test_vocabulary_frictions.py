"""The command line's frictions, each with its check: --gpus on every command that takes N, output locations
checked before any work, --state-dir (formerly --out), what an interrupted or resumed run says, floors and
search edges said in the output, unit letters explained, progress lines without nan, long texts and huge
numbers in refusals."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from spare_jax import cli
from spare_jax.cli.main import interrupted_line


def _run(capsys, argv):
    code = cli.main(argv)
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def _refused(capsys, argv, *words, max_s=5.0):
    t0 = time.perf_counter()
    code, out, err = _run(capsys, argv)
    elapsed = time.perf_counter() - t0
    assert code == 2 and out == "", (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("spare-jax"), err
    for w in words:
        assert w in lines[0], (w, lines[0])
    assert elapsed < max_s, elapsed
    return lines[0]


# ------------------------------------------------------------------------------------------------- --gpus
def test_every_command_that_takes_n_takes_gpus():
    parser = cli.build_parser()
    subs = parser._subparsers._group_actions[0].choices
    for name, sub in subs.items():
        flags = {o for a in sub._actions for o in a.option_strings}
        if "-N" in flags or name == "plan":
            assert {"--gpus", "--gpus-per-group"} <= flags, name


def test_gpus_sets_the_groups_and_a_conflicting_n_exits_2(capsys):
    code, out, err = _run(capsys, ["reorder", "--gpus", "12000", "--gpus-per-group", "1000", "-r", "3",
                                   "--failed", "3,7", "--json"])
    assert code == 0, err
    assert json.loads(out)["groups"] == 12
    _refused(capsys, ["reorder", "--gpus", "12000", "-N", "11", "-r", "3", "--failed", "3"], "-N 11", "--gpus",
             "12 groups")
    _refused(capsys, ["wipeout", "--gpus", "12500", "--trials", "100"], "multiple of --gpus-per-group")
    _refused(capsys, ["ttt", "--gpus", "1000", "--gpus-per-group", "1.5"], "--gpus-per-group", "whole number")


# -------------------------------------------------------------------------------------- output locations
def test_run_out_dir_proc_nope_exits_2_at_once_with_one_line(capsys):
    _refused(capsys, ["run", "--out-dir", "/proc/nope"], "--out-dir /proc/nope", "cannot create")


def test_output_locations_are_checked_before_any_work(capsys, tmp_path):
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    a_dir = tmp_path / "dir"
    a_dir.mkdir()
    _refused(capsys, ["run", "--out-dir", str(a_file)], "is a file, not a directory")
    _refused(capsys, ["run", "--out-dir", str(a_file / "sub")], "is a file, not a directory")
    _refused(capsys, ["wipeout", "--state-dir", str(a_file), "--trials", "100"], "--state-dir", "is a file")
    _refused(capsys, ["wipeout", "--state-dir", "/proc/nope", "--trials", "100"], "--state-dir", "cannot create")
    _refused(capsys, ["plan", "--report", str(a_dir)], "--report", "is a directory")
    _refused(capsys, ["plan", "--report", "/proc/nope/plan.html"], "--report")
    _refused(capsys, ["place", "--ring-out", str(tmp_path / "missing" / "ring.txt")], "--ring-out", "does not exist")
    _refused(capsys, ["place", "--ring-out", str(a_dir)], "--ring-out", "is a directory")
    assert sorted(os.listdir(tmp_path)) == ["dir", "file.txt"] and os.listdir(a_dir) == []  # nothing written


def test_a_valid_new_directory_is_not_created_by_the_check(tmp_path):
    from spare_jax.cli.paths import check_dir

    check_dir(str(tmp_path / "a" / "b"), "--out-dir")
    assert os.listdir(tmp_path) == []


# ----------------------------------------------------------------------------------- state dir, resume
def test_state_dir_resumes_and_says_so_and_out_still_works_with_a_note(capsys, tmp_path):
    base = ["wipeout", "-N", "20", "-r", "2", "--trials", "2000", "--seed", "1", "--json", "--quiet"]
    state = str(tmp_path / "state")
    code, first, err = _run(capsys, [*base, "--state-dir", state])
    assert code == 0 and "resuming" not in err, err
    code, again, err = _run(capsys, [*base, "--out", state])
    assert code == 0, err
    assert "spare-jax: resuming from 2,000 of 2,000 trials saved in" in err
    assert "spare-jax: note: --out is deprecated for wipeout; use --state-dir" in err
    assert json.loads(again)["mc_mean"] == json.loads(first)["mc_mean"]


def test_interrupted_line_says_what_was_saved_and_how_to_resume(monkeypatch):
    from spare_jax.kernels import state_files

    monkeypatch.setattr(state_files, "SAVED", {"out_dir": "st", "done": 4096, "total": 20_000_000, "unit": "trials"})
    line = interrupted_line(["wipeout", "-N", "3000", "--state-dir", "st"], True)
    assert line == ("spare-jax: interrupted; saved 4,096 of 20,000,000 trials in st; resume with: spare-jax wipeout "
                    "-N 3000 --state-dir st")
    monkeypatch.setattr(state_files, "SAVED", {})
    assert "nothing saved" in interrupted_line(["wipeout"], True) and "--state-dir" in interrupted_line(["x"], True)
    assert interrupted_line(["plan"], False) == "spare-jax: interrupted; nothing saved"


@pytest.mark.slow
def test_ctrl_c_on_a_resumable_run_prints_what_was_saved_and_the_command(tmp_path):
    state = tmp_path / "st"
    args = ["wipeout", "-N", "3000", "-r", "5", "--trials", "20000000", "--chunk-size", "4096", "--seed", "3",
            "--json", "--quiet", "--state-dir", str(state)]
    proc = subprocess.Popen([sys.executable, "-m", "spare_jax", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 300
    while time.time() < deadline and not (state / "state.json").exists() and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and out == ""
    assert "spare-jax: interrupted; saved " in err and " of 20,000,000 trials in " in err
    assert "resume with: spare-jax " + " ".join(args) in err


# ---------------------------------------------------------------------------------- floors and edges
@pytest.mark.slow
def test_optimize_says_a_tau_at_its_floor_and_an_r_star_at_r_max(capsys):
    code, out, err = _run(capsys, ["optimize", "-N", "60", "--ckpt-cost", "0", "--r-max", "2", "--work-hours", "48", "--json", "--quiet"])
    assert code == 0, err
    notes = json.loads(out)["notes"]
    assert any(n.startswith("none: tau* = 0.05 min is the floor") for n in notes), notes
    assert any(n.startswith("spare: r* = 2 is the largest r searched") and "--r-max" in n for n in notes), notes
    code, out, err = _run(capsys, ["optimize", "-N", "60", "--ckpt-cost", "0", "--r-max", "2", "--work-hours", "48", "--quiet"])
    assert "  note: none: tau* = 0.05 min is the floor" in out
    assert out.strip().splitlines()[-1].startswith("units: h = hours; min = minutes")


def test_edge_notes_of_a_plan_and_of_a_micro_batch_search():
    from spare_jax.ttt.edges import edge_notes

    res = {"schemes": {"spare": {"r_star": 16, "ckpt_interval_min": 30.0, "microbatches": 8},
                       "rep": {"r_star": 4, "ckpt_interval_min": 30.0}}}
    notes = edge_notes(res, 96, 16, [1, 2, 4, 8])
    assert any(n.startswith("spare: r* = 16 is the largest r searched") for n in notes)
    assert any(n.startswith("spare: m* = 8 is the largest micro-batch count") for n in notes)
    assert not any(n.startswith("rep:") for n in notes)  # r* = 4 < 16
    assert edge_notes({"schemes": {"spare": {"r_star": 16, "ckpt_interval_min": 30.0}}}, 16, 16) == []  # r = N
    # a window below --r-max stopped the search (optimize with kept Weibull ages: the renewed r* +- 2): the
    # note names the window, not the flag
    windowed = {"schemes": {"spare": {"r_star": 8, "ckpt_interval_min": 60.0}},
                "search": {"space": {"r_searched": [1, 4, 5, 6, 7, 8]}}}  # r = 1: checkpointing alone's
    (note,) = edge_notes(windowed, 1000, 20)
    assert note.startswith("spare: r* = 8 is the largest r searched (r = 4..8, a window below --r-max 20)"), note
    assert "raise" not in note and "`ttt -r 9`" in note


def test_a_plan_says_m_at_the_edge_of_a_grid_the_user_gave_even_the_default_one():
    from spare_jax.planner.plan import _batch, _edge_notes, policy_search
    from spare_jax.ttt.search import DEFAULT_MICROBATCHES, SearchSpace

    schemes = {"spare": {"r_star": 3, "ckpt_interval_min": 30.0, "microbatches": 8}}
    inputs = {"r_max": 6}

    def m_notes(search):
        batch = _batch(None, None, 600, object(), search)
        return [x for x in _edge_notes(schemes, inputs, 600, search, batch) if "m* = 8" in x]

    assert SearchSpace().microbatches is None and SearchSpace().microbatch_grid == DEFAULT_MICROBATCHES
    assert m_notes(SearchSpace()) == []  # the default grid: the batch sentence says it
    assert len(m_notes(SearchSpace(microbatches=DEFAULT_MICROBATCHES))) == 1  # given, though equal to it
    given, _, _ = policy_search([1, 2, 4, 8], None, object())
    default, _, _ = policy_search(None, None, object())
    assert len(m_notes(given)) == 1 and m_notes(default) == []
    assert default.microbatch_grid == given.microbatch_grid == DEFAULT_MICROBATCHES


def test_tables_explain_their_unit_letters(capsys):
    from spare_jax.cli.output import print_table

    print_table("t", {"a_hours": 1.0, "b_min": 2.0, "ttt_over_w": 1.5, "c_pct": 3.0, "z_score": 0.1,
                      "notes": ["a sentence"]})
    out = capsys.readouterr().out.splitlines()
    assert out[-2] == "  note: a sentence"
    assert out[-1] == ("units: h = hours; min = minutes; % = percent; x W = times the failure-free work W; "
                       "s.e. = standard errors of the Monte Carlo")


def test_run_progress_says_not_simulated_instead_of_nan(tmp_path, capsys):
    from spare_jax.model.cluster import Sampling
    from spare_jax.suite.training import ttt_vs_r

    ttt_vs_r(str(tmp_path), groups=12, rs=(1, 2), ckpt_costs=(5.0,), sampling=Sampling(4, progress=False),
             mc_rs=(2,))
    err = capsys.readouterr().err
    assert "nan" not in err.lower() and "not simulated" in err and "x W" in err


# -------------------------------------------------------------------------------- long texts, huge numbers
def test_a_long_currency_is_refused_in_one_short_line(capsys, tmp_path):
    line = _refused(capsys, ["plan", "--currency", "E" * 300], "--currency", "300 characters")
    assert len(line) < 200
    cfg = tmp_path / "plan.toml"
    cfg.write_text(f'currency = "{"E" * 300}"\n')
    assert len(_refused(capsys, ["plan", "--config", str(cfg)], "--currency")) < 200


def test_refusals_quote_huge_numbers_in_scientific_form(capsys):
    line = _refused(capsys, ["wipeout", "-N", "1" + "0" * 308], "1.000e+308")
    assert len(line) < 150
    line = _refused(capsys, ["wipeout", "-N", "1" + "0" * 30], "1.000e+30")
    line = _refused(capsys, ["wipeout", "-N", "x" * 300], "(300 characters)")
    assert len(line) < 150


def test_the_library_answers_carry_the_edge_notes(monkeypatch):
    """The notes are the library's (the command prints what ``optimize`` and ``time_to_train`` return):
    ``optimize`` adds them to its search's answer (here a stand-in answer with tau* at the floor and r* at
    ``r_max``), and ``time_to_train`` with its interval left to the search says when it sits at the floor,
    never when the interval was given."""
    from spare_jax.model.cluster import Cluster, Sampling
    from spare_jax.model.failures import FailureModel
    from spare_jax.results import Report
    from spare_jax.ttt import Training, answer

    cluster = Cluster(groups=8, model=FailureModel())
    found = {"schemes": {"spare": {"r_star": 2, "ckpt_interval_min": 0.05, "microbatches": 4},
                         "none": {"r_star": 1, "ckpt_interval_min": 30.0}}, "notes": ["the search's own"]}
    monkeypatch.setattr(answer, "_optimize", lambda *a: Report(found))
    notes = answer.optimize(cluster, Training(1.0, 0.0), answer.Space(r_max=2, microbatches=(1, 4))).to_json()["notes"]
    assert notes[0] == "the search's own" and len(notes) == 4, notes
    assert notes[1].startswith("spare: tau* = 0.05 min is the floor of the interval search")
    assert notes[2].startswith("spare: r* = 2 is the largest r searched")
    assert notes[3].startswith("spare: m* = 4 is the largest micro-batch count searched")
    monkeypatch.undo()
    got = answer.time_to_train(cluster, Training(1.0, 0.0), answer.Policy("none", 1), Sampling(count=8, seed=1))
    assert any("is the floor of the interval search" in n for n in got["notes"]), got.get("notes")
    given = answer.time_to_train(cluster, Training(1.0, 0.0, ckpt_interval_min=0.05), answer.Policy("none", 1),
                                 Sampling(count=8, seed=1))
    assert not any("floor" in n for n in given.get("notes") or [])  # a given interval is no search's answer
