"""Repair without a global restart (SPEC §10.5): the JAX event kernel against the independent NumPy
reference (tests/reference_repair.py), the exact CTMC, the static wipe-out kernel (D -> inf) and the
first-order theory."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

from reference_repair import exact_repair_small, first_order_repair, mean_se, simulate_repair_epochs
from spare_jax.model.cluster import Sampling
from spare_jax.model.failures import FailureModel
from spare_jax.model.placement import make_placement
from spare_jax.model.repair import Repair
from spare_jax.kernels.repair import EpochOptions, simulate_repair
from spare_jax.model.scenario import DomainLevel, Scenario
from spare_jax.theory.repair import (_DownCurves, exact_repair_ctmc, first_order_uptime, p_wipeout_within,
                                     start_shift_min, transient_uptime)
from spare_jax.kernels.wipeout import simulate_wipeout


def model_with_group_mtbf(mtbf_min: float) -> FailureModel:
    """A FailureModel whose group MTBF is ``mtbf_min`` (1000 GPUs per group, 600k reference GPUs)."""
    return FailureModel(system_mtbf_min=mtbf_min * 1000.0 / 600_000.0)


def z(a, se_a, b, se_b=0.0):
    return (a - b) / math.sqrt(se_a ** 2 + se_b ** 2)


# -- exact chain: ours against the reference's, independently written -----------------------------------

@pytest.mark.parametrize("kind,n,r,kw,ref_kw", [
    ("stacked", 8, 2, {}, {}),
    ("block", 9, 3, {}, {}),
    ("stacked", 8, 2, dict(domains=(DomainLevel(2, 500.0),), job_mtbf_min=400.0),
     dict(domain_levels=[(2, 500.0)], job_mtbf_min=400.0)),
    ("stacked", 8, 2, dict(domains=(DomainLevel(2, 500.0),), ring="interleaved"),
     dict(domain_levels=[(2, 500.0)], ring=[0, 2, 4, 6, 1, 3, 5, 7])),
])
def test_ctmc_matches_reference_chain(kind, n, r, kw, ref_kw):
    sc = Scenario(**kw)
    if "ring" in kw:
        assert list(sc.ring_order(n)) == ref_kw["ring"]
    ours = exact_repair_ctmc(make_placement(kind, n, r), model_with_group_mtbf(100.0), 30.0, sc)
    ref = exact_repair_small(n, r, 100.0, 30.0, placement=kind, **ref_kw)
    assert ours["uptime_min"] == pytest.approx(ref["uptime_min"], rel=1e-10)
    assert ours["failures"] == pytest.approx(ref["failures"], rel=1e-10)


# -- the kernel against the exact chain ------------------------------------------------------------------

@pytest.mark.parametrize("kind,n,r,kw", [
    ("stacked", 8, 2, {}),
    pytest.param("stacked", 8, 2, dict(domains=(DomainLevel(2, 500.0),), job_mtbf_min=400.0), marks=pytest.mark.slow),
    pytest.param("block", 6, 3, dict(group_mtbf_min=(60.0, 100.0, 150.0, 80.0, 100.0, 200.0), job_mtbf_min=2000.0),
                 marks=pytest.mark.slow),
])
def test_kernel_matches_exact_chain(kind, n, r, kw):
    sc = Scenario(**kw)
    model = model_with_group_mtbf(100.0)
    pl = make_placement(kind, n, r)
    res = simulate_repair(pl, Sampling(20_000, 11), model=model, scenario=sc, repair=Repair(30.0, "exp"))
    ex = exact_repair_ctmc(pl, model, 30.0, sc)
    assert res.censored == 0
    assert abs(z(res.uptime_mean_min, res.uptime_stderr_min, ex["uptime_min"])) < 4
    assert abs(z(res.failures_mean, res.failures_stderr, ex["failures"])) < 4
    if sc.job_mtbf_min:
        p = res.p_ended_by_job
        se = math.sqrt(max(p * (1 - p), 1e-12) / res.trials)
        assert abs(z(p, se, ex["p_job_end"])) < 4


# -- the kernel against the independent event simulation, each repair law --------------------------------

# fixed: a kernel of its own (the law is static); the fixed law stays in the fast tier through
# test_weibull_clocks_with_repair_match_a_plain_event_loop (a fixed repair against a loop written there)
@pytest.mark.parametrize("law", [pytest.param("fixed", marks=pytest.mark.slow), "exp", "lognormal"])
def test_kernel_matches_reference_simulation(law):
    n, r, mtbf, d = 8, 2, 100.0, 30.0  # exp: the same compiled kernel as the exact-chain test
    res = simulate_repair(make_placement("stacked", n, r), Sampling(20_000, 5), model=model_with_group_mtbf(mtbf),
                          repair=Repair(d, law, 1.0))
    ref = simulate_repair_epochs(n, r, 20_000, 77, group_mtbf_min=mtbf, repair_time_min=d, repair_law=law)
    um, use = mean_se(ref["uptime"])
    fm, fse = mean_se(ref["failures"])
    assert abs(z(res.uptime_mean_min, res.uptime_stderr_min, um, use)) < 4
    assert abs(z(res.failures_mean, res.failures_stderr, fm, fse)) < 4


def _weibull_repair_epochs(n, r, epochs, seed, mean, shape, d):
    """Plain NumPy, one epoch at a time: Weibull group clocks (mean ``mean``, new at the start and at every
    rejoin), a fixed repair ``d``; the epoch ends when r ring-consecutive groups are down (stacked)."""
    from math import gamma

    rng = np.random.default_rng(seed)
    scale = mean / gamma(1 + 1 / shape)
    ups, fails = np.empty(epochs), np.empty(epochs)
    for e in range(epochs):
        nxt = scale * rng.weibull(shape, n)
        down = np.zeros(n, bool)
        nf = 0
        while True:
            g = int(np.argmin(nxt))
            t = nxt[g]
            if down[g]:
                down[g] = False
                nxt[g] = t + scale * rng.weibull(shape)
                continue
            down[g], nxt[g] = True, t + d
            nf += 1
            if any(all(down[(g + j - k) % n] for k in range(r)) for j in range(r)):
                ups[e], fails[e] = t, nf
                break
    return ups, fails


@pytest.mark.parametrize("shape", [pytest.param(0.7, marks=pytest.mark.slow), 2.0])
def test_weibull_clocks_with_repair_match_a_plain_event_loop(shape):
    """Weibull group clocks with repair (a rejoined group draws a new clock), against an event loop written
    in the test."""
    n, r, mtbf, d = 8, 2, 100.0, 30.0
    model = FailureModel(distribution="weibull", weibull_shape=shape, system_mtbf_min=mtbf / 600,
                         reference_gpus=600_000.0)
    res = simulate_repair(make_placement("stacked", n, r), Sampling(20_000, 5), model=model, repair=Repair(d))
    ups, fails = _weibull_repair_epochs(n, r, 6000, 11, mtbf, shape, d)
    um, use = mean_se(ups)
    fm, fse = mean_se(fails)
    assert abs(z(res.uptime_mean_min, res.uptime_stderr_min, um, use)) < 4
    assert abs(z(res.failures_mean, res.failures_stderr, fm, fse)) < 4


# -- D -> inf: the static wipe-out kernel, trial by trial (same clocks) -----------------------------------

@pytest.mark.parametrize("kw", [{}, dict(domains=(DomainLevel(5, 20_000.0),), ring="interleaved", job_mtbf_min=900.0)])
@pytest.mark.slow
def test_never_repaired_equals_static_kernel(kw):
    sc = Scenario(**kw)
    pl = make_placement("stacked", 40 if kw else 60, 3)
    model = FailureModel()
    w = simulate_wipeout(pl, Sampling(1024, 3), model=model, scenario=sc)
    res = simulate_repair(pl, Sampling(1024, 3), model=model, scenario=sc, repair=Repair(1e12, "fixed"))
    assert abs(z(res.uptime_mean_min, res.uptime_stderr_min, w.uptime_mean_min, w.uptime_stderr_min)) < 4
    assert abs(z(res.failures_mean, res.failures_stderr, w.mean, w.stderr)) < 4
    assert res.ended_by_job == w.ended_by_job
    if not kw:  # the same uniform bits: the same epochs exactly
        assert res.failures_mean == w.mean
        assert res.uptime_mean_min == pytest.approx(w.uptime_mean_min, rel=1e-6)


# -- chunk size and censoring ----------------------------------------------------------------------------

@pytest.mark.slow
def test_chunk_size_independent():
    pl = make_placement("stacked", 8, 2)  # the kernel of the exact-chain test with domains (one more compile)
    sc = Scenario(domains=(DomainLevel(2, 500.0),), job_mtbf_min=400.0)
    kw = dict(model=model_with_group_mtbf(100.0), scenario=sc, repair=Repair(30.0, "exp"))
    a = simulate_repair(pl, Sampling(1200, 9, chunk_size=256), **kw)
    b = simulate_repair(pl, Sampling(1200, 9), **kw)
    assert a.chunk_size != b.chunk_size
    for f in ("uptime_mean_min", "uptime_var_min2", "failures_mean", "failures_var", "ended_by_job", "events"):
        assert getattr(a, f) == getattr(b, f), f


@pytest.mark.slow
def test_censored_at_max_events():
    pl = make_placement("stacked", 12, 3)
    res = simulate_repair(pl, Sampling(200, 1), model=model_with_group_mtbf(100.0), repair=Repair(5.0, "exp"),
                          options=EpochOptions(max_events=20))
    assert res.censored > 0
    assert res.events <= 20 * 200


# -- theory ----------------------------------------------------------------------------------------------

def test_shift_closed_forms():
    assert start_shift_min(Repair(30.0, "fixed"), 3) == pytest.approx(20.0)
    assert start_shift_min(Repair(30.0, "exp"), 3, 1 / 3000) == pytest.approx(1.5 / (1 / 3000 + 1 / 30))
    # lognormal with a tiny sigma is (nearly) the fixed law
    assert start_shift_min(Repair(30.0, "lognormal", 0.01), 3) == pytest.approx(20.0, rel=1e-3)
    ref = first_order_repair(600, 3, 3000.0, 60.0)
    ours = first_order_uptime(make_placement("stacked", 600, 3), FailureModel(), Repair(60.0))
    assert ours["rate_per_min"] == pytest.approx(ref["rate_per_min"], rel=1e-12)
    ours_b = first_order_uptime(make_placement("block", 600, 3), FailureModel(), Repair(60.0))
    assert ours_b["rate_per_min"] == pytest.approx(ref["rate_per_min"] / 3, rel=1e-12)


@pytest.mark.parametrize("kind,r", [("stacked", 2), ("stacked", 3), ("block", 2), ("block", 3)])
def test_first_order_close_to_exact_at_small_p(kind, r):
    """p = 0.5 %: the first-order time (with the start shift) is within 3 % of the exact chain."""
    pl = make_placement(kind, 12, r)
    model = model_with_group_mtbf(3000.0)
    first = first_order_uptime(pl, model, Repair(15.0, "exp"))["uptime_min"]
    exact = exact_repair_ctmc(pl, model, 15.0)["uptime_min"]
    assert first == pytest.approx(exact, rel=0.03)


# -- the transient hazard (uniformly valid in D) -----------------------------------------------------------

@pytest.mark.parametrize("law", ["fixed", "exp", pytest.param("lognormal", marks=pytest.mark.slow)])
def test_down_curve_before_the_first_repair_and_stationary(law):
    """No repair can end before the shortest repair: p(t) = 1 - e^{-lambda t} there (fixed law, exact); and
    every law settles at p_inf = lambda D / (1 + lambda D) whatever its shape."""
    lam, d, h = 1 / 300.0, 120.0, 0.25
    cur = _DownCurves(Repair(d, law, 0.5), [lam], h, 40_000)
    cur.extend(40_000)
    p = cur.p[0]
    if law == "fixed":
        t = h * np.arange(int(d / h) + 1)
        np.testing.assert_allclose(p[: t.size], -np.expm1(-lam * t), rtol=2e-3, atol=1e-12)
        assert abs(p[t.size + 40] - (-np.expm1(-lam * (t[-1] + 40 * h)))) > 1e-3  # repairs end after D
    assert p[-1] == pytest.approx(lam * d / (1 + lam * d), rel=2e-3)


@pytest.mark.parametrize("law", ["fixed", "exp", pytest.param("lognormal", marks=pytest.mark.slow)])
def test_transient_is_first_order_at_small_lambda_d(law):
    pl, model = make_placement("stacked", 600, 3), FailureModel()
    tr = transient_uptime(pl, model, Repair(20.0, law))["uptime_min"]
    fo = first_order_uptime(pl, model, Repair(20.0, law))["uptime_min"]
    assert tr == pytest.approx(fo, rel=0.01)


@pytest.mark.parametrize("kind,r", [("stacked", 2), ("stacked", 3), ("block", 2)])
def test_transient_against_exact_chain_across_d(kind, r):
    """Exponential repair, N = 12: the transient hazard stays within 30 % of the exact chain from D = 15 min
    to 10^5 min, and at D = 10^5 (where the first order is off by a factor 10 to 40) it is far closer."""
    pl, model = make_placement(kind, 12, r), model_with_group_mtbf(3000.0)
    for d in (15.0, 300.0, 3000.0, 1e5):
        exact = exact_repair_ctmc(pl, model, d)["uptime_min"]
        tr = transient_uptime(pl, model, Repair(d, "exp"))["uptime_min"]
        fo = first_order_uptime(pl, model, Repair(d, "exp"))["uptime_min"]
        assert abs(tr / exact - 1) < 0.3, (d, tr, exact)
        if d >= 1e5:
            assert abs(tr / exact - 1) < 0.1 * abs(fo / exact - 1), (d, tr, fo, exact)


@pytest.mark.parametrize("kind,r", [("stacked", 3), ("stacked", 8), ("block", 4)])
def test_transient_fixed_repair_longer_than_the_epoch_is_the_static_epoch(kind, r):
    """A fixed repair far longer than the epoch: nothing comes back, so the theory is the exact static
    expected uptime (the static survival up to D, ``theory.expected_uptime``), not the Poisson approximation
    (10 % low at r = 8); with exponential repair of the same mean it stays the approximation."""
    from spare_jax import theory

    pl, model = make_placement(kind, 600, r), FailureModel()
    static = theory.expected_uptime(theory.survival_exact(kind, 600, r), 600, model.group_rate_per_min)
    tr = transient_uptime(pl, model, Repair(1e6))["uptime_min"]
    assert tr == pytest.approx(static, rel=2e-3)
    if r == 8:
        assert transient_uptime(pl, model, Repair(1e6, "exp"))["uptime_min"] < 0.93 * static


@pytest.mark.slow
def test_transient_against_mc_where_first_order_fails():
    """N = 600, r = 2, a fixed repair of 1000 min (longer than the no-repair epoch, ~1.9 h): the MC agrees
    with the theory (there the exact static epoch) within 3 s.e. + 3 %; the first order says 8.6 h."""
    pl, model = make_placement("stacked", 600, 2), FailureModel()
    res = simulate_repair(pl, Sampling(4096, 5), model=model, repair=Repair(1000.0))
    tr = transient_uptime(pl, model, Repair(1000.0))
    assert res.censored == 0
    assert abs(tr["uptime_min"] / res.uptime_mean_min - 1) < 0.03 + 3 * res.uptime_stderr_min / res.uptime_mean_min
    assert first_order_uptime(pl, model, Repair(1000.0))["uptime_min"] > 3 * res.uptime_mean_min
    # P(a wipe-out within 2 h) from the same hazard, against the fraction of MC epochs shorter than 2 h
    mc = simulate_repair(pl, Sampling(4096, 6), model=model, repair=Repair(1000.0),
                         options=EpochOptions(max_time=120.0))
    assert p_wipeout_within(tr, 120.0) == pytest.approx(mc.wiped / mc.trials, abs=0.06)


# -- CLI -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv,word", [
    (["--repair-time", "-1"], "--repair-time"),
    (["--repair-time", "nan"], "--repair-time"),
    (["--repair-time", "5", "--repair-law", "weird"], "--repair-law"),
    (["--repair-time", "5", "--repair-sigma", "0.5"], "--repair-sigma"),
    (["--repair-sigma", "0.5"], "--repair-time"),
    (["--repair-time", "5", "--repair-law", "lognormal", "--repair-sigma", "50"], "--repair-sigma"),
])
def test_cli_bad_repair_input(argv, word, capsys):
    from spare_jax.cli import main

    code = main(["wipeout", "-N", "8", "-r", "2", "--trials", "10", "--quiet", "--json", *argv])
    cap = capsys.readouterr()
    lines = [ln for ln in cap.err.splitlines() if ln.strip()]
    assert code == 2 and cap.out == "" and len(lines) == 1 and word in lines[0], (code, cap.err)


def test_cli_repair_json(capsys):
    from spare_jax.cli import main

    code = main(["wipeout", "-N", "8", "-r", "2", "--mtbf", repr(100 * 1000 / 600_000), "--trials", "4000", "--quiet", "--json",
                 "--repair-time", "30", "--repair-law", "exp"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["censored"] == 0 and out["exact_epoch_uptime_min"] is not None
    assert abs(out["z_score"]) < 4
    assert out["mc_mean"] > 1 and out["theory_epoch_uptime_min"] > 0


# -- acceptance: N = 600, group MTBF 3000 min, against the independent reference's numbers ----------------

REFERENCE = os.path.join(os.path.dirname(__file__), "data", "repair_reference.json")


@pytest.mark.slow
@pytest.mark.parametrize("case,trials", [("a", 4096), ("b", 4096), ("c", 1024)])
def test_acceptance_against_reference(case, trials):
    with open(REFERENCE) as fh:
        c = json.load(fh)["cases"][case]
    res = simulate_repair(make_placement(c["placement"], c["N"], c["r"]), Sampling(trials, 600 + ord(case)),
                          model=model_with_group_mtbf(c["group_mtbf_min"]),
                          repair=Repair(c["repair_time_min"], c["repair_law"]))
    assert res.censored == 0
    zu = z(res.uptime_mean_min, res.uptime_stderr_min, c["mean_uptime_min"], c["se_uptime_min"])
    zf = z(res.failures_mean, res.failures_stderr, c["mean_failures"], c["se_failures"])
    print(f"case {case}: uptime {res.uptime_mean_min:.2f} +- {res.uptime_stderr_min:.2f} vs "
          f"{c['mean_uptime_min']:.2f} +- {c['se_uptime_min']:.2f} (z {zu:+.2f}); failures "
          f"{res.failures_mean:.2f} +- {res.failures_stderr:.2f} vs {c['mean_failures']:.2f} (z {zf:+.2f})")
    assert abs(zu) < 4 and abs(zf) < 4
