r"""Time-to-train with checkpointing: SPARe+CKPT, Rep+CKPT and CKPT alone (SPEC §5).

Model. A training run needs ``W`` hours of failure-free work at depth 1. It runs in *epochs* (restart ->
wipe-out, uptime U). Inside an epoch, compute windows of ``tau`` wall-clock minutes alternate with blocking
checkpoints of ``C`` minutes: checkpoint i completes at ``c_i = i (tau + C)``. Progress accrues at rate
``1/d(t)`` (``spare``: the adaptive depth), ``1/r`` (``rep``), ``1`` (``none``, r = 1, every failure a
wipe-out). Work is *committed* when a checkpoint completes; at a wipe-out the uncommitted work is lost, a
restart costs ``R`` and the next epoch starts from the last checkpoint with every group restored. The run
ends when committed work reaches ``W`` (at a checkpoint).

Per epoch the depth is a step function with breakpoints ``b_0 = 0 <= b_1 <= ... <= b_r = U`` (depth d on
``[b_{d-1}, b_d)``). With ``Phi(t) = floor(t/T) tau + min(t mod T, tau)`` the compute time in ``[0, t]``
(``T = tau + C``), the work committed in an epoch with ``m = floor(U/T)`` checkpoints is

.. math::  Y = \sum_{d=1}^{r} \frac{\Phi(\min(b_d, mT)) - \Phi(\min(b_{d-1}, mT))}{d}.

Closed form (renewal-reward over epochs). Epochs are i.i.d. cycles of length ``U + R`` earning Y, so

.. math::  \mathrm{TTT} \approx W \, \frac{E[U] + R}{E[Y]}, \qquad
           E[Y] = \sum_{i \ge 1} S(c_i) \big(H(s_i + \tau) - H(s_i)\big),

with ``s_i = c_i - T``, ``S(t) = P(U > t)`` and ``H(t) = \int_0^t E[1/d(u) | U > u] du``. For exponential
failures both come from the exact theory: at time t the failed set is a uniform k-subset with
``k ~ Binomial(N, 1 - e^{-lambda t})``, so ``S(t) = sum_k Bin_k P(T > k)`` and
``E[1/d(t); U > t] = sum_k Bin_k sum_d (F[k,d] - F[k,d-1]) / d`` (``theory.depth_cdf``). The one
approximation is that the depth during a compute window is taken independent of surviving the rest of the
window and its checkpoint (``E[1/d(u); U >= c_i] ~ E[1/d(u) | U > u] S(c_i)``); for ``none`` and ``rep``
it is exact, and for memoryless wipe-outs (``none``) the formula equals the classical
``(W/tau)(1/lambda + R)(e^{lambda T} - 1)``. The ratio is exact as W/E[U] -> infinity; its error against
the Monte Carlo is measured in ``experiments/ttt_vs_r.py``.

The sum over checkpoints runs over every checkpoint up to the end of the profile grid (where S < 1e-13),
in blocks, with no cap on their number (tau + C may be 10^-5 of the mean epoch: 10^7 terms).

Other failure laws. With *renewed* ages (``AGES``: every group's clock restarts at each restart) the failed
set at time t is i.i.d. Bernoulli(F(t)) for any continuous law, so the same profile holds on the grid of the
cumulative hazard ``x`` (``F = 1 - e^{-x}``) mapped to minutes by ``theory.time_from_hazard``
(Weibull ``t = scale x^{1/k}``); ``theory.renewed_uptime_and_work`` gives E[U] and E[W] exactly by
order-statistic spacings. With *kept* ages (the default: a restart replaces only the failed groups) and a
non-exponential law there is no closed form; the Monte Carlo below simulates the Markov chain of ages.

Young (``sqrt(2 C M)``) and Daly (``sqrt(2 C (M + R))``) intervals, with M = E[U] the mean time between
wipe-outs, are baselines; ``optimize_tau`` minimises the closed form over ``log tau`` with optax (Adam).

Monte Carlo. Epochs (U and depth breakpoints) are sampled by the JAX kernels (``overhead_kernel`` for
``spare``, ``wipeout_kernel`` for ``rep``, exponential/Weibull minima for ``none``); a pool of epochs is
independent of tau and C, so every (tau, C) is evaluated on the same epochs (common random numbers). The
per-epoch committed work is the vectorised formula above; runs are consecutive epochs of the pool until
the committed work reaches W.
With kept ages and a non-exponential law, epochs come from ``sample_kept_chains``: independent chains
(training runs on independent clusters), each a ``lax.scan`` over epochs carrying the per-group ages, after
a burn-in; ``simulate_ttt_runs`` takes one run per chain and samples until it has exactly the requested runs.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from . import theory
from .failures import FailureModel
from .placement import check_groups_redundancy

SCHEMES = ("spare", "rep", "none")
RESTART_SCALING = ("none", "linear", "quadratic")
AGES = ("kept", "renewed")
"""What a global restart does to the groups' failure clocks.

``kept`` (default): the restart re-initialises every collective and replaces the *failed* hardware (those
groups start at age 0); the surviving groups' GPUs are not rejuvenated and keep their age, so with an ageing
law (Weibull k != 1) the next epoch's failure times are residual lifetimes conditional on the ages, and
successive epochs are a Markov chain in the age vector, not i.i.d. ``renewed``: every group's clock
restarts at each global restart (i.i.d. epochs; the model of the paper's closed forms). For exponential
failures the two are the same model (memorylessness), so the defaults reproduce every exponential number.
"""


def check_ages(ages) -> str:
    if ages not in AGES:
        raise ValueError(f"ages must be one of {', '.join(AGES)}, got {ages!r}")
    return ages


@dataclasses.dataclass(frozen=True)
class TrainingConfig:
    """Time-to-train parameters (minutes unless named otherwise)."""

    work_hours: float = 720.0
    ckpt_cost_min: float = 5.0
    restart_min: float = 60.0
    restart_scaling: str = "none"  # restart time vs GPU count relative to the reference cluster
    reference_gpus: float = 600_000.0

    def __post_init__(self):
        for name in ("work_hours", "ckpt_cost_min", "restart_min"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 or (name == "work_hours" and v <= 0):
                raise ValueError(f"{name} must be a finite number {'> 0' if name == 'work_hours' else '>= 0'}, "
                                 f"got {v!r}")
        if self.restart_scaling not in RESTART_SCALING:
            raise ValueError(f"restart_scaling must be one of {', '.join(RESTART_SCALING)}, got "
                             f"{self.restart_scaling!r}")

    def restart_for(self, gpus: float) -> float:
        """Restart cost R for a cluster of ``gpus`` GPUs."""
        power = RESTART_SCALING.index(self.restart_scaling)
        return self.restart_min * (gpus / self.reference_gpus) ** power


def scheme_placement(scheme: str, groups: int, redundancy: int) -> tuple[str, int]:
    """(placement kind, r) used by a scheme: rep uses block (replica sets, so r must divide N), none r = 1.

    ``rep`` with r not dividing N is refused: classic replication has no layout there (a silent fallback to
    ``stacked`` would report a different scheme under the name ``rep``)."""
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {', '.join(SCHEMES)}, got {scheme!r}")
    if scheme == "none":
        return "stacked", 1
    if scheme == "rep":
        if redundancy < 1 or groups % redundancy:
            raise ValueError(f"scheme 'rep' (replica sets, block placement) needs redundancy (r) to divide "
                             f"groups (N): r={redundancy}, N={groups}")
        return "block", redundancy
    return "stacked", redundancy


# ---------------------------------------------------------------------------------------------------------
# Theory


@dataclasses.dataclass
class EpochProfile:
    """``S(t) = P(U > t)`` and ``H(t) = int_0^t E[1/d | U > u] du`` on a time grid (minutes)."""

    scheme: str
    groups: int
    redundancy: int
    t: np.ndarray
    survival: np.ndarray
    work: np.ndarray
    mean_uptime_min: float

    def as_jax(self):
        return (jnp.asarray(self.t, jnp.float32), jnp.asarray(np.log(np.maximum(self.survival, 1e-300)), jnp.float32),
                jnp.asarray(self.work, jnp.float32))


def epoch_profile(scheme: str, groups: int, redundancy: int, model: FailureModel = FailureModel(),
                  points: int | None = None, ages: str = "kept") -> EpochProfile:
    """Exact-theory epoch profile (see the module docstring) for exponential failures, and for any Weibull
    law with ``ages="renewed"``.

    With renewed ages (or exponential failures) every group has failed by time t independently with
    probability ``F(t)``; ``theory.depth_profile_in_time`` gives ``P(d*(t) <= d, U > t)`` on a grid of the
    cumulative hazard ``x`` (``F = 1 - e^{-x}``), mapped to minutes by ``theory.time_from_hazard``
    (``t = x / lambda``, Weibull ``t = scale x^{1/k}``). ``E[U] = int S(t) dt`` by the trapezoid rule on the
    same grid (so the ratio uses one consistent S); it equals the order-statistic-spacing form
    ``theory.renewed_uptime_and_work`` up to the quadrature error (tested).

    ``ages="kept"`` (the default, see ``AGES``) with a non-exponential law has no closed form (epochs form
    a Markov chain in the survivors' ages) and is refused: use ``ages="renewed"`` for the renewed model or
    the Monte Carlo (``sample_epochs(..., ages="kept")``). For exponential failures the two are the same
    model (memorylessness), so ``ages`` is irrelevant there.
    """
    n, r = check_groups_redundancy(groups, redundancy)
    ages = check_ages(ages)
    if model.distribution != "exponential" and ages == "kept":
        raise ValueError("no closed form for non-exponential failures with ages='kept' (survivors keep their "
                         "age across restarts, so epochs are a Markov chain): use ages='renewed' for the "
                         "closed form of the renewed model, or the Monte Carlo (sample_epochs, ages='kept')")
    kind, r = scheme_placement(scheme, n, r)
    x, cdf = theory.depth_profile_in_time(kind, n, r, points, depth=(scheme == "spare"))
    if model.distribution == "exponential":
        t = x / model.group_rate_per_min  # unchanged exponential path (bit-for-bit the earlier numbers)
    else:
        t = theory.time_from_hazard(x, model)
    s_t = cdf[:, r]
    if scheme == "spare":
        g_t = (np.diff(cdf, axis=1) / np.arange(1, r + 1)).sum(axis=1)
    else:
        g_t = s_t / (r if scheme == "rep" else 1)
    rate = np.where(s_t > 1e-300, g_t / np.maximum(s_t, 1e-300), 0.0)  # E[1/d | U > t]
    dt = np.diff(t)
    work = np.concatenate([[0.0], np.cumsum(0.5 * (rate[1:] + rate[:-1]) * dt)])
    mean_uptime = float(np.sum(0.5 * (s_t[1:] + s_t[:-1]) * dt))
    return EpochProfile(scheme, n, r, t, s_t, work, mean_uptime)


def _ttt_closed_form(log_tau, ckpt, restart, work_min, t, log_s, h, mean_uptime, max_ckpts: int, xp=jnp):
    """Renewal-reward TTT (minutes) for log tau, summing checkpoints 1..max_ckpts; ``xp`` = jax.numpy
    (differentiable) or numpy (vectorised over a trailing axis of ``log_tau`` values). Callers pass a
    ``max_ckpts`` that reaches the end of the profile grid (``_ckpts_to_grid_end``); the numpy callers use
    ``_ttt_closed_form_np``, which sums in blocks with no cap."""
    tau = xp.exp(xp.asarray(log_tau))[..., None]
    period = tau + ckpt
    i = xp.arange(1, max_ckpts + 1)
    c = i * period
    s_start = c - period
    surv = xp.exp(xp.interp(c, t, log_s, right=-1e4))
    gain = xp.interp(s_start + tau, t, h) - xp.interp(s_start, t, h)
    expected_work = xp.sum(surv * gain, axis=-1)
    return work_min * (mean_uptime + restart) / expected_work


def _ckpts_to_grid_end(t_end: float, tau: float, ckpt: float) -> int:
    """Number of checkpoints completed by the end of the profile grid (+1): every term of E[Y] with
    ``c_i <= t_end``. Beyond ``t_end`` the profile's survival is below 1e-13 (``depth_profile_in_time``) and
    is taken as 0, exactly as in ``E[U] = int S``; no other truncation is made."""
    return int(math.ceil(t_end / (tau + ckpt))) + 1


_BLOCK_ELEMS = 1 << 22  # (taus x checkpoints) terms per block of the numpy sum
JAX_MAX_CKPTS = 1 << 21  # largest static checkpoint count of the differentiable (optax) sum


def _ttt_closed_form_np(taus, ckpt, restart, work_min, t, log_s, h, mean_uptime) -> np.ndarray:
    r"""The closed form (float64, numpy) for an array of tau values, with ``E[Y] = \sum_i S(c_i) \Delta H_i``
    summed in blocks of checkpoints until every tau's checkpoints pass the end of the profile grid (no cap on
    their number: tau + C of 0.001 min over a 10^4-min grid is 10^7 terms, summed in ~ 3 blocks per 10^7)."""
    taus = np.atleast_1d(np.asarray(taus, np.float64))
    period = taus + ckpt
    total = np.array([_ckpts_to_grid_end(float(t[-1]), float(x), ckpt) for x in taus])
    block = int(min(total.max(), max(1024, _BLOCK_ELEMS // taus.size)))
    acc = np.zeros(taus.size)
    start = 0
    while start < total.max():
        i = np.arange(start + 1, start + block + 1, dtype=np.float64)
        live = i[None, :] <= total[:, None]
        c = i[None, :] * period[:, None]
        s_start = c - period[:, None]
        surv = np.exp(np.interp(c, t, log_s, right=-1e4))
        gain = np.interp(s_start + taus[:, None], t, h) - np.interp(s_start, t, h)
        acc += np.sum(np.where(live, surv * gain, 0.0), axis=-1)
        start += block
    with np.errstate(divide="ignore"):
        return work_min * (mean_uptime + restart) / acc


def best_tau_grid(profile: "EpochProfile", cfg: "TrainingConfig", gpus: float | None = None,
                  points: int = 96) -> tuple[float, float]:
    """(tau, TTT minutes) minimising the closed form on a log grid around the Daly interval (numpy)."""
    restart = cfg.restart_for(gpus if gpus is not None else cfg.reference_gpus)
    daly = young_daly(profile, cfg, gpus)["daly_min"]
    taus = np.exp(np.linspace(math.log(max(0.05, daly / 20)), math.log(daly * 8), points))
    log_s = np.log(np.maximum(profile.survival, 1e-300))
    with np.errstate(divide="ignore"):  # intervals too short to commit anything give TTT = inf
        vals = _ttt_closed_form_np(taus, cfg.ckpt_cost_min, restart, cfg.work_hours * 60.0, profile.t, log_s,
                                   profile.work, profile.mean_uptime_min)
    best = int(np.argmin(vals))
    # refine with a parabola in log tau
    if 0 < best < points - 1:
        x = np.log(taus[best - 1: best + 2])
        y = vals[best - 1: best + 2]
        den = (x[0] - x[1]) * (x[0] - x[2]) * (x[1] - x[2])
        a = (x[2] * (y[1] - y[0]) + x[1] * (y[0] - y[2]) + x[0] * (y[2] - y[1])) / den
        b = (x[2] ** 2 * (y[0] - y[1]) + x[1] ** 2 * (y[2] - y[0]) + x[0] ** 2 * (y[1] - y[2])) / den
        if a > 0:
            tau = float(np.exp(-b / (2 * a)))
            return tau, float(ttt_theory(profile, tau, cfg, gpus)["ttt_hours"] * 60.0)
    return float(taus[best]), float(vals[best])


def ttt_theory(profile: EpochProfile, tau_min: float, cfg: TrainingConfig = TrainingConfig(),
               gpus: float | None = None) -> dict:
    """Closed-form time-to-train and availability for one interval tau (minutes)."""
    if not (isinstance(tau_min, (int, float)) and math.isfinite(tau_min) and tau_min > 0):
        raise ValueError(f"ckpt_interval (tau) must be a positive number of minutes, got {tau_min!r}")
    restart = cfg.restart_for(gpus if gpus is not None else cfg.reference_gpus)
    ttt = float(_ttt_closed_form_np([tau_min], cfg.ckpt_cost_min, restart, cfg.work_hours * 60.0, profile.t,
                                    np.log(np.maximum(profile.survival, 1e-300)), profile.work,
                                    profile.mean_uptime_min)[0])
    epochs = ttt / (profile.mean_uptime_min + restart)
    return {"ttt_hours": ttt / 60.0, "ttt_over_w": ttt / 60.0 / cfg.work_hours,
            "availability": profile.mean_uptime_min / (profile.mean_uptime_min + restart),
            "goodput": cfg.work_hours * 60.0 / ttt, "expected_restarts": epochs,
            "mean_uptime_min": profile.mean_uptime_min, "restart_min": restart}


def young_daly(profile: EpochProfile, cfg: TrainingConfig = TrainingConfig(), gpus: float | None = None) -> dict:
    m = profile.mean_uptime_min
    restart = cfg.restart_for(gpus if gpus is not None else cfg.reference_gpus)
    c = max(cfg.ckpt_cost_min, 1e-9)
    return {"young_min": math.sqrt(2 * c * m), "daly_min": math.sqrt(2 * c * (m + restart))}


def optimize_tau(profile: EpochProfile, cfg: TrainingConfig = TrainingConfig(), gpus: float | None = None,
                 steps: int = 150, learning_rate: float = 0.05) -> dict:
    """tau* minimising the closed form, by Adam (optax) on log tau from the Daly interval (float32).

    The differentiable sum needs a static number of checkpoint terms: every checkpoint up to the end of the
    profile grid at the smallest tau searched (``_ckpts_to_grid_end``). Where that exceeds
    ``JAX_MAX_CKPTS`` (tau + C tiny against the mean epoch) the optimum is taken from ``best_tau_grid``
    instead (numpy, summed in blocks, no cap), rather than truncating the sum.
    """
    import optax

    restart = cfg.restart_for(gpus if gpus is not None else cfg.reference_gpus)
    start = young_daly(profile, cfg, gpus)["daly_min"]
    tau_floor = max(0.05, 0.02 * start)
    max_ckpts = _ckpts_to_grid_end(float(profile.t[-1]), tau_floor, cfg.ckpt_cost_min)
    if max_ckpts > JAX_MAX_CKPTS:
        tau = best_tau_grid(profile, cfg, gpus)[0]
        return dict(ttt_theory(profile, tau, cfg, gpus), ckpt_interval_min=tau)
    t, log_s, h = profile.as_jax()

    def loss(log_tau):
        return jnp.log(_ttt_closed_form(log_tau, cfg.ckpt_cost_min, restart, cfg.work_hours * 60.0, t, log_s, h,
                                        profile.mean_uptime_min, max_ckpts))

    opt = optax.adam(learning_rate)
    params = jnp.log(jnp.float32(start))
    state = opt.init(params)
    grad = jax.jit(jax.value_and_grad(loss))
    best = (float("inf"), float(start))
    for _ in range(steps):
        value, g = grad(params)
        if float(value) < best[0]:
            best = (float(value), float(jnp.exp(params)))
        updates, state = opt.update(g, state)
        params = jnp.maximum(params + updates, math.log(tau_floor))
    tau = best[1]
    return dict(ttt_theory(profile, tau, cfg, gpus), ckpt_interval_min=tau)


# ---------------------------------------------------------------------------------------------------------
# Monte Carlo


@dataclasses.dataclass
class EpochPool:
    """Sampled epochs: uptime ``U`` (minutes, float64[E]) and depth breakpoints ``b`` (float64[E, r+1]).

    ``chain`` (int64[E], kept ages only): the chain (independent sequence of epochs from one cluster) each
    epoch belongs to; a chain's epochs are contiguous and in order, and a training run never spans two.
    """

    scheme: str
    groups: int
    redundancy: int
    uptime: np.ndarray
    breakpoints: np.ndarray
    chain: np.ndarray | None = None
    ages: str = "renewed"


def sample_epochs(scheme: str, groups: int, redundancy: int, epochs: int, seed: int = 0,
                  model: FailureModel = FailureModel(), progress: bool = False, ages: str = "kept",
                  chains: int | None = None, burn_in: int | None = None) -> EpochPool:
    """Sample epochs of a scheme with the JAX kernels.

    Exponential failures, or ``ages="renewed"``: ``epochs`` i.i.d. epochs (every group restored as new at
    each restart; for exponential failures this is also the kept-ages model, by memorylessness, and the
    numbers are those of earlier versions exactly).

    Non-exponential failures with ``ages="kept"`` (the default; see ``AGES``): ``chains`` independent chains
    (default 64) of ``ceil(epochs / chains)`` epochs each, after ``burn_in`` discarded epochs per chain
    (default: ``kept_burn_in``, a cluster that has been in service with ages near their stationary law;
    0 = a run on brand-new hardware), by ``sample_kept_chains``.
    """
    ages = check_ages(ages)
    if model.distribution == "exponential" or ages == "renewed":
        return _sample_epochs_iid(scheme, groups, redundancy, epochs, seed, model, progress)
    chains = 64 if chains is None else int(chains)
    if chains < 1:
        raise ValueError(f"chains must be >= 1, got {chains}")
    return sample_kept_chains(scheme, groups, redundancy, chains, -(-int(epochs) // chains), seed, model,
                              burn_in=burn_in, progress=progress)


def _sample_epochs_iid(scheme: str, groups: int, redundancy: int, epochs: int, seed: int = 0,
                       model: FailureModel = FailureModel(), progress: bool = False) -> EpochPool:
    """Sample ``epochs`` i.i.d. epochs of a scheme with the JAX kernels (renewed ages)."""
    from .driver import as_uint32_key_words, run_chunked
    from .failures import times_from_bits, trial_bits
    from .overhead import depth_thresholds
    from .placement import make_placement
    from .wipeout import WIPEOUT_STREAM, wipeout_from_bits

    n, r = check_groups_redundancy(groups, redundancy)
    kind, r = scheme_placement(scheme, n, r)
    pl = make_placement(kind, n, r)
    words = as_uint32_key_words(seed)

    @jax.jit
    def kernel(ids):
        bits = trial_bits(words, ids, n, stream=WIPEOUT_STREAM)
        t_count, w = wipeout_from_bits(bits, pl)
        uptime = times_from_bits(w, model)
        if scheme == "spare" and r > 1:
            k = depth_thresholds(bits, t_count, pl)
            times = times_from_bits(jnp.sort(bits, axis=1), model)
            times = jnp.concatenate([jnp.zeros((times.shape[0], 1), times.dtype), times], axis=1)
            b = jnp.take_along_axis(times, k, axis=1)
        else:
            # depth r (rep) or 1 (none) for the whole epoch: all breakpoints but the last at 0
            b = jnp.concatenate([jnp.zeros((uptime.shape[0], r), jnp.float32), uptime[:, None]], axis=1)
        return uptime, b

    ups, bps = [], []

    def consume(index, host, saved=None):
        ups.append(np.asarray(host[0], np.float64))
        bps.append(np.asarray(host[1], np.float64))
        return {}

    run_chunked(kernel, epochs, None, consume, width=n * max(r, 2), desc=f"epochs {scheme} N={n} r={r}",
                progress=progress, bytes_per_item=8)
    return EpochPool(scheme, n, r, np.concatenate(ups), np.concatenate(bps))




# --- kept ages: epochs as a Markov chain in the age vector ------------------------------------------------

KEPT_CHAIN_STREAM = 0x6B657074  # per-chain seed words: trial_bits(seed words, chain ids, 2, this stream)
KEPT_EPOCH_STREAM = 0x6167650A  # epoch e of a chain: trial_bits(chain words, [e], N, this stream)
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
    from .failures import bits_to_uniform

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
    from .failures import trial_bits
    from .overhead import depth_thresholds
    from .placement import make_placement
    from .wipeout import wipeout_from_bits

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


def _run_kept_chains(scheme, n, r, kind, model, words, chain_ids, ages, first_epoch, length, depth, chunk,
                     block: int = 256):
    """Host loop over chunks of chains and blocks of epochs (fixed block length, so one compilation)."""
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


def sample_kept_chains(scheme: str, groups: int, redundancy: int, chains: int, epochs_per_chain: int,
                       seed: int = 0, model: FailureModel = FailureModel(), burn_in: int | None = None,
                       progress: bool = False, chunk: int = 64) -> EpochPool:
    """Kept ages (``AGES``): ``chains`` independent chains, each starting with every group at age 0 (new
    hardware), running ``burn_in`` discarded epochs then ``epochs_per_chain`` recorded ones.

    Chain c, epoch e (counted from the chain's start, burn-in included) is a pure function of (seed, c, e),
    whatever ``chunk`` (chains per kernel call). Memory: ``chunk x min(L, 256) x (r + 2)`` floats per call.
    ``burn_in`` default: ``kept_burn_in`` epochs (about 10 group MTBFs of uptime).
    """
    from .driver import Progress, as_uint32_key_words

    n, r = check_groups_redundancy(groups, redundancy)
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
                   enabled=progress)
    if burn_in:
        _, _, ages = _run_kept_chains(scheme, n, r, kind, model, words, ids, ages, 0, burn_in, False, chunk)
        bar.update(chains * burn_in)
    ups, bps, _ = _run_kept_chains(scheme, n, r, kind, model, words, ids, ages, burn_in, epochs_per_chain, True,
                                   chunk)
    bar.update(chains * epochs_per_chain)
    bar.close()
    chain = np.repeat(np.arange(chains), epochs_per_chain)
    return EpochPool(scheme, n, r, ups.reshape(-1), bps.reshape(-1, r + 1), chain=chain, ages="kept")


def _compute_time(t, tau, period):
    """Phi(t): compute (non-checkpoint) time in [0, t]. The remainder is taken from the same quotient
    (not a separate ``mod``), so t at an exact checkpoint time counts ``q tau`` whichever way it rounds."""
    q = np.floor(t / period)
    rem = np.clip(t - q * period, 0.0, None)
    return q * tau + np.minimum(rem, tau)


def _committed(breakpoints, upto, tau, period):
    """Work committed by time ``upto`` (a checkpoint completion) for epochs with these breakpoints."""
    depth = np.arange(1, breakpoints.shape[1])
    b = np.minimum(breakpoints, upto[..., None])
    phi = _compute_time(b, tau, period)
    return (np.diff(phi, axis=-1) / depth).sum(axis=-1)


def simulate_ttt(pool: EpochPool, tau_min: float, cfg: TrainingConfig = TrainingConfig(),
                 gpus: float | None = None, max_runs: int | None = None,
                 runs_per_chain: int | None = None) -> dict:
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
    m = np.floor(ups / period)
    committed = _committed(pool.breakpoints, m * period, tau_min, period)
    cum = np.concatenate([[0.0], np.cumsum(committed)])
    runs = []
    n_ep = ups.size
    if pool.chain is None:
        segments = [(0, n_ep)]
    else:
        cuts = np.concatenate([[0], np.nonzero(np.diff(pool.chain))[0] + 1, [n_ep]])
        segments = list(zip(cuts[:-1].tolist(), cuts[1:].tolist()))
    for seg_start, seg_end in segments:
        start, in_seg = seg_start, 0
        while (start < seg_end and (max_runs is None or len(runs) < max_runs)
               and (runs_per_chain is None or in_seg < runs_per_chain)):
            # first epoch e >= start whose committed work completes the run
            e = int(np.searchsorted(cum, cum[start] + work, side="left")) - 1
            if e >= seg_end:
                break
            e = max(e, start)
            before = cum[e] - cum[start]
            # checkpoint index within epoch e at which committed work reaches W
            i_ckpt = np.arange(1, int(m[e]) + 1)
            inside = _committed(np.broadcast_to(pool.breakpoints[e], (i_ckpt.size, pool.breakpoints.shape[1])),
                                i_ckpt * period, tau_min, period)
            hit = np.nonzero(before + inside >= work - 1e-9)[0]
            if hit.size == 0:  # pragma: no cover - guarded by the cumulative search
                break
            t_end = (i_ckpt[hit[0]]) * period
            restarts = e - start
            wall = float(np.sum(ups[start:e]) + restarts * restart + t_end)
            uptime = float(np.sum(ups[start:e]) + t_end)
            lost = float(np.sum(ups[start:e]) - np.sum(m[start:e] * period))
            runs.append((wall, uptime, restarts, lost))
            start = e + 1
            in_seg += 1
    if len(runs) < 2:
        raise ValueError(f"the epoch pool ({n_ep} epochs) is too small for two runs of W = {cfg.work_hours} h; "
                         "sample more epochs")
    arr = np.array(runs)
    wall = arr[:, 0] / 60.0
    return {"runs": len(runs), "ttt_hours": float(wall.mean()),
            "ttt_stderr_hours": float(wall.std(ddof=1) / math.sqrt(len(runs))),
            "availability": float(arr[:, 1].sum() / arr[:, 0].sum()),
            "goodput": float(work * len(runs) / arr[:, 0].sum()), "restarts_mean": float(arr[:, 2].mean()),
            "lost_uptime_hours_mean": float(arr[:, 3].mean() / 60.0), "ckpt_interval_min": tau_min}


def simulate_ttt_runs(scheme: str, groups: int, redundancy: int, runs: int, tau_min: float,
                      cfg: TrainingConfig = TrainingConfig(), model: FailureModel = FailureModel(),
                      gpus: float | None = None, seed: int = 0, ages: str = "kept",
                      uptime_guess_min: float | None = None, rate_guess: float = 0.4, burn_in: int | None = None,
                      progress: bool = False) -> tuple[dict, EpochPool]:
    """Exactly ``runs`` training runs by Monte Carlo (``runs >= 2``): the pool is sampled, and re-sampled
    larger (the same seed gives the same leading epochs) until it holds ``runs`` runs.

    i.i.d. epochs (exponential, or renewed ages): runs are consecutive epochs of one pool (``simulate_ttt``
    with ``max_runs``). Kept ages, non-exponential: ``runs`` independent chains, one run per chain, each
    after its burn-in (``sample_kept_chains``), so the runs are independent and the standard error is
    the plain one.
    """
    ages = check_ages(ages)
    runs = int(runs)
    if runs < 2:
        raise ValueError(f"runs (trials) must be >= 2 for a standard error, got {runs}")
    n, r = check_groups_redundancy(groups, redundancy)
    kind, r = scheme_placement(scheme, n, r)
    if uptime_guess_min is None:
        surv = theory.survival_exact(kind, n, r)
        uptime_guess_min = theory.expected_uptime(surv, n, model.group_rate_per_min)
    kept = model.distribution != "exponential" and ages == "kept"
    epochs = epochs_needed(uptime_guess_min, cfg, runs, rate_guess)
    per_chain = max(8, -(-epochs // runs))
    for _ in range(40):
        if kept:
            pool = sample_kept_chains(scheme, n, r, runs, per_chain, seed, model, burn_in=burn_in,
                                      progress=progress)
            got = _count_runs(pool, tau_min, cfg, gpus, runs, 1)
        else:
            pool = _sample_epochs_iid(scheme, n, r, epochs, seed, model, progress)
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


def epochs_needed(profile_uptime_min: float, cfg: TrainingConfig, runs: int, rate: float) -> int:
    """Pool size for about ``runs`` runs: runs x W / (progress per epoch)."""
    per_epoch = max(1e-9, rate * profile_uptime_min)
    return int(min(5_000_000, max(2000, runs * cfg.work_hours * 60.0 / per_epoch * 1.3)))


def optimize(groups: int = 600, r_max: int = 20, model: FailureModel = FailureModel(),
             cfg: TrainingConfig = TrainingConfig(), schemes=SCHEMES, progress: bool = False,
             ages: str = "kept") -> dict:
    """Per scheme: r* (search over 1..r_max; ``rep`` only over the divisors of N, listed in
    ``r_searched``), tau* (optax on the closed form), TTT and availability.

    Closed form only: exponential failures (any ``ages``: the same model) or any Weibull law with
    ``ages="renewed"``. Weibull with ``ages="kept"`` is refused (no closed form: the epochs are a Markov
    chain in the survivors' ages); the message points to ``ages="renewed"`` for the renewed model's optimum
    and to ``spare-jax ttt --ages kept`` to check that optimum by Monte Carlo.
    """
    from .driver import Progress

    n = check_groups_redundancy(groups, 1)[0]
    ages = check_ages(ages)
    if isinstance(r_max, bool) or int(r_max) < 1:
        raise ValueError(f"r_max must be >= 1, got {r_max!r}")
    if model.distribution != "exponential" and ages == "kept":
        raise ValueError("optimize uses the closed form, which has no kept-ages version for non-exponential "
                         "failures: use ages='renewed' (--ages renewed) for the optimum of the renewed model, "
                         "then check it with the kept-ages Monte Carlo (spare-jax ttt --ages kept -r R "
                         "--ckpt-interval TAU)")
    gpus = n * model.gpus_per_group
    out, curves = {}, {}

    def r_values(scheme):
        if scheme == "none":
            return [1]
        rs = range(1, min(int(r_max), n) + 1)
        return [r for r in rs if n % r == 0] if scheme == "rep" else list(rs)

    searched = {s: r_values(s) for s in schemes}
    jobs = [(s, r) for s in schemes for r in searched[s]]
    bar = Progress(len(jobs), f"optimize N={n} (closed form)", enabled=progress, unit="profile")
    for scheme in schemes:
        best = None
        curves[scheme] = []
        for r in searched[scheme]:
            prof = epoch_profile(scheme, n, r, model, ages=ages)
            tau, ttt_min = best_tau_grid(prof, cfg, gpus)
            curves[scheme].append({"r": r, "ckpt_interval_min": tau, "ttt_hours": ttt_min / 60.0})
            if best is None or ttt_min < best[1]:
                best = (r, ttt_min, prof)
            bar.update(1)
        r_star, _, prof = best
        opt = optimize_tau(prof, cfg, gpus)
        yd = young_daly(prof, cfg, gpus)
        out[scheme] = {"r_star": r_star, "ckpt_interval_min": opt["ckpt_interval_min"],
                       "ttt_hours": opt["ttt_hours"], "availability": opt["availability"],
                       "ttt_over_w": opt["ttt_over_w"], "goodput": opt["goodput"],
                       "young_interval_min": yd["young_min"], "daly_interval_min": yd["daly_min"],
                       "mean_uptime_min": prof.mean_uptime_min, "r_searched": searched[scheme]}
    bar.close()
    result = {"schemes": out, "groups": n, "gpus": gpus, "restart_min": cfg.restart_for(gpus),
              "ckpt_cost_min": cfg.ckpt_cost_min, "work_hours": cfg.work_hours,
              "cluster_mtbf_min": model.cluster_mtbf_min(n), "distribution": model.distribution, "ages": ages,
              "curves": curves}
    if "rep" in searched:
        result["rep_r_searched"] = ("divisors of N up to r_max (rep uses replica sets, which need r | N): "
                                    + ", ".join(map(str, searched["rep"])))
    if "spare" in out and "rep" in out:
        result["ttt_reduction_vs_rep"] = 1.0 - out["spare"]["ttt_hours"] / out["rep"]["ttt_hours"]
    return result
