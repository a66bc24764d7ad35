"""Stalls in the whole-run kernel (``kernels.run``) against the independent reference (``reference.refrun``,
which implements the stall rules separately from the model's text alone).

N = 16, r = 3, group MTBF 200 min (a group failure every 12.5 min), W = 48 h, C = 2, R = 10, tau = 60, in
five cases: (a) a fixed 30-min repair with a 1-min failure stall (also on a 12-hour run, with fewer runs: the
fast tier's case); (b) the same with m = 4, a 2-min stall and a
0.5-min rejoin stall; (c) elastic rebalance, m = 4 (the 30-min repair), a 3-min stall; (d) the paper model
(``spare``, no repair) with a 0.5-min stall; (e) a pool of 2 spares with 300-min hardware repair (the
30-min repair once a group has its spare), m = 4, a 1-min stall.

Each case compares the mean TTT, the mean failure stall, the mean rejoin stall and the mean wait of the
restarts for spares per run, within 4 standard errors of the difference. The kernel reports standard errors
for TTT only; for the other means the difference's standard error is the reference's per-run standard
deviation times sqrt(1/n_kernel + 1/n_reference) (both sides sample the same law when they agree). A mean
that is exactly 0 in the reference (no rejoin stall, no spare wait) must be 0 in the kernel too.

The setups are built by ``RunSetup.build`` and the stalls set on the setup itself, so the test reads the
engine's run and nothing of how a command line or a preset reaches it. ``pytest -s`` prints each case's
numbers on both sides, with the z-scores.
"""

import dataclasses
import functools
import math

import numpy as np
import pytest

from spare_jax.kernels.run_driver import simulate_runs, summarize
from spare_jax.model.cluster import Cluster, Sampling
from spare_jax.model.failures import FailureModel
from spare_jax.model.repair import Repair
from spare_jax.model.runsetup import RunSetup
from spare_jax.model.scenario import Scenario
from spare_jax.model.training import Training
from spare_jax.reference.refrun import reference_runs, summary

N, R_SHARDS, GROUP_MTBF, TAU = 16, 3, 200.0, 60.0

# case -> (setup keywords, reference runs, kernel runs)
CASES = {
    "a-repair-stall": (dict(repair=Repair(30.0), stall=1.0), 300, 2000),
    "a-short-run": (dict(repair=Repair(30.0), stall=1.0, work_hours=12.0), 150, 1000),
    "b-m4-stall-rejoin": (dict(repair=Repair(30.0), m=4, stall=2.0, rejoin=0.5), 300, 2000),
    "c-elastic-rebalance": (dict(scheme="elastic", repair=Repair(30.0), m=4, stall=3.0), 600, 2000),
    "d-paper-model": (dict(stall=0.5), 200, 2000),
    "e-spare-pool": (dict(repair=Repair(30.0, spares=2, hardware_repair_min=300.0), m=4, stall=1.0), 200, 2000),
}

# reference counter -> kernel summary key, both minutes per run
STALL_KEYS = {"failure_stall_min": "failure_stall_mean", "rejoin_stall_min": "rejoin_stall_mean",
              "spare_wait_min": "spare_wait_mean"}


def stall_setup(scheme="spare", m=1, repair=None, stall=0.0, rejoin=0.0, work_hours=48.0) -> RunSetup:
    cluster = Cluster(groups=N, model=FailureModel(system_mtbf_min=GROUP_MTBF / N, reference_gpus=1000.0 * N),
                      scenario=Scenario(microbatches=m), repair=repair)
    training = Training(work_hours=work_hours, ckpt_cost_min=2.0, restart_min=10.0, reference_gpus=1000.0 * N)
    setup = RunSetup.build(cluster, training, scheme, R_SHARDS, TAU)
    return dataclasses.replace(setup, failure_stall_min=stall, rejoin_stall_min=rejoin)


@functools.lru_cache(maxsize=None)
def reference(case: str) -> dict:
    kw, runs, _ = CASES[case]
    return reference_runs(stall_setup(**kw), runs, seed=101)


def reference_line(case: str) -> str:
    """The reference's numbers for one case, in minutes per run: mean TTT and every stall mean, each with its
    standard error."""
    out = reference(case)

    def mean_se(x):
        x = np.asarray(x, float)
        return f"{x.mean():.2f} +- {x.std(ddof=1) / math.sqrt(x.size):.2f}"

    return (f"{case}: refrun, {out['ttt_min'].size} runs: TTT {mean_se(out['ttt_min'])} min, failure stall "
            f"{mean_se(out['failure_stall_min'])}, rejoin stall {mean_se(out['rejoin_stall_min'])}, spare wait "
            f"{mean_se(out['spare_wait_min'])}")


def compare(case: str) -> dict:
    kw, _, kernel_runs = CASES[case]
    ref = reference(case)
    print(reference_line(case))
    k = summarize(simulate_runs(stall_setup(**kw), Sampling(count=kernel_runs, seed=7)))
    sm = summary(ref)
    z = {"ttt": (k["ttt_min"] / 60.0 - sm["ttt_hours"]) / math.hypot(k["ttt_stderr_min"] / 60.0,
                                                                     sm["ttt_stderr_hours"])}
    for ref_key, k_key in STALL_KEYS.items():
        x = np.asarray(ref[ref_key], float)
        got = k[k_key]
        if not x.any():
            z[ref_key] = 0.0 if abs(got) < 1e-6 else math.inf
            continue
        se = x.std(ddof=1) * math.sqrt(1.0 / x.size + 1.0 / kernel_runs)
        z[ref_key] = (got - x.mean()) / se
    print(f"{case}: kernel TTT {k['ttt_min']:.2f} +- {k['ttt_stderr_min']:.2f}, "
          + ", ".join(f"{k_key} {k[k_key]:.2f}" for k_key in STALL_KEYS.values())
          + "; z " + ", ".join(f"{key} {v:+.2f}" for key, v in z.items()))
    assert all(abs(v) < 4 for v in z.values()), (case, z, k, sm)
    return z


@pytest.mark.xdist_group("spare16-fixed")  # one program with tests/test_runs.py's censored runs
@pytest.mark.parametrize("case", ["a-short-run", pytest.param("a-repair-stall", marks=pytest.mark.slow),
                                  pytest.param("d-paper-model", marks=pytest.mark.slow)])
def test_stalls_against_the_reference(case):
    compare(case)


@pytest.mark.slow
@pytest.mark.parametrize("case", ["b-m4-stall-rejoin", "c-elastic-rebalance", "e-spare-pool"])
def test_stalls_against_the_reference_slow(case):
    compare(case)


def test_the_fast_case_stalls():
    """Guard the fast comparison's power: (a) on a 12-hour run stalls and has no rejoin stall."""
    out = reference("a-short-run")
    assert out["failure_stall_min"].mean() > 50 and out["rejoin_stall_min"].sum() == 0


@pytest.mark.slow
def test_the_full_case_stalls():
    """(a) on the 48-hour run stalls and has no rejoin stall."""
    out = reference("a-repair-stall")
    assert out["failure_stall_min"].mean() > 100 and out["rejoin_stall_min"].sum() == 0


@pytest.mark.slow
def test_the_paper_model_case_stalls_and_restarts():
    """Guard the power of (d): it stalls and restarts."""
    out = reference("d-paper-model")
    assert out["failure_stall_min"].mean() > 50 and out["restarts"].mean() > 10
