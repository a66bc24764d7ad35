"""The exact time-to-train of rep and none (``ttt.exact``): against checkpointing alone's classical exact
form, against a brute-force Markov chain over the epoch (permutation enumeration and matrix exponentials,
independent of the closed form's survival and renewal sums), and against whole training runs."""

import itertools
import math

import numpy as np
import pytest
from scipy.linalg import expm

from spare_jax import theory
from spare_jax.model.cluster import Cluster, Sampling
from spare_jax.model.failures import FailureModel
from spare_jax.model.repair import Repair
from spare_jax.model.scenario import Scenario
from spare_jax.model.training import Training
from spare_jax.ttt.closed_form import none_ttt_exact
from spare_jax.ttt.exact import (
    closed_form_applies, closed_form_ttt, exact_applies, exact_best_tau, interval_renewal_ttt, renewal_solution,
    uptime_law)


def _model(group_mtbf_min: float) -> FailureModel:
    return FailureModel(system_mtbf_min=group_mtbf_min * 1000.0 / 600_000.0)


def _survival_by_permutations(n: int, r: int) -> np.ndarray:
    """P(T > k) for replica sets of r groups (r = 1: every group its own shard), by every failure order."""
    alive = np.zeros(n + 1)
    count = 0
    for order in itertools.permutations(range(n)):
        failed = np.zeros(n, bool)
        for i, g in enumerate(order):
            failed[g] = True
            if failed.reshape(n // r, r).all(axis=1).any():
                alive[:i + 1] += 1  # T = i + 1: alive after 0..i failures
                break
        count += 1
    return alive / count


def _brute_ttt(n, r, lam, mu, tau, ckpt, restart, compute):
    """The expected TTT by a forward pass over the intervals of a chain on k (groups down) with killing at
    the (k+1)-th failure with probability P(T = k+1 | T > k) and at rate mu: each interval's survival,
    expected time and end-state distribution from matrix exponentials; a kill costs R and the interval
    starts again from state 0."""
    surv = _survival_by_permutations(n, r)
    q = np.zeros((n + 1, n + 1))
    for k in range(n):
        if surv[k] > 0:
            q[k, k + 1] = (n - k) * lam * surv[k + 1] / surv[k]
        q[k, k] = -(n - k) * lam - mu
    q[n, n] = -mu  # never reached alive (P(T > N) = 0)

    def attempt(length):
        big = np.zeros((n + 2, n + 2))
        big[: n + 1, : n + 1] = q * length
        big[: n + 1, n + 1] = length
        e = expm(big)
        return e[: n + 1, : n + 1], e[: n + 1, n + 1]  # sub-stochastic transition, expected time alive

    count = int(math.ceil(compute / tau - 1e-9))
    lengths = [tau + ckpt] * (count - 1) + [compute - (count - 1) * tau + ckpt]
    pi = np.zeros(n + 1)
    pi[0] = 1.0
    total = 0.0
    for length in lengths:
        m, time = attempt(length)
        kill, kill0, ok0 = 1.0 - (pi @ m).sum(), 1.0 - m[0].sum(), m[0].sum()
        fresh = (time[0] + kill0 * restart) / ok0  # from state 0 until the interval completes
        total += pi @ time + kill * (restart + fresh)
        pi = pi @ m + kill * m[0] / ok0
    return total


@pytest.mark.parametrize("n,r,mu", [(6, 1, 0.0), (6, 2, 0.0), (6, 3, 0.0), (6, 2, 1 / 300.0), (4, 2, 0.0)])
def test_exact_matches_brute_force_chain(n, r, mu):
    model = _model(500.0)
    lam = model.group_rate_per_min
    scheme = "none" if r == 1 else "rep"
    law = uptime_law(scheme, n, r, model, mu)
    for tau, work in ((20.0, 7.3), (45.0, 3.0), (400.0, 5.0)):  # partial last interval; one single interval
        got = interval_renewal_ttt(law, [tau], 2.0, 10.0, r * work * 60)[0][0]
        want = _brute_ttt(n, r, lam, mu, tau, 2.0, 10.0, r * work * 60)
        assert got == pytest.approx(want, rel=1e-9)


def test_none_equals_classical_exact_form():
    model = _model(200.0)
    law = uptime_law("none", 16, 1, model)
    rate = 16 * model.group_rate_per_min
    for tau in (3.0, 10.0, 60.0, 333.0, 5000.0):
        got, restarts = (v[0] for v in interval_renewal_ttt(law, [tau], 2.0, 10.0, 48 * 60))
        want, fails = (v[0] for v in none_ttt_exact(rate, [tau], 2.0, 10.0, 48 * 60))
        assert got == pytest.approx(want, rel=1e-10)
        assert restarts == pytest.approx(fails, rel=1e-9)


def test_uptime_law_mean_and_survival():
    model = FailureModel()
    for n, r in ((600, 6), (60, 3)):
        law = uptime_law("rep", n, r, model)
        surv = theory.survival_exact("block", n, r)
        want = theory.expected_uptime(surv, n, model.group_rate_per_min)
        assert law.integral(0.0, law.t_end)[0] == pytest.approx(want, rel=1e-12)
        assert law.survival([0.0])[0] == pytest.approx(1.0, rel=1e-14)
        assert law.survival([law.t_end])[0] < 1e-16
    # with job-wide failures (the incomplete beta form): the integral of S(t) e^{-mu t} by quadrature
    law = uptime_law("rep", 60, 3, model, 1 / 500.0)
    t = np.linspace(0.0, 900.0, 20001)
    s = law.survival(t)
    quad = float(np.sum(0.5 * (s[1:] + s[:-1]) * np.diff(t)))
    assert law.integral(0.0, 900.0)[0] == pytest.approx(quad, rel=1e-6)


def test_public_signature_and_refusals():
    cluster = Cluster(groups=16, model=_model(200.0))
    training = Training(work_hours=48.0, ckpt_cost_min=2.0, restart_min=10.0, ckpt_interval_min=60.0)
    out = closed_form_ttt(cluster, training, "rep", 4)
    assert out["method"] == "closed_form"
    assert out["ttt_hours"] == pytest.approx(243.0974, rel=1e-5)
    assert 0 < out["availability"] < 1 and out["expected_restarts"] > 0
    best = closed_form_ttt(cluster, Training(work_hours=48.0, ckpt_cost_min=2.0, restart_min=10.0), "rep", 4)
    assert best["ttt_hours"] <= out["ttt_hours"]
    law = uptime_law("rep", 16, 4, cluster.model)
    tau, ttt_min = exact_best_tau(law, 2.0, 10.0, 4 * 48 * 60)
    for other in (0.9 * tau, 1.1 * tau):
        assert interval_renewal_ttt(law, [other], 2.0, 10.0, 4 * 48 * 60)[0][0] >= ttt_min
    assert exact_applies(cluster, "rep") and exact_applies(cluster, "none")
    assert not exact_applies(cluster, "spare") and closed_form_applies(cluster, "spare")
    assert not closed_form_applies(cluster, "elastic")
    assert not exact_applies(Cluster(groups=16, repair=Repair(repair_time_min=30.0)), "rep")
    assert not exact_applies(Cluster(groups=16, model=FailureModel(distribution="weibull", weibull_shape=0.7)),
                             "rep")
    assert not exact_applies(Cluster(groups=16, scenario=Scenario(domains=((4, 1000.0),))), "rep")
    with pytest.raises(ValueError, match="elastic"):
        closed_form_ttt(cluster, training, "elastic", 1)
    with pytest.raises(ValueError, match="divide"):
        closed_form_ttt(cluster, training, "rep", 3)


def test_cost_stays_bounded_at_the_paper_size():
    import time

    law = uptime_law("rep", 600, 6, FailureModel())
    t0 = time.perf_counter()
    interval_renewal_ttt(law, np.linspace(60.0, 200.0, 10), 5.0, 60.0, 6 * 720 * 60)
    assert time.perf_counter() - t0 < 5.0  # 10 intervals tau: milliseconds each (2 cores shared: loose)


def test_renewal_solution_by_ffts_equals_the_filter(monkeypatch):
    """Past the filter's size the renewal equations are solved by Newton's series inversion with FFTs: the
    same impulse response as the recursive filter (and as the recursion written out), to rounding."""
    import spare_jax.ttt.exact as exact

    rng = np.random.default_rng(5)
    for n, terms in ((7, 40), (600, 1500)):
        p = rng.random(n) * 0.9 / n
        den = np.concatenate([[1.0 - p[0]], -p[1:]])
        by_filter = renewal_solution(den, terms)
        f = np.zeros(terms)  # f_i (1 - p_0) = [i = 0] + sum_{j>=1} p_j f_{i-j}
        for i in range(terms):
            f[i] = ((i == 0) + sum(p[j] * f[i - j] for j in range(1, min(i, n - 1) + 1))) / den[0]
        monkeypatch.setattr(exact, "RENEWAL_FILTER_MAX_CELLS", 0)
        by_fft = renewal_solution(den, terms)
        monkeypatch.undo()
        assert np.allclose(by_filter, f, rtol=1e-12, atol=1e-15)
        assert np.allclose(by_fft, f, rtol=1e-10, atol=1e-13)


def test_exact_agrees_with_whole_runs():
    """Rep+CKPT at N = 16, r = 4 (group MTBF 200 min, C 2, R 10, tau 60), W 12 h: whole training runs of the
    event-by-event kernel within 4 standard errors of the exact form."""
    from spare_jax.ttt.config import Policy
    from spare_jax.ttt.runs import whole_run_ttt

    cluster = Cluster(groups=16, model=_model(200.0))
    training = Training(work_hours=12.0, ckpt_cost_min=2.0, restart_min=10.0, ckpt_interval_min=60.0)
    exact = closed_form_ttt(cluster, training, "rep", 4)["ttt_hours"]
    rep = whole_run_ttt(cluster, training, Policy(scheme="rep", redundancy=4), Sampling(count=400, seed=3)).to_json()
    assert abs(rep["mc_ttt_hours"] - exact) < 4 * rep["mc_ttt_stderr_hours"]


# ---------------------------------------------------------------------------------------------------------
# spare: the one-step joint law (exact), the (k, depth) chain and the approximate TTT


def _enumerate_stacked(n, r, m):
    """Every failure set of the stacked ring: (capacity c* in micro-batches, 0 if wiped out; failures)."""
    import jax.numpy as jnp

    from test_microbatch import capacity_stacked

    masks = np.arange(1 << n)
    failed = ((masks[:, None] >> np.arange(n)) & 1).astype(bool)
    return masks, np.asarray(capacity_stacked(jnp.asarray(~failed), r, m)), failed.sum(axis=1)


@pytest.mark.parametrize("n,r,m", [(10, 3, 1), (11, 4, 1), (10, 3, 2), (9, 2, 1)])
def test_next_survival_matches_enumeration(n, r, m):
    from scipy.special import comb

    from spare_jax.theory.chain import depth_next_survival

    masks, cap, count = _enumerate_stacked(n, r, m)
    ok = cap > 0
    levels = np.arange(m, r * m + 1)
    got = depth_next_survival(n, r, m)
    for k in range(n):
        idx = np.nonzero((count == k) & ok)[0]
        hits = np.zeros(levels.size)
        for g in range(n):
            base = idx[(idx >> g) & 1 == 0]
            good = ok[base | (1 << g)]
            hits += [(good & (cap[base] <= c)).sum() for c in levels]
        np.testing.assert_allclose(got[k, 1:], hits / (comb(n, k) * (n - k)), atol=1e-14)


def test_chain_joint_exact_one_step_and_close_beyond():
    from scipy.special import comb

    from spare_jax.theory.chain import depth_chain_joint

    n, r = 12, 3
    masks, cap, count = _enumerate_stacked(n, r, 1)
    ok = cap > 0
    w = np.where(ok, 1.0 / np.maximum(cap, 1), 0.0)
    # exact D[k, k'] = E[1/d_k; T > k'] by summing over subsets of each surviving k'-set
    sub = np.zeros((n + 1, 1 << n))
    for k in range(n + 1):
        a = np.where(count == k, w, 0.0)
        for b in range(n):
            sel = (masks >> b) & 1 == 1
            a[sel] += a[masks[sel] ^ (1 << b)]
        sub[k] = a
    exact = np.zeros((n + 1, n + 1))
    for k2 in range(n + 1):
        for k in range(k2 + 1):
            exact[k, k2] = sub[k][(count == k2) & ok].sum() / (comb(n, k2) * comb(k2, k))
    chain = depth_chain_joint(n, r)
    np.testing.assert_allclose(np.diag(chain), np.diag(exact), atol=1e-14)
    np.testing.assert_allclose(np.diag(chain, 1), np.diag(exact, 1), atol=1e-14)
    np.testing.assert_allclose(chain[0], exact[0], atol=1e-14)  # depth 1 with no failure: P(T > k')
    assert np.abs(chain - exact).max() < 2e-3


def test_spare_committed_work_against_enumeration():
    """N = 16, r = 3 (group MTBF 200 min, tau 60, C 2): E[Y] from the chain within 1e-4 of E[Y] from the
    exact joint law (every failure set enumerated: 42.24517 min), where the depth-independent form gives
    41.72."""
    from spare_jax.theory.chain import depth_chain_joint
    from spare_jax.ttt.exact import spare_committed_work

    law = uptime_law("spare", 16, 3, _model(200.0))
    work, committed = spare_committed_work(law, depth_chain_joint(16, 3, kmax=law.surv_k.size), 60.0, 2.0)
    assert work == pytest.approx(42.2451681266028, rel=1e-4)
    assert committed == pytest.approx(60.0 * law.survival(62.0 * np.arange(1, 200)).sum(), rel=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("m", [1, pytest.param(4, marks=pytest.mark.slow)])
def test_spare_approx_agrees_with_whole_runs(m):
    """SPARe+CKPT at N = 16, r = 3 (group MTBF 200 min, C 2, R 10, tau 60), W 12 h, m micro-batches: whole
    training runs within 4 standard errors of the approximate form."""
    from spare_jax.ttt.config import Policy
    from spare_jax.ttt.runs import whole_run_ttt

    cluster = Cluster(groups=16, model=_model(200.0), scenario=Scenario(microbatches=m))
    training = Training(work_hours=12.0, ckpt_cost_min=2.0, restart_min=10.0, ckpt_interval_min=60.0)
    approx = closed_form_ttt(cluster, training, "spare", 3)
    assert approx["method"] == "closed_form_approx"
    rep = whole_run_ttt(cluster, training, Policy(scheme="spare", redundancy=3), Sampling(count=400, seed=5)).to_json()
    assert abs(rep["mc_ttt_hours"] - approx["ttt_hours"]) < 4 * rep["mc_ttt_stderr_hours"]


# ---------------------------------------------------------------------------------------------------------
# the one chooser, and optimize on the interval form


def test_closed_form_answers_is_the_one_chooser():
    from spare_jax.ttt.answer import closed_form_answers, ttt_method
    from spare_jax.ttt.config import Policy

    cluster = Cluster(groups=16, model=_model(200.0))
    assert closed_form_answers(cluster, Policy("rep", 4)) == "closed_form"
    assert closed_form_answers(cluster, Policy("none", 1)) == "closed_form"
    assert closed_form_answers(cluster, Policy("spare", 1)) == "closed_form"  # depth 1 always: checkpointing alone
    assert closed_form_answers(cluster, Policy("spare", 3)) == "closed_form_approx"
    assert ttt_method(cluster, Policy("rep", 4), optimum=True) == "closed_form"
    assert ttt_method(cluster, Policy("spare", 3), optimum=True) == "closed_form_approx"
    assert ttt_method(cluster, Policy("spare", 3)) == "epoch_pool"  # ttt's own runs answer
    assert closed_form_answers(cluster, Policy("spare", 3, restart_depth=2.0)) is None
    assert closed_form_answers(Cluster(groups=16, repair=Repair(repair_time_min=30.0)), Policy("rep", 4)) is None
    # checkpointing alone with repair and no spare pool is the cluster without repair
    assert closed_form_answers(Cluster(groups=16, repair=Repair(repair_time_min=30.0)), Policy("none", 1)) == \
        "closed_form"
    weibull = Cluster(groups=16, model=FailureModel(distribution="weibull", weibull_shape=0.7))
    assert closed_form_answers(weibull, Policy("spare", 3, ages="renewed")) is None
    assert ttt_method(weibull, Policy("spare", 3, ages="renewed"), optimum=True) == "closed_form_approx"
    assert closed_form_answers(Cluster(groups=16, scenario=Scenario(domains=((4, 1000.0),))), Policy("rep", 4)) is None
    # spare's chain is computed up to a size (N = 600: r <= 8), the renewal-reward form beyond
    assert closed_form_answers(Cluster(groups=600), Policy("spare", 8)) == "closed_form_approx"
    assert closed_form_answers(Cluster(groups=600), Policy("spare", 9)) is None
    assert closed_form_answers(Cluster(groups=6000), Policy("spare", 4)) is None


def test_optimize_takes_r_and_tau_from_the_interval_form():
    """N = 16 (group MTBF 200 min, W 48 h, C 2, R 10): the interval form chooses each scheme's r* and tau*
    (no r of the refined curve does better, and tau* is the form's optimum). Where it is exact (rep, none) it
    answers; spare's form is approximate, so it only ranks: training runs at its optimum answer, the same runs
    ``time_to_train`` makes there with the same seed, and the form stays beside them as ``theory_ttt_hours``."""
    from spare_jax import ttt
    from spare_jax.model.cluster import Sampling
    from spare_jax.ttt.answer import SEARCH_FINAL_RUNS

    cluster = Cluster(groups=16, model=_model(200.0))
    training = Training(work_hours=48.0, ckpt_cost_min=2.0, restart_min=10.0)
    res = ttt.optimize(cluster, training, ttt.Space(r_max=6, curves=True, seed=3)).to_json()
    assert res["schemes"]["rep"]["method"] == "closed_form" and res["schemes"]["none"]["method"] == "closed_form"
    assert res["schemes"]["spare"]["method"] == "epoch_pool"
    assert res["schemes"]["spare"]["theory_method"] == "closed_form_approx"
    for s in ("spare", "rep", "none"):
        e = res["schemes"][s]
        form = e.get("theory_ttt_hours", e["ttt_hours"])
        at = closed_form_ttt(cluster, dataclasses_replace(training, e["ckpt_interval_min"]), s, e["r_star"])
        assert form == pytest.approx(at["ttt_hours"], rel=1e-12)
        for f in (0.9, 1.1):
            near = closed_form_ttt(cluster, dataclasses_replace(training, f * e["ckpt_interval_min"]), s, e["r_star"])
            assert near["ttt_hours"] >= form * (1 - 1e-9)
        assert min(p["ttt_hours"] for p in res["curves"][s]) == pytest.approx(form, rel=1e-12)
    sp = res["schemes"]["spare"]
    runs = ttt.time_to_train(cluster, dataclasses_replace(training, sp["ckpt_interval_min"]),
                             ttt.Policy("spare", sp["r_star"]), Sampling(SEARCH_FINAL_RUNS, 3)).to_json()
    assert sp["ttt_hours"] == runs["mc_ttt_hours"] and sp["runs"] == runs["runs"] == SEARCH_FINAL_RUNS
    assert sp["ttt_stderr_hours"] == runs["mc_ttt_stderr_hours"] > 0
    assert abs(sp["ttt_hours"] - sp["theory_ttt_hours"]) < 4 * sp["ttt_stderr_hours"]
    assert res["ttt_reduction_vs_rep"] == pytest.approx(1 - sp["ttt_hours"] / res["schemes"]["rep"]["ttt_hours"])
    assert any("interval-by-interval" in n for n in res["notes"])
    assert "runs answer" in res["method_detail"]


def dataclasses_replace(training, tau):
    import dataclasses

    return dataclasses.replace(training, ckpt_interval_min=tau)


def test_ttt_prints_the_interval_form_beside_its_runs():
    from spare_jax import ttt
    from spare_jax.ttt.config import Policy

    cluster = Cluster(groups=16, model=_model(200.0))
    training = Training(work_hours=12.0, ckpt_cost_min=2.0, restart_min=10.0, ckpt_interval_min=60.0)
    out = ttt.time_to_train(cluster, training, Policy("rep", 4), Sampling(count=50, seed=1)).to_json()
    assert out["theory_method"] == "closed_form"
    assert out["theory_ttt_hours"] == pytest.approx(closed_form_ttt(cluster, training, "rep", 4)["ttt_hours"],
                                                    rel=1e-12)


def test_spare_with_one_shard_each_is_checkpointing_alone():
    """r = 1: the depth is always 1 and the chain's work rate 1, so spare's form is the exact one of none."""
    cluster = Cluster(groups=16, model=_model(200.0))
    training = Training(work_hours=48.0, ckpt_cost_min=2.0, restart_min=10.0, ckpt_interval_min=30.0)
    spare = closed_form_ttt(cluster, training, "spare", 1)["ttt_hours"]
    assert spare == pytest.approx(closed_form_ttt(cluster, training, "none", 1)["ttt_hours"], rel=1e-9)


@pytest.mark.slow
def test_spare_form_agrees_with_whole_runs_at_the_paper_size():
    """N = 600, r = 6 (the paper's defaults: group MTBF 3,000 min, W 720 h, C 5, R 60, tau 119): 64 whole
    runs within 4 standard errors of the form (2,000 runs: docs/validation.md)."""
    from spare_jax.ttt.config import Policy
    from spare_jax.ttt.runs import whole_run_ttt

    cluster = Cluster(groups=600)
    training = Training(ckpt_interval_min=119.0)
    form = closed_form_ttt(cluster, training, "spare", 6)["ttt_hours"]
    rep = whole_run_ttt(cluster, training, Policy(scheme="spare", redundancy=6), Sampling(count=64, seed=11)).to_json()
    assert abs(rep["mc_ttt_hours"] - form) < 4 * rep["mc_ttt_stderr_hours"]


def test_run_summary_checks_theory_within_four_standard_errors():
    """``make run``'s checks: a theory within 4 standard errors of the Monte Carlo passes, with its z."""
    from spare_jax.suite.summary import verdict

    row = {"quantity": "Rep+CKPT TTT at its r*, tau* (hours)", "paper": "-", "theory": 2595.29,
           "mc_ci95_low": 2585.0 - 1.96 * 4.5, "mc_ci95_high": 2585.0 + 1.96 * 4.5}
    assert verdict(row) == "theory within 4 s.e. of the MC (z = +2.3)"
    assert verdict(dict(row, theory=2605.0)) == "theory off the MC by more than 4 s.e. (z = +4.4)"
