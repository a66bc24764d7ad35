"""The whole-run kernel's outputs, bit for bit, against a committed record (tests/data/run_parts_identity.npz).

Every setup below runs the event kernel (``kernels.run.run_kernel``, compiled per shape) on a few runs of a
tiny cluster with a fixed seed, and every output array (wall time, computing time, work, counts, stalls,
spare waits, event logs; an epoch's uptime, failures, depth integrals) must equal the recorded one exactly:
same dtype, same bits. The setups cover every part of a run: exponential and Weibull group clocks with kept
and renewed ages, failure domains, a job-wide clock, repair (fixed, exponential, lognormal, none), a finite
spare pool (with and without repair, with hardware repair from a trace), stalls on a failure and on a
rejoin, a proactive restart depth, each scheme (``spare`` r = 1, 2, 3, ``rep``, ``none``, ``elastic``
rebalance and shrink), the event log, epochs with repair (``wipeout`` and ``depth``, through
``kernels.repair.epoch_setup``) and trace replays (repair from the trace, fixed, none, a pool).

The record was written by the tree before the kernel became a composition of parts, so that a refactor of
the kernel must keep every number. To write it again (only on purpose, for a change of the numbers):
``SPARE_JAX_RECORD_RUN_PARTS=1 pytest tests/test_run_parts_identity.py -n 0 -m ''``.

The fast tier runs the one shape of ``FAST`` (a whole run with every part at once, three sets of numbers); the other
setups are in the slow tier (each compiles its own shape)."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import numpy as np
import pytest

DATA = Path(__file__).parent / "data" / "run_parts_identity.npz"
RECORD = os.environ.get("SPARE_JAX_RECORD_RUN_PARTS") == "1"
N, RUNS, SEED, MAX_EVENTS = 8, 8, 5, 1 << 16


def base(**changes):
    from spare_jax.model.runsetup import RunSetup

    values = dict(scheme="spare", groups=N, redundancy=2, microbatches=2, ring=(0, 2, 4, 6, 1, 3, 5, 7),
                  group_mtbf_min=(300.0, 400.0, 350.0, 500.0, 250.0, 450.0, 380.0, 420.0), weibull_shape=1.0,
                  ages="kept", domains=(), job_mtbf_min=None, repair_time_min=40.0, repair_law="fixed",
                  repair_sigma=1.0, spares=None, hardware_repair_min=None, work_min=600.0, ckpt_cost_min=3.0,
                  restart_min=12.0, ckpt_interval_min=50.0, restart_depth=None)
    values.update(changes)
    return RunSetup(**values)


DOMAINS = (((0, 0, 1, 1, 2, 2, 3, 3), 900.0),)
DOMAINS2 = (((0, 0, 1, 1, 2, 2, 3, 3), 900.0), ((0, 0, 0, 0, 1, 1, 1, 1), 2500.0))
ALL = dict(weibull_shape=0.7, ages="renewed", domains=DOMAINS, job_mtbf_min=1500.0, repair_law="exp",
           spares=3, hardware_repair_min=200.0, failure_stall_min=2.0, rejoin_stall_min=1.5)

# name -> (setup changes, extra): whole runs; extra ``log`` keeps the event log, ``capacity`` the pool's size
RUNS_CASES = {
    "all_parts": (ALL, {}),  # FAST: every part at once, one shape for the variants below
    "all_parts_depth": ({**ALL, "restart_depth": 1.5}, {}),
    "all_parts_stalls": ({**ALL, "failure_stall_min": 7.0, "rejoin_stall_min": 9.0, "ckpt_interval_min": 30.0}, {}),
    "exp_kept_fixed": ({}, {}),
    "exp_kept_no_repair": ({"repair_time_min": None}, {}),
    "weibull_kept_lognormal": ({"weibull_shape": 1.6, "repair_law": "lognormal", "repair_sigma": 0.8}, {}),
    "weibull_renewed_no_repair": ({"weibull_shape": 0.6, "ages": "renewed", "repair_time_min": None}, {}),
    "domains_job_depth": ({"domains": DOMAINS2, "job_mtbf_min": 800.0, "restart_depth": 1.5}, {}),
    "stalls_fixed": ({"failure_stall_min": 5.0, "rejoin_stall_min": 3.0}, {}),
    "pool_no_repair": ({"repair_time_min": None, "spares": 2, "hardware_repair_min": 300.0}, {}),
    "pool_domains": ({"spares": 1, "hardware_repair_min": 500.0, "domains": DOMAINS}, {"capacity": 16}),
    "spare_r3_m3": ({"redundancy": 3, "microbatches": 3, "restart_depth": 1.4}, {}),
    "spare_r1": ({"redundancy": 1, "microbatches": 1}, {}),
    "none": ({"scheme": "none", "redundancy": 1, "microbatches": 1, "repair_time_min": None}, {}),
    "rep_r2": ({"scheme": "rep", "redundancy": 2, "microbatches": 1, "domains": DOMAINS}, {}),
    "rep_r2_pool": ({"scheme": "rep", "redundancy": 2, "microbatches": 1, "spares": 2,
                     "hardware_repair_min": 150.0, "failure_stall_min": 1.0}, {}),
    "elastic_rebalance": ({"scheme": "elastic", "redundancy": 1, "microbatches": 4, "job_mtbf_min": 2000.0}, {}),
    "elastic_shrink": ({"scheme": "elastic", "redundancy": 1, "microbatches": 1, "elastic_data": "shrink",
                        "rejoin_stall_min": 2.0}, {}),
    "logged": ({"domains": DOMAINS, "repair_law": "exp"}, {"log": 24}),
}

# name -> (placement kind, r, scenario changes, repair (D, law), track_depth, max_time, weibull shape)
EPOCH_CASES = {
    "epoch_depth": ("stacked", 2, dict(domains=((2, 500.0),), job_mtbf_min=400.0), (30.0, "exp"), True, None, 1.0),
    "epoch_wipeout": ("stacked", 2, {}, (30.0, "fixed"), False, None, 1.0),
    "epoch_wipeout_block_domains": ("block", 2, dict(domains=((2, 500.0),), job_mtbf_min=800.0), (50.0, "lognormal"),
                                    False, 3000.0, 1.0),
    "epoch_depth_block_weibull": ("block", 2, {}, (40.0, "fixed"), True, 5000.0, 0.8),
}

# name -> (setup changes, repair mode): trace replays (N = 8, the periods of ``PERIODS``)
PERIODS = [(0, 20.0, 45.0), (1, 30.0, 31.0), (3, 100.0, 180.0), (4, 100.0, 130.0), (5, 260.0, 300.0),
           (2, 400.0, 420.0), (3, 405.0, 410.0), (6, 500.0, 900.0), (7, 520.0, 530.0), (0, 700.0, 760.0),
           (1, 950.0, 990.0)]
TRACE_CASES = {
    "trace_repair_trace": ({"failure_stall_min": 1.0}, "trace"),
    "trace_repair_fixed_job": ({"job_mtbf_min": 700.0}, "fixed"),
    "trace_repair_none": ({"restart_depth": 1.5}, "none"),
    "trace_pool_hardware": ({"spares": 1, "hardware_repair_min": None}, "fixed"),
    "trace_rep": ({"scheme": "rep", "redundancy": 2, "microbatches": 1}, "trace"),
}

FAST = ("all_parts", "all_parts_depth", "all_parts_stalls")  # one compiled shape


def _words():
    from spare_jax.kernels.driver import as_uint32_key_words

    return as_uint32_key_words(SEED)


def _call(shape, params, trace=None):
    import jax.numpy as jnp

    from spare_jax.kernels.run import jitted_run_kernel

    fn = jitted_run_kernel(shape)
    ids = jnp.arange(RUNS, dtype=jnp.uint32)
    kw = {} if trace is None else {"trace": trace}
    out = fn(_words(), ids, np.uint32(RUNS), params, max_events=np.int32(MAX_EVENTS), **kw)
    return {k: np.asarray(v) for k, v in out.items()}


def run_case(name):
    """Every output array of the setup ``name``."""
    from spare_jax.kernels.lower import lower

    if name in RUNS_CASES:
        changes, extra = RUNS_CASES[name]
        setup = base(**changes)
        shape, params = lower(setup, extra.get("capacity"))
        if extra.get("log"):
            shape = shape._replace(log_events=extra["log"])
        return _call(shape, params)
    if name in EPOCH_CASES:
        from spare_jax.kernels.repair import EpochOptions, epoch_setup
        from spare_jax.model.failures import FailureModel
        from spare_jax.model.placement import make_placement
        from spare_jax.model.repair import Repair
        from spare_jax.model.scenario import DomainLevel, Scenario

        kind, r, scen, (d, law), track, max_time, k = EPOCH_CASES[name]
        scen = dict(scen)
        scen["domains"] = tuple(DomainLevel(*level) for level in scen.get("domains", ()))
        model = FailureModel(system_mtbf_min=200.0 * 1000.0 / 600_000.0,
                             **({} if k == 1.0 else {"distribution": "weibull", "weibull_shape": k}))
        shape, params = epoch_setup(make_placement(kind, N, r), model, Scenario(**scen),
                                    Repair(d, law=law, sigma=0.7), EpochOptions(track_depth=track, max_time=max_time))
        return _call(shape, params)
    from spare_jax.kernels.run_trace import replay_setup, replay_shape, trace_device
    from spare_jax.model.trace import TraceRecords
    from spare_jax.model.trace_units import trace_units

    changes, repair = TRACE_CASES[name]
    setup = base(**changes)
    if repair != "fixed":
        setup = dataclasses.replace(setup, repair_time_min=None)
    node, a, b = zip(*PERIODS)
    rec = TraceRecords.build(N, 1000.0 / 60.0, list(node), [x / 60.0 for x in a], [x / 60.0 for x in b])
    arrays = trace_units(rec.merged(), N).arrays(8)
    shape = replay_shape(setup, repair)
    return _call(shape, lower(replay_setup(setup, repair))[1], trace_device(arrays, setup.ring))


CASES = (*RUNS_CASES, *EPOCH_CASES, *TRACE_CASES)


def _record():
    out = {}
    for name in CASES:
        for key, value in run_case(name).items():
            out[f"{name}/{key}"] = value
    DATA.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(DATA, **out)


@pytest.fixture(scope="module")
def recorded():
    if RECORD:
        _record()
    with np.load(DATA) as data:
        return {k: data[k] for k in data.files}


@pytest.mark.parametrize("name", [n if n in FAST else pytest.param(n, marks=pytest.mark.slow) for n in CASES])
def test_outputs_are_the_recorded_ones_bit_for_bit(name, recorded):
    want = {k.split("/", 1)[1]: v for k, v in recorded.items() if k.split("/", 1)[0] == name}
    got = run_case(name)
    assert want, name
    assert sorted(got) == sorted(want), name
    for key in want:
        a, b = got[key], want[key]
        assert a.dtype == b.dtype and a.shape == b.shape, (name, key)
        assert a.tobytes() == b.tobytes(), (name, key, a, b)


def test_the_setups_do_something():
    # the record is not trivial: failures, restarts, stalls, waits for spares and wipe-outs all happen
    with np.load(DATA) as data:
        d = {k: data[k] for k in data.files}
    total = lambda key: sum(float(v.sum()) for k, v in d.items() if k.endswith("/" + key))  # noqa: E731
    for key in ("failures", "restarts", "wipeouts", "job_failures", "proactive_restarts", "spare_wait",
                "failure_stall", "rejoin_stall", "uptime", "depth_time"):
        assert total(key) > 0, key
    assert len({k.split("/", 1)[0] for k in d}) >= 16
