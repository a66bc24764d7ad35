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

Young (``sqrt(2 C M)``) and Daly (``sqrt(2 C (M + R))``) intervals, with M = E[U] the mean time between
wipe-outs, are baselines; ``optimize_tau`` minimises the closed form over ``log tau`` with optax (Adam).

Monte Carlo. Epochs (U and depth breakpoints) are sampled by the JAX kernels (``overhead_kernel`` for
``spare``, ``wipeout_kernel`` for ``rep``, exponential/Weibull minima for ``none``); a pool of epochs is
independent of tau and C, so every (tau, C) is evaluated on the same epochs (common random numbers). The
per-epoch committed work is the vectorised formula above; runs are consecutive epochs of the pool until
the committed work reaches W.
"""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np

from . import theory
from .failures import FailureModel
from .placement import check_groups_redundancy

SCHEMES = ("spare", "rep", "none")
RESTART_SCALING = ("none", "linear", "quadratic")


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
    """(placement kind, r) used by a scheme: rep uses block where r | N (else stacked), none r = 1."""
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {', '.join(SCHEMES)}, got {scheme!r}")
    if scheme == "none":
        return "stacked", 1
    if scheme == "rep":
        return ("block" if groups % redundancy == 0 else "stacked"), redundancy
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
                  points: int | None = None) -> EpochProfile:
    """Exact-theory epoch profile for exponential failures (see the module docstring).

    At time t every group has failed independently with probability ``p_t = 1 - exp(-lambda t)``;
    ``theory.depth_profile_in_time`` gives ``P(d*(t) <= d, U > t)`` on a grid of ``lambda t``.
    ``E[U] = int S(t) dt`` by the trapezoid rule on the same grid (so the ratio uses one consistent S).
    """
    n, r = check_groups_redundancy(groups, redundancy)
    if model.distribution != "exponential":
        raise ValueError("the closed form needs exponential failures; use the Monte Carlo for Weibull")
    kind, r = scheme_placement(scheme, n, r)
    lam = model.group_rate_per_min
    x, cdf = theory.depth_profile_in_time(kind, n, r, points, depth=(scheme == "spare"))
    t = x / lam
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
    """Renewal-reward TTT (minutes) for log tau; ``xp`` = jax.numpy (differentiable) or numpy
    (vectorised over a trailing axis of ``log_tau`` values)."""
    tau = xp.exp(xp.asarray(log_tau))[..., None]
    period = tau + ckpt
    i = xp.arange(1, max_ckpts + 1)
    c = i * period
    s_start = c - period
    surv = xp.exp(xp.interp(c, t, log_s, right=-1e4))
    gain = xp.interp(s_start + tau, t, h) - xp.interp(s_start, t, h)
    expected_work = xp.sum(surv * gain, axis=-1)
    return work_min * (mean_uptime + restart) / expected_work


def best_tau_grid(profile: "EpochProfile", cfg: "TrainingConfig", gpus: float | None = None,
                  points: int = 96) -> tuple[float, float]:
    """(tau, TTT minutes) minimising the closed form on a log grid around the Daly interval (numpy)."""
    restart = cfg.restart_for(gpus if gpus is not None else cfg.reference_gpus)
    daly = young_daly(profile, cfg, gpus)["daly_min"]
    taus = np.exp(np.linspace(math.log(max(0.05, daly / 20)), math.log(daly * 8), points))
    log_s = np.log(np.maximum(profile.survival, 1e-300))
    max_ckpts = int(min(200_000, math.ceil(profile.t[-1] / (taus[0] + cfg.ckpt_cost_min)) + 1))
    with np.errstate(divide="ignore"):  # intervals too short to commit anything give TTT = inf
        vals = _ttt_closed_form(np.log(taus), cfg.ckpt_cost_min, restart, cfg.work_hours * 60.0, profile.t, log_s,
                                profile.work, profile.mean_uptime_min, max_ckpts, xp=np)
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
    max_ckpts = int(min(200_000, math.ceil(profile.t[-1] / (tau_min + cfg.ckpt_cost_min)) + 1))
    ttt = float(_ttt_closed_form(np.log(tau_min), cfg.ckpt_cost_min, restart, cfg.work_hours * 60.0, profile.t,
                                 np.log(np.maximum(profile.survival, 1e-300)), profile.work,
                                 profile.mean_uptime_min, max_ckpts, xp=np))
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
    """tau* minimising the closed form, by Adam (optax) on log tau from the Daly interval (float32)."""
    import optax

    restart = cfg.restart_for(gpus if gpus is not None else cfg.reference_gpus)
    t, log_s, h = profile.as_jax()
    start = young_daly(profile, cfg, gpus)["daly_min"]
    tau_floor = max(0.05, 0.02 * start)
    max_ckpts = int(min(200_000, math.ceil(profile.t[-1] / (tau_floor + cfg.ckpt_cost_min)) + 1))

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
    """Sampled epochs: uptime ``U`` (minutes, float64[E]) and depth breakpoints ``b`` (float64[E, r+1])."""

    scheme: str
    groups: int
    redundancy: int
    uptime: np.ndarray
    breakpoints: np.ndarray


def sample_epochs(scheme: str, groups: int, redundancy: int, epochs: int, seed: int = 0,
                  model: FailureModel = FailureModel(), progress: bool = False) -> EpochPool:
    """Sample ``epochs`` i.i.d. epochs of a scheme with the JAX kernels."""
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
                 gpus: float | None = None, max_runs: int | None = None) -> dict:
    """Training runs assembled from consecutive epochs of ``pool``: TTT mean, standard error and more."""
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
    start = 0
    n_ep = ups.size
    while start < n_ep and (max_runs is None or len(runs) < max_runs):
        # first epoch e >= start whose committed work completes the run
        e = int(np.searchsorted(cum, cum[start] + work, side="left")) - 1
        if e >= n_ep:
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


def epochs_needed(profile_uptime_min: float, cfg: TrainingConfig, runs: int, rate: float) -> int:
    """Pool size for about ``runs`` runs: runs x W / (progress per epoch)."""
    per_epoch = max(1e-9, rate * profile_uptime_min)
    return int(min(5_000_000, max(2000, runs * cfg.work_hours * 60.0 / per_epoch * 1.3)))


def optimize(groups: int = 600, r_max: int = 20, model: FailureModel = FailureModel(),
             cfg: TrainingConfig = TrainingConfig(), schemes=SCHEMES, progress: bool = False) -> dict:
    """Per scheme: r* (search over 1..r_max), tau* (optax on the closed form), TTT and availability."""
    from .driver import Progress

    n = check_groups_redundancy(groups, 1)[0]
    if isinstance(r_max, bool) or int(r_max) < 1:
        raise ValueError(f"r_max must be >= 1, got {r_max!r}")
    gpus = n * model.gpus_per_group
    out, curves = {}, {}
    jobs = [(s, r) for s in schemes for r in (range(1, min(int(r_max), n) + 1) if s != "none" else [1])]
    bar = Progress(len(jobs), f"optimize N={n} (closed form)", enabled=progress, unit="profile")
    for scheme in schemes:
        best = None
        curves[scheme] = []
        for r in (range(1, min(int(r_max), n) + 1) if scheme != "none" else [1]):
            prof = epoch_profile(scheme, n, r, model)
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
                       "mean_uptime_min": prof.mean_uptime_min}
    bar.close()
    result = {"schemes": out, "groups": n, "gpus": gpus, "restart_min": cfg.restart_for(gpus),
              "ckpt_cost_min": cfg.ckpt_cost_min, "work_hours": cfg.work_hours,
              "cluster_mtbf_min": model.cluster_mtbf_min(n), "curves": curves}
    if "spare" in out and "rep" in out:
        result["ttt_reduction_vs_rep"] = 1.0 - out["spare"]["ttt_hours"] / out["rep"]["ttt_hours"]
    return result
