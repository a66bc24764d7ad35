"""The SimPy whole-run simulator (``reference.simpyrun``) against results derived by hand from SPEC §12.

* No failures: TTT = d W + ceil(d W / tau) C exactly (d = 1; ``rep``: d = r).
* ``none`` with exponential clocks, domains and job-wide failures, no repair: the run regenerates at every
  restart end, and each checkpoint interval (length s = tau, the last one partial, plus C) is retried until
  no failure hits it; with total rate L, E[time] = (e^{L(s+C)} - 1)(1/L + R), E[restarts] = e^{L(s+C)} - 1.
* Hand-checkable timelines: one group with a (nearly) deterministic clock (Weibull of huge shape) fails at
  100, 100 after each rejoin or replacement; everything else never fails.
"""
import math

import numpy as np
import pytest

from spare_jax.model.runsetup import RunSetup
from spare_jax.reference.simpyrun import EventLimitExceeded, KEYS, simpy_run, simpy_runs

NEVER = 1e15
SHARP = 1e7  # a Weibull shape this large makes a clock its mean within 1e-5 relative


def setup(scheme="spare", n=4, r=2, m=1, mtbf=None, shape=1.0, ring=None, domains=(), job=None, repair=None,
          law="fixed", spares=None, hw=None, W=600.0, C=10.0, R=50.0, tau=1000.0, dmax=None, ages="kept",
          data="rebalance"):
    mtbf = (NEVER,) * n if mtbf is None else tuple(float(x) for x in mtbf)
    return RunSetup(scheme=scheme, groups=n, redundancy=r, microbatches=m, ring=tuple(range(n)) if ring is None
                    else tuple(ring), group_mtbf_min=mtbf, weibull_shape=shape, ages=ages, domains=domains,
                    job_mtbf_min=job, repair_time_min=repair, repair_law=law, repair_sigma=1.0, spares=spares,
                    hardware_repair_min=hw, work_min=W, ckpt_cost_min=C, restart_min=R, ckpt_interval_min=tau,
                    restart_depth=dmax, elastic_data=data)


def lemon(n, first=100.0):
    """Group 0 fails every ``first`` minutes of its clock; the others never."""
    return (first,) + (NEVER,) * (n - 1)


@pytest.mark.parametrize("scheme,r,d", [("spare", 3, 1), ("none", 1, 1), ("rep", 2, 2), ("elastic", 1, 1)])
@pytest.mark.parametrize("W,tau,C", [(600.0, 60.0, 5.0), (610.0, 60.0, 2.0), (50.0, 60.0, 7.0), (600.0, 7.0, 1.0)])
def test_no_failures_is_work_plus_checkpoints_exactly(scheme, r, d, W, tau, C):
    s = setup(scheme=scheme, n=6, r=r, m=2, W=W, tau=tau, C=C, repair=30.0)
    out = simpy_run(s, np.random.default_rng(0))
    k = math.ceil(d * W / tau)
    assert tuple(out) == KEYS
    assert out["ttt_min"] == d * W + k * C
    assert out["compute_min"] == d * W and out["work_done_min"] == W and out["ckpts"] == k
    assert out["events"] == 2 * k and out["restarts"] == out["group_failures"] == out["lost_work_min"] == 0


def test_spare_repair_timeline_by_hand():
    # down [100,130], [230,260], ...: depth 2 (3 groups cover 4 shards) so 115 of work per 130 minutes.
    # At 620 work is 560; down to 650 (575); 25 more by 675; the final checkpoint ends at 685.
    out = simpy_run(setup(mtbf=lemon(4), shape=SHARP, repair=30.0, W=600.0), np.random.default_rng(1))
    assert out["ttt_min"] == pytest.approx(685.0, abs=0.01)
    assert out["compute_min"] == pytest.approx(675.0, abs=0.01)
    assert out["group_failures"] == 5 and out["ckpts"] == 1 and out["restarts"] == 0
    assert out["events"] == 5 + 5 + 2  # failures, rejoins, checkpoint start and end


def test_micro_batches_make_the_depth_finer_by_hand():
    # m = 2: capacity 3 serves 8 micro-batches on 3 groups (depth 3/2): 120 per 130 minutes; at 620 the
    # work is 580, 10 more at rate 2/3 by 635, final checkpoint to 645; the 5th rejoin (650) comes after.
    out = simpy_run(setup(m=2, mtbf=lemon(4), shape=SHARP, repair=30.0, W=590.0), np.random.default_rng(2))
    assert out["ttt_min"] == pytest.approx(645.0, abs=0.01)
    assert out["group_failures"] == 5 and out["events"] == 5 + 4 + 2


def test_none_wipeout_rolls_back_to_the_checkpoint_by_hand():
    # ckpt 60-65 commits 60; fail at 100 with 95 done: 35 lost; restart to 113 (group 0 replaced, new clock:
    # fails at 213); 113-173 computes to 120, ckpt to 178, 25 more by 203, final checkpoint to 208.
    s = setup(scheme="none", n=2, r=1, mtbf=lemon(2), shape=SHARP, W=145.0, tau=60.0, C=5.0, R=13.0)
    out = simpy_run(s, np.random.default_rng(3))
    assert out["ttt_min"] == pytest.approx(208.0, abs=0.01)
    assert out["lost_work_min"] == pytest.approx(35.0, abs=0.01)
    assert out["compute_min"] == pytest.approx(180.0, abs=0.01)
    assert out["work_done_min"] == pytest.approx(180.0, abs=0.01)
    assert (out["wipeouts"], out["restarts"], out["ckpts"], out["group_failures"]) == (1, 1, 3, 1)
    assert out["events"] == 6 + 1 + 1  # checkpoints, the failure, the restart end


def test_proactive_restart_by_hand():
    # D_max = 2, no repair: fail at 100 (depth 2) -> ckpt to 110 -> restart to 130 (new clock: fails at 230)
    # -> 100 more by 230 -> ckpt to 240, restart to 260 -> 80 more by 340 -> final checkpoint to 350.
    out = simpy_run(setup(mtbf=lemon(4), shape=SHARP, W=280.0, R=20.0, dmax=2.0), np.random.default_rng(4))
    assert out["ttt_min"] == pytest.approx(350.0, abs=0.01)
    assert (out["proactive_restarts"], out["restarts"], out["ckpts"], out["wipeouts"]) == (2, 2, 3, 0)
    assert out["lost_work_min"] == 0.0 and out["events"] == 2 + 6 + 2


def test_restart_cancels_repairs_and_absorbs_failures_by_hand():
    # groups 0, 1, 2 fail at 100, 110, 130 of their clocks (r = 2: positions 0 and 1 hold shard 1); D = 30.
    # ckpt 50-55 commits 50; 0 fails at 100 (depth 2: 45 + 2.5 of work by 105, tau of computing time since
    # 55), ckpt 105-110; 1 fails at 110 while 0 is in repair: a wipe-out abandons it, 47.5 lost.
    # Restart 110-160: 0's repair (due 130) is cancelled, 2 fails at 130 (absorbed); at 160 all three are
    # replaced (new clocks: 260, 270, 290). 160-210 computes 50, ckpt to 215, 20 more by 235, final to 240.
    s = setup(mtbf=(100.0, 110.0, 130.0, NEVER), shape=SHARP, repair=30.0, W=120.0, tau=50.0, C=5.0, R=50.0)
    out = simpy_run(s, np.random.default_rng(10))
    assert out["ttt_min"] == pytest.approx(240.0, abs=0.01)
    assert out["lost_work_min"] == pytest.approx(47.5, abs=0.01)
    assert (out["group_failures"], out["wipeouts"], out["restarts"], out["ckpts"]) == (3, 1, 1, 3)
    assert out["events"] == 3 + 1 + 4 + 3  # failures, restart end, checkpoint starts and ends (no rejoin)


def test_free_spare_is_taken_at_once_by_hand():
    # one spare, H = 50: each failure takes it at once (its node set returns 50 later, before the next
    # failure), so the run is the unlimited-pool one (685) plus five node-set returns.
    s = setup(mtbf=lemon(4), shape=SHARP, repair=30.0, spares=1, hw=50.0, W=600.0)
    out = simpy_run(s, np.random.default_rng(11))
    assert out["ttt_min"] == pytest.approx(685.0, abs=0.01)
    assert out["events"] == 5 + 5 + 2 + 5 and out["stall_min"] == 0.0


def test_spare_pool_of_zero_waits_for_the_own_node_set_by_hand():
    # H = 50, D = 30: down 100-180 and 280-360 at depth 2; work 140 at 180, 240 at 280, 280 at 360, 300 at
    # 380; final checkpoint to 390.
    s = setup(mtbf=lemon(4), shape=SHARP, repair=30.0, spares=0, hw=50.0, W=300.0)
    out = simpy_run(s, np.random.default_rng(5))
    assert out["ttt_min"] == pytest.approx(390.0, abs=0.01)
    assert out["events"] == 2 + 2 + 2 + 2 and out["stall_min"] == 0.0


def test_restart_stalls_for_a_spare_by_hand():
    # as the none case, with R = 20 and the node set back only at 150: a 30-minute stall; replaced at 150
    # (fails at 250), 60 more by 210, ckpt to 215, 25 more by 240, final checkpoint to 245.
    s = setup(scheme="none", n=2, r=1, mtbf=lemon(2), shape=SHARP, spares=0, hw=50.0, W=145.0, tau=60.0,
              C=5.0, R=20.0)
    out = simpy_run(s, np.random.default_rng(6))
    assert out["ttt_min"] == pytest.approx(245.0, abs=0.01)
    assert out["stall_min"] == pytest.approx(30.0, abs=0.01)
    assert out["events"] == 6 + 1 + 1 + 1  # checkpoints, failure, node-set return, restart end


@pytest.mark.parametrize("data,m,rate", [("shrink", 1, 0.75), ("rebalance", 1, 0.5), ("rebalance", 4, 2 / 3)])
def test_elastic_rate_by_hand(data, m, rate):
    # down [100,130] and [230,260]: the run needs W = 300 of work, final checkpoint 10 after.
    s = setup(scheme="elastic", r=1, m=m, mtbf=lemon(4), shape=SHARP, repair=30.0, W=300.0, data=data)
    out = simpy_run(s, np.random.default_rng(7))
    work_260 = 200.0 + 60.0 * rate
    assert out["ttt_min"] == pytest.approx(260.0 + (300.0 - work_260) + 10.0, abs=0.01)
    assert out["group_failures"] == 2 and out["restarts"] == 0


def test_domain_event_is_one_event_and_follows_the_ring():
    # two domains, physical groups {0, 1} and {2, 3}; N = 4, r = 2, no repair. Contiguous ring: each domain
    # holds a shard on both its groups, so every domain event that downs anything is a wipe-out of 2 groups.
    # Ring (0, 2, 1, 3): a domain sits at positions {0, 2} or {1, 3}, never both holders of a shard; an epoch
    # ends when the second domain goes down too (4 failures), and the last epoch has 0 or 2.
    dom = (((0, 0, 1, 1), 150.0),)
    res = simpy_runs(setup(domains=dom, W=1000.0, tau=100.0, C=1.0, R=5.0), 30, seed=1)
    assert (res["wipeouts"] == res["restarts"]).all() and res["wipeouts"].sum() > 30
    assert (res["group_failures"] == 2 * res["wipeouts"]).all()
    res = simpy_runs(setup(ring=(0, 2, 1, 3), domains=dom, W=1000.0, tau=100.0, C=1.0, R=5.0), 30, seed=1)
    assert res["wipeouts"].sum() > 10
    assert set(res["group_failures"] - 4 * res["wipeouts"]) == {0, 2}


def _segments(W, tau):
    k = math.ceil(W / tau)
    return [tau] * (k - 1) + [W - (k - 1) * tau]


def test_none_exponential_against_renewal_reward():
    n, mu, dom_mtbf, job, W, tau, C, R = 4, 400.0, 1000.0, 500.0, 100.0, 30.0, 5.0, 10.0
    lam = n / mu + 2 / dom_mtbf + 1 / job
    e_ttt = e_restarts = e_lost = 0.0
    for s in _segments(W, tau):
        a = s + C
        k = math.exp(lam * a) - 1  # expected failures before the interval (and its checkpoint) survives
        lost = ((1 - math.exp(-lam * s) * (1 + lam * s)) / lam + s * (math.exp(-lam * s) - math.exp(-lam * a)))
        e_ttt += k * (1 / lam + R)
        e_restarts += k
        e_lost += k * lost / (1 - math.exp(-lam * a))
    dom = (((0, 0, 1, 1), dom_mtbf),)
    res = simpy_runs(setup(scheme="none", n=n, r=1, mtbf=(mu,) * n, domains=dom, job=job, W=W, tau=tau, C=C,
                           R=R), 3000, seed=11)
    for key, expect in (("ttt_min", e_ttt), ("restarts", e_restarts), ("lost_work_min", e_lost)):
        x = res[key].astype(float)
        se = x.std(ddof=1) / math.sqrt(x.size)
        assert abs(x.mean() - expect) < 4 * se, (key, x.mean(), expect, se)
    assert (res["restarts"] == res["wipeouts"] + res["job_failures"]).all()
    assert np.allclose(res["work_done_min"], W + res["lost_work_min"])
    assert np.allclose(res["compute_min"], res["work_done_min"])


def test_ages_kept_or_renewed_by_hand():
    # groups 0 and 2 (never holders of one shard together) fail at 100 and 170 of their clocks; D_max = 2.
    # kept: 100 -> ckpt, restart 110-130 (group 0 new: 230); group 2 at 170 -> ckpt, restart 180-200 (group 2
    # new: 370); group 0 at 230 -> ckpt, restart 240-260; 10 more work by 270, final checkpoint to 280.
    # renewed: at 130 both clocks are new (230, 300): 80 more work by 210, final checkpoint to 220.
    mtbf = (100.0, NEVER, 170.0, NEVER)
    for ages, ttt, pro in (("kept", 280.0, 3), ("renewed", 220.0, 1)):
        s = setup(mtbf=mtbf, shape=SHARP, W=180.0, R=20.0, dmax=2.0, ages=ages)
        out = simpy_run(s, np.random.default_rng(8))
        assert out["ttt_min"] == pytest.approx(ttt, abs=0.01), ages
        assert out["proactive_restarts"] == pro and out["lost_work_min"] == 0.0


@pytest.mark.parametrize("law", ["fixed", "exp", "lognormal"])
def test_repair_laws_keep_the_mean_down_fraction(law):
    # elastic shrink computes at rate alive/N: over a long run the work per computing minute is 1 - p,
    # p = D/(MTBF + D) = 0.2 whatever the repair law (alternating renewal). The start from all-up and the
    # rare all-down restarts bias it up by < 1% (allowed: 0.012); a law with the wrong mean would not pass
    # (lognormal sigma = 1 without the -sigma^2/2: mean 165, ratio 0.71; exp at rate D: ratio ~ 1).
    s = setup(scheme="elastic", r=1, n=4, mtbf=(400.0,) * 4, repair=100.0, law=law, W=6000.0, tau=200.0,
              data="shrink")
    res = simpy_runs(s, 40, seed=3)
    ratio = res["work_done_min"] / res["compute_min"]
    se = ratio.std(ddof=1) / math.sqrt(ratio.size)
    assert abs(ratio.mean() - 0.8) < 4 * se + 0.012, (ratio.mean(), se)


def test_event_limit_raises():
    s = setup(scheme="none", n=4, r=1, mtbf=(10.0,) * 4, W=1000.0, tau=5.0, C=1.0, R=1.0)
    with pytest.raises(EventLimitExceeded):
        simpy_run(s, np.random.default_rng(0), max_events=100)


def _least_capacity_networkx(n, r, m, down):
    """The least c in m..r m serving every shard's m micro-batches from its surviving stacked holders."""
    import networkx as nx
    if any(all(down[(j - k) % n] for k in range(r)) for j in range(n)):
        return None
    for c in range(m, r * m + 1):
        g = nx.DiGraph()
        for j in range(n):
            g.add_edge("s", ("j", j), capacity=m)
            for k in range(r):
                if not down[(j - k) % n]:
                    g.add_edge(("j", j), ("g", (j - k) % n), capacity=m)
        for p in range(n):
            if not down[p]:
                g.add_edge(("g", p), "t", capacity=c)
        if nx.maximum_flow_value(g, "s", "t") == n * m:
            return c


def test_depth_search_from_the_previous_depth_matches_networkx():
    from spare_jax.reference.simpyrun import _Run
    n, r, m = 12, 3, 3
    run = _Run(setup(n=n, r=r, m=m), np.random.default_rng(0), 10)
    rng = np.random.default_rng(9)
    down = np.zeros(n, bool)
    prev = 1.0
    checked = 0
    for _ in range(300):
        g = int(rng.integers(n))
        grew = not down[g]
        down[g] = not down[g]
        run.down_pos[:] = down
        run.alive = n - int(down.sum())
        run.depth = prev
        got = run._solve(grew)
        want = _least_capacity_networkx(n, r, m, down)
        assert (got == 0.0) if want is None else got == want / m, (down, got, want)
        if want is None:
            down[:] = False
            prev = 1.0
        else:
            prev = got
            checked += 1
    assert checked > 200
