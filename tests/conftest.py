import itertools

import numpy as np
import pytest


def brute_survival(placement):
    """P(T > k) by enumerating every failure subset: a shard is lost iff all its holders failed."""
    n = placement.groups
    holders = placement.holders
    alive_ok = np.zeros(n + 1)
    total = np.zeros(n + 1)
    for mask in range(1 << n):
        failed = np.array([(mask >> g) & 1 for g in range(n)], dtype=bool)
        k = int(failed.sum())
        total[k] += 1
        if not failed[holders].all(axis=1).any():
            alive_ok[k] += 1
    return alive_ok / total


def brute_expected_t_by_orders(placement):
    """E[T] by enumerating every failure order (N! permutations)."""
    n = placement.groups
    holders = placement.holders
    total = 0
    count = 0
    for order in itertools.permutations(range(n)):
        failed = np.zeros(n, dtype=bool)
        for i, g in enumerate(order, start=1):
            failed[g] = True
            if failed[holders].all(axis=1).any():
                total += i
                break
        count += 1
    return total / count


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
