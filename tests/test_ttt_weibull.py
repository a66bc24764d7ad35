"""Weibull clocks with kept / renewed ages at a restart; TTT defects (checkpoint sum, exact run count, rep r | N)."""
import itertools
import json
import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.special import gammaln

from spare_jax import theory, ttt
from spare_jax.cli import main
from spare_jax.kernels.depth import depth_host
from spare_jax.model.cluster import Cluster, Sampling
from spare_jax.model.failures import FailureModel
from spare_jax.model.placement import make_placement


def weib(k):
    return FailureModel("weibull", weibull_shape=k)


# --- renewed ages: closed form against brute force -----------------------------------------------------------

def _brute_uptime_and_work(kind, n, r, model):
    """E[U], E[W] from all N! failure orders (T and the depth after each prefix, by matching) and the order
    statistics' means integrated in t from their densities (scipy quad)."""
    k, s = model.weibull_shape, model.weibull_scale_min
    cdf = lambda t: -math.expm1(-((t / s) ** k))  # noqa: E731
    pdf = lambda t: (k / s) * (t / s) ** (k - 1) * math.exp(-((t / s) ** k))  # noqa: E731

    def mean_os(j):  # E[X_(j)], j = 1..n
        logc = gammaln(n + 1) - gammaln(j) - gammaln(n - j + 1)
        f = lambda t: t * math.exp(logc) * cdf(t) ** (j - 1) * (1 - cdf(t)) ** (n - j) * pdf(t)  # noqa: E731
        return sum(quad(f, a, b, limit=400, epsabs=1e-13 * s, epsrel=1e-11)[0]
                   for a, b in ((0, s / 4), (s / 4, s), (s, 4 * s), (4 * s, 20 * s), (20 * s, np.inf)))

    means = np.array([0.0] + [mean_os(j) for j in range(1, n + 1)])
    spacing = np.diff(means)
    pl = make_placement(kind, n, r)
    up = np.zeros(n)
    work = np.zeros(n)
    perms = list(itertools.permutations(range(n)))
    for order in perms:
        alive = np.ones(n, bool)
        for kk in range(n):
            if kk:
                alive[order[kk - 1]] = False
            d = depth_host(pl, alive)
            if d == 0:
                break
            up[kk] += 1
            work[kk] += 1.0 / d
    return float(spacing @ up / len(perms)), float(spacing @ work / len(perms))


@pytest.mark.parametrize("kind,n,r,k", [("stacked", 6, 2, 0.7), ("stacked", 6, 3, 1.5), ("block", 6, 2, 0.7),
                                         ("block", 6, 3, 2.5)])
def test_renewed_closed_form_equals_brute_force(kind, n, r, k):
    model = weib(k)
    up, work = _brute_uptime_and_work(kind, n, r, model)
    got = theory.renewed_uptime_and_work(kind, n, r, model)
    assert got["uptime_min"] == pytest.approx(up, rel=1e-8)
    assert got["work_min"] == pytest.approx(work, rel=1e-8)
    # the time-integrated profile (hazard change of variable) gives the same E[U] and E[W]
    scheme = "spare" if kind == "stacked" else "rep"
    if scheme == "spare":
        prof = ttt.epoch_profile(scheme, n, r, model, ages="renewed")
        assert prof.mean_uptime_min == pytest.approx(up, rel=2e-4)
        s = prof.survival
        dt = np.diff(prof.t)
        rate = np.gradient(prof.work, prof.t)
        assert float(np.sum(0.5 * (s[1:] * rate[1:] + s[:-1] * rate[:-1]) * dt)) == pytest.approx(work, rel=3e-3)


def test_renewed_weibull_k1_is_exponential_and_n600_values():
    exp_th = theory.overhead_theory("stacked", 600, 6)
    got = theory.renewed_uptime_and_work("stacked", 600, 6, weib(1.0))
    assert got["overhead"] == pytest.approx(exp_th["overhead"], rel=1e-10)
    assert got["uptime_min"] == pytest.approx(exp_th["uptime_units"] * FailureModel().group_mtbf_min, rel=1e-10)
    for k, want in ((0.7, 716.55), (1.5, 1869.45)):
        prof = ttt.epoch_profile("spare", 600, 6, weib(k), ages="renewed")
        assert prof.mean_uptime_min == pytest.approx(want, rel=1e-4)
        assert theory.renewed_uptime_and_work("stacked", 600, 6, weib(k))["uptime_min"] == pytest.approx(want, rel=1e-4)


def test_renewed_closed_form_against_mc():
    model = weib(0.7)
    prof = ttt.epoch_profile("spare", 60, 3, model, ages="renewed")
    pool = ttt.sample_epochs(Cluster(60, model), "spare", 3, Sampling(20000, seed=2), ages="renewed")
    se = pool.uptime.std(ddof=1) / math.sqrt(pool.uptime.size)
    assert abs(pool.uptime.mean() - prof.mean_uptime_min) < 4 * se
    th = theory.renewed_uptime_and_work("stacked", 60, 3, model)
    w = ttt.epochs.committed_work(pool.breakpoints, pool.uptime, 1e12, 1e12)  # tau -> inf: every minute counts
    assert abs(w.mean() - th["work_min"]) < 4 * w.std(ddof=1) / math.sqrt(w.size)


def test_renewed_weibull_ttt_closed_form_against_mc():
    model, cfg = weib(1.5), ttt.Training(work_hours=200.0)
    prof = ttt.epoch_profile("spare", 100, 4, model, ages="renewed")
    tau = ttt.best_tau_grid(prof, cfg)[0]
    th = ttt.ttt_theory(prof, tau, cfg)
    mc, _ = ttt.simulate_ttt_runs(Cluster(100, model), cfg, ttt.Policy("spare", 4, ages="renewed"),
                                  Sampling(40, seed=1), tau, uptime_guess_min=prof.mean_uptime_min)
    assert mc["runs"] == 40
    gap = abs(th["ttt_hours"] - mc["ttt_hours"])
    assert gap < 0.02 * mc["ttt_hours"] or gap < 4 * mc["ttt_stderr_hours"], (th, mc)


# --- kept ages: the Markov chain ---------------------------------------------------------------------------

def test_residual_times_match_float64_formula():
    import jax.numpy as jnp

    model = weib(0.7)
    s, k = model.weibull_scale_min, model.weibull_shape
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2**32, size=(4, 500), dtype=np.uint64).astype(np.uint32)
    ages = rng.choice([0.0, 0.5, 30.0, 3000.0, 2e5], size=(4, 500)).astype(np.float32)
    got = np.asarray(ttt.residual_times(jnp.asarray(bits), jnp.asarray(ages), model), np.float64)
    u = ((bits >> 8).astype(np.float64) + 0.5) * 2.0**-24
    e = -np.log1p(-u)
    a = ages.astype(np.float64)
    want = s * ((a / s) ** k + e) ** (1 / k) - a
    assert np.all(got > 0)
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=1e-6 * s)


@pytest.mark.slow
def test_kept_chain_exponential_is_memoryless_and_chunk_independent():
    # exponential (and Weibull k = 1) with kept ages: the i.i.d. law, whatever the ages
    th = theory.expected_uptime(theory.survival_exact("stacked", 60, 3), 60, FailureModel().group_rate_per_min)
    for model in (FailureModel(), weib(1.0)):
        pool = ttt.sample_kept_chains(Cluster(60, model), "spare", 3, Sampling(64, seed=4, chunk_size=64), 40,
                                      burn_in=5)
        u = pool.uptime.reshape(64, 40)
        se = u.mean(axis=1).std(ddof=1) / 8
        assert abs(u.mean() - th) < 4 * se
    a = ttt.sample_kept_chains(Cluster(60, weib(0.7)), "spare", 4, Sampling(5, seed=7, chunk_size=2), 12, burn_in=3)
    b = ttt.sample_kept_chains(Cluster(60, weib(0.7)), "spare", 4, Sampling(5, seed=7, chunk_size=64), 12, burn_in=3)
    c = ttt.sample_kept_chains(Cluster(60, weib(0.7)), "spare", 4, Sampling(5, seed=7), 15, burn_in=0)
    np.testing.assert_array_equal(a.uptime, b.uptime)
    np.testing.assert_array_equal(a.breakpoints, b.breakpoints)
    # the burn-in is the chain's first epochs: dropping 3 of 15 gives the same 12 (bits depend on (seed, chain, epoch))
    np.testing.assert_allclose(a.uptime.reshape(5, 12), c.uptime.reshape(5, 15)[:, 3:], rtol=1e-6)
    assert np.all(np.diff(a.breakpoints, axis=1) >= 0)
    np.testing.assert_allclose(a.breakpoints[:, -1], a.uptime, rtol=1e-6)


def _numpy_kept_chain(kind, n, r, model, chains, epochs, seed):
    """Independent float64 NumPy simulation of the kept-age chain (explicit holder sets, no bit tricks)."""
    s, k = model.weibull_scale_min, model.weibull_shape
    holders = make_placement(kind, n, r).holders
    rng = np.random.default_rng(seed)
    ages = np.zeros((chains, n))
    ups = np.zeros((chains, epochs))
    for e in range(epochs):
        t = s * ((ages / s) ** k + rng.exponential(size=ages.shape)) ** (1 / k) - ages
        w = t[:, holders].max(axis=2).min(axis=1)
        ups[:, e] = w
        ages = np.where(t <= w[:, None], 0.0, ages + w[:, None])
    return ups


@pytest.mark.slow
@pytest.mark.parametrize("k", [0.7, pytest.param(1.5, marks=pytest.mark.slow)])
def test_kept_chain_against_numpy_chain(k):
    model = weib(k)
    n, r, chains, burn, epochs = 12, 2, 400, 30, 40
    ref = _numpy_kept_chain("stacked", n, r, model, chains, burn + epochs, seed=5)[:, burn:]
    pool = ttt.sample_kept_chains(Cluster(n, model), "spare", r, Sampling(chains, seed=5), epochs, burn_in=burn)
    got = pool.uptime.reshape(chains, epochs)
    se = math.hypot(ref.mean(axis=1).std(ddof=1), got.mean(axis=1).std(ddof=1)) / math.sqrt(chains)
    assert abs(got.mean() - ref.mean()) < 4 * se
    renewed = theory.renewed_uptime_and_work("stacked", n, r, model)["uptime_min"]
    # the sign of the age effect: infant mortality (k < 1) lengthens epochs, wear-out (k > 1) shortens them
    assert (got.mean() > 1.1 * renewed) if k < 1 else (got.mean() < 0.95 * renewed)


@pytest.mark.slow
def test_kept_ages_n600_direction():
    for k, lo, hi in ((0.7, 1200.0, 1450.0), (1.5, 1150.0, 1380.0)):
        pool = ttt.sample_kept_chains(Cluster(600, weib(k)), "spare", 6, Sampling(8, seed=0), 20, burn_in=30)
        assert lo < pool.uptime.mean() < hi, (k, pool.uptime.mean())


def test_kept_refused_by_closed_form_and_optimize():
    with pytest.raises(ValueError, match="ages='kept'"):
        ttt.epoch_profile("spare", 60, 3, weib(0.7))
    with pytest.raises(ValueError, match="renewed"):
        ttt.optimize_r_tau(Cluster(60, weib(0.7)), space=ttt.Space(r_max=3))
    with pytest.raises(ValueError, match="ages"):
        ttt.epoch_profile("spare", 60, 3, ages="young")
    res = ttt.optimize_r_tau(Cluster(60, weib(0.7)), space=ttt.Space(r_max=2, ages="renewed"), schemes=("spare",))
    assert res["ages"] == "renewed" and res["schemes"]["spare"]["ttt_hours"] > 0


def test_optimize_with_renewed_weibull_ages_answers_by_runs_at_the_forms_optimum():
    """The renewal-reward form with renewed Weibull ages is approximate (+1.8% at N = 16, r = 3, k = 0.7): it
    chooses r* and tau* per scheme, and 64 training runs there give the TTT, the form beside them."""
    from spare_jax.ttt.answer import SEARCH_FINAL_RUNS

    cluster = Cluster(16, FailureModel(distribution="weibull", system_mtbf_min=200.0 * 1000.0 / 600_000.0,
                                       weibull_shape=0.7))
    training = ttt.Training(work_hours=24.0, ckpt_cost_min=2.0, restart_min=10.0)
    space = ttt.Space(r_max=4, ages="renewed")
    res = ttt.optimize(cluster, training, space).to_json()
    form = ttt.optimize_r_tau(cluster, training, space)
    assert res["method"] == "epoch_pool" and "runs answer" in res["method_detail"]
    for s, e in res["schemes"].items():
        assert (e["method"], e["theory_method"], e["runs"]) == ("epoch_pool", "closed_form_approx", SEARCH_FINAL_RUNS)
        assert e["r_star"] == form["schemes"][s]["r_star"]
        assert e["theory_ttt_hours"] == form["schemes"][s]["ttt_hours"] != e["ttt_hours"]
        assert 0 < e["ttt_stderr_hours"] < 0.05 * e["ttt_hours"]


@pytest.mark.slow
def test_cli_ages(capsys):
    base = ["ttt", "-N", "60", "-r", "3", "--runs", "6", "--work-hours", "60", "--json", "--quiet"]
    outs = {}
    for ages in ("kept", "renewed"):
        assert main([*base, "--ages", ages]) == 0
        outs[ages] = json.loads(capsys.readouterr().out)
    for key in ("mc_ttt_hours", "theory_ttt_hours", "ckpt_interval_min"):  # exponential: the same model
        assert outs["kept"][key] == outs["renewed"][key]
    assert outs["kept"]["runs"] == 6
    assert main([*base, "--distribution", "weibull", "--weibull-shape", "0.7", "--ages", "kept"]) == 0
    data = json.loads(capsys.readouterr().out)
    # kept Weibull ages: whole training runs (every clock new at the start, clocks running during a restart)
    assert data["theory_ttt_hours"] is None and data["runs"] == 6
    assert (data["method"], data["method_detail"]) == ("whole_runs", "whole training runs, event by event")
    # optimize with kept Weibull ages has no closed form: whole training runs answer it (they were refused
    # before the whole-run kernel), r screened around the renewed model's r*
    assert main(["optimize", "-N", "24", "--r-max", "3", "--work-hours", "20", "--json", "--quiet",
                 "--distribution", "weibull", "--weibull-shape", "0.7"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["method"] == "whole_runs" and data["ages"] == "kept"
    assert all(1 <= e["r_star"] <= 3 and e["ttt_hours"] > 20 for e in data["schemes"].values())


# --- TTT defects ---------------------------------------------------------------------------------------------

def test_closed_form_sums_every_checkpoint_tiny_interval():
    """tau + C = 0.001 min against a 375-min mean epoch: ~10^7 checkpoints (the old 200,000 cap gave 2,020 h)."""
    cfg = ttt.Training(ckpt_cost_min=0.0, restart_min=60.0)
    prof = ttt.epoch_profile("none", 8, 1)
    lam = 8 / FailureModel().group_mtbf_min
    tau = 0.001
    want = (cfg.work_hours * 60 / tau) * (1 / lam + cfg.restart_min) * math.expm1(lam * tau) / 60  # 835.2 h
    assert want == pytest.approx(835.2, abs=0.05)
    assert ttt.ttt_theory(prof, tau, cfg)["ttt_hours"] == pytest.approx(want, rel=1e-4)


@pytest.mark.slow
def test_cli_tiny_interval_case(capsys):
    """4.3 million intervals of 0.01 min: the interval form (solved by FFTs at this size) equals the classical
    exact form of checkpointing alone, and the runs agree with it."""
    from spare_jax.ttt.closed_form import none_ttt_exact

    assert main(["ttt", "--scheme", "none", "-N", "8", "--ckpt-cost", "0", "--restart", "60", "--ckpt-interval",
                 "0.01", "--runs", "12", "--json", "--quiet"]) == 0
    data = json.loads(capsys.readouterr().out)
    want = none_ttt_exact(1.0 / data["cluster_mtbf_min"], [0.01], 0.0, 60.0, data["work_hours"] * 60.0)[0][0]
    assert data["theory_ttt_hours"] == pytest.approx(want / 60.0, rel=1e-9)
    assert data["runs"] == 12
    assert abs(data["mc_ttt_hours"] - data["theory_ttt_hours"]) < 4 * data["mc_ttt_stderr_hours"] + 5


def test_cli_ttt_reports_exactly_trials(capsys):
    for trials in (7, 23):
        assert main(["ttt", "-N", "60", "-r", "3", "--runs", str(trials), "--work-hours", "100", "--json",
                     "--quiet"]) == 0
        assert json.loads(capsys.readouterr().out)["runs"] == trials


def test_rep_needs_r_dividing_n(capsys):
    with pytest.raises(ValueError, match=r"r=7, N=600"):
        ttt.scheme_placement("rep", 600, 7)
    assert ttt.scheme_placement("rep", 600, 6) == ("block", 6)
    assert main(["ttt", "--scheme", "rep", "-N", "10", "-r", "3", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "r=3, N=10" in err[0]
    res = ttt.optimize_r_tau(Cluster(12), space=ttt.Space(r_max=5), schemes=("rep",))
    assert res["schemes"]["rep"]["r_searched"] == [1, 2, 3, 4]
    assert any("1, 2, 3, 4" in note for note in res["notes"])
