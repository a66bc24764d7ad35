"""Scenarios of SPEC §10.1-10.4 (job-wide failures, failure domains, ring order, uneven groups).

The Monte Carlo kernel is checked against ``reference_scenario.py``: a brute-force event-driven simulator
written independently from the model's description (it processes one event at a time and keeps per-shard
holder counts; it shares no code with the engine), and against exact results where they exist.
"""

import math

import numpy as np
import pytest

import reference_scenario as ref
from spare_jax import theory
from spare_jax.model.cluster import Cluster, Sampling
from spare_jax.model.failures import FailureModel
from spare_jax.model.placement import make_placement
from spare_jax.model.scenario import (
    DomainLevel, Scenario, interleaved_ring, job_wide_uptime, lemon_groups, single_domain_wipeout_fraction)
from spare_jax.kernels.wipeout import simulate_wipeout

MODEL = FailureModel()  # group MTBF 3000 min


def _z(a_mean, a_se, b_mean, b_se):
    return (a_mean - b_mean) / math.sqrt(a_se ** 2 + b_se ** 2)


def _reference(n, r, trials, seed, *, scenario, placement="stacked", group_mtbf=None):
    ring = scenario.ring_order(n)
    levels = [(d.size, d.mtbf_min) for d in scenario.domains]
    mtbf = MODEL.group_mtbf_min if group_mtbf is None else group_mtbf
    out = ref.simulate_epochs(n, r, trials, np.random.default_rng(seed), placement=placement, ring=ring,
                              group_mtbf_min=mtbf, domain_levels=levels, job_mtbf_min=scenario.job_mtbf_min)
    return out


def _compare(mc, out):
    """Every epoch statistic of the engine against the reference, within 4 combined standard errors."""
    n_ref = out["uptime"].size
    up_z = _z(mc.uptime_mean_min, mc.uptime_stderr_min, out["uptime"].mean(), out["uptime"].std(ddof=1) / math.sqrt(n_ref))
    t_z = _z(mc.mean, mc.stderr, out["t_count"].mean(), out["t_count"].std(ddof=1) / math.sqrt(n_ref))
    zs = {"uptime": up_z, "T": t_z}
    for name, count in (("ended_by_job", mc.ended_by_job), ("fatal_by_domain", mc.fatal_by_domain)):
        p_mc, p_ref = count / mc.trials, out[name].mean()
        se = math.sqrt(max(p_mc * (1 - p_mc), 1e-12) / mc.trials + max(p_ref * (1 - p_ref), 1e-12) / n_ref)
        zs[name] = (p_mc - p_ref) / se
    assert all(abs(z) < 4 for z in zs.values()), zs
    return zs


def test_default_scenario_is_the_paper_model_bit_for_bit():
    pl = make_placement("stacked", 60, 3)
    a = simulate_wipeout(pl, Sampling(5000, 3))
    b = simulate_wipeout(pl, Sampling(5000, 3), scenario=Scenario(lemon_factor=1.0, lemon_fraction=0.5))
    np.testing.assert_array_equal(a.histogram, b.histogram)
    assert a.uptime_sum_min == b.uptime_sum_min and b.ended_by_job == b.fatal_by_domain == 0


@pytest.mark.parametrize("n,size", [(6, 3), (7, 3), (12, 3), (600, 5), (601, 50), (10, 1)])
def test_interleaved_ring_matches_the_reference(n, size):
    np.testing.assert_array_equal(interleaved_ring(n, size), ref.interleaved_ring(n, size))


@pytest.mark.parametrize("n,r,levels,ring,kind", [
    (12, 3, [(3, 2e4)], "contiguous", "stacked"), (12, 3, [(3, 2e4)], "interleaved", "stacked"),
    (12, 3, [(2, 1e4), (4, 3e4)], "contiguous", "stacked"), (10, 3, [(4, 5e3)], "contiguous", "stacked"),
    (12, 4, [(4, 1e4)], "contiguous", "block"), (600, 4, [(5, 5e4)], "interleaved", "stacked"),
    (600, 4, [(5, 5e4)], "contiguous", "stacked")])
def test_single_domain_wipeout_fraction_matches_brute_force(n, r, levels, ring, kind):
    sc = Scenario(domains=tuple(DomainLevel(*lv) for lv in levels), ring=ring)
    got = single_domain_wipeout_fraction(sc, make_placement(kind, n, r))
    want = ref.single_domain_wipeout_fraction(n, r, levels, placement=kind, ring=sc.ring_order(n))
    assert got == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("n,r,kind,job", [(6, 2, "stacked", 500.0), (9, 3, "block", 2000.0), (8, 3, "stacked", 4000.0)])
def test_job_wide_uptime_equals_enumeration(n, r, kind, job):
    surv = theory.survival_exact(kind, n, r)
    up, p_job = job_wide_uptime(surv, n, MODEL.group_rate_per_min, 1.0 / job)
    assert up == pytest.approx(ref.exact_uptime_no_domains(n, r, MODEL.group_mtbf_min, job, placement=kind), rel=1e-12)
    assert p_job == pytest.approx(ref.exact_job_end_prob_no_domains(n, r, MODEL.group_mtbf_min, job, placement=kind),
                                  rel=1e-12)
    assert job_wide_uptime(surv, n, MODEL.group_rate_per_min, 0.0)[0] == pytest.approx(
        theory.expected_uptime(surv, n, MODEL.group_rate_per_min), rel=1e-13)


@pytest.mark.slow
def test_job_wide_mc_matches_the_exact_composition_at_n600():
    sc = Scenario(job_mtbf_min=2000.0)
    mc = simulate_wipeout(make_placement("stacked", 600, 4), Sampling(40_000, 2), scenario=sc)
    up, p_job = job_wide_uptime(theory.survival_stacked(600, 4), 600, MODEL.group_rate_per_min, 1 / 2000.0)
    assert abs(mc.uptime_mean_min - up) < 4 * mc.uptime_stderr_min
    p = mc.ended_by_job / mc.trials
    assert abs(p - p_job) < 4 * math.sqrt(p_job * (1 - p_job) / mc.trials)


@pytest.mark.parametrize("ring,job", [("contiguous", None), ("interleaved", None), ("contiguous", 2000.0)])
@pytest.mark.slow
def test_acceptance_n600_domains_against_the_reference(ring, job):
    """The issue's acceptance runs: N = 600, r = 4, domains of 5 groups with MTBF 50,000 min."""
    sc = Scenario(domains=(DomainLevel(5, 50_000.0),), ring=ring, job_mtbf_min=job)
    mc = simulate_wipeout(make_placement("stacked", 600, 4), Sampling(20_000, 5), scenario=sc)
    _compare(mc, _reference(600, 4, 2500, 11, scenario=sc))


# the first two settings (stacked, one domain level; interleaved with job-wide failures) compile a kernel each
# and are held in the fast tier by test_exact_small_against_the_engine_and_the_reference (the same levers, the
# kernel against the exact chain and the reference): slow tier; block, two levels and a short last domain stay
@pytest.mark.parametrize("n,r,kind,scenario", [
    pytest.param(20, 3, "stacked", Scenario(domains=(DomainLevel(4, 5000.0),)), marks=pytest.mark.slow),
    pytest.param(20, 3, "stacked", Scenario(domains=(DomainLevel(4, 5000.0),), ring="interleaved",
                                            job_mtbf_min=3000.0), marks=pytest.mark.slow),
    (24, 4, "block", Scenario(domains=(DomainLevel(3, 8000.0), DomainLevel(12, 20000.0)), job_mtbf_min=5000.0)),
    pytest.param(21, 2, "stacked", Scenario(domains=(DomainLevel(5, 2000.0),), ring="interleaved"),  # short last domain
                 marks=pytest.mark.slow),
])
def test_small_n_against_the_reference(n, r, kind, scenario):
    mc = simulate_wipeout(make_placement(kind, n, r), Sampling(40_000, 7), scenario=scenario)
    _compare(mc, _reference(n, r, 8000, 13, scenario=scenario, placement=kind))


def test_lemons_and_per_group_mtbfs_against_the_reference():
    n, r = 20, 3
    sc = Scenario(lemon_fraction=0.25, lemon_factor=6.0, lemon_seed=4, domains=(DomainLevel(5, 6000.0),))
    mtbf = MODEL.group_mtbf_min / sc.rate_multipliers(n, MODEL.group_mtbf_min)
    assert np.sum(mtbf < MODEL.group_mtbf_min) == 5
    np.testing.assert_array_equal(np.flatnonzero(mtbf < MODEL.group_mtbf_min), lemon_groups(n, 0.25, 4))
    mc = simulate_wipeout(make_placement("stacked", n, r), Sampling(40_000, 1), scenario=sc)
    _compare(mc, _reference(n, r, 8000, 17, scenario=sc, group_mtbf=mtbf))
    explicit = Scenario(group_mtbf_min=tuple(mtbf), domains=sc.domains)
    mc2 = simulate_wipeout(make_placement("stacked", n, r), Sampling(40_000, 1), scenario=explicit)
    assert mc2.uptime_sum_min == mc.uptime_sum_min  # the same rates, given two ways


@pytest.mark.slow
def test_limits_reduce_to_the_paper_theory():
    """Domain rate -> 0: the §1 exact E[T] and E[uptime]."""
    n, r = 200, 3
    sc = Scenario(domains=(DomainLevel(4, 1e15),), ring="interleaved")
    mc = simulate_wipeout(make_placement("stacked", n, r), Sampling(40_000, 9), scenario=sc)
    surv = theory.survival_stacked(n, r)
    assert abs(mc.mean - theory.moments_from_survival(surv)[0]) < 4 * mc.stderr
    assert abs(mc.uptime_mean_min - theory.expected_uptime(surv, n, MODEL.group_rate_per_min)) < 4 * mc.uptime_stderr_min
    assert mc.fatal_by_domain == 0


def test_job_fraction_sets_the_job_rate():
    sc = Scenario(job_fraction=0.2, domains=(DomainLevel(10, 1e4),))
    n = 100
    total = n / MODEL.group_mtbf_min + 10 / 1e4
    assert sc.job_rate_per_min(n, MODEL.group_mtbf_min) == pytest.approx(0.25 * total)


@pytest.mark.parametrize("kwargs,match", [
    (dict(domains=((0, 100.0),)), "domain size"), (dict(domains=((5, -1.0),)), "domain mtbf"),
    (dict(domains=((5, float("nan")),)), "domain mtbf"), (dict(job_mtbf_min=0.0), "job_mtbf"),
    (dict(job_fraction=1.0), "job_fraction"), (dict(job_fraction=0.1, job_mtbf_min=10.0), "either"),
    (dict(lemon_fraction=1.5), "lemon_fraction"), (dict(lemon_fraction=-0.1), "lemon_fraction"),
    (dict(lemon_factor=0.0), "lemon_factor"), (dict(ring="spiral"), "ring"),
    (dict(group_mtbf_min=(1.0, -2.0)), "group mtbf")])
def test_bad_scenarios_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Scenario(**kwargs)


@pytest.mark.parametrize("scenario,match", [
    (Scenario(domains=((50, 100.0),)), "domain size"), (Scenario(ring=(0, 1, 1, 3, 4, 5, 6, 7, 8, 9)), "permutation"),
    (Scenario(ring=(0, 1, 2)), "permutation"), (Scenario(ring="interleaved"), "needs failure domains"),
    (Scenario(group_mtbf_min=(1.0,) * 3), "per-group")])
def test_scenarios_that_do_not_fit_the_cluster_are_refused(scenario, match):
    with pytest.raises(ValueError, match=match):
        simulate_wipeout(make_placement("stacked", 10, 2), Sampling(100), scenario=scenario)


# ---------------------------------------------------------------------------------------------------------
# overhead under a scenario, against a brute-force event walk with depth by Hall's condition


def _hall_depth_tables(n, r, kind="stacked"):
    """For every nonempty set S of shards (bitmask over the N shards of the stacked or block placement over
    the ring positions): |S| and the bitmask of ring positions holding some shard of S."""
    holders = ([[(j - l) % n for l in range(r)] for j in range(n)] if kind == "stacked" else
               [[j // r * r + l for l in range(r)] for j in range(n)])
    sizes, unions = [], []
    for s in range(1, 1 << n):
        members = [j for j in range(n) if s >> j & 1]
        sizes.append(len(members))
        unions.append(sum(1 << g for g in {h for j in members for h in holders[j]}))
    return np.array(sizes), np.array(unions, dtype=np.int64)


def _brute_paths(n, r, trials, rng, *, ring, domains, job_mtbf, group_mtbf, placement_kind="stacked"):
    """Per epoch: its uptime U and its depth path [(start, end, depth), ...] (minutes), by walking events
    in time order; d* = the least d with |S| <= d |alive holders of S| for every shard set S (Hall's
    condition for the b-matching). ``group_mtbf``: one value or one per physical group."""
    sizes, unions = _hall_depth_tables(n, r, placement_kind)
    popcount = np.array([bin(x).count("1") for x in range(1 << n)])
    position = np.argsort(ring)  # ring position of each physical group
    epochs = []
    for t in range(trials):
        fail = rng.exponential(1.0, n) * np.asarray(group_mtbf, dtype=float)
        for size, mtbf in domains:
            clocks = rng.exponential(mtbf, -(-n // size))
            fail = np.minimum(fail, clocks[np.arange(n) // size])
        job = rng.exponential(job_mtbf) if job_mtbf else np.inf
        alive, now, path = (1 << n) - 1, 0.0, []
        depth = 1
        for when in np.unique(fail):
            if when > job:
                break
            path.append((now, when, depth))
            now = when
            for g in np.flatnonzero(fail == when):
                alive &= ~(1 << int(position[g]))
            counts = popcount[unions & alive]
            if np.any(counts == 0):  # a shard with no holder up: wipe-out
                break
            depth = next(d for d in range(1, r + 1) if np.all(sizes <= d * counts))
        else:
            when = job
        if job < when or not np.isfinite(when):
            path.append((now, job, depth))
            now = job
        epochs.append((now, path))
    return epochs


def _brute_overhead(n, r, trials, rng, *, ring, domains, job_mtbf, group_mtbf):
    """Omega = E[U]/E[W] and its delta-method s.e. over ``_brute_paths``."""
    epochs = _brute_paths(n, r, trials, rng, ring=ring, domains=domains, job_mtbf=job_mtbf, group_mtbf=group_mtbf)
    u_all = np.array([u for u, _ in epochs])
    w_all = np.array([sum((b - a) / d for a, b, d in path) for _, path in epochs])
    ratio = u_all.mean() / w_all.mean()
    se = np.std(u_all - ratio * w_all, ddof=1) / math.sqrt(trials) / w_all.mean()
    return ratio, se


@pytest.mark.parametrize("ring,job", [pytest.param("contiguous", 4000.0, marks=pytest.mark.slow),
                                      pytest.param("interleaved", None, marks=pytest.mark.slow)])
def test_overhead_under_a_scenario_against_brute_force(ring, job):
    from spare_jax.kernels.overhead import simulate_overhead

    n, r = 8, 3
    sc = Scenario(domains=(DomainLevel(2, 3000.0),), ring=ring, job_mtbf_min=job)
    mc = simulate_overhead(make_placement("stacked", n, r), Sampling(40_000, 3), scenario=sc)
    want, want_se = _brute_overhead(n, r, 6000, np.random.default_rng(8), ring=sc.ring_order(n),
                                    domains=[(2, 3000.0)], job_mtbf=job, group_mtbf=MODEL.group_mtbf_min)
    assert abs(_z(mc.overhead, mc.overhead_stderr, want, want_se)) < 4, (mc.overhead, want)


@pytest.mark.slow
def test_overhead_default_scenario_is_unchanged_and_job_wide_limit():
    from spare_jax.kernels.overhead import simulate_overhead

    pl = make_placement("stacked", 60, 4)
    a = simulate_overhead(pl, Sampling(2000, 1))
    b = simulate_overhead(pl, Sampling(2000, 1), scenario=Scenario())
    assert a.overhead == b.overhead and a.time_avg_depth == b.time_avg_depth
    # a job-wide process that practically never fires gives the same Omega as the sampled-sojourn §1 run
    c = simulate_overhead(pl, Sampling(20_000, 1), scenario=Scenario(job_mtbf_min=1e12))
    assert abs(c.overhead - a.overhead_sampled) < 4 * math.hypot(c.overhead_stderr, a.overhead_sampled_stderr)


# ---------------------------------------------------------------------------------------------------------
# the command line


def _cli(args, capsys):
    from spare_jax.cli import main

    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_cli_scenario_flags_and_config_table(tmp_path, capsys):
    import json

    code, out, _ = _cli(["wipeout", "-N", "60", "-r", "3", "--trials", "4000", "--domain-size", "5",
                         "--domain-mtbf", "20000", "--ring", "interleaved", "--job-mtbf", "3000", "--json",
                         "--quiet"], capsys)
    assert code == 0
    data = json.loads(out)
    assert data["scenario"]["ring"] == "interleaved" and data["single_domain_wipeout_fraction"] == 0.0
    assert 0 < data["p_epoch_end_job_wide"] < 1 and data["theory_exact"] is None
    cfg = tmp_path / "run.toml"
    cfg.write_text('[scenario]\nring = "interleaved"\njob_fraction = 0.2\n'
                   'domains = [{size = 5, mtbf = 20000, name = "switch"}, {size = 20, mtbf = 90000}]\n')
    ring_file = tmp_path / "ring.txt"
    ring_file.write_text("\n".join(str(g) for g in np.random.default_rng(0).permutation(60)) + "\n")
    code, out, err = _cli(["wipeout", "-N", "60", "-r", "3", "--trials", "2000", "--config", str(cfg), "--json",
                           "--quiet"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert [d["size"] for d in data["scenario"]["domains"]] == [5, 20]
    assert data["scenario"]["job_fraction"] == 0.2
    code, out, err = _cli(["overhead", "-N", "60", "-r", "3", "--trials", "500", "--ring", str(ring_file),
                           "--lemon-fraction", "0.1", "--lemon-factor", "4", "--json", "--quiet"], capsys)
    assert code == 0, err
    assert json.loads(out)["scenario"]["ring"] == "custom"


@pytest.mark.parametrize("flags,match", [
    (["--domain-size", "0", "--domain-mtbf", "100"], "--domain-size"),
    (["--domain-size", "61", "--domain-mtbf", "100"], "domain size"),
    (["--domain-size", "5"], "go together"), (["--domain-size", "5", "--domain-mtbf", "-3"], "--domain-mtbf"),
    (["--domain-size", "5", "--domain-mtbf", "nan"], "--domain-mtbf"),
    (["--job-mtbf", "0"], "--job-mtbf"), (["--job-mtbf", "1e300"], "--job-mtbf"),
    (["--job-fraction", "1"], "--job-fraction"), (["--job-mtbf", "5", "--job-fraction", "0.1"], "one of them"),
    (["--lemon-fraction", "1.5", "--lemon-factor", "3"], "--lemon-fraction"),
    (["--lemon-fraction", "-0.1", "--lemon-factor", "3"], "--lemon-fraction"),
    (["--lemon-fraction", "0.1"], "--lemon-factor"), (["--lemon-factor", "0"], "--lemon-factor"),
    (["--ring", "interleaved"], "needs failure domains"), (["--ring", "/nonexistent/ring.txt"], "cannot read"),
    (["--group-mtbf-file", "/nonexistent"], "cannot read")])
def test_cli_bad_scenario_input(flags, match, capsys):
    code, out, err = _cli(["wipeout", "-N", "60", "-r", "3", "--trials", "100", "--quiet"] + flags, capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and match in err, err


@pytest.mark.parametrize("content,match", [
    ("0\n1\n1\n" + "\n".join(map(str, range(3, 60))), "permutation"), ("0 1 2", "permutation"),
    ("0 x 2", "not a group id"), ("", "holds no values")])
def test_cli_bad_ring_files(tmp_path, capsys, content, match):
    path = tmp_path / "ring.txt"
    path.write_text(content)
    code, out, err = _cli(["wipeout", "-N", "60", "-r", "3", "--trials", "100", "--ring", str(path), "--quiet"], capsys)
    assert code == 2 and out == "" and match in err, err


@pytest.mark.parametrize("table,match", [
    ("[scenario]\ndomains = [{size = 0, mtbf = 5}]\n", "scenario.domains.size"),
    ("[scenario]\ndomains = [{size = 5}]\n", "needs size and mtbf"),
    ("[scenario]\ndomains = 3\n", "list of tables"), ("[scenario]\nlemon_fraction = true\n", "number"),
    ("[scenario]\nring_order = 'interleaved'\n", "unknown setting"), ("scenario = 3\n", "must be a table")])
def test_cli_bad_scenario_config(tmp_path, capsys, table, match):
    cfg = tmp_path / "bad.toml"
    cfg.write_text(table)
    code, out, err = _cli(["wipeout", "-N", "60", "-r", "3", "--trials", "100", "--config", str(cfg), "--quiet"],
                          capsys)
    assert code == 2 and out == "" and match in err, err


# ---------------------------------------------------------------------------------------------------------
# job-wide failures in the time-to-train (closed form and Monte Carlo)


def test_ttt_none_with_job_wide_failures_is_the_classical_formula():
    """`none`: every group failure and every job-wide interruption ends the epoch, so epochs are exponential
    with rate N lambda + mu and TTT = (W/tau)(1/Lambda + R)(e^{Lambda (tau + C)} - 1)."""
    from spare_jax import ttt

    n, mu, tau = 16, 1 / 900.0, 30.0
    cfg = ttt.Training()
    prof = ttt.epoch_profile("none", n, 1, MODEL, job_rate=mu)
    lam_total = n * MODEL.group_rate_per_min + mu
    want = (cfg.work_hours * 60 / tau) * (1 / lam_total + cfg.restart_min) * math.expm1(lam_total * (tau + cfg.ckpt_cost_min))
    assert ttt.ttt_theory(prof, tau, cfg)["ttt_hours"] * 60 == pytest.approx(want, rel=2e-4)
    assert prof.mean_uptime_min == pytest.approx(1 / lam_total, rel=1e-4)


def test_ttt_spare_with_job_wide_failures_closed_form_vs_mc_and_uptime():
    from spare_jax import ttt

    n, r, mu = 60, 3, 1 / 2000.0
    cfg = ttt.Training(work_hours=200.0)
    prof = ttt.epoch_profile("spare", n, r, MODEL, job_rate=mu)
    up, _ = job_wide_uptime(theory.survival_stacked(n, r), n, MODEL.group_rate_per_min, mu)
    assert prof.mean_uptime_min == pytest.approx(up, rel=2e-3)
    tau = ttt.best_tau_grid(prof, cfg)[0]
    th = ttt.ttt_theory(prof, tau, cfg)["ttt_hours"]
    mc, pool = ttt.simulate_ttt_runs(Cluster(n, MODEL, Scenario(job_mtbf_min=1 / mu)), cfg, ttt.Policy("spare", r),
                                     Sampling(60, seed=4), tau)
    assert abs(pool.uptime.mean() - up) < 4 * pool.uptime.std() / math.sqrt(pool.uptime.size)
    assert abs(mc["ttt_hours"] - th) < 4 * mc["ttt_stderr_hours"] + 0.01 * th  # the closed form is a ratio
    plain = ttt.ttt_theory(ttt.epoch_profile("spare", n, r, MODEL), tau, cfg)["ttt_hours"]
    assert th > plain  # the job-wide process costs time


@pytest.mark.slow
def test_cli_optimize_and_ttt_take_job_wide_failures(capsys):
    import json

    code, out, err = _cli(["optimize", "-N", "60", "--r-max", "6", "--job-fraction", "0.25", "--json", "--quiet"],
                          capsys)
    assert code == 0, err
    with_job = json.loads(out)
    code, out, _ = _cli(["optimize", "-N", "60", "--r-max", "6", "--json", "--quiet"], capsys)
    without = json.loads(out)
    assert with_job["job_mtbf_min"] == pytest.approx(1 / (0.25 / 0.75 * 60 / MODEL.group_mtbf_min))
    assert with_job["schemes"]["spare"]["ttt_hours"] > without["schemes"]["spare"]["ttt_hours"]
    code, out, err = _cli(["ttt", "-N", "60", "-r", "3", "--trials", "4", "--work-hours", "50", "--job-mtbf", "3000",
                           "--json", "--quiet"], capsys)
    assert code == 0, err
    assert json.loads(out)["job_mtbf_min"] == 3000.0
    code, out, err = _cli(["ttt", "-N", "60", "-r", "3", "--domain-size", "5", "--quiet"], capsys)
    assert code == 2 and "--domain-size" in err


# ---------------------------------------------------------------------------------------------------------
# exact epochs for small N (the 2^N-state chain) with domains, lemons and job-wide failures


def test_exact_small_equals_the_reference_enumeration_without_domains():
    from spare_jax.model.scenario import exact_epoch_small

    for n, r, kind, job in [(8, 2, "stacked", 500.0), (9, 3, "block", 2000.0), (6, 6, "stacked", None)]:
        got = exact_epoch_small(Scenario(job_mtbf_min=job), make_placement(kind, n, r), MODEL.group_mtbf_min)
        assert got["uptime_min"] == pytest.approx(
            ref.exact_uptime_no_domains(n, r, MODEL.group_mtbf_min, job, placement=kind), rel=1e-12)
        if job:
            assert got["p_job_end"] == pytest.approx(
                ref.exact_job_end_prob_no_domains(n, r, MODEL.group_mtbf_min, job, placement=kind), rel=1e-12)
        assert got["p_fatal_domain"] == 0.0


@pytest.mark.parametrize("n,r,scenario", [
    (12, 3, Scenario(domains=(DomainLevel(3, 20_000.0),), ring="interleaved", job_mtbf_min=4000.0)),
    pytest.param(12, 3, Scenario(domains=(DomainLevel(3, 20_000.0),)), marks=pytest.mark.slow),
    pytest.param(10, 2, Scenario(domains=(DomainLevel(4, 5000.0), DomainLevel(10, 40_000.0)), lemon_fraction=0.2,
                                 lemon_factor=5.0, lemon_seed=3), marks=pytest.mark.slow),
])
def test_exact_small_against_the_engine_and_the_reference(n, r, scenario):
    from spare_jax.model.scenario import exact_epoch_small

    exact = exact_epoch_small(scenario, make_placement("stacked", n, r), MODEL.group_mtbf_min)
    mc = simulate_wipeout(make_placement("stacked", n, r), Sampling(60_000, 12), scenario=scenario)
    assert abs(mc.uptime_mean_min - exact["uptime_min"]) < 4 * mc.uptime_stderr_min
    for count, p in ((mc.fatal_by_domain, exact["p_fatal_domain"]), (mc.ended_by_job, exact["p_job_end"])):
        assert abs(count / mc.trials - p) <= 4 * math.sqrt(max(p * (1 - p), 1e-9) / mc.trials)
    mtbf = MODEL.group_mtbf_min / scenario.rate_multipliers(n, MODEL.group_mtbf_min)
    out = _reference(n, r, 6000, 21, scenario=scenario, group_mtbf=mtbf)
    se = out["uptime"].std(ddof=1) / math.sqrt(out["uptime"].size)
    assert abs(out["uptime"].mean() - exact["uptime_min"]) < 4 * se


def test_cli_reports_the_exact_small_n_theory(capsys):
    import json

    code, out, err = _cli(["wipeout", "-N", "12", "-r", "3", "--domain-size", "3", "--domain-mtbf", "20000",
                           "--trials", "20000", "--json", "--quiet"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["theory_epoch_uptime_min"] is not None and data["theory_p_wipeout_by_domain"] > 0
    assert abs(data["mc_epoch_uptime_min"] - data["theory_epoch_uptime_min"]) < 4 * data["mc_epoch_uptime_stderr_min"]


# ---------------------------------------------------------------------------------------------------------
# time-to-train under a scenario with no closed form (domains, ring orders, uneven groups)


def _brute_renewal_ttt(epochs, tau, cfg):
    """W (mean U + R) / mean Y and its delta-method s.e. (minutes), Y the work committed by the epoch's last
    checkpoint: every compute window [(i-1)(tau+C), (i-1)(tau+C)+tau] with i(tau+C) <= U, each overlap
    with a depth piece counted at rate 1/d."""
    period = tau + cfg.ckpt_cost_min
    u = np.array([e[0] for e in epochs])
    y = np.zeros(u.size)
    for k, (up, path) in enumerate(epochs):
        for i in range(1, int(up // period) + 1):
            lo, hi = (i - 1) * period, (i - 1) * period + tau
            y[k] += sum(max(0.0, min(hi, b) - max(lo, a)) / d for a, b, d in path)
    cycle = u + cfg.restart_min
    ratio = cycle.mean() / y.mean()
    se = np.std(cycle - ratio * y, ddof=1) / math.sqrt(u.size) / y.mean()
    return cfg.work_hours * 60 * ratio, cfg.work_hours * 60 * se


@pytest.mark.parametrize("scheme,r,ring,job,uneven", [
    ("spare", 3, "interleaved", None, False),
    pytest.param("spare", 3, "contiguous", 4000.0, True, marks=pytest.mark.slow),
    ("rep", 2, "contiguous", None, False),
])
def test_scenario_ttt_pool_against_brute_force(scheme, r, ring, job, uneven):
    """The engine's epoch pool under a scenario (domains, ring, job-wide, per-group MTBFs) gives the same
    renewal-reward TTT as a brute-force event walk with Hall's-condition depths (written in this file)."""
    from spare_jax import ttt
    from spare_jax.ttt.pool import pool_theory, sample_scenario_epochs

    n, tau = 8, 40.0
    cfg = ttt.Training(work_hours=100.0)
    mtbfs = tuple(MODEL.group_mtbf_min / (4.0 if g in (1, 6) else 1.0) for g in range(n)) if uneven else None
    sc = Scenario(domains=(DomainLevel(2, 3000.0),), ring=ring, job_mtbf_min=job, group_mtbf_min=mtbfs)
    pool = sample_scenario_epochs(scheme, n, r, 40_000, seed=5, model=MODEL, scenario=sc)
    got = pool_theory(pool, tau, cfg)
    if scheme == "rep":  # replica sets: d = r throughout; the brute walk's depth is Hall's, so set it to r
        epochs = [(u, [(a, b, r) for a, b, _ in path]) for u, path in
                  _brute_paths(n, r, 5000, np.random.default_rng(2), ring=sc.ring_order(n), domains=[(2, 3000.0)],
                               job_mtbf=job, group_mtbf=MODEL.group_mtbf_min if mtbfs is None else mtbfs,
                               placement_kind="block")]
    else:
        epochs = _brute_paths(n, r, 5000, np.random.default_rng(2), ring=sc.ring_order(n), domains=[(2, 3000.0)],
                              job_mtbf=job, group_mtbf=MODEL.group_mtbf_min if mtbfs is None else mtbfs)
    want, want_se = _brute_renewal_ttt(epochs, tau, cfg)
    z = _z(got["ttt_hours"] * 60, got["ttt_stderr_hours"] * 60, want, want_se)
    assert abs(z) < 4, (got["ttt_hours"] * 60, want, z)


@pytest.mark.slow
def test_scenario_ttt_runs_agree_with_the_renewal_estimate_and_the_limits():
    """Runs assembled from the scenario pool agree with the pool's renewal-reward estimate; with domains
    that practically never fail the scenario pool agrees with the closed form of the §1 model."""
    from spare_jax import ttt
    from spare_jax.ttt.pool import best_tau_pool, pool_theory, sample_scenario_epochs

    n, r = 60, 3
    cfg = ttt.Training(work_hours=200.0)
    sc = Scenario(domains=(DomainLevel(5, 20_000.0),), ring="interleaved")
    pilot = sample_scenario_epochs("spare", n, r, 20_000, seed=1, model=MODEL, scenario=sc)
    tau = best_tau_pool(pilot, cfg)[0]
    est = pool_theory(pilot, tau, cfg)
    mc, pool = ttt.simulate_ttt_runs(Cluster(n, MODEL, sc), cfg, ttt.Policy("spare", r), Sampling(80, seed=1), tau,
                                     uptime_guess_min=est["mean_uptime_min"])
    assert mc["runs"] == 80 and np.array_equal(pool.uptime[:1000], pilot.uptime[:1000])  # same leading epochs
    assert abs(mc["ttt_hours"] - est["ttt_hours"]) < 4 * math.hypot(mc["ttt_stderr_hours"], est["ttt_stderr_hours"]) \
        + 0.01 * est["ttt_hours"]
    # limit: domain events that never come -> the §1 closed form (itself within ~1% of the MC, see test_ttt)
    never = Scenario(domains=(DomainLevel(5, 1e15),))
    lim = pool_theory(sample_scenario_epochs("spare", n, r, 20_000, seed=2, model=MODEL, scenario=never), tau, cfg)
    closed = ttt.ttt_theory(ttt.epoch_profile("spare", n, r, MODEL), tau, cfg)["ttt_hours"]
    assert abs(lim["ttt_hours"] - closed) < 4 * lim["ttt_stderr_hours"] + 0.01 * closed
    # domains cost time: the contiguous ring puts a stack's holders in one domain
    worse = pool_theory(sample_scenario_epochs("spare", n, r, 20_000, seed=1, model=MODEL,
                                               scenario=Scenario(domains=sc.domains)), tau, cfg)
    assert worse["ttt_hours"] > est["ttt_hours"] + 4 * math.hypot(worse["ttt_stderr_hours"], est["ttt_stderr_hours"])


@pytest.mark.slow
def test_cli_ttt_and_optimize_under_domains(capsys):
    import json

    flags = ["-N", "40", "--domain-size", "4", "--domain-mtbf", "20000", "--ring", "interleaved", "--work-hours", "50",
             "--json", "--quiet"]
    code, out, err = _cli(["ttt", "-r", "3", "--trials", "6"] + flags, capsys)
    assert code == 0, err
    res = json.loads(out)
    assert res["theory_ttt_hours"] is None and res["renewal_ttt_hours"] > 0
    assert res["scenario"]["ring"] == "interleaved"
    code, out, err = _cli(["optimize", "--r-max", "2", "--epochs", "500", "--curves"] + flags, capsys)
    assert code == 0, err
    res = json.loads(out)
    assert res["method_detail"].startswith("Monte Carlo") and res["epochs_per_r"] == 500
    assert res["method"] == "epoch_pool"
    assert [c["redundancy"] for c in res["curves"]["spare"]] == [1, 2]
    assert all(c["ttt_stderr_hours"] > 0 for c in res["curves"]["spare"])
    # Weibull clocks under domains: no epoch pool follows them, whole training runs answer (refused before they
    # existed)
    code, out, err = _cli(["optimize", "--r-max", "2", "--distribution", "weibull", "--weibull-shape", "0.7", "--ages",
                           "renewed"] + flags, capsys)
    assert code == 0, err
    assert json.loads(out)["method_detail"].startswith("whole training runs")
