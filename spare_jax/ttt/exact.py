r"""The expected time-to-train interval by interval, with exponential failures and no repair: exact for
Rep+CKPT and CKPT alone, approximate (and labelled so) for SPARe+CKPT. ``closed_form_ttt`` is the entry.

The run follows the reference conventions of whole training runs: every checkpoint interval is ``tau`` of
computing followed by a blocking checkpoint C; the computing-time counter restarts at each checkpoint and at
each global restart; the last interval is partial and ends with a final checkpoint included in the TTT; a
wipe-out (or a job-wide failure) during an interval or its checkpoint loses the interval, costs a restart R
and the interval starts again from its beginning with every group up.

Epochs. With exponential group clocks and no repair, a restart leaves every group up with a fresh clock
(memorylessness; a clock that fires during R is replaced at its end), so the epochs (restart to wipe-out) are
i.i.d. and begin at an interval boundary. Let ``S(t) = P(U > t)`` be the law of an epoch's uptime. The
failure order is a uniform random permutation, independent of the sojourn times (k groups down: rate
``(N - k) lambda``), so the number of groups down at time t is ``k(t) ~ Binomial(N, 1 - e^{-lambda t})``,
independent of the order, and

.. math:: S(t) = e^{-\mu t} \sum_k P(T > k)\, P(k(t) = k)

(``mu`` the job-wide rate; ``P(T > k)`` the exact wipe-out survival of the placement). Its integral is exact
too: the time spent with k groups down before t has ``\int_a^b P(k(t) = k)\,dt = (P(k(b) > k) - P(k(a) > k))
/ ((N - k) \lambda)``, and with ``mu > 0`` (``x = 1 - e^{-\lambda t}``, ``e^{-\mu t} = (1 - x)^{\mu/\lambda}``)

.. math:: \int_a^b P(k(t) = k) e^{-\mu t} dt = \binom{N}{k} \frac{B(k+1, N-k+\nu)}{\lambda}
          \big[I_{x_b}(k+1, N-k+\nu) - I_{x_a}(k+1, N-k+\nu)\big], \quad \nu = \mu / \lambda.

Constant work rate (``rep``: 1/r; ``none``: 1). The computing time needed is ``r W``, so the schedule is
deterministic: ``K = ceil(r W / tau)`` intervals of wall length ``T = tau + C`` except the last,
``L' = r W - (K - 1) tau + C``. An epoch that began at interval i and has survived j intervals is at age
``jT`` at the start of interval ``i + j``; nothing else about it matters. Let ``f_i`` be the expected number
of epochs that begin at interval i (the run's start, and every restart after a wipe-out during interval i).
An epoch of age jT in a full interval is killed there with probability ``p_j = S(jT) - S((j+1)T)`` and spends
``I_j = \int_{jT}^{(j+1)T} S`` in it (in expectation, its computing and checkpoint time up to the kill); in
the last interval ``q_j = S(jT) - S(jT + L')`` and ``I'_j = \int_{jT}^{jT + L'} S``. Hence the renewal
equations

.. math:: f_i = [i = 1] + \sum_{j=0}^{i-1} f_{i-j}\, p_j \quad (i < K), \qquad
          f_K = [K = 1] + \sum_{j=0}^{K-1} f_{K-j}\, q_j,

(solved for ``f_i`` with the j = 0 term on the left: an IIR filter), and the expected time-to-train

.. math:: E[\mathrm{TTT}] = \sum_{i=1}^{K-1} \sum_{j=0}^{i-1} f_{i-j} (I_j + R\, p_j)
          + \sum_{j=0}^{K-1} f_{K-j} (I'_j + R\, q_j),

with ``sum_i f_i - 1`` the expected number of restarts. No approximation is made beyond two truncations:
the sums over j stop at ``t_end``, beyond which ``S < 1e-16`` (``S_TAIL``), and the sums over k drop the
``P(T > k) < 1e-30`` (``K_TAIL``); both change the TTT by less than 1e-12 of itself. With constant ``S(t) =
e^{-\Lambda t}`` (``none``) it reduces to ``none_ttt_exact``'s ``(K-1) g(T) + g(L')`` (tested).

Cost: ``P(T > k)`` once per (N, r) (``theory.survival_exact``); per tau, ``S`` and its integral at the
``2 t_end / T`` epoch ages (``O(N)`` each: a binomial pmf and its upper tails; with ``mu > 0`` incomplete
beta values over the ``k`` with ``P(T > k) > 1e-30``), and the filter, ``O(K t_end / T)`` with
``K = r W / tau``. About 10 ms per tau at N = 600, r = 6.

``spare`` (``spare_ttt_approx``). Its work rate 1/d depends on which groups are down, so the work an
interval commits is random and correlated with surviving it (deep states precede wipe-outs), and the end of
the run (the work reaching W) falls on no fixed interval. Two steps: (1) the committed work per epoch
``E[Y]`` from the joint law of the depth and the survival (``spare_committed_work``, with
``theory.chain.depth_chain_joint``: exact one failure apart, a (failures, depth) chain beyond; within 1e-4
of enumeration at N = 16); (2) the form above at the constant work rate ``E[Y] / E[committed computing]``,
which keeps the cut-short last epoch that the renewal-reward ratio ``W (E[U] + R) / E[Y]`` drops. The one
further approximation is that the last epoch of a run commits work at that average rate. Measured against
whole runs in docs/validation.md (N = 16, r = 3: -0.04%, where the renewal-reward form is +1.5%).

Why ``spare`` is not exact here. An exact form would carry across each checkpoint the failed set (the chain
keeps its size and depth only: a state aggregation, whose error on E[Y] is 5e-5 at N = 16 against
enumeration) and the committed work, a continuous quantity whose law decides in which interval the run ends
(the form keeps its mean rate only). Neither error has a bound here; both are measured (tests and
docs/validation.md: within 0.1% and 4 standard errors of whole runs at N = 16 and 600, m = 1 and 4). So it
is ``closed_form_approx``: ``closed_form_answers`` (the router's interval form) lets it choose r* and tau*, and
Monte Carlo runs at that optimum give the answer where they are made.

Cost of ``spare``: the chain once per (N, r, m, clocks, job-wide rate), kept for the process
(``_law_and_joint``: every tau, C, R and W reuse it): ``spare_form_cells`` = (levels) x N x N x Q x r^2,
about 3e-8 s a cell on one shared core (N = 600: 10 s at r = 6, 45 s at r = 8; refused above
``SPARE_FORM_MAX_CELLS``, where the renewal-reward form answers); then per tau ``spare_committed_work``,
O(t_end / T x nodes x k_max x e) with e the failures a gap holds (0.2 s at N = 600, r = 6), and the renewal sum
above, O(K t_end / T) with K = W / (rate tau).
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np
from scipy.signal import fftconvolve, lfilter
from scipy.special import betainc, betaln, gammaln

from .. import theory
from ..model.cluster import Cluster
from ..model.failures import FailureModel
from ..model.training import Training
from ..results import Report
from ..model.placement import check_groups_redundancy
from .config import scheme_placement
from .router import (CLOSED_FORM_SCHEMES, EXACT_SCHEMES, SPARE_FORM_MAX_CELLS,  # noqa: F401 (the form's reach)
                     Problem, interval_form, interval_form_gap, spare_form_affordable, spare_form_cells)

S_TAIL = 1e-16  # S(t) below this beyond t_end (relative to S(0) = 1)
K_TAIL = 1e-30  # P(T > k) below this is dropped from the sums over k


@dataclasses.dataclass(frozen=True)
class UptimeLaw:
    """The law of an epoch's uptime U for exponential clocks: ``P(T > k)`` (k = 0..k_max), the group rate
    ``lam`` and the job-wide rate ``mu`` (per minute), and ``t_end`` beyond which ``S < S_TAIL``."""

    groups: int
    lam: float
    mu: float
    surv_k: np.ndarray
    t_end: float

    def _x(self, t):
        return -np.expm1(-self.lam * np.asarray(t, np.float64))

    def _pmf(self, t) -> np.ndarray:
        """``P(k(t) = i)``, i = 0..N, for each t (rows): the Binomial(N, x(t)) pmf in log space."""
        n = self.groups
        i = np.arange(n + 1, dtype=np.float64)
        lt = self.lam * np.asarray(t, np.float64)[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            log_x = np.where(lt > 0, np.log(-np.expm1(-lt)), -np.inf)
            log_pmf = (gammaln(n + 1) - gammaln(i + 1) - gammaln(n - i + 1) + np.where(i > 0, i * log_x, 0.0)
                       - (n - i) * lt)
        return np.exp(log_pmf)

    def survival_and_cumulative(self, t) -> tuple[np.ndarray, np.ndarray]:
        r"""``(S(t), \int_0^t S)`` at each t: ``S = e^{-mu t} sum_k P(T > k) P(k(t) = k)``; the integral
        ``sum_k P(T > k) P(k(t) > k) / ((N - k) lambda)`` (upper tails summed from the top: no cancellation),
        or with ``mu > 0`` the incomplete beta form of the module docstring."""
        t = np.atleast_1d(np.asarray(t, np.float64))
        n, kk = self.groups, self.surv_k.size
        k = np.arange(kk, dtype=np.float64)
        surv, cum = np.empty(t.shape), np.empty(t.shape)
        for lo in range(0, t.size, 1024):
            part = t[lo: lo + 1024]
            pmf = self._pmf(part)
            surv[lo: lo + 1024] = pmf[:, :kk] @ self.surv_k * np.exp(-self.mu * part)
            if self.mu == 0.0:
                upper = np.cumsum(pmf[:, ::-1], axis=1)[:, ::-1]  # P(k(t) >= i)
                cum[lo: lo + 1024] = upper[:, 1: kk + 1] @ (self.surv_k / ((n - k) * self.lam))
            else:
                nu = self.mu / self.lam
                weight = np.exp(gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1) + betaln(k + 1, n - k + nu))
                x = -np.expm1(-self.lam * part)[:, None]
                cum[lo: lo + 1024] = betainc(k + 1, n - k + nu, x) @ (weight * self.surv_k / self.lam)
        return surv, cum

    def survival(self, t) -> np.ndarray:
        """``S(t) = P(U > t)``."""
        return self.survival_and_cumulative(t)[0]

    def integral(self, a, b) -> np.ndarray:
        r"""``\int_a^b S(t) dt`` (elementwise, a <= b)."""
        a, b = np.broadcast_arrays(np.atleast_1d(np.asarray(a, np.float64)), np.asarray(b, np.float64))
        cum = self.survival_and_cumulative(np.concatenate([a, b]))[1]
        return np.maximum(cum[a.size:] - cum[: a.size], 0.0)


def uptime_law(scheme: str, groups: int, redundancy: int, model: FailureModel = FailureModel(),
               job_rate: float = 0.0) -> UptimeLaw:
    """The epoch uptime law of ``scheme`` (placement ``scheme_placement``) with exponential group clocks
    and job-wide interruptions at ``job_rate`` per minute."""
    if model.distribution != "exponential":
        raise ValueError("the exact time-to-train needs exponential failures (a Weibull epoch is not "
                         "memoryless): use the renewal-reward closed form or whole training runs")
    n, r = check_groups_redundancy(groups, redundancy)
    kind, r = scheme_placement(scheme, n, r)
    job_rate = float(job_rate)
    if not (math.isfinite(job_rate) and job_rate >= 0):
        raise ValueError(f"job_rate must be a finite number >= 0, got {job_rate!r}")
    surv = np.asarray(theory.survival_exact(kind, n, r), np.float64)[:n]  # P(T > k), k = 0..N-1 (P(T > N) = 0)
    keep = np.nonzero(surv > K_TAIL)[0]
    surv = surv[: int(keep.max()) + 1] if keep.size else surv[:1]
    lam = float(model.group_rate_per_min)
    law = UptimeLaw(n, lam, job_rate, surv, 0.0)
    t_end = max(float(np.sum(surv / ((n - np.arange(surv.size)) * lam))), 1e-9)  # E[U] without job failures
    while law.survival([t_end])[0] > S_TAIL:
        t_end *= 2.0
    return dataclasses.replace(law, t_end=t_end)


@functools.lru_cache(maxsize=64)
def _law_and_joint(scheme: str, n: int, r: int, m: int, model: FailureModel, job_rate: float):
    """The epoch law and, for ``spare``, the (failures, depth) chain's joint law (None otherwise): what the
    form needs that does not depend on tau, C, R or W, kept per (scheme, N, r, m, clocks, job-wide rate)
    so that a search over tau, and the costs of a sensitivity table, reuse it."""
    law = uptime_law(scheme, n, r, model, job_rate)
    if scheme != "spare":
        return law, None
    from ..theory.chain import depth_chain_joint

    joint = depth_chain_joint(n, r, m, kmax=law.surv_k.size)
    joint.setflags(write=False)
    return law, joint


def interval_renewal_ttt(law: UptimeLaw, taus, ckpt: float, restart: float, compute_min: float):
    """The exact expected TTT (minutes) and expected restarts for each tau: ``compute_min`` minutes of
    computing in intervals of tau, each followed by a checkpoint C, under the epoch law ``law`` (see the
    module docstring). Returns ``(ttt_min, restarts)`` arrays."""
    taus = np.atleast_1d(np.asarray(taus, np.float64))
    ttt, restarts = np.empty(taus.size), np.empty(taus.size)
    for i, tau in enumerate(taus):
        ttt[i], restarts[i] = _one_tau(law, float(tau), float(ckpt), float(restart), float(compute_min))
    return ttt, restarts


def _one_tau(law: UptimeLaw, tau: float, ckpt: float, restart: float, compute: float) -> tuple[float, float]:
    if not (math.isfinite(tau) and tau > 0):
        raise ValueError(f"ckpt_interval (tau) must be a positive number of minutes, got {tau!r}")
    period = tau + ckpt
    k = max(1, int(math.ceil(compute / tau - 1e-9)))
    last = compute - (k - 1) * tau + ckpt  # the last interval's wall length, with the final checkpoint
    jmax = min(k, int(math.ceil(law.t_end / period)) + 1)  # epoch ages beyond t_end: S < S_TAIL
    ages = np.arange(jmax + 1) * period
    s_both, cum_both = law.survival_and_cumulative(np.concatenate([ages, ages[:jmax] + last]))
    s_age, s_last = s_both[: jmax + 1], s_both[jmax + 1:]
    if s_last[0] <= 0.0:
        return math.inf, math.inf
    # full intervals: kill probability and expected time at each age; the last interval likewise (at age 0
    # the survival 1 - p_0 = S(T) and 1 - q_0 = S(L') are taken directly: no cancellation when they are tiny)
    p = s_age[:-1] - s_age[1:]
    q = s_age[:-1] - s_last
    survive_full, survive_last = float(s_age[1]), float(s_last[0])
    cum_age, cum_last = cum_both[: jmax + 1], cum_both[jmax + 1:]
    bounds = np.maximum(np.concatenate([np.diff(cum_age), cum_last - cum_age[:-1]]), 0.0)
    cost_full = bounds[:jmax] + restart * p
    cost_last = bounds[jmax:] + restart * q
    if k == 1:
        f_last = 1.0 / survive_last  # only fresh epochs: geometric retries, 1 / P(success)
        return f_last * cost_last[0], f_last - 1.0
    if survive_full <= 0.0:
        return math.inf, math.inf
    # f_1..f_{K-1}: (1 - p_0) f_i - sum_{j>=1} p_j f_{i-j} = [i = 1]
    f = renewal_solution(np.concatenate([[survive_full], -p[1:]]), k - 1)
    # full intervals: sum_i sum_j f_{i-j} c_j = sum_m f_m C_{K-1-m}, C the cumulative cost (zero past jmax)
    ccum = np.cumsum(cost_full)
    idx = np.minimum(k - 1 - np.arange(1, k), jmax - 1)  # K-1-m for m = 1..K-1
    full = float(np.dot(f, ccum[idx]))
    # the last interval: epochs reach it at age j >= 1 (begun at K - j) or begin there
    js = np.arange(1, jmax)
    js = js[js <= k - 1]
    from_before = float(np.dot(f[k - 1 - js], q[js]))  # f_{K-j} = f[K-j-1]
    f_last = from_before / survive_last
    cont = float(np.dot(f[k - 1 - js], cost_last[js]))
    total = full + cont + f_last * cost_last[0]
    return total, float(f.sum() + f_last - 1.0)


RENEWAL_FILTER_MAX_CELLS = 2e7  # beyond (terms x denominator length), the series is inverted with FFTs


def renewal_solution(den: np.ndarray, terms: int) -> np.ndarray:
    """The first ``terms`` coefficients of ``1 / D(z)``, ``D(z) = sum_j den[j] z^j`` (``den[0] > 0``): the
    renewal equations' impulse response. A recursive filter (``terms x len(den)`` steps) where that is
    small; otherwise Newton's iteration for the power-series inverse, ``g <- g (2 - D g) mod z^2m``, with
    FFT products: O(terms log terms), so an interval far shorter than the epochs (millions of intervals
    per epoch) costs seconds, not hours."""
    den = np.asarray(den, np.float64)
    if terms * den.size <= RENEWAL_FILTER_MAX_CELLS:
        impulse = np.zeros(terms)
        impulse[0] = 1.0
        return lfilter([1.0], den, impulse)
    g, have = np.array([1.0 / den[0]]), 1
    while have < terms:
        have = min(2 * have, terms)
        correction = -fftconvolve(den[:have], g)[:have]
        correction[0] += 2.0
        g = fftconvolve(g, correction)[:have]
    return g


def _check_applies(cluster: Cluster, scheme: str) -> None:
    """Raise ValueError unless the form applies (``ttt.router.interval_form_gap``: ``spare``, ``rep`` or
    ``none``, exponential clocks, no repair, no scenario part beyond job-wide failures, and micro-batches for
    ``spare``), with the reason the part that it does not cover gives."""
    why = interval_form_gap(cluster, scheme)
    if why is not None:
        raise ValueError(why)


def closed_form_applies(cluster: Cluster, scheme: str) -> bool:
    """Whether ``closed_form_ttt`` answers for this cluster and scheme (exactly for rep and none)."""
    return interval_form_gap(cluster, scheme) is None


def exact_applies(cluster: Cluster, scheme: str) -> bool:
    """Whether ``closed_form_ttt`` is exact here (``rep`` and ``none``; ``spare`` is approximate)."""
    return scheme in EXACT_SCHEMES and closed_form_applies(cluster, scheme)


def closed_form_answers(cluster: Cluster, policy) -> str | None:
    """Whether the interval-by-interval closed form (``ttt.exact.closed_form_ttt``) gives the expected
    time-to-train of ``policy`` on ``cluster``, and how: ``"closed_form"`` (``rep``, ``none``, and ``spare``
    at r = 1: exact), ``"closed_form_approx"`` (``spare``: the (failures, depth) chain), or None where it does not
    apply: the router's ``interval_form`` (every part of the cluster and the policy covered by the form; for
    ``spare`` a size whose chain is computed in about a minute, ``ttt.exact.spare_form_affordable``).
    Checkpointing alone with repair but no finite spare pool is answered as without repair."""
    return interval_form(Problem(cluster, policy))


def closed_form_ttt(cluster: Cluster, training: Training, scheme: str, redundancy: int,
                    tau: float | None = None, tau_hint: float | None = None) -> Report:
    """The expected time-to-train of ``scheme`` at redundancy r on ``cluster`` with the costs of
    ``training``, at checkpoint interval ``tau`` (minutes of computing; None: the training's, else the
    form's optimum, searched from ``tau_hint`` when given: a log grid over x 0.5 .. 2 of it, then a golden
    section; else from Daly's interval). Exponential clocks, no repair; job-wide failures allowed. ``rep`` and ``none``: exact
    (``method`` = ``closed_form``); ``spare``: ``spare_ttt_approx`` (``closed_form_approx``) with the
    scenario's micro-batches. Returns the TTT (hours), TTT/W, goodput, the expected restarts, the
    availability (uptime / wall), tau and the mean epoch uptime."""
    _check_applies(cluster, scheme)
    stalls = training.coverage(scheme).reason  # (checkpointing alone: nothing stalls)
    if stalls is not None:
        raise ValueError(stalls)
    n, model = cluster.groups, cluster.model
    _, r = scheme_placement(scheme, n, redundancy)
    m = cluster.scenario.microbatches if scheme == "spare" else 1
    law, joint = _law_and_joint(scheme, n, r, m, model,
                                float(cluster.scenario.job_rate_per_min(n, model.group_mtbf_min)))
    restart, ckpt = training.restart_for(cluster.gpus), training.ckpt_cost_min
    work = training.work_hours * 60.0
    if scheme == "spare":
        evaluate = lambda taus: spare_ttt_approx(law, joint, taus, ckpt, restart, work, r)  # noqa: E731
    else:
        evaluate = lambda taus: interval_renewal_ttt(law, taus, ckpt, restart, r * work)  # noqa: E731
    tau = training.ckpt_interval_min if tau is None else tau
    if tau is None:
        tau = best_tau(law, evaluate, ckpt, restart, start=tau_hint)[0]
    ttt, restarts = (float(v[0]) for v in evaluate([tau]))
    uptime = ttt - restarts * restart
    return Report({"ttt_hours": ttt / 60.0, "ttt_over_w": ttt / 60.0 / training.work_hours,
                   "goodput": work / ttt, "expected_restarts": restarts, "availability": uptime / ttt,
                   "ckpt_interval_min": float(tau), "restart_min": restart,
                   "mean_uptime_min": float(law.integral(0.0, law.t_end)[0]),
                   "method": "closed_form" if scheme in EXACT_SCHEMES else "closed_form_approx"})


def best_tau(law: UptimeLaw, evaluate, ckpt: float, restart: float, points: int = 16,
             steps: int = 16, start: float | None = None) -> tuple[float, float]:
    """(tau, TTT minutes) minimising ``evaluate(taus) -> (ttt, restarts)``: a log grid from Daly's interval
    / 10 to x 6 (with ``start``, a near optimum found otherwise: 9 points from x 0.5 to x 2 of it, and 12
    golden steps), then a golden-section search in log tau between the best point's neighbours (the TTT is
    piecewise smooth in tau, with a small jump where the interval count changes; the best value seen is
    kept)."""
    if start is not None and math.isfinite(start) and start > 0:
        points, steps = 9, 12
        taus = np.exp(np.linspace(math.log(max(0.05, start / 2)), math.log(max(0.1, start * 2)), points))
    else:
        mean = float(law.integral(0.0, law.t_end)[0])
        daly = math.sqrt(2 * max(ckpt, 1e-9) * (mean + restart))
        low = max(0.05, daly / 10)
        taus = np.exp(np.linspace(math.log(low), math.log(max(daly * 6, 2 * low)), points))
    vals = evaluate(taus)[0]
    best = int(np.argmin(vals))
    lo, hi = math.log(taus[max(best - 1, 0)]), math.log(taus[min(best + 1, points - 1)])
    best_tau, best_val = float(taus[best]), float(vals[best])
    one = lambda x: float(evaluate([math.exp(x)])[0][0])  # noqa: E731
    g = (math.sqrt(5) - 1) / 2
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    fa, fb = one(a), one(b)
    for _ in range(steps):
        for x, v in ((a, fa), (b, fb)):
            if v < best_val:
                best_tau, best_val = math.exp(x), v
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - g * (hi - lo)
            fa = one(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + g * (hi - lo)
            fb = one(b)
    return best_tau, best_val


def exact_best_tau(law: UptimeLaw, ckpt: float, restart: float, compute_min: float) -> tuple[float, float]:
    """(tau, TTT minutes) minimising the exact constant-rate form (``best_tau``)."""
    return best_tau(law, lambda taus: interval_renewal_ttt(law, taus, ckpt, restart, compute_min), ckpt, restart)


# ---------------------------------------------------------------------------------------------------------
# spare: an approximation (see the module docstring and ``spare_ttt_approx``)

QUAD_NODES = 24  # Gauss-Legendre nodes per computing window for E[Y]
SPARE_MAX_INTERVALS = 20_000  # intervals of an epoch summed for E[Y]; beyond (tau tiny) the form is not used


def spare_committed_work(law: UptimeLaw, joint: np.ndarray, tau: float, ckpt: float,
                         nodes: int = QUAD_NODES, max_intervals: int | None = None) -> tuple[float, float]:
    r"""``(E[Y], E[committed computing])`` of one ``spare`` epoch at interval tau: ``E[Y] = \sum_i \int
    E[1/d(u); U > c_i] du`` over the computing window of interval i (checkpoint completing at ``c_i = iT``),
    with ``E[1/d(u); U > c] = e^{-mu c} \sum_{k <= k'} P(k(u) = k) P(k(c) = k' | k(u) = k) D[k, k']``
    (``joint`` = ``theory.chain.depth_chain_joint``), the integral by Gauss-Legendre; the committed
    computing time is ``tau \sum_i S(iT)``. ``max_intervals``: the most intervals a run holds (an epoch
    longer than the run is cut there: the intervals beyond it are never computed)."""
    period = tau + ckpt
    x, w = np.polynomial.legendre.leggauss(nodes)
    kk = joint.shape[0]
    n = law.groups
    k = np.arange(kk, dtype=np.float64)
    gap = ckpt + tau * (1.0 - x) / 2.0  # c_i - u at each node: the same for every interval
    # V[node, k] = sum_{k'} P(k' - k more failures in the gap | k down) D[k, k'], over e = k' - k up to the
    # mean + 12 standard deviations + 30 of the most failures a gap holds (the binomial tail beyond < 1e-25)
    most = n * law.lam * period
    e_n = int(min(kk, math.ceil(most + 12.0 * math.sqrt(most) + 30.0)))
    extra = np.arange(e_n, dtype=np.float64)[None, :]
    left = n - k[:, None]
    idx = np.arange(kk)[:, None] + np.arange(e_n)[None, :]
    live = (idx < kk) & (extra <= left)
    dk = np.where(live, joint[np.arange(kk)[:, None], np.minimum(idx, kk - 1)], 0.0)
    with np.errstate(invalid="ignore"):
        log_binom = np.where(live, gammaln(left + 1) - gammaln(extra + 1) - gammaln(np.maximum(left - extra, 0) + 1),
                             -np.inf)
    v = np.zeros((nodes, kk))
    for i_node, h in enumerate(gap):
        lh = law.lam * h
        with np.errstate(invalid="ignore", over="ignore"):
            pmf = np.exp(log_binom + extra * math.log(-math.expm1(-lh)) - (left - extra) * lh)
        v[i_node] = np.where(live, pmf * dk, 0.0).sum(axis=1)
    intervals = max(1, int(math.ceil(law.t_end / period)))
    if max_intervals is not None:
        intervals = max(1, min(intervals, int(max_intervals)))
    if intervals > SPARE_MAX_INTERVALS:
        raise ValueError(f"spare's closed form sums the epoch's intervals: {intervals:,} at tau = {tau:g} min is "
                         f"over {SPARE_MAX_INTERVALS:,} (the renewal-reward form answers)")
    starts = np.arange(intervals) * period
    u = (starts[:, None] + tau * (x[None, :] + 1.0) / 2.0).ravel()
    pmf_u = law._pmf(u)[:, :kk].reshape(intervals, nodes, kk)
    g = np.einsum("inj,nj->in", pmf_u, v) * np.exp(-law.mu * (starts + period))[:, None]
    work = float((g * w[None, :]).sum() * tau / 2.0)
    committed = float(tau * law.survival(starts + period).sum())
    return work, committed


def spare_ttt_approx(law: UptimeLaw, joint: np.ndarray, taus, ckpt: float, restart: float,
                     work_min: float, depth_max: float) -> tuple[np.ndarray, np.ndarray]:
    """``spare``'s TTT (minutes) and expected restarts for each tau: the interval renewal of a constant work
    rate equal to the epoch's committed work per committed computing minute, ``E[Y] / E[committed
    computing]`` (``spare_committed_work``, over the intervals a run can hold at the deepest depth
    ``depth_max``), over spare's exact uptime law."""
    taus = np.atleast_1d(np.asarray(taus, np.float64))
    ttt, restarts = np.empty(taus.size), np.empty(taus.size)
    for i, tau in enumerate(taus):
        work, committed = spare_committed_work(law, joint, float(tau), ckpt,
                                               max_intervals=math.ceil(work_min * depth_max / tau) + 1)
        if work <= 0:
            ttt[i] = restarts[i] = math.inf
            continue
        rate = work / committed
        ttt[i], restarts[i] = (v[0] for v in interval_renewal_ttt(law, [tau], ckpt, restart, work_min / rate))
    return ttt, restarts
