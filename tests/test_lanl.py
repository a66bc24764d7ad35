"""The Los Alamos failure data shipped with the package (``model.lanl``): the file and its credit, the record
counts of its README, the conversion to a trace, and the figures it shows (bursts, neighbours, the
most-failing nodes) counted on the raw records. Plain NumPy: no JAX.

The data were provided by Los Alamos National Laboratory (LA-UR-05-7318)."""
import hashlib
import lzma

import numpy as np
import pytest

from spare_jax.model.lanl import BLAME_COLUMNS, LANL_CREDIT, LANL_FILE, lanl_record_counts, read_lanl
from spare_jax.model.trace_units import trace_units
from spare_jax.planner.trace_bursts import burst_statistics
from spare_jax.planner.trace_fit import fit_trace, fit_uneven


def test_the_published_file_ships_unchanged_with_its_credit():
    assert LANL_FILE.is_file() and LANL_FILE.stat().st_size < 300_000
    data = lzma.decompress(LANL_FILE.read_bytes())
    assert len(data) == 2_939_652 and hashlib.md5(data).hexdigest() == "ba81bdd8d81306d6c78c12cf90c34cdf"
    readme = " ".join((LANL_FILE.parent / "README.md").read_text().split())
    credit = "We request that if you use these data in your research that you recognize Los Alamos for providing these data."
    assert credit in readme and "Schroeder" in readme and "DSN 2006" in readme
    assert "Los Alamos National Laboratory" in LANL_CREDIT


def test_the_record_counts_are_those_of_the_readme():
    counts = lanl_record_counts()
    assert sum(counts.values()) == 23_739
    assert (counts[18], counts[19], counts[20]) == (3_997, 3_284, 2_478)


@pytest.mark.parametrize("system, nodes, records", [(18, 1024, 3997), (19, 1024, 3284), (20, 512, 2478)])
def test_a_system_converts_to_a_trace(system, nodes, records):
    lanl = read_lanl(system)
    rec = lanl.records
    assert (lanl.system, rec.nodes, len(rec), lanl.dropped, lanl.rows) == (system, nodes, records, 0, records)
    assert rec.failed_hours.min() == 0.0 and rec.returned_hours.max() == rec.window_hours
    assert set(rec.cause) <= set(BLAME_COLUMNS) and set(rec.event) == {"No"}
    assert rec.node.min() >= 0 and rec.node.max() < nodes
    # every time is a whole minute from time 0
    minutes = np.concatenate([rec.failed_hours, rec.returned_hours]) * 60.0
    assert np.allclose(minutes, np.round(minutes), rtol=0, atol=1e-6)


def test_one_record_by_hand():
    # system 20's first record in the file (line 20188): node 0, 12/31/2001 13:56 to 16:13, CPU (Hardware).
    # Time 0 is the system's earliest start, 12/20/2001 08:00: 11 days 5 h 56 min = 16,196 min later; it is
    # fixed 137 min after it started.
    lanl = read_lanl(20)
    rec = lanl.records
    assert str(lanl.time_zero) == "2001-12-20 08:00:00"
    i = int(np.flatnonzero(rec.lines == 20188)[0])
    assert rec.node[i] == 0 and rec.cause[i] == "Hardware"
    assert rec.failed_hours[i] * 60 == pytest.approx(16_196) and rec.returned_hours[i] * 60 == pytest.approx(16_333)


def test_systems_that_break_the_trace_rules_are_refused():
    with pytest.raises(ValueError, match="no records of system 99"):
        read_lanl(99)
    with pytest.raises(ValueError, match="system 17's 'nodes' column is not one whole number"):
        read_lanl(17)
    with pytest.raises(ValueError, match=r"line \d+: node 578 \(nodenumz\) is outside 0..255"):
        read_lanl(11)
    nine = read_lanl(9)  # 29 records with fixed <= started, dropped and counted
    assert (nine.dropped, len(nine.records), nine.rows) == (29, 251, 280)


# the share (%) of failures within 10 min of another node's failure, expected if independent, of those
# pairs the share at ring distance <= 3 and the share for even independent nodes, and the share of failures
# on the most-failing 1% of nodes, counted on the raw records (rounded to 0.1)
RAW_FIGURES = {18: (10.7, 4.4, 4.3, 0.6, 8.5), 19: (7.9, 4.2, 5.4, 0.6, 10.3), 20: (14.9, 2.5, 7.6, 1.2, 10.4)}


@pytest.mark.parametrize("system", sorted(RAW_FIGURES))
def test_the_raw_records_show_bursts_neighbours_and_a_few_bad_nodes(system):
    rec = read_lanl(system).records
    b = burst_statistics(rec.node, rec.failed_hours, rec.nodes, rec.window_hours, 10 / 60, 3)
    counts = np.bincount(rec.node, minlength=rec.nodes)
    top = fit_uneven(counts, np.full(rec.nodes, rec.window_hours))
    got = tuple(round(x, 1) for x in (b.burst_pct, b.burst_independent_pct, b.neighbour_pct, b.neighbour_even_pct,
                                      top.top_pct))
    assert got == RAW_FIGURES[system]
    # with each node's own rate, independent pairs sit near each other a little more often (system 20: its
    # most-failing nodes are neighbours)
    assert b.neighbour_independent_pct >= b.neighbour_even_pct
    # the lemons that fit: q = the top 1 %, and the expected share under them is the observed one
    assert top.lemon_fraction == top.top_units / rec.nodes and top.top_lemons_pct == pytest.approx(top.top_pct, abs=1e-3)


def test_the_fits_find_what_schroeder_and_gibson_found():
    # a Weibull shape below 1 with shape 1 rejected, and a lognormal repair, at the system's own rate
    rec = read_lanl(20).records
    fit = fit_trace(trace_units(rec.merged(), rec.nodes))
    assert fit.failure.weibull.shape_ci[1] < 1.0 and fit.failure.weibull.p_exponential < 1e-6
    assert fit.repair.verdict == "lognormal"
    assert (fit.records, fit.node_merges, fit.periods) == (2478, 17, 2461)
