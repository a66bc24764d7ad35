"""Two local CPU processes (jax.distributed with a local coordinator, gloo collectives) give the JSON of one
process, bit for bit (issue 14)."""
import json
import os
import socket
import subprocess
import sys

ARGS = ["wipeout", "-N", "48", "-r", "3", "--trials", "3001", "--seed", "5", "--chunk-size", "256", "--json",
        "--quiet"]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


import pytest

OVERHEAD = ["overhead", "-N", "24", "-r", "4", "--trials", "301", "--seed", "2", "--chunk-size", "64", "--json",
            "--quiet"]


@pytest.mark.parametrize("args", [ARGS, OVERHEAD], ids=["wipeout", "overhead"])
def test_two_processes_give_the_json_of_one(args):
    env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS="--xla_force_host_platform_device_count=2")
    one = subprocess.run([sys.executable, "-m", "spare_jax", *args], capture_output=True, text=True, env=env,
                         timeout=300)
    assert one.returncode == 0, one.stderr[-2000:]
    port = _free_port()
    procs = [subprocess.Popen([sys.executable, "-m", "spare_jax", *args, "--coordinator", f"127.0.0.1:{port}",
                               "--num-processes", "2", "--process-id", str(i)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for i in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err[-2000:]
    ref = json.loads(one.stdout)
    for out, _ in outs:
        got = json.loads(out)
        ref_cmp = {k: v for k, v in ref.items() if k not in ("elapsed_s", "devices", "trials_per_s")}
        got_cmp = {k: v for k, v in got.items() if k not in ("elapsed_s", "devices", "trials_per_s")}
        assert got_cmp == ref_cmp


@pytest.mark.parametrize("flags", [["--coordinator", "127.0.0.1:1"], ["--coordinator", "nohost", "--num-processes",
                                   "2", "--process-id", "0"], ["--coordinator", "127.0.0.1:1", "--num-processes", "2",
                                   "--process-id", "2"]])
def test_bad_multiprocess_flags_are_one_line_exit_2(flags, capsys):
    from spare_jax.cli import main

    assert main([*ARGS, *flags]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1
