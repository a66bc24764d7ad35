"""The longest circular run of failed groups (``theory.longest_circular_run``): against enumeration of all
2^N rings (N <= 14), against the stacked wipe-out survival, against an independent transfer-matrix
computation at large N, and the paper's r* ~ log2 N + 0.833 = H_N / ln 2 reading."""
import math

import numpy as np
import pytest

from spare_jax import theory


def _brute_rings(n):
    """(longest circular run of ones, number of ones) of every n-bit ring, vectorised over the 2^n masks."""
    masks = np.arange(1 << n, dtype=np.int64)
    bits = ((masks[:, None] >> np.arange(n)) & 1).astype(np.int64)
    ones = bits.sum(axis=1)
    run = np.zeros(masks.size, np.int64)
    best = np.zeros(masks.size, np.int64)
    for i in range(2 * n):  # two laps: every circular run appears whole in the doubled string
        run = np.where(bits[:, i % n] == 1, run + 1, 0)
        best = np.maximum(best, run)
    return np.minimum(best, n), ones


def _pad(pmf, n):
    out = np.zeros(n + 1)
    out[: min(pmf.size, n + 1)] = pmf[: n + 1]
    return out


@pytest.mark.parametrize("n", range(1, 15))
def test_bernoulli_equals_enumeration(n):
    longest, ones = _brute_rings(n)
    for p in (0.5, 0.3, 0.0, 1.0):
        weight = p ** ones * (1 - p) ** (n - ones)
        brute = np.bincount(longest, weights=weight, minlength=n + 1)
        res = theory.longest_circular_run(n, p=p)
        np.testing.assert_allclose(_pad(res["pmf"], n), brute, atol=1e-13)
        assert res["mean"] == pytest.approx(float(longest @ weight), abs=1e-12)
        assert res["pmf"].sum() == pytest.approx(1.0, abs=1e-13)


@pytest.mark.parametrize("n", [1, 2, 5, 9, 12, 14])
def test_exactly_k_equals_enumeration(n):
    longest, ones = _brute_rings(n)
    for k in range(n + 1):
        sel = longest[ones == k]
        brute = np.bincount(sel, minlength=n + 1) / sel.size
        res = theory.longest_circular_run(n, failed=k)
        np.testing.assert_allclose(_pad(res["pmf"], n), brute, atol=1e-13)
        assert res["mean"] == pytest.approx(sel.mean(), abs=1e-12)
        assert res["var"] == pytest.approx(sel.var(), abs=1e-11)


def test_conditional_cdf_is_the_stacked_survival():
    """P(L < r | k) is P(T > k) of the stacked placement at redundancy r (same counter, evaluated per k)."""
    n = 40
    for r in (1, 2, 3, 7, 20, 39, 40):
        surv = theory.survival_stacked(n, r)
        np.testing.assert_allclose(theory.no_run_given_k(n, r, np.arange(n + 1)), surv, rtol=1e-12, atol=1e-300)
    for k in (0, 5, 20, 39, 40):
        cdf = theory.longest_circular_run(n, failed=k)["cdf"]
        for r in range(1, min(cdf.size, n) + 1):
            assert cdf[r - 1] == pytest.approx(theory.survival_stacked(n, r)[k], rel=1e-12, abs=1e-15)


def _mean_longest_transfer_matrix(n, p, r_max):
    """E[L] for Bernoulli(p) rings by an independent route: a ring with at least one 0 and no r-run is a
    closed walk of length n on run-length states 0..r-1 (append 1: s -> s+1 if s+1 < r; append 0: s -> 0),
    so P(L < r) = trace(T_r^n) (+ p^n for the all-ones ring when n < r)."""
    mean = 0.0
    for r in range(1, r_max + 1):
        t = np.zeros((r, r))
        t[:, 0] = 1 - p
        for s in range(r - 1):
            t[s, s + 1] = p
        below = np.trace(np.linalg.matrix_power(t, n)) + (p ** n if n < r else 0.0)
        mean += 1.0 - below
    return mean


@pytest.mark.parametrize("n,p", [(200, 0.5), (300, 0.2), (60, 0.7)])
def test_bernoulli_mean_equals_transfer_matrix(n, p):
    res = theory.longest_circular_run(n, p=p)
    assert res["tail_bound"] < 1e-13
    assert res["mean"] == pytest.approx(_mean_longest_transfer_matrix(n, p, res["cdf"].size + 5), rel=1e-11)


def test_paper_r_star_formula_is_harmonic_over_ln2_not_the_longest_run():
    gamma = 0.5772156649015329
    assert gamma / math.log(2) == pytest.approx(0.833, abs=5e-4)
    for n in (100, 600, 6000):
        # H_N = ln N + gamma + 1/(2N) - 1/(12 N^2) + O(N^-4)
        assert theory.harmonic_over_ln2(n) == pytest.approx(
            math.log2(n) + (gamma + 1 / (2 * n) - 1 / (12 * n * n)) / math.log(2), abs=1e-9)
    # the exact E[longest circular run] at p = 1/2 is ~ log2 N + gamma/ln 2 - 3/2: 1.5 below H_N / ln 2
    for n in (600, 6000):
        exact = _mean_longest_transfer_matrix(n, 0.5, 80)
        assert exact == pytest.approx(math.log2(n) + gamma / math.log(2) - 1.5, abs=0.025)  # +0.020, +0.003
        assert theory.harmonic_over_ln2(n) - exact == pytest.approx(1.5, abs=0.025)
    half = theory.longest_circular_run(600, failed=300)
    assert half["mean"] == pytest.approx(8.565, abs=0.005) and half["median"] == 8


def test_bad_arguments():
    with pytest.raises(ValueError, match="exactly one"):
        theory.longest_circular_run(10)
    with pytest.raises(ValueError, match="exactly one"):
        theory.longest_circular_run(10, p=0.5, failed=3)
    with pytest.raises(ValueError, match="p"):
        theory.longest_circular_run(10, p=1.5)
    with pytest.raises(ValueError, match="failed"):
        theory.longest_circular_run(10, failed=11)


@pytest.mark.slow  # ~10 s: optimize's optax tau search compiles per call
def test_paper_numbers_experiment_at_toy_size(tmp_path):
    """The experiment end to end at N = 40 (40k GPUs): both tables written, r* read from rstar_vs_n.csv and
    cross-checked against a fresh optimize, the Rep baselines ordered (best Rep is the strongest baseline;
    matched availability is reached by some divisor of N). One optimize call (its optax tau search dominates)."""
    import json

    from spare_jax import suite

    (tmp_path / "rstar_vs_n.csv").write_text("groups,r_star_spare\n40,3\n")
    out = suite.paper_numbers(str(tmp_path), groups=(40,), r_max=6, total_gpus=40_000.0, progress=False,
                              sweeps={"restart_min": (60.0,)})
    saved = json.loads((tmp_path / "paper_numbers.json").read_text())
    assert (tmp_path / "paper_numbers.csv").stat().st_size > 0
    assert saved["rstar"][0]["r_star_source"] == "rstar_vs_n.csv"
    assert saved["rstar"][0]["longest_run_mean_p_half"] == pytest.approx(
        theory.longest_circular_run(40, p=0.5)["mean"])
    (row,) = out["sensitivity"]
    assert row["groups"] == 40 and row["spare_r_star"] == 3
    # Rep needs r | N: r* = 3 does not divide N = 40, so there is no same-r Rep baseline
    assert row["ttt_reduction_vs_rep_same_r"] is None and row["rep_same_r_ttt_hours"] is None
    assert row["ttt_reduction_vs_best_rep"] <= row["ttt_reduction_vs_rep_matched"] + 1e-6
    assert row["rep_matched_r"] is not None and 40 % row["rep_matched_r"] == 0  # a divisor of N (block layout)
    assert row["rep_matched_availability_pct"] >= row["spare_availability_pct"] - 1e-7
