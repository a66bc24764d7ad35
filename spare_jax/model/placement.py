"""Placements: which shards each data-parallel group holds (docs/model.md#groups-shards-placements).

A placement is an integer table ``stack[g, l]`` of shape ``(N, r)``: the shard at level ``l`` of group ``g``'s
stack. Every row holds ``r`` distinct shards and every shard appears exactly ``r`` times, so each shard has
``r`` *holders*. ``holders[j]`` lists them (shape ``(N, r)`` as well).

Kinds
-----
``stacked`` (SPARe)
    ``stack[g, l] = (g + l) mod N``; holders of shard ``j`` are groups ``j, j-1, ..., j-r+1 (mod N)``.
    A wipe-out is exactly ``r`` cyclically consecutive failed groups.
``block`` (classic replica sets)
    needs ``r | N``; block ``b`` = groups ``br .. br+r-1``, all holding shards ``br .. br+r-1``; group
    ``br+i`` starts its stack at shard ``br+i`` (level 0 is the identity).
``random``
    level 0 the identity, the other levels random permutations repaired so that rows stay duplicate-free.
``custom``
    a user table, validated.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

PLACEMENTS = ("stacked", "block", "random", "custom")


def check_int(name: str, value, lo: int = 1) -> int:
    """Return ``value`` as an int >= lo, or raise ValueError naming the parameter."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if isinstance(value, float):
        if not math.isfinite(value) or value != int(value):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    try:
        ivalue = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an integer, got {value!r}") from None
    if ivalue < lo:
        raise ValueError(f"{name} must be >= {lo}, got {ivalue}")
    if name in ("trials", "seed"):  # uint32 trial ids; jax.random.key takes a C long (bounds.BOUNDS)
        from .bounds import check

        check(name, ivalue)
    return ivalue


def check_groups_redundancy(groups, redundancy) -> tuple[int, int]:
    """Validate N (groups) and r (redundancy): integers with 1 <= r <= N."""
    n = check_int("groups (N)", groups)
    r = check_int("redundancy (r)", redundancy)
    if r > n:
        raise ValueError(f"redundancy (r) must be <= groups (N): r={r} > N={n}")
    return n, r


@dataclasses.dataclass(frozen=True, eq=False)
class Placement:
    """A validated placement.

    Attributes:
      kind: one of ``PLACEMENTS``.
      stack: ``int32[N, r]``, shard at level ``l`` of group ``g``.
      holders: ``int32[N, r]``, the groups holding shard ``j`` (ascending level order of appearance).
    """

    kind: str
    stack: np.ndarray
    holders: np.ndarray

    @property
    def groups(self) -> int:
        return int(self.stack.shape[0])

    @property
    def redundancy(self) -> int:
        return int(self.stack.shape[1])

    @property
    def blocks(self) -> int:
        """Number of replica blocks (``block`` only)."""
        return self.groups // self.redundancy

    def __repr__(self) -> str:  # keep tables out of reprs
        return f"Placement(kind={self.kind!r}, groups={self.groups}, redundancy={self.redundancy})"


def validate_stack(stack, groups: int | None = None, redundancy: int | None = None) -> np.ndarray:
    """Check a placement table and return it as ``int32[N, r]``.

    Raises ValueError naming what is wrong: shape, range, a repeated shard in a row, or a shard that does
    not appear exactly ``r`` times.
    """
    table = np.asarray(stack)
    if table.ndim != 2:
        raise ValueError(f"placement table must be 2-D (N x r), got shape {table.shape}")
    n, r = table.shape
    if groups is not None and n != groups:
        raise ValueError(f"placement table has {n} rows but groups (N) = {groups}")
    if redundancy is not None and r != redundancy:
        raise ValueError(f"placement table has {r} columns but redundancy (r) = {redundancy}")
    check_groups_redundancy(n, r)
    if not np.issubdtype(table.dtype, np.integer):
        if not np.all(np.isfinite(table)) or not np.all(table == np.round(table)):
            raise ValueError("placement table must hold integer shard ids")
    table = table.astype(np.int64)
    if table.min() < 0 or table.max() >= n:
        raise ValueError(f"placement table shard ids must lie in 0..{n - 1}")
    srt = np.sort(table, axis=1)
    if r > 1 and np.any(srt[:, 1:] == srt[:, :-1]):
        bad = int(np.nonzero(np.any(srt[:, 1:] == srt[:, :-1], axis=1))[0][0])
        raise ValueError(f"placement table row {bad} holds a shard twice")
    counts = np.bincount(table.ravel(), minlength=n)
    if np.any(counts != r):
        bad = int(np.nonzero(counts != r)[0][0])
        raise ValueError(f"shard {bad} appears {counts[bad]} times in the placement table, expected r={r}")
    return table.astype(np.int32)


def holders_of(stack: np.ndarray) -> np.ndarray:
    """``holders[j]`` = groups whose stack holds shard ``j``, ordered by (level, group)."""
    n, r = stack.shape
    flat = stack.T.ravel()  # level-major so that holders come out level by level
    order = np.argsort(flat, kind="stable")
    groups = np.tile(np.arange(n, dtype=np.int32), r)
    return groups[order].reshape(n, r).astype(np.int32)


def _stacked_table(n: int, r: int) -> np.ndarray:
    return ((np.arange(n)[:, None] + np.arange(r)[None, :]) % n).astype(np.int32)


def _block_table(n: int, r: int) -> np.ndarray:
    g = np.arange(n)
    base = (g // r) * r
    return (base[:, None] + ((g % r)[:, None] + np.arange(r)[None, :]) % r).astype(np.int32)


def _random_table(n: int, r: int, seed: int) -> np.ndarray:
    """Level 0 identity; each further level a uniform permutation, repaired by random swaps.

    A position whose shard is already in its row is swapped with a random other position whenever the swap
    leaves both rows duplicate-free. The repair changes few entries (about l per level), so each level stays
    close to a uniform permutation; the result is validated.
    """
    rng = np.random.default_rng(seed)
    table = np.empty((n, r), dtype=np.int64)
    table[:, 0] = np.arange(n)
    for level in range(1, r):
        perm = rng.permutation(n)
        rows = table[:, :level]

        def clash(g: int, shard: int) -> bool:
            return bool(np.any(rows[g] == shard))

        for attempt in range(100):
            bad = np.nonzero(np.any(rows == perm[:, None], axis=1))[0]
            if bad.size == 0:
                break
            for g in bad:
                if not clash(g, perm[g]):
                    continue
                for _ in range(10 * n):
                    h = int(rng.integers(n))
                    if h != g and not clash(g, perm[h]) and not clash(h, perm[g]):
                        perm[g], perm[h] = perm[h], perm[g]
                        break
        else:  # pragma: no cover - only for r close to N
            raise ValueError(f"could not build a random placement for N={n}, r={r}; use stacked or custom")
        table[:, level] = perm
    return validate_stack(table)


def make_placement(kind: str = "stacked", groups: int = 600, redundancy: int = 8, *, seed: int = 0,
                   table=None) -> Placement:
    """Build and validate a placement of ``kind`` for N = ``groups`` and r = ``redundancy``.

    ``table`` is required for ``custom`` (an ``N x r`` integer array) and ignored otherwise.
    """
    if not isinstance(kind, str) or kind not in PLACEMENTS:
        raise ValueError(f"placement must be one of {', '.join(PLACEMENTS)}, got {kind!r}")
    if kind == "custom":
        if table is None:
            raise ValueError("placement 'custom' needs a table (N x r integer array)")
        stack = validate_stack(table, None if groups is None else int(groups),
                               None if redundancy is None else int(redundancy))
        return Placement("custom", stack, holders_of(stack))
    n, r = check_groups_redundancy(groups, redundancy)
    if kind == "stacked":
        stack = _stacked_table(n, r)
    elif kind == "block":
        if n % r:
            raise ValueError(f"placement 'block' needs redundancy (r) to divide groups (N): r={r}, N={n}")
        stack = _block_table(n, r)
    else:
        seed = check_int("seed", seed, lo=0)
        stack = _random_table(n, r, seed)
    return Placement(kind, stack, holders_of(stack))
