"""The smaller frictions a new user meets in the first hour, each held by a test: the README's first command
after the install, `plan`'s default cluster stated, `--gpus-per-node` with the per-GPU MTBF, the nearest
valid GPU counts, `place`'s units, `presets`' short list, `--state-dir`'s help, and one measured time for
`make run`. Cheap: no kernel is compiled (the plan of the per-node test is checkpointing alone, a closed form
on 16 groups)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from refusal import refused
from spare_jax.cli import main

ROOT = Path(__file__).resolve().parent.parent


def _run(argv, capsys):
    code = main(list(argv))
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def _help(command, capsys) -> str:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    return " ".join(capsys.readouterr().out.split())


# ------------------------------------------------------------------ the README

def test_the_readme_installs_before_its_first_command():
    """The first `spare-jax` command the README shows comes after the install (`make run`, the venv's path)."""
    text = (ROOT / "README.md").read_text()
    install = text.index("make run ")
    first = re.search(r"^ {4}(\$ )?(\.venv/bin/)?spare-jax ", text, re.M)
    assert first and first.start() > install, "the README shows a spare-jax command before the install"
    assert text.index("## Install") < text.index("## Plan your cluster")


# ------------------------------------------------------------------ plan's default cluster

def test_plan_states_its_default_cluster_and_where_the_others_is(capsys):
    """`plan` defaults to cluster-100k's size (98,304 GPUs in groups of 1,024), not the other commands' 600 x
    1,000: its --help says so and names the preset that gives the other commands' cluster."""
    from spare_jax.planner.plan import DEFAULT_GPUS, DEFAULT_GPUS_PER_GROUP

    assert (DEFAULT_GPUS, DEFAULT_GPUS_PER_GROUP) == (98_304, 1024)
    text = _help("plan", capsys)
    assert "default 98,304, the size of the cluster-100k preset" in text
    assert "600 groups of 1,000 GPUs, is --preset paper-600k" in text


# ------------------------------------------------------------------ --gpus-per-node with the per-GPU MTBF

def test_gpus_per_node_with_the_per_gpu_mtbf_is_used_not_refused(capsys, monkeypatch):
    """With the per-GPU MTBF, --gpus-per-node makes groups of whole nodes (checked) and reaches the plan (the
    spare pool's node sets); the rate stays the per-GPU MTBF's."""
    from spare_jax.planner import plan as planmod

    assert planmod._per_gpu_mtbf_hours(96, 300.0, None, 8, None, "exponential") == (300.0, "given")
    seen = {}

    class Stop(Exception):
        pass

    def fake_plan(fleet, costs, options, progress=False):
        seen["fleet"] = fleet
        raise Stop

    monkeypatch.setattr(planmod, "plan", fake_plan)
    with pytest.raises(Stop):
        main(["plan", "--gpus", "1536", "--gpus-per-group", "96", "--gpu-mtbf-hours", "300", "--gpus-per-node", "8",
              "--quiet"])
    assert seen["fleet"].gpus_per_node == 8 and seen["fleet"].gpu_mtbf_hours == 300.0
    monkeypatch.undo()
    refused(["plan", "--gpus", "1536", "--gpus-per-group", "96", "--gpus-per-node", "5"],
            ["--gpus-per-group (96)", "--gpus-per-node (5)", "whole nodes"], capsys)


@pytest.mark.slow
def test_gpus_per_node_with_the_per_gpu_mtbf_plans_the_same_and_is_echoed(capsys):
    import json

    args = ["plan", "--gpus", "1536", "--gpus-per-group", "96", "--gpu-mtbf-hours", "300", "--work-hours", "100",
            "--schemes", "none", "--runs", "20", "--no-sensitivity", "--quiet", "--json"]
    code, out, err = _run([*args, "--gpus-per-node", "8"], capsys)
    assert code == 0, err
    got = json.loads(out)
    assert got["inputs"]["gpus_per_node"] == 8 and got["inputs"]["gpu_mtbf_hours"] == 300.0
    code, plain, err = _run(args, capsys)
    assert code == 0, err
    assert json.loads(plain)["schemes"] == got["schemes"]  # the same plan: the node only shapes the groups


# ------------------------------------------------------------------ the nearest valid sizes

def test_a_gpu_count_that_is_no_multiple_names_the_nearest_ones(capsys):
    line = refused(["plan", "--gpus", "100000", "--gpus-per-group", "512"], ["--gpus", "--gpus-per-group"], capsys)
    assert "99,840 or 100,352" in line
    from spare_jax.planner.plan import cluster_groups

    with pytest.raises(ValueError, match="the nearest multiples: 512$"):
        cluster_groups(100, 512)


# ------------------------------------------------------------------ place's units

def test_place_prints_the_orders_uptimes_with_their_unit(capsys, monkeypatch):
    """The text table's `orders` row gives each order's uptime in minutes, with the unit."""
    from spare_jax.rectlr import reports
    from spare_jax.results import Report

    fake = Report({"groups": 12, "redundancy": 2, "best_name": "interleaved", "best_uptime_min": 1500.25,
                   "best_ring": list(range(12)),
                   "orders": [{"name": "interleaved", "uptime_min": 1500.25, "uptime_stderr_min": 3.5,
                               "search_uptime_min": 1510.0},
                              {"name": "contiguous", "uptime_min": 900.0, "uptime_stderr_min": 2.0,
                               "search_uptime_min": 905.0}]})
    monkeypatch.setattr(reports, "place_report", lambda *a, **k: fake)
    code, out, err = _run(["place", "-N", "12", "-r", "2"], capsys)
    assert code == 0, err
    row = next(ln for ln in out.splitlines() if ln.strip().startswith("orders"))
    assert "interleaved 1500.2 ± 3.5 min; contiguous 900.0 ± 2.0 min" in row, row


# ------------------------------------------------------------------ presets

def test_presets_prints_a_short_list_and_one_preset_in_full(capsys):
    from spare_jax.model.presets import PRESETS

    code, out, _ = _run(["presets"], capsys)
    lines = out.strip().splitlines()
    assert code == 0 and len(lines) == len(PRESETS) + 1 and len(lines) < 12
    assert [ln.split()[0] for ln in lines[:-1]] == list(PRESETS)
    assert "spare-jax presets NAME" in lines[-1] and "--long" in lines[-1]
    code, one, _ = _run(["presets", "llama3-16k"], capsys)
    assert code == 0 and one.startswith("llama3-16k: ") and "source: Llama 3" in one and "paper-600k" not in one
    code, every, _ = _run(["presets", "--long"], capsys)
    assert code == 0 and all(f"{name}: " in every for name in PRESETS) and one in every
    code, js, _ = _run(["presets", "llama3-16k", "--json"], capsys)
    import json

    assert code == 0 and list(json.loads(js)) == ["llama3-16k"]
    refused(["presets", "nope"], ["NAME", "'nope'", "llama3-16k"], capsys)


# ------------------------------------------------------------------ --state-dir's help

def test_state_dir_help_names_no_command_that_lacks_it(capsys):
    """The commands that take --state-dir; its help names no other (it once said `ttt` took it)."""
    from spare_jax.cli.parser import build_parser

    sub = next(a for a in build_parser()._actions if a.choices and "ttt" in a.choices)
    takes = {name for name, p in sub.choices.items() if any("--state-dir" in a.option_strings for a in p._actions)}
    assert "ttt" not in takes and {"wipeout", "overhead"} <= takes
    for command in takes:
        text = _help(command, capsys)
        part = text[text.index("--state-dir DIR"):][:400]
        assert not re.search(r"\bttt\b", part), (command, part)


# ------------------------------------------------------------------ the time of make run

def test_make_run_has_one_measured_time():
    """`make run`'s time is measured once (figures/transcripts/run.json) and quoted by the README and the index;
    the Makefile, the run's banner and --help state no figure of their own."""
    import json

    record = json.loads((ROOT / "figures" / "transcripts" / "run.json").read_text())
    assert record["wall_seconds"] > 0 and record["commit"] and record["machine"]["cpus"] >= 1
    for page in ("README.md", "docs/index.md"):
        text = (ROOT / page).read_text()
        assert "<!-- q: transcripts/run.json wall_seconds" in text, page
    sources = {"Makefile": (ROOT / "Makefile").read_text().split("\nrun:")[1].split("\n")[0],
               "banner": (ROOT / "spare_jax" / "suite" / "summary.py").read_text(),
               "help": (ROOT / "spare_jax" / "cli" / "parser.py").read_text()}
    for where, text in sources.items():
        quick = re.findall(r"(?:about|~)\s*\d[\d-]*\s*min(?:ute)?s?", text.replace("25-40 minutes", ""))
        assert not quick, (where, quick)
