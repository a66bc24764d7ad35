"""Bad files and locations, as tables: every file a command reads (--ring, --group-mtbf-file, --trace,
--failure-log; --config has its own tables) when it is of the wrong kind or holds bad values, and every place
a command writes (--out, --out-dir, --ring-out, --report) when it cannot be written, is a file where a directory
is meant or the reverse, or is held by another run. Each must be refused by tests/refusal.py's rule (exit 2,
one line on stderr from spare-jax holding the row's words, nothing on stdout, no traceback, no hang, no JAX
kernel compiled) before any work.

A failure log's text: tests/test_cli_refusals_plan.py."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys

import pytest

from refusal import refused
from spare_jax.cli import main
from spare_jax.model.inputfile import MAX_BYTES

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="no /proc on this platform")


def strict_loads(text):
    def bad(const):
        raise ValueError(f"non-strict JSON constant {const}")

    return json.loads(text, parse_constant=bad)


# ------------------------------------------------------------------------------------------------ inputs
# every file-reading flag, with the command line around it and the name its refusal gives the file
READERS = {
    "--config": (["wipeout", "--config"], "--config"),
    "--ring": (["wipeout", "-N", "20", "-r", "2", "--ring"], "ring file"),
    "--group-mtbf-file": (["wipeout", "-N", "20", "-r", "2", "--group-mtbf-file"], "group MTBF file"),
    "--trace": (["reorder", "-N", "20", "-r", "2", "--trace"], "trace"),
    "--failure-log": (["plan", "--failure-log"], "--failure-log"),
    "--failure-trace": (["ttt", "-N", "4", "-r", "2", "--failure-trace"], "--failure-trace"),
}

# a file of each wrong kind: (how it is made, the words of the refusal besides the file's name)
KINDS = {
    "a FIFO": (lambda p: os.mkfifo(p), ["FIFO", "not a regular file"]),
    "a directory": (lambda p: p.mkdir(), ["directory", "not a regular file"]),
    "missing": (lambda p: None, ["cannot read", "No such file"]),
    "huge": (lambda p: open(p, "wb").truncate(MAX_BYTES + 1), ["more than the"]),  # sparse: nothing written
    "binary": (lambda p: p.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff"), ["not a UTF-8 text file"]),
    "empty": (lambda p: p.write_text(""), []),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("flag", [f for f in READERS if f != "--config"])
def test_input_file_of_the_wrong_kind(flag, kind, tmp_path, capsys):
    if kind == "a FIFO" and not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    argv, name = READERS[flag]
    make, words = KINDS[kind]
    if flag == "--failure-trace" and kind == "binary":  # its own words: test_failure_trace_files_refused
        words = ["binary data"]
    path = tmp_path / "input.txt"
    make(path)
    refused([*argv, str(path), "--quiet"], [name, *words], capsys)


@needs_fifo
@pytest.mark.parametrize("flag", READERS)
def test_fifo_refused_at_once(flag, tmp_path, capsys):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    line = refused([*READERS[flag][0], str(fifo), "--quiet"], [], capsys)
    assert "FIFO" in line and "not a regular file" in line, line


@pytest.mark.parametrize("flag", ["--config", "--failure-log"])
@pytest.mark.parametrize("other, word", [("/dev/null", "device"), ("{tmp}", "directory")], ids=["device", "dir"])
def test_device_and_directory_refused_at_once(flag, other, word, tmp_path, capsys):
    assert word in refused([*READERS[flag][0], other.replace("{tmp}", str(tmp_path))], [], capsys)


@pytest.mark.parametrize("text, word", [
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
    ("group\n20\n", "20"),
    ("group\n-1\n", "-1"),
    ("group\n3\n3\n", "3"),
    ("group\n", "failure trace is empty"),
])
def test_trace_files_refused(tmp_path, capsys, text, word):
    p = tmp_path / "trace.txt"
    p.write_text(text, encoding="utf-8")
    refused(["reorder", "-N", "20", "-r", "2", "--trace", str(p)], word, capsys, max_s=10)


HEAD = "# nodes = 4\n# window_hours = 100\nnode,failed_hours,returned_hours\n"


@pytest.mark.parametrize("text, words", [
    (HEAD + "1,2,3\n1,99,101\n", ["line 5", "outside the window"]),
    (HEAD + "1,2,3\n1,-1,3\n", ["line 5", "outside the window"]),
    (HEAD + "1,2,3\n4,5,6\n", ["line 5", "node 4", "outside 0..3"]),
    (HEAD + "1,2,3\n2,5,5\n", ["line 5", "returned_hours 5 <= failed_hours 5"]),
    (HEAD + "1,2,3\n2,6,5\n", ["line 5", "returned_hours"]),
    ("# window_hours = 100\nnode,failed_hours,returned_hours\n1,2,3\n", ["line", "# nodes"]),
    ("# nodes = 4\nnode,failed_hours,returned_hours\n1,2,3\n", ["line", "# window_hours"]),
    ("# nodes = 4\n# window_hours = 100\n1,2,3\n", ["line 3"]),
    (HEAD + "1,2,x\n", ["line 4", "returned_hours"]),
    (HEAD + "1,2,nan\n", ["line 4", "returned_hours"]),
    (HEAD + "1,0,100\n", ["line 4", "unit 1", "whole circle"]),
    (HEAD + "1,2,3\n\x00\x01\n", ["line 5", "binary data"]),
    ("", ["empty"]),
])
def test_failure_trace_files_refused(tmp_path, capsys, text, words):
    # records unsorted or overlapping are fine (merged, counted); these are not, each refused naming its line
    p = tmp_path / "trace.csv"
    p.write_text(text, encoding="utf-8")
    refused(["ttt", "-N", "4", "-r", "2", "--failure-trace", str(p), "--quiet"], words, capsys, max_s=10)


@pytest.mark.parametrize("text, word", [
    ("1e-300\n" * 12, "--group-mtbf-file"),
    ("1e300\n" * 12, "--group-mtbf-file"),
    ("600\n" * 11, "12"),
    ("600\n" * 13, "12"),
    ("600\n" * 11 + "soon\n", "'soon'"),
    ("600\n" * 11 + "nan\n", "group MTBF"),
    ("600\n" * 11 + "-5\n", "group MTBF"),
    ("# none\n", "holds no values"),
])
def test_group_mtbf_files_refused(text, word, tmp_path, capsys):
    f = tmp_path / "m.txt"
    f.write_text(text)
    refused(["ttt", "-N", "12", "-r", "2", "--trials", "2", "--group-mtbf-file", str(f), "--quiet"], word, capsys)


@pytest.mark.parametrize("text, word", [
    ("0 1 2 3 4 5 6 7 8 9 10\n", "ring"),  # 11 of 12 groups
    ("0 1 2 3 4 5 6 7 8 9 10 10\n", "ring"),  # one twice
    ("0 1 2 3 4 5 6 7 8 9 10 12\n", "ring"),  # out of range
    ("0 1 2 3 4 5 6 7 8 9 10 x\n", "'x'"),
    ("# nothing\n", "holds no values"),
])
def test_ring_files_refused(text, word, tmp_path, capsys):
    f = tmp_path / "ring.txt"
    f.write_text(text)
    refused(["wipeout", "-N", "12", "-r", "2", "--trials", "20", "--ring", str(f), "--quiet"], word, capsys)


# ------------------------------------------------------------------------------------------------ outputs
SMALL = ["wipeout", "-N", "20", "-r", "2", "--trials", "200", "--chunk-size", "64", "--quiet", "--json"]
OVERHEAD = ["overhead", "-N", "20", "-r", "2", "--epochs", "200", "--chunk-size", "64", "--quiet", "--json"]
RUN = ["run", "--quick", "--quiet"]
PLACE = ["place", "-N", "12", "-r", "2", "--steps", "1", "--epochs", "200", "--quiet"]
PLAN = ["plan", "--gpus", "16384", "--gpus-per-group", "1024", "--runs", "4", "--no-sensitivity", "--quiet"]

OVERHEAD_RANDOM = ["overhead", "-N", "20", "-r", "2", "--placement", "random", "--trials", "10", "--quiet"]


def place(argv, flag, where, words, id, max_s=10.0, marks=()):  # noqa: A002 - pytest's name
    """A row: the command line, the flag, a bad place ({file}: an existing file, {tmp}: a directory), the words."""
    return pytest.param(argv, flag, where, words, max_s, id=id, marks=marks)


WRITERS = [
    place(SMALL, "--state-dir", "/proc/nope", ["--state-dir", "cannot create it"], "wipeout --state-dir /proc", marks=needs_proc),
    place(OVERHEAD, "--state-dir", "/proc/nope", ["--state-dir", "cannot create it"], "overhead --state-dir /proc", marks=needs_proc),
    place(SMALL, "--state-dir", "{file}/sub", ["--state-dir", "is a file, not a directory"], "wipeout --state-dir under a file"),
    place(SMALL, "--state-dir", "{file}", ["--state-dir"], "wipeout --state-dir a file"),
    place(OVERHEAD, "--state-dir", "{file}", ["--state-dir", "not a directory"], "overhead --state-dir a file"),
    place(SMALL, "--state-dir", "", ["--state-dir"], "wipeout --state-dir empty"),
    place(OVERHEAD_RANDOM, "--state-dir", "{tmp}", ["--state-dir"], "overhead --placement random --state-dir"),  # runs on the host
    place(RUN, "--out-dir", "/proc/nope", ["--out-dir", "/proc/nope"], "run --out-dir /proc", 5.0, needs_proc),
    place(RUN, "--out-dir", "{file}/sub", ["--out-dir"], "run --out-dir under a file", 5.0),
    place(RUN, "--out-dir", "{file}", ["--out-dir"], "run --out-dir a file", 5.0),
    place(PLACE, "--ring-out", "/proc/nope/x", ["--ring-out", "does not exist"], "place --ring-out /proc",
          marks=needs_proc),
    place(PLACE, "--ring-out", "{file}/sub", ["--ring-out", "is a file, not a directory"], "place --ring-out under a file"),
    place(PLACE, "--ring-out", "{tmp}", ["--ring-out", "is a directory; name a file"], "place --ring-out a directory"),
    place(PLACE, "--ring-out", "", ["--ring-out"], "place --ring-out empty"),
    place(PLAN, "--report", "/proc/nope/x.html", ["--report", "does not exist"], "plan --report /proc", marks=needs_proc),
    place(PLAN, "--report", "{file}/sub.html", ["--report", "is a file, not a directory"], "plan --report under a file"),
    place(PLAN, "--report", "{tmp}", ["--report", "is a directory; name a file"], "plan --report a directory"),
    place(PLAN, "--report", "", ["--report"], "plan --report empty"),
]


@pytest.mark.parametrize("argv, flag, where, words, max_s", WRITERS)
def test_output_location_refused_before_any_work(argv, flag, where, words, max_s, tmp_path, capsys):
    f = tmp_path / "README.md"
    f.write_text("not a dir")
    where = where.replace("{file}", str(f)).replace("{tmp}", str(tmp_path))
    refused([*argv, flag, where], words, capsys, max_s=max_s)
    assert f.read_text() == "not a dir"


def test_ring_out_read_only_file(tmp_path, capsys):
    locked = tmp_path / "locked.txt"
    locked.write_text("x")
    os.chmod(locked, 0o444)
    if os.access(locked, os.W_OK):  # (root can write anyway)
        pytest.skip("this user can write a read-only file")
    refused(PLACE + ["--ring-out", str(locked)], "--ring-out", capsys)


# a run's state in --state-dir is read where the run starts, with its parameters: after its kernels are compiled
def test_out_run_json_is_a_list(tmp_path, capsys):
    (tmp_path / "run.json").write_text("[1, 2]")
    refused([*SMALL, "--state-dir", str(tmp_path)], "run.json", capsys, compiles=True)


def test_out_run_json_is_garbage(tmp_path, capsys):
    (tmp_path / "run.json").write_bytes(b"\xff\x00not json")
    refused([*SMALL, "--state-dir", str(tmp_path)], "run.json", capsys, compiles=True)


def test_out_run_json_is_a_directory(tmp_path, capsys):
    (tmp_path / "run.json").mkdir()
    refused([*SMALL, "--state-dir", str(tmp_path)], "run.json", capsys, max_s=10)


def _rechecksummed(state, change) -> None:
    """Apply ``change`` to a state file's body and write it back with a valid checksum (a tampered file)."""
    import hashlib

    data = json.loads(state.read_text())
    change(data["body"])
    data["sha256"] = hashlib.sha256(json.dumps(data["body"], sort_keys=True).encode()).hexdigest()
    state.write_text(json.dumps(data))


def test_state_tampered_and_rechecksummed_then_resumed_with_nothing_to_do(tmp_path, capsys):
    """A finished run's state resumed: nothing computed, so no rate (the earlier calls' trials over this
    call's time was a figure in the millions); then totals tampered with and re-checksummed: refused."""
    out = tmp_path / "o"
    assert main([*SMALL, "--state-dir", str(out)]) == 0
    capsys.readouterr()
    assert main([*SMALL, "--state-dir", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["trials_per_s"] is None
    state = out / "state.json"
    _rechecksummed(state, lambda b: b["totals"].update(bad=b["totals"].pop("bad")) or b["totals"].pop("bad"))
    refused([*SMALL, "--state-dir", str(out)], ["state.json", "totals", "bad"], capsys, compiles=True)
    _rechecksummed(state, lambda b: b["totals"].update(bad=["x"]))
    refused([*SMALL, "--state-dir", str(out)], ["state.json", "totals"], capsys, compiles=True)


@needs_fifo
@pytest.mark.parametrize("name", ["state.json", ".lock"])
def test_state_file_a_fifo_refused_at_once(name, tmp_path, capsys):
    os.mkfifo(tmp_path / name)
    refused([*SMALL, "--state-dir", str(tmp_path)], [name, "not a regular file"], capsys, max_s=10)


def test_trace_nested_too_deeply(tmp_path, capsys):
    p = tmp_path / "trace.jsonl"
    p.write_text('{"group": ' + "[" * 100_000 + "]" * 100_000 + "}\n", encoding="utf-8")
    refused(["reorder", "-N", "20", "-r", "2", "--trace", str(p)], ["trace", "line 1", "nested too deeply"], capsys,
            max_s=10)


def test_out_chunks_is_a_file(tmp_path, capsys):
    (tmp_path / "chunks").write_text("x")
    refused([*SMALL, "--state-dir", str(tmp_path)], "chunks", capsys, max_s=10)


def test_out_locked_by_another_run_then_free(tmp_path, capsys):
    out = tmp_path / "o"
    out.mkdir()
    with open(out / ".lock", "a+") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        line = refused([*SMALL, "--state-dir", str(out)], "another run", capsys, compiles=True)
        assert "--state-dir" in line
    assert main([*SMALL, "--state-dir", str(out)]) == 0  # lock released: the run proceeds
    first = strict_loads(capsys.readouterr().out)
    assert main([*SMALL, "--state-dir", str(out)]) == 0  # and resumes (its own lock was released too)
    again = strict_loads(capsys.readouterr().out)
    assert first["mc_mean"] == again["mc_mean"]
    assert not [p for p in os.listdir(out) if ".tmp" in p] and (out / "state.json").exists()


@pytest.mark.slow
def test_two_processes_on_one_out_dir(tmp_path):
    """Started together on one --out: each either finishes or is refused with one line; never a crash."""
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
