"""The library refuses what the command line refuses (a ValueError naming the parameter), and bounds its own
work up front: a second holder of a state directory, failed-group lists and traces, sample sizes and seeds,
a finite spare pool where epochs are simulated, the repair model, the repair theory's cost. The command
line's refusals: tests/test_cli_refusals_*.py."""

from __future__ import annotations

import math
import time
import warnings

import pytest

from spare_jax.model.cluster import Cluster
from spare_jax.model.repair import Repair


def test_chunkstore_second_holder_refused_and_temp_names_unique(tmp_path):
    from spare_jax.kernels.state_files import ChunkStore

    a = ChunkStore(str(tmp_path), {"x": 1})
    with pytest.raises(ValueError, match="another run"):
        ChunkStore(str(tmp_path), {"x": 1})
    assert ChunkStore._tmp_name("p", ".npz") != ChunkStore._tmp_name("p", ".npz")
    a.close()
    ChunkStore(str(tmp_path), {"x": 1}).close()


def test_library_refuses_the_same():
    from spare_jax.model.cluster import Sampling
    from spare_jax.model.placement import make_placement
    from spare_jax.rectlr.reorder import check_failures, parse_failed_list, replay
    from spare_jax.kernels.overhead import simulate_overhead
    from spare_jax.kernels.wipeout import simulate_wipeout

    for bad in (["\uff13"], [math.inf], [True], "3,4"):
        with pytest.raises(ValueError, match="failed"):
            check_failures(bad, 20)
    with pytest.raises(ValueError, match="`failed`"):
        parse_failed_list("3,17,")
    assert parse_failed_list(" 3, 17 ,4") == [3, 17, 4]
    with pytest.raises(ValueError, match="time_min"):
        replay(make_placement("stacked", 20, 2), [3, 4], [1.0, math.nan])
    with pytest.raises(ValueError, match="trials"):
        simulate_overhead(make_placement("stacked", 20, 2), Sampling(2**32))
    with pytest.raises(ValueError, match="trials"):
        simulate_overhead(make_placement("random", 20, 2, seed=0), Sampling(2**32))
    with pytest.raises(ValueError, match="seed"):
        simulate_wipeout(make_placement("stacked", 20, 2), Sampling(10, seed=2**63))


def test_library_epochs_refuse_a_finite_pool():
    from spare_jax.measure import overhead, wipeout

    cluster = Cluster(16, repair=Repair(30.0, spares=2, hardware_repair_min=60.0))
    for fn in (wipeout, overhead):
        with pytest.raises(ValueError, match="whole training runs only"):
            fn(cluster, 2)


def test_repair_model_validation():
    ok = Repair(30.0, "exp", spares=2.0, hardware_repair_min=600)
    assert ok.spares == 2 and isinstance(ok.spares, int) and ok.hardware_repair_min == 600.0
    assert ok.describe() == {"repair_time_min": 30.0, "repair_law": "exp", "spares": 2,
                             "hardware_repair_min": 600.0}
    pool_only = Repair(None, spares=0, hardware_repair_min=60.0)
    assert pool_only.describe() == {"repair_time_min": None, "spares": 0, "hardware_repair_min": 60.0}
    for kw, word in [(dict(spares=-1, hardware_repair_min=60.0), "`spares`"),
                     (dict(spares=True, hardware_repair_min=60.0), "`spares`"),
                     (dict(spares=1.5, hardware_repair_min=60.0), "`spares`"),
                     (dict(spares=2), "`spares` needs `hardware_repair_min`"),
                     (dict(hardware_repair_min=60.0), "`hardware_repair_min` goes with `spares`"),
                     (dict(spares=2, hardware_repair_min=0.0), "`hardware_repair_min`"),
                     (dict(spares=2, hardware_repair_min=math.inf), "`hardware_repair_min`"),
                     (dict(spares=2, hardware_repair_min=math.nan), "`hardware_repair_min`"),
                     (dict(spares=2, hardware_repair_min="soon"), "`hardware_repair_min`")]:
        with pytest.raises(ValueError, match=word):
            Repair(30.0, **kw)
    with pytest.raises(ValueError, match="repair time"):
        Repair(None)


def test_repair_theory_work_bounded_up_front():
    """The lognormal repair theory at sigma 3 and N = 600 is refused by its cost before the work; the widest
    sigma allowed gives a finite start shift without an IntegrationWarning (the command line refuses
    --repair-sigma 5: tests/test_cli_refusals_wipeout_overhead.py)."""
    from spare_jax.model.failures import FailureModel
    from spare_jax.model.placement import make_placement
    from spare_jax.theory.repair import TRANSIENT_CLI_WORK, TheoryTooCostly, start_shift_min, transient_uptime

    model = FailureModel("exponential", 5.0, 600000.0, 1000.0, 1.0)
    t0 = time.perf_counter()
    with pytest.raises(TheoryTooCostly, match="operations"):
        transient_uptime(make_placement("stacked", 600, 4), model, Repair(30.0, "lognormal", 3.0),
                         max_work=TRANSIENT_CLI_WORK)
    assert time.perf_counter() - t0 < 5.0  # refused up front, not after the work
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no IntegrationWarning at the widest sigma allowed
        s = start_shift_min(Repair(30.0, "lognormal", 3.0), 4)
    assert math.isfinite(s) and s > 0
