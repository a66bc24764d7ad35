"""Depth, overhead and time-to-train with repair (SPEC §1, §5, §10.5): the depth-tracking repair kernel against
an independent brute-force event walk with d* by Hall's condition (tests/reference_repair_depth.py), the
static overhead kernel (D -> inf), brute-force training runs, and the rare-wipe-out interval."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reference_repair_depth import simulate_depth_epochs, simulate_training_runs
from spare_jax.failures import FailureModel
from spare_jax.overhead import simulate_overhead
from spare_jax.placement import make_placement
from spare_jax.repair import Repair, simulate_repair


def model_with_group_mtbf(mtbf_min: float) -> FailureModel:
    return FailureModel(system_mtbf_min=mtbf_min * 1000.0 / 600_000.0)


def ratio_se(u, w):
    """E[u]/E[w] and its delta-method standard error."""
    q = u.mean() / w.mean()
    return q, math.sqrt(np.var(u - q * w, ddof=1) / u.size) / w.mean()


def z(a, se_a, b, se_b=0.0):
    return (a - b) / math.sqrt(se_a ** 2 + se_b ** 2)


@pytest.mark.parametrize("kind,n,r,law", [("stacked", 8, 3, "exp"), ("block", 9, 3, "fixed")])
def test_depth_with_repair_matches_hall_reference(kind, n, r, law):
    res = simulate_repair(make_placement(kind, n, r), 8000, 3, model=model_with_group_mtbf(100.0),
                          repair=Repair(30.0, law), track_depth=True)
    u, w, dint = simulate_depth_epochs(n, r, 2000, 1, mtbf=100.0, repair_mean=30.0, law=law, placement=kind)
    om, om_se = ratio_se(u, w)
    dep, dep_se = ratio_se(dint, u)
    zo = z(res.overhead, res.overhead_stderr, om, om_se)
    zd = z(res.time_avg_depth, res.time_avg_depth_stderr, dep, dep_se)
    print(f"{kind} {law}: Omega {res.overhead:.4f} vs {om:.4f} (z {zo:+.2f}); depth {res.time_avg_depth:.4f} vs "
          f"{dep:.4f} (z {zd:+.2f})")
    assert abs(zo) < 4 and abs(zd) < 4
    assert 1 < res.overhead < r and 1 < res.time_avg_depth < r


def test_depth_never_repaired_equals_static_overhead():
    pl = make_placement("stacked", 60, 4)
    model = FailureModel()
    st = simulate_overhead(pl, 2048, 3, model=model)
    res = simulate_repair(pl, 2048, 5, model=model, repair=Repair(1e12, "fixed"), track_depth=True)
    zo = z(res.overhead, res.overhead_stderr, st.overhead_sampled, st.overhead_sampled_stderr)
    zd = z(res.time_avg_depth, res.time_avg_depth_stderr, st.time_avg_depth, st.time_avg_depth_stderr)
    print(f"D=inf: Omega {res.overhead:.4f} vs static {st.overhead_sampled:.4f} (z {zo:+.2f}); depth "
          f"{res.time_avg_depth:.4f} vs {st.time_avg_depth:.4f} (z {zd:+.2f})")
    assert abs(zo) < 4 and abs(zd) < 4
