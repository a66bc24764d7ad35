import numpy as np
import pytest

from spare_jax.model.placement import holders_of, make_placement, validate_stack


@pytest.mark.parametrize("kind,n,r", [("stacked", 10, 3), ("block", 12, 4), ("random", 50, 7), ("stacked", 5, 5)])
def test_tables_are_valid(kind, n, r):
    pl = make_placement(kind, n, r, seed=3)
    validate_stack(pl.stack)
    assert pl.stack.shape == (n, r)
    assert np.array_equal(pl.stack[:, 0], np.arange(n)), "level 0 is the identity"
    for j in range(n):  # holders really hold j, and nothing else does
        assert set(pl.holders[j]) == {g for g in range(n) if j in pl.stack[g]}


def test_stacked_holders_are_a_window():
    pl = make_placement("stacked", 9, 4)
    for j in range(9):
        assert set(pl.holders[j]) == {(j - i) % 9 for i in range(4)}


def test_block_structure():
    pl = make_placement("block", 12, 3)
    for g in range(12):
        assert set(pl.stack[g]) == set(range(3 * (g // 3), 3 * (g // 3) + 3))
        assert pl.stack[g, 0] == g


def test_random_is_seeded_and_not_stacked():
    a = make_placement("random", 40, 5, seed=1)
    b = make_placement("random", 40, 5, seed=1)
    c = make_placement("random", 40, 5, seed=2)
    assert np.array_equal(a.stack, b.stack)
    assert not np.array_equal(a.stack, c.stack)
    assert not np.array_equal(a.stack, make_placement("stacked", 40, 5).stack)


def test_custom_roundtrip():
    table = make_placement("stacked", 6, 2).stack[::-1]
    pl = make_placement("custom", 6, 2, table=table)
    assert np.array_equal(pl.holders, holders_of(pl.stack))


@pytest.mark.parametrize("kwargs,match", [
    (dict(kind="stacked", groups=5, redundancy=6), "redundancy"),
    (dict(kind="stacked", groups=5, redundancy=0), "redundancy"),
    (dict(kind="stacked", groups=0, redundancy=1), "groups"),
    (dict(kind="block", groups=10, redundancy=3), "divide"),
    (dict(kind="nope", groups=10, redundancy=3), "placement"),
    (dict(kind="stacked", groups=10.5, redundancy=3), "groups"),
    (dict(kind="custom", groups=4, redundancy=2), "table"),
])
def test_bad_parameters_raise_value_error(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_placement(**kwargs)


@pytest.mark.parametrize("table,match", [
    ([[0, 0], [1, 1]], "twice"),
    ([[0, 1], [1, 2], [2, 3]], "0..2"),
    ([[0, 1], [0, 2], [0, 1]], "appears"),
    ([[0, 5], [1, 0]], "0..1"),
    ([0, 1, 2], "2-D"),
])
def test_custom_validation(table, match):
    with pytest.raises(ValueError, match=match):
        validate_stack(table)
