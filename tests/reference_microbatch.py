"""Independent reference for micro-batch depth and the compute overhead (SPEC §1, §2, §10.6).

Plain NumPy (plus networkx for the max-flow brute force), no JAX.  Written WITHOUT looking at
the engine's depth/overhead code, as a second, differently structured implementation to test it
against: the engine tests feasibility with a queue walked round the ring; this module works from
Hall's condition on arcs of shards (proved below) and checks it against max-flow.

Model
-----
* N data-parallel groups on a ring, redundancy r.
  - ``stacked``: group g holds shards g, g+1, ..., g+r-1 (mod N), so shard j is held by the
    groups j, j-1, ..., j-r+1 (mod N).
  - ``block`` (r | N): block b = groups b*r .. b*r+r-1, all holding shards b*r .. b*r+r-1.
* Groups fail one at a time in a uniformly random order (i.i.d. continuous failure times).
  S_k = the set of the first k failed groups.  A wipe-out happens at the first failure after which
  some shard has no alive holder; T = the number of failures up to and including that one.
* Micro-batches: each shard is m micro-batches; any alive holder of a shard may compute any of
  them.  For a failed set S without a lost shard, c*(S) = the least integer c such that all N*m
  micro-batches can be assigned to alive holders with at most c per alive group;
  depth(S) = c*(S) / m.  (No failures: c* = m, depth 1.)
* Exponential failures with rate lambda per group: the time spent with k groups down has mean
  s_k = 1 / ((N - k) lambda).  Using these expected sojourns (lambda cancels; we set lambda = 1),
      U = sum_{k=0}^{T-1} s_k                  (epoch uptime)
      W = sum_{k=0}^{T-1} s_k / depth(S_k)     (useful work)
      Omega = E[U] / E[W],   time-averaged depth = E[sum_{k<T} s_k depth(S_k)] / E[U].
  (Replacing the sampled sojourns by their conditional means given the failure order does not
  change E[U], E[W] or E[U*depth]: the sojourns are independent of the order.)

Hall's condition on arcs (stacked)
----------------------------------
The assignment is a flow problem: source -> shard j (capacity m) -> alive holder g of j
(capacity infinite) -> sink (capacity c).  By max-flow/min-cut (equivalently Hall's theorem for
the graph in which shard j is m copies and group g is c copies; a worst Hall set contains all
copies of a shard or none) c is feasible iff for every set A of shards

    m |A| <= c * alive(N(A)),        N(A) = the groups holding some shard of A.      (H)

For ``stacked`` the holders of an arc of L consecutive shards a..a+L-1 are the arc of L+r-1
consecutive groups a-r+1..a+L-1.  Claim: (H) for all A holds iff it holds for
  (i)  A = all shards:  c * alive >= N m, and
  (ii) every arc of L = 1..N-r consecutive shards (whose holder arc, of length L+r-1 <= N-1,
       is a proper arc of the ring):  c * alive(holder arc) >= m L.
Proof.  Write A as the union of its maximal arcs (components on the ring).  If two components
have holder arcs that overlap or touch (are adjacent on the ring), add the shards of the gap
between them: the holder arc of the merged shard arc a1..b2 is a1-r+1..b2, which is exactly the
union of the two holder arcs (they overlap or touch, so the union is an arc), so N(A) is
unchanged while |A| grows and (H) only gets harder.  Repeat until either the holder arcs of
the components are pairwise disjoint and non-adjacent, in which case N(A) is their disjoint
union and (H) for A is the sum of (H) for its components (each an arc, type (ii) or, if its
holder arc is the whole ring, implied by (i)), or some holder set covers the whole ring, in
which case N(A) = all groups and (H) follows from (i) since |A| <= N.  An arc with
L > N - r shards has all N groups as holders, so it is implied by (i) too.  Hence

    c*(S) = max( ceil(N m / alive),  max over arcs [a, a+L-1], 1 <= L <= N-r,
                 of ceil(m L / alive(a-r+1 .. a+L-1)) ),

and S has a lost shard iff some holder arc of a single shard (L = 1) has no alive group.
``cmin_hall`` evaluates this with prefix sums over all N*(N-r) arcs (O(N^2), vectorised) and is
checked against max-flow on every failure subset of small rings in the self-check test.

A linear-time form of the same test (used by the simulation)
------------------------------------------------------------
Unroll the ring: a[x] = alive(x mod N) for x = 0..2N-1, P[x] = a[0] + ... + a[x-1], and for a
fixed c put F(x) = m x - c P(x).  A holder arc [u, v) (groups u..v-1, length H = v-u) belongs
to the shard arc of L = H - r + 1 shards, and its condition m L <= c (P(v) - P(u)) reads

    F(v) - F(u) <= m (r - 1).                                                   (D)

For H <= r - 1 (L <= 0) (D) always holds (F(v)-F(u) <= m H).  For r <= H <= N-1 (D) is exactly
(ii) for one arc, and every arc of (ii) appears with some u in [0, N).  For H >= N the unrolled
window counts some groups twice; (D) is then implied by (i) and (ii): if H <= N+r-2 then
L <= N-1 and m L <= m N <= c alive <= c (P(v)-P(u)); if H >= N+r-1, split [u, v) into
[u, u+N) (exactly the whole ring) and [u+N, v) (a shorter window, by induction on H):
m L = m N + m (H - N - r + 1) <= c alive + c (P(v)-P(u+N)).  Therefore

    c feasible  <=>  c * alive >= N m  and  max_{0 <= u < v <= 2N} (F(v) - F(u)) <= m (r - 1),

one running minimum over 2N+1 numbers (``_feasible_unrolled``).  The simulation uses it, and the
self-check test (and ``crosscheck_paths``, used at N = 600) compares it with the O(N^2) arc
maximum of ``cmin_hall``, which in turn is compared with max-flow.

Monotonicity: if S is a subset of S', any assignment for S' is one for S, so c*(S) <= c*(S').
The simulation keeps c from one k to the next and only raises it while infeasible.

Block placement: the blocks are independent complete bipartite graphs (r shards x r groups), so
c* = max over blocks of ceil(r m / survivors of the block) (Hall with A = the block's shards is
the binding set; any sub-set of a block's shards has the same holders).

Exact small-N overhead
----------------------
T > k iff S_k has no lost shard (losing a shard is monotone in S), and S_k is a uniformly random
k-subset.  Hence for any f,
    E[ sum_{k<T} s_k f(S_k) ] = sum_k s_k * (1 / C(N,k)) * sum_{|S| = k, S has no lost shard} f(S),
which ``overhead_exact_small`` evaluates by enumerating all 2^N subsets (N <= 12), with f = 1
(uptime), 1/depth (work) and depth.  ``overhead_exact_orders`` checks this identity by
enumerating all N! failure orders (N <= 8).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import platform
import sys
import time

import numpy as np


# ---------------------------------------------------------------------------
# Placements
# ---------------------------------------------------------------------------

def holders_table(N, r, placement="stacked"):
    """Array (N, r): row j = the groups holding shard j."""
    N, r = int(N), int(r)
    if not 1 <= r <= N:
        raise ValueError("need 1 <= r <= N")
    j = np.arange(N)[:, None]
    k = np.arange(r)[None, :]
    if placement == "stacked":
        return (j - k) % N
    if placement == "block":
        if N % r:
            raise ValueError("block placement needs r | N")
        return (j // r) * r + k
    raise ValueError(f"unknown placement {placement!r}")


def _alive_array(N, alive):
    a = np.asarray(alive)
    if a.dtype == bool:
        if a.shape != (N,):
            raise ValueError("alive mask must have length N")
        return a.astype(np.int64)
    # a list of alive group ids
    out = np.zeros(N, dtype=np.int64)
    out[a.astype(np.int64)] = 1
    return out


# ---------------------------------------------------------------------------
# c* by max-flow (brute force, any placement)
# ---------------------------------------------------------------------------

def _maxflow_value(holders, alive, m, c):
    import networkx as nx
    n_shards = holders.shape[0]
    G = nx.DiGraph()
    for j in range(n_shards):
        G.add_edge("s", ("j", j), capacity=m)
        for g in holders[j]:
            if alive[g]:
                G.add_edge(("j", j), ("g", int(g)))  # no capacity attribute = infinite
    for g in np.flatnonzero(alive):
        G.add_edge(("g", int(g)), "t", capacity=c)
    if "t" not in G:
        return 0
    return nx.maximum_flow_value(G, "s", "t")


def cmin_bruteforce(holders, alive, m):
    """c* by max-flow: the least c such that all micro-batches fit, at most c per alive group.

    ``holders``: (n_shards, r) table of the groups holding each shard; ``alive``: boolean mask over
    groups.  Returns None if some shard has no alive holder (wipe-out).  Tries c = ceil(total /
    alive), +1, ... and stops at the first c whose max-flow carries every micro-batch.  For tiny N.
    """
    holders = np.asarray(holders)
    alive = np.asarray(alive, dtype=bool)
    m = int(m)
    if not alive[holders].any(axis=1).all():
        return None
    total = holders.shape[0] * m
    n_alive = int(alive.sum())
    c = -(-total // n_alive)
    while _maxflow_value(holders, alive, m, c) < total:
        c += 1
    return c


# ---------------------------------------------------------------------------
# c* from Hall's condition on arcs (stacked) and per block (block)
# ---------------------------------------------------------------------------

def cmin_hall(N, r, alive, m):
    """c* for ``stacked`` from Hall's condition on circular arcs of shards (see module docstring).

    c* = max( ceil(N m / A), max_{a, 1 <= L <= N-r} ceil(m L / alive(a-r+1 .. a+L-1)) ).
    O(N^2) memory and time, vectorised.  ``alive``: boolean mask (or list of alive ids).
    Returns None if some shard has no alive holder.
    """
    N, r, m = int(N), int(r), int(m)
    a = _alive_array(N, alive)
    A = int(a.sum())
    if A == 0:
        return None
    # Prefix sums over the ring unrolled twice; holder arc of shard arc [s, s+L-1] starts at
    # u = s - r + 1, i.e. u ranges over all 0..N-1 as s does.
    P = np.concatenate(([0], np.cumsum(np.concatenate((a, a)))))
    c = -(-N * m // A)
    if N - r >= 1:
        u = np.arange(N)[:, None]
        L = np.arange(1, N - r + 1)[None, :]
        cnt = P[u + L + r - 1] - P[u]                   # alive holders of each arc, (N, N-r)
        if (cnt[:, 0] == 0).any():                      # a single shard with no alive holder
            return None
        # every longer arc contains a single-shard holder arc, so cnt > 0 everywhere now
        need = -(-(m * L) // cnt)
        c = max(c, int(need.max()))
    else:
        # r >= N: every shard is held by every group; only the global condition remains
        pass
    return c


def cmin_block(N, r, alive, m):
    """c* for ``block``: max over blocks of ceil(r m / survivors); None if a block is wiped out."""
    N, r, m = int(N), int(r), int(m)
    if N % r:
        raise ValueError("block placement needs r | N")
    a = _alive_array(N, alive)
    surv = a.reshape(N // r, r).sum(axis=1)
    if (surv == 0).any():
        return None
    return int((-(-(r * m) // surv)).max())


def _feasible_unrolled(a2, A, N, r, m, c):
    """Linear-time Hall test (module docstring): a2 = alive mask unrolled twice (length 2N)."""
    if c * A < N * m:
        return False
    P = np.empty(2 * N + 1, dtype=np.int64)
    P[0] = 0
    np.cumsum(a2, out=P[1:])
    F = m * np.arange(2 * N + 1, dtype=np.int64) - c * P
    rise = F[1:] - np.minimum.accumulate(F[:-1])
    return int(rise.max()) <= m * (r - 1)


def cmin_unrolled(N, r, alive, m):
    """c* for ``stacked`` via the linear-time test, raising c from ceil(N m / alive)."""
    N, r, m = int(N), int(r), int(m)
    a = _alive_array(N, alive)
    A = int(a.sum())
    if A == 0:
        return None
    if r < N:
        # wipe-out iff r cyclically consecutive groups are all down
        down = np.concatenate((1 - a, 1 - a[: r - 1]))
        run = np.convolve(down, np.ones(r, dtype=np.int64), mode="valid")
        if (run == r).any():
            return None
    a2 = np.concatenate((a, a))
    c = -(-N * m // A)
    while not _feasible_unrolled(a2, A, N, r, m, c):
        c += 1
    return c


def cmin(N, r, alive, m, placement="stacked"):
    if placement == "stacked":
        return cmin_hall(N, r, alive, m)
    if placement == "block":
        return cmin_block(N, r, alive, m)
    raise ValueError(f"unknown placement {placement!r}")


# ---------------------------------------------------------------------------
# Wipe-out index of a failure order
# ---------------------------------------------------------------------------

def wipeout_T(N, r, order, placement="stacked"):
    """T for one failure order: min over shards of the max failure rank among its holders."""
    order = np.asarray(order)
    rank = np.empty(N, dtype=np.int64)
    rank[order] = np.arange(1, N + 1)
    H = holders_table(N, r, placement)
    return int(rank[H].max(axis=1).min())


def stacked_survival_exact(N, r):
    """Exact P(T > k), k = 0..N, for ``stacked`` (exact integer counts, then one division).

    T > k iff the k-subset S_k has no r cyclically consecutive failed groups.  Counting such
    labelled circular strings with k ones (failed) and N-k >= 1 zeros: pairs (string, one marked
    zero) correspond one-to-one to (position of the marked zero, the run lengths of ones after
    each of the N-k zeros going round), so
        count(k) * (N - k) = N * #{compositions of k into N-k parts in 0..r-1},
    and the compositions are counted by inclusion-exclusion over parts >= r:
        sum_i (-1)^i C(n, i) C(k - i r + n - 1, n - 1),  n = N - k.
    Then P(T > k) = count(k) / C(N, k); P(T > N) = 0 (for r <= N the all-failed set is a
    wipe-out).  Used for exact E[T] = sum_k P(T > k) and E[U] = sum_k P(T > k) / (N - k).
    """
    N, r = int(N), int(r)
    out = []
    for k in range(N):
        n = N - k
        comp = 0
        for i in range(0, min(n, k // r) + 1):
            comp += (-1) ** i * math.comb(n, i) * math.comb(k - i * r + n - 1, n - 1)
        count, rem = divmod(N * comp, n)
        assert rem == 0
        out.append(count / math.comb(N, k))        # int / int: correctly rounded
    out.append(0.0)
    return np.array(out)


def stacked_uptime_T_exact(N, r):
    """Exact (E[U] with lambda = 1, E[T]) for ``stacked`` from ``stacked_survival_exact``."""
    p = stacked_survival_exact(N, r)
    s = 1.0 / (N - np.arange(N, dtype=np.float64))
    return float((p[:N] * s).sum()), float(p.sum())


# ---------------------------------------------------------------------------
# Monte Carlo
# ---------------------------------------------------------------------------

def _ratio_se(x, y):
    """Ratio mean(x)/mean(y) with its delta-method standard error (i.i.d. trials)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = len(x)
    R = x.mean() / y.mean()
    if n < 2:
        return float(R), float("nan")
    resid = x - R * y
    se = resid.std(ddof=1) / (math.sqrt(n) * y.mean())
    return float(R), float(se)


def _mean_se(x):
    x = np.asarray(x, dtype=np.float64)
    if len(x) < 2:
        return float(x.mean()), float("nan")
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(len(x)))


def _trial_path_stacked(N, r, m, order, T):
    """c*(S_k) for k = 0..T-1 along one failure order (incremental, linear-time Hall test)."""
    a2 = np.ones(2 * N, dtype=np.int64)
    cs = np.empty(T, dtype=np.int64)
    c = m
    cs[0] = c
    for k in range(1, T):
        g = order[k - 1]
        a2[g] = 0
        a2[g + N] = 0
        A = N - k
        while not _feasible_unrolled(a2, A, N, r, m, c):
            c += 1
        cs[k] = c
    return cs


def _trial_path_block(N, r, m, order, T):
    surv = np.full(N // r, r, dtype=np.int64)
    cs = np.empty(T, dtype=np.int64)
    c = m
    cs[0] = c
    for k in range(1, T):
        b = order[k - 1] // r
        surv[b] -= 1
        c = max(c, -(-(r * m) // int(surv[b])))
        cs[k] = c
    return cs


def trial_path(N, r, m, order, placement="stacked"):
    """(T, array of c*(S_k) for k = 0..T-1) for one failure order."""
    T = wipeout_T(N, r, order, placement)
    if placement == "stacked":
        return T, _trial_path_stacked(N, r, m, np.asarray(order), T)
    if placement == "block":
        return T, _trial_path_block(N, r, m, np.asarray(order), T)
    raise ValueError(f"unknown placement {placement!r}")


def crosscheck_paths(N, r, m, trials, seed, placement="stacked"):
    """Recompute c*(S_k) from scratch with the O(N^2) arc formula (``cmin_hall``/``cmin_block``)
    for every k of ``trials`` failure orders drawn like ``simulate_overhead_reference`` (same seed
    -> the same first orders) and compare with the incremental path.  Returns the number of
    states compared; raises AssertionError on any difference or on a misplaced wipe-out."""
    rng = np.random.default_rng(seed)
    n_states = 0
    for _ in range(trials):
        order = rng.permutation(N)
        T, cs = trial_path(N, r, m, order, placement)
        alive = np.ones(N, dtype=bool)
        for k in range(T):
            if k:
                alive[order[k - 1]] = False
            c = cmin(N, r, alive, m, placement)
            assert c == cs[k], (k, c, cs[k])
            n_states += 1
        alive[order[T - 1]] = False
        assert cmin(N, r, alive, m, placement) is None
    return n_states


def simulate_overhead_reference(N, r, m, trials, seed, placement="stacked"):
    """Monte Carlo of one epoch per trial with expected sojourns s_k = 1/(N-k) (lambda = 1).

    Each trial draws a uniformly random failure order (``numpy.random.default_rng(seed)``, one
    ``permutation(N)`` per trial), finds T, and walks k = 0..T-1 keeping c*(S_k) (non-decreasing:
    the current c is kept and raised while infeasible).  Per trial U = sum s_k,
    W = sum s_k m / c_k, V = sum s_k c_k / m.

    Returns a dict: overhead, overhead_stderr (ratio estimator E[U]/E[W], delta method),
    time_avg_depth, time_avg_depth_stderr (E[V]/E[U]), mean_uptime (+_stderr, in units of
    1/lambda), mean_work (+_stderr), mean_T (+_stderr), final_depth_hist (depth of S_{T-1}, the
    last state before the wipe-out -> count; keys are depth as "c/m" strings and as floats in
    final_depth_values), and the per-trial arrays U, W, V, T, c_final.
    """
    N, r, m, trials = int(N), int(r), int(m), int(trials)
    rng = np.random.default_rng(seed)
    inv = 1.0 / (N - np.arange(N, dtype=np.float64))      # s_k, k = 0..N-1
    U = np.empty(trials)
    W = np.empty(trials)
    V = np.empty(trials)
    Ts = np.empty(trials, dtype=np.int64)
    cfin = np.empty(trials, dtype=np.int64)
    for t in range(trials):
        order = rng.permutation(N)
        T, cs = trial_path(N, r, m, order, placement)
        s = inv[:T]
        U[t] = s.sum()
        W[t] = (s * (m / cs)).sum()
        V[t] = (s * (cs / m)).sum()
        Ts[t] = T
        cfin[t] = cs[-1]
    om, om_se = _ratio_se(U, W)
    td, td_se = _ratio_se(V, U)
    vals, counts = np.unique(cfin, return_counts=True)
    return {
        "N": N, "r": r, "m": m, "trials": trials, "seed": seed, "placement": placement,
        "overhead": om, "overhead_stderr": om_se,
        "time_avg_depth": td, "time_avg_depth_stderr": td_se,
        "mean_uptime": _mean_se(U)[0], "mean_uptime_stderr": _mean_se(U)[1],
        "mean_work": _mean_se(W)[0], "mean_work_stderr": _mean_se(W)[1],
        "mean_T": _mean_se(Ts)[0], "mean_T_stderr": _mean_se(Ts)[1],
        "final_depth_hist": {f"{int(v)}/{m}": int(n) for v, n in zip(vals, counts)},
        "final_depth_values": [float(v) / m for v in vals],
        "final_depth_counts": [int(n) for n in counts],
        "U": U, "W": W, "V": V, "T": Ts, "c_final": cfin,
    }


# ---------------------------------------------------------------------------
# Exact small-N overhead
# ---------------------------------------------------------------------------

def overhead_exact_small(N, r, m, placement="stacked", cmin_fn=None):
    """Exact Omega, time-averaged depth, E[U], E[W], E[T] for N <= 12 by subset enumeration.

    E[sum_{k<T} s_k f(S_k)] = sum_k s_k mean_{|S|=k} f(S) 1{S has no lost shard} (module
    docstring), s_k = 1/(N-k); E[T] = sum_k P(T > k).  ``cmin_fn(N, r, alive, m)`` defaults to
    ``cmin_hall`` (stacked) / ``cmin_block`` (block).
    """
    N, r, m = int(N), int(r), int(m)
    if N > 12:
        raise ValueError("exact enumeration is for N <= 12")
    if cmin_fn is None:
        cmin_fn = cmin_hall if placement == "stacked" else cmin_block
    ok = np.zeros(N + 1)          # number of k-subsets with no lost shard
    w = np.zeros(N + 1)           # sum over them of 1/depth
    v = np.zeros(N + 1)           # sum over them of depth
    for mask in range(1 << N):
        alive = np.array([not (mask >> g) & 1 for g in range(N)], dtype=bool)
        k = N - int(alive.sum())
        c = cmin_fn(N, r, alive, m) if alive.any() else None
        if c is None:
            continue
        ok[k] += 1
        w[k] += m / c
        v[k] += c / m
    binom = np.array([math.comb(N, k) for k in range(N + 1)], dtype=np.float64)
    s = np.array([1.0 / (N - k) if k < N else 0.0 for k in range(N + 1)])
    EU = float((s * ok / binom).sum())
    EW = float((s * w / binom).sum())
    EV = float((s * v / binom).sum())
    ET = float((ok / binom).sum())
    return {"overhead": EU / EW, "time_avg_depth": EV / EU, "mean_uptime": EU,
            "mean_work": EW, "mean_T": ET, "survival": ok / binom}


def overhead_exact_orders(N, r, m, placement="stacked", cmin_fn=None):
    """The same quantities by enumerating all N! failure orders (N <= 8): checks the subset
    identity used by ``overhead_exact_small``."""
    N, r, m = int(N), int(r), int(m)
    if N > 8:
        raise ValueError("order enumeration is for N <= 8")
    if cmin_fn is None:
        cmin_fn = cmin_hall if placement == "stacked" else cmin_block
    cache = {}

    def cstar(mask):
        if mask not in cache:
            alive = np.array([not (mask >> g) & 1 for g in range(N)], dtype=bool)
            cache[mask] = cmin_fn(N, r, alive, m) if alive.any() else None
        return cache[mask]

    sU = sW = sV = sT = 0.0
    n = 0
    for order in itertools.permutations(range(N)):
        mask = 0
        k = 0
        while True:
            c = cstar(mask)
            if c is None:
                break
            s = 1.0 / (N - k)
            sU += s
            sW += s * m / c
            sV += s * c / m
            mask |= 1 << order[k]
            k += 1
        sT += k          # k = T: S_T is the first set with a lost shard
        n += 1
    return {"overhead": sU / sW, "time_avg_depth": sV / sU, "mean_uptime": sU / n,
            "mean_work": sW / n, "mean_T": sT / n}


# ---------------------------------------------------------------------------
# CLI: acceptance reference numbers
# ---------------------------------------------------------------------------

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "data", "microbatch_reference.json")


def _case_key(N, r, m, placement):
    return f"N{N}_r{r}_m{m}_{placement}"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--N", type=int, required=True)
    p.add_argument("--r", type=int, required=True)
    p.add_argument("--m", type=int, nargs="+", required=True)
    p.add_argument("--trials", type=int, required=True)
    p.add_argument("--seed", type=int, required=True,
                   help="seed of case m is seed + m (numpy.random.default_rng)")
    p.add_argument("--placement", default="stacked", choices=["stacked", "block"])
    p.add_argument("--crosscheck", type=int, default=0,
                   help="also recompute c* from scratch with the O(N^2) arc formula for the first "
                        "CROSSCHECK trials of each case (not stored)")
    p.add_argument("--out", default=DEFAULT_OUT, help="JSON file; cases are merged into it")
    args = p.parse_args(argv)

    data = {"cases": {}}
    if args.out and os.path.exists(args.out):
        with open(args.out) as f:
            data = json.load(f)
    data["description"] = (
        "Independent reference (tests/reference_microbatch.py) for the micro-batch overhead, SPEC "
        "§1/§10.6: uniform random failure order, expected sojourns 1/((N-k) lambda), "
        "Omega = E[U]/E[W] (delta-method standard error over trials), time-averaged depth = "
        "E[sum s_k depth_k]/E[U], mean_T = mean number of failures up to and including the "
        "wipe-out.  final_depth_* = depth c*/m of the last state before the wipe-out.")
    for m in args.m:
        seed = args.seed + m
        t0 = time.time()
        cpu0 = time.process_time()
        out = simulate_overhead_reference(args.N, args.r, m, args.trials, seed, args.placement)
        wall = time.time() - t0
        cpu = time.process_time() - cpu0
        cmd = (f"python tests/reference_microbatch.py --N {args.N} --r {args.r} --m {m} "
               f"--trials {args.trials} --seed {args.seed} --placement {args.placement}")
        case = {k: v for k, v in out.items() if not isinstance(v, np.ndarray)}
        case.update({
            "rng": "numpy.random.default_rng(seed), one permutation(N) per trial",
            "seed_note": f"seed = --seed {args.seed} + m",
            "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
            "python": platform.python_version(), "numpy": np.__version__,
            "command": cmd,
        })
        if args.placement == "stacked":
            eu, et = stacked_uptime_T_exact(args.N, args.r)
            case["exact_mean_uptime"] = eu
            case["exact_mean_T"] = et
            case["exact_note"] = ("exact E[U] and E[T] (independent of m) from "
                                  "stacked_survival_exact: a check of the sampled failure orders")
        if args.crosscheck:
            n_states = crosscheck_paths(args.N, args.r, m, args.crosscheck, seed, args.placement)
            case["crosscheck"] = (f"first {args.crosscheck} trials: c* of all {n_states} states "
                                  f"recomputed from scratch by the O(N^2) arc formula: identical")
        data["cases"][_case_key(args.N, args.r, m, args.placement)] = case
        print(f"N={args.N} r={args.r} m={m} trials={args.trials}: Omega={out['overhead']:.6f} "
              f"+- {out['overhead_stderr']:.6f}  depth={out['time_avg_depth']:.6f} +- "
              f"{out['time_avg_depth_stderr']:.6f}  E[T]={out['mean_T']:.3f}  "
              f"({wall:.1f} s wall, {cpu:.1f} s cpu)", flush=True)
        if args.out:
            data["cases"] = dict(sorted(data["cases"].items()))
            with open(args.out, "w") as f:
                json.dump(data, f, indent=2, sort_keys=True)
                f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
