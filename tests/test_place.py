"""The ring-order search (``spare-jax place``): its evaluator against the engine and against the independent
reference simulator, and that it finds what is there to find (lemons kept apart, domains interleaved)."""

import json
import math

import numpy as np
import pytest

import reference_scenario as ref
from spare_jax.model.cluster import Cluster, Sampling
from spare_jax.model.failures import FailureModel
from spare_jax.rectlr.place import RingSearch, search_ring
from spare_jax.model.placement import make_placement
from spare_jax.model.scenario import DomainLevel, Scenario
from spare_jax.kernels.wipeout import simulate_wipeout

MODEL = FailureModel()


def lemon_adjacency(ring, lemons, redundancy: int) -> int:
    """How many stacked windows of r consecutive ring positions hold two or more lemons (a diagnostic of
    whether an order keeps lemons apart)."""
    ring = np.asarray(ring)
    is_lemon = np.isin(ring, np.asarray(lemons))
    count = sum(np.roll(is_lemon, -l) for l in range(redundancy))
    return int(np.sum(count >= 2))


def test_search_separates_lemons_and_beats_the_standard_orders():
    """Four lemons failing 20x as often sit next to each other in the physical (contiguous) order; the search
    must move them apart (no stacked window with two lemons) and gain uptime, measured on a fresh seed."""
    n, r = 24, 2
    mtbf = [MODEL.group_mtbf_min / (20.0 if g < 4 else 1.0) for g in range(n)]
    sc = Scenario(group_mtbf_min=tuple(mtbf))
    res = search_ring(Cluster(n, MODEL, sc), r, search=RingSearch(search_trials=2000, steps=60, random_orders=1),
                      sampling=Sampling(40_000, seed=3))
    by = {o["name"]: o for o in res.orders}
    assert lemon_adjacency(np.arange(n), range(4), r) == 3
    assert res.best_name in ("searched", "random-0")
    assert lemon_adjacency(res.best_ring, range(4), r) == 0
    gain = by["searched"]["uptime_min"] - by["contiguous"]["uptime_min"]
    assert gain > 4 * math.hypot(by["searched"]["uptime_stderr_min"], by["contiguous"]["uptime_stderr_min"])
    # the best order, simulated by the independent reference, has the uptime the engine reports
    sim = ref.simulate_epochs(n, r, 20_000, np.random.default_rng(5), ring=list(res.best_ring),
                              group_mtbf_min=np.asarray(mtbf))
    best = res.orders[0]
    se = math.hypot(best["uptime_stderr_min"], sim["uptime"].std(ddof=1) / math.sqrt(sim["uptime"].size))
    assert abs(best["uptime_min"] - sim["uptime"].mean()) < 4 * se


@pytest.mark.slow
def test_search_evaluator_agrees_with_the_engine_and_domains_favour_interleaving():
    n, r = 40, 3
    sc = Scenario(domains=(DomainLevel(4, 4000.0),), job_mtbf_min=5000.0)
    res = search_ring(Cluster(n, MODEL, sc), r, search=RingSearch(search_trials=4000, steps=10, random_orders=2),
                      sampling=Sampling(20_000, seed=1))
    by = {o["name"]: o for o in res.orders}
    for name in ("contiguous", "interleaved"):  # the search's evaluator against the engine's wipe-out kernel
        o = by[name]
        eng = simulate_wipeout(make_placement("stacked", n, r), Sampling(20_000, 9), model=MODEL,
                               scenario=Scenario(domains=sc.domains, job_mtbf_min=5000.0, ring=name))
        assert abs(o["uptime_min"] - eng.uptime_mean_min) < 4 * math.hypot(o["uptime_stderr_min"],
                                                                            eng.uptime_stderr_min), (o, eng)
    assert by["interleaved"]["uptime_min"] > by["contiguous"]["uptime_min"] + 10 * by["contiguous"]["uptime_stderr_min"]
    assert res.orders[0]["name"] != "contiguous"
    small = dict(search=RingSearch(search_trials=200, steps=3, random_orders=1), sampling=Sampling(500, seed=4))
    cluster = Cluster(n, MODEL, sc)
    assert search_ring(cluster, r, **small) == search_ring(cluster, r, **small)  # deterministic


@pytest.mark.parametrize("kwargs,match", [
    (dict(placement="random"), "stacked or block"),
    (dict(placement="block", redundancy=7), "r"),
    (dict(search=RingSearch(steps=-1)), "steps"),
    (dict(search=RingSearch(proposals=0)), "proposals"),
    (dict(search=RingSearch(search_trials=1)), "search_trials"),
])
def test_bad_search_input(kwargs, match):
    args = dict(cluster=Cluster(20, MODEL), redundancy=2)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        search_ring(**args)


def test_cli_place_writes_a_ring_file_that_wipeout_reads(tmp_path, capsys):
    from spare_jax.cli import main

    ring = tmp_path / "ring.txt"
    flags = ["-N", "20", "-r", "2", "--domain-size", "4", "--domain-mtbf", "3000", "--quiet"]
    assert main(["place", "--steps", "5", "--trials", "2000", "--ring-out", str(ring), "--json"] + flags) == 0
    res = json.loads(capsys.readouterr().out)
    assert sorted(res["best_ring"]) == list(range(20)) and res["ring_file"] == str(ring)
    assert main(["wipeout", "--ring", str(ring), "--trials", "2000", "--json"] + flags) == 0
    assert json.loads(capsys.readouterr().out)["mc_epoch_uptime_min"] > 0
    for bad, flag in ((["--proposals", "0"], "--proposals"), (["--ring-out", str(tmp_path / "no" / "r.txt")], "--ring-out"),
                      (["--steps", "x"], "--steps")):
        assert main(["place"] + bad + flags) == 2
        err = capsys.readouterr().err.strip()
        assert flag in err and len(err.splitlines()) == 1
