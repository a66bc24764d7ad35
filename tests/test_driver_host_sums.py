"""The driver's device-reduced block has no collective inside it (``kernels.driver.make_block_fn``): each
device returns its own statistics and the host adds them exactly. A collective there waits in XLA's CPU
rendezvous, which aborts the whole process (signal 6) once one device is 40 s behind another, as a busy
core makes it; the host's wait has no such limit. The slow tier runs a long whole-run ``ttt`` on one
device per core with one core kept busy by another process."""
import json
import os
import subprocess
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh

from spare_jax.kernels import exact_sums
from spare_jax.kernels.driver import make_block_fn
from spare_jax.kernels.host_sums import device_totals


def _parts():
    def per_trial(aux, ids):
        return ids.astype(jnp.float32) * aux

    def reduce(out, valid):
        sx = exact_sums.exact_sums_f32(out, valid)[0]
        return {"sx": sx, "n": valid.sum(dtype=jnp.int32)[None]}

    def zeros():
        return {"sx": jnp.zeros(exact_sums.X_LIMBS, jnp.uint32), "n": jnp.zeros(1, jnp.int32)}

    def merge(a, b):
        return {"sx": exact_sums.merge(a["sx"], b["sx"]), "n": a["n"] + b["n"]}

    return per_trial, reduce, merge, zeros


def test_the_block_program_holds_no_collective_and_the_host_sums_are_exact():
    per_trial, reduce, merge, zeros = _parts()
    mesh = Mesh(np.array(jax.devices()[:1]), ("d",))
    block = make_block_fn(per_trial, reduce, merge, zeros, 8, mesh)
    args = (np.float32(0.5), np.uint32(0), np.uint32(20), np.int32(3))
    text = block.lower(*args).as_text()
    assert "all_reduce" not in text and "all-reduce" not in text and "collective" not in text
    stats, ran = block(*args)
    host = device_totals(stats, {"sx"})
    assert host["n"] == [20] and int(np.asarray(ran).sum()) == 20
    want = sum(0.5 * i for i in range(20))  # exact in units of 2^-X_UNIT_SHIFT
    assert host["sx"] / 2.0 ** exact_sums.X_UNIT_SHIFT == want


@pytest.mark.slow
def test_long_whole_runs_on_one_device_per_core_survive_a_busy_core(tmp_path):
    """One core kept busy by another process while whole runs of a long step (N = 1,000, Weibull clocks,
    ages kept) run on one JAX CPU device per core: the run finishes with an answer, never a native abort."""
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        env = dict(os.environ, SPARE_JAX_CPU_DEVICES="2", SPARE_JAX_COMPILE_CACHE="off")
        env.pop("XLA_FLAGS", None)
        t0 = time.time()
        proc = subprocess.run([sys.executable, "-m", "spare_jax", "ttt", "-N", "1000", "-r", "5", "--scheme", "spare",
                               "--restart", "60", "--distribution", "weibull", "--weibull-shape", "0.78",
                               "--ckpt-cost", "1", "--work-hours", "100", "--runs", "8", "--json", "--quiet"],
                              capture_output=True, text=True, env=env, timeout=1500)
        elapsed = time.time() - t0
    finally:
        busy.kill()
        busy.wait()
    assert proc.returncode == 0, f"exit {proc.returncode} after {elapsed:.0f} s: {proc.stderr[-600:]}"
    out = json.loads(proc.stdout)
    assert out["runs"] == 8 and out["mc_ttt_hours"] > 100
