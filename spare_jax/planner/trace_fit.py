r"""The fitted model beside the replay: the independent model that a failure trace fits
(docs/traces.md#the-fitted-model-beside-the-replay).

``fit_trace(trace)`` reads a unit trace (``model.trace_units.UnitPeriods``: after the mapping to units, the
scaling and the merge on the circle, so it fits what a replay replays) and returns a ``TraceFit`` whose
``to_json()`` is a plain JSON object; ``fitted_cluster(fit, ...)`` turns it into the model's values (a
``model.cluster.Cluster``), so that the fitted independent model can be simulated at the same settings.
Times are hours (scaled time).

Up time and gaps (a unit on the window read as a line)
------------------------------------------------------
Unit u's periods ``[a_1, b_1), .., [a_k, b_k)`` (starts in [0, P), sorted) leave it up for
``P - sum (b_i - a_i)`` hours: its *up time*, the exposure of its failures. Its *gaps* (up times that end in a
failure) are ``a_1 - w`` (with ``w = max(0, b_k - P)``: the unit is new at 0, as in a failure-log fit, or up
from the return of a period that wraps round), and ``a_{i+1} - b_i``; the up time from ``b_k`` to P is
right-censored (none when the last period wraps). A unit that never failed is censored at P. A gap of zero
(a period that starts at 0) is left out of the Weibull fit.

Failure law
-----------
* exponential: every unit fails at rate ``lambda`` per up hour; ``lambda_hat`` = failures / total up time
  with the exact Garwood interval (``planner.fit.fit_exponential``);
* Weibull renewal: every gap i.i.d. Weibull(k, s), the censored ones as above (``planner.fit.fit_weibull``:
  profile-likelihood intervals for k and the mean gap, and the likelihood-ratio test of k = 1).

Repair law (the period lengths x_i, kept by the scaling)
--------------------------------------------------------
* exponential: mean ``x_bar`` (from ``fit_exponential`` over the down time: its interval is the Garwood one,
  slightly conservative for a complete sample), log-likelihood ``-n log x_bar - n``;
* lognormal: ``mu = mean(log x)``, ``sigma = sd(log x)`` (maximum likelihood, divisor n); mean
  ``exp(mu + sigma^2 / 2)``; log-likelihood ``-sum log x - n log sigma - n/2 log(2 pi) - n/2``;
* the verdict: the two laws are not nested, so the likelihood ratio ``LR = 2 (l_logn - l_exp)`` is read
  by Vuong's test: with ``m_i`` the per-period log-likelihood differences,
  ``z = (sum m_i - (1/2) log n) / (sqrt(n) sd(m))`` (the ``(1/2) log n`` is Schwarz's correction for the
  lognormal's extra parameter), asymptotically standard normal when the two laws fit equally well.
  ``verdict`` = ``lognormal`` when z > 1.96, ``exponential`` when z < -1.96, ``neither`` between; ``fixed``
  when every period lasts the same (sigma = 0).

Uneven units
------------
``top_pct``: the share of failures on the most-failing 1% of units (``k = max(1, floor(N / 100))`` units).
The model's lemons (``model.scenario``) are ``round(q N)`` units failing kappa times as often as the others.
One share cannot fix two parameters, so q is the top fraction itself (``q = k / N``: the model's lemons are
as many as the most-failing units) and kappa is the factor at which the model's *expected* share on its k
most-failing units equals the observed one (``expected_top_share``, solved for kappa >= 1 in 1..1e4, the
model's range): the expectation, not the observed lemons' rate ratio, because the most-failing units of even
units fail more than the rest by chance alone (``top_even_pct``, the expected share with kappa = 1; a
trace at or below it gets no lemons: q = 0, kappa = 1). The expectation takes every unit up for the
mean up time (down time is a small share of it). ``normal_rate_per_hour`` is then
``lambda_0 = failures / (N - L + L kappa) / mean up time``.

Bursts and neighbours: ``planner.trace_bursts``, on the circle of length P.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy import optimize, special, stats

from ..model.bounds import BOUNDS, REPAIR_SIGMA_MAX
from ..model.cluster import Cluster
from ..model.failures import FailureModel
from ..model.repair import Repair
from ..model.scenario import Scenario
from ..model.trace_units import UnitPeriods
from ..results import Result, strict
from .fit import ExponentialFit, WeibullFit, fit_exponential, fit_weibull
from .trace_bursts import BURST_WINDOW_MIN, RING_RADIUS, BurstFit, burst_statistics

TOP_FRACTION = 0.01
REPAIR_VERDICTS = ("lognormal", "exponential", "neither", "fixed")
FAILURE_LAWS = ("weibull", "exponential")
FITTED_REPAIRS = ("fitted", "exp", "lognormal", "none")
_Z = float(stats.norm.ppf(0.975))


@dataclasses.dataclass(frozen=True)
class TraceFitOptions:
    """How ``fit_trace`` reads a trace: the burst window (minutes of scaled time), the ring radius of a
    neighbour (ring positions; the redundancy r of the run), the ring order (the unit at each ring position;
    None: unit i at position i), the share of units that are the most failing, and the seed and number of
    the draws behind the expected shares of uneven units."""

    burst_window_min: float = BURST_WINDOW_MIN
    ring_radius: int = RING_RADIUS
    ring: tuple | None = None
    top_fraction: float = TOP_FRACTION


@dataclasses.dataclass(frozen=True)
class FailureLawFit(Result):
    """The units' failure law (hours of up time): exponential and Weibull renewal fits."""

    failures: int
    up_hours: float
    gaps: int  # observed gaps (up times that end in a failure)
    censored: int  # censored up times
    exponential: ExponentialFit
    weibull: WeibullFit | None  # None with fewer than 2 gaps


@dataclasses.dataclass(frozen=True)
class RepairFit(Result):
    """The repair law of the down periods (hours): exponential and lognormal, with the verdict."""

    periods: int
    mean_hours: float
    mean_ci_hours: tuple  # exponential (Garwood) 95% interval of the mean
    lognormal_mu: float | None  # of log(hours)
    lognormal_sigma: float | None
    lognormal_mean_hours: float | None
    loglik_exponential: float
    loglik_lognormal: float | None
    lr_statistic: float | None  # 2 (l_lognormal - l_exponential)
    vuong_z: float | None
    p_value: float | None  # two-sided, of Vuong's z
    verdict: str


@dataclasses.dataclass(frozen=True)
class UnevenFit(Result):
    """Uneven units: the share of failures on the most-failing units, and the lemons that fit it (percent)."""

    units: int
    top_units: int
    top_pct: float
    top_even_pct: float  # expected with every unit failing as often
    top_lemons_pct: float  # expected under the fitted lemons (the observed share, unless kappa hit its bound)
    lemon_fraction: float  # q (0: no lemons)
    lemon_factor: float  # kappa (1: no lemons)
    lemons: int  # round(q N), the lemons the model places
    normal_rate_per_hour: float  # lambda_0, a normal unit's failures per up hour


@dataclasses.dataclass(frozen=True)
class TraceFit(Result):
    """The independent model a trace fits (module docstring). ``to_json()``: a plain JSON object, every 95%
    interval as ``<quantity>_ci95_low``/``_high``."""

    units: int
    trace_unit: str  # group or node
    periods: int
    records: int
    node_merges: int
    unit_merges: int
    circle_hours: float  # P = H s
    trace_time_scale: float
    failure: FailureLawFit | None  # None without failures
    repair: RepairFit | None
    uneven: UnevenFit | None
    bursts: BurstFit
    notes: tuple = ()

    def to_json(self) -> dict:
        return _intervals(strict(dataclasses.asdict(self)))


def _intervals(value):
    """Rename every ``*_ci`` / ``*_ci_hours`` pair to ``*_ci95_low`` and ``*_ci95_high``."""
    if isinstance(value, dict):
        out = {}
        for key, v in value.items():
            if isinstance(v, list) and len(v) == 2 and (key.endswith("_ci") or key.endswith("_ci_hours")):
                name = key[: -len("_ci")] if key.endswith("_ci") else key[: -len("_ci_hours")]
                out[f"{name}_ci95_low"], out[f"{name}_ci95_high"] = v
            else:
                out[key] = _intervals(v)
        return out
    if isinstance(value, list):
        return [_intervals(v) for v in value]
    return value


# -------------------------------------------------------------------------------------------- failure law
def up_gaps(trace: UnitPeriods) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(gaps, censored, failures_per_unit, up_hours_per_unit)`` of a unit trace (module docstring)."""
    period = trace.circle_hours
    gaps, censored = [], []
    failures = np.zeros(trace.units, np.int64)
    up = np.zeros(trace.units)
    for g, (a, b) in enumerate(trace.unit_slices()):
        failures[g] = a.size
        up[g] = period - float(np.sum(b - a))
        if a.size == 0:
            censored.append(period)
            continue
        w = max(0.0, float(b[-1]) - period)
        gaps.append(a[0] - w)
        gaps.extend((a[1:] - b[:-1]).tolist())
        if b[-1] < period:
            censored.append(period - float(b[-1]))
    gaps_arr = np.asarray(gaps, np.float64)
    return gaps_arr[gaps_arr > 0], np.asarray(censored, np.float64), failures, up


def fit_failure_law(trace: UnitPeriods) -> FailureLawFit | None:
    """Exponential and Weibull renewal fits over the units' up time (None without failures)."""
    gaps, censored, failures, up = up_gaps(trace)
    n = int(failures.sum())
    if n == 0:
        return None
    expo = fit_exponential(n, float(up.sum()))
    weib = fit_weibull(gaps, censored) if gaps.size >= 2 else None
    return FailureLawFit(n, float(up.sum()), int(gaps.size), int(censored.size), expo, weib)


# -------------------------------------------------------------------------------------------- repair law
def fit_repair_law(lengths_hours) -> RepairFit | None:
    """Exponential and lognormal maximum-likelihood fits of the down periods' lengths, and the verdict
    (module docstring); None without periods."""
    x = np.asarray(lengths_hours, np.float64)
    n = int(x.size)
    if n == 0:
        return None
    if np.any(x <= 0) or not np.all(np.isfinite(x)):
        raise ValueError("repair lengths must be finite and > 0")
    expo = fit_exponential(n, float(x.sum()))
    mean = float(x.mean())
    mean_ci = (1.0 / expo.rate_ci[1], 1.0 / expo.rate_ci[0])
    ll_exp_i = -math.log(mean) - x / mean
    ll_exp = float(ll_exp_i.sum())
    logx = np.log(x)
    mu = float(logx.mean())
    sigma = float(logx.std())
    if n < 2 or sigma <= 1e-9 * max(1.0, abs(mu)):
        verdict = "fixed" if n >= 2 else "neither"
        return RepairFit(n, mean, mean_ci, None, None, None, ll_exp, None, None, None, None, verdict)
    ll_ln_i = -logx - math.log(sigma) - 0.5 * math.log(2 * math.pi) - (logx - mu) ** 2 / (2 * sigma * sigma)
    ll_ln = float(ll_ln_i.sum())
    diff = ll_ln_i - ll_exp_i
    sd = float(diff.std(ddof=1))
    z = (float(diff.sum()) - 0.5 * math.log(n)) / (math.sqrt(n) * sd) if sd > 0 else math.copysign(math.inf, diff.sum())
    p = float(2 * stats.norm.sf(abs(z)))
    verdict = "lognormal" if z > _Z else "exponential" if z < -_Z else "neither"
    return RepairFit(n, mean, mean_ci, mu, sigma, math.exp(mu + sigma * sigma / 2), ll_exp, ll_ln,
                     2.0 * (ll_ln - ll_exp), z, p, verdict)


# -------------------------------------------------------------------------------------------- uneven units
def _binom_pmf(i: np.ndarray, n: int, p: np.ndarray) -> np.ndarray:
    """``P(Bin(n, p) = i)`` for a row ``i`` and a column ``p``, in logs (no overflow at p near 0 or 1)."""
    log_c = special.gammaln(n + 1.0) - special.gammaln(i + 1.0) - special.gammaln(np.maximum(n - i, 0) + 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_pmf = log_c[None, :] + special.xlogy(i[None, :], p) + special.xlog1py(n - i[None, :], -p)
    return np.where(i[None, :] <= n, np.exp(np.nan_to_num(log_pmf, nan=-np.inf)), 0.0)


def expected_top_share(units: int, lemons: int, kappa: float, failures: float, top: int) -> float:
    r"""The expected share of ``failures`` on the ``top`` most-failing of ``units`` units when ``lemons`` of them
    fail ``kappa`` times as often as the others and every unit is watched as long (the module docstring).

    Derivation. Unit counts are independent Poisson: mean ``m_0 = failures / (units - L + L kappa)`` for a
    normal unit and ``kappa m_0`` for a lemon (so the expected total is ``failures``). The sum of the ``top``
    largest counts is ``sum_{x >= 1} min(top, S_x)`` with ``S_x`` the number of units with at least x failures,
    so its expectation is ``sum_{x >= 1} E[min(top, S_x)] = sum_{x >= 1} sum_{i=1}^{top} P(S_x >= i)``;
    ``S_x`` is a sum of two binomials, ``Bin(units - L, P(X_0 >= x)) + Bin(L, P(X_1 >= x))``, whose law up to
    ``top`` is their convolution. The share is that expectation over ``failures`` (a ratio of expectations:
    the total's spread is small beside it)."""
    from scipy.signal import fftconvolve

    L = int(lemons)
    m0 = failures / ((units - L) + L * kappa)
    m1 = kappa * m0
    xmax = int(stats.poisson.isf(1e-13, max(m0, m1))) + 2
    i = np.arange(top)
    expected = 0.0
    for first in range(1, xmax + 1, 256):  # chunks of x keep the memory at 256 x top numbers
        x = np.arange(first, min(first + 256, xmax + 1))
        b0 = _binom_pmf(i, units - L, stats.poisson.sf(x - 1, m0)[:, None])
        b1 = _binom_pmf(i, L, stats.poisson.sf(x - 1, m1)[:, None])
        law = np.clip(fftconvolve(b0, b1, axes=1)[:, :top], 0.0, None)  # P(S_x = 0..top-1)
        expected += float(np.clip(1.0 - np.cumsum(law, axis=1), 0.0, 1.0).sum())  # sum of P(S_x >= 1..top)
    return expected / failures


def fit_uneven(failures, up_hours, top_fraction: float = TOP_FRACTION) -> UnevenFit | None:
    """Uneven units from each unit's failures and up time (module docstring); None without failures."""
    counts = np.asarray(failures, np.float64)
    exposure = np.asarray(up_hours, np.float64)
    units = counts.size
    total = float(counts.sum())
    if total == 0:
        return None
    top = max(1, int(math.floor(units * top_fraction)))
    observed = float(np.sort(counts)[::-1][:top].sum()) / total
    lemons = top if top < units else 0
    even = expected_top_share(units, 0, 1.0, total, top)
    kappa, notes = 1.0, []
    lo, hi = BOUNDS["lemon_factor"][1:3]
    if lemons and observed > expected_top_share(units, lemons, 1.0, total, top):
        def gap(log_k):
            return expected_top_share(units, lemons, math.exp(log_k), total, top) - observed

        if gap(math.log(hi)) < 0:
            kappa = hi
        else:
            kappa = math.exp(optimize.brentq(gap, 0.0, math.log(hi), xtol=1e-6))
    fitted = expected_top_share(units, lemons, kappa, total, top) if kappa != 1.0 else even
    mean_up = float(exposure.mean())
    lam0 = total / ((units - lemons) + lemons * kappa) / mean_up
    return UnevenFit(units, top, 100.0 * observed, 100.0 * even, 100.0 * fitted,
                     lemons / units if kappa != 1.0 else 0.0, float(kappa), lemons if kappa != 1.0 else 0,
                     float(lam0))


# -------------------------------------------------------------------------------------------- the fit
def fit_trace(trace: UnitPeriods, options: TraceFitOptions = TraceFitOptions()) -> TraceFit:
    """Fit the independent model to a unit trace: failure law, repair law, uneven units, bursts and
    neighbours (module docstring)."""
    if not (math.isfinite(options.burst_window_min) and options.burst_window_min > 0):
        raise ValueError(f"the burst window must be a positive number of minutes, got {options.burst_window_min!r}")
    if not 0 < options.top_fraction <= 1:
        raise ValueError(f"top_fraction must be in (0, 1], got {options.top_fraction!r}")
    notes = []
    failure = fit_failure_law(trace)
    if failure is None:
        notes.append("the trace has no down period: no failure law, repair law or uneven units to fit")
    elif failure.weibull is None:
        notes.append("fewer than 2 gaps between failures: no Weibull fit")
    repair = fit_repair_law(trace.lengths_hours)
    _, _, failures, up = up_gaps(trace)
    uneven = fit_uneven(failures, up, options.top_fraction)
    bursts = burst_statistics(trace.unit, trace.start_hours, trace.units, trace.circle_hours,
                              options.burst_window_min / 60.0, options.ring_radius, True, options.ring)
    return TraceFit(trace.units, trace.trace_unit, len(trace), trace.records, trace.node_merges, trace.unit_merges,
                    trace.circle_hours, trace.time_scale, failure, repair, uneven, bursts, tuple(notes))


# -------------------------------------------------------------------------------------------- the model
@dataclasses.dataclass(frozen=True)
class FittedParts:
    """Which fitted parts the model takes.

    Attributes:
      failure_law: ``weibull`` (the renewal fit's shape and mean) or ``exponential``.
      lemons: whether the fitted lemons (q, kappa) are on.
      repair: ``fitted`` (the verdict's law: lognormal, exponential, fixed; ``neither`` takes the
        lognormal), ``exp``, ``lognormal``, ``none`` (no repair), or a ``model.repair.Repair`` to use as it
        is (a fixed repair time, a spare pool: what the replay was given).
    """

    failure_law: str = "weibull"
    lemons: bool = True
    repair: str | Repair = "fitted"

    def __post_init__(self):
        if self.failure_law not in FAILURE_LAWS:
            raise ValueError(f"failure_law must be one of {', '.join(FAILURE_LAWS)}, got {self.failure_law!r}")
        if not isinstance(self.repair, Repair) and self.repair not in FITTED_REPAIRS:
            raise ValueError(f"repair must be a Repair or one of {', '.join(FITTED_REPAIRS)}, got {self.repair!r}")


def _repair(fit: TraceFit, choice) -> Repair | None:
    if isinstance(choice, Repair):
        return choice
    if choice == "none":
        return None
    rep = fit.repair
    if rep is None:
        raise ValueError("the trace has no down period: no repair law to fit (give repair 'none' or a Repair)")
    law = choice
    if law == "fitted":
        law = {"lognormal": "lognormal", "neither": "lognormal", "exponential": "exp", "fixed": "fixed"}[rep.verdict]
    if law == "lognormal" and rep.lognormal_sigma is None:
        law = "fixed"
    if law == "lognormal":
        sigma = min(max(rep.lognormal_sigma, BOUNDS["repair_sigma"][1]), REPAIR_SIGMA_MAX)
        return Repair(60.0 * rep.lognormal_mean_hours, "lognormal", sigma)
    return Repair(60.0 * rep.mean_hours, law)


def fitted_cluster(fit: TraceFit, gpus_per_group: float = 1_000.0, parts: FittedParts = FittedParts(),
                   scenario: Scenario = Scenario()) -> Cluster:
    r"""The fitted independent model as the model's values: a ``Cluster`` of ``fit.units`` groups.

    * Failure law. Exponential: the group MTBF is ``1 / lambda_hat``. Weibull: the renewal fit's shape
      (clipped to the model's range 0.2..10) and mean gap. With lemons on, the normal groups' mean is that
      mean times ``lambda_hat / lambda_0`` (the lemons take their share of the pooled rate; the model's lemons
      add failures to normal groups at ``lambda_0``), and the scenario's lemons are ``q`` and ``kappa``.
      The MTBF is stated through ``FailureModel`` with the cluster itself as the reference
      (``reference_gpus = N x gpus_per_group``, ``system_mtbf_min = group MTBF / N``).
    * Repair: ``parts.repair`` (``FittedParts``); a lognormal keeps its fitted mean
      ``exp(mu + sigma^2 / 2)`` and sigma (clipped to the model's range).
    * ``scenario``: the run's other parts (job-wide failures, ring order, micro-batches), kept; its lemons are
      replaced by the fitted ones (or turned off).
    """
    if fit.failure is None:
        raise ValueError("the trace has no down period: no failure law to fit")
    n = fit.units
    lam_hat = fit.failure.exponential.rate_per_node_hour
    mean_hours = 1.0 / lam_hat
    shape, law = 1.0, "exponential"
    if parts.failure_law == "weibull" and fit.failure.weibull is not None:
        lo, hi = BOUNDS["weibull_shape"][1:3]
        shape, law = min(max(fit.failure.weibull.shape, lo), hi), "weibull"
        mean_hours = fit.failure.weibull.mtbf_hours
    q, kappa = 0.0, 1.0
    if parts.lemons and fit.uneven is not None and fit.uneven.lemons > 0:
        q, kappa = fit.uneven.lemon_fraction, fit.uneven.lemon_factor
        mean_hours *= lam_hat / fit.uneven.normal_rate_per_hour
    group_mtbf_min = 60.0 * mean_hours
    model = FailureModel(law, group_mtbf_min / n, n * float(gpus_per_group), float(gpus_per_group), shape)
    scen = dataclasses.replace(scenario, lemon_fraction=q, lemon_factor=kappa, group_mtbf_min=None)
    return Cluster(n, model, scen, _repair(fit, parts.repair))
