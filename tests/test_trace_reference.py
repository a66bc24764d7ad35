"""The reference replay (``reference.tracerun``) on hand-worked tiny traces: one per scheme and repair mode, with
the time-to-train worked out in each test (minutes), and the conventions of a replay (ties, restarts,
counts, offsets and wraps, spares, stalls, job-wide failures, the ideal scheme). Plain NumPy: no JAX.

Unless a test says otherwise: N = 4 groups, W = 10 min of work, C = 1, R = 5, tau = 4 (minutes of
computing), the trace's circle P = 1000 min, run 0 from trace time 0. ``spare`` r = 2 is stacked: shard j
is held by groups j and j - 1, so two neighbours down (0 and 1, ..., 3 and 0) lose a shard; one group down
gives depth 2 (4 shards on 3 groups), two apart (0 and 2) depth 2 too. ``rep`` r = 2 has blocks {0, 1},
{2, 3} and depth 2 always."""
import math

import numpy as np
import pytest

from spare_jax.model.runsetup import RunSetup
from spare_jax.model.trace import TraceRecords
from spare_jax.model.trace_units import trace_units
from spare_jax.reference.tracerun import COUNTERS, TraceReplay, summary, trace_run, trace_runs

TRACE, FIXED, NONE = TraceReplay("trace"), TraceReplay("fixed"), TraceReplay("none")


def make_setup(scheme="spare", groups=4, r=2, **changes) -> RunSetup:
    values = dict(scheme=scheme, groups=groups, redundancy=1 if scheme in ("none", "elastic") else r,
                  microbatches=1, ring=tuple(range(groups)), group_mtbf_min=(1.0,) * groups, weibull_shape=1.0,
                  ages="kept", domains=(), job_mtbf_min=None, repair_time_min=None, repair_law="fixed",
                  repair_sigma=1.0, spares=None, hardware_repair_min=None, work_min=10.0, ckpt_cost_min=1.0,
                  restart_min=5.0, ckpt_interval_min=4.0, restart_depth=None)
    values.update(changes)
    return RunSetup(**values)


def make_trace(periods, groups=4, circle_min=1000.0):
    """A trace from ``(group, failed_min, returned_min)`` periods, as the device form (float32 minutes, exact
    here)."""
    node, a, b = zip(*periods) if periods else ((), (), ())
    rec = TraceRecords.build(groups, circle_min / 60.0, list(node), [x / 60.0 for x in a], [x / 60.0 for x in b])
    return trace_units(rec.merged(), groups).arrays()


def run(setup, periods, options=TRACE, **kw):
    return trace_run(setup, make_trace(periods, setup.groups, kw.pop("circle_min", 1000.0)), options=options, **kw)


def check(out, ttt, **counts):
    assert out["ttt_min"] == pytest.approx(ttt, rel=1e-12, abs=1e-12), out
    for key, value in counts.items():
        assert out[key] == pytest.approx(value, rel=1e-12, abs=1e-12), (key, out)
    parts = sum(out[k] for k in ("compute_min", "ckpt_min", "restart_min", "spare_wait_min", "failure_stall_min",
                                 "rejoin_stall_min"))
    assert parts == pytest.approx(out["ttt_min"], rel=1e-12)
    assert out["failures"] == out["failures_seen"] + out["failures_absorbed"]


@pytest.mark.parametrize("scheme", ["spare", "rep", "none", "elastic"])
@pytest.mark.parametrize("work, tau", [(10.0, 4.0), (12.0, 4.0), (7.5, 0.5), (100.0, 30.0)])
def test_a_trace_with_no_records_gives_w_plus_c_per_started_interval(scheme, work, tau):
    # no failure: compute W (rep: r W, at depth r), with a checkpoint after every tau and the final partial
    # one: W + C ceil(W / tau), exactly
    setup = make_setup(scheme, work_min=work, ckpt_interval_min=tau, repair_time_min=3.0)
    out = trace_run(setup, make_trace([]), options=FIXED)
    computing = work * (2 if scheme == "rep" else 1)
    assert out["ttt_min"] == computing + 1.0 * math.ceil(computing / tau)
    assert (out["failures"], out["restarts"], out["wraps"], out["ckpts"]) == (0, 0, 0, math.ceil(computing / tau))


def test_spare_with_repair_from_the_trace():
    # group 0 down [2, 3): depth 2 (rate 1/2) for 1 min.
    # work: 2 by t=2; 0.5 more by t=3; ct reaches 4 at t=4 with 3.5 done -> checkpoint [4, 5];
    # 5 -> 9 computes 4 (7.5), checkpoint [9, 10]; 2.5 left -> t = 12.5, final checkpoint [12.5, 13.5].
    out = run(make_setup(), [(0, 2, 3)])
    check(out, 13.5, compute_min=10.5, ckpt_min=3, ckpts=3, failures=1, failures_seen=1, wipeouts=0, wraps=0)


def test_spare_with_a_fixed_repair():
    # group 0 fails at 2 (its period's end is not read) and returns D = 4 later, at 6.
    # work: 2 by t=2; at rate 1/2, 3 by t=4 (ct 4) -> checkpoint [4, 5]; 5 -> 6 at 1/2: 3.5 (ct 1);
    # 6 -> 9 at 1: 6.5 (ct 4), checkpoint [9, 10]; 3.5 left -> t = 13.5, final [13.5, 14.5].
    out = run(make_setup(repair_time_min=4.0), [(0, 2, 3)], FIXED)
    check(out, 14.5, compute_min=11.5, ckpts=3, failures=1)


def test_spare_without_repair():
    # group 0 fails at 2 and stays down (no wipe-out: it is alone): rate 1/2 from t = 2 on.
    # 2 by t=2; 3 by t=4 -> [4, 5]; 5 -> 9: 5 -> [9, 10]; 10 -> 14: 7 -> [14, 15]; 15 -> 19: 9 -> [19, 20];
    # 1 left at 1/2: t = 22, final [22, 23]. Its second period [4, 5) starts while it is down: not counted.
    out = run(make_setup(), [(0, 2, 3), (0, 4, 5)], NONE)
    check(out, 23.0, compute_min=18, ckpts=5, failures=1, failures_seen=1)


def test_spare_micro_batches_depth_three_halves():
    # m = 2: 8 micro-batches on the 3 groups up, at most 3 each (two neighbours hold 2 + 1, the third 1 + 1):
    # depth 3/2, rate 2/3, while group 0 is down [2, 5).
    # 2 by t=2; t=4 (ct 4): 2 + 4/3 -> checkpoint [4, 5]; group 0 returns at 5 (the checkpoint ends first);
    # 5 -> 9: 4 more (7 + 1/3) -> [9, 10]; 2 + 2/3 left -> t = 12 + 2/3, final -> 13 + 2/3.
    out = run(make_setup(microbatches=2), [(0, 2, 5)])
    check(out, 13 + 2 / 3, ckpts=3, failures=1)


def test_spare_neighbours_down_is_a_wipe_out_and_cancels_the_repair():
    # group 0 down [2, 3), group 1 down [2.5, 6): at 2.5 two neighbours are down: wipe-out, the 2.25 of work
    # done (2 + 0.5 x 1/2) is lost, R runs [2.5, 7.5]; group 0's repair is cancelled; both are replaced and
    # have no period after 7.5. Then 10 from scratch: [11.5, 12.5], [16.5, 17.5], final at 19.5 -> 20.5.
    out = run(make_setup(), [(0, 2, 3), (1, 2.5, 6)])
    check(out, 20.5, lost_work_min=2.25, wipeouts=1, restarts=1, failures=2, restart_min=5)


def test_a_wipe_out_during_a_checkpoint_abandons_it():
    # 4 done at t=4 -> checkpoint [4, 5]; groups 0 and 1 fail at 4.5, in group order: 0 (depth 2), then 1
    # (a lost shard): the checkpoint commits nothing, 4 lost, R [4.5, 9.5]; then [13.5, 14.5], [18.5, 19.5],
    # final at 21.5 -> 22.5. Checkpoint time: 0.5 abandoned + 3.
    out = run(make_setup(), [(0, 4.5, 6), (1, 4.5, 6)])
    check(out, 22.5, lost_work_min=4, ckpt_min=3.5, ckpts=3, wipeouts=1, failures=2)


def test_rep_loses_a_block_when_both_its_groups_fail_at_one_instant():
    # groups 0 and 1 (block 0) fail at 2, taken one at a time: 0 (no loss), then 1 (block 0 lost). Rate 1/2
    # always: 1 done and lost; R [2, 7]; then 20 min of computing for W = 10, checkpoints after every 4:
    # [11, 12], [16, 17], [21, 22], [26, 27], and at 31 both the interval and W end: the final [31, 32].
    out = run(make_setup("rep"), [(0, 2, 3), (1, 2, 3)])
    check(out, 32.0, lost_work_min=1, wipeouts=1, ckpts=5, failures=2)
    # groups 0 and 2 (two blocks): no loss, depth stays 2: 20 of computing, 5 checkpoints
    check(run(make_setup("rep"), [(0, 2, 3), (2, 2, 3)]), 25.0, wipeouts=0, failures=2)


@pytest.mark.parametrize("options, repair", [(TRACE, None), (FIXED, 2.0), (NONE, None)])
def test_none_restarts_at_every_failure_so_its_repair_modes_agree(options, repair):
    # group 0 fails at 2: 2 lost, R [2, 7]; group 2's period starts at 4, during R: absorbed (replaced at 7);
    # group 3's starts at 7, the instant R ends: R ends first, then it fails, seen: R again [7, 12].
    # Then [16, 17], [21, 22], final at 24 -> 25.
    out = run(make_setup("none", repair_time_min=repair), [(0, 2, 3), (2, 4, 4.5), (3, 7, 8)], options)
    check(out, 25.0, failures=3, failures_seen=2, failures_absorbed=1, wipeouts=2, restarts=2, lost_work_min=2)


@pytest.mark.parametrize("data, ttt", [("rebalance", 13 + 2 / 3), ("shrink", 13.5)])
def test_elastic_with_repair_from_the_trace(data, ttt):
    # m = 4, group 0 down [2, 5). rebalance: ceil(16 / 3) = 6 micro-batches, depth 3/2, rate 2/3: as the
    # spare micro-batch case, 13 + 2/3. shrink: rate 3/4 in [2, 4): 2 + 1.5 = 3.5 by t=4 -> [4, 5] (the
    # return at 5 comes after its end); 5 -> 9: 7.5 -> [9, 10]; 2.5 left -> 12.5, final -> 13.5.
    out = run(make_setup("elastic", microbatches=4, elastic_data=data), [(0, 2, 5)])
    check(out, ttt, failures=1, wipeouts=0)


def test_elastic_shrink_with_a_fixed_repair_returning_as_a_checkpoint_falls_due():
    # group 0 down [2, 4) by D = 2: rate 3/4. At t = 4 the checkpoint falls due (3.5 done) and group 0
    # returns: the checkpoint starts first, the return happens during it. [4, 5]; 5 -> 9: 7.5 -> [9, 10];
    # 2.5 left -> t = 12.5, final -> 13.5.
    out = run(make_setup("elastic", elastic_data="shrink", repair_time_min=2.0), [(0, 2, 30)], FIXED)
    check(out, 13.5, ckpts=3, failures=1, work_done_min=10)


def test_elastic_with_every_group_down_restarts():
    # all four fail at 2 (one at a time): the fourth leaves no group up: a restart, counted as a wipe-out
    out = run(make_setup("elastic", repair_time_min=1.0), [(g, 2, 3) for g in range(4)], FIXED)
    assert out["wipeouts"] == 1 and out["restarts"] == 1 and out["failures"] == 4
    with pytest.raises(ValueError, match="elastic without repair"):
        run(make_setup("elastic"), [], NONE)


def test_a_fixed_repair_ignores_a_period_in_progress_at_the_return():
    # group 0's periods [2, 3) and [3.5, 10). D = 2: back at 4, inside [3.5, 10): over for it, no failure.
    # 2 by 2; 3 by 4 -> [4, 5]; 5 -> 9: 7 -> [9, 10]; 3 left -> 13, final -> 14.
    check(run(make_setup(repair_time_min=2.0), [(0, 2, 3), (0, 3.5, 10)], FIXED), 14.0, failures=1)
    # D = 1: back at 3, fails again at 3.5, back at 4.5 (during the checkpoint [4, 5]). Work: 2 by 2, 2.5 by
    # 3, 3 by 3.5, 3.25 by 4 -> [4, 5]; 5 -> 9: 7.25 -> [9, 10]; 2.75 left -> 12.75, final -> 13.75.
    check(run(make_setup(repair_time_min=1.0), [(0, 2, 3), (0, 3.5, 10)], FIXED), 13.75, failures=2)


def test_a_period_starting_at_a_return_fails_the_group_at_once():
    # D = 1: group 0 back at 3, the instant its period [3, 3.5) starts: it returns, then fails again
    out = run(make_setup(repair_time_min=1.0), [(0, 2, 2.5), (0, 3, 3.5)], FIXED)
    assert out["failures"] == 2


def test_stalls_after_a_failure_and_a_return():
    # S = 1 after the failure at 2 (until 3), S_j = 0.5 after the return at 3 (until 3.5): no work in
    # [2, 3.5]. 2 by 2; ct 2 -> 4 at t = 5.5 (4 done) -> [5.5, 6.5]; 6.5 -> 10.5: 8 -> [10.5, 11.5];
    # 2 left -> 13.5, final -> 14.5.
    out = run(make_setup(failure_stall_min=1.0, rejoin_stall_min=0.5), [(0, 2, 3)])
    check(out, 14.5, failure_stall_min=1.0, rejoin_stall_min=0.5, compute_min=10)


def test_the_proactive_restart():
    # D_max = 2, no repair: group 0's failure at 2 brings the depth to 2: a checkpoint at once [2, 3]
    # (commits 2), then R [3, 8]; then 4 -> [12, 13]; 4 more (10) at 17: the final [17, 18].
    out = run(make_setup(restart_depth=2.0), [(0, 2, 3)], NONE)
    check(out, 18.0, proactive_restarts=1, restarts=1, ckpts=3, wipeouts=0, lost_work_min=0)


def test_a_spare_pool_waits_for_the_node_set_to_return_at_the_period_end():
    # K = 0, D = 1: group 0 fails at 2; its node set is in hardware repair until its period's end, 6; it then
    # takes it back and rejoins at 7. Rate 1/2 in [2, 7): 2 by 2, 3 by 4 -> [4, 5]; 5 -> 7: 4 (ct 2);
    # 7 -> 9: 6 -> [9, 10]; 4 left -> 14, final -> 15.
    check(run(make_setup(spares=0, repair_time_min=1.0), [(0, 2, 6)], FIXED), 15.0, failures=1)
    # K = 1: a spare at once, back at 3: the first case's 13.5
    check(run(make_setup(spares=1, repair_time_min=1.0), [(0, 2, 6)], FIXED), 13.5, failures=1)
    # H = 0.5 given: the node set is back at 2.5, the group rejoins at 3.5: 2 by 2, 2.75 by 3.5, 3.25 by 4
    # -> [4, 5]; 5 -> 9: 7.25 -> [9, 10]; 2.75 left -> 12.75 -> 13.75
    check(run(make_setup(spares=0, repair_time_min=1.0, hardware_repair_min=0.5), [(0, 2, 6)], FIXED), 13.75)
    with pytest.raises(ValueError, match="spare pool"):
        run(make_setup(spares=1), [], TRACE)


def test_a_restart_waits_for_spares():
    # rep, K = 0, no repair: groups 0 and 1 fail at 2 (block 0 lost: 1 lost); R [2, 7]; their node sets come
    # back at 9 and 10 (their periods' ends): the restart waits until 10 (3 of spare wait). Then 20 of
    # computing with checkpoints after 4: [14, 15], [19, 20], [24, 25], [29, 30], final at 34 -> 35.
    out = run(make_setup("rep", spares=0), [(0, 2, 9), (1, 2, 10)], NONE)
    check(out, 35.0, spare_wait_min=3.0, restart_min=5.0, wipeouts=1)


def test_job_wide_failures_given_as_times():
    # a job-wide failure at 3 loses 3 and restarts [3, 8]; the one at 5 falls in R and does nothing.
    # Then [12, 13], [17, 18], final at 20 -> 21.
    out = trace_run(make_setup(job_mtbf_min=100.0), make_trace([]), options=TRACE, job_times=[5.0, 3.0])
    check(out, 21.0, job_failures=1, restarts=1, lost_work_min=3, wipeouts=0)
    drawn = trace_run(make_setup(job_mtbf_min=100.0), make_trace([]), options=TRACE, rng=np.random.default_rng(1))
    assert drawn["ttt_min"] >= 13.0
    with pytest.raises(ValueError, match="need an rng"):
        trace_run(make_setup(job_mtbf_min=100.0), make_trace([]), options=TRACE)


def test_a_replay_with_job_wide_failures_is_the_same_twice():
    setup = make_setup(job_mtbf_min=20.0, work_min=200.0, ckpt_interval_min=30.0)
    trace = make_trace([(0, 2, 3), (1, 50, 60), (3, 400, 420)])
    first, second = trace_runs(setup, trace, 4, seed=7), trace_runs(setup, trace, 4, seed=7)
    assert all(np.array_equal(first[k], second[k]) for k in COUNTERS)
    assert first["job_failures"].sum() > 0


def test_the_ideal_scheme_computes_at_the_share_up():
    # rate 3/4 in [2, 3): 2 + 0.75 + 1 = 3.75 by t=4 -> [4, 5]; 5 -> 9: 7.75 -> [9, 10]; 2.25 left ->
    # 12.25, final -> 13.25. Neighbours down lose nothing.
    ideal = TraceReplay("trace", ideal=True)
    check(run(make_setup(), [(0, 2, 3)], ideal), 13.25)
    check(run(make_setup(), [(0, 2, 3), (1, 2, 3)], ideal), 13.5, wipeouts=0)
    with pytest.raises(ValueError, match="restart depth"):
        run(make_setup(), [], TraceReplay("none", ideal=True))


def test_runs_start_at_even_offsets_and_the_trace_wraps_round():
    # P = 20 min, group 0 down [2, 3) only, W = 12, no checkpoint before the final one (tau = 100).
    # Run 0 (t0 = 0): fails at 2, back at 3: 2 + 0.5 + (t - 3) = 12 at t = 12.5; final [12.5, 13.5]; the
    # next period (trace time 22) comes after: wraps floor(13.5 / 20) = 0.
    # Run 1 (t0 = 10): its period at trace time 22 is run time 12, the instant the work reaches 12: the final
    # checkpoint falls due first and the failure happens during it: [12, 13]; wraps floor(23 / 20) = 1.
    setup = make_setup(work_min=12.0, ckpt_interval_min=100.0)
    trace = make_trace([(0, 2, 3)], circle_min=20.0)
    out = trace_runs(setup, trace, 2)
    assert out["ttt_min"].tolist() == [13.5, 13.0] and out["wraps"].tolist() == [0, 1]
    assert out["failures"].tolist() == [1, 1]
    assert set(out) == set(COUNTERS)
    s = summary(out)
    assert s["ttt_hours"] == pytest.approx(13.25 / 60) and s["runs"] == 2 and s["wraps"] == 0.5


def test_a_long_run_sees_the_trace_again_after_each_wrap():
    # P = 10, group 0 down [2, 3) each lap, rep (rate 1/2 always, no loss): W = 30 needs 60 of computing,
    # tau = 100: no checkpoint before the final [60, 61]: the period starts at 2, 12, ..., 52 (6 failures
    # seen) and at 62 > 61; wraps floor(61 / 10) = 6
    out = run(make_setup("rep", work_min=30.0, ckpt_interval_min=100.0), [(0, 2, 3)], circle_min=10.0)
    check(out, 61.0, failures=6, wraps=6)


def test_the_hours_form_and_the_device_form_give_the_same_runs():
    rng = np.random.default_rng(0)
    a = rng.uniform(0, 590, 30)
    rec = TraceRecords.build(4, 10.0, rng.integers(0, 4, 30), a / 60,
                             np.minimum(a + rng.uniform(1, 30, 30), 600.0) / 60)
    units = trace_units(rec.merged(), 4)
    setup = make_setup(work_min=300.0, ckpt_interval_min=37.0)
    hours, device = trace_runs(setup, units, 3), trace_runs(setup, units.arrays(), 3)
    for key in COUNTERS:
        assert np.allclose(hours[key], device[key], rtol=1e-5), key


@pytest.mark.parametrize("changes, options, words", [
    (dict(repair_time_min=5.0), TRACE, "takes no repair time"),
    ({}, FIXED, "needs setup.repair_time_min"),
    (dict(repair_time_min=5.0, repair_law="exp"), FIXED, "fixed"),
    (dict(domains=(((0, 0, 1, 1), 100.0),)), TRACE, "failure domains"),
    ({}, TraceReplay("sometimes"), "repair must be one of"),
])
def test_settings_a_replay_cannot_honour_are_refused(changes, options, words):
    with pytest.raises(ValueError, match=words):
        run(make_setup(**changes), [], options)
    with pytest.raises(ValueError, match="units for 5 groups"):
        trace_run(make_setup(groups=5), make_trace([]))


def test_the_ring_order_decides_which_groups_are_neighbours():
    # ring (0, 2, 1, 3): groups 0 and 2 sit at ring positions 0 and 1 (neighbours), 0 and 1 at 0 and 2
    ring = (0, 2, 1, 3)
    assert run(make_setup(ring=ring), [(0, 2, 3), (2, 2.5, 3)])["wipeouts"] == 1
    assert run(make_setup(ring=ring), [(0, 2, 3), (1, 2.5, 3)])["wipeouts"] == 0


def test_a_period_during_the_spare_wait_is_absorbed_and_waits_for_a_spare_too():
    # rep, K = 0, no repair: groups 0 and 1 fail at 2 (block lost); R [2, 7]; node sets back at 9 and 10;
    # group 2's period [8, 12) starts during the wait: absorbed, its node set back at 12: the restart ends at
    # 12 (5 of spare wait); 20 of computing: [16, 17], [21, 22], [26, 27], [31, 32], final 36 -> 37.
    out = run(make_setup("rep", spares=0), [(0, 2, 9), (1, 2, 10), (2, 8, 12)], NONE)
    check(out, 37.0, spare_wait_min=5.0, failures=3, failures_absorbed=1)


# ------------------------------------------------------------------------------ a sampled run, replayed
def _recorded_run(setup, seed):
    """One sampled run of ``reference.refrun`` with every group's down periods recorded: (its counters, the
    down periods as trace records over a window past its end)."""
    import dataclasses

    from spare_jax.reference import refrun

    periods, open_at = [], {}

    class Recorded(refrun._Run):
        def group_down(self, g):
            open_at[g] = self.t
            super().group_down(g)

        def group_up(self, g):
            periods.append((g, open_at.pop(g), self.t))
            super().group_up(g)

    out = Recorded(setup, np.random.default_rng(seed), 10_000_000).run()
    end = out["ttt_min"] + 60.0
    periods += [(g, t, end) for g, t in open_at.items()]
    node, a, b = zip(*periods) if periods else ((), (), ())
    rec = TraceRecords.build(setup.groups, end / 60.0, list(node), [x / 60 for x in a], [x / 60 for x in b])
    if setup.spares is not None:  # a pool: the swap D is fixed and the hardware repair H given, as in refrun
        return out, setup, rec, FIXED if setup.repair_time_min is not None else NONE
    return out, dataclasses.replace(setup, repair_time_min=None), rec, TRACE if setup.repair_time_min else NONE


SAMPLED = {
    "spare m=1 fixed repair": dict(scheme="spare", r=2, repair_time_min=40.0),
    "spare m=4 lognormal repair, stalls": dict(scheme="spare", r=3, microbatches=4, repair_time_min=60.0,
                                               repair_law="lognormal", failure_stall_min=2.0, rejoin_stall_min=1.0),
    "spare no repair, proactive restart": dict(scheme="spare", r=3, restart_depth=2.0),
    "spare no repair, weibull lemons": dict(scheme="spare", r=2, weibull_shape=0.6,
                                            group_mtbf_min=(100.0,) * 2 + (400.0,) * 10),
    "rep exp repair": dict(scheme="rep", r=2, repair_time_min=30.0, repair_law="exp"),
    "rep no repair": dict(scheme="rep", r=3),
    "none": dict(scheme="none"),
    "elastic rebalance": dict(scheme="elastic", repair_time_min=50.0, microbatches=8),
    "elastic shrink, stalls": dict(scheme="elastic", elastic_data="shrink", repair_time_min=50.0,
                                   failure_stall_min=3.0, rejoin_stall_min=1.0),
    "spare with a pool of 1": dict(scheme="spare", r=2, repair_time_min=20.0, spares=1, hardware_repair_min=200.0),
    "rep with a pool of 0, no repair": dict(scheme="rep", r=2, spares=0, hardware_repair_min=100.0),
}


@pytest.mark.parametrize("name", sorted(SAMPLED))
def test_a_sampled_run_dumped_as_a_trace_replays_to_the_same_run(name):
    # the reference of sampled runs (refrun) records each group's failures and returns; written as a trace and
    # replayed from offset 0 with no wrap (repair from the trace, or none; with a pool the same swap D and
    # hardware repair H), it is the same run: a group that fails during R, or whose repair a restart cancels,
    # returns at the end of R, as the replay's restart has it
    changes = dict(SAMPLED[name])
    r = changes.pop("r", 2)
    setup = make_setup(changes.pop("scheme"), groups=12, r=r, work_min=600.0, ckpt_cost_min=5.0, restart_min=30.0,
                       ckpt_interval_min=45.0, **{"group_mtbf_min": (400.0,) * 12, **changes})
    for seed in range(3):
        out, replay_setup, rec, mode = _recorded_run(setup, seed)
        got = trace_run(replay_setup, trace_units(rec.merged(), 12), 0.0, mode)
        assert got["wraps"] == 0 and rec.merged().merges == 0
        for key in ("ttt_min", "compute_min", "ckpt_min", "restart_min", "spare_wait_min", "failure_stall_min",
                    "rejoin_stall_min", "work_done_min", "lost_work_min"):
            assert got[key] == pytest.approx(out[key], rel=1e-9, abs=1e-9), (seed, key)
        for key in ("wipeouts", "restarts", "proactive_restarts", "ckpts"):
            assert got[key] == out[key], (seed, key)
        assert got["failures"] == out["group_failures"], seed
