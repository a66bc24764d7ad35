"""Independent reference for the repair model (SPEC §10.5): plain NumPy/Python, no JAX.

Written WITHOUT looking at the engine under test, as a second, differently
structured implementation to test it against.  Ring order, placements and
failure domains follow ``reference_scenario.py`` (whose ``placement_holders``
is reused, so both references agree on who holds what).

Model ("repair without a global restart"), times in minutes
-----------------------------------------------------------
* One epoch starts at t = 0 with all N groups up.
* Each UP group g fails after an exponential time with mean
  ``group_mtbf_min[g]`` (scalar or length-N array); the clock is fresh every
  time the group comes back up (a group that is down has no clock running).
* A failed group is down for a repair time D drawn from the repair law, then
  up again (stack restored) while the others keep running:
    - "fixed":     exactly D = repair_time_min;
    - "exp":       exponential with mean repair_time_min;
    - "lognormal": exp(mu + sigma Z), Z ~ N(0,1), sigma = repair_sigma,
                   mu = ln(repair_time_min) - sigma^2/2  (so the mean is
                   repair_time_min).
  Every repair is an independent draw.
* Finite spare pool (``spares`` = S, None = unlimited = plain repair above):
  the pool starts with S free spares.  When a group fails, its broken hardware
  goes to repair and comes back into the pool exactly ``hardware_repair_min``
  after the failure.  The failed group needs a spare: if one is free it takes
  it at once and rejoins D later (a repair-law draw, taken when the spare is
  taken); otherwise it waits in a FIFO queue, and each spare returned to the
  pool goes at once to the head of the queue, which rejoins D after taking it.
  Several groups failing at the same instant (one domain event) join the queue
  in increasing physical id.
* Placement over ring positions (ring position i holds physical group
  ring[i], default identity): "stacked": shard j held by ring positions
  j, j-1, ..., j-r+1 (mod N); "block" (r | N): shard j held by ring positions
  b*r .. b*r+r-1, b = j // r.
* Failure domains: ``domain_levels`` = list of (size, mtbf_min); at a level of
  size G, domain k holds physical groups k*G .. min((k+1)*G, N)-1 (the last
  may be short).  Each domain has a Poisson clock of rate 1/mtbf for the whole
  epoch (whether its groups are up or not); an event downs, as ONE event,
  every group of the domain that is currently up, each starting its own
  repair (spare request).  Groups already down are unaffected.
* Job-wide failures: optional Poisson process with mean ``job_mtbf_min``;
  its first event ends the epoch and fails nobody.
* The epoch ends at the wipe-out, the first instant at which all r holders of
  some shard are down at once (necessarily at a failure event: the event that
  completes the down set), or at the first job-wide event, whichever comes
  first.  ``max_time_min`` (optional) stops an epoch still running at that
  time and marks it censored.
* Events at exactly the same time (possible only between fixed-time events:
  fixed repairs, hardware returns) are processed in the order: hardware
  return, rejoin, group failure, domain event; a group is up at its rejoin
  instant.  Ties between a continuous-time failure and anything else have
  probability zero.

Per-epoch outputs of ``simulate_repair_epochs``
-----------------------------------------------
* ``uptime``: the epoch's end time;
* ``failures``: number of group failures in the epoch, counting the fatal
  event's failures and each group downed by a domain event separately (a
  domain event that finds all its groups down counts 0); at a job-wide or
  censored end, the failures so far;
* ``ended_by_job``: ended by the job-wide event;
* ``censored``: stopped at ``max_time_min`` (uptime = max_time_min).

Other functions
---------------
* ``exact_repair_small``: exact E[uptime] and E[failures] for N <= 10 with
  exponential repair and unlimited spares (domains and job-wide failures
  supported) from the continuous-time Markov chain over down-sets.
* ``first_order_repair``: the first-order stationary wipe-out rate (for
  orientation only) and a first-order start-from-all-up correction.
"""

from __future__ import annotations

import heapq
import math
from collections import deque

import numpy as np

from reference_scenario import interleaved_ring, placement_holders  # noqa: F401

# Event kinds, in the order they are processed at equal times.
_HW_RETURN = 0
_REJOIN = 1
_FAIL = 2
_DOMAIN = 3

REPAIR_LAWS = ("fixed", "exp", "lognormal")


def domain_groups(n, domain_levels):
    """List of (mtbf_min, tuple of physical groups) for every domain of every level."""
    doms = []
    for size, mtbf in domain_levels:
        size = int(size)
        mtbf = float(mtbf)
        if size < 1 or not mtbf > 0:
            raise ValueError("domain levels need size >= 1 and mtbf > 0")
        for k in range(-(-n // size)):
            doms.append((mtbf, tuple(range(k * size, min((k + 1) * size, n)))))
    return doms


class _Stream:
    """Buffered standard exponential / standard normal draws from one numpy Generator.

    Pure bookkeeping for speed (one numpy call per 2**14 draws instead of one per
    draw); the values are i.i.d. Exp(1) and N(0, 1).
    """

    _BLOCK = 1 << 14

    def __init__(self, rng):
        self._rng = rng
        self._e = []
        self._ei = 0
        self._z = []
        self._zi = 0

    def exp(self):
        if self._ei == len(self._e):
            self._e = self._rng.standard_exponential(self._BLOCK).tolist()
            self._ei = 0
        v = self._e[self._ei]
        self._ei += 1
        return v

    def normal(self):
        if self._zi == len(self._z):
            self._z = self._rng.standard_normal(self._BLOCK).tolist()
            self._zi = 0
        v = self._z[self._zi]
        self._zi += 1
        return v


def _repair_sampler(stream, law, mean, sigma):
    mean = float(mean)
    if not mean >= 0:
        raise ValueError("repair_time_min must be >= 0")
    if law == "fixed":
        return lambda: mean
    if law == "exp":
        return lambda: mean * stream.exp()
    if law == "lognormal":
        sigma = float(sigma)
        if not sigma >= 0 or not mean > 0:
            raise ValueError("lognormal repair needs mean > 0 and sigma >= 0")
        mu = math.log(mean) - 0.5 * sigma * sigma
        return lambda: math.exp(mu + sigma * stream.normal())
    raise ValueError(f"unknown repair law {law!r}; use one of {REPAIR_LAWS}")


def simulate_repair_epochs(N, r, epochs, seed, group_mtbf_min=3000.0,
                           repair_time_min=30.0, repair_law="fixed",
                           repair_sigma=1.0, placement="stacked", ring=None,
                           domain_levels=(), job_mtbf_min=None, spares=None,
                           hardware_repair_min=None, max_time_min=None):
    """Event-driven Monte Carlo of ``epochs`` independent epochs of the repair model.

    One priority queue (heap) of pending events per epoch: each up group's next
    own failure, each down group's rejoin, each domain's next event, and (with a
    spare pool) each hardware return.  A group's pending own failure is
    invalidated (by a per-group token) when a domain event downs it first.  Per
    shard the number of holders currently down is kept; a failure that brings
    some shard's count to r is the wipe-out.  ``seed`` seeds one
    ``numpy.random.default_rng`` for the whole call (epochs are independent).

    Returns a dict of numpy arrays of length ``epochs``: ``uptime`` (float64,
    minutes), ``failures`` (int64), ``ended_by_job`` (bool), ``censored`` (bool).
    """
    n = int(N)
    r = int(r)
    epochs = int(epochs)
    shards = placement_holders(n, r, placement, ring)
    group_shards = [[] for _ in range(n)]
    for s, holders in enumerate(shards):
        for g in holders:
            group_shards[g].append(s)
    gm = np.broadcast_to(np.asarray(group_mtbf_min, dtype=np.float64), (n,))
    if np.any(~(gm > 0)):
        raise ValueError("group_mtbf_min must be > 0")
    gm = gm.tolist()
    doms = domain_groups(n, domain_levels)
    if job_mtbf_min is not None and not float(job_mtbf_min) > 0:
        raise ValueError("job_mtbf_min must be > 0 or None")
    if spares is not None:
        spares = int(spares)
        if spares < 0:
            raise ValueError("spares must be >= 0 or None")
        if hardware_repair_min is None or not float(hardware_repair_min) >= 0:
            raise ValueError("a finite spare pool needs hardware_repair_min >= 0")
        hw = float(hardware_repair_min)
    t_max = math.inf if max_time_min is None else float(max_time_min)

    rng = np.random.default_rng(seed)
    stream = _Stream(rng)
    draw_repair = _repair_sampler(stream, repair_law, repair_time_min, repair_sigma)
    E = stream.exp

    uptime = np.empty(epochs, dtype=np.float64)
    failures = np.zeros(epochs, dtype=np.int64)
    ended_by_job = np.zeros(epochs, dtype=bool)
    censored = np.zeros(epochs, dtype=bool)

    for ep in range(epochs):
        up = [True] * n
        token = [0] * n          # a pending _FAIL event is valid iff its token matches
        n_down = [0] * n         # per shard: holders currently down
        heap = [(gm[g] * E(), _FAIL, g, 0) for g in range(n)]
        heap += [(doms[d][0] * E(), _DOMAIN, d, 0) for d in range(len(doms))]
        heapq.heapify(heap)
        t_job = math.inf if job_mtbf_min is None else float(job_mtbf_min) * E()
        t_end = min(t_job, t_max)
        free = spares
        queue = deque()
        nfail = 0

        def down(g, t):
            """Group g (up) fails at t: returns True if this loses a shard."""
            up[g] = False
            token[g] += 1
            lost = False
            for s in group_shards[g]:
                n_down[s] += 1
                if n_down[s] == r:
                    lost = True
            return lost

        def start_repair(g, t):
            nonlocal free
            if spares is None:
                heapq.heappush(heap, (t + draw_repair(), _REJOIN, g, 0))
                return
            heapq.heappush(heap, (t + hw, _HW_RETURN, g, 0))
            if free > 0:
                free -= 1
                heapq.heappush(heap, (t + draw_repair(), _REJOIN, g, 0))
            else:
                queue.append(g)

        while True:
            t, kind, i, tok = heap[0]
            if t >= t_end:
                # The job-wide event (or the censoring time) comes first.
                if t_job <= t_max:
                    uptime[ep] = t_job
                    ended_by_job[ep] = True
                else:
                    uptime[ep] = t_max
                    censored[ep] = True
                break
            heapq.heappop(heap)
            if kind == _FAIL:
                if tok != token[i]:
                    continue  # stale: the group was downed by a domain event
                nfail += 1
                if down(i, t):
                    uptime[ep] = t
                    break
                start_repair(i, t)
            elif kind == _REJOIN:
                up[i] = True
                for s in group_shards[i]:
                    n_down[s] -= 1
                token[i] += 1
                heapq.heappush(heap, (t + gm[i] * E(), _FAIL, i, token[i]))
            elif kind == _HW_RETURN:
                free += 1
                if queue:
                    g = queue.popleft()
                    free -= 1
                    heapq.heappush(heap, (t + draw_repair(), _REJOIN, g, 0))
            else:  # _DOMAIN
                mtbf, groups = doms[i]
                heapq.heappush(heap, (t + mtbf * E(), _DOMAIN, i, 0))
                hit = [g for g in groups if up[g]]
                lost = False
                for g in hit:
                    nfail += 1
                    lost = down(g, t) or lost
                if lost:
                    uptime[ep] = t
                    break
                for g in hit:
                    start_repair(g, t)
        failures[ep] = nfail

    return {"uptime": uptime, "failures": failures,
            "ended_by_job": ended_by_job, "censored": censored}


# ---------------------------------------------------------------------------
# Exact small-N solver: continuous-time Markov chain over down-sets
# ---------------------------------------------------------------------------

def exact_repair_small(N, r, group_mtbf_min, repair_mean_min, placement="stacked",
                       ring=None, domain_levels=(), job_mtbf_min=None):
    """Exact E[uptime] and E[failures] to the end of the epoch, N <= 10.

    Exponential repair with mean ``repair_mean_min``, unlimited spares.  State =
    the bitmask S of down groups; S is absorbing (wipe-out) when S contains all
    holders of some shard.  From a transient S:
      * each up g fails at rate 1/group_mtbf_min[g]  -> S | {g}   (1 failure);
      * each down g rejoins at rate 1/repair_mean_min -> S \\ {g};
      * each domain d with d not inside S fires at rate 1/mtbf_d -> S | d
        (|d \\ S| failures; a domain inside S is a self-loop and is ignored);
      * the job-wide event at rate 1/job_mtbf_min -> end (0 failures).
    With q(S) the total rate out of S, first-step analysis gives, over the
    transient states,
      q(S) T(S) - sum_{S' transient} rate(S->S') T(S') = 1,
      q(S) F(S) - sum_{S' transient} rate(S->S') F(S') = sum_{S'} rate(S->S') f(S->S'),
    with f the number of failures of the transition (absorbing targets
    included).  Solved with a sparse LU; the answers are T(0), F(0).
    Returns {"uptime_min": T(0), "failures": F(0)}.
    """
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla

    n = int(N)
    if n > 10:
        raise ValueError("exact_repair_small is for N <= 10")
    shards = placement_holders(n, int(r), placement, ring)
    masks = sorted({sum(1 << g for g in hs) for hs in shards})
    lam = 1.0 / np.broadcast_to(np.asarray(group_mtbf_min, dtype=np.float64), (n,))
    mu = 1.0 / float(repair_mean_min)
    nu = 0.0 if job_mtbf_min is None else 1.0 / float(job_mtbf_min)
    doms = [(1.0 / m, sum(1 << g for g in gs)) for m, gs in domain_groups(n, domain_levels)]

    n_states = 1 << n
    absorbing = np.array([any((S & m) == m for m in masks) for S in range(n_states)])
    trans = np.flatnonzero(~absorbing)
    index = -np.ones(n_states, dtype=np.int64)
    index[trans] = np.arange(len(trans))

    rows, cols, vals = [], [], []
    b_time = np.ones(len(trans))
    b_fail = np.zeros(len(trans))
    for k, S in enumerate(trans.tolist()):
        out = []  # (target, rate, failures)
        for g in range(n):
            if S >> g & 1:
                out.append((S & ~(1 << g), mu, 0))
            else:
                out.append((S | 1 << g, float(lam[g]), 1))
        for rate, dm in doms:
            if dm & ~S:
                out.append((S | dm, rate, bin(dm & ~S).count("1")))
        q = nu + sum(rate for _, rate, _ in out)
        rows.append(k)
        cols.append(k)
        vals.append(q)
        for target, rate, f in out:
            b_fail[k] += rate * f
            if not absorbing[target]:
                rows.append(k)
                cols.append(int(index[target]))
                vals.append(-rate)
    A = sp.csc_matrix((vals, (rows, cols)), shape=(len(trans), len(trans)))
    lu = spla.splu(A)
    T = lu.solve(b_time)
    F = lu.solve(b_fail)
    return {"uptime_min": float(T[index[0]]), "failures": float(F[index[0]])}


# ---------------------------------------------------------------------------
# First-order formulas (orientation only)
# ---------------------------------------------------------------------------

def first_order_repair(N, r, group_mtbf_min, repair_mean_min, placement="stacked",
                       repair_law="fixed"):
    """First-order stationary wipe-out rate; for orientation, not for exact tests.

    p = D/(mtbf + D) is the stationary probability that a group is down.  A
    wipe-out needs one failure (rate lambda(1-p) per group) while the other r-1
    holders of one of its shards are down (prob ~ p^(r-1)); under `stacked` a
    group sits in r windows of r consecutive ring positions, under `block` in
    one block, so
        rate ~ N r lambda (1-p) p^(r-1)   (stacked),
        rate ~ N   lambda (1-p) p^(r-1)   (block).
    Start from all-up: P(down at t) climbs from 0 to p, so the hazard
    ~ rate * (p(t)/p)^(r-1) misses, to first order (lambda D small),
    shift = int_0^inf [1 - (p(t)/p)^(r-1)] dt of exposure:
        fixed repair: p(t) ~ p t/D for t < D  ->  shift = D (1 - 1/r);
        exp repair:   p(t) = p (1 - e^{-(lambda+mu) t})  ->  shift = H_{r-1}/(lambda+mu)
    (H_k the harmonic number; other laws: not given, nan), and
    E[uptime] ~ 1/rate + shift when rate * shift is small.
    Returns {"p", "rate_per_min", "mean_uptime_min" (= 1/rate), "start_shift_min"}.
    """
    lam = 1.0 / float(group_mtbf_min)
    D = float(repair_mean_min)
    p = D / (float(group_mtbf_min) + D)
    mult = int(r) if placement == "stacked" else 1
    rate = int(N) * mult * lam * (1.0 - p) * p ** (int(r) - 1)
    if repair_law == "fixed":
        shift = D * (1.0 - 1.0 / int(r))
    elif repair_law == "exp":
        shift = sum(1.0 / k for k in range(1, int(r))) / (lam + 1.0 / D)
    else:
        shift = float("nan")
    return {"p": p, "rate_per_min": rate, "mean_uptime_min": 1.0 / rate,
            "start_shift_min": shift}


def mean_se(x):
    """Sample mean and its standard error."""
    x = np.asarray(x, dtype=np.float64)
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(len(x)))
