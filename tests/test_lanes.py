"""One event kernel, in lanes (``kernels.events.in_lanes``): a run's results depend on its id only, so stepping a
chunk's runs a few lanes at a time, each lane taking the next run when its own ends, gives every run's outputs
as the chunk stepped all at once; for whole runs (every lever: domains, a job-wide clock, a finite spare pool,
stalls) and for epochs with repair (the kernel's epoch mode, both variants). Bit for bit at XLA's default
optimisation level, which a user's command runs at (the slow test, in a process at that level); at the
suite's level 0 the programs for different lane counts round a few float32 multiply-adds differently (a
fused multiply-add or not), so there the counts agree exactly and the times to float32 rounding."""

import functools
import os
import subprocess
import sys

import jax
import numpy as np
import pytest

from spare_jax.kernels.driver import as_uint32_key_words
from spare_jax.kernels.repair import EpochOptions, epoch_setup
from spare_jax.kernels.run import run_kernel
from spare_jax.kernels.lower import lower
from spare_jax.model.cluster import Cluster
from spare_jax.model.failures import FailureModel
from spare_jax.model.placement import make_placement
from spare_jax.model.repair import Repair
from spare_jax.model.runsetup import RunSetup
from spare_jax.model.scenario import DomainLevel, Scenario
from spare_jax.model.training import Training

RUNS = 40


def _outputs(shape, params, lanes, total=RUNS - 3):
    """Every run's outputs (ids past ``total`` are padding) with ``lanes`` lanes (None: all at once)."""
    fn = jax.jit(functools.partial(run_kernel, shape=shape, lanes=lanes))
    ids = np.arange(RUNS, dtype=np.uint32)
    out = fn(as_uint32_key_words(5), ids, np.uint32(total), params, max_events=np.int32(1 << 20))
    return {k: np.asarray(v) for k, v in out.items()}


def _same(a, b, exact=True):
    assert a.keys() == b.keys()
    for k in a:
        if exact or a[k].dtype.kind != "f":
            np.testing.assert_array_equal(a[k], b[k], err_msg=k)
        else:
            np.testing.assert_allclose(a[k], b[k], rtol=2e-6, err_msg=k)


def _whole_run():
    n = 12
    model = FailureModel(system_mtbf_min=300.0 / n, reference_gpus=1000.0 * n)
    scenario = Scenario(domains=(DomainLevel(4, 3000.0),), job_mtbf_min=4000.0)
    cluster = Cluster(groups=n, model=model, scenario=scenario,
                      repair=Repair(40.0, "exp", spares=2, hardware_repair_min=200.0))
    training = Training(work_hours=6.0, ckpt_cost_min=2.0, restart_min=10.0, reference_gpus=1000.0 * n)
    setup = RunSetup.build(cluster, training, "spare", 3, 60.0)
    import dataclasses

    return dataclasses.replace(setup, failure_stall_min=1.0, rejoin_stall_min=0.5)


def check_whole_runs(exact):
    setup = _whole_run()
    shape, params = lower(setup)
    lockstep = _outputs(shape, params, None)
    assert lockstep["failures"].sum() > 0 and lockstep["spare_wait"].sum() > 0 and lockstep["censored"].sum() == 0
    _same(_outputs(shape, params, 7), lockstep, exact)


def check_epochs(track_depth, exact, lane_counts=(1, 5)):
    n = 12
    model = FailureModel(system_mtbf_min=100.0, reference_gpus=1.0, gpus_per_group=1.0)
    scenario = Scenario(domains=(DomainLevel(3, 900.0),), job_mtbf_min=300.0, microbatches=2)
    shape, params = epoch_setup(make_placement("stacked", n, 3), model, scenario, Repair(30.0, "exp"),
                                EpochOptions(track_depth=track_depth, max_time=150.0))
    lockstep = _outputs(shape, params, RUNS)
    ended = ~lockstep["censored"][: RUNS - 3]
    assert ended.any() and (~ended).any() and lockstep["ended_by_job"].any()  # wiped, job-wide and timed out
    for lanes in lane_counts:
        _same(_outputs(shape, params, lanes), lockstep, exact)


def test_whole_runs_in_lanes_are_the_runs_in_lockstep():
    check_whole_runs(exact=False)


@pytest.mark.parametrize("track_depth", [False, True])
def test_epochs_in_lanes_are_the_epochs_in_lockstep(track_depth):
    check_epochs(track_depth, exact=False)


@pytest.mark.slow
def test_lanes_change_no_bit_at_the_default_optimisation_level():
    flags = " ".join(f for f in os.environ.get("XLA_FLAGS", "").split() if "xla_backend_optimization_level" not in f)
    proc = subprocess.run([sys.executable, __file__], capture_output=True, text=True, timeout=900,
                          env=dict(os.environ, XLA_FLAGS=flags, JAX_PLATFORMS="cpu"),
                          cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-3000:]


if __name__ == "__main__":  # the slow test's child: bit for bit
    check_whole_runs(exact=True)
    check_epochs(False, exact=True, lane_counts=(5,))
    check_epochs(True, exact=True, lane_counts=(1, 5))
    print("ok")
