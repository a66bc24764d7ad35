r"""Ring-order search (docs/scenarios.md#ring-order-search): the order of the physical groups around the stacked ring
that maximises E[epoch uptime] under a ``Scenario`` (failure domains, lemons, job-wide failures).

The stacked placement's shards are held by r consecutive *ring positions*; failure domains and lemons are
properties of *physical* groups. Which physical groups share a stack therefore decides how often one domain
event or a pair of lemons takes a whole stack out. ``search_ring(cluster, r, placement, search, sampling)``:

1. evaluates the standard orders (``contiguous``, ``interleaved`` when there are domains, a few seeded random
   orders) on one fixed sample of failure times (common random numbers: the times are drawn per *physical*
   group once, and a ring order only permutes the columns), and starts from the best;
2. improves it by local search: each step proposes ``search.proposals`` random swaps of two ring positions,
   evaluates them all at once (vectorised over candidates), and keeps the best if it raises the sample mean
   of the epoch uptime ``min(w, J)``, ``w = min_i max_{l<r} t_{ring[i+l]}``;
3. re-evaluates every order on ``sampling.count`` fresh epochs (seed + 1), all orders on the same epochs, so
   the reported gain is not the search's own selection bias. (The evaluator's uptime equals the engine's
   ``wipeout.simulate_wipeout`` with the order as a ring file, in distribution: tested, together with the
   independent reference simulator.)

Only the ring order is searched (the stack table stays the stacked one over the ring); block placements are
replica sets of consecutive ring positions and are searched the same way.
"""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np

from ..model.cluster import Cluster, Sampling
from ..model.failures import FailureModel
from ..model.placement import check_groups_redundancy
from ..results import Result


@dataclasses.dataclass(frozen=True)
class RingSearch:
    """How the ring order is searched: ``search_trials`` fresh epochs per local-search step, ``steps`` steps,
    ``proposals`` random swaps tried per step, ``random_orders`` seeded random orders among the starting
    points. (The final evaluation of every order, its epochs and seed, is the search's ``Sampling``.)"""

    search_trials: int = 2000
    steps: int = 200
    proposals: int = 8
    random_orders: int = 3


@dataclasses.dataclass
class PlaceResult(Result):
    groups: int
    redundancy: int
    placement: str
    orders: list  # [{name, uptime_min, uptime_stderr_min, search_uptime_min}, ...] best first
    best_name: str
    best_ring: tuple
    steps: int
    accepted: int
    search_epochs: int  # epochs per search step
    epochs: int  # epochs per final evaluation of each order
    seed: int
    scenario: dict


def _window_end(keys, job_key, kind: str, r: int):
    """``min(w, J)`` per trial for keys in ring order (uint32[..., C, N])."""
    if kind == "stacked":
        m = keys
        for l in range(1, r):
            m = jnp.maximum(m, jnp.roll(keys, -l, axis=-1))
    else:  # block: replica sets of r consecutive positions
        shape = keys.shape[:-1] + (keys.shape[-1] // r, r)
        m = keys.reshape(shape).max(axis=-1)
    return jnp.minimum(m.min(axis=-1), job_key)


def _evaluator(words, trials: int, n: int, r: int, kind: str, model: FailureModel, scenario):
    """A jitted ``f(rings int32[K, N], batch) -> uptime float32[K, trials]`` (minutes): every candidate on
    the same ``trials`` epochs (trial ids ``batch * trials + i``), failure times drawn per physical group."""
    from ..model.prng import scenario_failure_times

    physical = dataclasses.replace(scenario, ring="contiguous")

    @jax.jit
    def f(rings, batch):
        ids = (batch * trials + jnp.arange(trials)).astype(jnp.uint32)
        keys, _, job_key, to_time = scenario_failure_times(words, ids, n, model, physical)
        return jax.vmap(lambda ring: to_time(_window_end(keys[:, ring], job_key, kind, r)))(rings)

    return f


ACCEPT_Z = 2.0  # a proposed swap is kept when it gains this many paired standard errors on a fresh batch


def random_ring(groups: int, seed: int) -> np.ndarray:
    return np.random.default_rng([0x72696E67, int(seed)]).permutation(groups).astype(np.int32)


def search_ring(cluster: Cluster, redundancy: int, placement: str = "stacked", search: RingSearch = RingSearch(),
                sampling: Sampling = Sampling()) -> PlaceResult:
    """Search a ring order for ``cluster`` (its groups, failure law and scenario; see the module docstring);
    returns every order evaluated on ``sampling.count`` epochs of a fresh seed (``sampling.seed + 1``), best
    first. ``sampling.progress``: a bar over the search steps; the search runs on the default device in
    batches of ``search.search_trials`` epochs (no chunks, devices or resumable directory)."""
    from ..kernels.driver import as_uint32_key_words
    from ..kernels.progress import Progress
    from ..model.placement import make_placement

    if cluster.repair is not None:
        raise ValueError("the ring search has no repair law (failed groups wait for the next restart)")
    model, scenario = cluster.model, cluster.scenario
    search_trials, steps, proposals = search.search_trials, search.steps, search.proposals
    eval_trials, random_orders, seed = sampling.count, search.random_orders, sampling.seed
    n, r = check_groups_redundancy(cluster.groups, redundancy)
    if placement not in ("stacked", "block"):
        raise ValueError(f"placement must be stacked or block for the ring search, got {placement!r}")
    make_placement(placement, n, r)  # only to validate r | N for block
    scenario.check(n)
    for name, value, lo in (("search_trials", search_trials, 2), ("steps", steps, 0), ("proposals", proposals, 1),
                            ("eval_trials", eval_trials, 2), ("random_orders", random_orders, 0)):
        if isinstance(value, bool) or int(value) != value or value < lo:
            raise ValueError(f"{name} must be an integer >= {lo}, got {value!r}")
    if search_trials * n * (proposals + 1) > 2e9:
        raise ValueError(f"search_trials x N x (proposals + 1) = {search_trials * n * (proposals + 1):.3g} keys "
                         "per step is too large (limit 2e9); lower `search_trials` or `proposals`")
    f = _evaluator(as_uint32_key_words(seed), int(search_trials), n, r, placement, model, scenario)

    starts = {"contiguous": np.arange(n, dtype=np.int32)}
    if scenario.domains:
        starts["interleaved"] = dataclasses.replace(scenario, ring="interleaved").ring_order(n).astype(np.int32)
    if not isinstance(scenario.ring, str):
        starts["given"] = np.asarray(scenario.ring, np.int32)
    for i in range(int(random_orders)):
        starts[f"random-{i}"] = random_ring(n, seed + i)
    names = list(starts)
    scores = np.asarray(f(jnp.asarray(np.stack([starts[k] for k in names])), 0), np.float64).mean(axis=1)
    search_score = dict(zip(names, scores.tolist()))
    current = starts[names[int(np.argmax(scores))]].copy()
    if n < 2:
        steps = 0  # one group: no swap to propose
    rng = np.random.default_rng([0x73776170, int(seed)])
    accepted = 0
    bar = Progress(int(steps), f"ring search N={n} r={r}", enabled=sampling.progress, unit="step")
    for step in range(int(steps)):
        # a fresh batch of epochs each step (no overfitting to one sample); candidates against the current
        # order on the same epochs (paired), a swap kept only when its gain is 2 paired standard errors
        cand = np.repeat(current[None, :], proposals + 1, axis=0)
        i = rng.integers(0, n, proposals)
        j = (i + rng.integers(1, n, proposals)) % n
        rows = np.arange(1, proposals + 1)
        cand[rows, i], cand[rows, j] = current[j], current[i]
        vals = np.asarray(f(jnp.asarray(cand), step + 1), np.float64)
        diff = vals[1:] - vals[:1]
        z = diff.mean(axis=1) / np.maximum(diff.std(axis=1, ddof=1) / math.sqrt(diff.shape[1]), 1e-30)
        k = int(np.argmax(z))
        if z[k] > ACCEPT_Z:
            current = cand[k + 1]
            accepted += 1
        bar.update(1)
    bar.close()
    search_score["searched"] = float(np.asarray(f(jnp.asarray(current[None, :]), 0), np.float64).mean())
    starts["searched"] = current

    # every order on fresh epochs (another seed), all orders on the same epochs, in batches
    names = list(starts)
    rings = jnp.asarray(np.stack([starts[k] for k in names]))
    batch = min(int(search_trials), int(eval_trials))
    g = _evaluator(as_uint32_key_words(seed + 1), batch, n, r, placement, model, scenario)
    total, total2, done = np.zeros(len(names)), np.zeros(len(names)), 0
    for b in range(-(-int(eval_trials) // batch)):
        vals = np.asarray(g(rings, b), np.float64)[:, : int(eval_trials) - done]
        total += vals.sum(axis=1)
        total2 += (vals ** 2).sum(axis=1)
        done += vals.shape[1]
    mean = total / done
    se = np.sqrt(np.maximum(total2 / done - mean ** 2, 0.0) * done / (done - 1) / done)
    orders = [{"name": k, "uptime_min": float(mean[i]), "uptime_stderr_min": float(se[i]),
               "search_uptime_min": search_score[k]} for i, k in enumerate(names)]
    orders.sort(key=lambda o: -o["uptime_min"])
    best = orders[0]["name"]
    return PlaceResult(n, r, placement, orders, best, tuple(int(g) for g in starts[best]), int(steps), accepted,
                       int(search_trials), int(eval_trials), int(seed), scenario.describe())
