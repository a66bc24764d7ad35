r"""Depth with adaptive reordering: d*(S), the least per-group load that covers every shard
(docs/model.md#failures-wipe-out-depth-overhead).

After a failure set S (no wipe-out), d*(S) is the least d such that every shard can be assigned to a
surviving holder with at most d shards per group (a bipartite b-matching). It is at least
``ceil(N / alive)`` and at most ``r``.

The ``stacked`` queue test (O(N) per d)
---------------------------------------
Group g holds shards g .. g+r-1. Scan the groups in ring order: at group g the shard ``g+r-1`` is
*released* (g is its first holder) and shard ``g`` reaches its *deadline* (g is its last holder). Keep the
released-but-unassigned shards in a FIFO queue; a surviving group takes up to d of them, oldest first.

**Claim.** Depth d is feasible iff (i) ``d * alive >= N`` and (ii) the queue, run for two laps of the ring
from empty, never holds r shards after a group is processed.

*Proof.* By Hall's theorem on the graph with each surviving group copied d times, d is feasible iff every
set X of shards has ``d * |alive(N(X))| >= |X|``. It suffices to take X an arc of consecutive shards: if X
splits into arcs whose holder windows overlap (a gap < r between them), replacing X by its hull keeps
N(X) and enlarges X; if the windows are disjoint, the conditions of the arcs add up. An arc of L shards
``a .. a+L-1`` has the holder window ``a-r+1 .. a+L-1`` of ``l = L + r - 1`` groups; when ``l >= N`` the
window is the whole ring and the condition is implied by (i). So feasibility is (i) plus, for every
window of ``l`` consecutive groups (``r <= l < N``), ``d * alive(window) >= l - r + 1``.
The queue length after group e obeys Lindley's recursion ``q_e = max(0, q_{e-1} + 1 - d a_e)``
(``a_e = 1`` if e survives), i.e. ``q_e = max_s sum_{i=s}^{e} (1 - d a_i)`` over window starts s, so
``q_e <= r - 1`` for all e is exactly the window condition. Two laps from an empty queue contain every
circular window of length < N; longer windows on the unrolled ring are implied by (i) and shorter ones.
The queue's FIFO order is earliest-deadline-first, so the schedule it builds is a valid assignment. ∎

The vectorised form uses cumulative sums and maxima instead of a loop: with ``P`` the prefix count of
surviving groups over two laps and ``Q_i = d P_i - i``, condition (ii) is
``Q_e - max_{s <= e - r} Q_s >= -(r - 1)`` for every e, a cumulative maximum.

``block``: a block with s survivors of r holds r shards that only its own groups hold, so
``d* = max over blocks of ceil(r / s)``.

``random``/``custom``: no structure: the host solver (max-flow via Hopcroft–Karp on the graph with each
surviving group replicated d times, ``scipy.sparse.csgraph.maximum_bipartite_matching``).

Micro-batches (docs/microbatches.md#how-it-works)
-------------------------------------------------
With each shard cut into m micro-batches, any of which any alive holder may compute (gradients are sums
over samples), the load is counted in micro-batches: *capacity* c is the most micro-batches a group
computes, and the depth is ``c / m``. c*(S) is the least feasible c; ``m <= c* <= r m`` without a
wipe-out, and ``c* = m`` iff nothing has failed.

**Claim (stacked).** Capacity c is feasible iff (i) ``c * alive >= N m`` and (ii) the queue
``Q = max(0, Q + m - c a_g)`` (``a_g = 1`` if g survives), run for two laps of the ring from empty,
never exceeds ``(r - 1) m``.

*Proof.* The same as for m = 1, counted in micro-batches. Hall's condition on the graph whose left side
holds m copies of every shard and whose right side holds c copies of every surviving group reads
``c |alive(N(X))| >= m |X|`` for every shard set X; the hull argument reduces it to arcs, and an arc of
L shards with holder window of ``l = L + r - 1`` groups needs ``c * alive(window) >= m (l - r + 1)``,
i.e. ``sum_{g in window} (m - c a_g) <= (r - 1) m``; windows of l >= N are implied by (i). Lindley's
recursion makes ``Q_e = max_s sum_{i=s}^{e} (m - c a_i)``, so (ii) is exactly the window condition on
every circular window of length < N (two laps from empty contain them all). The schedule is
earliest-deadline-first on circular arcs: shard j's m micro-batches are released at its first holder and
due at its last; the FIFO queue serves the oldest first, and after group e it holds only the newest
``Q <= (r - 1) m`` micro-batches, i.e. parts of the r - 1 shards released at groups e-r+2 .. e, so
the shard due at e has been served completely. Scaling by m (c = d m) gives back the m = 1 test, so
capacity ``d m`` is feasible iff depth d is: integer depths do not change with m. ∎

``block``: a block with s survivors holds r m micro-batches that only they hold, so
``c* = max over blocks of ceil(r m / s)``. Any placement: the host matcher with m copies of every shard.
"""

from __future__ import annotations

import math

import numpy as np

import jax
import jax.numpy as jnp

from ..model.placement import Placement

WIPED_OUT = 0  # depth returned for a state with a lost shard (no finite depth exists)


def feasible_stacked(alive, d, redundancy: int, microbatches: int = 1):
    """Queue test: can the surviving groups (``bool[N]``) cover the ``stacked`` ring at depth ``d``?
    With ``microbatches = m > 1``, ``d`` is the capacity c in micro-batches per group (depth c/m)."""
    alive = jnp.asarray(alive)
    n = alive.shape[-1]
    a2 = jnp.concatenate([alive, alive], axis=-1).astype(jnp.int32)
    prefix = jnp.concatenate([jnp.zeros(a2.shape[:-1] + (1,), jnp.int32), jnp.cumsum(a2, axis=-1)], axis=-1)
    m = int(microbatches)
    q = d * prefix - m * jnp.arange(2 * n + 1, dtype=jnp.int32)
    r = redundancy
    run_max = jax.lax.cummax(q, axis=q.ndim - 1)
    # for e >= r: Q_e - max_{s <= e-r} Q_s >= -(r-1) m
    slack = q[..., r:] - run_max[..., : 2 * n + 1 - r]
    window_ok = jnp.all(slack >= -(r - 1) * m, axis=-1)
    return window_ok & (d * prefix[..., n] >= n * m)


def depth_stacked(alive, redundancy: int):
    """d*(S) for ``stacked`` (``alive``: ``bool[..., N]``); ``WIPED_OUT`` (0) where a shard is lost."""
    ds = jnp.arange(1, redundancy + 1, dtype=jnp.int32)
    ok = jax.vmap(lambda d: feasible_stacked(alive, d, redundancy), out_axes=-1)(ds)
    first = jnp.argmax(ok, axis=-1)
    return jnp.where(ok.any(axis=-1), first + 1, WIPED_OUT).astype(jnp.int32)


def bisect_steps(r: int, m: int) -> int:
    """The bisection steps ``least_capacity_stacked`` takes over capacities m..r m: ceil(log2(r m - m + 1))."""
    return max(0, math.ceil(math.log2(int(r) * int(m) - int(m) + 1)))


def least_capacity_stacked(down, r, m, steps=None):
    """Least capacity c in m..r m (micro-batches per group) covering the ``stacked`` ring with the groups up,
    per run (``down``: ``bool[C, N]``); 0 where no c does (a shard lost: a wipe-out).

    The queue test of ``feasible_stacked`` (prefix sums and running maxima as associative
    scans, which XLA runs faster than its cumulative reductions on CPU). Feasibility is monotone in c, and
    no c below the count bound ``ceil(N m / alive)`` passes; with few groups down the bound itself passes, so
    it is tried first and the bisection over the rest runs only in the steps where some run needs it.
    ``r`` and ``m`` may be traced (one compiled program for every r and m); then ``steps``
    (``bisect_steps(r, m)``, traced too) says how many bisection steps to take. Integers throughout: the
    same c whichever way r and m are given."""
    n = down.shape[-1]
    if steps is None:
        steps = bisect_steps(r, m)
    alive = n - down.sum(axis=1, dtype=jnp.int32)
    a2 = jnp.concatenate([~down, ~down], axis=-1).astype(jnp.int32)
    prefix = jnp.concatenate([jnp.zeros(a2.shape[:-1] + (1,), jnp.int32),
                              jax.lax.associative_scan(jnp.add, a2, axis=1)], axis=-1)
    steps_m = m * jnp.arange(2 * n + 1, dtype=jnp.int32)
    below = jnp.full((down.shape[0], 2 * n + 1), jnp.iinfo(jnp.int32).min // 2, jnp.int32)

    def feasible(c):
        q = c[:, None] * prefix - steps_m
        run_max = jax.lax.associative_scan(jnp.maximum, q, axis=1)
        # for e >= r: Q_e - max_{s <= e-r} Q_s >= -(r-1) m (run_max shifted right by r; nothing asked below r)
        earlier = jax.lax.dynamic_slice_in_dim(jnp.concatenate([below, run_max], axis=1), 2 * n + 1 - r,
                                               2 * n + 1, axis=1)
        return jnp.all(q - earlier >= -(r - 1) * m, axis=1) & (c * alive >= n * m)

    bound = jnp.clip(-(-(n * m) // jnp.maximum(alive, 1)), m, r * m).astype(jnp.int32)
    ok_bound = feasible(bound)

    def bisect(_):
        hi = jnp.full(bound.shape, r * m, jnp.int32)
        ok = feasible(hi)

        def step(_, lohi):
            lo, hi = lohi
            mid = (lo + hi) // 2
            f = feasible(mid) & (mid > lo)
            return jnp.where(f | (mid <= lo), lo, mid), jnp.where(f, mid, hi)

        _, hi = jax.lax.fori_loop(0, steps, step, (bound - 1, hi))
        return jnp.where(ok, hi, 0)

    slow = jax.lax.cond(jnp.any(~ok_bound), bisect, lambda _: bound, None)
    return jnp.where(ok_bound, bound, slow)


def capacity_block(alive, redundancy: int, microbatches: int = 1):
    """c*(S) for ``block``: max over blocks of ceil(r m / survivors); 0 where a block is wiped out."""
    alive = jnp.asarray(alive)
    n, rm = alive.shape[-1], redundancy * microbatches  # m may be traced
    surv = alive.reshape(alive.shape[:-1] + (n // redundancy, redundancy)).sum(axis=-1)
    need = jnp.where(surv > 0, -(-rm // jnp.maximum(surv, 1)), 10**6).max(axis=-1)
    return jnp.where(need > rm, WIPED_OUT, need).astype(jnp.int32)


def depth_block(alive, redundancy: int):
    """d*(S) for ``block``: max over blocks of ceil(r / survivors); 0 where a block is wiped out."""
    alive = jnp.asarray(alive)
    n = alive.shape[-1]
    surv = alive.reshape(alive.shape[:-1] + (n // redundancy, redundancy)).sum(axis=-1)
    need = jnp.where(surv > 0, -(-redundancy // jnp.maximum(surv, 1)), 10**6).max(axis=-1)
    return jnp.where(need > redundancy, WIPED_OUT, need).astype(jnp.int32)


def depth_kernel(alive, placement: Placement):
    """d*(S) on device for ``stacked``/``block``."""
    if placement.kind == "stacked":
        return depth_stacked(alive, placement.redundancy)
    if placement.kind == "block":
        return depth_block(alive, placement.redundancy)
    raise ValueError(f"no depth kernel for placement {placement.kind!r}; use depth_host")


# ---------------------------------------------------------------------------------------------------------
# Host solvers: matching (Hopcroft-Karp) and an independent max-flow reference.

def holder_graph(placement: Placement, alive: np.ndarray, d: int, microbatches: int = 1):
    """CSR biadjacency shards x (surviving groups replicated d times), built with array operations; with
    ``microbatches = m`` every shard is m rows (its micro-batches) and d is the capacity."""
    from scipy.sparse import csr_matrix

    alive_groups = np.nonzero(alive)[0]
    col_of = -np.ones(placement.groups, dtype=np.int64)
    col_of[alive_groups] = np.arange(alive_groups.size)
    holder_cols = col_of[placement.holders]  # (N, r), -1 for failed holders
    shard, level = np.nonzero(holder_cols >= 0)
    base = holder_cols[shard, level] * d
    rows = np.repeat(shard, d)
    cols = (base[:, None] + np.arange(d)[None, :]).ravel()
    m = int(microbatches)
    if m > 1:  # row j m + i: micro-batch i of shard j
        rows = (rows[:, None] * m + np.arange(m)[None, :]).ravel()
        cols = np.repeat(cols, m)
    data = np.ones(rows.size, dtype=np.int8)
    return csr_matrix((data, (rows, cols)), shape=(placement.groups * m, max(1, alive_groups.size * d)))


def feasible_matching(placement: Placement, alive, d: int, microbatches: int = 1) -> bool:
    """Is depth ``d`` (capacity d with ``microbatches > 1``) feasible? Hopcroft–Karp (SciPy) on the
    d-replicated holder graph."""
    from scipy.sparse.csgraph import maximum_bipartite_matching

    alive = np.asarray(alive, dtype=bool)
    if d * alive.sum() < placement.groups * microbatches:
        return False
    graph = holder_graph(placement, alive, d, microbatches)
    match = maximum_bipartite_matching(graph, perm_type="column")
    return bool(np.all(match >= 0))


def depth_host(placement: Placement, alive) -> int:
    """d*(S) by matching for any placement (binary search over d, feasibility being monotone in d);
    ``WIPED_OUT`` (0) when a shard has no surviving holder."""
    alive = np.asarray(alive, dtype=bool)
    if not np.all(alive[placement.holders].any(axis=1)):
        return WIPED_OUT
    lo = max(1, -(-placement.groups // int(alive.sum()))) - 1  # infeasible (or 0)
    hi = placement.redundancy  # always feasible without a wipe-out
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if feasible_matching(placement, alive, mid):
            hi = mid
        else:
            lo = mid
    return hi


def capacity_host(placement: Placement, alive, microbatches: int = 1) -> int:
    """c*(S) in micro-batches by matching for any placement (binary search over c); ``WIPED_OUT`` (0) when a
    shard has no surviving holder. ``microbatches = 1`` is ``depth_host``."""
    m = int(microbatches)
    alive = np.asarray(alive, dtype=bool)
    if not np.all(alive[placement.holders].any(axis=1)):
        return WIPED_OUT
    lo = max(m, -(-placement.groups * m // int(alive.sum()))) - 1  # infeasible
    hi = placement.redundancy * m  # always feasible without a wipe-out
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if feasible_matching(placement, alive, mid, m):
            hi = mid
        else:
            lo = mid
    return hi


# ---------------------------------------------------------------------------------------------------------
# The same least capacity from the sorted list of down groups (what the whole-run kernel keeps per run).

DOWN_LIST_PAD = np.iinfo(np.int32).max // 4  # a free slot of a down list (above every ring position)


def least_capacity_from_downs(downs, count, n: int, r, m, exact_float: bool | None = None):
    r"""``least_capacity_stacked`` from the down groups' ring positions instead of the down set: ``downs``
    (``int32[C, K]``, ascending, free slots ``DOWN_LIST_PAD`` at the end) and ``count`` (``int32[C]``, the
    number of groups down, each run's list complete: ``count <= K``). O(K x max count) per run instead of
    O(N log(r m)); equal to ``least_capacity_stacked`` run by run (``tests/test_depth_downs.py``).

    *Why the windows between two down groups suffice.* Capacity c >= m is feasible iff (i)
    ``c (N - count) >= N m`` and (ii) every circular window of l consecutive groups (r <= l < N) with j
    down has ``c (l - j) >= m (l - r + 1)`` (the queue test's window condition, module docstring). A window
    with j <= r - 1 down asks at most m (``l - r + 1 <= l - j``), which c >= m meets. For j >= r - 1 the
    ratio ``(l - r + 1) / (l - j)`` falls as l grows with j fixed, so of the windows holding the same j down
    groups the shortest binds: the one from the first of them, p_a, to the last, p_b, stretched to r if
    shorter (a stretched window holds at least those j, and more only asks more, which the pair around all
    of them asks). So c* is the largest of the count bound and, over every pair (p_a, p_b) of down groups in
    ring order (t = 0 .. count - 1 steps apart, j = t + 1, span ``(p_b - p_a) mod N + 1``, l = max(span, r)
    < N), ``ceil(m (l - r + 1) / (l - j))``; a window with ``l = j`` (r consecutive groups down) is a
    lost shard, and so is c* > r m (then no capacity covers the ring).

    ``r`` and ``m`` may be traced; then ``exact_float`` (static) says whether ``N m < 2^24`` for every m the
    program serves (the quotients are then taken in float32, exact for such integers)."""
    k_max = downs.shape[1]
    slots = jnp.arange(k_max, dtype=jnp.int32)[None, :]
    cnt = count[:, None]
    first = slots < cnt
    alive = n - count
    bound = -(-(n * m) // jnp.maximum(alive, 1))
    # the list twice round the ring (the second lap + N), so that the down group t steps after slot i is
    # ``laps[:, i + t]`` for every run, whatever its count
    idx2 = jnp.arange(2 * k_max, dtype=jnp.int32)[None, :]
    wrap = idx2 >= cnt
    laps = (jnp.take_along_axis(downs, jnp.where(wrap, idx2 - cnt, idx2).clip(0, k_max - 1), axis=1)
            + jnp.where(wrap, n, 0))
    if exact_float is None:
        exact_float = n * m < 2 ** 24  # ceil of a float32 quotient is exact for integers below 2^24

    def pairs(t):  # every pair t steps apart in ring order: its window length and whether it counts
        other = jax.lax.dynamic_slice_in_dim(laps, t, k_max, axis=1)
        l = jnp.maximum(other - downs + 1, r)
        return l, first & (t < cnt) & (l < n)

    def pair_step(t, need):
        l, ok = pairs(t)
        room = l - (t + 1)
        top = m * (l - r + 1)
        if exact_float:
            ask = jnp.ceil(top.astype(jnp.float32) / jnp.maximum(room, 1).astype(jnp.float32)).astype(jnp.int32)
        else:
            ask = -(-top // jnp.maximum(room, 1))
        return jnp.maximum(need, jnp.max(jnp.where(ok & (room > 0), ask, 0), axis=1))

    # a shard is lost iff r consecutive groups are down: then the first and the last of them are r - 1 steps
    # apart in the list, with a window of r
    l_lost, ok_lost = pairs(jnp.minimum(r - 1, k_max - 1))
    lost = jnp.any(ok_lost & (l_lost <= r), axis=1) & (r - 1 < k_max)
    # pairs fewer than r - 1 steps apart hold j <= r - 1 down groups: they ask at most m; and where the count
    # bound is already r m, so is c* (no capacity above r m is needed without a lost shard): the loop runs
    # up to the most groups down in a run that can need it
    open_ = jnp.where(bound < r * m, count, 0)
    need = jax.lax.fori_loop(jnp.minimum(r - 1, k_max), jnp.minimum(jnp.max(open_), k_max), pair_step,
                             jnp.zeros_like(count))
    c = jnp.maximum(jnp.maximum(need, bound), m)
    return jnp.where(lost | (alive <= 0) | (c > r * m), WIPED_OUT, c).astype(jnp.int32)


def down_list_insert(downs, pos, where):
    """``downs`` with ring position ``pos`` (``int32[C]``) inserted in order where ``where`` (the largest entry
    drops off a full list: the caller marks it incomplete)."""
    k_max = downs.shape[1]
    slots = jnp.arange(k_max, dtype=jnp.int32)[None, :]
    rank = jnp.sum(downs < pos[:, None], axis=1, dtype=jnp.int32)[:, None]
    prev = jnp.concatenate([downs[:, :1], downs[:, :-1]], axis=1)
    new = jnp.where(slots < rank, downs, jnp.where(slots == rank, pos[:, None], prev))
    return jnp.where(where[:, None], new, downs)


def down_list_remove(downs, pos, where):
    """``downs`` without ring position ``pos`` where ``where`` (unchanged where it is not listed)."""
    at = jnp.sum(downs < pos[:, None], axis=1, dtype=jnp.int32)[:, None]
    slots = jnp.arange(downs.shape[1], dtype=jnp.int32)[None, :]
    nxt = jnp.concatenate([downs[:, 1:], jnp.full_like(downs[:, :1], DOWN_LIST_PAD)], axis=1)
    listed = jnp.any(downs == pos[:, None], axis=1)
    return jnp.where((where & listed)[:, None], jnp.where(slots < at, downs, nxt), downs)


def down_list_of(down, k_max: int):
    """The sorted down list (``int32[C, k_max]``) of the down sets ``down`` (``bool[C, N]``): the first
    ``k_max`` down positions of each run (complete where at most ``k_max`` are down)."""
    c, n = down.shape
    idx = jnp.cumsum(down, axis=1, dtype=jnp.int32) - 1
    idx = jnp.where(down & (idx < k_max), idx, k_max)
    out = jnp.full((c, k_max + 1), DOWN_LIST_PAD, jnp.int32)
    pos = jnp.broadcast_to(jnp.arange(n, dtype=jnp.int32)[None, :], (c, n))
    return out.at[jnp.arange(c)[:, None], idx].set(pos)[:, :k_max]
