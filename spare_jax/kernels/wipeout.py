"""The wipe-out kernel and its Monte Carlo driver (docs/model.md#failures-wipe-out-depth-overhead,
docs/model.md#kernels-and-random-numbers).

With failure times ``t_g`` (i.i.d. per group), shard ``j`` is lost when its last holder fails, at
``max_{g holds j} t_g``; the first loss (the wipe-out) is at

.. math::  w = \\min_j \\max_{g \\in H(j)} t_g, \\qquad T = \\#\\{g : t_g \\le w\\},

the number of failed groups at the wipe-out, fatal failure included (endurable failures = ``T - 1``). No sort
is needed. The kernel works on the raw 32-bit failure *ranks* (uniform bits), which carry the order, and
maps ``w`` through the inverse CDF to get the epoch's wipe-out time in minutes. ``T`` is counted as
``#{t_g < w} + 1``, so a 32-bit tie with the fatal bit pattern (probability about ``N 2^-32`` per trial)
can at most shift T by one in such rare trials.

Structure is used where the placement has it:

* ``stacked``: the holders of shard ``j`` are the window ``j-r+1 .. j`` of the ring, so the per-shard maxima
  are a circular sliding-window maximum (``lax.reduce_window`` over the ring extended by ``r-1``);
* ``block``: a reshape to ``(N/r, r)``;
* ``random``/``custom``: a gather through the ``holders`` table.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np

from . import exact_sums
from .driver import Execution, Reduction, as_uint32_key_words, run_reduced
from .host_sums import ExactSum, exact_mean_var
from ..model.cluster import Sampling
from ..model.failures import FailureModel
from ..model.prng import WIPEOUT_STREAM, times_from_bits, trial_bits
from ..model.placement import Placement
from ..results import Result



def shard_loss_bits(bits, placement: Placement):
    """``uint32[C, N]``: for each shard, the largest failure rank among its holders (its loss rank)."""
    n, r = placement.groups, placement.redundancy
    if placement.kind == "stacked":
        if r == 1:
            return bits
        ext = jnp.concatenate([bits[:, n - (r - 1):], bits], axis=1)
        return jax.lax.reduce_window(ext, jnp.uint32(0), jax.lax.max, (1, r), (1, 1), "VALID")
    if placement.kind == "block":
        return bits.reshape(bits.shape[0], n // r, r).max(axis=2)
    holders = jnp.asarray(placement.holders)
    return bits[:, holders].max(axis=2)


def wipeout_from_bits(bits, placement: Placement):
    """Per trial: ``(T int32[C], w uint32[C])`` from failure ranks ``bits`` (``uint32[C, N]``)."""
    w = shard_loss_bits(bits, placement).min(axis=1)
    t_count = (bits < w[:, None]).sum(axis=1, dtype=jnp.int32) + 1
    return t_count, w


def wipeout_kernel(words, trial_ids, placement: Placement, model: FailureModel = FailureModel()):
    """Pure kernel: per trial the failure count at wipe-out ``T`` and the wipe-out time (minutes).

    Args:
      words: ``uint32[2]`` seed words from a JAX key (``prng.key_words``).
      trial_ids: ``uint32[C]`` global trial indices.
    Returns:
      ``(T int32[C], wipeout_time float32[C])``.
    """
    bits = trial_bits(words, trial_ids, placement.groups, stream=WIPEOUT_STREAM)
    t_count, w = wipeout_from_bits(bits, placement)
    return t_count, times_from_bits(w, model)


@functools.lru_cache(maxsize=32)
def _jitted(placement, model):
    return jax.jit(functools.partial(wipeout_kernel, placement=placement, model=model))


def scenario_wipeout_kernel(words, trial_ids, placement: Placement, model: FailureModel, scenario):
    r"""Pure kernel for a ``Scenario`` (job-wide failures, failure domains, ring order, uneven groups).

    With the failure times ``t_g`` laid out in ring order (``prng.scenario_failure_times``), the
    wipe-out time is the same ``w = min_j max_{g in H(j)} t_g`` over ring positions, the epoch ends at
    ``e = min(w, J)`` with J the first job-wide interruption, and ``T = #{g : t_g <= e}`` (all groups failed
    by then: a fatal domain event counts every group it took down; at a job-wide end, the groups already
    down). The fatal event is a domain event when a group failing exactly at ``w`` failed by its domain.

    Returns:
      ``(T int32[C], end_time float32[C], ended_by_job bool[C], fatal_by_domain bool[C])``.
    """
    from ..model.prng import scenario_failure_times

    n = placement.groups
    order, from_domain, job_order, to_time = scenario_failure_times(words, trial_ids, n, model, scenario)
    w = shard_loss_bits(order, placement).min(axis=1)
    ended_by_job = job_order < w
    end = jnp.minimum(w, job_order)
    t_count = (order <= end[:, None]).sum(axis=1, dtype=jnp.int32)
    if from_domain is None:
        fatal_by_domain = jnp.zeros_like(ended_by_job)
    else:
        fatal_by_domain = ~ended_by_job & jnp.any((order == w[:, None]) & from_domain, axis=1)
    return t_count, to_time(end), ended_by_job, fatal_by_domain


@functools.lru_cache(maxsize=32)
def _jitted_scenario(placement, model, scenario):
    return jax.jit(functools.partial(scenario_wipeout_kernel, placement=placement, model=model,
                                     scenario=scenario))


@dataclasses.dataclass
class WipeoutResult(Result):
    """Monte Carlo summary of T (failures at wipe-out, fatal one included) and the epoch uptime."""

    groups: int
    redundancy: int
    placement: str
    trials: int
    seed: int
    histogram: np.ndarray  # int64[N + 2]: histogram[k] = #trials with T == k
    uptime_sum_min: float
    uptime_sq_sum_min2: float
    chunk_size: int = 0
    devices: int = 1
    uptime_var_min2: float | None = None  # exact sample variance of the uptime (from exact sums)
    ended_by_job: int = 0  # epochs ended by a job-wide interruption (Scenario)
    fatal_by_domain: int = 0  # epochs ended by a wipe-out whose fatal event was a domain event
    processes: int = 1  # processes that ran the trials together (jax.distributed)
    trials_per_process: tuple = ()  # the trials each process's devices computed in this call

    @property
    def mean(self) -> float:
        k = np.arange(self.histogram.size)
        return float((k * self.histogram).sum() / self.trials)

    @property
    def var(self) -> float:
        k = np.arange(self.histogram.size, dtype=np.float64)
        m = self.mean
        return float((((k - m) ** 2) * self.histogram).sum() / max(1, self.trials - 1))

    @property
    def stderr(self) -> float:
        return float(np.sqrt(self.var / self.trials))

    def quantile(self, q: float) -> int:
        """Smallest k with P(T <= k) >= q."""
        cdf = np.cumsum(self.histogram) / self.trials
        return int(np.searchsorted(cdf, q - 1e-12))

    def survival(self) -> np.ndarray:
        """Empirical P(T > k), k = 0..N."""
        cdf = np.cumsum(self.histogram) / self.trials
        return 1.0 - cdf[: self.groups + 1]

    @property
    def uptime_mean_min(self) -> float:
        return self.uptime_sum_min / self.trials

    @property
    def uptime_stderr_min(self) -> float:
        var = self.uptime_var_min2
        if var is None:
            m = self.uptime_mean_min
            var = max(0.0, self.uptime_sq_sum_min2 / self.trials - m * m) * self.trials / max(1, self.trials - 1)
        return float(np.sqrt(var / self.trials))


def simulate_wipeout(placement: Placement, sampling: Sampling = Sampling(), *,
                     model: FailureModel = FailureModel(), scenario=None) -> WipeoutResult:
    """Monte Carlo of the wipe-out: ``sampling.count`` epochs, each from a full set of restored groups.

    Results for a ``sampling.seed`` are identical for any ``chunk_size`` and device count. With
    ``sampling.out_dir`` each finished chunk's histogram and sums are saved and a re-run resumes. A non-default
    ``scenario`` (``scenario.Scenario``) runs ``scenario_wipeout_kernel``; the epoch then ends at the wipe-out
    or the first job-wide interruption, whichever comes first.
    """
    from ..model.scenario import Scenario
    from ..model.placement import check_int

    trials = check_int("trials", sampling.count)
    seed = check_int("seed", sampling.seed, lo=0)
    if trials >= 2**32:
        raise ValueError("trials must be < 2**32")
    scenario = Scenario() if scenario is None else scenario
    n = placement.groups
    scenario.check(n)
    words = as_uint32_key_words(seed)
    fn = _jitted(placement, model) if scenario.is_default else _jitted_scenario(placement, model, scenario)
    params = {"kind": "wipeout", "placement": placement.kind, "groups": n, "redundancy": placement.redundancy,
              "trials": trials, "seed": seed, "model": dataclasses.asdict(model),
              "stack_digest": _stack_digest(placement),
              **({} if scenario.is_default else {"scenario": repr(scenario)})}
    totals, info = run_reduced(fn, Reduction(_reduce_wipeout(n), _zeros_wipeout(n), limb_keys=("up", "up2")), trials,
                               Execution(n, sampling.chunk_size, sampling.devices,
                                         desc=f"wipe-out N={n} r={placement.redundancy}", progress=sampling.progress,
                                         out_dir=sampling.out_dir, params=params),
                               aux=words, cache_key=("wipeout", placement, model, scenario))
    if totals["bad"][0]:
        raise ValueError("a non-finite value reached an accumulation (a float32 overflow in the kernel: "
                         "the parameters are outside the range the model handles)")
    up, up2 = ExactSum(), ExactSum()
    up.total = totals["up"] << (ExactSum.SHIFT - exact_sums.X_UNIT_SHIFT)
    up2.total = totals["up2"] << (ExactSum.SHIFT - exact_sums.X2_UNIT_SHIFT)
    hist = np.array(totals["hist"], np.int64)
    _, up_var = exact_mean_var(up, up2, trials)
    return WipeoutResult(n, placement.redundancy, placement.kind, trials, seed, hist, up.value, up2.value,
                         info["chunk_size"], info["devices"], up_var, int(totals["events"][0]),
                         int(totals["events"][1]), info["processes"], tuple(info["trials_per_process"]))


def _reduce_wipeout(n: int):
    """Device-side sufficient statistics of a sub-chunk: the histogram of T (length N + 2), the exact sums
    of the uptime and its square (``exact_sums`` limbs), the count of non-finite uptimes and the event counts
    (epochs ended by a job-wide interruption, by a fatal domain event)."""

    def reduce(out, valid):
        t_count, uptime = out[:2]
        sx, sx2, bad = exact_sums.exact_sums_f32(uptime, valid)
        events = jnp.stack([(x & valid).sum(dtype=jnp.int32) for x in out[2:]] or [jnp.int32(0)] * 2)
        return {"hist": exact_sums.histogram(t_count, valid, n + 2), "up": sx, "up2": sx2, "bad": bad[None],
                "events": events}

    return reduce


def _zeros_wipeout(n: int):
    def zeros():
        return {"hist": jnp.zeros(n + 2, jnp.int32), "up": jnp.zeros(exact_sums.X_LIMBS, jnp.uint32),
                "up2": jnp.zeros(exact_sums.X2_LIMBS, jnp.uint32), "bad": jnp.zeros(1, jnp.int32),
                "events": jnp.zeros(2, jnp.int32)}

    return zeros


def _stack_digest(placement: Placement) -> str:
    import hashlib

    return hashlib.sha256(np.ascontiguousarray(placement.stack).tobytes()).hexdigest()[:16]
