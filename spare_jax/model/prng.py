"""The counter-based random numbers of every kernel, and the failure clocks drawn from them
(docs/model.md#kernels-and-random-numbers).

Random numbers
--------------
Kernels are pure functions of an explicit JAX PRNG key. From the key we draw two 32-bit words once per call
(``jax.random.bits``): the 64-bit key of a counter-based block cipher, Threefry-2x32 with 20 rounds (Salmon,
Moraes, Dror & Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC 2011; the generator behind
``jax.random``, whose output ours matches bit for bit, a test). A *stream* id first derives a sub-key
``Threefry_key(stream, 0x53504152)``, so streams are independent pseudo-random keys. The bits of column
``c`` of trial ``t`` are then one output word of ``Threefry_subkey(t, c mod H)`` with ``H = ceil(width/2)``
(word 0 for ``c < H``, word 1 for ``c >= H``): every (trial, column pair) is a distinct 64-bit counter of a
keyed bijection, so no two rows share structure, whatever the trial ids, and a trial's bits depend only on
(key, stream, trial, column, width), never on the chunk or the device. This is what makes results
independent of chunk size and device count.

Why a block cipher per (trial, column pair) rather than a cheaper hash of one 32-bit state per trial (say
``tseed_t + c*K``): with such a hash, trials whose states differ by a multiple of ``K`` get shifted copies of
each other's row (correlated T values: standard errors about 6% too small at 10^6 trials), and any 32-bit
per-trial state repeats by the birthday bound. The tests check that no two rows among 10^5 trials share an
adjacent pair of words, that T of neighbouring trials is uncorrelated, and that batch means over independent
seeds scatter as the reported standard error says. Cost: about 1.5x such a hash on CPU
(docs/performance.md#the-generators-price).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .failures import FailureModel


def key_words(key) -> jax.Array:
    """Two uint32 words drawn from a JAX PRNG key: the seed of the counter-based hash."""
    return jax.random.bits(key, (2,), jnp.uint32)


_THREEFRY_ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)
_STREAM_TAG = 0x53504152  # "SPAR": second counter word of the stream sub-key derivation

# The streams: every ``trial_bits`` stream id of every kernel is registered here, so no two draws share one.
# A range is (first id, count): a per-event stream is its base + the event index k < count.
WIPEOUT_STREAM = 0  # the static kernels' group clocks (wipe-out, overhead, epochs); domain level l: 1 + l,
#                     the job-wide clock: 1 + L (L domain levels); the epoch pools' job-wide time: JOB_STREAM
JOB_STREAM = 7  # the epoch pools' job-wide interruption time (ttt.montecarlo)
EPOCH_STREAM = 0x10000000  # + event index: an epoch's scalar draws at its k-th event (the run kernel's epoch mode)
EPOCH_WIDE_STREAM = 0x20000000  # + event index: an epoch's one draw per group
INIT_STREAM = 0x4FFFFF00  # a whole run's initial clocks (+1 domains, +2 job-wide)
RUN_STREAM = 0x50000000  # + event index: a whole run's scalar draws at its k-th event
WIDE_STREAM = 0x60000000  # + event index: a whole run's one draw per group (a domain event, a restart's clocks)
KEPT_EPOCH_STREAM = 0x6167650A  # ages kept: epoch e of a chain (ttt.montecarlo)
KEPT_CHAIN_STREAM = 0x6B657074  # ages kept: the per-chain seed words (ttt.montecarlo)
STREAMS = {  # name: (first id, count of ids)
    "wipeout clocks, domains and job-wide": (WIPEOUT_STREAM, JOB_STREAM),
    "epoch pools' job-wide time": (JOB_STREAM, 1),
    "epoch events": (EPOCH_STREAM, EPOCH_WIDE_STREAM - EPOCH_STREAM),
    "epoch wide events": (EPOCH_WIDE_STREAM, INIT_STREAM - EPOCH_WIDE_STREAM),
    "run initial clocks": (INIT_STREAM, 3),
    "run events": (RUN_STREAM, WIDE_STREAM - RUN_STREAM),
    "run wide events": (WIDE_STREAM, KEPT_EPOCH_STREAM - WIDE_STREAM),
    "ages-kept epochs": (KEPT_EPOCH_STREAM, 1),
    "ages-kept chains": (KEPT_CHAIN_STREAM, 1),
}


def _rotl32(x, d: int):
    return (x << jnp.uint32(d)) | (x >> jnp.uint32(32 - d))


def threefry2x32(key0, key1, x0, x1, rounds: int = 20):
    """Threefry-2x32 (Random123): encrypt the counter pair ``(x0, x1)`` under the key ``(key0, key1)``.

    Additions, rotations and xors on uint32 only; ``x0``, ``x1`` broadcast together. With 20 rounds it equals
    ``jax.extend.random.threefry_2x32`` (tested).
    """
    key0 = jnp.asarray(key0, jnp.uint32)
    key1 = jnp.asarray(key1, jnp.uint32)
    ks = (key0, key1, key0 ^ key1 ^ jnp.uint32(0x1BD11BDA))
    x0 = jnp.asarray(x0, jnp.uint32) + ks[0]
    x1 = jnp.asarray(x1, jnp.uint32) + ks[1]
    for i in range(rounds):
        x0 = x0 + x1
        x1 = _rotl32(x1, _THREEFRY_ROTATIONS[i % 8]) ^ x0
        if i % 4 == 3:
            s = i // 4 + 1
            x0 = x0 + ks[s % 3]
            x1 = x1 + ks[(s + 1) % 3] + jnp.uint32(s)
    return x0, x1


def stream_key(words, stream=0):
    """The 64-bit sub-key of ``stream`` (an int or a traced uint32): Threefry of ``(stream, tag)``."""
    return threefry2x32(words[0], words[1], jnp.asarray(stream, jnp.uint32), jnp.uint32(_STREAM_TAG))


def trial_bits(words, trial_ids, width: int, stream=0):
    """``uint32[len(trial_ids), width]``: the random bits of each trial.

    Column ``c`` of trial ``t`` is word ``c // H`` of ``Threefry(t, c mod H)`` under the stream's sub-key,
    ``H = ceil(width / 2)``. Depends only on (words, stream, trial id, column, width): chunk- and
    device-independent, and no two (trial, column-pair) places share a counter.
    """
    trial_ids = jnp.asarray(trial_ids, jnp.uint32)
    half = (int(width) + 1) // 2
    k0, k1 = stream_key(words, stream)
    pairs = jnp.arange(half, dtype=jnp.uint32)
    first, second = threefry2x32(k0, k1, trial_ids[:, None], pairs[None, :])
    return jnp.concatenate([first, second], axis=1)[:, : int(width)]


def bits_to_uniform(bits):
    """uint32 bits -> float32 uniform on (0, 1) (24 significant bits, never 0 or 1)."""
    return ((bits >> 8).astype(jnp.float32) + 0.5) * jnp.float32(2.0 ** -24)


def exponential_from_bits(bits):
    """Standard exponential variates (float32) from uint32 bits, monotone in the bits."""
    return -jnp.log1p(-bits_to_uniform(bits))


def times_from_bits(bits, model: FailureModel):
    """Failure times (minutes, float32) from uniform bits; monotone in ``bits`` so ranks are kept."""
    e = exponential_from_bits(bits)  # standard exponential; accurate for early failures (small u)
    if model.distribution == "exponential":
        return e * jnp.float32(model.group_mtbf_min)
    return jnp.float32(model.weibull_scale_min) * e ** jnp.float32(1.0 / model.weibull_shape)


def sample_failure_times(key, shape, model: FailureModel = FailureModel()):
    """Failure times of ``shape`` i.i.d. groups (minutes), a pure function of ``key``."""
    bits = jax.random.bits(key, shape, jnp.uint32)
    return times_from_bits(bits, model)


def bits_from_times(times, model: FailureModel):
    """The inverse of ``times_from_bits`` (up to its 24-bit resolution): the uint32 rank of a time on the
    scale of one group's own clock, ``floor(F(t) 2^32)``; monotone, so comparisons with own-clock bits keep
    the order of the times."""
    t = jnp.asarray(times, jnp.float32)
    if model.distribution == "exponential":
        e = t / jnp.float32(model.group_mtbf_min)
    else:
        e = (t / jnp.float32(model.weibull_scale_min)) ** jnp.float32(model.weibull_shape)
    u = -jnp.expm1(-e)
    return jnp.clip(u * jnp.float32(2.0 ** 32), 0.0, jnp.float32(4294967040.0)).astype(jnp.uint32)


def _expand(clocks, index: np.ndarray):
    """``clocks[:, index]`` for a static index, as a broadcast where the index is a repeat (contiguous
    domains) or a tile (interleaved ring) pattern (a gather is several times slower on XLA:CPU)."""
    c, d = clocks.shape
    n = index.size
    size = -(-n // d)
    if np.array_equal(index, np.arange(n) // size):
        return jnp.broadcast_to(clocks[:, :, None], (c, d, size)).reshape(c, d * size)[:, :n]
    if n % d == 0 and np.array_equal(index, np.arange(n) % d):
        return jnp.broadcast_to(clocks[:, None, :], (c, n // d, d)).reshape(c, n)
    return clocks[:, jnp.asarray(index)]


def scenario_failure_times(words, trial_ids, groups: int, model: FailureModel, scenario):
    """Failure order under a ``Scenario`` (docs/scenarios.md#real-clusters-scenarios), per trial and *ring position*,
    as uint32 keys.

    Column i belongs to physical group ``ring[i]`` (``scenario.ring_order``): own clocks are i.i.d. up to their rate
    multipliers, so they are drawn directly in ring order (stream 0, as without a scenario) and no per-trial
    permutation is needed. Domain level ``l`` draws one exponential clock per domain from stream ``1 + l``; a group
    fails at the minimum of its own clock and its domains' clocks. The job-wide interruption time comes from stream
    ``1 + L`` (never when off).

    The keys compare like the failure times. When every group has the same law (no lemons or per-group
    MTBFs) the keys are the own clocks' raw bits, and domain and job-wide times are mapped to that scale
    (``bits_from_times``): one exp per domain instead of a log per group. Otherwise the keys are the IEEE bit
    patterns of the float32 times (the mean time to failure divided by the group's rate multiplier), which
    order non-negative floats correctly.

    Returns:
      ``(keys uint32[C, N], from_domain bool[C, N] | None, job_key uint32[C], to_time)``: ``from_domain[c, i]``
      says that the failure at ring position i is a domain event (None without domains); ``to_time(keys)``
      maps keys back to minutes.
    """
    ring = scenario.ring_order(groups)
    keys = trial_bits(words, trial_ids, groups, stream=0)
    mult = scenario.rate_multipliers(groups, model.group_mtbf_min)[ring]
    if np.all(mult == 1.0):
        def from_time(t):
            return bits_from_times(t, model)

        def to_time(k):
            return times_from_bits(k, model)
    else:
        def from_time(t):
            return jax.lax.bitcast_convert_type(jnp.asarray(t, jnp.float32), jnp.uint32)

        def to_time(k):
            return jax.lax.bitcast_convert_type(k, jnp.float32)

        keys = from_time(times_from_bits(keys, model) * jnp.asarray(1.0 / mult, jnp.float32))
    from_domain = None
    for level_index, level in enumerate(scenario.domains):
        clocks = exponential_from_bits(trial_bits(words, trial_ids, level.count(groups), stream=1 + level_index))
        per_group = _expand(from_time(clocks * jnp.float32(level.mtbf_min)), level.members(groups)[ring])
        earlier = per_group < keys
        from_domain = earlier if from_domain is None else (from_domain | earlier)
        keys = jnp.minimum(keys, per_group)
    rate = scenario.job_rate_per_min(groups, model.group_mtbf_min)
    if rate > 0:
        job = exponential_from_bits(trial_bits(words, trial_ids, 1, stream=1 + len(scenario.domains))[:, 0])
        job_key = from_time(job * jnp.float32(1.0 / rate))
    else:
        job_key = jnp.full(keys.shape[:1], 0xFFFFFFFF, jnp.uint32)
    return keys, from_domain, job_key, to_time
