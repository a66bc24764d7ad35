"""The joint search on whole training runs (``ttt.search``): its grid, its common random numbers, its budget,
and its answer against an exhaustive evaluation of every candidate on a small cluster."""
import dataclasses
import math

import numpy as np
import pytest

from spare_jax.kernels.run_driver import run_each, simulate_runs, summarize
from spare_jax.model.cluster import Cluster, Sampling
from spare_jax.model.failures import FailureModel
from spare_jax.model.repair import Repair
from spare_jax.model.runsetup import RunSetup
from spare_jax.model.scenario import Scenario
from spare_jax.ttt import Training
from spare_jax.ttt.search import Budget, Candidate, SearchSpace, candidates, joint_search

# 8 groups, group MTBF 400 min, 30-min repair, W = 8 h: every scheme has failures to absorb
N = 8
MODEL = FailureModel("exponential", 400.0 / N, float(N), 1.0)
CLUSTER = Cluster(N, MODEL, Scenario(), Repair(30.0, "fixed"))
CFG = Training(8.0, 2.0, 10.0, "none", float(N))
SPACE = SearchSpace(schemes=("spare", "rep", "elastic"), r_max=3, microbatches=(1, 2), restart_depths=(1.5,),
                    tau_factors=(0.7, 1.0, 1.4))


def test_the_grid_holds_every_combination_the_space_allows():
    grid = candidates(CLUSTER, SPACE)
    spare = [c for c in grid if c.scheme == "spare"]
    # r = 2, 3 x m = 1, 2 x D_max never or 1.5 (1.5 rounds up to a depth m can reach: 2.0 at m = 1, kept <= r)
    assert {(c.redundancy, c.microbatches) for c in spare} == {(r, m) for r in (2, 3) for m in (1, 2)}
    assert {c.restart_depth for c in spare if c.microbatches == 1} == {None, 2.0}
    assert {c.restart_depth for c in spare if c.microbatches == 2} == {None, 1.5}
    assert sorted(c.redundancy for c in grid if c.scheme == "rep") == [2]  # r divides N
    four = candidates(CLUSTER, dataclasses.replace(SPACE, schemes=("rep",), r_max=4))
    assert [c.redundancy for c in four] == [2, 4]
    assert sorted(c.microbatches for c in grid if c.scheme == "elastic") == [1, 2]
    shrink = candidates(CLUSTER, dataclasses.replace(SPACE, schemes=("elastic",), elastic_data="shrink"))
    assert [c.microbatches for c in shrink] == [1]  # shrink does not split shards
    two = candidates(CLUSTER, dataclasses.replace(SPACE, schemes=("rep",), repair_times=(10.0, 60.0)))
    assert sorted({c.repair_time_min for c in two}) == [10.0, 60.0] and len(two) == 2
    with pytest.raises(ValueError, match="empty"):
        candidates(Cluster(5, MODEL, Scenario(), Repair(30.0)), dataclasses.replace(SPACE, schemes=("rep",)))


@pytest.mark.slow
def test_run_each_gives_the_runs_of_the_exact_sums():
    """The search's per-run path and the reporting driver run the same runs (seeded by run id)."""
    setup = RunSetup.build(CLUSTER, CFG, "spare", 3, 40.0, None, "kept")
    each = run_each(setup, Sampling(count=12, seed=5, chunk_size=8))
    sums = summarize(simulate_runs(setup, Sampling(count=12, seed=5)))
    assert each["ttt"].shape == (12,) and len(set(each["ttt"].tolist())) > 1
    assert np.mean(each["ttt"], dtype=np.float64) == pytest.approx(sums["ttt_min"], rel=1e-6)
    assert np.mean(each["restarts"], dtype=np.float64) == pytest.approx(sums["restarts_mean"], rel=1e-12)
    # chunk size changes nothing, run by run
    again = run_each(setup, Sampling(count=12, seed=5, chunk_size=4))
    assert np.array_equal(each["ttt"], again["ttt"])


def test_candidates_share_their_random_numbers():
    """Common random numbers: two configurations that differ only where it cannot matter give the same runs,
    and two that differ a little are correlated run by run."""
    a = RunSetup.build(CLUSTER, CFG, "spare", 3, 40.0, None, "kept")
    never = dataclasses.replace(a, restart_depth=99.0)  # a depth no run reaches: the same runs
    ea = run_each(a, Sampling(count=32, seed=1, chunk_size=8))["ttt"]
    assert np.array_equal(ea, run_each(never, Sampling(count=32, seed=1, chunk_size=8))["ttt"])
    b = dataclasses.replace(a, ckpt_interval_min=44.0)
    eb = run_each(b, Sampling(count=32, seed=1, chunk_size=8))["ttt"]
    other = run_each(b, Sampling(count=32, seed=2, chunk_size=8))["ttt"]
    assert not np.array_equal(ea, eb)
    assert np.corrcoef(ea, eb)[0, 1] > 0.5  # the same failures, a slightly different interval
    assert np.var(ea - eb) < 0.5 * np.var(ea - other)  # paired differences are far less noisy


@pytest.fixture(scope="module")
def searched():
    return joint_search(CLUSTER, CFG, SPACE, Budget(screen_runs=8, screen_work=0.25, full_runs=16, final_runs=48),
                        seed=3)


@pytest.mark.slow
def test_the_budget_is_what_the_stages_spent(searched):
    info = searched["search"]
    stages = info["stages"]
    names = [s["stage"] for s in stages]
    assert names in (["pilot", "screen", "interval", "full length", "full-length interval", "chosen"],
                     ["pilot", "screen", "interval", "full length", "chosen"])
    assert info["candidates"] == len(candidates(CLUSTER, SPACE)) == stages[1]["candidates"]
    assert info["runs_total"] == sum(s["candidates"] * s["runs_each"] for s in stages)
    assert info["run_hours_total"] == pytest.approx(sum(s["candidates"] * s["runs_each"] * s["work_hours_each"]
                                                        for s in stages))
    # every survivor at three intervals, and at W (a single final checkpoint) where its runs saw few interruptions
    assert stages[1]["kept"] * 3 <= stages[2]["candidates"] <= stages[1]["kept"] * 4
    assert stages[3]["candidates"] <= 3 * 3  # at most three finalists per scheme
    chosen = searched["schemes"][searched["chosen"]]
    assert chosen["runs"] == 48 and chosen["mc_ttt_stderr_hours"] > 0
    assert all(r["runs"] == 16 for s, r in searched["schemes"].items() if s != searched["chosen"])
    assert set(searched["schemes"]) == {"spare", "rep", "elastic"}


def _exhaustive(cand: Candidate, tau: float, runs: int = 96) -> tuple[float, float]:
    """Mean TTT (hours) and its standard error of one candidate on ``runs`` runs of the whole work."""
    scen = dataclasses.replace(CLUSTER.scenario, microbatches=cand.microbatches)
    setup = RunSetup.build(dataclasses.replace(CLUSTER, scenario=scen), CFG, cand.scheme, cand.redundancy, tau,
                           cand.restart_depth, "kept")
    ttt = run_each(setup, Sampling(count=runs, seed=11, chunk_size=32))["ttt"].astype(np.float64) / 60.0
    return float(ttt.mean()), float(ttt.std(ddof=1) / math.sqrt(runs))


@pytest.mark.slow
def test_the_search_finds_the_best_of_an_exhaustive_evaluation(searched):
    """Every candidate at intervals from 15 to 240 min, on 96 full-length runs of another seed: the
    configuration the search chose per scheme is within 3 standard errors (or 0.5%) of the best found."""
    for scheme, rep in searched["schemes"].items():
        grid = [c for c in candidates(CLUSTER, SPACE) if c.scheme == scheme]
        taus = (15.0, 30.0, 60.0, 120.0, 240.0)
        scores = {(c, t): _exhaustive(c, t) for c in grid for t in taus}
        best = min(scores, key=lambda k: scores[k][0])
        mine = Candidate(scheme, rep["redundancy"], rep["microbatches"], rep["restart_depth"], 30.0)
        got = _exhaustive(mine, rep["ckpt_interval_min"])
        gap, se = got[0] - scores[best][0], math.hypot(got[1], scores[best][1])
        assert gap <= max(3 * se, 0.005 * scores[best][0]), (scheme, mine, got, best, scores[best])


def test_the_candidate_search_screens_then_refines_the_interval():
    """``ttt.halving.search_candidates`` on a synthetic measure (no kernel): one pilot per layout (a censored
    layout dropped with its candidates), every candidate screened at its layout's interval, the survivors tried
    at the intervals around it, and the finalists the best of those."""
    from spare_jax.ttt.halving import Hooks, Rules, search_candidates

    best_tau = {"a": 40.0, "b": 90.0}
    cost = {("a", 1): 0.0, ("a", 2): 40.0, ("b", 1): 2.0, ("c", 1): 0.0}
    calls, log = [], []

    def measure(cand, tau, runs):
        calls.append((cand, tau, runs))
        if cand[0] == "c":
            return None  # its runs never finish
        ttt = 100.0 + cost[cand] + abs(tau - best_tau[cand[0]])
        return {"ttt_min": ttt, "compute_mean": 1000.0, "restarts_mean": 10.0}

    class Log(Hooks):
        def done(self, name, items, runs, kept):
            log.append((name, items, runs, kept))

    rules = Rules(first_tau=lambda lay: 10.0, daly=lambda lay, res: 60.0, pilot_runs=4, screen_runs=8,
                  interval_runs=24, rate=lambda lay, res: res["restarts_mean"] / res["compute_mean"],
                  taus=lambda tau, rate: [tau * f for f in (0.5, 1.0, 1.5)],
                  keep=lambda rows: sorted(rows, key=lambda r: r["ttt_min"])[:2],
                  finalists=lambda rows: [min(rows, key=lambda r: r["ttt_min"])], layout=lambda c: (c[0], 1))
    found = search_candidates([("a", 1), ("a", 2), ("b", 1), ("c", 1)], measure, rules, Log())
    assert [c for c, _, n in calls if n == 4] == [("a", 1), ("b", 1), ("c", 1)]  # one pilot per layout
    assert [r["cand"] for r in found["screened"]] == [("a", 1), ("a", 2), ("b", 1)]  # c dropped
    assert [r["cand"] for r in found["kept"]] == [("a", 1), ("b", 1)]
    assert [(r["cand"], r["tau"]) for r in found["trial"]] == [(c, t) for c in (("a", 1), ("b", 1))
                                                              for t in (30.0, 60.0, 90.0)]
    assert [(r["cand"], r["tau"]) for r in found["finalists"]] == [(("b", 1), 90.0)]  # 102 against a's 110
    assert log == [("pilot", 3, 4, 2), ("screen", 3, 8, 2), ("interval", 6, 24, 1)]
