"""Bad input, tried adversarially: exit 2, one line on stderr naming the parameter, no traceback, no hang,
nothing on stdout; and strict JSON (no NaN/Infinity) on stdout when the command succeeds."""

from __future__ import annotations

import fcntl
import json
import math
import os
import time

import pytest

from spare_jax.cli import build_parser, main


def strict_loads(text):
    def bad(const):
        raise ValueError(f"non-strict JSON constant {const}")

    return json.loads(text, parse_constant=bad)


def refused(argv, word, capsys, max_s=30.0):
    t0 = time.perf_counter()
    code = main(argv)
    elapsed = time.perf_counter() - t0
    cap = capsys.readouterr()
    lines = [ln for ln in cap.err.splitlines() if ln.strip()]
    assert code == 2, (code, cap.err[-2000:])
    assert cap.out == ""
    assert len(lines) == 1, lines
    assert "Traceback" not in cap.err
    assert word in lines[0], lines[0]
    assert elapsed < max_s, f"refusal took {elapsed:.1f} s"
    return lines[0]


REFUSED = [
    (["wipeout", "--weibull-shape", "0.001"], "--weibull-shape"),
    (["wipeout", "--weibull-shape", "50"], "--weibull-shape"),
    (["wipeout", "--seed", str(2**63)], "--seed"),
    (["wipeout", "--seed", str(2**64)], "--seed"),
    (["overhead", "--seed", str(2**64 + 5)], "--seed"),
    (["overhead", "--mtbf", "1e308"], "--mtbf"),
    (["overhead", "--mtbf", "1e-308"], "--mtbf"),
    (["ttt", "--mtbf", "1e308"], "--mtbf"),
    (["ttt", "--mtbf", "1e-308"], "--mtbf"),
    (["wipeout", "--mtbf", "inf"], "--mtbf"),
    (["wipeout", "--gpus-per-group", "1e-300"], "--gpus-per-group"),
    (["wipeout", "--reference-gpus", "1e400"], "--reference-gpus"),
    # per-group MTBF = 0.01 * 1 / 1e6 min: every flag in range, the combination is not
    (["wipeout", "--mtbf", "0.01", "--reference-gpus", "1", "--gpus-per-group", "1e6"], "per-group MTBF"),
    (["wipeout", "--mtbf", "1e6", "--reference-gpus", "1e4", "--gpus-per-group", "1"], "per-group MTBF"),
    (["wipeout", "--chunk-size", "1e8"], "--chunk-size"),
    (["wipeout", "--chunk-size", "100000000"], "--chunk-size"),
    (["wipeout", "--chunk-size", "2000000000"], "--chunk-size"),
    (["wipeout", "-N", "10000000"], "--groups"),
    (["wipeout", "-N", "\uff13"], "--groups"),  # fullwidth 3
    (["ttt", "--ckpt-interval", "1e-300"], "--ckpt-interval"),
    (["ttt", "--ckpt-interval", "1e300"], "--ckpt-interval"),
    (["ttt", "--work-hours", "1e300"], "--work-hours"),
    (["ttt", "--ckpt-cost", "1e300"], "--ckpt-cost"),
    (["ttt", "--restart", "1e300"], "--restart"),
    (["ttt", "--trials", "4294967296"], "--trials"),
    (["overhead", "--trials", "4294967296"], "--trials"),
    (["wipeout", "--trials", "4294967296"], "--trials"),
    (["optimize", "--r-max", "1000"], "--r-max"),
    (["wipeout", "-r", "1000", "-N", "2000"], "--redundancy"),
    # flags a subcommand would ignore are not there
    (["optimize", "-r", "3"], "-r"),
    (["optimize", "--seed", "1"], "--seed"),
    (["bench", "--seed", "1"], "--seed"),
    (["reorder", "-N", "20", "-r", "2", "--failed", "3,17,"], "--failed"),
    (["reorder", "-N", "20", "-r", "2", "--failed", "3,,4"], "--failed"),
    (["reorder", "-N", "20", "-r", "2", "--failed", "\uff13,4"], "--failed"),
    (["reorder", "-N", "20", "-r", "2", "--failed", "\u0663,4"], "--failed"),  # Arabic-Indic 3
    (["reorder", "-N", "20", "-r", "2", "--failed", " , "], "--failed"),
]


@pytest.mark.parametrize("argv,word", REFUSED, ids=lambda a: " ".join(a) if isinstance(a, list) else a)
def test_refused_up_front(argv, word, capsys):
    refused([*argv, "--quiet"], word, capsys, max_s=10.0)


@pytest.mark.parametrize("argv,word", [
    (["ttt", "-N", "60", "-r", "3", "--ckpt-interval", "100000"], "--ckpt-interval"),
    (["ttt", "-N", "60", "-r", "3", "--work-hours", "1000000"], "--work-hours"),
    (["ttt", "--runs", "10000"], "--runs"),
])
def test_ttt_infeasible_runs_refused_before_sampling(argv, word, capsys):
    refused([*argv, "--quiet", "--json"], word, capsys, max_s=60.0)


def test_help_states_the_ranges():
    sub = build_parser()._subparsers._group_actions[0].choices
    ttt_help = sub["ttt"].format_help()
    for text in ("range 0.2..10", "range 0.01..1e+06 min", "range 2..10,000"):
        assert text in ttt_help.replace("\n", " ").replace("  ", " ") or text in ttt_help, text
    assert "2^32-1" in sub["overhead"].format_help()
    assert "2^63-1" in sub["wipeout"].format_help()
    assert "-r" not in [o for a in sub["optimize"]._actions for o in a.option_strings]


# ------------------------------------------------------------------------------------------------ --out
SMALL = ["wipeout", "-N", "20", "-r", "2", "--trials", "200", "--chunk-size", "64", "--quiet", "--json"]


def test_out_is_a_file(tmp_path, capsys):
    f = tmp_path / "README.md"
    f.write_text("not a dir")
    refused([*SMALL, "--state-dir", str(f)], "--state-dir", capsys, max_s=10)
    assert f.read_text() == "not a dir"


def test_out_run_json_is_a_list(tmp_path, capsys):
    (tmp_path / "run.json").write_text("[1, 2]")
    refused([*SMALL, "--state-dir", str(tmp_path)], "run.json", capsys)


def test_out_run_json_is_garbage(tmp_path, capsys):
    (tmp_path / "run.json").write_bytes(b"\xff\x00not json")
    refused([*SMALL, "--state-dir", str(tmp_path)], "run.json", capsys)


def test_out_run_json_is_a_directory(tmp_path, capsys):
    (tmp_path / "run.json").mkdir()
    refused([*SMALL, "--state-dir", str(tmp_path)], "run.json", capsys, max_s=10)


def test_out_chunks_is_a_file(tmp_path, capsys):
    (tmp_path / "chunks").write_text("x")
    refused([*SMALL, "--state-dir", str(tmp_path)], "chunks", capsys, max_s=10)


def test_out_locked_by_another_run_then_free(tmp_path, capsys):
    out = tmp_path / "o"
    out.mkdir()
    with open(out / ".lock", "a+") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        line = refused([*SMALL, "--state-dir", str(out)], "another run", capsys)
        assert "--state-dir" in line
    assert main([*SMALL, "--state-dir", str(out)]) == 0  # lock released: the run proceeds
    first = strict_loads(capsys.readouterr().out)
    assert main([*SMALL, "--state-dir", str(out)]) == 0  # and resumes (its own lock was released too)
    again = strict_loads(capsys.readouterr().out)
    assert first["mc_mean"] == again["mc_mean"]
    assert not [p for p in os.listdir(out) if ".tmp" in p] and (out / "state.json").exists()


def test_chunkstore_second_holder_refused_and_temp_names_unique(tmp_path):
    from spare_jax.kernels.driver import ChunkStore

    a = ChunkStore(str(tmp_path), {"x": 1})
    with pytest.raises(ValueError, match="another run"):
        ChunkStore(str(tmp_path), {"x": 1})
    assert ChunkStore._tmp_name("p", ".npz") != ChunkStore._tmp_name("p", ".npz")
    a.close()
    ChunkStore(str(tmp_path), {"x": 1}).close()


def test_run_out_dir_on_a_file_refused_at_once(tmp_path, capsys):
    f = tmp_path / "file.txt"
    f.write_text("x")
    refused(["run", "--quick", "--out-dir", str(f), "--quiet"], "--out-dir", capsys, max_s=5)


# ------------------------------------------------------------------------------------------------ --config
def _cfg(tmp_path, text):
    p = tmp_path / "run.toml"
    p.write_text(text)
    return str(p)


@pytest.mark.parametrize("text,word", [
    ("[wipout]\ngroups = 40\n", "wipout"),
    ("[wipeout]\njson = \"no\"\n", "json"),
    ("[wipeout]\nchunk_size = true\n", "chunk_size"),
    ("[wipeout]\ntrials = \"100\"\n", "trials"),
    ("[wipeout]\ntrials = 1.5\n", "trials"),
    ("[wipeout]\ngroups = [40]\n", "groups"),
    ("[wipeout]\nmtbf = true\n", "mtbf"),
    ("[wipeout]\nmtbf = nan\n", "mtbf"),
    ("[wipeout]\nplacement = 3\n", "placement"),
    ("[wipeout]\nseed = 18446744073709551615\n", "seed"),
    ("[wipeout]\ngrups = 40\n", "grups"),
    ("grups = 40\n[wipeout]\ngroups = 40\n", "grups"),
    ("quiet = 1\n", "quiet"),
    ("[wipeout]\nchunk-size = 64\nchunk_size = 128\n", "chunk"),
])
def test_config_strict(tmp_path, capsys, text, word):
    refused(["wipeout", "--config", _cfg(tmp_path, text)], word, capsys, max_s=10)


def test_config_top_level_and_table_merged_table_wins_dashes_ok(tmp_path, capsys):
    cfg = _cfg(tmp_path, "groups = 30\nredundancy = 3\nquiet = true\n"
               "[wipeout]\nredundancy = 2\ntrials = 300.0\nchunk-size = 64\njson = true\n"
               "[ttt]\nscheme = \"rep\"\n")
    assert main(["wipeout", "--config", cfg]) == 0
    data = strict_loads(capsys.readouterr().out)
    assert (data["groups"], data["redundancy"], data["trials"], data["chunk_size"]) == (30, 2, 300, 64)


# ------------------------------------------------------------------------------------------------ traces
@pytest.mark.parametrize("text,word", [
    ('{"group": Infinity}\n', "group"),
    ('{"group": 1e400}\n', "group"),
    ('{"group": true}\n', "group"),
    ('{"group": "3"}\n', "group"),
    ('{"group": 3, "time_min": "late"}\n', "time_min"),
    ('{"group": 3, "time_min": NaN}\n', "time_min"),
    ('{"group": 3, "time_min": -1}\n', "time_min"),
    ("[3]\n", "header"),
    ('{"group": 3}\n[4]\n', "line 2"),
    ("group,time_min\n3,1.0\n4,nan\n", "time_min"),
    ("group,time_min\n3,1.0\n4,x\n", "time_min"),
    ("group\n\uff13\n", "group"),
    ("group\n3\n5,1,2\n", "line 3"),
])
def test_trace_files_refused(tmp_path, capsys, text, word):
    p = tmp_path / "trace.txt"
    p.write_text(text, encoding="utf-8")
    refused(["reorder", "-N", "20", "-r", "2", "--trace", str(p)], word, capsys, max_s=10)


def test_library_refuses_the_same():
    from spare_jax.model.cluster import Sampling
    from spare_jax.model.placement import make_placement
    from spare_jax.rectlr.reorder import check_failures, parse_failed_list, replay
    from spare_jax.kernels.overhead import simulate_overhead
    from spare_jax.kernels.wipeout import simulate_wipeout

    for bad in (["\uff13"], [math.inf], [True], "3,4"):
        with pytest.raises(ValueError, match="failed"):
            check_failures(bad, 20)
    with pytest.raises(ValueError, match="--failed"):
        parse_failed_list("3,17,")
    assert parse_failed_list(" 3, 17 ,4") == [3, 17, 4]
    with pytest.raises(ValueError, match="time_min"):
        replay(make_placement("stacked", 20, 2), [3, 4], [1.0, math.nan])
    with pytest.raises(ValueError, match="trials"):
        simulate_overhead(make_placement("stacked", 20, 2), Sampling(2**32))
    with pytest.raises(ValueError, match="trials"):
        simulate_overhead(make_placement("random", 20, 2, seed=0), Sampling(2**32))
    with pytest.raises(ValueError, match="seed"):
        simulate_wipeout(make_placement("stacked", 20, 2), Sampling(10, seed=2**63))


# ------------------------------------------------------------------------------------------------ JSON
def test_optimize_json_strict_at_tiny_mtbf_and_no_warnings(capsys):
    assert main(["optimize", "-N", "20", "--r-max", "2", "--reference-mtbf-min", "0.01", "--json", "--quiet"]) == 0
    cap = capsys.readouterr()
    data = strict_loads(cap.out)
    assert data["schemes"]["spare"]["ttt_hours"] is None  # infinite TTT -> null
    assert "Warning" not in cap.err and cap.err.strip() == ""


def test_reorder_json_strict_with_times(tmp_path, capsys):
    p = tmp_path / "t.csv"
    p.write_text("group,time_min\n3,1.5\n4,2.5\n")
    assert main(["reorder", "-N", "20", "-r", "2", "--trace", str(p), "--json"]) == 0
    data = strict_loads(capsys.readouterr().out)
    assert [e["time_min"] for e in data["per_event"]] == [1.5, 2.5]


def test_strict_json_helper():
    import numpy as np

    from spare_jax.cli import strict_json

    out = strict_json({"a": float("nan"), "b": [np.float32("inf"), np.int64(3)], "c": np.array([1.0, np.nan]),
                       1: -math.inf, "d": np.bool_(True)})
    assert json.dumps(out, allow_nan=False) == ('{"a": null, "b": [null, 3], "c": [1.0, null], "1": null, '
                                                '"d": true}')


def test_overhead_random_refuses_flags_it_cannot_use(tmp_path, capsys):
    refused(["overhead", "-N", "20", "-r", "2", "--placement", "random", "--trials", "10", "--state-dir", str(tmp_path),
             "--quiet"], "--state-dir", capsys, max_s=10)


def test_bench_refuses_what_cannot_fit(capsys):
    refused(["bench", "-N", "200000", "-r", "64", "--quiet"], "--groups", capsys, max_s=10)


def test_two_processes_on_one_out_dir(tmp_path):
    """Started together on one --out: each either finishes or is refused with one line; never a crash."""
    import subprocess
    import sys

    out = str(tmp_path / "shared")
    cmd = [sys.executable, "-m", "spare_jax", "wipeout", "-N", "30", "-r", "3", "--trials", "20000",
           "--chunk-size", "256", "--state-dir", out, "--quiet", "--json"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [os.getcwd(), os.environ.get("PYTHONPATH")])))
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for _ in range(2)]
    results = [(p.wait(timeout=300), *p.communicate()) for p in procs]
    for rc, stdout, stderr in results:
        assert "Traceback" not in stderr, stderr
        assert rc in (0, 2), (rc, stderr)
        if rc == 2:
            assert stdout == "" and len(stderr.strip().splitlines()) == 1 and "another run" in stderr
        else:
            assert strict_loads(stdout)["trials"] == 20000
    assert any(rc == 0 for rc, _, _ in results)
    assert not [p for p in os.listdir(out) if ".tmp" in p]


def test_largest_group_mtbf_still_sums_exactly(capsys):
    """Per-group MTBF 1e7 min (the bound), N = 1: the epoch uptime is one exponential time, mean 1e7."""
    assert main(["wipeout", "-N", "1", "-r", "1", "--mtbf", "1e3", "--reference-gpus", "1e4", "--gpus-per-group", "1",
                 "--trials", "20000", "--quiet", "--json"]) == 0
    data = strict_loads(capsys.readouterr().out)
    assert abs(data["mc_epoch_uptime_min"] / data["theory_epoch_uptime_min"] - 1) < 0.05


def test_ttt_interval_far_shorter_than_the_epochs_runs(capsys):
    # per-group MTBF 1e7 min, N = 2: epochs of ~5e6 min hold ~1e10 checkpoints of tau + C = 0.01 min; neither
    # the closed form (summed cell by cell) nor the Monte Carlo (bisection) walks over them: it runs, fast
    t0 = time.perf_counter()
    assert main(["ttt", "-N", "2", "-r", "1", "--scheme", "rep", "--mtbf", "1e3", "--reference-gpus", "1e4",
                 "--gpus-per-group", "1", "--ckpt-interval", "0.01", "--ckpt-cost", "0", "--json", "--quiet"]) == 0
    assert time.perf_counter() - t0 < 60
    d = json.loads(capsys.readouterr().out)
    assert abs(d["mc_ttt_hours"] - d["theory_ttt_hours"]) < max(4 * d["mc_ttt_stderr_hours"], 1e-3), d
