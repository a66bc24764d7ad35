"""Self-checks of the independent repair reference (tests/reference_repair.py).

The reference is checked against the exact small-N Markov chain, against the no-repair
model of reference_scenario.py (repair time -> infinity), against the first-order
stationary rate, and against exact identities of the spare pool and repair laws.
Statistical checks use 4 standard errors; every seed is fixed.
"""

import math

import numpy as np
import pytest

import reference_repair as rr
import reference_scenario as rs

Z = 4.0


def _z(sim, exact):
    m, se = sim
    return (m - exact) / se


@pytest.mark.parametrize(
    "n, r, mtbf, d, kw",
    [
        (4, 2, 100.0, 20.0, {}),
        (6, 3, 100.0, 30.0, {}),
        (6, 2, 100.0, 15.0, {"placement": "block", "ring": [3, 0, 5, 1, 4, 2]}),
        (6, 2, [60.0, 80.0, 100.0, 120.0, 140.0, 160.0], 15.0,
         {"domain_levels": [(3, 400.0), (4, 700.0)], "job_mtbf_min": 1500.0}),
        (5, 2, 100.0, 20.0, {"domain_levels": [(2, 300.0)],
                             "ring": rs.interleaved_ring(5, 2)}),
    ],
)
def test_simulation_matches_exact_ctmc(n, r, mtbf, d, kw):
    ex = rr.exact_repair_small(n, r, mtbf, d, **kw)
    out = rr.simulate_repair_epochs(n, r, 4000, seed=11 + n + r, group_mtbf_min=mtbf,
                                    repair_time_min=d, repair_law="exp", **kw)
    assert not out["censored"].any()
    if kw.get("job_mtbf_min") is None:
        assert not out["ended_by_job"].any()
    else:
        assert out["ended_by_job"].any() and not out["ended_by_job"].all()
    zu = _z(rr.mean_se(out["uptime"]), ex["uptime_min"])
    zf = _z(rr.mean_se(out["failures"]), ex["failures"])
    assert abs(zu) < Z, (ex, rr.mean_se(out["uptime"]), zu)
    assert abs(zf) < Z, (ex, rr.mean_se(out["failures"]), zf)


def test_exact_ctmc_limits():
    # r = 1: the first failure ends the epoch.
    ex = rr.exact_repair_small(5, 1, 300.0, 10.0)
    assert ex["uptime_min"] == pytest.approx(60.0, rel=1e-12)
    assert ex["failures"] == pytest.approx(1.0, rel=1e-12)
    # Repair -> infinity: the no-repair model (exact subset enumeration in reference_scenario).
    for n, r, pl, job in [(6, 2, "stacked", None), (8, 3, "stacked", None),
                          (6, 3, "block", 2000.0), (7, 2, "stacked", 500.0)]:
        ex = rr.exact_repair_small(n, r, 3000.0, 1e15, placement=pl, job_mtbf_min=job)
        want = rs.exact_uptime_no_domains(n, r, 3000.0, job, placement=pl)
        assert ex["uptime_min"] == pytest.approx(want, rel=1e-9)
    # N = r = 2, exponential repair, by hand: T0 = 1/(2l) + T1,
    # T1 = (1 + mu T0)/(l + mu)  ->  T0 = (3l + mu)/(2 l^2);  F0 = 1 + F1, F1 = (l + mu F0)/(l + mu)
    # -> F0 = 2 + mu/l.
    lam, mu = 1 / 50.0, 1 / 7.0
    ex = rr.exact_repair_small(2, 2, 50.0, 7.0)
    assert ex["uptime_min"] == pytest.approx((3 * lam + mu) / (2 * lam * lam), rel=1e-12)
    assert ex["failures"] == pytest.approx(2 + mu / lam, rel=1e-12)


def test_huge_repair_reduces_to_no_repair_model():
    n, r, gm = 8, 2, 3000.0
    out = rr.simulate_repair_epochs(n, r, 6000, seed=5, group_mtbf_min=gm,
                                    repair_time_min=1e12, repair_law="fixed")
    want = rs.exact_uptime_no_domains(n, r, gm)
    assert abs(_z(rr.mean_se(out["uptime"]), want)) < Z
    # Failures = T of the no-repair model: compare with reference_scenario's simulation.
    st = rs.simulate_epochs(n, r, 6000, np.random.default_rng(6), group_mtbf_min=gm)
    (m1, s1), (m2, s2) = rr.mean_se(out["failures"]), rr.mean_se(st["t_count"])
    assert abs(m1 - m2) < Z * math.hypot(s1, s2)
    # With domains and a job-wide process too (exponential huge repair as well).
    lv = [(4, 9000.0)]
    out = rr.simulate_repair_epochs(n, 3, 6000, seed=7, group_mtbf_min=gm,
                                    repair_time_min=1e12, repair_law="exp",
                                    domain_levels=lv, job_mtbf_min=4000.0)
    st = rs.simulate_epochs(n, 3, 6000, np.random.default_rng(8), group_mtbf_min=gm,
                            domain_levels=lv, job_mtbf_min=4000.0)
    for a, b in [("uptime", "uptime"), ("failures", "t_count"),
                 ("ended_by_job", "ended_by_job")]:
        (m1, s1), (m2, s2) = rr.mean_se(out[a]), rr.mean_se(st[b])
        assert abs(m1 - m2) < Z * math.hypot(s1, s2), (a, m1, s1, m2, s2)


@pytest.mark.parametrize("placement, r", [("stacked", 2), ("block", 2), ("stacked", 3)])
def test_first_order_rate(placement, r):
    # Fast repair (p small) and a start transient (~D) negligible against the uptime.
    n, gm = 60, 3000.0
    d = 10.0 if r == 2 else 60.0
    fo = rr.first_order_repair(n, r, gm, d, placement=placement)
    out = rr.simulate_repair_epochs(n, r, 600, seed=3, group_mtbf_min=gm, repair_time_min=d,
                                    placement=placement)
    m, se = rr.mean_se(out["uptime"])
    assert se < 0.06 * m
    assert abs(fo["mean_uptime_min"] * 1.0 / m - 1) < 0.2, (fo, m, se)


def test_spare_pool_identities():
    n, r, gm = 12, 2, 500.0
    lv = [(3, 4000.0)]
    base = rr.simulate_repair_epochs(n, r, 300, seed=21, group_mtbf_min=gm, repair_time_min=20.0,
                                     repair_law="exp", domain_levels=lv)
    # Instant hardware repair: N spares never run dry, and even one spare serves every
    # group of a domain event at the failure instant (through the FIFO queue): the very
    # same epochs as unlimited spares.
    for s in (n, 1):
        same = rr.simulate_repair_epochs(n, r, 300, seed=21, group_mtbf_min=gm,
                                         repair_time_min=20.0, repair_law="exp",
                                         domain_levels=lv, spares=s, hardware_repair_min=0.0)
        np.testing.assert_array_equal(same["uptime"], base["uptime"])
        np.testing.assert_array_equal(same["failures"], base["failures"])
    # No spares and FIFO: each group waits for its own hardware, so spares=0 with fixed
    # hardware repair H and fixed D is plain fixed repair of H + D (same draws).
    zero = rr.simulate_repair_epochs(n, r, 300, seed=22, group_mtbf_min=gm, repair_time_min=15.0,
                                     domain_levels=lv, spares=0, hardware_repair_min=25.0)
    plain = rr.simulate_repair_epochs(n, r, 300, seed=22, group_mtbf_min=gm,
                                      repair_time_min=40.0, domain_levels=lv)
    np.testing.assert_allclose(zero["uptime"], plain["uptime"], rtol=1e-9)
    np.testing.assert_array_equal(zero["failures"], plain["failures"])
    # One spare sits between none and unlimited.
    res = {}
    for s in (0, 1, None):
        o = rr.simulate_repair_epochs(n, r, 3000, seed=23, group_mtbf_min=gm,
                                      repair_time_min=15.0, spares=s,
                                      hardware_repair_min=None if s is None else 100.0)
        res[s] = rr.mean_se(o["uptime"])
    for lo, hi in [(0, 1), (1, None)]:
        (m1, s1), (m2, s2) = res[lo], res[hi]
        assert m2 - m1 > 3 * math.hypot(s1, s2), res


def test_repair_laws():
    stream = rr._Stream(np.random.default_rng(0))
    draw = rr._repair_sampler(stream, "lognormal", 30.0, 1.2)
    x = np.array([draw() for _ in range(200000)])
    m, se = rr.mean_se(x)
    assert abs(m - 30.0) < Z * se
    assert np.median(x) == pytest.approx(30.0 * math.exp(-0.72), rel=0.02)
    # sigma = 0: lognormal is the fixed law (the exponential stream is untouched).
    kw = dict(group_mtbf_min=200.0, repair_time_min=30.0)
    a = rr.simulate_repair_epochs(10, 2, 200, seed=4, repair_law="fixed", **kw)
    b = rr.simulate_repair_epochs(10, 2, 200, seed=4, repair_law="lognormal", repair_sigma=0.0, **kw)
    np.testing.assert_allclose(a["uptime"], b["uptime"], rtol=1e-9)
    np.testing.assert_array_equal(a["failures"], b["failures"])


def test_censoring_and_job_end():
    out = rr.simulate_repair_epochs(8, 2, 2000, seed=9, group_mtbf_min=300.0, repair_time_min=10.0,
                                    job_mtbf_min=2000.0, max_time_min=1000.0)
    c, j = out["censored"], out["ended_by_job"]
    assert c.any() and j.any() and not (c & j).any()
    assert np.all(out["uptime"][c] == 1000.0)
    assert np.all(out["uptime"] <= 1000.0)
    # P(job-wide end before min(wipe-out, 1000)) is at most P(job event < 1000).
    assert j.mean() < 1 - math.exp(-1000.0 / 2000.0) + Z * 0.012
    # r = 1 without repair influence: the first failure ends the epoch, failures == 1.
    one = rr.simulate_repair_epochs(6, 1, 500, seed=10, group_mtbf_min=600.0, repair_time_min=5.0)
    assert np.all(one["failures"] == 1)
    assert abs(_z(rr.mean_se(one["uptime"]), 100.0)) < Z
