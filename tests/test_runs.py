"""The whole-run kernel (``kernels.run``) against the independent reference (``reference.refrun``: NumPy, one
run at a time, depth by max-flow, written from SPEC §12 without reading the kernel): mean TTT and slowdown
within 4 standard errors (of the difference) with each lever alone and with every lever on at once, and
exact checks that need no statistics (no failures; chunk independence; censoring refused). A finite spare
pool (``--spares K --hardware-repair H``) is held to the reference the same way, with and without repair."""

import dataclasses
import functools
import math

import pytest

from spare_jax.kernels.run_driver import simulate_runs, summarize
from spare_jax.model.cluster import Cluster, Sampling
from spare_jax.model.failures import FailureModel
from spare_jax.model.repair import Repair
from spare_jax.model.runsetup import RunSetup
from spare_jax.model.scenario import DomainLevel, Scenario
from spare_jax.model.training import Training
from spare_jax.reference.refrun import reference_runs, summary


def _model(n: int, group_mtbf: float, dist: str = "exponential", shape: float = 1.0) -> FailureModel:
    """A failure law with the given per-group MTBF for N groups of 1,000 GPUs."""
    return FailureModel(distribution=dist, system_mtbf_min=group_mtbf / n, reference_gpus=1000.0 * n,
                        weibull_shape=shape)


def _setup(n=16, r=3, group_mtbf=600.0, repair=None, m=1, tau=60.0, work_hours=12.0, scheme="spare",
           restart_depth=None, dist="exponential", shape=1.0, ages="kept", **scen) -> RunSetup:
    cluster = Cluster(groups=n, model=_model(n, group_mtbf, dist, shape),
                      scenario=Scenario(microbatches=m, **scen), repair=repair)
    training = Training(work_hours=work_hours, ckpt_cost_min=2.0, restart_min=10.0, reference_gpus=1000.0 * n)
    return RunSetup.build(cluster, training, scheme, r, tau, restart_depth, ages)


def _compare(setup: RunSetup, kernel_runs: int, ref_runs: int, seed: int = 3) -> dict:
    k = summarize(simulate_runs(setup, Sampling(count=kernel_runs, seed=seed)))
    ref = summary(reference_runs(setup, ref_runs, seed=seed + 1000))
    z_ttt = (k["ttt_min"] / 60.0 - ref["ttt_hours"]) / math.hypot(k["ttt_stderr_min"] / 60.0,
                                                                  ref["ttt_stderr_hours"])
    se_slow = math.hypot(k["slowdown_stderr"], ref["slowdown_stderr"])
    diff = k["slowdown"] - ref["slowdown"]
    # constant depth (rep, none): both ratios are exact up to float32 rounding (rep: rate 1/3 summed in float32,
    # a relative error near 1e-8), and so is the kernel's "standard error": a difference below 1e-6 is none
    z_slow = 0.0 if abs(diff) < 1e-6 * ref["slowdown"] else (diff / se_slow if se_slow > 1e-9 else math.inf)
    assert abs(z_ttt) < 4, (z_ttt, k, ref)
    assert abs(z_slow) < 4, (z_slow, k, ref)
    return {"kernel": k, "reference": ref, "z_ttt": z_ttt, "z_slowdown": z_slow}


@pytest.mark.slow
def test_no_failures_ends_with_the_partial_last_interval():
    """TTT = W + ceil(W/tau) C exactly: the last interval is partial and its checkpoint ends the run."""
    s = _setup(group_mtbf=1e12, tau=70.0, work_hours=48.0)
    res = summarize(simulate_runs(s, Sampling(count=3)))
    assert res["ttt_min"] == pytest.approx(48 * 60 + math.ceil(48 * 60 / 70) * 2.0, rel=1e-6)
    assert res["slowdown"] == pytest.approx(1.0, rel=1e-6)
    assert res["ckpts_mean"] == math.ceil(48 * 60 / 70)


@pytest.mark.slow
def test_results_do_not_depend_on_the_chunk():
    s = _setup(repair=Repair(100.0), m=2)
    a = simulate_runs(s, Sampling(count=40, chunk_size=8))
    b = simulate_runs(s, Sampling(count=40, chunk_size=64))
    assert a["sums"] == b["sums"] and a["runs"] == b["runs"] == 40


@pytest.mark.xdist_group("spare16-fixed")  # the program of tests/test_stall_reference.py's fast case (1000 runs)
def test_censored_runs_are_refused():
    s = _setup(repair=Repair(100.0))
    raw = simulate_runs(s, Sampling(count=1000), max_events=10)
    assert raw["censored"] == 1000
    with pytest.raises(ValueError, match="did not finish"):
        summarize(raw)


@pytest.mark.slow
def test_acceptance_setting_fixed_repair_where_mean_depth_and_harmonic_differ():
    """N = 64, r = 3, m = 4, group MTBF 3,000 min, fixed 300-min repair (E[d] and 1/E[1/d] differ by
    several per cent): TTT and slowdown agree with the independent simulator."""
    _compare(_setup(n=64, r=3, group_mtbf=3000.0, repair=Repair(300.0), m=4, work_hours=12.0), 1500, 400)


@pytest.mark.slow
def test_every_lever_at_once():
    """repair + m + D_max + domains + job-wide + lemons + Weibull kept ages, all on."""
    _compare(_setup(n=16, r=3, group_mtbf=1500.0, repair=Repair(120.0, "lognormal", 0.5), m=4,
                    restart_depth=1.5, dist="weibull", shape=0.7, ages="kept",
                    domains=(DomainLevel(4, 6000.0),), job_mtbf_min=3000.0, lemon_fraction=0.125,
                    lemon_factor=4.0), 1500, 500)


@pytest.mark.slow
@pytest.mark.parametrize("case", ["repair+m", "repair+m+dmax", "repair+m+weibull-kept",
                                  "repair+m+domains+job+lemons", "weibull-renewed-scenario", "none-exp",
                                  "rep-repair", "elastic-rebalance", "elastic-shrink"])
def test_each_lever_against_the_reference(case):
    base = dict(n=16, r=3, group_mtbf=800.0, repair=Repair(120.0), m=4)
    kw = {
        "repair+m": base,
        "repair+m+dmax": dict(base, restart_depth=1.5),
        "repair+m+weibull-kept": dict(base, dist="weibull", shape=0.7, ages="kept"),
        "repair+m+domains+job+lemons": dict(base, domains=(DomainLevel(4, 4000.0),), job_mtbf_min=3000.0,
                                            lemon_fraction=0.125, lemon_factor=4.0),
        "weibull-renewed-scenario": dict(n=16, r=3, group_mtbf=800.0, dist="weibull", shape=1.5, ages="renewed",
                                         ring="interleaved", domains=(DomainLevel(4, 4000.0),)),
        "none-exp": dict(n=16, scheme="none", group_mtbf=4000.0),
        "rep-repair": dict(n=15, r=3, scheme="rep", group_mtbf=800.0, repair=Repair(120.0, "exp")),
        "elastic-rebalance": dict(n=16, scheme="elastic", group_mtbf=800.0, repair=Repair(120.0), m=4),
        "elastic-shrink": dict(n=16, scheme="elastic", group_mtbf=800.0, repair=Repair(120.0)),
    }[case]
    s = _setup(**kw)
    if case == "elastic-shrink":
        s = dataclasses.replace(s, elastic_data="shrink")
    _compare(s, 1500, 400)


# a setting where a finite spare pool binds: 16 groups failing every 37.5 min between them, a failed group's
# node set away for H = 600 min (about 16 failures per H), exponential 60-min repair, tau 60, C 2, R 10
SPARES_BIND = dict(n=16, r=3, group_mtbf=600.0, work_hours=12.0)


def _pool(repair_time=None, law="fixed", spares=None, hardware=600.0):
    """The repair law with a spare pool of ``spares`` (None: unlimited) and hardware repair ``hardware``."""
    if spares is None:
        return None if repair_time is None else Repair(repair_time, law)
    return Repair(repair_time, law, spares=spares, hardware_repair_min=hardware)


@functools.lru_cache(maxsize=None)
def _spares_bind(spares):
    """Kernel (400 runs) against the reference (200 runs) at ``SPARES_BIND`` with ``spares`` (None:
    unlimited); cached, so that the ordering test reuses the three comparisons (one compile each)."""
    return _compare(_setup(repair=_pool(60.0, "exp", spares), **SPARES_BIND), 400, 200)


@pytest.mark.xdist_group("spare16-exp-pool")  # the program of tests/test_compiles.py's whole runs
@pytest.mark.parametrize("spares", [pytest.param(0, marks=pytest.mark.slow), 5,
                                    pytest.param(None, marks=pytest.mark.slow)])
def test_spare_pool_against_the_reference_where_it_binds(spares):
    res = _spares_bind(spares)
    stall = res["kernel"]["spare_wait_mean"]
    assert (stall > 0 and res["reference"]["spare_wait_min"] > 0) if spares is not None else stall == 0


@pytest.mark.slow
def test_spare_pool_orders_the_time_to_train():
    """TTT(spares 0) > TTT(spares 5) > TTT(unlimited), each gap more than 4 standard errors, and the stall
    (restarts waiting for spares beyond R) shrinks with the pool."""
    k0, k5, kinf = (_spares_bind(k)["kernel"] for k in (0, 5, None))
    for hi, lo in ((k0, k5), (k5, kinf)):
        gap = (hi["ttt_min"] - lo["ttt_min"]) / math.hypot(hi["ttt_stderr_min"], lo["ttt_stderr_min"])
        assert gap > 4, (gap, hi["ttt_min"], lo["ttt_min"])
    assert k0["spare_wait_mean"] > k5["spare_wait_mean"] > 0 == kinf["spare_wait_mean"]


@pytest.mark.slow
def test_spare_pool_results_do_not_depend_on_the_chunk():
    """The ring of return times and the waiting tickets are per run: one chunk of 400 runs and chunks of 64
    give the same sums (the chunk of 400 is the compile of the comparison above)."""
    s = _setup(repair=_pool(60.0, "exp", 5), **SPARES_BIND)
    a = simulate_runs(s, Sampling(count=400, seed=3))
    b = simulate_runs(s, Sampling(count=400, seed=3, chunk_size=64))
    assert a["sums"] == b["sums"] and a["sums"]["spare_wait"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("scheme", ["none", "spare"])
def test_spare_pool_without_repair(scheme):
    """No repair: a failed group claims a spare and holds it, down, until the next restart, which waits for
    every down group's spare. ``none`` (every failure a wipe-out) and ``spare`` (r = 3)."""
    kw = (dict(n=16, scheme="none", group_mtbf=2000.0, repair=_pool(spares=2)) if scheme == "none" else
          dict(n=16, r=3, group_mtbf=600.0, repair=_pool(spares=3)))
    out = _compare(_setup(work_hours=12.0, **kw), 400, 200)
    assert out["kernel"]["spare_wait_mean"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("case", ["fixed-spares0", "fixed-spares5", "lognormal-spares2-domains",
                                  "every-lever-spares3", "rep-spares1", "none-spares0-norepair"])
def test_spare_pool_against_the_reference(case):
    base = dict(SPARES_BIND, work_hours=24.0)
    kw = {
        "fixed-spares0": dict(base, repair=_pool(60.0, "fixed", 0, 900.0)),
        "fixed-spares5": dict(base, repair=_pool(60.0, "fixed", 5, 900.0)),
        # a domain event downs several groups at once: their node sets return at one instant, and the
        # groups take spares (or queue) in order of physical id
        "lognormal-spares2-domains": dict(base, repair=_pool(120.0, "lognormal", 2, 1200.0), m=4,
                                          domains=(DomainLevel(4, 2000.0),), ring="interleaved"),
        "every-lever-spares3": dict(n=16, r=3, group_mtbf=1500.0, repair=_pool(120.0, "lognormal", 3, 900.0),
                                    m=4, restart_depth=1.5, dist="weibull", shape=0.7, ages="kept",
                                    domains=(DomainLevel(4, 6000.0),), job_mtbf_min=3000.0, lemon_fraction=0.125,
                                    lemon_factor=4.0),
        "rep-spares1": dict(n=15, r=3, scheme="rep", group_mtbf=800.0, repair=_pool(120.0, "exp", 1, 600.0)),
        "none-spares0-norepair": dict(n=16, scheme="none", group_mtbf=4000.0, repair=_pool(spares=0)),
    }[case]
    _compare(_setup(**kw), 1500, 500)
