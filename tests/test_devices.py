"""Same seed, same numbers on 1 and 4 devices (XLA host-platform devices in a subprocess)."""
import json
import os
import subprocess
import sys

import pytest

SCRIPT = r"""
import json, jax, numpy as np
from spare_jax.model.cluster import Sampling
from spare_jax.model.placement import make_placement
from spare_jax.kernels.wipeout import simulate_wipeout
from spare_jax.kernels.overhead import simulate_overhead
from spare_jax.model.scenario import DomainLevel, Scenario
assert len(jax.devices()) == 4, jax.devices()
pl = make_placement("stacked", 48, 3)
out = {}
for devices in (1, 4):
    w = simulate_wipeout(pl, Sampling(3000, 5, devices=devices, chunk_size=256))
    w2 = simulate_wipeout(pl, Sampling(3001, 5, devices=devices, chunk_size=100))
    sc = Scenario(domains=(DomainLevel(4, 20_000.0),), job_mtbf_min=3000.0)
    ws = simulate_wipeout(pl, Sampling(2001, 5, devices=devices, chunk_size=64), scenario=sc)
    o = simulate_overhead(pl, Sampling(600, 5, devices=devices, chunk_size=128))
    o6 = simulate_overhead(make_placement("stacked", 60, 6),
                           Sampling(700, 1, devices=devices, chunk_size=700 if devices == 1 else 64))
    om = simulate_overhead(make_placement("stacked", 40, 4),
                           Sampling(200, 2, devices=devices, chunk_size=200 if devices == 1 else 32),
                           scenario=Scenario(microbatches=4))
    out[devices] = {"hist": w.histogram.tolist(), "up": w.uptime_sum_min, "omega": o.overhead,
                    "om": [om.overhead, om.overhead_sampled, om.threshold_mean.tolist()],
                    "o6": [o6.overhead, o6.overhead_sampled, o6.time_avg_depth],
                    "w2": [w2.histogram.tolist(), w2.uptime_sum_min, w2.uptime_sq_sum_min2],
                    "ws": [ws.histogram.tolist(), ws.uptime_sum_min, ws.ended_by_job, ws.fatal_by_domain],
                    "depth": o.depth_at_wipeout_hist.tolist()}
print(json.dumps(out))
"""


@pytest.mark.slow
def test_one_and_four_devices_give_identical_results():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4", JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["1"] == out["4"]


RUNS_SCRIPT = r"""
import dataclasses, json, jax, numpy as np
from spare_jax.kernels.repair import repair_epochs
from spare_jax.kernels.run_driver import run_each, simulate_runs
from spare_jax.model.cluster import Sampling
from spare_jax.model.placement import make_placement
from spare_jax.model.repair import Repair
from spare_jax.reference.simpyrun import bench_setup
assert len(jax.devices()) == 4, jax.devices()
setup = dataclasses.replace(bench_setup(16, 2, 1), work_min=2000.0)
out = {}
for devices in (1, 2, 4):
    each = run_each(setup, Sampling(300, 3, devices=devices))
    sums = simulate_runs(setup, Sampling(300, 3, devices=devices))["sums"]
    up, work, cens = repair_epochs(make_placement("stacked", 24, 2), Sampling(500, 4, devices=devices),
                                   repair=Repair(30.0))
    out[devices] = {"each": {k: np.asarray(v, np.float64).tolist() for k, v in each.items()},
                    "sums": {k: float(v) for k, v in sums.items()},
                    "repair": [up.tolist(), work.tolist(), cens.tolist()]}
print(json.dumps(out))
"""


@pytest.mark.slow
def test_whole_runs_and_epochs_on_one_two_and_four_devices_are_identical():
    """``run_chunked`` (each run's outputs and repair epochs: every device runs its slice as its own program)
    and ``run_reduced`` (the runs' exact sums) on 1, 2 and 4 CPU devices."""
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4", JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, "-c", RUNS_SCRIPT], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["1"] == out["2"] == out["4"]
