"""The failure-trace file (``model.trace``) and its units (``model.trace_units``): the format, the refusals with
their line numbers, merging per node (idempotent), the mapping to units, the scaling and the merge on the
circle, and the device form. Plain NumPy: no JAX."""
import os

import numpy as np
import pytest

from spare_jax.model.trace import (NodePeriods, TraceRecords, format_trace, merge_intervals, parse_trace, read_trace,
                                   write_trace)
from spare_jax.model.trace_units import bucket_width, circle_merge, nodes_per_group, trace_units

HEAD = "# nodes = 4\n# window_hours = 10\nnode,failed_hours,returned_hours\n"


def test_a_trace_with_every_feature_reads():
    text = ("\ufeff# a comment first\n# nodes: 4\n\n#window_hours=10\n# nodes are numbered from 0 (a comment)\n"
            "node, failed_hours ,returned_hours,cause,event\n"
            "3,5,6,Hardware,e1\n0,1,2\n0,1.5,3,\"Soft, ware\"\n1,9,10,,\n2,0,1e0,Network,\n")
    rec = parse_trace(text, "t.csv")
    assert (rec.nodes, rec.window_hours, rec.columns, len(rec)) == (4, 10.0, 5, 5)
    assert rec.node.tolist() == [3, 0, 0, 1, 2]  # file order, unsorted
    assert rec.failed_hours.tolist() == [5, 1, 1.5, 9, 0]
    assert rec.returned_hours.tolist() == [6, 2, 3, 10, 1]
    assert rec.cause == ("Hardware", "", "Soft, ware", "", "Network")
    assert rec.event == ("e1", "", "", "", "")
    assert rec.lines.tolist() == [7, 8, 9, 10, 11]


def test_a_trace_with_no_records_is_a_trace():
    rec = parse_trace(HEAD, "t.csv")
    assert len(rec) == 0 and rec.merged().merges == 0
    units = trace_units(rec.merged(), 4)
    assert len(units) == 0 and units.arrays().starts_min.shape == (4, 1)


def _binary(data: bytes):
    return data


# (text, the line named, words of the message)
REFUSALS = [
    ("", 1, "empty"),
    ("\n\n  \n", 3, "empty"),
    ("# just a comment\n", 1, "missing header"),
    ("# window_hours = 10\nnode,failed_hours,returned_hours\n0,1,2\n", 2, "# nodes"),
    ("# nodes = 4\nnode,failed_hours,returned_hours\n", 2, "# window_hours"),
    ("# nodes = 4\n# window_hours = 10\n0,1,2\n", 3, "record before the header"),
    ("# nodes = 4\n# window_hours = 10\n", 2, "column line"),
    ("# nodes = 4\n# window_hours = 10\nnode,start,end\n", 3, "column line must be"),
    ("# nodes = 4\n# window_hours = 10\nnode,failed_hours,returned_hours,event\n", 3, "column line must be"),
    ("# nodes = 4\n# nodes = 4\n", 2, "given twice"),
    ("# nodes = 0\n", 1, "node count"),
    ("# nodes = 2.5\n", 1, "whole number"),
    ("# nodes = 10000000000\n", 1, "node count"),
    ("# nodes = 4\n# window_hours = nan\n", 2, "finite"),
    ("# nodes = 4\n# window_hours = -1\n", 2, "window_hours must be"),
    ("# nodes = 4\n# window_hours = ten\n", 2, "not a number"),
    (HEAD + "0,1,2\n# nodes = 4\n", 5, "after the first record"),
    (HEAD + "0,1,2\n1,1x,2\n", 5, "failed_hours is not a number"),
    (HEAD + "0,1,\n", 4, "returned_hours is not a number"),
    (HEAD + "0,nan,2\n", 4, "finite"),
    (HEAD + "0,1,inf\n", 4, "finite"),
    (HEAD + "0,1,1e999\n", 4, "finite"),
    (HEAD + "0,1,-Infinity\n", 4, "finite"),
    (HEAD + "4,1,2\n", 4, "outside 0..3"),
    (HEAD + "-1,1,2\n", 4, "whole number"),
    (HEAD + "1.0,1,2\n", 4, "whole number"),
    (HEAD + "0,2,2\n", 4, "returned_hours 2 <= failed_hours 2"),
    (HEAD + "0,3,2\n", 4, "returned_hours 2 <= failed_hours 3"),
    (HEAD + "0,-0.5,2\n", 4, "outside the window"),
    (HEAD + "0,9,10.5\n", 4, "outside the window"),
    (HEAD + "0,1,2,x\n", 4, "expected 3 fields"),
    (HEAD + "0,1\n", 4, "expected 3 fields"),
    (HEAD + '0,1,"2\n', 4, "not a CSV record"),
]


@pytest.mark.parametrize("text, line, words", REFUSALS, ids=[f"{w} (line {n})" for _, n, w in REFUSALS])
def test_a_bad_trace_is_refused_in_one_line_naming_the_file_and_line(tmp_path, text, line, words):
    path = tmp_path / "t.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError) as exc:
        read_trace(path)
    msg = str(exc.value)
    assert "\n" not in msg
    assert msg.startswith(f"{path} line {line}"), msg
    assert words in msg, msg


@pytest.mark.parametrize("data, line", [(HEAD.encode() + b"0,1,2\n\x00\x01\x02\n", 5),
                                        (b"# nodes = 4\n# window_hours = 10\xff\n", 2),
                                        (b"\x89PNG\r\n\x1a\n", 1)])
def test_binary_data_is_refused_naming_its_line(tmp_path, data, line):
    path = tmp_path / "t.bin"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=rf"^{path} line {line}: binary data"):
        read_trace(path)


def test_a_directory_or_a_missing_file_is_refused(tmp_path):
    with pytest.raises(ValueError, match="not a regular file"):
        read_trace(tmp_path)
    with pytest.raises(ValueError, match="cannot read"):
        read_trace(tmp_path / "none.csv")


def test_merging_unites_overlapping_and_touching_records_of_a_node_and_counts_them():
    rec = parse_trace(HEAD + "0,1,2\n0,4,5\n0,1.5,3\n0,3,3.5\n1,1,2\n1,2.5,3\n2,0,10\n2,2,3\n", "t.csv")
    per = rec.merged()
    # node 0: [1,2) u [1.5,3) u [3,3.5) (touches) = [1,3.5), and [4,5); node 1: two apart; node 2: one
    assert per.node.tolist() == [0, 0, 1, 1, 2]
    assert per.start_hours.tolist() == [1, 4, 1, 2.5, 0]
    assert per.end_hours.tolist() == [3.5, 5, 2, 3, 10]
    assert (per.records, per.merges) == (8, 3)
    assert per.lines.tolist() == [4, 5, 8, 9, 10]  # each period's earliest record's line


def test_merging_is_idempotent_and_survives_a_round_trip_through_a_file(tmp_path):
    rng = np.random.default_rng(3)
    starts = rng.uniform(0, 90, 300)
    records = TraceRecords.build(20, 100.0, rng.integers(0, 20, 300), starts, starts + rng.exponential(2, 300)
                                 .clip(1e-3, None), cause=[f"c{i % 3}" for i in range(300)])
    once = records.merged()
    assert once.merges > 0
    twice = once.as_records().merged()
    assert twice.merges == 0
    for name in ("node", "start_hours", "end_hours"):
        assert np.array_equal(getattr(once, name), getattr(twice, name))
    path = tmp_path / "m.csv"
    write_trace(path, once.as_records(), comments=["merged once"])
    back = read_trace(path)
    assert np.array_equal(back.failed_hours, once.start_hours) and np.array_equal(back.returned_hours, once.end_hours)
    assert back.merged().merges == 0
    assert not [p for p in os.listdir(tmp_path) if ".tmp" in p]


def test_write_trace_round_trips_floats_and_quotes_causes(tmp_path):
    rec = TraceRecords.build(3, 1.0 / 3.0, [2, 0], [0.1, 1e-7], [0.2 + 1e-12, 0.3], cause=['a, "b"', "x"],
                             event=["", "burst 1"])
    path = tmp_path / "w.csv"
    write_trace(path, rec)
    back = read_trace(path)
    assert back.window_hours == rec.window_hours and back.columns == 5
    assert np.array_equal(back.failed_hours, rec.failed_hours) and np.array_equal(back.returned_hours,
                                                                                  rec.returned_hours)
    assert back.cause == rec.cause and back.event == rec.event
    assert format_trace(back) == format_trace(rec)


@pytest.mark.parametrize("args, words", [
    ((2, 10.0, [2], [1.0], [2.0]), "record 0: node 2 is outside 0..1"),
    ((2, 10.0, [0], [3.0], [2.0]), "returned_hours 2 <= failed_hours 3"),
    ((2, 10.0, [0], [1.0], [11.0]), "outside the window"),
    ((2, 10.0, [0], [np.nan], [2.0]), "finite"),
    ((2, 10.0, [0.5], [1.0], [2.0]), "whole numbers"),
    ((0, 10.0, [], [], []), "node count"),
    ((2, 0.0, [], [], []), "window_hours"),
    ((2, 10.0, [0, 1], [1.0], [2.0]), "one length"),
])
def test_built_records_are_checked_as_a_file_is(args, words):
    with pytest.raises(ValueError, match=words):
        TraceRecords.build(*args)


def test_merge_intervals_against_a_brute_force_union():
    rng = np.random.default_rng(0)
    for _ in range(50):
        k = int(rng.integers(0, 12))
        a = np.round(rng.uniform(0, 20, k), 0)
        b = a + np.round(rng.uniform(0.5, 4, k), 0)
        s, e, _ = merge_intervals(a, b)
        grid = np.arange(0, 30, 0.25)
        covered = np.zeros(grid.size, bool)
        for x, y in zip(a, b):
            covered |= (grid >= x) & (grid < y)
        mine = np.zeros(grid.size, bool)
        for x, y in zip(s, e):
            mine |= (grid >= x) & (grid < y)
        assert np.array_equal(covered, mine)
        assert np.all(s[1:] > e[:-1])  # merged intervals neither overlap nor touch


# -------------------------------------------------------------------------------------------- units
def _periods(nodes, window, recs) -> NodePeriods:
    node, a, b = zip(*recs) if recs else ((), (), ())
    return TraceRecords.build(nodes, window, list(node), list(a), list(b)).merged()


def test_unit_group_is_one_node_per_group_and_ignores_the_nodes_beyond_n():
    per = _periods(6, 10.0, [(0, 1, 2), (3, 4, 5), (5, 1, 9)])
    units = trace_units(per, 4)
    assert units.unit.tolist() == [0, 3] and units.counts.tolist() == [1, 0, 0, 1]
    assert units.circle_hours == 10.0 and units.unit_merges == 0
    with pytest.raises(ValueError, match="watches 6 nodes; 7 groups need 7"):
        trace_units(per, 7)
    with pytest.raises(ValueError, match="trace unit 'node'"):
        trace_units(per, 2, "group", 2)


def test_unit_node_unites_the_nodes_of_a_group():
    # group 0 = nodes 0, 1; group 1 = nodes 2, 3: a group is down while any of its nodes is
    per = _periods(6, 10.0, [(0, 1, 3), (1, 2, 4), (1, 6, 7), (2, 5, 6), (3, 6, 8), (4, 0, 1)])
    units = trace_units(per, 2, "node", 2)
    assert units.unit.tolist() == [0, 0, 1]
    assert units.start_hours.tolist() == [1, 6, 5] and units.end_hours.tolist() == [4, 7, 8]
    assert (units.node_merges, units.unit_merges) == (0, 2)
    with pytest.raises(ValueError, match="3 groups of 2 nodes need 6"):
        trace_units(_periods(5, 10.0, []), 3, "node", 2)


def test_nodes_per_group_is_a_whole_number():
    assert nodes_per_group(1024, 8) == 128 and nodes_per_group(8, 8) == 1
    for bad in ((1000, 3), (4, 8), (8, 0)):
        with pytest.raises(ValueError):
            nodes_per_group(*bad)


def test_scaling_keeps_lengths_and_merges_again_on_the_circle():
    # H = 100 h, s = 0.1: P = 10 h. Node 0: [20, 28) -> [2, 10) and [95, 96) -> [9.5, 10.5): they overlap,
    # one period [2, 10.5) that wraps onto [0, 0.5). Node 1: [10, 11) -> [1, 2) and [21, 22) -> [2.1, 3.1):
    # apart. Node 2: [90, 90.5) -> [9, 9.5) and [99, 100) -> [9.9, 10.9), which wraps onto [0, 0.9): apart.
    per = _periods(3, 100.0, [(0, 20, 28), (0, 95, 96), (1, 10, 11), (1, 21, 22), (2, 90, 90.5), (2, 99, 100)])
    units = trace_units(per, 3, time_scale=0.1)
    assert units.circle_hours == pytest.approx(10.0)
    got = list(zip(units.unit.tolist(), units.start_hours.round(9).tolist(), units.end_hours.round(9).tolist()))
    assert got == [(0, 2.0, 10.5), (1, 1.0, 2.0), (1, 2.1, 3.1), (2, 9.0, 9.5), (2, 9.9, 10.9)]
    assert units.unit_merges == 1
    assert units.lengths_hours.round(9).tolist() == [8.5, 1.0, 1.0, 0.5, 1.0]


def test_the_circle_merges_across_the_wrap_point_overlap_or_touch():
    # a period ending past P absorbs the first ones it reaches (touching included), repeatedly
    s, e, t, merged = circle_merge([0.0, 1.0, 3.0, 8.0], [0.5, 2.0, 4.0, 11.0], 10.0, [7, 6, 5, 4])
    assert (s, e, t, merged) == ([3.0, 8.0], [4.0, 12.0], [5, 4], 2)
    s, e, _, merged = circle_merge([8.0, 0.0], [10.0, 1.0], 10.0)  # [8, 10) touches [0, 1) at the wrap point
    assert (s, e, merged) == ([8.0], [11.0], 1)
    s, e, _, merged = circle_merge([8.0, 0.0], [9.99, 1.0], 10.0)
    assert (s, e, merged) == ([0.0, 8.0], [1.0, 9.99], 0)


def test_merging_twice_on_the_circle_changes_nothing():
    rng = np.random.default_rng(5)
    for _ in range(40):
        k = int(rng.integers(1, 10))
        a = rng.uniform(0, 10, k)
        b = a + rng.uniform(0.01, 3, k)
        s, e, _, _ = circle_merge(a.tolist(), b.tolist(), 10.0)
        if max(y - x for x, y in zip(s, e)) >= 10.0:
            continue
        s2, e2, _, merged = circle_merge(s, e, 10.0)
        assert (s2, e2, merged) == (s, e, 0)


def test_a_unit_down_on_the_whole_circle_is_refused_naming_its_line():
    per = parse_trace("# nodes = 2\n# window_hours = 100\nnode,failed_hours,returned_hours\n1,0,60\n1,50,99\n"
                      "0,1,2\n", "t.csv").merged()
    trace_units(per, 2)  # at s = 1 it is up for the last hour
    with pytest.raises(ValueError, match=r"^t.csv line 4: unit 1 \(node 1\) is down on the whole circle"):
        trace_units(per, 2, time_scale=0.5)  # [0, 60) and [25, 74) cover the circle of 50 h
    long = parse_trace("# nodes = 4\n# window_hours = 100\nnode,failed_hours,returned_hours\n0,1,2\n3,10,90\n",
                       "u.csv").merged()
    with pytest.raises(ValueError, match=r"^u.csv line 5: unit 1 \(nodes 2..3\) is down on the whole circle"):
        trace_units(long, 2, "node", 2, 0.5)  # one period of 80 h on a circle of 50 h


def test_bad_scales_and_units_are_refused():
    per = _periods(2, 10.0, [])
    for scale in (0.0, -1.0, float("nan"), 1e7, True):
        with pytest.raises(ValueError, match="time scale"):
            trace_units(per, 2, time_scale=scale)
    with pytest.raises(ValueError, match="trace unit must be"):
        trace_units(per, 2, "rack")


def test_the_device_form_pads_sorted_float32_minutes_with_inf():
    per = _periods(3, 10.0, [(0, 2, 3), (0, 1, 1.5), (2, 9.5, 10)])
    arr = trace_units(per, 3).arrays()
    assert arr.starts_min.dtype == np.float32 and arr.ends_min.dtype == np.float32 and arr.counts.dtype == np.int32
    assert arr.starts_min.shape == (3, 2) and arr.width == 2 and arr.units == 3
    assert arr.counts.tolist() == [2, 0, 1]
    assert arr.starts_min.tolist() == [[60, 120], [np.inf, np.inf], [570, np.inf]]
    assert arr.ends_min.tolist() == [[90, 180], [np.inf, np.inf], [600, np.inf]]
    assert arr.circle_min == 600.0 and (arr.records, arr.node_merges, arr.unit_merges, arr.rounding_merges) == (3, 0,
                                                                                                               0, 0)
    assert trace_units(per, 3).arrays(width=8).starts_min.shape == (3, 8)
    with pytest.raises(ValueError, match="width 1 is below"):
        trace_units(per, 3).arrays(width=1)


def test_the_device_form_merges_periods_that_float32_makes_touch():
    # 1 h apart at 100,000 h: float32 minutes (ulp 0.5 min at 6e6 min) keep them; 1e-6 h apart they touch
    per = _periods(1, 200_000.0, [(0, 100_000.0, 100_001.0), (0, 100_001.000001, 100_002.0)])
    units = trace_units(per, 1)
    assert len(units) == 2
    arr = units.arrays()
    assert arr.counts.tolist() == [1] and arr.rounding_merges == 1
    assert arr.ends_min[0, 0] == np.float32(100_002.0 * 60)


def test_bucket_widths_are_powers_of_two():
    assert [bucket_width(k) for k in (0, 1, 2, 3, 4, 5, 17, 64, 65)] == [1, 1, 2, 4, 4, 8, 32, 64, 128]
