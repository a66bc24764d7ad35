"""Exact wipe-out theory against brute-force enumeration and independent exact integer arithmetic."""
import math

import numpy as np
import pytest

from spare_jax import theory
from spare_jax.model.placement import make_placement

from conftest import brute_expected_t_by_orders, brute_survival


def _cases(max_n):
    for n in range(1, max_n + 1):
        for r in range(1, n + 1):
            yield "stacked", n, r
            if n % r == 0:
                yield "block", n, r


@pytest.mark.parametrize("kind,n,r", list(_cases(12)))
def test_exact_survival_equals_enumeration_of_subsets(kind, n, r):
    exact = theory.survival_exact(kind, n, r)
    brute = brute_survival(make_placement(kind, n, r))
    np.testing.assert_allclose(exact, brute, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kind,n,r", [("stacked", 6, 2), ("stacked", 7, 3), ("block", 6, 2), ("block", 6, 3),
                                      ("stacked", 7, 1)])
def test_expected_t_equals_enumeration_of_orders(kind, n, r):
    exact = theory.expected_failures(kind, n, r)
    assert exact == pytest.approx(brute_expected_t_by_orders(make_placement(kind, n, r)), rel=1e-12)


def _count_no_run_exact(n, k, r):
    """Circular binary strings of length n with k ones and no r-run, by exact integer DP (independent
    of the composition/saddle-point route): fix the run of ones that wraps around position 0."""
    # linear[len][ones] with no r-run, ending anywhere; use a DP over (ones, current run)
    total = 0
    # strings starting with a ones and ending with b ones (a + b < r), bordered by zeros inside
    lin = _linear_counts(n, r)
    if k == n:
        return 1 if n < r else 0
    for a in range(0, r):
        for b in range(0, r - a):
            inner = n - a - b - 2  # zeros at positions a and n-b-1
            if inner < 0:
                if inner == -1 and a + b == n - 1 and k == a + b:  # single zero
                    total += 1
                continue
            ones = k - a - b
            if 0 <= ones <= inner:
                total += lin[inner][ones]
    return total


def _linear_counts(n, r):
    # lin[L][j]: linear strings of length L with j ones and no run of r ones
    lin = [[0] * (n + 1) for _ in range(n + 1)]
    # f[L][j][run]
    for length in range(n + 1):
        pass
    f = {(0, 0): 1}  # (ones, run) -> count for current length
    lin[0][0] = 1
    for length in range(1, n + 1):
        g = {}
        for (j, run), c in f.items():
            g[(j, 0)] = g.get((j, 0), 0) + c
            if run + 1 < r:
                g[(j + 1, run + 1)] = g.get((j + 1, run + 1), 0) + c
        f = g
        for (j, run), c in f.items():
            lin[length][j] += c
    return lin


@pytest.mark.parametrize("n,r", [(40, 3), (61, 5)])
def test_stacked_matches_exact_integer_count(n, r):
    exact = theory.survival_stacked(n, r)
    for k in range(n + 1):
        want = _count_no_run_exact(n, k, r) / math.comb(n, k)
        assert exact[k] == pytest.approx(want, rel=1e-10, abs=1e-300)


@pytest.mark.parametrize("n,r", [(60, 4), (90, 6)])
def test_block_matches_exact_integer_count(n, r):
    b = n // r
    poly = [math.comb(r, j) for j in range(r)]
    power = [1]
    for _ in range(b):
        nxt = [0] * (len(power) + r - 1)
        for i, x in enumerate(power):
            for j, y in enumerate(poly):
                nxt[i + j] += x * y
        power = nxt
    exact = theory.survival_block(n, r)
    for k in range(n + 1):
        want = (power[k] if k < len(power) else 0) / math.comb(n, k)
        assert exact[k] == pytest.approx(want, rel=1e-10, abs=1e-300)


def test_log_coeff_power_reflection_and_edges():
    log_a = np.log(np.array([1.0, 3.0, 2.0]))  # (1 + 3x + 2x^2)^m
    poly = np.array([1.0])
    for m in range(1, 8):
        poly = np.convolve(poly, [1.0, 3.0, 2.0])
        ks = np.arange(-1, 2 * m + 2)
        got = theory.log_coeff_power(log_a, ks, m)
        want = np.full(ks.shape, -np.inf)
        inside = (ks >= 0) & (ks <= 2 * m)
        want[inside] = np.log(poly[ks[inside]])
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_survival_is_monotone_and_stable_at_large_n():
    s = theory.survival_stacked(60000, 2)
    assert np.all(np.diff(s) <= 1e-15)
    assert s[0] == 1.0 and s[-1] == 0.0
    mean, var = theory.moments_from_survival(s)
    assert 200 < mean < 240 and var > 0  # birthday-type scale sqrt(pi N / 2)/... sanity, not a target
    # the Poisson clumping approximation is close for large N and small r
    assert theory.expected_failures_asymptotic("stacked", 60000, 2) == pytest.approx(mean, rel=0.02)


@pytest.mark.parametrize("kind", ["stacked", "block"])
def test_asymptotic_error_is_small_and_shrinks_with_n(kind):
    errs = []
    for n in (120, 600, 6000):
        exact = theory.expected_failures(kind, n, 4)
        asym = theory.expected_failures_asymptotic(kind, n, 4)
        errs.append(abs(asym - exact) / exact)
    assert errs[-1] < 0.01
    assert errs[-1] < errs[0]


def test_uptime_formula_against_enumeration():
    # E[uptime] for exponential failures: sum over sojourns of P(T > k) / ((N-k) lambda)
    n, r, lam = 7, 2, 0.3
    pl = make_placement("stacked", n, r)
    surv = brute_survival(pl)
    want = sum(surv[k] / ((n - k) * lam) for k in range(n))
    assert theory.expected_uptime(theory.survival_stacked(n, r), n, lam) == pytest.approx(want, rel=1e-12)
