"""The one lowering of a run (``kernels.lower.lower``): whole runs and epochs with repair alike, an epoch being a
setup of its own (``RunSetup.for_epoch``). Host only (nothing compiles): the outputs themselves are checked bit
for bit in tests/test_run_parts_identity.py."""

from __future__ import annotations

import math

import numpy as np


def _epoch(kind="wipeout", **model):
    from spare_jax.model.failures import FailureModel
    from spare_jax.model.placement import make_placement
    from spare_jax.model.repair import Repair
    from spare_jax.model.runsetup import RunSetup
    from spare_jax.model.scenario import DomainLevel, Scenario

    return RunSetup.for_epoch(make_placement("stacked", 8, 2), FailureModel(**model),
                              Scenario(domains=(DomainLevel(4, 900.0),)), Repair(30.0, "exp"), kind, 500.0)


def test_an_epoch_is_a_setup_lowered_as_a_whole_run_is():
    from spare_jax.kernels.lower import lower

    shape, p = lower(_epoch("depth"))
    assert shape.epoch == "depth" and shape.scheme == "spare" and shape.spare_capacity is None
    assert p.stalls is None and p.pool is None and p.domains is not None  # an epoch has no stalls, no pool
    assert (float(p.phase.ckpt_interval_min), float(p.phase.work_min), float(p.phase.max_time_min)) == \
        (math.inf, math.inf, 500.0)
    assert float(p.phase.ckpt_cost_min) == float(p.phase.restart_min) == 0.0
    assert p.rate.stack.shape == p.rate.holders.shape == (8, 2)


def test_an_epochs_weibull_scale_is_its_own_float32_product():
    """The epoch keeps its scale arithmetic (float32 mean times float32 scale/mean), a whole run its own
    (float64, then float32); a Weibull with k = 1 stays a Weibull clock in an epoch."""
    from spare_jax.kernels.lower import lower
    from spare_jax.model.failures import FailureModel

    model = FailureModel(distribution="weibull", weibull_shape=0.7)
    setup = _epoch(distribution="weibull", weibull_shape=0.7)
    want = np.full(8, model.group_mtbf_min, np.float32) * np.float32(model.weibull_scale_min / model.group_mtbf_min)
    assert lower(setup)[1].clocks.scale.tobytes() == want.tobytes()
    assert lower(_epoch(distribution="weibull", weibull_shape=1.0))[0].weibull


def test_a_whole_runs_repr_does_not_name_the_epoch():
    """A whole run's repr is its resumable state's key: the epoch field is left out of it."""
    from test_run_parts_identity import base

    assert "epoch" not in repr(base()) and base().epoch is None


def test_a_number_keeps_its_name_from_the_setup_to_its_part():
    from spare_jax.kernels.lower import lower
    from test_run_parts_identity import base

    _, p = lower(base(failure_stall_min=4.0, rejoin_stall_min=2.0, spares=3, hardware_repair_min=90.0,
                      job_mtbf_min=5000.0, restart_depth=1.5))
    assert (float(p.stalls.failure_stall_min), float(p.stalls.rejoin_stall_min)) == (4.0, 2.0)
    assert (int(p.pool.spares), float(p.pool.hardware_repair_min)) == (3, 90.0)
    assert (float(p.job.job_mtbf_min), float(p.rate.restart_depth)) == (5000.0, 1.5)
    assert (float(p.phase.ckpt_cost_min), float(p.phase.restart_min), float(p.phase.ckpt_interval_min),
            float(p.phase.work_min)) == (3.0, 12.0, 50.0, 600.0)
