r"""The depth and the wipe-out one failure apart, and the (failures, depth) chain built from them (SPARe,
``stacked``): what the time-to-train of ``spare`` needs beyond the marginal ``depth_cdf``.

The work an epoch commits is ``E[Y] = \sum_i \int E[1/d(u); U > c_i] du`` over the computing part of each
interval ``i`` (checkpoint completing at ``c_i``): the depth at u *jointly* with surviving to ``c_i``.
Deep states precede wipe-outs, so taking them independent (``E[1/d(u) | U > u] P(U > c_i)``) undercounts
the committed work. With exponential clocks the failure order is a uniform permutation independent of the
sojourns, so this needs ``D[k, k'] = E[1/d_k ; T > k']`` (k <= k'), the depth after k failures jointly with
surviving k' failures.

One step apart it is exact: ``A[k, c] = P(c*(S_k) <= c, T > k + 1)`` (``depth_next_survival``), a queue DP
like ``depth._depth_cdf_stacked_one``'s with a marked survivor g (the (k+1)-th failure) whose failure must
not complete a run of r failed groups. Further apart, ``depth_chain_joint`` propagates a Markov chain on
(k, level): from level l at k the next failure is a wipe-out with the exact probability
``1 - (A[k, l] - A[k, l-1]) / (F[k, l] - F[k, l-1])`` (F = ``depth_cdf``), and otherwise moves to level
l' >= l with ``P(level_{k+1} <= l' | level_k = l, T > k + 1) = F[k+1, l'] / A[k, l']`` (the same for every
l <= l'). The chain has F's marginals at every k and the exact one-step hazard given the depth; that the
depth after more failures depends on the past only through (k, level) is its one approximation (measured
against enumeration of every failure set at N = 16: ``E[Y]`` within 1e-4, tested).

The DP (``_next_survival_stacked``). Read the ring from the group after the queue's zero point as in
``depth._depth_cdf_stacked_one`` (free steps, then tail steps with a non-zero queue, then a final step into
0): the last group read is a survivor. A survivor g is *bad* when the failed runs on its two sides, a and b
groups, have ``a + b + 1 >= r``. Placed at a position before the last, g's left run is the current run
(nothing wraps: the last group read survives) and its right run is counted after it (allowance
``r - 2 - a`` more failures); placed last, its right run is the leading run of the word, kept in the state.
States before g: the current run and the leading run (open while every group so far has failed); after g:
the allowance left, or closed. Counts are normalised by ``binom(t, j)`` as in ``depth``: every weight is a
convex combination and g's choices add at most a factor N - k (so ``A = p / (N - k)``). Cost
``O(N^2 Q r^2)`` per level (Q = (r-1) m + 1 queue states), once per (N, r, m).
"""

from __future__ import annotations

import functools

import numpy as np

from ..model.placement import check_groups_redundancy
from .depth import depth_cdf, level_depths


def _next_survival_stacked(n: int, r: int, c: int, m: int = 1, kmax: int | None = None) -> np.ndarray:
    """``P(c*(S_k) <= c, S_k + g wipes out no shard)`` for k = 0..N-1 (g the next group to fail); only
    k <= ``kmax`` are computed (the rest are 0)."""
    q_n = (r - 1) * m + 1
    cols = n + 1 if kmax is None else min(n + 1, int(kmax) + 1)
    e_n = max(r - 1, 1)
    # before g: open[phase, q, rho, j] (every group so far failed, rho of them); closed[phase, q, rho, l, j]
    # (current run rho, leading run l); after g: allow[phase, q, e, j] (e more failures allowed), done[...]
    b_open = np.zeros((2, q_n, r, cols))
    b_closed = np.zeros((2, q_n, r, r, cols))
    a_allow = np.zeros((2, q_n, e_n, cols))
    a_done = np.zeros((2, q_n, cols))
    b_open[0, 0, 0, 0] = 1.0
    j = np.arange(cols, dtype=np.float64)
    drop = c - m
    rho_g, lead_g = np.meshgrid(np.arange(r), np.arange(r), indexing="ij")
    last_ok = (rho_g + lead_g <= r - 2)[None, None, :, :, None]

    def survive_q(x, out):
        """out += x after a survivor: q -> max(0, q + m - c) (axis 1)."""
        out[:, 0] += x[:, : min(drop + 1, q_n)].sum(axis=1)
        if q_n > drop + 1:
            out[:, 1: q_n - drop] += x[:, drop + 1:]

    out = np.zeros(cols)
    for t in range(1, n + 1):
        kc = min(t + 1, cols)  # after t groups at most t failures
        w_alive = (t - j[:kc]) / t
        w_fail = j[1:kc] / t
        bo, bc, aa, ad = b_open[..., :kc], b_closed[..., :kc], a_allow[..., :kc], a_done[..., :kc]
        new_open, new_closed = np.zeros_like(bo), np.zeros_like(bc)
        new_allow, new_done = np.zeros_like(aa), np.zeros_like(ad)
        # a failure: j -> j + 1, q -> q + m, runs grow, the allowance shrinks
        new_open[:, m:, 1:, 1:] = bo[:, :-m, :-1, :-1] * w_fail
        new_closed[:, m:, 1:, :, 1:] = bc[:, :-m, :-1, :, :-1] * w_fail
        if r > 2:
            new_allow[:, m:, :-1, 1:] = aa[:, :-m, 1:, :-1] * w_fail
        new_done[:, m:, 1:] = ad[:, :-m, :-1] * w_fail
        # a survivor other than g: the current run ends (an open leading run closes at l = rho)
        sc = np.zeros_like(bc[:, :, 0])
        sc += bc.sum(axis=2)
        sc += bo
        survive_q(sc * w_alive, new_closed[:, :, 0])
        survive_q((ad + aa.sum(axis=2)) * w_alive, new_done)
        # g: a survivor now, the next failure; its left run is the current run rho
        cur = bo + bc.sum(axis=3)  # [phase, q, rho, j]
        if t < n:
            ga = np.zeros_like(aa)
            for rho in range(r - 1):  # rho <= r - 2: allowance r - 2 - rho
                ga[:, :, r - 2 - rho] += cur[:, :, rho]
            survive_q(ga * w_alive, new_allow)
        else:  # g last: its right run is the leading run l (rho + l <= r - 2)
            survive_q((bc * last_ok).sum(axis=(2, 3)) * w_alive, new_done)
            out[:kc] = (new_allow[:, 0].sum(axis=1) + new_done[:, 0]).sum(axis=0)
            break
        for full, new in ((b_open, new_open), (b_closed, new_closed), (a_allow, new_allow), (a_done, new_done)):
            full[..., :kc] = _phase(new)
    k = np.arange(n)
    res = np.zeros(n)
    res[: min(n, cols)] = out[: min(n, cols)]
    return np.clip(res / (n - k), 0.0, 1.0)


def _phase(step: np.ndarray) -> np.ndarray:
    """free -> free; free or tail -> tail with a non-zero queue (axis 0 the phase, axis 1 the queue)."""
    out = np.empty_like(step)
    out[0] = step[0]
    out[1] = step[0] + step[1]
    out[1, 0] = 0.0
    return out


def depth_next_survival(groups: int, redundancy: int, microbatches: int = 1, kmax: int | None = None) -> np.ndarray:
    """``A[k, l] = P(level(S_k) <= l, T > k + 1)`` for k = 0..N (row N: 0; rows past ``kmax``: 0, not
    computed), columns as ``depth_cdf``'s."""
    n, r = check_groups_redundancy(groups, redundancy)
    return _depth_next_survival(n, r, int(microbatches), None if kmax is None else int(kmax)).copy()


@functools.lru_cache(maxsize=32)
def _depth_next_survival(n: int, r: int, m: int, kmax: int | None) -> np.ndarray:
    top = (r - 1) * m + 1
    out = np.zeros((n + 1, top + 1))
    if r == 1:
        return out
    for level in range(2, top + 1):
        out[:n, level] = _next_survival_stacked(n, r, m + level - 1, m, kmax)
    out[0, 1:] = out[0, top]  # no failure: depth 1
    return np.maximum.accumulate(out, axis=1)


def depth_chain_joint(groups: int, redundancy: int, microbatches: int = 1, kmax: int | None = None) -> np.ndarray:
    r"""``D[k, k'] = E[1/d_k ; T > k']`` for 0 <= k <= k' < kmax (0 below the diagonal) from the (k, level)
    chain of the module docstring; exact on the diagonal and one step off it. ``kmax`` (default N + 1):
    rows and columns kept (``P(T > k)`` beyond is negligible to the caller)."""
    n, r = check_groups_redundancy(groups, redundancy)
    m = int(microbatches)
    f = depth_cdf("stacked", n, r, m)
    kmax = n + 1 if kmax is None else min(int(kmax), n + 1)
    a = depth_next_survival(n, r, m, kmax)
    inv = 1.0 / level_depths(r, m)
    pf = np.diff(f, axis=1)  # [k, l-1] = P(level_k = l, T > k)
    pa = np.diff(a, axis=1)  # [k, l-1] = P(level_k = l, T > k + 1)
    levels = pf.shape[1]
    d = np.zeros((kmax, kmax))
    vec = np.zeros((kmax, levels))  # row k0: the chain's mass per level, weighted by 1/d at k0
    for k in range(kmax):
        vec[k] = pf[k] * inv
        d[: k + 1, k] = vec[: k + 1].sum(axis=1)
        if k + 1 >= kmax:
            break
        with np.errstate(invalid="ignore", divide="ignore"):
            keep = np.where(pf[k] > 0, pa[k] / pf[k], 0.0)  # P(T > k+1 | level_k = l, T > k)
            up = np.where(a[k, 1:] > 0, f[k + 1, 1:] / a[k, 1:], 1.0)  # P(level_{k+1} <= l' | ., T > k+1)
        up = np.clip(up, 0.0, 1.0)
        move = np.zeros((levels, levels))
        for li in range(levels):
            cdf = np.maximum.accumulate(up[li:])
            cdf[-1] = 1.0
            move[li, li:] = np.diff(np.concatenate([[0.0], cdf]))
        vec[: k + 1] = (vec[: k + 1] * keep) @ move
    return d
