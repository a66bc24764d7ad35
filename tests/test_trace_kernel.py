"""A replay in the whole-run kernel (``kernels.run_trace``, ``kernels.run_driver.replay_each``): hand-worked tiny
traces, one per scheme and repair mode, with the time-to-train worked out in each test (minutes); a trace with
no records; a sampled run of the kernel dumped as a trace replays to the same run; the kernel against the
independent reference replay (``reference.tracerun``); determinism across chunk sizes.

The settings are those of tests/test_trace_reference.py (N = 4, W = 10, C = 1, R = 5, tau = 4, P = 1000 min,
``spare`` r = 2 stacked: two neighbours down lose a shard). The fast tier compiles one program (``spare``
r >= 2 with repair from the trace, K = 4): every case of it shares it (r, m, costs, stalls, W, tau and the
trace are numbers of the call); the other schemes and modes are in the slow tier."""
import dataclasses
import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_trace_reference import make_setup  # noqa: E402

from spare_jax.model.cluster import Sampling  # noqa: E402
from spare_jax.model.trace import TraceRecords  # noqa: E402
from spare_jax.model.trace_units import trace_units  # noqa: E402

WIDTH = 4  # the device width of every hand-worked trace (one compiled shape per scheme and mode)


def device_trace(periods, groups=4, circle_min=1000.0):
    node, a, b = zip(*periods) if periods else ((), (), ())
    rec = TraceRecords.build(groups, circle_min / 60.0, list(node), [x / 60.0 for x in a], [x / 60.0 for x in b])
    return trace_units(rec.merged(), groups).arrays(WIDTH)


def replay(setup, periods, repair="trace", runs=1, circle_min=1000.0, **sampling):
    from spare_jax.kernels.run_driver import replay_each

    return replay_each(setup, device_trace(periods, setup.groups, circle_min), repair,
                       Sampling(count=runs, seed=sampling.pop("seed", 0), **sampling))


def check(out, ttt, **counts):
    assert float(out["ttt"][0]) == pytest.approx(ttt, rel=2e-7, abs=1e-6), out
    for key, value in counts.items():
        assert float(out[key][0]) == pytest.approx(value, rel=2e-7, abs=1e-6), (key, out)


# ------------------------------------------------------------------------- the fast tier: one program
@pytest.mark.parametrize("work, tau", [(10.0, 4.0), (12.0, 4.0), (7.5, 0.5), (100.0, 30.0)])
def test_a_trace_with_no_records_gives_w_plus_c_per_started_interval(work, tau):
    # no failure: W of computing, a checkpoint after every tau and the final partial one: W + C ceil(W / tau)
    out = replay(make_setup(work_min=work, ckpt_interval_min=tau), [])
    assert float(out["ttt"][0]) == work + 1.0 * math.ceil(work / tau)
    assert (out["failures"][0], out["restarts"][0], out["wraps"][0]) == (0, 0, 0)
    assert out["ckpts"][0] == math.ceil(work / tau)


def test_spare_with_repair_from_the_trace():
    # group 0 down [2, 3): depth 2 (rate 1/2) for 1 min. 2 by t=2; 2.5 by 3; 3.5 at t=4 (ct 4): checkpoint
    # [4, 5]; 5 -> 9: 7.5 -> [9, 10]; 2.5 left -> 12.5, final [12.5, 13.5].
    check(replay(make_setup(), [(0, 2, 3)]), 13.5, compute=10.5, ckpts=3, failures=1, wipeouts=0)


def test_spare_micro_batches_depth_three_halves():
    # m = 2, group 0 down [2, 5): depth 3/2 (rate 2/3). 2 by 2; 2 + 4/3 at 4 -> [4, 5] (the return at 5
    # comes after the checkpoint's end); 5 -> 9: 7 + 1/3 -> [9, 10]; 2 + 2/3 left -> 12 + 2/3, final 13 + 2/3.
    check(replay(make_setup(microbatches=2), [(0, 2, 5)]), 13 + 2 / 3, ckpts=3, failures=1)


def test_neighbours_down_wipe_out_and_cancel_the_repair():
    # group 0 down [2, 3), group 1 down [2.5, 6): at 2.5 a shard is lost: 2 + 0.5 / 2 = 2.25 lost, R [2.5,
    # 7.5], both replaced (no period after 7.5). 10 from scratch: [11.5, 12.5], [16.5, 17.5], final 19.5 -> 20.5.
    check(replay(make_setup(), [(0, 2, 3), (1, 2.5, 6)]), 20.5, lost=2.25, wipeouts=1, restarts=1, failures=2)


def test_a_wipe_out_during_a_checkpoint_abandons_it():
    # checkpoint [4, 5] with 4 done; groups 0 and 1 fail at 4.5, one at a time in group order: the second
    # loses a shard; 4 lost, R [4.5, 9.5]; then [13.5, 14.5], [18.5, 19.5], final 21.5 -> 22.5
    check(replay(make_setup(), [(0, 4.5, 6), (1, 4.5, 6)]), 22.5, lost=4, ckpts=3, wipeouts=1, failures=2)


def test_a_return_goes_before_a_failure_at_the_same_instant():
    # group 1 down [2, 3), group 0 down [3, 4): at 3 group 1 returns first, then group 0 fails: never two
    # neighbours down, no wipe-out. Rate 1/2 in [2, 4): 2 + 1 = 3 at 4 -> [4, 5]; 5 -> 9: 7 -> [9, 10];
    # 3 left -> 13, final 14.
    check(replay(make_setup(), [(1, 2, 3), (0, 3, 4)]), 14.0, wipeouts=0, failures=2)


def test_stalls_after_a_failure_and_a_return():
    # S = 1 after the failure at 2, S_j = 0.5 after the return at 3: no work in [2, 3.5]. ct 2 -> 4 at 5.5
    # -> [5.5, 6.5]; 6.5 -> 10.5: 8 -> [10.5, 11.5]; 2 left -> 13.5, final 14.5.
    check(replay(make_setup(failure_stall_min=1.0, rejoin_stall_min=0.5), [(0, 2, 3)]), 14.5,
          failure_stall=1.0, rejoin_stall=0.5, compute=10)


def test_runs_start_at_even_offsets_and_the_trace_wraps_round():
    # P = 20, group 0 down [2, 3), W = 12, tau = 100. Run 0: fails at 2, back at 3; 12 done at 12.5, final
    # [12.5, 13.5], wraps 0. Run 1 (t0 = 10): the period at trace time 22 is run time 12, the instant the
    # work reaches 12: the final checkpoint starts first, the failure happens during it: 13, wraps 1.
    out = replay(make_setup(work_min=12.0, ckpt_interval_min=100.0), [(0, 2, 3)], runs=2, circle_min=20.0)
    assert out["ttt"].tolist() == [13.5, 13.0] and out["wraps"].tolist() == [0, 1]
    assert out["failures"].tolist() == [1, 1] and out["offset_min"].tolist() == [0.0, 10.0]


def test_a_long_run_sees_the_trace_again_after_each_wrap():
    # P = 10, group 0 down [2, 3) each lap: r = 2, W = 30, tau = 100 (only the final checkpoint). Each
    # period costs half a minute of work (a minute at rate 1/2): the work is t - n / 2 with n the periods
    # over by t; 30 at t = 31.5 (n = 3: 2, 12, 22); final [31.5, 32.5], during which the period at 32 starts
    # (a fourth failure); wraps floor(32.5 / 10) = 3
    out = replay(make_setup(work_min=30.0, ckpt_interval_min=100.0), [(0, 2, 3)], circle_min=10.0)
    check(out, 32.5, failures=4, wraps=3)


def test_a_new_trace_of_the_same_size_compiles_nothing():
    # the periods are traced values: another trace, other costs, r and m, padded to the same width, reuse the
    # program the cases above compiled (spare r >= 2, repair from the trace, N = 4, K = 4)
    from spare_jax.kernels.compiles import count_compiles

    replay(make_setup(), [(0, 2, 3)])  # (compiled once here if run alone)
    with count_compiles() as seen:
        out = replay(make_setup(r=3, microbatches=2, work_min=20.0, ckpt_cost_min=2.0),
                     [(1, 5, 9), (2, 6, 7), (3, 1, 2), (3, 30, 40)], runs=3, circle_min=500.0)
    assert (seen.compiles, seen.lowerings) == (0, 0)
    assert out["ttt"].size == 3 and (out["failures"] > 0).any()


# ------------------------------------------------------------------------- the slow tier: each scheme and mode
@pytest.mark.slow
def test_spare_with_a_fixed_repair_and_without_repair():
    # fixed D = 4: group 0 fails at 2 and returns at 6 (its period's end is not read): 14.5 (as the reference)
    check(replay(make_setup(repair_time_min=4.0), [(0, 2, 3)], "fixed"), 14.5, compute=11.5, ckpts=3, failures=1)
    # D = 1, periods [2, 3) and [3.5, 10): back at 3, fails at 3.5, back at 4.5 (during [4, 5]): 13.75
    check(replay(make_setup(repair_time_min=1.0), [(0, 2, 3), (0, 3.5, 10)], "fixed"), 13.75, failures=2)
    # no repair: group 0 down from 2 on (rate 1/2): [4, 5], [9, 10], [14, 15], [19, 20], 1 left at 1/2:
    # 22, final 23; its period [4, 5) starts while it is down: not counted
    check(replay(make_setup(), [(0, 2, 3), (0, 4, 5)], "none"), 23.0, compute=18, ckpts=5, failures=1)


@pytest.mark.slow
def test_rep_loses_a_block_when_both_its_groups_fail():
    # groups 0 and 1 (block 0) fail at 2: 1 lost (rate 1/2), R [2, 7]; then 20 of computing for W = 10:
    # [11, 12], [16, 17], [21, 22], [26, 27], final [31, 32]. Groups 0 and 2 (two blocks): 25.
    check(replay(make_setup("rep"), [(0, 2, 3), (1, 2, 3)]), 32.0, lost=1, wipeouts=1, ckpts=5, failures=2)
    check(replay(make_setup("rep"), [(0, 2, 3), (2, 2, 3)]), 25.0, wipeouts=0, failures=2)


@pytest.mark.slow
@pytest.mark.parametrize("repair, d", [("trace", None), ("fixed", 2.0), ("none", None)])
def test_none_restarts_at_every_failure_so_its_repair_modes_agree(repair, d):
    # group 0 fails at 2: 2 lost, R [2, 7]; group 2's period starts at 4, during R: absorbed; group 3's
    # starts at 7, the instant R ends: R ends first, then it fails: R [7, 12]; [16, 17], [21, 22], 24 -> 25
    out = replay(make_setup("none", repair_time_min=d), [(0, 2, 3), (2, 4, 4.5), (3, 7, 8)], repair)
    check(out, 25.0, failures=3, wipeouts=2, restarts=2, lost=2)


@pytest.mark.slow
@pytest.mark.parametrize("data, ttt", [("rebalance", 13 + 2 / 3), ("shrink", 13.5)])
def test_elastic_with_repair_from_the_trace(data, ttt):
    # m = 4, group 0 down [2, 5): rebalance depth ceil(16 / 3) / 4 = 3/2 as spare's m = 2 case; shrink rate
    # 3/4: 3.5 by 4 -> [4, 5]; 5 -> 9: 7.5 -> [9, 10]; 12.5, final 13.5
    check(replay(make_setup("elastic", microbatches=4, elastic_data=data), [(0, 2, 5)]), ttt, failures=1)


@pytest.mark.slow
def test_elastic_shrink_with_a_fixed_repair_and_the_refusal_without_repair():
    # D = 2: down [2, 4), rate 3/4; at 4 the checkpoint falls due first, the return happens during it: 13.5
    check(replay(make_setup("elastic", elastic_data="shrink", repair_time_min=2.0), [(0, 2, 30)], "fixed"), 13.5)
    with pytest.raises(ValueError, match="elastic without repair"):
        replay(make_setup("elastic"), [], "none")


@pytest.mark.slow
def test_the_proactive_restart_and_a_spare_pool():
    # D_max = 2, no repair: the failure at 2 brings the depth to 2: checkpoint [2, 3], R [3, 8], [12, 13],
    # final [17, 18]
    check(replay(make_setup(restart_depth=2.0), [(0, 2, 3)], "none"), 18.0, proactive_restarts=1, restarts=1)
    # K = 0, D = 1, H = 0.5: the node set is back at 2.5, the group rejoins at 3.5: 13.75
    check(replay(make_setup(spares=0, repair_time_min=1.0, hardware_repair_min=0.5), [(0, 2, 6)], "fixed"), 13.75)
    for changes, repair, words in ((dict(spares=1), "trace", "spare pool"),
                                   (dict(domains=(((0, 0, 1, 1), 100.0),)), "trace", "failure domains"),
                                   (dict(repair_time_min=1.0, repair_law="exp"), "fixed", "fixed time")):
        with pytest.raises(ValueError, match=words):
            replay(make_setup(**changes), [], repair)


@pytest.mark.slow
def test_a_spare_pool_whose_node_sets_return_at_their_periods_end():
    # no H given: a failed group's node set is away until the end of the period that failed it.
    # K = 0, D = 1: group 0 fails at 2, its node set is back at 6; it takes it and rejoins at 7. Rate 1/2 in
    # [2, 7): 2 by 2, 3 by 4 -> [4, 5]; 5 -> 7: 4 (ct 2); 7 -> 9: 6 -> [9, 10]; 4 left -> 14, final -> 15.
    check(replay(make_setup(spares=0, repair_time_min=1.0), [(0, 2, 6)], "fixed"), 15.0, failures=1)
    # K = 1: a spare at once, back at 3: 13.5
    check(replay(make_setup(spares=1, repair_time_min=1.0), [(0, 2, 6)], "fixed"), 13.5, failures=1)
    # K = 0: group 0 down [2, 9), group 1 down [3, 4): the node sets return out of the order they left. At 3
    # two neighbours are down: a wipe-out (2 + 0.5 lost), R [3, 8]. Group 1's set, back at 4, serves the
    # first waiting group, group 0 (waiting since 2: it holds the spare, down, until R ends); group 0's set,
    # back at 9, serves group 1: the restart ends at 9 (1 of spare wait). Then 10 of work: [13, 14], [18, 19],
    # final [21, 22].
    out = replay(make_setup(spares=0, repair_time_min=1.0), [(0, 2, 9), (1, 3, 4)], "fixed")
    from spare_jax.reference.tracerun import TraceReplay, trace_run

    ref = trace_run(make_setup(spares=0, repair_time_min=1.0), device_trace([(0, 2, 9), (1, 3, 4)]), 0.0,
                    TraceReplay("fixed"))
    assert ref["ttt_min"] == 22.0
    check(out, 22.0, wipeouts=1, spare_wait=1.0, lost=2.5)


@pytest.mark.slow
def test_job_wide_failures_are_the_only_random_part_and_a_replay_is_deterministic():
    setup = make_setup(job_mtbf_min=20.0, work_min=200.0, ckpt_interval_min=30.0)
    periods = [(0, 2, 3), (1, 50, 60), (3, 400, 420)]
    first = replay(setup, periods, runs=5, seed=7)
    for chunk in (1, 2, 8):
        again = replay(setup, periods, runs=5, seed=7, chunk_size=chunk)
        assert all(np.array_equal(first[k], again[k]) for k in first), chunk
    assert first["job_failures"].sum() > 0
    assert not np.array_equal(first["ttt"], replay(setup, periods, runs=5, seed=8)["ttt"])


# ------------------------------------------------------------------------- a sampled run dumped as a trace
def _sampled(setup, runs=3, seed=5, log=1024):
    """``runs`` sampled runs of the whole-run kernel with their event logs (``RunShape.log_events``)."""
    from spare_jax.kernels.driver import as_uint32_key_words
    from spare_jax.kernels.run import jitted_run_kernel
    from spare_jax.kernels.lower import lower

    fn = jitted_run_kernel(lower(setup)[0]._replace(log_events=log))
    out = fn(as_uint32_key_words(seed), np.arange(runs, dtype=np.uint32), np.uint32(runs), lower(setup)[1],
             max_events=np.int32(1 << 20))
    out = {k: np.asarray(v) for k, v in out.items()}
    assert (out["events"] < log).all() and not out["censored"].any()
    return out


def _dumped(setup, out, i, tmp_path):
    """Run i's failures and returns written as a trace file (``write_trace``) over a window past its end, read
    back as a device form."""
    from spare_jax.kernels.run_trace import logged_periods
    from spare_jax.model.trace import read_trace, write_trace

    end = float(out["ttt"][i]) + 60.0
    per = logged_periods(out["log_t"][i], out["log_g"][i], out["log_kind"][i], setup.ring, end)
    node, a, b = zip(*per) if per else ((), (), ())
    rec = TraceRecords.build(setup.groups, end / 60.0, list(node), [x / 60 for x in a], [x / 60 for x in b])
    path = tmp_path / f"run{i}.csv"
    write_trace(path, rec)
    merged = read_trace(path).merged()
    assert merged.merges == 0
    return trace_units(merged, setup.groups).arrays(64)


SAMPLED = {
    "spare m=1 fixed repair": dict(scheme="spare", r=2, repair_time_min=40.0),
    "spare m=8 fixed repair, stalls": dict(scheme="spare", r=3, microbatches=8, repair_time_min=60.0,
                                           failure_stall_min=2.0, rejoin_stall_min=1.0),
    "spare m=1 no repair": dict(scheme="spare", r=3),
    "spare m=8 no repair": dict(scheme="spare", r=3, microbatches=8),
    "rep fixed repair": dict(scheme="rep", r=2, repair_time_min=30.0),
    "rep no repair": dict(scheme="rep", r=3),
    "none fixed repair": dict(scheme="none", repair_time_min=30.0),
    "none no repair": dict(scheme="none"),
    "elastic rebalance fixed repair": dict(scheme="elastic", repair_time_min=50.0, microbatches=8),
    "elastic shrink fixed repair, stalls": dict(scheme="elastic", elastic_data="shrink", repair_time_min=50.0,
                                                failure_stall_min=3.0, rejoin_stall_min=1.0),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SAMPLED))
def test_a_sampled_run_dumped_as_a_trace_replays_to_the_same_run(name, tmp_path):
    # a run of the kernel's own random clocks, its failures and returns written as a trace (a group failing
    # during R, or whose repair a restart cancels, returns at the end of R), replayed from offset 0 with no
    # wrap: with repair from the trace (and, for a fixed repair, with that fixed repair too) the same run,
    # to float32 rounding
    changes = dict(SAMPLED[name])
    r = changes.pop("r", 2)
    setup = make_setup(changes.pop("scheme"), groups=12, r=r, work_min=600.0, ckpt_cost_min=5.0,
                       restart_min=30.0, ckpt_interval_min=45.0, **{"group_mtbf_min": (400.0,) * 12, **changes})
    out = _sampled(setup)
    modes = ["trace", "fixed"] if setup.repair_time_min is not None else ["none"]
    for i in range(out["ttt"].size):
        arrays = _dumped(setup, out, i, tmp_path)
        for mode in modes:
            got = _replay_arrays(setup, arrays, mode)
            assert got["wraps"][0] == 0
            for key in ("ttt", "compute", "work", "lost", "failure_stall", "rejoin_stall"):
                assert float(got[key][0]) == pytest.approx(float(out[key][i]), rel=1e-5, abs=1e-3), (i, mode, key)
            for key in ("failures", "wipeouts", "restarts", "proactive_restarts", "ckpts"):
                assert got[key][0] == out[key][i], (i, mode, key)


def _replay_arrays(setup, arrays, mode, runs=1, **sampling):
    from spare_jax.kernels.run_driver import replay_each

    own = setup if mode == "fixed" else dataclasses.replace(setup, repair_time_min=None)
    return replay_each(own, arrays, mode, Sampling(count=runs, seed=0, **sampling))


# ------------------------------------------------------------------------- against the reference replay
REFERENCE = {
    "spare r=2 trace": (dict(scheme="spare", r=2), "trace"),
    "spare r=3 m=4 fixed, stalls": (dict(scheme="spare", r=3, microbatches=4, repair_time_min=20.0,
                                         failure_stall_min=1.0, rejoin_stall_min=0.5), "fixed"),
    "spare r=2 none, proactive": (dict(scheme="spare", r=3, restart_depth=2.0), "none"),
    "rep r=2 trace": (dict(scheme="rep", r=2), "trace"),
    "none trace": (dict(scheme="none"), "trace"),
    "elastic shrink trace": (dict(scheme="elastic", elastic_data="shrink"), "trace"),
    "spare r=2 pool": (dict(scheme="spare", r=2, spares=1, repair_time_min=10.0, hardware_repair_min=90.0), "fixed"),
    "spare r=2 pool, node sets back at their periods' end": (dict(scheme="spare", r=2, spares=1, repair_time_min=10.0),
                                                             "fixed"),
    "rep r=2 pool of 0, no repair": (dict(scheme="rep", r=2, spares=0), "none"),
    "spare interleaved ring": (dict(scheme="spare", r=2, ring=(0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11)), "trace"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_the_kernel_agrees_with_the_reference_replay(name):
    from spare_jax.reference.tracerun import TraceReplay, trace_runs

    changes, mode = REFERENCE[name]
    changes = dict(changes)
    r = changes.pop("r", 2)
    setup = make_setup(changes.pop("scheme"), groups=12, r=r, work_min=900.0, ckpt_cost_min=5.0,
                       restart_min=30.0, ckpt_interval_min=45.0, **changes)
    rng = np.random.default_rng(3)
    a = np.round(rng.uniform(0, 2990, 90), 2)  # hundredths of a minute: no ties by rounding
    b = np.minimum(a + np.round(rng.uniform(5, 120, 90), 2), 3000.0)
    rec = TraceRecords.build(12, 50.0, rng.integers(0, 12, 90), a / 60, b / 60)
    arrays = trace_units(rec.merged(), 12, time_scale=1.0).arrays()
    ref = trace_runs(setup, arrays, 6, TraceReplay(mode))
    got = _replay_arrays(setup, arrays, mode, runs=6)
    np.testing.assert_allclose(got["ttt"], ref["ttt_min"], rtol=1e-5)
    for key, rkey in (("failures", "failures"), ("wipeouts", "wipeouts"), ("restarts", "restarts"),
                      ("ckpts", "ckpts"), ("wraps", "wraps")):
        np.testing.assert_array_equal(got[key], ref[rkey], err_msg=key)


# ------------------------------------------------------------------------- the Los Alamos experiment
@pytest.mark.slow
def test_the_lanl_replay_quick_run_writes_its_table_and_figure(tmp_path):
    import json
    import os
    import subprocess

    root = Path(__file__).resolve().parent.parent
    res = subprocess.run([sys.executable, str(root / "experiments" / "lanl_replay.py"), "--quick", "--out",
                          str(tmp_path)], capture_output=True, text=True, timeout=1800)
    assert res.returncode == 0, res.stderr[-2000:]
    assert {"lanl_replay.csv", "lanl_replay.json", "lanl_replay.png"} <= set(os.listdir(tmp_path))
    record = json.loads((tmp_path / "lanl_replay.json").read_text())
    assert "Los Alamos National Laboratory" in record["credit"]
    assert {row["strategy"] for row in record["rows"]} == {"rep r=2", "spare r=2 m=1"}
    for row in record["rows"]:
        assert row["replay_ttt_hours"] >= record["settings"]["work_hours"]
        assert row["model_error_pct"] == pytest.approx(
            100 * (row["model_ttt_hours"] - row["replay_ttt_hours"]) / row["replay_ttt_hours"])
    assert record["fits"][0]["system"] == 20 and record["fits"][0]["weibull_shape"] < 1


@pytest.mark.slow
def test_plan_on_a_trace_ranks_by_the_replay_and_writes_its_report(tmp_path, capsys):
    import json

    from spare_jax.cli import main

    trace = str(Path(__file__).parent / "data" / "traces" / "small.csv")
    report = tmp_path / "plan.html"
    code = main(["plan", "--gpus", "24576", "--gpus-per-group", "1024", "--failure-trace", trace, "--work-hours", "10",
                 "--r-max", "2", "--runs", "2", "--report", str(report), "--json", "--quiet"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    names = [r["name"] for r in out["strategies"]]
    assert names == ["none", "rep r=2", "spare r=2", "elastic"]
    ranks = sorted(out["strategies"], key=lambda r: r["replay_rank"])
    assert out["best_replay"] == ranks[0]["name"] and ranks[0]["replay_ttt_hours"] <= ranks[-1]["replay_ttt_hours"]
    assert out["rankings_agree"] == (out["ranking_disagreements"] == []) and out["ranking_text"]
    parts = [p["parts"] for p in out["gap_parts"]]
    assert parts == ["the full fit", "no Weibull law (exponential)", "no lemons", "exponential repair"]
    assert out["gap_parts"][0]["model_ttt_hours"] == pytest.approx(ranks[0]["model_ttt_hours"])
    assert out["gap_text"].startswith(f"For {ranks[0]['name']}")
    text = report.read_text()
    assert text.count("data:image/png;base64,") == 2 and "down periods" in text and "parts" in text
