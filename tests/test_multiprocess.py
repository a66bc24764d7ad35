"""Multi-process runs (jax.distributed with a local coordinator, gloo collectives): the JSON of one process,
bit for bit, whatever each process's speed; never a number from an incomplete run; a lost peer ends every
process with one line and a non-zero exit."""
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

ARGS = ["wipeout", "-N", "48", "-r", "3", "--trials", "3001", "--seed", "5", "--chunk-size", "256", "--json",
        "--quiet"]
OVERHEAD = ["overhead", "-N", "24", "-r", "4", "--epochs", "301", "--seed", "2", "--chunk-size", "64", "--json",
            "--quiet"]
REPAIR = ["wipeout", "-N", "24", "-r", "2", "--trials", "601", "--seed", "3", "--repair-time", "30", "--chunk-size",
          "64", "--json", "--quiet"]
# many small blocks whose sizes process 0 decides from its own timing (the block size doubles while a block
# takes under 0.5 s): a process slowed down would, left to itself, choose other blocks than its peer
STUTTER = ["wipeout", "-N", "600", "-r", "8", "--trials", "120000", "--seed", "7", "--chunk-size", "512",
           "--json", "--quiet"]
SPLIT_KEYS = ("processes", "trials_per_process", "epochs_per_process")
TIMING_KEYS = ("elapsed_s", "trials_per_s", "epochs_per_s", "events_per_s")


_STARTED = []  # every process a test starts: killed at its end, whatever happened


@pytest.fixture(autouse=True)
def _no_process_outlives_its_test():
    yield
    while _STARTED:
        proc = _STARTED.pop()
        if proc.poll() is None:
            try:
                os.kill(proc.pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
            proc.kill()
            proc.wait()


def _popen(cmd, **kwargs):
    proc = subprocess.Popen(cmd, **kwargs)
    _STARTED.append(proc)
    return proc


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(tmp_path, devices=1):
    return dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}",
                TMPDIR=str(tmp_path), PYTHONUNBUFFERED="1")


def _start(args, env, nproc=2, extra=()):
    port = _free_port()
    return [_popen([sys.executable, "-m", "spare_jax", *args, *extra, "--coordinator",
                              f"127.0.0.1:{port}", "--num-processes", str(nproc), "--process-id", str(i)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            for i in range(nproc)]


def _one_process(args, env):
    one = subprocess.run([sys.executable, "-m", "spare_jax", *args], capture_output=True, text=True, env=env,
                         timeout=300)
    assert one.returncode == 0, one.stderr[-2000:]
    return json.loads(one.stdout)


def _statistics(result):
    return {k: v for k, v in result.items() if k not in TIMING_KEYS + SPLIT_KEYS + ("devices",)}


def _check_split(result, trials, nproc, chunk):
    split = result["trials_per_process" if "trials" in result else "epochs_per_process"]
    assert result["processes"] == nproc
    assert len(split) == nproc and sum(split) == trials
    assert all(abs(t - trials / nproc) <= chunk for t in split)


@pytest.mark.slow
@pytest.mark.parametrize("args", [pytest.param(ARGS, marks=pytest.mark.slow), pytest.param(OVERHEAD, marks=pytest.mark.slow), REPAIR],
                         ids=["wipeout", "overhead", "repair"])
def test_two_processes_give_the_json_of_one(args, tmp_path):
    env = _env(tmp_path, devices=2)
    ref = _one_process(args, env)
    unit = "trials" if "trials" in ref else "epochs"
    assert ref["processes"] == 1 and ref[f"{unit}_per_process"] == [ref[unit]]
    procs = _start(args, env)
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err[-2000:]
        assert err == ""  # native logs (gloo's connection lines) went to a log file, removed after a good run
    chunk = int(args[args.index("--chunk-size") + 1])
    for out, _ in outs:
        got = json.loads(out)
        assert _statistics(got) == _statistics(ref)
        _check_split(got, ref[unit], 2, chunk)
    assert os.listdir(tmp_path) == []


def _stutter(pid, stop_event, pause=0.15, run=0.1):
    """Slow a process down as a loaded host would: stop it for ``pause`` s every ``pause + run`` s."""
    while not stop_event.is_set():
        try:
            os.kill(pid, signal.SIGSTOP)
            time.sleep(pause)
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            return
        time.sleep(run)


@pytest.mark.slow
def test_a_stuttering_process_gives_the_statistics_of_one_process(tmp_path):
    """The defect this guards against: each process sized its blocks from its own timing, so a slowed-down
    process dispatched other blocks and the cross-process sum added statistics of different trial ranges
    (a wrong mean printed as if complete). Now process 0 decides every block for all."""
    env = _env(tmp_path)
    ref = _one_process(STUTTER, env)
    procs = _start(STUTTER, env)
    stop = threading.Event()
    slow = threading.Thread(target=_stutter, args=(procs[1].pid, stop), daemon=True)
    time.sleep(0.5)
    slow.start()
    try:
        outs = [p.communicate(timeout=600) for p in procs]
    finally:
        stop.set()
        slow.join()
        os.kill(procs[1].pid, signal.SIGCONT) if procs[1].poll() is None else None
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err[-2000:]
        got = json.loads(out)
        assert _statistics(got) == _statistics(ref)
        _check_split(got, 120_000, 2, 512)


def _wait_for_progress(path, proc, timeout=240.0):
    """Block until the process writing stderr to ``path`` shows its progress bar (its trials are running)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout and proc.poll() is None:
        with open(path) as fh:
            if "trial" in fh.read():
                return
        time.sleep(0.1)
    raise AssertionError(f"no progress within {timeout} s")


@pytest.mark.slow
@pytest.mark.parametrize("victim", [1, pytest.param(0, marks=pytest.mark.slow)], ids=["peer", "coordinator"])
def test_a_killed_process_leaves_no_json_and_every_process_fails_with_one_line(victim, tmp_path):
    env = _env(tmp_path)
    args = [a for a in STUTTER if a != "--quiet"]
    args[args.index("--trials") + 1] = "400000000"  # far more than runs before the kill
    timeout, port = 10, _free_port()
    errs = [tmp_path / f"stderr{i}.txt" for i in range(2)]
    procs = [_popen([sys.executable, "-m", "spare_jax", *args, "--peer-timeout", str(timeout),
                               "--coordinator", f"127.0.0.1:{port}", "--num-processes", "2", "--process-id", str(i)],
                              stdout=subprocess.PIPE, stderr=open(errs[i], "w"), text=True, env=env)
             for i in range(2)]
    for p, e in zip(procs, errs):
        _wait_for_progress(e, p)
    procs[victim].send_signal(signal.SIGKILL)  # the Python process itself
    t0 = time.monotonic()
    survivor = procs[1 - victim]
    out, _ = survivor.communicate(timeout=3 * timeout + 30)
    elapsed = time.monotonic() - t0
    procs[victim].communicate(timeout=30)
    time.sleep(0.5)  # the watcher of a process that ended without a word writes its line
    err = errs[1 - victim].read_text()
    assert procs[victim].returncode == -signal.SIGKILL
    assert survivor.returncode not in (0, 2), err[-2000:]
    assert out == ""  # no JSON
    assert elapsed < timeout + 15  # documented: --peer-timeout plus a few seconds
    lines = [ln for ln in err.replace("\r", "\n").splitlines() if ln.startswith("spare-jax:")]
    assert len(lines) == 1, err[-2000:]
    assert f"process {victim}" in lines[0].split(":", 3)[-1] and "native log: " in lines[0]
    assert "Traceback" not in err and "stack trace" not in err
    log = lines[0].rsplit("native log: ", 1)[1].strip()
    assert os.path.isfile(log)  # kept for whoever looks into the failure
    victim_lines = [ln for ln in errs[victim].read_text().replace("\r", "\n").splitlines()
                    if ln.startswith("spare-jax:")]
    assert len(victim_lines) == 1 and "ended abnormally" in victim_lines[0]  # said by its watcher


def test_bad_input_in_a_multiprocess_run_writes_no_log(tmp_path):
    from spare_jax.cli import EXIT_BAD_INPUT

    env = _env(tmp_path)
    bad = ["wipeout", "-N", "10", "-r", "3", "--placement", "block", "--trials", "100", "--json", "--quiet"]
    procs = _start(bad, env, nproc=1)
    out, err = procs[0].communicate(timeout=300)
    assert procs[0].returncode == EXIT_BAD_INPUT and out == ""
    assert len(err.strip().splitlines()) == 1 and "block" in err, err
    time.sleep(0.5)  # the log's watcher process has ended
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("flags", [["--coordinator", "127.0.0.1:1"], ["--coordinator", "nohost", "--num-processes",
                                   "2", "--process-id", "0"], ["--coordinator", "127.0.0.1:1", "--num-processes", "2",
                                   "--process-id", "2"], ["--peer-timeout", "0"], ["--peer-timeout", "nan"],
                                   ["--peer-timeout", "5"], ["--verbose"]])
def test_bad_multiprocess_flags_are_one_line_exit_2(flags, capsys):
    """Malformed addresses and ids, a timeout out of range, and the multi-process flags without a multi-process
    run (they would be ignored) are refused."""
    from spare_jax.cli import main

    assert main([*ARGS, *flags]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1


class _Peers:
    """A stand-in coordinator for one process: every peer reports ``record`` (tampered as a test needs)."""

    def __init__(self, tamper):
        self.tamper = tamper
        self.seq = 0

    def next_tag(self, name):
        self.seq += 1
        return f"t{self.seq}"

    def broadcast(self, tag, value):
        return value

    def allgather(self, tag, record):
        if tag.endswith("/params"):  # started alike
            return [record, record]
        if "/sums" in tag:  # a block's statistics: the peer's devices added nothing here
            return [record]
        return [record, self.tamper(dict(record))]


@pytest.mark.parametrize("peer,needle", [
    (lambda r: {"schedule": "0" * 64, "trials": 0}, "different block schedules"),
    (lambda r: {"schedule": r["schedule"], "trials": 1}, "ran 501 trials in all, not 500"),
    (lambda r: dict(r), "ran 1000 trials in all, not 500"),
], ids=["other-blocks", "one-extra-trial", "counted-twice"])
def test_an_incomplete_run_raises_instead_of_returning_numbers(peer, needle, monkeypatch):
    """The completeness check itself: a peer that ran other blocks, or trials that do not add up to the
    total, is an error, never a result."""
    from spare_jax.kernels import multiproc
    from spare_jax.model.cluster import Sampling
    from spare_jax.model.placement import make_placement
    from spare_jax.kernels.wipeout import simulate_wipeout

    monkeypatch.setattr(multiproc, "coordinator", lambda: _Peers(peer))
    with pytest.raises(multiproc.IncompleteRun, match=needle):
        simulate_wipeout(make_placement("stacked", 12, 3), Sampling(500, 1, chunk_size=64))


@pytest.mark.slow
def test_a_multiprocess_run_killed_mid_run_resumes_to_the_uninterrupted_result(tmp_path):
    """--out with two processes: process 0 keeps the state file in its own directory (the other's may be on
    another host); kill one process, restart both, and the statistics are those of one uninterrupted run."""
    env = _env(tmp_path)
    args = list(STUTTER)
    args[args.index("--trials") + 1] = "400000"
    ref = _one_process(args, env)
    outs = [tmp_path / f"out{i}" for i in range(2)]
    port = _free_port()

    def start():
        return [_popen([sys.executable, "-m", "spare_jax", *args, "--state-dir", str(outs[i]), "--peer-timeout",
                                  "10", "--coordinator", f"127.0.0.1:{port}", "--num-processes", "2",
                                  "--process-id", str(i)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env=env) for i in range(2)]

    procs = start()
    state = outs[0] / "state.json"
    t0 = time.monotonic()
    while not state.exists() and time.monotonic() - t0 < 240 and procs[1].poll() is None:
        time.sleep(0.05)
    assert state.exists()
    procs[1].send_signal(signal.SIGKILL)
    first = [p.communicate(timeout=60) for p in procs]
    assert all(p.returncode != 0 for p in procs) and all(out == "" for out, _ in first)
    done = json.loads(state.read_text())["body"]["trials_done"]
    assert 0 < done < 400_000
    port = _free_port()
    procs = start()
    second = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, second):
        assert p.returncode == 0, err[-2000:]
        got = json.loads(out)
        assert _statistics(got) == _statistics(ref)
        assert sum(got["trials_per_process"]) == 400_000 - done  # resumed: only the rest ran
    assert not (outs[1] / "state.json").exists()  # only process 0 keeps a state file


@pytest.mark.slow
def test_processes_started_with_other_parameters_refuse_before_running(tmp_path):
    env = _env(tmp_path)
    port = _free_port()
    procs = [_popen([sys.executable, "-m", "spare_jax", "wipeout", "-N", "48", "-r", "3", "--trials", "3001",
                               "--seed", str(5 + i), "--json", "--quiet", "--coordinator", f"127.0.0.1:{port}", "--num-processes", "2",
                               "--process-id", str(i)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=env) for i in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 3 and out == "", err
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert len(lines) == 1 and "process 1 started with other parameters" in lines[0], err


@pytest.mark.slow
def test_a_closed_stdout_is_not_a_failure():
    """``spare-jax ... | head -c 10``: the reader went away; no traceback, exit 0."""
    proc = subprocess.run(f"{sys.executable} -m spare_jax wipeout -N 12 -r 2 --trials 100 --json --quiet | head -c 10",
                          shell=True, capture_output=True, text=True, env=dict(os.environ, JAX_PLATFORMS="cpu"),
                          timeout=120)
    assert proc.stdout == '{"groups":' and "Traceback" not in proc.stderr
