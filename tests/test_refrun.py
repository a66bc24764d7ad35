"""The independent whole-run reference (spare_jax.reference.refrun) against what follows from SPEC §12 by hand.

Deterministic runs use a scripted generator: group clocks, domain/job gaps and domain picks come from lists
(group clock values are the times to failure because the scripted setups use MTBF 1, k = 1, so the Weibull
scale is 1). Statistical checks use closed forms derived in the test docstrings, at 4 standard errors.
"""

import dataclasses
import itertools
import math

import numpy as np
import pytest
from scipy.integrate import quad

from spare_jax.model.runsetup import RunSetup
from spare_jax.reference import refrun
from spare_jax.reference.depth_oracle import DepthOracle
from spare_jax.reference.refrun import reference_runs, simulate_run, summary

BIG = 1e12


def mk(n=4, **kw):
    base = dict(scheme="spare", groups=n, redundancy=2, microbatches=1, ring=tuple(range(n)),
                group_mtbf_min=(1.0,) * n, weibull_shape=1.0, ages="kept", domains=(), job_mtbf_min=None,
                repair_time_min=None, repair_law="fixed", repair_sigma=1.0, spares=None, hardware_repair_min=None,
                work_min=100.0, ckpt_cost_min=2.0, restart_min=10.0, ckpt_interval_min=1000.0, restart_depth=None)
    base.update(kw)
    return RunSetup(**base)


class Scripted:
    """A stand-in for numpy's Generator: scripted group clocks, exponential gaps and integer picks."""

    def __init__(self, clocks=(), gaps=(), picks=()):
        self.clocks, self.gaps, self.picks = list(clocks), list(gaps), list(picks)

    def weibull(self, k):
        return self.clocks.pop(0) if self.clocks else BIG

    def exponential(self, mean):
        return self.gaps.pop(0) if self.gaps else BIG

    def integers(self, n):
        return self.picks.pop(0)


def check_identities(out, setup):
    total = (out["compute_min"] + out["ckpt_min"] + out["restart_min"] + out["spare_wait_min"]
             + out["failure_stall_min"] + out["rejoin_stall_min"])
    assert out["ttt_min"] == pytest.approx(total, rel=1e-12, abs=1e-9)
    assert out["work_done_min"] == pytest.approx(setup.work_min + out["lost_work_min"], rel=1e-12, abs=1e-9)
    assert out["restarts"] == out["wipeouts"] + out["job_failures"] + out["proactive_restarts"]


# ---------------------------------------------------------------- depth by max-flow vs exhaustive search

def brute_capacity(holders, m, down):
    """Least c such that some assignment of every shard's m micro-batches to its surviving holders puts at
    most c on every group, by exhaustive depth-first enumeration of assignments; 0 when no c works."""
    n, r = holders.shape
    alive_holders = [[int(p) for p in holders[j] if p not in down] for j in range(n)]
    if any(not a for a in alive_holders):
        return 0

    def splits(k, parts):
        if parts == 1:
            yield (k,)
            return
        for first in range(k + 1):
            for rest in splits(k - first, parts - 1):
                yield (first,) + rest

    def fits(j, load, c):
        if j == n:
            return True
        for split in splits(m, len(alive_holders[j])):
            if all(load[p] + x <= c for p, x in zip(alive_holders[j], split)):
                for p, x in zip(alive_holders[j], split):
                    load[p] += x
                ok = fits(j + 1, load, c)
                for p, x in zip(alive_holders[j], split):
                    load[p] -= x
                if ok:
                    return True
        return False

    for c in range(1, r * m + 1):
        if fits(0, [0] * n, c):
            return c
    raise AssertionError("every shard has a holder, so c = r m fits")


def stacked(n, r):
    return (np.arange(n)[:, None] - np.arange(r)[None, :]) % n


@pytest.mark.parametrize("n,r,m", [(4, 2, 2), (5, 2, 3), (5, 3, 2), (6, 2, 2), (6, 3, 1)])
def test_maxflow_depth_equals_exhaustive_assignment(n, r, m):
    holders = stacked(n, r)
    oracle = DepthOracle(holders, m)
    for k in range(n + 1):
        for down in itertools.combinations(range(n), k):
            assert oracle.capacity(frozenset(down)) == brute_capacity(holders, m, set(down)), down


def test_maxflow_depth_on_an_irregular_table_and_with_a_lower_bound():
    rng = np.random.default_rng(3)
    n, r, m = 6, 3, 2
    while True:  # level 0 the identity, other levels permutations, rows duplicate-free
        stack = np.stack([np.arange(n)] + [rng.permutation(n) for _ in range(r - 1)], axis=1)
        if all(len(set(row)) == r for row in stack):
            break
    holders = np.array([[g for g in range(n) for lv in range(r) if stack[g, lv] == j] for j in range(n)])
    oracle, fresh = DepthOracle(holders, m), DepthOracle(holders, m)
    for k in range(n + 1):
        for down in itertools.combinations(range(n), k):
            want = brute_capacity(holders, m, set(down))
            assert fresh.capacity(frozenset(down)) == want
            if k:  # a subset's capacity is a valid lower bound
                sub = frozenset(down[:-1])
                assert oracle.capacity(frozenset(down), DepthOracle(holders, m).capacity(sub)) == want


def test_depth_by_hand_n4_r2_m2():
    o = DepthOracle(stacked(4, 2), 2)
    assert o.capacity(frozenset()) == 2  # depth 1
    assert o.capacity(frozenset({0})) == 3  # 8 micro-batches on 3 groups: depth 1.5
    assert o.capacity(frozenset({0, 2})) == 4  # each survivor takes both its shards: depth 2
    assert o.capacity(frozenset({0, 1})) == 0  # shard 1 lost: a wipe-out
    assert o.capacity(frozenset({3, 0})) == 0  # shard 0 lost (holders 0 and 3)


# ---------------------------------------------------------------- failure-free runs

@pytest.mark.parametrize("work,tau,c", [(100.0, 30.0, 2.0), (90.0, 30.0, 2.0), (100.0, 1000.0, 3.0), (7.0, 0.5, 0.25)])
@pytest.mark.parametrize("scheme,r,m", [("spare", 2, 3), ("none", 1, 1), ("rep", 2, 1), ("elastic", 1, 2)])
def test_no_failures_ttt_is_exact(work, tau, c, scheme, r, m):
    """TTT = d W + ceil(d W / tau) C: the checkpoints every tau of computing time, the last interval partial."""
    s = mk(n=4, scheme=scheme, redundancy=r, microbatches=m, group_mtbf_min=(math.inf,) * 4, work_min=work,
           ckpt_interval_min=tau, ckpt_cost_min=c, repair_time_min=10.0 if scheme == "elastic" else None)
    out = simulate_run(s, np.random.default_rng(0))
    d = r if scheme == "rep" else 1
    k = math.ceil(d * work / tau - 1e-9)
    assert out["ttt_min"] == pytest.approx(d * work + k * c, rel=1e-12)
    assert out["ckpts"] == k and out["events"] == 2 * k
    assert out["compute_min"] == pytest.approx(d * work, rel=1e-12)
    assert out["work_done_min"] == pytest.approx(work, rel=1e-12)
    assert out["group_failures"] == out["restarts"] == out["lost_work_min"] == 0
    check_identities(out, s)


# ---------------------------------------------------------------- scripted runs, traced by hand

def test_spare_fixed_repair_depth_by_hand():
    """N = 4, r = 2, m = 2: group 0 down during [10, 40] -> c = 3, rate 2/3: 10 + 20 work at 40, 70 more at
    rate 1 -> 110, final checkpoint -> 112."""
    s = mk(microbatches=2, repair_time_min=30.0)
    out = simulate_run(s, Scripted(clocks=[10, BIG, BIG, BIG]))
    assert out["ttt_min"] == pytest.approx(112.0)
    assert out["compute_min"] == pytest.approx(110.0)
    assert out["group_failures"] == 1 and out["restarts"] == 0 and out["ckpts"] == 1
    assert out["events"] == 4  # failure, rejoin, checkpoint start and end
    check_identities(out, s)


def test_ring_order_maps_physical_groups_to_positions():
    """Physical groups 0 and 1 fail at 10 and 20 (no repair). Contiguous ring: positions 0, 1 -> shard 1 lost
    at 20 (10 + 10/2 = 15 work lost), restart to 30, then 100 -> 130, +2. Ring (0, 2, 1, 3): positions 0, 2
    -> depth 2 (m = 1), no wipe-out: 15 work at 20, 85 more at rate 1/2 -> 190, +2."""
    a = simulate_run(mk(), Scripted(clocks=[10, 20, BIG, BIG]))
    assert a["ttt_min"] == pytest.approx(132.0) and a["lost_work_min"] == pytest.approx(15.0)
    assert a["wipeouts"] == a["restarts"] == 1 and a["group_failures"] == 2
    assert a["compute_min"] == pytest.approx(120.0) and a["restart_min"] == pytest.approx(10.0)
    b = simulate_run(mk(ring=(0, 2, 1, 3)), Scripted(clocks=[10, 20, BIG, BIG]))
    assert b["ttt_min"] == pytest.approx(192.0) and b["wipeouts"] == 0 and b["lost_work_min"] == 0
    check_identities(a, mk())
    check_identities(b, mk())


def test_domain_event_downs_its_groups_as_one_event():
    """Domains {0,1}, {2,3}; the domain clock fires at 10 and picks domain 1: groups 2, 3 down at once.
    Contiguous ring: adjacent positions -> wipe-out (10 lost), restart to 20, 100 more -> 120, +2.
    Interleaved ring (0, 2, 1, 3): positions 1, 3 -> depth 2: 100 work at 10 + 180 = 190, +2."""
    dom = (((0, 0, 1, 1), 1.0),)
    a = simulate_run(mk(domains=dom), Scripted(gaps=[10.0], picks=[1]))
    assert a["ttt_min"] == pytest.approx(122.0) and a["wipeouts"] == 1 and a["group_failures"] == 2
    b = simulate_run(mk(domains=dom, ring=(0, 2, 1, 3)), Scripted(gaps=[10.0], picks=[1]))
    assert b["ttt_min"] == pytest.approx(192.0) and b["wipeouts"] == 0 and b["group_failures"] == 2
    assert b["events"] == 3  # the domain event, the final checkpoint's start and end


def test_failure_during_a_restart_and_a_wait_for_spares():
    """spares = 1, H = 30, R = 10, no repair. 10: g0 down, takes the spare. 12: g1 down (pool empty, waits);
    positions 0, 1 -> wipe-out, 10 + 2/2 = 11 lost; restart from 12, R ends 22. 15: g2's clock fires during
    R, it waits too. 40: g0's node set returns -> g1; 42: g1's -> g2, nobody waits: the restart ends at 42
    (spare wait 20). 50 of work -> 92, +2 -> 94. g2's set returns at 45: 3 node set returns."""
    s = mk(spares=1, hardware_repair_min=30.0, work_min=50.0)
    out = simulate_run(s, Scripted(clocks=[10, 12, 15, BIG]))
    assert out["ttt_min"] == pytest.approx(94.0)
    assert out["spare_wait_min"] == pytest.approx(20.0) and out["restart_min"] == pytest.approx(10.0)
    assert out["lost_work_min"] == pytest.approx(11.0) and out["group_failures"] == 3
    assert out["wipeouts"] == out["restarts"] == 1
    assert out["events"] == 3 + 3 + 1 + 2  # clocks, node set returns, restart end, final checkpoint
    check_identities(out, s)


def test_spare_pool_with_repair_waits_first_come_first_served():
    """spares = 1, H = 50, D = 5. 10: g0 takes the spare, rejoins 15. 20: g2 waits for the set back at 60,
    rejoins 65. Work: 10 + 5/2 + 5 + 45/2 = 40 at 65, 60 more -> 125, +2. Unlimited pool: g2 rejoins 25:
    10 + 2.5 + 5 + 2.5 = 20 at 25, -> 105, +2."""
    s = mk(spares=1, hardware_repair_min=50.0, repair_time_min=5.0)
    out = simulate_run(s, Scripted(clocks=[10, BIG, 20, BIG]))
    assert out["ttt_min"] == pytest.approx(127.0) and out["spare_wait_min"] == 0
    assert out["events"] == 2 + 2 + 2 + 2  # failures, rejoins, node set returns (60, 70), checkpoint
    free = simulate_run(mk(repair_time_min=5.0), Scripted(clocks=[10, BIG, 20, BIG]))
    assert free["ttt_min"] == pytest.approx(107.0) and free["events"] == 6
    # spares = 0: each group waits for its own node set: g0 rejoins 60 + 5, g2 70 + 5. Depth 2 over [10, 75]
    # (one or two non-adjacent positions down): 10 + 65/2 = 42.5 at 75, 57.5 more -> 132.5, +2.
    zero = simulate_run(mk(spares=0, hardware_repair_min=50.0, repair_time_min=5.0),
                        Scripted(clocks=[10, BIG, 20, BIG]))
    assert zero["ttt_min"] == pytest.approx(134.5)


def test_proactive_restart_rules():
    """D_max = 2 (m = 1, N = 4: one group down gives depth 2). g0 fails at 10 while computing: checkpoint
    10..12 commits 10, restart to 22, 90 more -> 112, +2. The same with D = 0.5 (g0 back at 10.5, d < D_max
    during the checkpoint): the restart still follows. tau = 10 and g0 failing at 11, during a regular
    checkpoint: it serves, restart 12..22, then 9 x (10 + 2) -> 130. A failure during the final checkpoint
    reaching D_max: the run just ends."""
    for d in (100.0, 0.5):
        s = mk(restart_depth=2.0, repair_time_min=d)
        out = simulate_run(s, Scripted(clocks=[10, BIG, BIG, BIG]))
        assert out["ttt_min"] == pytest.approx(114.0)
        assert out["restarts"] == out["proactive_restarts"] == 1 and out["lost_work_min"] == 0
        assert out["ckpts"] == 2
        check_identities(out, s)
    s = mk(restart_depth=2.0, repair_time_min=100.0, ckpt_interval_min=10.0)
    out = simulate_run(s, Scripted(clocks=[11, BIG, BIG, BIG]))
    assert out["ttt_min"] == pytest.approx(130.0) and out["proactive_restarts"] == 1 and out["ckpts"] == 10
    out = simulate_run(mk(restart_depth=2.0), Scripted(clocks=[101, BIG, BIG, BIG]))
    assert out["ttt_min"] == pytest.approx(102.0) and out["restarts"] == 0
    # rep has a constant depth r: no event brings it to D_max, never a proactive restart
    out = simulate_run(mk(scheme="rep", restart_depth=1.5, repair_time_min=5.0), Scripted(clocks=[10, BIG]))
    assert out["restarts"] == 0 and out["ttt_min"] == pytest.approx(202.0)


def test_rep_wipes_out_when_a_whole_block_is_down():
    """rep, N = 4, r = 2 (blocks {0, 1}, {2, 3}), no repair, rate 1/2: g0 at 10 and g2 at 20 leave a survivor
    in each block (200 of computing, +2); g0 at 10 and g1 at 20 empty block 0: 10 work lost, restart
    20..30, 200 more -> 230, +2."""
    a = simulate_run(mk(scheme="rep"), Scripted(clocks=[10, BIG, 20, BIG]))
    assert a["ttt_min"] == pytest.approx(202.0) and a["wipeouts"] == 0 and a["group_failures"] == 2
    b = simulate_run(mk(scheme="rep"), Scripted(clocks=[10, 20, BIG, BIG]))
    assert b["ttt_min"] == pytest.approx(232.0) and b["wipeouts"] == 1 and b["lost_work_min"] == pytest.approx(10.0)


def test_wipeout_during_the_final_checkpoint_abandons_it():
    """none, N = 1, C = 10, R = 5: the clock fires at 105, inside the final checkpoint 100..110: 100 lost,
    restart to 110, 100 more -> 210, +10 -> 220."""
    s = mk(n=1, scheme="none", redundancy=1, ckpt_cost_min=10.0, restart_min=5.0)
    out = simulate_run(s, Scripted(clocks=[105]))
    assert out["ttt_min"] == pytest.approx(220.0) and out["lost_work_min"] == pytest.approx(100.0)
    assert out["ckpts"] == 1 and out["ckpt_min"] == pytest.approx(15.0) and out["wipeouts"] == 1
    check_identities(out, s)


def test_job_wide_failure_during_restart_does_nothing():
    """none, N = 1, R = 10: the clock at 20 (20 lost, restart to 30); job-wide events at 25 (in R: nothing)
    and 60 (computing: 30 lost, restart 60..70); then 100 -> 170, +2."""
    s = mk(n=1, scheme="none", redundancy=1, job_mtbf_min=1.0)
    out = simulate_run(s, Scripted(clocks=[20], gaps=[25.0, 35.0]))
    assert out["ttt_min"] == pytest.approx(172.0) and out["lost_work_min"] == pytest.approx(50.0)
    assert out["job_failures"] == 1 and out["wipeouts"] == 1 and out["restarts"] == 2


@pytest.mark.parametrize("data,m,ttt", [("shrink", 1, 117.0), ("rebalance", 1, 122.0), ("rebalance", 3, 117.0)])
def test_elastic_work_rate(data, m, ttt):
    """N = 4, D = 30; g0 down [10, 40], g1 down [20, 50]. shrink: rate alive/N: 10 + 7.5 + 10 + 7.5 = 35 at
    50, 65 more -> 115, +2. rebalance m = 1: ceil(4/3) = ceil(4/2) = 2 -> rate 1/2: 10 + 20 = 30 at 50 ->
    120, +2. rebalance m = 3: alive 3 -> ceil(12/3)/3 = 4/3 (rate 3/4), alive 2 -> 2: as shrink."""
    s = mk(scheme="elastic", redundancy=1, microbatches=m, repair_time_min=30.0, elastic_data=data)
    out = simulate_run(s, Scripted(clocks=[10, 20, BIG, BIG]))
    assert out["ttt_min"] == pytest.approx(ttt) and out["restarts"] == 0
    check_identities(out, s)


def test_elastic_no_group_up_restarts_and_no_repair_is_refused():
    """N = 2 shrink, D = 30: g0 at 10, g1 at 15: nobody up -> 10 + 2.5 lost, restart 15..25, -> 125, +2."""
    s = mk(n=2, scheme="elastic", redundancy=1, repair_time_min=30.0, elastic_data="shrink")
    out = simulate_run(s, Scripted(clocks=[10, 15]))
    assert out["ttt_min"] == pytest.approx(127.0) and out["lost_work_min"] == pytest.approx(12.5)
    assert out["wipeouts"] == out["restarts"] == 1
    with pytest.raises(ValueError, match="elastic"):
        simulate_run(mk(scheme="elastic", redundancy=1), np.random.default_rng(0))


def test_ages_kept_or_renewed_at_a_restart():
    """g0 at 10, g1 at 12 -> wipe-out, restart 12..22. g2's clock is 30: kept, it fires at 30 (depth 2,
    no repair) and the run slows; renewed, g2 draws a new (scripted BIG) clock at 22 and never fails."""
    kept = simulate_run(mk(), Scripted(clocks=[10, 12, 30, BIG]))
    renewed = simulate_run(mk(ages="renewed"), Scripted(clocks=[10, 12, 30, BIG]))
    assert renewed["ttt_min"] == pytest.approx(22 + 100 + 2) and renewed["group_failures"] == 2
    # kept: 8 work at rate 1 by 30, then 92 at rate 1/2 -> 30 + 184 = 214, +2
    assert kept["ttt_min"] == pytest.approx(216.0) and kept["group_failures"] == 3


# ---------------------------------------------------------------- stalls, traced by hand

def stalls(out):
    return out["failure_stall_min"], out["rejoin_stall_min"]


def test_stalls_after_a_failure_and_a_return():
    """spare, N = 4, r = 2, m = 2, D = 30, S = 1, S_j = 0.5: g0 down at 10, stalled to 11, rate 2/3 from 11 to 40
    (19 1/3 of work); back at 40, stalled to 40.5; 70 2/3 more at rate 1 -> 111 1/6, +2."""
    s = mk(microbatches=2, repair_time_min=30.0, failure_stall_min=1.0, rejoin_stall_min=0.5)
    out = simulate_run(s, Scripted(clocks=[10, BIG, BIG, BIG]))
    assert out["ttt_min"] == pytest.approx(113.0 + 1.0 / 6.0)
    assert stalls(out) == pytest.approx((1.0, 0.5))
    assert out["compute_min"] == pytest.approx(109.0 + 2.0 / 3.0)
    assert out["events"] == 4  # a stall's end is no event
    check_identities(out, s)


@pytest.mark.parametrize("second,stall,ttt", [(10.5, 1.5, 193.5), (12.0, 2.0, 194.0)])
def test_a_failure_during_a_stall_extends_it_to_s_after_it(second, stall, ttt):
    """No repair, m = 1, S = 1: g0 at 10 and g2 at ``second`` (depth 2 from the first, no wipe-out). At 10.5
    the stall runs to 11.5 (1.5, not 2: stalls never stack); at 12 the two stalls are apart (2). Work: 10,
    then 0.5 during 11..12 in the second case, the rest at rate 1/2."""
    s = mk(failure_stall_min=1.0)
    out = simulate_run(s, Scripted(clocks=[10, BIG, second, BIG]))
    assert out["ttt_min"] == pytest.approx(ttt)
    assert stalls(out) == pytest.approx((stall, 0.0))
    check_identities(out, s)


def test_each_stalled_instant_counts_under_the_cause_of_the_deadline_in_force():
    """m = 1. S = 2, S_j = 1: g0 down at 10 (stall to 12), back at 11.5 (D = 1.5) -> the stall runs to 12.5,
    10..11.5 failure stall, 11.5..12.5 rejoin stall; 90 more -> 102.5, +2. Back at 10.5 instead (D = 0.5):
    11.5 < 12, nothing changes, a 2-minute failure stall. S = 1, S_j = 3, D = 5: g0 at 10 (failure stall to
    11), back at 15 (rejoin stall to 18), g2 down at 17.5 (deadline 18.5: failure), back at 22.5 (rejoin
    stall to 25.5): failure 1 + 1, rejoin 2.5 + 3; work 10 + 2 (11..15) + 2 (18.5..22.5), 86 more from
    25.5 -> 111.5, +2."""
    s = mk(repair_time_min=1.5, failure_stall_min=2.0, rejoin_stall_min=1.0)
    out = simulate_run(s, Scripted(clocks=[10, BIG, BIG, BIG]))
    assert out["ttt_min"] == pytest.approx(104.5) and stalls(out) == pytest.approx((1.5, 1.0))
    check_identities(out, s)
    s = dataclasses.replace(s, repair_time_min=0.5)
    out = simulate_run(s, Scripted(clocks=[10, BIG, BIG, BIG]))
    assert out["ttt_min"] == pytest.approx(104.0) and stalls(out) == pytest.approx((2.0, 0.0))
    s = mk(repair_time_min=5.0, failure_stall_min=1.0, rejoin_stall_min=3.0)
    out = simulate_run(s, Scripted(clocks=[10, BIG, 17.5, BIG]))
    assert out["ttt_min"] == pytest.approx(113.5) and stalls(out) == pytest.approx((2.0, 5.5))
    check_identities(out, s)


def test_a_wipeout_or_a_job_wide_failure_ends_the_stall_and_starts_the_restart():
    """S = 20. g0 down at 10 (stall to 30), g1 down at 12: a wipe-out. The stall ends at 12 (2), the 10 of work
    is lost, the restart runs 12..22 and computing starts at once: 100 more -> 122, +2. The same with a
    job-wide failure at 12 instead of g1."""
    s = mk(failure_stall_min=20.0)
    out = simulate_run(s, Scripted(clocks=[10, 12, BIG, BIG]))
    assert out["ttt_min"] == pytest.approx(124.0) and out["lost_work_min"] == pytest.approx(10.0)
    assert stalls(out) == pytest.approx((2.0, 0.0)) and out["wipeouts"] == 1
    check_identities(out, s)
    s = mk(failure_stall_min=20.0, job_mtbf_min=1.0)
    out = simulate_run(s, Scripted(clocks=[10, BIG, BIG, BIG], gaps=[12.0]))
    assert out["ttt_min"] == pytest.approx(124.0) and out["lost_work_min"] == pytest.approx(10.0)
    assert stalls(out) == pytest.approx((2.0, 0.0)) and out["job_failures"] == 1
    check_identities(out, s)


def test_no_stall_during_a_restart_nor_for_groups_replaced_at_its_end():
    """S = S_j = 5, D = 100. g0 at 10 (stall to 15), g1 at 12: a wipe-out (repairs cancelled); g2's clock
    fires at 15 during the restart 12..22 (no stall); every group is up at 22 (no rejoin stall): 100 more
    -> 122, +2."""
    s = mk(repair_time_min=100.0, failure_stall_min=5.0, rejoin_stall_min=5.0)
    out = simulate_run(s, Scripted(clocks=[10, 12, 15, BIG]))
    assert out["ttt_min"] == pytest.approx(124.0) and stalls(out) == pytest.approx((2.0, 0.0))
    assert out["group_failures"] == 3
    check_identities(out, s)


def test_no_stall_during_a_restart_waiting_for_spares():
    """The scripted pool run of test_failure_during_a_restart_and_a_wait_for_spares with S = 3: g0 at 10
    stalls to 13, g1 at 12 wipes out (the stall ends: 2, and no work was done 10..12: 10 lost, not 11); g2
    fails during R: no stall; the restart waits for spares to 42. 50 of work -> 92, +2."""
    s = mk(spares=1, hardware_repair_min=30.0, work_min=50.0, failure_stall_min=3.0)
    out = simulate_run(s, Scripted(clocks=[10, 12, 15, BIG]))
    assert out["ttt_min"] == pytest.approx(94.0) and out["spare_wait_min"] == pytest.approx(20.0)
    assert out["lost_work_min"] == pytest.approx(10.0) and stalls(out) == pytest.approx((2.0, 0.0))
    check_identities(out, s)


@pytest.mark.parametrize("clock,stall,ckpts,ttt", [(11, 4.0, 19, 232.0), (9, 5.0, 20, 236.0)])
def test_a_checkpoint_runs_through_a_stall_and_none_starts_in_one(clock, stall, ckpts, ttt):
    """tau = 10, C = 2, S = 5, no repair (rate 1/2 after g0 is down). g0 at 11, during the checkpoint 10..12:
    the checkpoint is not delayed (it commits 10 at 12), computing resumes at 16 when both have ended; the
    stall counted is 12..16 (4). 90 more at rate 1/2: 180 of computing, 18 checkpoints -> 16 + 180 + 36.
    g0 at 9 instead: stalled 9..14 with ct = 9, so the checkpoint starts at 15 (1 more minute of computing,
    0.5 work), 15..17; 90.5 more: 181 of computing, 19 checkpoints -> 17 + 181 + 38."""
    s = mk(ckpt_interval_min=10.0, failure_stall_min=5.0)
    out = simulate_run(s, Scripted(clocks=[clock, BIG, BIG, BIG]))
    assert out["ttt_min"] == pytest.approx(ttt) and out["ckpts"] == ckpts
    assert stalls(out) == pytest.approx((stall, 0.0))
    check_identities(out, s)


def test_the_final_checkpoint_ends_the_run_inside_a_stall():
    s = mk(failure_stall_min=5.0)
    out = simulate_run(s, Scripted(clocks=[101, BIG, BIG, BIG]))
    assert out["ttt_min"] == pytest.approx(102.0) and stalls(out) == (0.0, 0.0) and out["group_failures"] == 1
    check_identities(out, s)


def test_no_stall_around_a_proactive_restart():
    """The proactive runs of test_proactive_restart_rules (D_max = 2) with S = S_j = 5 end as before: the
    failure that brings d to D_max causes no stall, nor a failure (g2 at 11) or a return (D = 0.5) during
    the proactive checkpoint, nor a failure during a regular checkpoint that serves. m = 2, g0 at 10 (d 1.5,
    stall to 15), g2 at 12 (d 2): the proactive checkpoint starts at once (12..14, commits 10) and the stall
    ends (2); restart 14..24, 90 more -> 114, +2."""
    for d in (100.0, 0.5):
        for clocks in ([10, BIG, BIG, BIG], [10, BIG, 11, BIG]):
            s = mk(restart_depth=2.0, repair_time_min=d, failure_stall_min=5.0, rejoin_stall_min=5.0)
            out = simulate_run(s, Scripted(clocks=clocks))
            assert out["ttt_min"] == pytest.approx(114.0) and stalls(out) == (0.0, 0.0)
            assert out["proactive_restarts"] == 1
            check_identities(out, s)
    s = mk(restart_depth=2.0, repair_time_min=100.0, ckpt_interval_min=10.0, failure_stall_min=5.0)
    out = simulate_run(s, Scripted(clocks=[11, BIG, BIG, BIG]))
    assert out["ttt_min"] == pytest.approx(130.0) and stalls(out) == (0.0, 0.0)
    s = mk(microbatches=2, restart_depth=2.0, failure_stall_min=5.0)
    out = simulate_run(s, Scripted(clocks=[10, BIG, 12, BIG]))
    assert out["ttt_min"] == pytest.approx(116.0) and stalls(out) == pytest.approx((2.0, 0.0))
    assert out["proactive_restarts"] == 1 and out["lost_work_min"] == 0
    check_identities(out, s)


def test_none_never_stalls():
    """test_job_wide_failure_during_restart_does_nothing with S = S_j = 5: every failure is a restart."""
    s = mk(n=1, scheme="none", redundancy=1, job_mtbf_min=1.0, repair_time_min=3.0, failure_stall_min=5.0,
           rejoin_stall_min=5.0)
    out = simulate_run(s, Scripted(clocks=[20], gaps=[25.0, 35.0]))
    assert out["ttt_min"] == pytest.approx(172.0) and stalls(out) == (0.0, 0.0)


def test_rep_and_elastic_stall_too():
    """rep (rate 1/2 throughout), D = 5, S = 1, S_j = 0.5: g0 at 10 -> 202 + 1 + 0.5. elastic shrink, D = 30,
    g0 down 10..40, g1 20..50: stalls 10..11, 20..21, 40..40.5, 50..50.5; work 10 + 9 (3/4) + 19 (1/2) +
    9.5 (3/4) = 33.375 at 50.5, 66.625 more -> 117.125, +2."""
    s = mk(scheme="rep", repair_time_min=5.0, failure_stall_min=1.0, rejoin_stall_min=0.5)
    out = simulate_run(s, Scripted(clocks=[10, BIG]))
    assert out["ttt_min"] == pytest.approx(203.5) and stalls(out) == pytest.approx((1.0, 0.5))
    check_identities(out, s)
    s = mk(scheme="elastic", redundancy=1, repair_time_min=30.0, elastic_data="shrink", failure_stall_min=1.0,
           rejoin_stall_min=0.5)
    out = simulate_run(s, Scripted(clocks=[10, 20, BIG, BIG]))
    assert out["ttt_min"] == pytest.approx(119.125) and stalls(out) == pytest.approx((2.0, 1.0))
    check_identities(out, s)


def test_a_domain_event_is_one_stall():
    """Interleaved ring, domains {0,1}, {2,3}, S = 1: domain 1 at 10 downs g2, g3 (depth 2): one stall 10..11;
    domain 1 again at 15 downs nobody: no stall. 90 more at rate 1/2 from 11 -> 191, +2."""
    s = mk(domains=(((0, 0, 1, 1), 1.0),), ring=(0, 2, 1, 3), failure_stall_min=1.0)
    out = simulate_run(s, Scripted(gaps=[10.0, 5.0], picks=[1, 1]))
    assert out["ttt_min"] == pytest.approx(193.0) and stalls(out) == pytest.approx((1.0, 0.0))
    assert out["group_failures"] == 2
    check_identities(out, s)


def test_a_group_waiting_for_a_spare_stalls_and_its_return_stalls_but_not_the_node_set_return():
    """test_spare_pool_with_repair_waits_first_come_first_served with S = 1, S_j = 0.5: g0 at 10 (stall to
    11), back at 15 (to 15.5); g2 at 20 waits (stall to 21), its spare comes back at 60 (no stall), it
    rejoins at 65 (to 65.5). Work 10 + 2 + 4.5 + 22 = 38.5 at 65.5, 61.5 more -> 127, +2."""
    s = mk(spares=1, hardware_repair_min=50.0, repair_time_min=5.0, failure_stall_min=1.0, rejoin_stall_min=0.5)
    out = simulate_run(s, Scripted(clocks=[10, BIG, 20, BIG]))
    assert out["ttt_min"] == pytest.approx(129.0) and stalls(out) == pytest.approx((2.0, 1.0))
    check_identities(out, s)


@pytest.mark.parametrize("stall_s,stall_j", [(20.0, 0.0), (0.0, 20.0)])
def test_stall_time_of_poisson_failures_is_the_busy_period(stall_s, stall_j):
    """rep, N = r = 2 (one block), each group's clock exponential with mean 200 (lambda = 0.01 for the two),
    a repair of 1e-6 (a wipe-out is then practically impossible, and a return follows its failure at once),
    no checkpoint but the final one (C = 2): the computing time is exactly r W = 600. The failures are a
    Poisson process in wall time, and stalls do not change it: the job is stalled at t iff some failure
    (return) fell in (t - S, t]. While computing, the wait for the next failure is Exp(lambda) (memoryless);
    the stall it opens lasts until a gap of S without failures, of mean (e^{lambda S} - 1)/lambda. By Wald,
    over 600 of computing, E[stall] = 600 lambda (e^{lambda S} - 1)/lambda = 600 (e^{0.2} - 1) = 132.8, more
    than 600 lambda S = 120 (the stalls that do not overlap) and less than stacking them."""
    s = mk(n=2, scheme="rep", redundancy=2, group_mtbf_min=(200.0, 200.0), repair_time_min=1e-6,
           work_min=300.0, ckpt_interval_min=1e9, failure_stall_min=stall_s, rejoin_stall_min=stall_j)
    out = reference_runs(s, 1500, seed=17)
    assert out["wipeouts"].sum() == 0
    np.testing.assert_allclose(out["compute_min"], 600.0, rtol=1e-12)
    stall = out["failure_stall_min"] if stall_s else out["rejoin_stall_min"]
    assert (out["failure_stall_min"] if stall_j else out["rejoin_stall_min"]).sum() == 0
    want = 600.0 * math.expm1(0.01 * 20.0)
    assert abs(stall.mean() - want) < 4 * stall.std(ddof=1) / math.sqrt(stall.size), (stall.mean(), want)
    np.testing.assert_allclose(out["ttt_min"], 602.0 + stall, rtol=1e-12)


def test_everything_at_once_with_stalls_keeps_the_identities():
    """Every lever with S = 2, S_j = 1: the time identity holds run by run, both stalls occur, and every
    stalled instant lies within S (S_j) after a failure (a return), so stall <= S x failures + S_j x
    failures."""
    n = 12
    s = mk(n=n, redundancy=3, microbatches=2, ring=tuple(np.random.default_rng(0).permutation(n).tolist()),
           group_mtbf_min=tuple(np.linspace(300, 900, n)), weibull_shape=1.5, ages="renewed",
           domains=(((0,) * 4 + (1,) * 4 + (2,) * 4, 2000.0),), job_mtbf_min=3000.0, repair_time_min=40.0,
           repair_law="lognormal", repair_sigma=0.7, spares=2, hardware_repair_min=120.0, work_min=600.0,
           ckpt_interval_min=45.0, ckpt_cost_min=3.0, restart_min=25.0, restart_depth=2.0,
           failure_stall_min=2.0, rejoin_stall_min=1.0)
    a = reference_runs(s, 40, seed=4)
    for i in range(40):
        check_identities({k: v[i] for k, v in a.items()}, s)
    assert a["failure_stall_min"].sum() > 0 and a["rejoin_stall_min"].sum() > 0
    assert np.all(a["failure_stall_min"] <= 2.0 * a["group_failures"] + 1e-9)
    assert np.all(a["rejoin_stall_min"] <= 1.0 * a["group_failures"] + 1e-9)
    zero = reference_runs(dataclasses.replace(s, failure_stall_min=0.0, rejoin_stall_min=0.0), 40, seed=4)
    assert a["ttt_min"].mean() > zero["ttt_min"].mean()


# ---------------------------------------------------------------- exact couplings with a real generator

def test_spare_with_r1_is_none_and_rep_computes_at_rate_1_over_r():
    kw = dict(n=6, group_mtbf_min=(300.0,) * 6, work_min=300.0, ckpt_interval_min=40.0, restart_min=15.0)
    for seed in range(5):
        a = simulate_run(mk(scheme="spare", redundancy=1, **kw), np.random.default_rng(seed))
        b = simulate_run(mk(scheme="none", redundancy=1, **kw), np.random.default_rng(seed))
        assert a == b
        s = mk(scheme="rep", redundancy=3, repair_time_min=50.0, **kw)
        c = simulate_run(s, np.random.default_rng(seed))
        assert c["compute_min"] == pytest.approx(3 * c["work_done_min"], rel=1e-12)
        check_identities(c, s)


@pytest.mark.parametrize("spares,h,r_min,extra_r", [(0, 50.0, 20.0, 30.0), (0, 10.0, 20.0, 0.0), (1, 10.0, 20.0, 0.0)])
def test_spare_pool_one_group_none(spares, h, r_min, extra_r):
    """none, N = 1, no repair: each failure's restart waits for the group's spare. spares = 0: its own node
    set, back after H: the restart lasts max(R, H) (a wait H - R when H > R); spares = 1 and H < R: never a
    wait. So the run equals the unlimited-pool run with R + wait, draw for draw."""
    kw = dict(n=1, scheme="none", redundancy=1, group_mtbf_min=(200.0,), work_min=300.0, ckpt_interval_min=50.0)
    restarts = 0
    for seed in range(5):
        pool = simulate_run(mk(spares=spares, hardware_repair_min=h, restart_min=r_min, **kw),
                            np.random.default_rng(seed))
        free = simulate_run(mk(restart_min=r_min + extra_r, **kw), np.random.default_rng(seed))
        assert pool["ttt_min"] == pytest.approx(free["ttt_min"], rel=1e-12)
        assert pool["spare_wait_min"] == pytest.approx(extra_r * pool["restarts"], rel=1e-9, abs=1e-9)
        assert pool["restarts"] == free["restarts"]
        assert pool["events"] - free["events"] <= pool["group_failures"]  # the node set returns seen
        restarts += pool["restarts"]
    assert restarts > 5


# ---------------------------------------------------------------- statistics against closed forms

def renewal_ttt(work, tau, c, r_min, lam):
    """none with exponential interruptions of total rate lam (memoryless; those during R are absorbed): each
    segment (tau of work, or the partial last one, plus its checkpoint, L in all) is retried from its start
    until it runs L without an interruption. Attempts are i.i.d.; by Wald, E[time] = E[#attempts]
    E[min(X, L)] + R E[#failures] = (e^{lam L} - 1)(1/lam + R); E[#failures] = e^{lam L} - 1."""
    k = math.ceil(work / tau - 1e-9)
    ls = [tau + c] * (k - 1) + [work - (k - 1) * tau + c]
    ttt = sum((math.exp(lam * L) - 1) * (1 / lam + r_min) for L in ls)
    fails = sum(math.exp(lam * L) - 1 for L in ls)
    return ttt, fails


@pytest.mark.parametrize("job,dom", [(math.inf, math.inf), (1000.0, 1000.0)])
def test_none_exponential_renewal_closed_form(job, dom):
    """With job-wide failures and a domain level (2 domains) the interruptions while computing or
    checkpointing have total rate N/mtbf + 1/job + 2/dom (with everything up, every domain event downs a
    group: a wipe-out)."""
    n, mtbf = 4, (800.0 if dom < math.inf else 500.0)
    s = mk(n=n, scheme="none", redundancy=1, group_mtbf_min=(mtbf,) * n,
           job_mtbf_min=None if job == math.inf else job,
           domains=() if dom == math.inf else (((0, 0, 1, 1), dom),), work_min=290.0, ckpt_interval_min=60.0,
           ckpt_cost_min=5.0, restart_min=20.0)
    lam = n / mtbf + 1 / job + 2 / dom
    want_ttt, want_fails = renewal_ttt(290.0, 60.0, 5.0, 20.0, lam)
    out = reference_runs(s, 2500, seed=11)
    ttt = out["ttt_min"]
    assert abs(ttt.mean() - want_ttt) < 4 * ttt.std(ddof=1) / math.sqrt(ttt.size)
    rs = out["restarts"]
    assert abs(rs.mean() - want_fails) < 4 * rs.std(ddof=1) / math.sqrt(rs.size)
    jf = out["job_failures"]  # a fraction (1/job)/lam of the interruptions are job-wide
    if job < math.inf:
        assert abs(jf.mean() - want_fails / job / lam) < 4 * jf.std(ddof=1) / math.sqrt(jf.size)
    else:
        assert jf.sum() == 0
    sm = summary(out)
    assert sm["ttt_hours"] == pytest.approx(ttt.mean() / 60) and sm["runs"] == 2500
    assert sm["slowdown"] == pytest.approx(out["compute_min"].sum() / out["work_done_min"].sum())
    assert sm["slowdown"] == pytest.approx(1.0, abs=1e-12)  # none computes at rate 1


@pytest.mark.parametrize("shape", [0.7, 2.0])
def test_weibull_one_group_one_segment(shape):
    """none, N = 1, tau > W: one segment L = W + C; after each failure the (only) group is replaced, so the
    attempts are i.i.d.: E[TTT] = (int_0^L S + R (1 - S(L))) / S(L), S(x) = exp(-(x/eta)^k)."""
    mtbf, work, c, r_min = 300.0, 150.0, 5.0, 30.0
    s = mk(n=1, scheme="none", redundancy=1, group_mtbf_min=(mtbf,), weibull_shape=shape, work_min=work,
           ckpt_interval_min=2 * work, ckpt_cost_min=c, restart_min=r_min)
    eta = float(s.weibull_scale()[0])
    surv = lambda x: math.exp(-((x / eta) ** shape))  # noqa: E731
    L = work + c
    want = (quad(surv, 0, L)[0] + r_min * (1 - surv(L))) / surv(L)
    ttt = reference_runs(s, 4000, seed=5)["ttt_min"]
    assert abs(ttt.mean() - want) < 4 * ttt.std(ddof=1) / math.sqrt(ttt.size)


def test_repair_laws_have_mean_d():
    for law, sigma in (("exp", 1.0), ("lognormal", 0.8)):
        run = refrun._Run(mk(repair_time_min=40.0, repair_law=law, repair_sigma=sigma), np.random.default_rng(2),
                          10)
        x = np.array([run.repair_time() for _ in range(20000)])
        assert abs(x.mean() - 40.0) < 4 * x.std(ddof=1) / math.sqrt(x.size)
    run = refrun._Run(mk(repair_time_min=40.0, repair_law="lognormal", repair_sigma=0.8), np.random.default_rng(2), 10)
    logs = np.log([run.repair_time() for _ in range(20000)])
    assert logs.std() == pytest.approx(0.8, rel=0.03)


# ---------------------------------------------------------------- plumbing

def test_everything_at_once_keeps_the_identities_and_is_reproducible():
    n = 12
    s = mk(n=n, redundancy=3, microbatches=2, ring=tuple(np.random.default_rng(0).permutation(n).tolist()),
           group_mtbf_min=tuple(np.linspace(300, 900, n)), weibull_shape=1.5, ages="renewed",
           domains=(((0,) * 4 + (1,) * 4 + (2,) * 4, 2000.0),), job_mtbf_min=3000.0, repair_time_min=40.0,
           repair_law="lognormal", repair_sigma=0.7, spares=2, hardware_repair_min=120.0, work_min=600.0,
           ckpt_interval_min=45.0, ckpt_cost_min=3.0, restart_min=25.0, restart_depth=2.0)
    a = reference_runs(s, 40, seed=4)
    b = reference_runs(s, 40, seed=4)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
    assert not np.array_equal(a["ttt_min"], reference_runs(s, 40, seed=5)["ttt_min"])
    for i in range(40):
        check_identities({k: v[i] for k, v in a.items()}, s)
    assert a["group_failures"].sum() > 0 and a["proactive_restarts"].sum() > 0 and a["spare_wait_min"].sum() >= 0
    sm = summary(a)
    assert sm["slowdown"] > 1 and sm["slowdown_stderr"] > 0 and sm["ttt_stderr_hours"] > 0


def test_max_events_raises():
    s = mk(n=4, group_mtbf_min=(50.0,) * 4, repair_time_min=5.0, work_min=1000.0)
    with pytest.raises(RuntimeError, match="max_events"):
        simulate_run(s, np.random.default_rng(0), max_events=20)
