"""Independent brute-force reference simulation of the wipe-out model.

Written in plain NumPy/Python, WITHOUT looking at the engine under test, as a
second, differently structured implementation to test it against.

Model (one epoch = the time from a restart with all groups up)
---------------------------------------------------------------
* N data-parallel groups, physical ids 0..N-1, redundancy r (1 <= r <= N).
* Each group g has its own failure clock ~ Exponential(mean group_mtbf_min[g])
  minutes (``group_mtbf_min`` is a length-N array or one scalar for all).
* Failure domains: ``domain_levels`` is a list of levels ``(size, mtbf_min)``.
  At a level of size G, domain j (j = 0..ceil(N/G)-1) holds the physical groups
  j*G .. min((j+1)*G, N)-1 (the last one may be short) and has its own clock
  ~ Exponential(mean mtbf_min).  A domain event fails, at once and as ONE
  event, every group of that domain that is still up.
* Hence group g's failure time = min(its own clock, the clock of every domain
  that contains g, at every level).
* Ring order: ``ring`` is a permutation of 0..N-1; ring position i holds the
  physical group ring[i] (default: identity, i.e. contiguous).
* Placement over ring positions:
    - "stacked": shard j (j = 0..N-1) is held by the groups at ring positions
      j, j-1, ..., j-r+1 (mod N);
    - "block" (needs r | N): shard j is held by the groups at ring positions
      b*r .. b*r+r-1 with b = j // r.
* A shard is lost once all r of its holders are down; the wipe-out is the
  first time any shard is lost.
* Job-wide failures: optional Poisson process with mean inter-event time
  ``job_mtbf_min`` (None = off); its first event ends the epoch like a
  wipe-out, but fails no group.
* The epoch ends at min(wipe-out time, first job-wide event).

Per-epoch outputs
-----------------
* ``uptime``: the epoch's end time (minutes).
* ``t_count``: number of groups whose failure time is <= the end time.  At a
  wipe-out this counts every group failed by the fatal event (e.g. all the
  still-up groups of a fatal domain event); at a job-wide end, the groups that
  failed before it.
* ``ended_by_job``: the epoch ended by the job-wide event.
* ``fatal_by_domain``: the epoch ended by a wipe-out AND the fatal event (the
  event at the wipe-out time) was a domain event, not a group's own clock.

Functions
---------
* ``interleaved_ring(n, size)``
* ``placement_holders(n, r, placement, ring)`` (helper: shard -> holder groups)
* ``simulate_epochs(...)``: event-driven Monte Carlo.
* ``single_domain_wipeout_fraction(...)``: rate-weighted fraction of domain
  events that alone, from full health, lose a shard (brute force).
* ``exact_uptime_no_domains(...)`` / ``exact_job_end_prob_no_domains(...)``:
  exact values by subset enumeration for equal group rates, no domains, tiny N.
"""

from __future__ import annotations

import itertools
import math

import numpy as np


# ---------------------------------------------------------------------------
# Ring and placement
# ---------------------------------------------------------------------------

def interleaved_ring(n, size):
    """Interleaved ring order for domains of ``size`` contiguous physical ids.

    With D = ceil(n / size), ring position i (iterating i = 0..D*size-1 and
    skipping ids >= n) holds group (i mod D)*size + (i div D).  Consecutive
    ring positions therefore fall in different size-``size`` domains.
    Returns an int64 array of length n (a permutation of 0..n-1).

    Example: n=6, size=3 -> D=2 -> [0, 3, 1, 4, 2, 5].
    """
    n = int(n)
    size = int(size)
    if n < 1 or size < 1:
        raise ValueError("n and size must be >= 1")
    d = -(-n // size)
    out = []
    for i in range(d * size):
        g = (i % d) * size + (i // d)
        if g < n:
            out.append(g)
    ring = np.asarray(out, dtype=np.int64)
    assert ring.shape == (n,) and np.array_equal(np.sort(ring), np.arange(n))
    return ring


def _check_ring(n, ring):
    if ring is None:
        return np.arange(n, dtype=np.int64)
    ring = np.asarray(ring, dtype=np.int64)
    if ring.shape != (n,) or not np.array_equal(np.sort(ring), np.arange(n)):
        raise ValueError("ring must be a permutation of 0..n-1")
    return ring


def placement_holders(n, r, placement="stacked", ring=None):
    """Return a list of N tuples: shard j -> the physical groups holding it.

    "stacked": holders of shard j are ring[(j - k) mod N] for k = 0..r-1.
    "block" (r must divide N): holders of shard j are ring[b*r + k],
    k = 0..r-1, with b = j // r.
    """
    n = int(n)
    r = int(r)
    if not 1 <= r <= n:
        raise ValueError("need 1 <= r <= n")
    ring = _check_ring(n, ring)
    shards = []
    if placement == "stacked":
        for j in range(n):
            shards.append(tuple(int(ring[(j - k) % n]) for k in range(r)))
    elif placement == "block":
        if n % r:
            raise ValueError("block placement needs r | n")
        for j in range(n):
            b = j // r
            shards.append(tuple(int(ring[b * r + k]) for k in range(r)))
    else:
        raise ValueError(f"unknown placement {placement!r}")
    return shards


def _domains(n, levels):
    """List of (level_index, domain_index, mtbf, groups tuple) for all domains."""
    doms = []
    for li, (size, mtbf) in enumerate(levels):
        size = int(size)
        if size < 1:
            raise ValueError("domain size must be >= 1")
        nd = -(-n // size)
        for j in range(nd):
            groups = tuple(range(j * size, min((j + 1) * size, n)))
            doms.append((li, j, float(mtbf), groups))
    return doms


# ---------------------------------------------------------------------------
# Event-driven Monte Carlo
# ---------------------------------------------------------------------------

def simulate_epochs(n, r, trials, rng, *, placement="stacked", ring=None,
                    group_mtbf_min=3000.0, domain_levels=(), job_mtbf_min=None):
    """Brute-force event-driven simulation of ``trials`` independent epochs.

    For each epoch: draw every clock (N group clocks ~ Exp(mean
    group_mtbf_min[g]); one clock per domain at every level ~ Exp(mean that
    level's mtbf); one job-wide time ~ Exp(mean job_mtbf_min), or +inf when
    job_mtbf_min is None).  Sort all these events by time and process them one
    at a time, keeping per shard the number of holders still up:
      * group event: if the group is still up, mark it down and decrement the
        count of each shard it holds;
      * domain event: mark down every still-up group of the domain (one
        event), decrementing the shard counts;
      * job-wide event: end the epoch (ended_by_job=True); no group fails.
    The epoch stops at the first event after which some shard has zero
    holders up (wipe-out; fatal_by_domain = that event is a domain event), or
    at the job-wide event if it comes first.  No closed-form min/max shortcut.

    Returns a dict of numpy arrays of length ``trials``:
    ``uptime`` (float64, end time in minutes), ``t_count`` (int64, groups down
    at the end, including all groups failed by the fatal event),
    ``ended_by_job`` (bool), ``fatal_by_domain`` (bool).
    """
    n = int(n)
    trials = int(trials)
    shards = placement_holders(n, r, placement, ring)
    group_shards = [[] for _ in range(n)]
    for s, hs in enumerate(shards):
        for g in hs:
            group_shards[g].append(s)

    gm = np.broadcast_to(np.asarray(group_mtbf_min, dtype=np.float64), (n,))
    if np.any(gm <= 0):
        raise ValueError("group_mtbf_min must be > 0")
    doms = _domains(n, list(domain_levels))
    nd = len(doms)

    # Event columns: 0..n-1 group clocks, n..n+nd-1 domains, n+nd job-wide.
    n_ev = n + nd + 1
    times = np.empty((trials, n_ev), dtype=np.float64)
    times[:, :n] = rng.exponential(1.0, size=(trials, n)) * gm[None, :]
    if nd:
        dm = np.array([d[2] for d in doms], dtype=np.float64)
        times[:, n:n + nd] = rng.exponential(1.0, size=(trials, nd)) * dm[None, :]
    if job_mtbf_min is None:
        times[:, n + nd] = np.inf
    else:
        times[:, n + nd] = rng.exponential(float(job_mtbf_min), size=trials)
    order = np.argsort(times, axis=1, kind="stable")

    event_groups = [(g,) for g in range(n)] + [d[3] for d in doms]
    job_col = n + nd

    uptime = np.empty(trials, dtype=np.float64)
    t_count = np.empty(trials, dtype=np.int64)
    ended_by_job = np.zeros(trials, dtype=bool)
    fatal_by_domain = np.zeros(trials, dtype=bool)

    for t in range(trials):
        up = [True] * n
        alive = [int(r)] * n  # holders still up, per shard
        n_down = 0
        row_t = times[t]
        for ev in order[t]:
            ev = int(ev)
            if ev == job_col:
                uptime[t] = row_t[ev]
                t_count[t] = n_down
                ended_by_job[t] = True
                break
            lost = False
            for g in event_groups[ev]:
                if up[g]:
                    up[g] = False
                    n_down += 1
                    for s in group_shards[g]:
                        alive[s] -= 1
                        if alive[s] == 0:
                            lost = True
            if lost:
                uptime[t] = row_t[ev]
                t_count[t] = n_down
                fatal_by_domain[t] = ev >= n
                break
        else:  # pragma: no cover - all groups eventually fail
            raise AssertionError("epoch never ended")

    return {"uptime": uptime, "t_count": t_count,
            "ended_by_job": ended_by_job, "fatal_by_domain": fatal_by_domain}


# ---------------------------------------------------------------------------
# Single-domain wipe-out fraction (brute force)
# ---------------------------------------------------------------------------

def single_domain_wipeout_fraction(n, r, levels, *, placement="stacked", ring=None):
    """Rate-weighted fraction of domain events that alone lose a shard.

    Over every domain at every level (domain j of a size-G level = physical
    groups j*G .. min((j+1)*G, N)-1), weight each by its rate 1/mtbf_min, and
    return sum(w * [the domain contains all r holders of some shard]) /
    sum(w): the probability that a domain event, hitting a fully healthy job,
    wipes it out by itself.  Returns nan when there are no domains.
    """
    n = int(n)
    shards = placement_holders(n, r, placement, ring)
    doms = _domains(n, list(levels))
    if not doms:
        return float("nan")
    num = 0.0
    den = 0.0
    for _, _, mtbf, groups in doms:
        w = 1.0 / mtbf
        gs = set(groups)
        kills = any(all(h in gs for h in hs) for hs in shards)
        den += w
        if kills:
            num += w
    return num / den


# ---------------------------------------------------------------------------
# Exact values without domains (equal group rates, tiny N)
# ---------------------------------------------------------------------------

def _survive_probs(n, r, placement, ring):
    """p[k] = P(no shard lost | a uniformly random set of k groups is down)."""
    shards = placement_holders(n, r, placement, ring)
    masks = [sum(1 << g for g in hs) for hs in shards]
    p = []
    for k in range(n + 1):
        ok = 0
        tot = 0
        for sub in itertools.combinations(range(n), k):
            m = 0
            for g in sub:
                m |= 1 << g
            tot += 1
            if not any((m & sm) == sm for sm in masks):
                ok += 1
        p.append(ok / tot)
    return p


def _exact_terms(n, r, group_mtbf_min, job_mtbf_min, placement, ring):
    n = int(n)
    if n > 12:
        raise ValueError("exact enumeration is for n <= 12")
    lam = 1.0 / float(group_mtbf_min)
    mu = 0.0 if job_mtbf_min is None else 1.0 / float(job_mtbf_min)
    p = _survive_probs(n, r, placement, ring)
    # reach[k] = P(state "k groups down, no wipe-out, no job event yet")
    terms = []
    no_job = 1.0
    for k in range(n):
        rate = (n - k) * lam + mu
        terms.append((p[k] * no_job, rate))
        no_job *= (n - k) * lam / rate
    return terms, mu


def exact_uptime_no_domains(n, r, group_mtbf_min, job_mtbf_min=None,
                            placement="stacked", ring=None):
    """Exact E[uptime] for equal group rates, no domains, N <= 12.

    With lambda = 1/group_mtbf_min and mu = 1/job_mtbf_min (0 if off), group
    failures come in a uniformly random order; in state "k groups down, no
    wipe-out yet" the next group failure comes at rate (N-k)*lambda and the
    job-wide event at rate mu.  Hence

      E[uptime] = sum_{k=0}^{N-1} P_k * prod_{i<k} (N-i)lambda/((N-i)lambda+mu)
                                  / ((N-k)lambda + mu),

    with P_k = P(no shard lost with a random k-subset down), counted over all
    C(N, k) subsets.  (The ring does not matter without domains; it is
    accepted only for symmetry.)
    """
    terms, _ = _exact_terms(n, r, group_mtbf_min, job_mtbf_min, placement, ring)
    return float(sum(reach / rate for reach, rate in terms))


def exact_job_end_prob_no_domains(n, r, group_mtbf_min, job_mtbf_min,
                                  placement="stacked", ring=None):
    """Exact P(ended_by_job) under the same assumptions as
    ``exact_uptime_no_domains``: sum_k reach_k * mu / ((N-k)lambda + mu)."""
    terms, mu = _exact_terms(n, r, group_mtbf_min, job_mtbf_min, placement, ring)
    return float(sum(reach * mu / rate for reach, rate in terms))


# ---------------------------------------------------------------------------
# Self-checks
# ---------------------------------------------------------------------------

def _mean_se(x):
    x = np.asarray(x, dtype=np.float64)
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(len(x)))


def _check(label, sim, exact, tol_se=4.0):
    m, se = sim
    z = (m - exact) / se if se > 0 else (0.0 if m == exact else math.inf)
    ok = abs(z) <= tol_se
    print(f"  {label:<58s} sim={m:12.4f} +- {se:9.4f}  exact={exact:12.4f}  "
          f"z={z:+6.2f}  {'OK' if ok else 'FAIL'}")
    return ok


def _self_check():
    import time
    t0 = time.time()
    all_ok = True

    print("interleaved_ring:")
    for n, size, want in [(6, 3, [0, 3, 1, 4, 2, 5]),
                          (7, 3, [0, 3, 6, 1, 4, 2, 5]),
                          (12, 3, [0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11]),
                          (5, 1, [0, 1, 2, 3, 4]),
                          (4, 8, [0, 1, 2, 3])]:
        got = interleaved_ring(n, size).tolist()
        ok = got == want
        all_ok &= ok
        print(f"  n={n} size={size}: {got} {'OK' if ok else 'FAIL want ' + str(want)}")

    print("single_domain_wipeout_fraction:")
    il = interleaved_ring(12, 3)
    cases = [
        ("N=12 r=3 [(3,2e4)] contiguous stacked", (12, 3, [(3, 2e4)]), {}, 1.0),
        ("N=12 r=3 [(3,2e4)] interleaved stacked", (12, 3, [(3, 2e4)]),
         {"ring": il}, 0.0),
        ("N=12 r=2 [(3,2e4)] contiguous stacked", (12, 2, [(3, 2e4)]), {}, 1.0),
        ("N=12 r=3 [(2,1e4),(4,3e4)] contiguous", (12, 3, [(2, 1e4), (4, 3e4)]),
         {}, (3 / 3e4) / (6 / 1e4 + 3 / 3e4)),
        ("N=12 r=3 [(3,2e4)] block contiguous", (12, 3, [(3, 2e4)]),
         {"placement": "block"}, 1.0),
        ("N=12 r=4 [(3,2e4)] block contiguous", (12, 4, [(3, 2e4)]),
         {"placement": "block"}, 0.0),
        ("N=10 r=2 [(4,1e4)] contiguous (short last domain 8..9)",
         (10, 2, [(4, 1e4)]), {}, 1.0),
        ("N=10 r=3 [(4,1e4)] contiguous (short last domain fails none)",
         (10, 3, [(4, 1e4)]), {}, 2 / 3),
    ]
    for label, args, kw, want in cases:
        got = single_domain_wipeout_fraction(*args, **kw)
        ok = abs(got - want) < 1e-12
        all_ok &= ok
        print(f"  {label:<58s} {got:.6f} (want {want:.6f}) {'OK' if ok else 'FAIL'}")

    print("simulate_epochs vs exact (no domains), 4 SE:")
    rng = np.random.default_rng(12345)
    T = 20000
    exact_cases = [
        (4, 1, 3000.0, None, "stacked"),
        (6, 2, 3000.0, None, "stacked"),
        (8, 3, 3000.0, None, "stacked"),
        (6, 2, 3000.0, None, "block"),
        (8, 2, 1000.0, 500.0, "stacked"),
        (9, 3, 3000.0, 2000.0, "block"),
        (5, 5, 3000.0, 4000.0, "stacked"),
    ]
    for n, r, gm, jm, pl in exact_cases:
        res = simulate_epochs(n, r, T, rng, placement=pl, group_mtbf_min=gm,
                              job_mtbf_min=jm,
                              ring=rng.permutation(n))  # ring irrelevant here
        ex = exact_uptime_no_domains(n, r, gm, jm, placement=pl)
        all_ok &= _check(f"N={n} r={r} {pl} mtbf={gm:g} job={jm} E[uptime]",
                         _mean_se(res["uptime"]), ex)
        if jm is not None:
            pj = exact_job_end_prob_no_domains(n, r, gm, jm, placement=pl)
            all_ok &= _check("    P(ended_by_job)",
                             _mean_se(res["ended_by_job"]), pj)
        else:
            ok = not res["ended_by_job"].any()
            all_ok &= ok
        ok = not res["fatal_by_domain"].any()
        all_ok &= ok
    # Analytic sanity values: r=1 -> first of N failures, mean mtbf/N;
    # r=N stacked -> last of N failures, mean mtbf * H_N.
    print("  analytic: N=4 r=1 exact =", exact_uptime_no_domains(4, 1, 3000.0),
          "(mtbf/N = 750)")
    print("  analytic: N=5 r=5 exact =", exact_uptime_no_domains(5, 5, 3000.0),
          "(mtbf*H_5 =", 3000.0 * sum(1 / k for k in range(1, 6)), ")")

    print("r=1 closed forms (the first event is fatal):")
    # Heterogeneous group rates: uptime = min of clocks, mean 1/sum(rates).
    gmv = np.array([1000.0, 2000.0, 3000.0, 4000.0])
    res = simulate_epochs(4, 1, T, rng, group_mtbf_min=gmv)
    all_ok &= _check("N=4 r=1 mtbf=[1000..4000] E[uptime]",
                     _mean_se(res["uptime"]), 1.0 / np.sum(1.0 / gmv))
    ok = bool(np.all(res["t_count"] == 1))
    all_ok &= ok
    print(f"    t_count == 1 always: {'OK' if ok else 'FAIL'}")
    # Domains incl. a short last one: N=10, levels [(4,5000)] -> domains
    # {0..3},{4..7},{8,9}; total rate R = 10/gm + 3/dm; P(domain fatal) =
    # (3/dm)/R; E[t_count] = (10/gm * 1 + (4+4+2)/dm) / R.
    gm, dm = 3000.0, 5000.0
    rate = 10 / gm + 3 / dm
    res = simulate_epochs(10, 1, T, rng, group_mtbf_min=gm,
                          domain_levels=[(4, dm)], job_mtbf_min=None)
    all_ok &= _check("N=10 r=1 levels=[(4,5000)] E[uptime]",
                     _mean_se(res["uptime"]), 1.0 / rate)
    all_ok &= _check("    P(fatal_by_domain)", _mean_se(res["fatal_by_domain"]),
                     (3 / dm) / rate)
    all_ok &= _check("    E[t_count]", _mean_se(res["t_count"]),
                     (10 / gm + 10 / dm) / rate)

    print("whole-job domain == job-wide process in uptime (level size >= N):")
    # A single domain covering all N groups ends every epoch it hits with a
    # wipe-out, so E[uptime] and P(fatal_by_domain) equal the no-domain exact
    # values with job_mtbf_min = the domain's mtbf; t_count is then N.
    n, r, gm, dm = 8, 3, 3000.0, 2000.0
    res = simulate_epochs(n, r, T, rng, group_mtbf_min=gm,
                          domain_levels=[(n, dm)])
    all_ok &= _check(f"N={n} r={r} domain ({n},{dm:g}) E[uptime]",
                     _mean_se(res["uptime"]), exact_uptime_no_domains(n, r, gm, dm))
    all_ok &= _check("    P(fatal_by_domain)", _mean_se(res["fatal_by_domain"]),
                     exact_job_end_prob_no_domains(n, r, gm, dm))
    fd = res["fatal_by_domain"]
    ok = bool(np.all(res["t_count"][fd] == n)) and not res["ended_by_job"].any()
    all_ok &= ok
    print(f"    t_count == N on every domain-fatal epoch: {'OK' if ok else 'FAIL'}")

    print("domains, N=12 r=3 levels=[(3, 20000)], group mtbf 3000, T=%d:" % T)
    lv = [(3, 20000.0)]
    out = {}
    for name, rg in [("contiguous", None), ("interleaved", interleaved_ring(12, 3))]:
        res = simulate_epochs(12, 3, T, rng, ring=rg, group_mtbf_min=3000.0,
                              domain_levels=lv)
        m, se = _mean_se(res["uptime"])
        fdom = res["fatal_by_domain"].mean()
        tc = res["t_count"].mean()
        sdf = single_domain_wipeout_fraction(12, 3, lv, ring=rg)
        out[name] = (m, se)
        print(f"  {name:<12s} E[uptime]={m:9.2f} +- {se:6.2f}  "
              f"P(fatal_by_domain)={fdom:.4f}  E[t_count]={tc:.3f}  "
              f"single-domain wipe fraction={sdf:.3f}")
    (mc, sc), (mi, si) = out["contiguous"], out["interleaved"]
    z = (mi - mc) / math.hypot(sc, si)
    ok = z > 10
    all_ok &= ok
    print(f"  interleaved - contiguous = {mi - mc:.2f} min (z={z:.1f}) "
          f"{'OK' if ok else 'FAIL'}")

    print("timing: %.1f s" % (time.time() - t0))
    print("ALL OK" if all_ok else "SOME CHECKS FAILED")
    return all_ok


if __name__ == "__main__":
    import sys
    sys.exit(0 if _self_check() else 1)
