r"""Time-to-train Monte Carlo: epoch pools (i.i.d. epochs), kept-age chains, and training runs assembled
from them (see the package docstring of ``spare_jax.ttt``)."""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .. import theory
from ..model.cluster import Cluster, Sampling
from ..model.failures import FailureModel
from ..model.placement import check_groups_redundancy
from ..model.prng import JOB_STREAM, KEPT_CHAIN_STREAM, KEPT_EPOCH_STREAM
from ..results import Report
from .config import Policy, Training, check_ages, scheme_placement
from .epochs import (  # noqa: F401  (kept importable from here)
    EpochPool, apply_restart_depth, epoch_ends, pool_committed, pool_depths as _level_depths)


def sample_epochs(cluster: Cluster, scheme: str, redundancy: int, sampling: Sampling, ages: str = "kept",
                  chains: int | None = None, burn_in: int | None = None) -> EpochPool:
    """Sample ``sampling.count`` epochs (seed ``sampling.seed``; ``sampling.progress``: a bar) of a scheme at
    redundancy r on ``cluster`` with the JAX kernels. The cluster gives the groups, the failure law and, from
    its scenario, the job-wide failures and the micro-batches (docs/microbatches.md#how-it-works), both i.i.d.
    epochs only; a
    scenario with domains, a ring order or uneven groups (``pool.sample_scenario_epochs``) or a repair law
    (``pool.sample_repair_epochs``) is refused.

    Exponential failures, or ``ages="renewed"``: i.i.d. epochs (every group restored as new at
    each restart; for exponential failures this is also the kept-ages model, by memorylessness, and the
    numbers are those of earlier versions exactly).

    Non-exponential failures with ``ages="kept"`` (the default; see ``AGES``): ``chains`` independent chains
    (default 64) of ``ceil(sampling.count / chains)`` epochs each, after ``burn_in`` discarded epochs per chain
    (default: ``kept_burn_in``, a cluster that has been in service with ages near their stationary law;
    0 = a run on brand-new hardware), by ``sample_kept_chains``.

    Job-wide failures (i.i.d. epochs only): job-wide interruptions end an epoch at ``min(U, J)``.
    """
    ages = check_ages(ages)
    if cluster.repair is not None or cluster.scenario.needs_kernel:
        raise ValueError("sample_epochs samples no repair, failure domains, ring order or uneven groups "
                         "(pool.sample_repair_epochs and pool.sample_scenario_epochs do)")
    groups, model, scenario = cluster.groups, cluster.model, cluster.scenario
    epochs, seed, progress = sampling.count, sampling.seed, sampling.progress
    job_rate, microbatches = scenario.job_rate_per_min(groups, model.group_mtbf_min), scenario.microbatches
    if model.distribution == "exponential" or ages == "renewed":
        return sample_epochs_iid(cluster, scheme, redundancy, sampling)
    if microbatches != 1:
        raise ValueError("the epoch pool has no micro-batches with kept ages (time_to_train answers that combination with whole "
                         "training runs, ttt.runs); use ages='renewed' here")
    if job_rate:
        raise ValueError("the epoch pool has no job-wide failures with kept ages (time_to_train answers that combination "
                         "with whole training runs, ttt.runs); use ages='renewed' here")
    chains = 64 if chains is None else int(chains)
    if chains < 1:
        raise ValueError(f"chains must be >= 1, got {chains}")
    return sample_kept_chains(cluster, scheme, redundancy, Sampling(chains, seed, progress=progress),
                              -(-int(epochs) // chains), burn_in)




def sample_epochs_iid(cluster: Cluster, scheme: str, redundancy: int, sampling: Sampling) -> EpochPool:
    """Sample ``sampling.count`` i.i.d. epochs (seed ``sampling.seed``; ``sampling.progress``: a bar) of a
    scheme at redundancy r on ``cluster`` with the JAX kernels (renewed ages). The cluster gives the groups,
    the failure law and, from its scenario, the job-wide failures and the micro-batches; its other scenario
    parts and its repair law are not read (``sample_epochs`` refuses them). With job-wide failures each epoch
    also ends at the first job-wide interruption (stream ``JOB_STREAM``), its depth breakpoints cut there.
    Micro-batches m > 1 (``spare``): breakpoints per capacity level, ``EpochPool.depths``."""
    from ..kernels.driver import Execution, as_uint32_key_words, run_chunked
    from ..model.prng import exponential_from_bits, times_from_bits, trial_bits
    from ..kernels.overhead import depth_thresholds
    from ..model.placement import make_placement
    from ..kernels.wipeout import wipeout_from_bits
    from ..model.prng import WIPEOUT_STREAM

    model, scenario, epochs, progress = cluster.model, cluster.scenario, sampling.count, sampling.progress
    n, r = check_groups_redundancy(cluster.groups, redundancy)
    kind, r = scheme_placement(scheme, n, r)
    pl = make_placement(kind, n, r)
    words = as_uint32_key_words(sampling.seed)
    job_rate = float(scenario.job_rate_per_min(cluster.groups, model.group_mtbf_min))
    m = int(scenario.microbatches) if scheme == "spare" and r > 1 else 1

    def kernel(_, ids):  # a new closure per call: compiled per call (run_chunked keeps none without a key)
        bits = trial_bits(words, ids, n, stream=WIPEOUT_STREAM)
        t_count, w = wipeout_from_bits(bits, pl)
        uptime = times_from_bits(w, model)
        if scheme == "spare" and r > 1:
            k = depth_thresholds(bits, t_count, pl, m)
            times = times_from_bits(jnp.sort(bits, axis=1), model)
            times = jnp.concatenate([jnp.zeros((times.shape[0], 1), times.dtype), times], axis=1)
            b = jnp.take_along_axis(times, k, axis=1)
        else:
            # depth r (rep) or 1 (none) for the whole epoch: all breakpoints but the last at 0
            b = jnp.concatenate([jnp.zeros((uptime.shape[0], r), jnp.float32), uptime[:, None]], axis=1)
        if job_rate > 0:
            job = exponential_from_bits(trial_bits(words, ids, 1, stream=JOB_STREAM)[:, 0]) * jnp.float32(1 / job_rate)
            uptime = jnp.minimum(uptime, job)
            b = jnp.minimum(b, uptime[:, None])
        return uptime, b

    ups, bps = [], []

    def consume(index, host, saved=None):
        ups.append(np.asarray(host[0], np.float64))
        bps.append(np.asarray(host[1], np.float64))
        return {}

    run_chunked(kernel, epochs, consume,
                Execution(n * max(r, 2), desc=f"epochs {scheme} N={n} r={r}", progress=progress, bytes_per_item=8))
    return EpochPool(scheme, n, r, np.concatenate(ups), np.concatenate(bps), depths=_level_depths(r, m))


# --- kept ages: epochs as a Markov chain in the age vector ------------------------------------------------

KEPT_BURN_IN_MTBFS = 10.0  # default burn-in: this many group MTBFs of uptime per chain (sample_kept_chains)
_TINY = float(np.finfo(np.float32).tiny)


def residual_times(bits, ages, model: FailureModel):
    r"""Residual lifetimes (minutes, float32 > 0) of groups of age ``ages`` from uniform ``bits``.

    Conditional on surviving to age a, the residual lifetime t has cumulative hazard
    ``Lambda(a + t) - Lambda(a) = E`` with ``E ~ Exp(1)`` (``E = -log(1 - u)``). Weibull
    (``Lambda(x) = (x/s)^k``): ``t = s ((a/s)^k + E)^{1/k} - a``, evaluated without cancellation as
    ``a expm1(log1p(E / z) / k)`` with ``z = (a/s)^k`` (and ``s E^{1/k}`` at age 0). Exponential: ``E / lambda``
    whatever the age. Results are clamped to the smallest positive float32, so their bit patterns, read
    as uint32, keep their order (positive IEEE floats order like their bits).
    """
    from ..model.prng import bits_to_uniform

    e = -jnp.log1p(-bits_to_uniform(bits))
    if model.distribution == "exponential":
        t = e * jnp.float32(model.group_mtbf_min)
    else:
        k = jnp.float32(model.weibull_shape)
        s = jnp.float32(model.weibull_scale_min)
        z = (ages / s) ** k
        old = ages * jnp.expm1(jnp.log1p(e / jnp.maximum(z, jnp.float32(1e-30))) / k)
        new = s * (z + e) ** (1.0 / k) - ages
        t = jnp.where(z > jnp.float32(1e-4), old, new)
    return jnp.maximum(t, jnp.float32(_TINY))


@functools.lru_cache(maxsize=32)
def _kept_chain_fn(scheme: str, n: int, r: int, kind: str, model: FailureModel, length: int, depth: bool):
    """jit(words, chain_ids uint32[C], ages float32[C, N], first_epoch) -> per-chain outputs of ``length``
    epochs: (uptime float32[C, L], breakpoints float32[C, L, r+1] or None, final ages float32[C, N]).

    Epoch e of chain c draws its bits with ``trial_bits(words_c, [e], N, KEPT_EPOCH_STREAM)``, ``words_c =
    trial_bits(words, [c], 2, KEPT_CHAIN_STREAM)``: the bits depend only on (seed, chain, epoch, group), so
    results are independent of how chains are chunked and of the block of epochs an epoch is computed in.
    A ``lax.scan`` over epochs carries the ages; the per-epoch body is the i.i.d. kernel on residual times:
    the wipe-out and depth breakpoints come from ``wipeout_from_bits`` / ``depth_thresholds`` on the
    residual times' bit patterns (order-preserving). Then failed groups (``t <= w``) are replaced (age 0)
    and survivors age by the uptime ``w``; ages do not advance during the restart R (failures are not
    modelled during a restart, and ages count time under load).
    """
    from ..model.prng import trial_bits
    from ..kernels.overhead import depth_thresholds
    from ..model.placement import make_placement
    from ..kernels.wipeout import wipeout_from_bits

    pl = make_placement(kind, n, r)
    with_depth = depth and scheme == "spare" and r > 1

    def fn(words, chain_ids, ages0, first_epoch):
        cw = trial_bits(words, chain_ids, 2, stream=KEPT_CHAIN_STREAM)  # (C, 2)
        draw = jax.vmap(lambda w, e: trial_bits(w, e[None], n, stream=KEPT_EPOCH_STREAM)[0], in_axes=(0, None))

        def step(ages, e):
            t = residual_times(draw(cw, e), ages, model)
            tb = jax.lax.bitcast_convert_type(t, jnp.uint32)
            t_count, w = wipeout_from_bits(tb, pl)
            up = jax.lax.bitcast_convert_type(w, jnp.float32)
            if with_depth:
                k = depth_thresholds(tb, t_count, pl)
                times = jnp.concatenate([jnp.zeros((t.shape[0], 1), t.dtype), jnp.sort(t, axis=1)], axis=1)
                b = jnp.take_along_axis(times, k, axis=1)
            elif depth:
                b = jnp.concatenate([jnp.zeros((up.shape[0], r), jnp.float32), up[:, None]], axis=1)
            else:
                b = jnp.zeros((up.shape[0], 0), jnp.float32)
            ages = jnp.where(tb <= w[:, None], jnp.float32(0.0), ages + up[:, None])
            return ages, (up, b)

        epochs = jnp.asarray(first_epoch, jnp.uint32) + jnp.arange(length, dtype=jnp.uint32)
        ages, (ups, bs) = jax.lax.scan(step, ages0, epochs)
        return jnp.swapaxes(ups, 0, 1), jnp.swapaxes(bs, 0, 1), ages

    return jax.jit(fn)


class _KeptChains(NamedTuple):
    """The chains ``_run_kept_chains`` advances: the scheme at redundancy r on N groups (placement ``kind``),
    the failure law, the seed words, the chain ids and the chains per kernel call (``chunk``)."""

    scheme: str
    n: int
    r: int
    kind: str
    model: FailureModel
    words: object
    chain_ids: np.ndarray
    chunk: int


def _run_kept_chains(chains: _KeptChains, ages, first_epoch, length, depth, block: int = 256):
    """Host loop over chunks of chains and blocks of epochs (fixed block length, so one compilation)."""
    scheme, n, r, kind, model, words, chain_ids, chunk = chains
    ups, bps = [], []
    out_ages = np.empty_like(ages)
    for c0 in range(0, chain_ids.size, chunk):
        ids = chain_ids[c0:c0 + chunk]
        a = jnp.asarray(ages[c0:c0 + chunk])
        e, done, cu, cb = first_epoch, 0, [], []
        while done < length:
            step = min(block, length - done)
            u, b, a = _kept_chain_fn(scheme, n, r, kind, model, step, depth)(words, jnp.asarray(ids, jnp.uint32), a, e)
            cu.append(np.asarray(u, np.float64))
            cb.append(np.asarray(b, np.float64))
            e += step
            done += step
        out_ages[c0:c0 + chunk] = np.asarray(a)
        if length:
            ups.append(np.concatenate(cu, axis=1))
            bps.append(np.concatenate(cb, axis=1))
    if not length:
        return np.zeros((chain_ids.size, 0)), np.zeros((chain_ids.size, 0, r + 1)), out_ages
    return np.concatenate(ups), np.concatenate(bps), out_ages


def kept_burn_in(kind: str, groups: int, redundancy: int, model: FailureModel) -> int:
    """Default burn-in (epochs) of a kept-age chain: ``KEPT_BURN_IN_MTBFS`` group MTBFs of uptime, with the
    epoch length estimated by the exponential theory (``theory.expected_uptime``), and at least 20 epochs.

    Each group's age is a renewal process in uptime (replaced at the restart after it fails), whose age law
    converges to the stationary ``P(age > a) ~ int_a S`` within a few mean lifetimes; measured at N = 600,
    r = 6 (Weibull k = 0.7 and 1.5, 32 chains from new hardware): the mean uptime of epochs 5-20 is already
    within the MC error (about 0.5%) of that of epochs 100-200.
    """
    surv = theory.survival_exact(kind, groups, redundancy) if kind in ("stacked", "block") else \
        theory.survival_poisson(kind, groups, redundancy)
    uptime = theory.expected_uptime(surv, groups, model.group_rate_per_min)
    return int(max(20, math.ceil(KEPT_BURN_IN_MTBFS * model.group_mtbf_min / uptime)))


def sample_kept_chains(cluster: Cluster, scheme: str, redundancy: int, sampling: Sampling, epochs_per_chain: int,
                       burn_in: int | None = None) -> EpochPool:
    """Kept ages (``AGES``): ``sampling.count`` independent chains of a scheme at redundancy r on ``cluster``
    (its groups and failure law; no scenario part, micro-batches or repair), each starting with every group at
    age 0 (new hardware), running ``burn_in`` discarded epochs then ``epochs_per_chain`` recorded ones.

    Chain c, epoch e (counted from the chain's start, burn-in included) is a pure function of
    (``sampling.seed``, c, e), whatever ``sampling.chunk_size`` (chains per kernel call, default 64). Memory:
    ``chunk x min(L, 256) x (r + 2)`` floats per call. ``sampling.progress``: a bar.
    ``burn_in`` default: ``kept_burn_in`` epochs (about 10 group MTBFs of uptime).
    """
    from ..kernels.driver import as_uint32_key_words
    from ..kernels.progress import Progress

    scenario = cluster.scenario
    if cluster.repair is not None or not scenario.is_default or scenario.microbatches != 1:
        raise ValueError("the kept-age chains follow the groups' own failure clocks only: no scenario part, "
                         "micro-batches or repair (time_to_train answers those with whole training runs, ttt.runs)")
    model, chains, seed = cluster.model, sampling.count, sampling.seed
    chunk = 64 if sampling.chunk_size is None else sampling.chunk_size
    n, r = check_groups_redundancy(cluster.groups, redundancy)
    kind, r = scheme_placement(scheme, n, r)
    burn_in = kept_burn_in(kind, n, r, model) if burn_in is None else int(burn_in)
    chains, epochs_per_chain = int(chains), int(epochs_per_chain)
    if chains < 1 or epochs_per_chain < 1 or burn_in < 0:
        raise ValueError(f"chains and epochs_per_chain must be >= 1 and burn_in >= 0, got {chains}, "
                         f"{epochs_per_chain}, {burn_in}")
    words = as_uint32_key_words(seed)
    ids = np.arange(chains, dtype=np.uint32)
    ages = np.zeros((chains, n), np.float32)
    bar = Progress(chains * (burn_in + epochs_per_chain), f"kept-age chains {scheme} N={n} r={r}",
                   enabled=sampling.progress)
    kept = _KeptChains(scheme, n, r, kind, model, words, ids, chunk)
    if burn_in:
        _, _, ages = _run_kept_chains(kept, ages, 0, burn_in, False)
        bar.update(chains * burn_in)
    ups, bps, _ = _run_kept_chains(kept, ages, burn_in, epochs_per_chain, True)
    bar.update(chains * epochs_per_chain)
    bar.close()
    chain = np.repeat(np.arange(chains), epochs_per_chain)
    return EpochPool(scheme, n, r, ups.reshape(-1), bps.reshape(-1, r + 1), chain=chain, ages="kept")


def simulate_ttt(pool: EpochPool, tau_min: float, cfg: Training = Training(),
                 gpus: float | None = None, max_runs: int | None = None,
                 runs_per_chain: int | None = None) -> Report:
    """Training runs assembled from consecutive epochs of ``pool``: TTT mean, standard error and more.

    A pool with chains (kept ages) is cut into its chains first: a run never spans two chains, and at most
    ``runs_per_chain`` runs are taken from each (None: as many as fit); chains are visited in order until
    ``max_runs`` runs are assembled.
    """
    if not (math.isfinite(tau_min) and tau_min > 0):
        raise ValueError(f"ckpt_interval (tau) must be a positive number of minutes, got {tau_min!r}")
    restart = cfg.restart_for(gpus if gpus is not None else cfg.reference_gpus)
    period = tau_min + cfg.ckpt_cost_min
    work = cfg.work_hours * 60.0
    ups = pool.uptime
    committed, cycle, lost_ep, reach = epoch_ends(pool, tau_min, period, cfg.ckpt_cost_min)
    cum = np.concatenate([[0.0], np.cumsum(committed)])
    # the last interval is partial: the moment the work computed (committed or not) reaches W a final
    # checkpoint starts, and the run ends when it completes. Epoch e can finish the run only if that
    # checkpoint completes before the epoch ends: the work computed by ``reach[e]`` (``epoch_ends``) plus
    # what earlier epochs committed reaches W
    reach_work = pool_committed(pool, reach, tau_min, period)
    ends = []  # (first epoch, last epoch, work still needed in the last)
    n_ep = ups.size
    if pool.chain is None:
        segments = [(0, n_ep)]
    else:
        cuts = np.concatenate([[0], np.nonzero(np.diff(pool.chain))[0] + 1, [n_ep]])
        segments = list(zip(cuts[:-1].tolist(), cuts[1:].tolist()))
    for seg_start, seg_end in segments:
        start, in_seg = seg_start, 0
        while (start < seg_end and (max_runs is None or len(ends) < max_runs)
               and (runs_per_chain is None or in_seg < runs_per_chain)):
            target = cum[start] + work
            # committed work only grows, and reach_work >= committed: the finishing epoch is at or before
            # the first epoch whose own committed work completes the run
            last = min(int(np.searchsorted(cum, target - 1e-9, side="left")) - 1, seg_end - 1)
            if last < start:
                last = start
            cand = cum[start:last + 1] + reach_work[start:last + 1] >= target - 1e-9
            if not cand.any():
                break
            e = start + int(np.argmax(cand))
            ends.append((start, e, target - cum[e]))
            start = e + 1
            in_seg += 1
    runs = np.zeros((len(ends), 4))
    if ends:
        first, last, need = (np.array(x) for x in zip(*ends))
        # the moment the work of epoch ``last`` reaches ``need``: bisection on the (monotone) work computed
        # by time t, a fixed number of steps whatever tau (no walk over the epoch's checkpoints)
        lo, hi = np.zeros(last.size), reach[last].copy()
        for _ in range(64):
            mid = 0.5 * (lo + hi)
            ok = pool_committed(pool, mid, tau_min, period, rows=last) >= need - 1e-9
            hi, lo = np.where(ok, mid, hi), np.where(ok, lo, mid)
        t_end = hi + cfg.ckpt_cost_min
        csum_cycle = np.concatenate([[0.0], np.cumsum(cycle)])
        csum_up = np.concatenate([[0.0], np.cumsum(ups)])
        csum_lost = np.concatenate([[0.0], np.cumsum(lost_ep)])
        restarts = last - first
        runs[:, 0] = csum_cycle[last] - csum_cycle[first] + restarts * restart + t_end
        runs[:, 1] = csum_up[last] - csum_up[first] + t_end
        runs[:, 2] = restarts
        runs[:, 3] = csum_lost[last] - csum_lost[first]
    if len(runs) < 2:
        raise ValueError(f"the epoch pool ({n_ep} epochs) is too small for two runs of W = {cfg.work_hours} h; "
                         "sample more epochs")
    wall = runs[:, 0] / 60.0
    return Report({"runs": len(runs), "ttt_hours": float(wall.mean()),
                   "ttt_stderr_hours": float(wall.std(ddof=1) / math.sqrt(len(runs))),
                   "availability": float(runs[:, 1].sum() / runs[:, 0].sum()),
                   "goodput": float(work * len(runs) / runs[:, 0].sum()), "restarts_mean": float(runs[:, 2].mean()),
                   "lost_uptime_hours_mean": float(runs[:, 3].mean() / 60.0), "ckpt_interval_min": tau_min,
                   "run_ttt_hours": wall})  # each run's time-to-train (its spread: quantiles, P(TTT > deadline))


def simulate_ttt_runs(cluster: Cluster, cfg: Training, policy: Policy, sampling: Sampling, tau_min: float,
                      uptime_guess_min: float | None = None, rate_guess: float = 0.4,
                      burn_in: int | None = None) -> tuple[dict, EpochPool]:
    """Exactly ``runs`` = ``sampling.count`` training runs by Monte Carlo (``runs >= 2``; seed
    ``sampling.seed``, ``sampling.progress``: bars) of ``policy`` (its scheme, redundancy r, clock ``ages``
    and proactive ``restart_depth``) on ``cluster`` (its groups, failure law and scenario; no repair: whole
    training runs, ``ttt.runs``, simulate it) with the costs ``cfg`` (the restart scaled to ``cluster.gpus``)
    at the checkpoint interval ``tau_min``: the pool is sampled, and re-sampled larger (the same seed gives
    the same leading epochs) until it holds ``runs`` runs. ``uptime_guess_min`` (default: the i.i.d. closed form's
    mean epoch) and ``rate_guess`` (work per minute of uptime) size the first pool (``epochs_needed``).

    i.i.d. epochs (exponential, or renewed ages): runs are consecutive epochs of one pool (``simulate_ttt``
    with ``max_runs``). Kept ages, non-exponential: ``runs`` independent chains, one run per chain, each
    after its burn-in (``sample_kept_chains``), so the runs are independent and the standard error is
    the plain one.

    A scenario with domains, a ring order or uneven groups (``Scenario.needs_kernel``): i.i.d. epochs from
    ``pool.sample_scenario_epochs`` (its job-wide part included). The scenario's ``microbatches`` apply in
    every case; ``restart_depth``: the proactive restart (``apply_restart_depth``).
    """
    if cluster.repair is not None:
        raise ValueError("simulate_ttt_runs has no repair: whole training runs (ttt.runs) simulate it")
    scheme, model, scenario = policy.scheme, cluster.model, cluster.scenario
    seed, progress, gpus, restart_depth = sampling.seed, sampling.progress, cluster.gpus, policy.restart_depth
    job_rate = scenario.job_rate_per_min(cluster.groups, model.group_mtbf_min)
    ages = check_ages(policy.ages)
    runs = int(sampling.count)
    if runs < 2:
        raise ValueError(f"runs (trials) must be >= 2 for a standard error, got {runs}")
    n, r = check_groups_redundancy(cluster.groups, policy.redundancy)
    kind, r = scheme_placement(scheme, n, r)
    scenario_pool = scenario.needs_kernel
    if uptime_guess_min is None and not scenario_pool:
        surv = theory.survival_exact(kind, n, r)
        uptime_guess_min = theory.expected_uptime(surv, n, model.group_rate_per_min)
    kept = model.distribution != "exponential" and ages == "kept"
    if kept and (scenario.microbatches > 1 or restart_depth is not None):
        raise ValueError("the epoch pool has no micro-batches or proactive restart with kept ages (time_to_train answers "
                         "that combination with whole training runs, ttt.runs); use "
                         "ages='renewed'")
    if scenario_pool and uptime_guess_min is None:
        raise ValueError("simulate_ttt_runs under a scenario needs uptime_guess_min (e.g. a pilot pool's mean)")
    if kept and (job_rate or scenario_pool):
        raise ValueError("the epoch pool has no job-wide failures with kept ages (time_to_train answers that combination "
                         "with whole training runs, ttt.runs); use ages='renewed' here")
    epochs = epochs_needed(uptime_guess_min, cfg, runs, rate_guess)
    per_chain = max(8, -(-epochs // runs))
    for _ in range(40):
        if kept:
            pool = sample_kept_chains(cluster, scheme, r, Sampling(runs, seed, progress=progress), per_chain, burn_in)
            got = _count_runs(pool, tau_min, cfg, gpus, runs, 1)
        else:
            if scenario_pool:
                from .pool import sample_scenario_epochs

                pool = sample_scenario_epochs(scheme, n, r, epochs, seed, model, scenario, progress)
            else:
                pool = sample_epochs_iid(cluster, scheme, r, Sampling(epochs, seed, progress=progress))
            pool = apply_restart_depth(pool, restart_depth)
            got = _count_runs(pool, tau_min, cfg, gpus, runs, None)
        if got is not None and got["runs"] == runs:
            return got, pool
        have = 0 if got is None else got["runs"]
        grow = max(1.5, 1.2 * runs / max(have, 1)) if not kept else 2.0
        epochs, per_chain = int(math.ceil(epochs * grow)), int(math.ceil(per_chain * grow))
    raise ValueError(f"could not assemble {runs} runs of W = {cfg.work_hours} h (the pool kept falling short)")


def _count_runs(pool, tau, cfg, gpus, runs, per_chain):
    try:
        return simulate_ttt(pool, tau, cfg, gpus, max_runs=runs, runs_per_chain=per_chain)
    except ValueError:
        return None


def epochs_needed(profile_uptime_min: float, cfg: Training, runs: int, rate: float) -> int:
    """Pool size for about ``runs`` runs: runs x W / (progress per epoch)."""
    per_epoch = max(1e-9, rate * profile_uptime_min)
    return int(min(5_000_000, max(2000, runs * cfg.work_hours * 60.0 / per_epoch * 1.3)))


def pilot_epochs(cluster: Cluster, scheme: str, redundancy: int, sampling: Sampling) -> EpochPool:
    """A pilot pool of ``sampling.count`` epochs where no closed form gives tau: the scenario kernels' where
    the scenario has none (``ttt.router.scenario_pool``), else i.i.d. epochs (the proactive restart)."""
    from .pool import sample_scenario_epochs
    from .router import scenario_pool

    if scenario_pool(cluster):
        return sample_scenario_epochs(scheme, cluster.groups, redundancy, sampling.count, sampling.seed,
                                      cluster.model, cluster.scenario, progress=sampling.progress)
    return sample_epochs_iid(cluster, scheme, redundancy, sampling)
