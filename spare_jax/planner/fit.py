r"""Fit a failure log by maximum likelihood (docs/planning.md#failure-logs): exponential and Weibull, with 95%
intervals.

Log format (``read_failure_log``)
---------------------------------
A UTF-8 CSV text file. Blank lines are skipped; a line whose first non-blank character is ``#`` is a
comment, except the two *directives* ``# window_hours = H`` (the observation window, hours) and
``# nodes = M`` (how many nodes were watched). The first other line is the header, exactly the two
columns ``node,time_hours`` (spaces around names allowed). Every later line is one record:

* ``NODE,T`` -- node ``NODE`` (any non-empty name without a comma) failed at ``T`` hours after the start
  of the window (a finite number, ``0 < T <= window``);
* ``NODE,`` -- node ``NODE`` was watched and never failed (so it counts in the exposure).

Every node is watched over the same window ``[0, H]``. ``H`` is, in order of precedence, the
``window_hours`` argument (``--log-window-hours``), the directive, or the last failure time in the file.
The number of watched nodes ``M`` is the ``nodes`` argument (``--log-nodes``), the directive, or the number
of distinct node names in the file. **A log of failures alone does not show the nodes that never
failed**: list them with empty times or give ``M``, or the exposure (and the MTBF) is underestimated.
A failed node after a failure is repaired or replaced at once and keeps its name (failure times of one
node are the events of one renewal process). Refused with a ``ValueError`` naming the line: a wrong
header, a record without exactly two fields, an empty node name, a time that is not a finite number
> 0, a time beyond the window, two failures of one node at the same time, a malformed directive;
and refused naming the setting: a window or node count too small for the records, no failure at all.

Exponential fit
---------------
Failures of the M nodes form a Poisson process of rate ``lambda`` per node-hour; with n failures in the
exposure ``E = M H`` node-hours, ``lambda_hat = n / E`` and the exact (Garwood, chi-square) interval for a
time-truncated Poisson count, ``[chi2_{a/2}(2n) / 2E, chi2_{1-a/2}(2n + 2) / 2E]``, inverted for the MTBF
``1 / lambda``.

Weibull fit (renewal per node)
------------------------------
Each node's times between failures are i.i.d. Weibull(shape k, scale s), the first measured from 0 (the
node is taken as new, or just repaired, at the start of the window: an ordinary renewal process), and the
time from its last failure (or from 0) to H is right-censored. With ``x_i`` the n observed gaps and
``c_j`` the M censored ones, the log-likelihood is

.. math::  \ell(k, s) = n \log k - n k \log s + (k - 1) \sum_i \log x_i - \sum_{y \in x \cup c} (y/s)^k.

For fixed k the scale is ``s(k)^k = \sum y^k / n`` (setting ``d\ell/ds = 0``), leaving the profile
``\ell_p(k) = n \log k - n \log(\sum y^k / n) + (k-1) \sum \log x_i - n``, maximised over ``log k`` by a
bounded scalar search. The node MTBF is the mean gap ``mu = s \Gamma(1 + 1/k)`` (the renewal rate is
``1 / mu``). Intervals are profile-likelihood-ratio intervals, ``{theta : 2 (\ell_max - \ell_p(theta))
<= \chi^2_1(0.95) = 3.84}``: for k directly, and for mu by profiling out k at each fixed mu
(``s = mu / \Gamma(1 + 1/k)``). The likelihood-ratio test of k = 1 (the exponential law, the same renewal
model) is reported as a p-value.
"""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
from scipy import optimize, special, stats

from ..model.bounds import check as check_bound
from ..results import Result

LEVEL = 0.95
_LR_CUT = float(stats.chi2.ppf(LEVEL, 1)) / 2.0  # 1.92: half the chi-square(1) quantile
_LOG_K_RANGE = (math.log(0.05), math.log(20.0))
_DIRECTIVE = re.compile(r"#\s*(window_hours|nodes)\s*[=:]\s*(\S+)\s*$")
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", re.ASCII)


@dataclasses.dataclass(frozen=True)
class FailureLog:
    """A parsed log: per node, its sorted failure times (hours) over the window ``[0, window_hours]``."""

    times: dict  # node name -> tuple of failure times (hours), ascending
    window_hours: float
    nodes: int  # nodes watched (>= len(times))
    path: str = ""
    guessed: tuple = ()  # ("window_hours", "nodes"): taken from the records, neither given nor in a directive

    @property
    def failures(self) -> int:
        return sum(len(t) for t in self.times.values())


def _positive(text: str, what: str, where: str, integer: bool = False):
    text = text.strip()
    if not _NUMBER.fullmatch(text):
        raise ValueError(f"{where}: {what} must be a {'whole' if integer else 'finite'} number, got {text!r}")
    value = float(text)
    if not math.isfinite(value) or value <= 0 or (integer and not value.is_integer()):
        raise ValueError(f"{where}: {what} must be a {'whole number' if integer else 'number'} > 0, got {text!r}")
    return int(value) if integer else value


def parse_failure_log(text: str, window_hours: float | None = None, nodes: int | None = None,
                      path: str = "<log>") -> FailureLog:
    """Parse the text of a failure log (format in the module docstring); ValueError naming the line."""
    header_seen = False
    times: dict[str, list[tuple[float, int]]] = {}
    directives: dict[str, float] = {}
    for lineno, raw in enumerate(text.splitlines(), start=1):
        where = f"{path} line {lineno}"
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            m = _DIRECTIVE.match(line)
            if m:
                key = m.group(1)
                if key in directives:
                    raise ValueError(f"{where}: {key} given twice")
                value = _positive(m.group(2), key, where, integer=(key == "nodes"))
                # the same bounds as the flags --log-nodes / --log-window-hours (a node count of 10^11 would
                # otherwise be allocated, one censored time per node)
                directives[key] = check_bound("log_nodes" if key == "nodes" else "log_window_hours", value,
                                              f"{where}: {key}")
            elif re.match(r"#\s*(window_hours|nodes)\b", line):
                raise ValueError(f"{where}: malformed directive {line!r} (expected '# window_hours = H' or "
                                 "'# nodes = M')")
            continue
        fields = [f.strip() for f in line.split(",")]
        if not header_seen:
            if fields != ["node", "time_hours"]:
                raise ValueError(f"{where}: the header must be 'node,time_hours', got {line!r}")
            header_seen = True
            continue
        if len(fields) != 2:
            raise ValueError(f"{where}: expected 2 fields 'node,time_hours', got {len(fields)}: {line!r}")
        node, t = fields
        if not node:
            raise ValueError(f"{where}: empty node name")
        entry = times.setdefault(node, [])
        if t == "":
            continue  # a node watched without failures
        entry.append((_positive(t, "time_hours", where), lineno))
    if not header_seen:
        raise ValueError(f"{path}: no header line 'node,time_hours'")
    last = max((t for v in times.values() for t, _ in v), default=None)
    if last is None:
        raise ValueError(f"{path}: no failure in the log (an MTBF needs at least one failure)")
    window = window_hours if window_hours is not None else directives.get("window_hours", last)
    window = float(window)
    if not (math.isfinite(window) and window > 0):
        raise ValueError(f"window_hours must be a finite number > 0, got {window!r}")
    out = {}
    for node, entries in times.items():
        entries.sort()
        for (t0, _), (t1, line1) in zip(entries, entries[1:]):
            if t1 == t0:
                raise ValueError(f"{path} line {line1}: node {node!r} fails twice at {t1:g} h")
        for t, line in entries:
            if t > window:
                raise ValueError(f"{path} line {line}: time {t:g} h is beyond the observation window "
                                 f"({window:g} h; `window_hours` / '# window_hours')")
        out[node] = tuple(t for t, _ in entries)
    count = nodes if nodes is not None else directives.get("nodes", len(out))
    if isinstance(count, bool) or int(count) != count or count < 1:
        raise ValueError(f"nodes must be a whole number >= 1, got {count!r}")
    if count < len(out):
        raise ValueError(f"nodes ({int(count)}) is fewer than the {len(out)} distinct nodes in {path}")
    guessed = tuple(k for k, given in (("window_hours", window_hours), ("nodes", nodes))
                    if given is None and k not in directives)
    return FailureLog(out, window, int(count), path, guessed)


def read_failure_log(path: str, window_hours: float | None = None, nodes: int | None = None) -> FailureLog:
    """Read and parse a failure log file (``parse_failure_log``); ValueError when unreadable."""
    from ..model.inputfile import read_text

    # a regular file only (a FIFO would wait for a writer); a byte-order mark (spreadsheet exports) is dropped
    text = read_text(path, "`failure_log`", encoding="utf-8-sig")
    return parse_failure_log(text, window_hours, nodes, path)


def gaps(log: FailureLog) -> tuple[np.ndarray, np.ndarray]:
    """(observed gaps between failures, censored times from the last failure to the window end), hours;
    one censored time per watched node (``window`` for nodes that never failed)."""
    observed, censored = [], []
    for t in log.times.values():
        arr = np.asarray(t, np.float64)
        observed.append(np.diff(np.concatenate([[0.0], arr])))
        censored.append(log.window_hours - (arr[-1] if arr.size else 0.0))
    censored.extend([log.window_hours] * (log.nodes - len(log.times)))
    obs = np.concatenate(observed) if observed else np.zeros(0)
    return obs, np.asarray(censored, np.float64)


@dataclasses.dataclass(frozen=True)
class ExponentialFit:
    rate_per_node_hour: float
    rate_ci: tuple[float, float]
    mtbf_hours: float
    mtbf_ci_hours: tuple[float, float]
    loglik: float


@dataclasses.dataclass(frozen=True)
class WeibullFit:
    shape: float
    shape_ci: tuple[float, float]
    scale_hours: float
    mtbf_hours: float  # mean time between failures of one node: scale * Gamma(1 + 1/shape)
    mtbf_ci_hours: tuple[float, float]
    loglik: float
    p_exponential: float  # likelihood-ratio test of shape = 1


@dataclasses.dataclass(frozen=True)
class FitResult(Result):
    """Fits of a failure log: per-node MTBF (hours) with 95% intervals, by exponential and Weibull laws."""

    nodes: int
    failures: int
    window_hours: float
    exposure_node_hours: float
    exponential: ExponentialFit
    weibull: WeibullFit | None  # None with fewer than 2 failures
    path: str = ""
    nodes_in_log: int = 0

    @property
    def mtbf_hours(self) -> float:
        """The exponential (Poisson-rate) MTBF per node: the one the planner uses."""
        return self.exponential.mtbf_hours

    @property
    def mtbf_ci_hours(self) -> tuple[float, float]:
        return self.exponential.mtbf_ci_hours

    def to_json(self) -> dict:
        """The JSON form: each 95% interval as ``<quantity>_ci95_low`` and ``_high`` (in the quantity's unit)."""
        out = dataclasses.asdict(self)
        for law in ("exponential", "weibull"):
            if out[law] is None:
                continue
            d = {}
            for key, value in out[law].items():
                if key.endswith("_ci") or key == "mtbf_ci_hours":
                    name = "mtbf" if key == "mtbf_ci_hours" else key[: -len("_ci")]
                    d[f"{name}_ci95_low"], d[f"{name}_ci95_high"] = (float(v) for v in value)
                else:
                    d[key] = value
            out[law] = d
        return out


def fit_exponential(failures: int, exposure: float, level: float = LEVEL) -> ExponentialFit:
    """Rate per unit exposure with the exact (Garwood) interval; MTBF = 1 / rate."""
    n = int(failures)
    if n < 1 or not exposure > 0:
        raise ValueError(f"an exponential fit needs >= 1 failure and a positive exposure, got {n}, {exposure!r}")
    a = 1.0 - level
    lo = float(stats.chi2.ppf(a / 2, 2 * n)) / (2 * exposure)
    hi = float(stats.chi2.ppf(1 - a / 2, 2 * n + 2)) / (2 * exposure)
    rate = n / exposure
    loglik = n * math.log(rate) - rate * exposure
    return ExponentialFit(rate, (lo, hi), 1.0 / rate, (1.0 / hi, 1.0 / lo), loglik)


class _Weibull:
    """Log-likelihoods of the censored Weibull sample (observed gaps ``x``, censored times ``c``, each
    censored time counted ``w`` times when ``w`` is given)."""

    def __init__(self, x: np.ndarray, c: np.ndarray, w: np.ndarray | None = None):
        self.n = x.size
        keep = c > 0
        self.y = np.concatenate([x, c[keep]])
        self.w = None if w is None else np.concatenate([np.ones(x.size), np.asarray(w, np.float64)[keep]])
        self.sum_log_x = float(np.log(x).sum())
        self.log_y = np.log(self.y)
        self.log_y_max = float(self.log_y.max())

    def log_sum_pow(self, k: float) -> float:
        """log sum y^k (stable for any k)."""
        terms = np.exp(k * (self.log_y - self.log_y_max))
        return self.log_y_max * k + math.log(float(terms.sum() if self.w is None else (self.w * terms).sum()))

    def loglik(self, k: float, log_s: float) -> float:
        return (self.n * math.log(k) - self.n * k * log_s + (k - 1) * self.sum_log_x
                - math.exp(self.log_sum_pow(k) - k * log_s))

    def profile_k(self, k: float) -> float:
        """max over s of the log-likelihood at shape k."""
        return self.n * math.log(k) - self.n * (self.log_sum_pow(k) - math.log(self.n)) + (k - 1) * self.sum_log_x \
            - self.n

    def log_scale(self, k: float) -> float:
        return (self.log_sum_pow(k) - math.log(self.n)) / k

    def profile_mean(self, log_mu: float) -> float:
        """max over k of the log-likelihood with the mean gap fixed at exp(log_mu)."""
        def neg(log_k):
            k = math.exp(log_k)
            return -self.loglik(k, log_mu - special.gammaln(1.0 + 1.0 / k))

        res = optimize.minimize_scalar(neg, bounds=_LOG_K_RANGE, method="bounded", options={"xatol": 1e-7})
        return -float(res.fun)


def _lr_bound(f, best_x: float, best_f: float, step: float, limit: float) -> float:
    """The x where f falls to ``best_f - 1.92``, searching from ``best_x`` by ``step`` (sign = direction) up to
    ``limit`` (returned when f never falls that far)."""
    target = best_f - _LR_CUT
    x = best_x
    while True:
        nxt = x + step
        if (step > 0 and nxt >= limit) or (step < 0 and nxt <= limit):
            if f(limit) > target:
                return limit
            nxt = limit
        if f(nxt) <= target:
            return optimize.brentq(lambda z: f(z) - target, min(x, nxt), max(x, nxt), xtol=1e-9)
        x = nxt
        step *= 2


def fit_weibull(observed: np.ndarray, censored: np.ndarray, weights: np.ndarray | None = None) -> WeibullFit:
    """Censored Weibull MLE (renewal per node; the module docstring) with profile-likelihood intervals;
    ``weights``: how many times each censored time counts (default once each)."""
    x = np.asarray(observed, np.float64)
    c = np.asarray(censored, np.float64)
    if x.size < 2:
        raise ValueError(f"a Weibull fit needs at least 2 failures, got {x.size}")
    if np.any(x <= 0):
        raise ValueError("a Weibull fit needs every time between failures > 0")
    w = _Weibull(x, c, weights)
    res = optimize.minimize_scalar(lambda lk: -w.profile_k(math.exp(lk)), bounds=_LOG_K_RANGE, method="bounded",
                                   options={"xatol": 1e-10})
    log_k = float(res.x)
    k = math.exp(log_k)
    best = w.profile_k(k)
    log_s = w.log_scale(k)
    log_mu = log_s + special.gammaln(1.0 + 1.0 / k)

    def prof_log_k(lk):
        return w.profile_k(math.exp(lk))

    k_lo = math.exp(_lr_bound(prof_log_k, log_k, best, -0.05, _LOG_K_RANGE[0]))
    k_hi = math.exp(_lr_bound(prof_log_k, log_k, best, 0.05, _LOG_K_RANGE[1]))
    span = 20.0 / math.sqrt(x.size) + 5.0  # log-mean search limits, far beyond any 95% interval
    mu_lo = math.exp(_lr_bound(w.profile_mean, log_mu, best, -0.05, log_mu - span))
    mu_hi = math.exp(_lr_bound(w.profile_mean, log_mu, best, 0.05, log_mu + span))
    p_exp = float(stats.chi2.sf(max(0.0, 2.0 * (best - w.profile_k(1.0))), 1))
    return WeibullFit(k, (k_lo, k_hi), math.exp(log_s), math.exp(log_mu), (mu_lo, mu_hi), best, p_exp)


# nodes that never failed are listed one censored time each up to this many (as always); beyond, their
# common censored time (the window) is counted with a weight, so that memory stays bounded at 10^9 nodes
_EXPAND_MAX = 1 << 20


def _weibull_sample(log: FailureLog):
    """``gaps(log)`` as (observed, censored, weights or None)."""
    unwatched = log.nodes - len(log.times)
    if unwatched <= _EXPAND_MAX:
        obs, cens = gaps(log)
        return obs, cens, None
    obs, cens = gaps(FailureLog(log.times, log.window_hours, len(log.times), log.path))
    weights = np.concatenate([np.ones(cens.size), [float(unwatched)]])
    return obs, np.concatenate([cens, [log.window_hours]]), weights


def fit_log(log: FailureLog, check=None) -> FitResult:
    """Exponential and Weibull fits of a parsed log. ``check``: called with the exponential per-node MTBF
    (hours) before the Weibull fit, so that a caller can refuse an unusable value before any more work."""
    exposure = log.nodes * log.window_hours
    expo = fit_exponential(log.failures, exposure)
    if check is not None:
        check(expo.mtbf_hours)
    obs, cens, weights = _weibull_sample(log)
    weib = fit_weibull(obs, cens, weights) if obs.size >= 2 else None
    return FitResult(log.nodes, log.failures, log.window_hours, exposure, expo, weib, log.path, len(log.times))


def rates_seen(mtbf_hours: float, units: float, restart_min: float) -> dict:
    """What a failure log's rate means on a cluster of ``units`` nodes, each failing with the MTBF
    ``mtbf_hours`` (or GPUs, with a per-GPU MTBF). A log's events are hardware failures:
    their rate (per node, from the fit) is the clock rate of the model, used unconverted, and gives
    ``failures_per_day`` on the cluster. A synchronous job (every failure a restart of ``restart_min``, the
    failures during a restart absorbed by it) would have seen ``lambda / (1 + lambda R)`` interruptions per
    day, fewer: ``synchronous_interruptions_per_day``, what a job's own log of interruptions would count."""
    per_day = units * 24.0 / mtbf_hours
    return {"rate_kind": "hardware", "failures_per_day": per_day,
            "synchronous_interruptions_per_day": per_day / (1.0 + per_day * restart_min / 1440.0)}


def rates_note(seen: dict, fit_law: str, restart_min: float) -> str:
    """One line for the plan's notes: which rate the log gave and what a synchronous job would have seen."""
    return (f"the failure log's events are hardware failures: its fitted rate ({fit_law} law) is the clock rate, "
            f"used unconverted: {seen['failures_per_day']:,.3g} group failures per day on this cluster; a "
            f"synchronous job restarting in {restart_min:g} min would have seen "
            f"{seen['synchronous_interruptions_per_day']:,.3g} interruptions per day (failures during a restart "
            "are absorbed by it)")
