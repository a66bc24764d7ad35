"""The planner's verdict: which strategy to run, by how much it beats the next best and checkpointing
alone, with its uncertainty; the limit no strategy that uses only the capacity that is up should beat; and
the looser figure of a run whose group failures cost nothing.

A strategy is named only where its 95% interval lies wholly below checkpointing alone's (``none``);
otherwise the verdict says checkpointing alone is as good, and why.

Statistics. A side is *measured* when it has Monte Carlo runs (at least 2): its mean and standard error
come from the runs listed (``mc_ttt_runs_hours``), its 95% interval from Student's t with n - 1 degrees of
freedom. Two sides drawn from the same random numbers (the whole-run kernel with one seed: run i of each
starts from the same failure clocks) are compared on their common runs, by the paired difference and its
own standard error; otherwise by the difference of the means (Welch's degrees of freedom). "Level with" is
said only where the 95% interval of the difference contains 0, and a margin is printed only between two
measured sides. Numbers in sentences are written out, never in scientific notation, with enough digits
to show an interval's width.

The limit (``limit``): the expected TTT, in the same whole-run kernel, of an ideal scheme that never has a
wipe-out and computes at rate alive/N (elastic training whose survivors keep their own shards: the batch
shrinks while groups are down), under the same repair, spare pool and job-wide failures, at its own best
checkpoint interval (a single final checkpoint among the candidates). Where groups do not come back without
a restart (no repair) the ideal also restarts proactively at its own best threshold on N/alive; the kernel's
proactive restart reads the depth, so that ideal computes at ceil(N m / alive) / m with m = 1,024 micro-batches
(within 0.1% of alive/N), and the limit is the better of the two.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

NAMES = {"spare": "SPARe", "rep": "replication", "none": "checkpointing alone", "elastic": "elastic training"}
Z95 = 1.959963984540054
HANDFUL = 20  # fewer Monte Carlo runs than this: no quantiles beside a closed-form mean
LIMIT_PILOT_RUNS = 8  # runs that measure the ideal's interruptions (Daly's interval)
LIMIT_SCREEN_RUNS = 16  # runs per candidate (threshold, interval) of the ideal, common random numbers
LIMIT_TAU_FACTORS = (0.5, 0.7, 1.0, 1.4, 2.0)  # around Daly's interval; W (one final checkpoint) is always tried
LIMIT_EVENTS_MAX = 400_000  # expected events per run of the ideal beyond which the limit is not computed
LIMIT_LANES = 8  # runs per kernel call
UNKNOWN_RUNS = 10 ** 9  # a Monte Carlo mean given without its run count


def t95(runs: int) -> float:
    """The 97.5% quantile of Student's t with ``runs`` - 1 degrees of freedom (infinite below 2 runs)."""
    from scipy.stats import t

    if runs >= UNKNOWN_RUNS:  # a mean whose runs are not counted: the normal quantile
        return Z95
    return float(t.ppf(0.975, runs - 1)) if runs >= 2 else math.inf


@dataclasses.dataclass(frozen=True)
class Sample:
    """One side of a comparison: its mean TTT (hours), standard error, runs (0: a closed form), the per-run
    TTTs where listed, and where its random numbers come from (``source``: sides with the same source are
    paired run by run)."""

    mean: float
    se: float
    n: int
    runs: np.ndarray | None = None
    source: str | None = None

    @property
    def measured(self) -> bool:
        return self.n >= 2

    @property
    def half(self) -> float:
        return t95(self.n) * self.se if self.measured else 0.0

    def interval(self, floor: float | None = None) -> tuple:
        """The 95% interval of the mean TTT (``ttt.interval``: from the listed runs, (None, None) below its
        least count of runs); without listed runs the mean +- ``half``, never below ``floor`` (W)."""
        from ..ttt.interval import ttt_interval

        if self.runs is not None:
            ci = ttt_interval(self.runs, floor=floor)
            return ci["low"], ci["high"]
        low = self.mean - self.half
        return (low if floor is None else max(low, floor)), self.mean + self.half


def sample_of(entry: dict, source: str | None = None) -> Sample:
    """A scheme's ``Sample``: its exact closed form where that answers (no sampling error; the table's number),
    else its listed runs (``mc_ttt_runs_hours``) where there are at least 2, else its
    Monte Carlo mean and standard error (``mc_runs`` runs), else its closed form (not measured)."""
    if entry.get("method") == "closed_form":  # exact: the table's number, no sampling error; a margin against
        # it is printed only where runs at the same configuration were made too (a measured side)
        return Sample(float(entry["ttt_hours"]), 0.0, UNKNOWN_RUNS if int(entry.get("mc_runs") or 0) >= 2 else 0)
    runs = entry.get("mc_ttt_runs_hours")
    if runs is not None and len(runs) >= 2:
        x = np.asarray(runs, np.float64)
        return Sample(float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size)), int(x.size), x, source)
    mean, se = entry.get("mc_ttt_hours"), entry.get("mc_ttt_stderr_hours")
    if mean is not None and se is not None and math.isfinite(mean):
        n = int(entry.get("mc_runs") or 0)
        return Sample(float(mean), float(se), n if n >= 2 else UNKNOWN_RUNS)
    return Sample(float(entry["ttt_hours"]), 0.0, 0)


def compare(best: Sample, other: Sample) -> dict:
    """``other`` - ``best``: paired on their common runs where both come from the same random numbers, else
    the difference of the means; its standard error, degrees of freedom and 95% half-width."""
    if best.runs is not None and other.runs is not None and best.source is not None and best.source == other.source:
        n = min(best.runs.size, other.runs.size)
        d = other.runs[:n] - best.runs[:n]
        se = float(d.std(ddof=1) / math.sqrt(n)) if n >= 2 else math.inf
        return {"diff": float(d.mean()), "se": se, "half": t95(n) * se, "paired": True, "common_runs": n}
    se = math.hypot(best.se, other.se)
    parts = [(s.se, s.n) for s in (best, other) if s.se > 0]
    dof = (se ** 4 / sum(v ** 4 / (k - 1) for v, k in parts)) if parts and se > 0 else math.inf
    half = (t95(dof + 1) if math.isfinite(dof) else Z95) * se
    return {"diff": other.mean - best.mean, "se": se, "half": half, "paired": False, "common_runs": 0}


# -- numbers in sentences: written out, as many decimals as an interval's width needs ------------------------

def decimals_for(half: float, most: int = 6) -> int:
    """Decimals that show a half-width ``half`` with two significant digits (at least 1)."""
    if not half or not math.isfinite(half) or half <= 0:
        return 1
    return int(min(most, max(1, 1 - math.floor(math.log10(half)))))


def hours_text(x: float, decimals: int = 1) -> str:
    """``x`` hours written out with thousands separators (never in scientific notation)."""
    if not math.isfinite(x):
        return "infinite"
    return f"{x:,.{decimals if abs(x) < 1e6 else 0}f}"


def minutes_text(x: float) -> str:
    """A time in minutes for a sentence: whole minutes from 100 up, else three significant digits."""
    if x >= 100:
        return f"{x:,.0f}"
    return f"{x:.{max(0, 2 - math.floor(math.log10(x)))}f}".rstrip("0").rstrip(".") if x > 0 else "0"


def pct_text(x: float) -> str:
    """A percentage written out with two significant digits (at least one decimal below 10)."""
    a = abs(x)
    if 99.5 <= a < 100:  # never round a share below 100% up to 100
        return f"{x:.{max(1, decimals_for((100 - a) / 2, 8))}f}"
    if a >= 10:
        return f"{x:,.0f}"
    return f"{x:.{decimals_for(a / 2, 8)}f}" if a > 0 else "0"


def interval_text(mean: float, half: float, bounds: tuple | None = None) -> str:
    """'810.48 (95% CI 810.46-810.50)' with the decimals the half-width needs; ``bounds``: the interval's ends
    where it is not mean +- half ((None, None): too few runs for one)."""
    if bounds is not None and bounds[0] is None:
        return f"{hours_text(mean, decimals_for(half))} h (no 95% CI: too few runs)"
    lo, hi = (mean - half, mean + half) if bounds is None else bounds
    dec = decimals_for(half if bounds is None else (hi - lo) / 2)
    return f"{hours_text(mean, dec)} h (95% CI {hours_text(lo, dec)}-{hours_text(hi, dec)})"


# -- the looser figure, and the limit -----------------------------------------------------------------------

def bound(work_hours: float, ckpt_cost_min: float, restart_min: float, job_mtbf_min: float | None) -> dict:
    """The expected TTT (hours) of a run whose group failures cost nothing, at its best interval: an even
    split of W into K intervals (the exact form's optimum), K searched around the Daly count."""
    from ..ttt.closed_form import none_best_even_split

    work = work_hours * 60.0
    if not job_mtbf_min:
        return {"ttt_hours": (work + ckpt_cost_min) / 60.0, "ckpt_interval_min": work,
                "what": "no job-wide failures: the work and one final checkpoint"}
    rate = 1.0 / job_mtbf_min
    daly = math.sqrt(2.0 * max(ckpt_cost_min, 1e-9) * (job_mtbf_min + restart_min))
    k_mid = max(1, round(work / daly))
    tau, ttt = none_best_even_split(rate, np.arange(max(1, k_mid // 4), 4 * k_mid + 2), ckpt_cost_min, restart_min,
                                    work)
    return {"ttt_hours": ttt / 60.0, "ckpt_interval_min": tau,
            "what": "only job-wide interruptions, checkpoints and restarts"}


def _ideal_runs(ideal, cfg, data: str, cand, tau: float, count: int, seed: int, bar=False) -> dict | None:
    """``count`` runs of the ideal scheme ``cand`` (a ``ttt.search.Candidate``: elastic at its threshold) through
    ``ttt.search.candidate_runs``: their mean TTT, computing time and interruptions (minutes, per run) and each
    run's (``each``); None where a run does not finish within the event limit. ``bar``: the stage's progress
    bar (runs)."""
    from ..model.cluster import Sampling
    from ..ttt.search import candidate_runs

    try:
        out = candidate_runs(ideal, cfg, cand, tau, Sampling(count=count, seed=seed, chunk_size=LIMIT_LANES,
                                                                  progress=bar), "kept", data)
    except ValueError:  # censored: this threshold and interval never finish
        return None
    each = {k: np.asarray(out[k], np.float64) for k in ("ttt", "compute", "restarts")}
    return {"ttt_min": float(each["ttt"].mean()), "compute_mean": each["compute"].mean(),
            "restarts_mean": each["restarts"].mean(), "each": each}


def limit(cluster, cfg, runs: int, seed: int, progress: bool = False) -> dict:
    """The limit (module docstring) on ``cluster`` (``model.cluster.Cluster``, its repair and spare pool)
    with the costs of ``cfg`` (a ``ttt.Training``): ``runs`` runs at the best candidate, seeded by
    ``seed`` (run i of the ideal uses run id i: the same random numbers as every scheme's whole runs).
    Returns ``{ttt_hours, mc_ttt_stderr_hours, mc_ttt_ci95_low, mc_ttt_ci95_high, mc_runs, ckpt_interval_min,
    restart_depth, what, mc_ttt_runs_hours}``; ``ttt_hours`` None (with ``what`` saying why) where one run of the
    ideal would be too long to simulate. ``progress``: one bar over the stage's runs (count and time left)."""
    from ..kernels.progress import Progress
    from ..model.scenario import MAX_MICROBATCHES

    w = 60.0 * cfg.work_hours
    n = cluster.groups
    rep = cluster.repair
    repairs = rep is not None and rep.repair_time_min is not None
    events = 2.0 * w / cluster.model.cluster_mtbf_min(n)
    if events > LIMIT_EVENTS_MAX:
        return {"ttt_hours": None, "what": f"not computed: one run of the ideal scheme needs about "
                f"{events:,.0f} events (at most {LIMIT_EVENTS_MAX:,})"}
    scen = cluster.scenario
    if repairs:
        ideal = dataclasses.replace(cluster, scenario=dataclasses.replace(scen, microbatches=1))
        data, depths = "shrink", [None]
    else:
        ideal = dataclasses.replace(cluster, scenario=dataclasses.replace(scen, microbatches=MAX_MICROBATCHES))
        data = "rebalance"
        ks = [k for k in (2 ** i for i in range(int(math.log2(max(n - 1, 1))) + 1)) if k < n]
        depths = [None] + [n / (n - k) * (1.0 - 1e-6) for k in ks]
    screen = max(2, min(runs, LIMIT_SCREEN_RUNS))
    taus_most = len(LIMIT_TAU_FACTORS) + 1
    planned = (len(depths) * LIMIT_PILOT_RUNS + (len(depths) * screen if len(depths) > 1 else 0)
               + min(2, len(depths)) * taus_most * screen + (runs if runs != screen else 0))
    bar = Progress(planned, "the limit (runs of the ideal scheme)", progress, unit="run")
    try:
        return _limit(ideal, cfg, (data, depths, repairs), (runs, screen, seed), bar)
    finally:
        bar.close()


def _limit(ideal, cfg, how: tuple, counts: tuple, bar) -> dict:
    """``limit``'s search over thresholds and intervals (``ttt.halving.search_candidates``): each threshold at
    Daly's interval from its own pilot runs, the best two at the intervals around it; ``how`` = (elastic data,
    thresholds, with repair), ``counts`` = (runs, screen runs, seed); ``bar``: the stage's progress bar, its
    total refined as the search learns how many intervals it tries."""
    from ..ttt.halving import Hooks, Rules, score, search_candidates
    from ..ttt.runs import first_tau, pooled_daly
    from ..ttt.search import Candidate

    (data, depths, repairs), (runs, screen, seed) = how, counts
    w = 60.0 * cfg.work_hours
    m = ideal.scenario.microbatches
    rt = None if ideal.repair is None else ideal.repair.repair_time_min
    spent = [0]

    def runs_of(cand, tau, count):
        spent[0] += count
        return _ideal_runs(ideal, cfg, data, cand, tau, count, seed, bar)

    class Bar(Hooks):
        def stage(self, name, items, count):
            if name == "interval":
                bar.set_total(spent[0] + count * items + (runs if runs != screen else 0))

    def taus(daly, rate):
        out = {min(daly * f, w) for f in LIMIT_TAU_FACTORS}
        if w * rate <= 2.0:  # one final checkpoint, where a run of W expects few interruptions
            out.add(w)
        return sorted(out)

    rules = Rules(first_tau=lambda c: min(first_tau(ideal, cfg.ckpt_cost_min, 1), w),
                  daly=lambda c, res: min(pooled_daly(cfg.ckpt_cost_min, res["compute_mean"], res["restarts_mean"],
                                                      LIMIT_PILOT_RUNS), w),
                  pilot_runs=LIMIT_PILOT_RUNS, screen_runs=screen, interval_runs=screen,
                  rate=lambda c, res: (res["restarts_mean"] + 0.5 / LIMIT_PILOT_RUNS) / max(res["compute_mean"], 1e-9),
                  taus=taus, keep=lambda rows: sorted(rows, key=score)[:2],
                  finalists=lambda rows: [min(rows, key=score)] if rows else [], screen_one=False)
    found = search_candidates([Candidate("elastic", 1, m, d, rt) for d in depths], runs_of, rules, Bar())
    best = found["finalists"][0] if found["finalists"] else None
    if best is None or "each" not in best:
        return {"ttt_hours": None, "what": "not computed: no run of the ideal scheme finished within the event limit"}
    d, tau, res = best["cand"].restart_depth, best["tau"], best["each"]
    if runs != screen:
        res = runs_of(best["cand"], tau, runs)["each"]
    hours = res["ttt"] / 60.0
    from ..ttt.interval import ttt_interval

    mean, se = float(hours.mean()), float(hours.std(ddof=1) / math.sqrt(hours.size))
    ci = ttt_interval(hours, floor=cfg.work_hours)
    if repairs:
        what = "an ideal scheme that never wipes out and computes at alive/N (elastic training that shrinks the batch)"
    else:
        what = ("an ideal scheme that never wipes out, computes at alive/N and restarts proactively at its best "
                "threshold" + ("" if d is not None else " (never, here)"))
    return {"ttt_hours": mean, "mc_ttt_stderr_hours": se, "mc_ttt_ci95_low": ci["low"], "mc_ttt_ci95_high": ci["high"],
            "mc_runs": int(hours.size), "ckpt_interval_min": float(tau),
            "restart_depth": None if d is None else float(d), "what": what,
            "mc_ttt_runs_hours": [float(x) for x in hours]}


# -- the verdict -------------------------------------------------------------------------------------------

FIRST_LINE_MAX = 200  # characters of the verdict's first line (what to run)
LINE_MAX = 160  # characters of each of its other lines


def settings_text(s: str, e: dict, work_hours: float | None = None) -> str:
    """A configuration in words: 'r = 5, 8 micro-batches per shard, one final checkpoint' (only the settings
    the scheme has: no r for checkpointing alone or elastic training)."""
    parts = [] if s in ("none", "elastic") else [f"r = {e['r_star']}"]
    m = int(e.get("microbatches") or 1)
    if m > 1:
        parts.append(f"{m} micro-batches per shard")
    if e.get("restart_depth") is not None:
        parts.append(f"a proactive restart at depth {e['restart_depth']:g}")
    tau = e["ckpt_interval_min"]
    parts.append("one final checkpoint" if work_hours is not None and tau >= 60.0 * work_hours * (1 - 1e-9)
                 else f"a checkpoint every {minutes_text(tau)} min")
    if e.get("repair_time_min") is not None:  # where several repair times were searched
        parts.append(f"repair {e['repair_time_min']:g} min")
    return ", ".join(parts)


def _estimate_text(x: Sample, floor: float | None = None) -> str:
    """'810.48 h (95% CI 810.46-810.50)', or '797.1 h (exact closed form)' where no sampling error applies; the
    interval is ``Sample.interval`` (never below ``floor``, W)."""
    if x.half > 0 and math.isfinite(x.half):
        return interval_text(x.mean, x.half, x.interval(floor))
    return f"{hours_text(x.mean, 1)} h ({'exact closed form' if x.n == 0 or x.n >= UNKNOWN_RUNS else 'mean'})"


def _name(s: str) -> str:
    return NAMES[s][0].upper() + NAMES[s][1:]


def pack(prefix: str, parts: list, most: int = LINE_MAX) -> list:
    """``parts`` joined by '; ' after ``prefix`` in lines of fewer than ``most`` characters (a part too long
    for a line of its own is cut at a comma)."""
    lines, cur = [], prefix
    for part in parts:
        while len(prefix) + len(part) + 1 >= most and ", " in part:  # a part alone too long: cut at a comma
            cut = part.rfind(", ", 0, most - len(prefix) - 2)
            if cut <= 0:
                break
            lines += ([cur.rstrip("; ") + "."] if cur != prefix else []) + [prefix + part[:cut] + ";"]
            cur, part = prefix, part[cut + 2:]
        add = (cur + part) if cur == prefix else (cur + "; " + part)
        if len(add) + 1 >= most and cur != prefix:
            lines.append(cur + ".")
            cur = prefix + part
        else:
            cur = add
    if cur != prefix:
        lines.append(cur + ".")
    return lines


def verdict(schemes: dict, bound_entry: dict | None = None, limit_entry: dict | None = None,
            sources: dict | None = None, context: dict | None = None) -> dict:
    """The verdict object (JSON ``verdict``) from the plan's per-scheme entries. ``sources``: scheme -> where
    its runs' random numbers come from (sides with the same source are paired); ``limit_entry``: ``limit``'s
    result (paired with the sources named ``"kernel"``); ``context``: ``{"assumes": [phrases], "batch":
    sentence, "trade": [sentences], "work_hours": W}`` (an interval of W is "one final checkpoint").

    ``text``: short lines, the answer first: what to run, its settings in words and its expected TTT with
    the 95% interval (under ``FIRST_LINE_MAX`` characters); then, one line each (under ``LINE_MAX``), the
    margin against each other strategy, the limit and what is left to gain, the figure of a run whose group
    failures cost nothing, what the answer assumes and what it needs."""
    sources = sources or {}
    context = context or {}
    # a redundant scheme at r* = 1 is checkpointing alone: it is not a strategy of its own
    est = {s: sample_of(e, sources.get(s)) for s, e in schemes.items()
           if not (s in ("spare", "rep") and int(e["r_star"]) == 1 and "none" in schemes)}
    order = sorted(est, key=lambda s: est[s].mean)
    best = order[0]
    b = est[best]
    floor = (context or {}).get("work_hours")
    b_ci = b.interval(floor)
    out = {"scheme": best, "r_star": int(schemes[best]["r_star"]),
           "microbatches": int(schemes[best].get("microbatches", 1)),
           "ckpt_interval_min": float(schemes[best]["ckpt_interval_min"]),
           "restart_depth": schemes[best].get("restart_depth"),
           "ttt_hours": b.mean, "mc_ttt_ci95_low": b_ci[0], "mc_ttt_ci95_high": b_ci[1]}
    gaps = []
    for other in order[1:]:
        o = est[other]
        if not (b.measured and o.measured):
            gaps.append({"scheme": other, "ttt_hours": o.mean, "ahead_hours": None, "ahead_stderr_hours": None,
                         "ahead_half_hours": None, "ahead_pct": None, "paired": False, "common_runs": 0})
            continue
        c = compare(b, o)
        gaps.append({"scheme": other, "ttt_hours": o.mean, "ahead_hours": c["diff"], "ahead_stderr_hours": c["se"],
                     "ahead_half_hours": c["half"], "ahead_pct": 100.0 * c["diff"] / o.mean, "paired": c["paired"],
                     "common_runs": c["common_runs"]})
    out["ahead_of"] = gaps
    cfgs = {s: settings_text(s, e, context.get("work_hours")) for s, e in schemes.items()}
    lines = None
    if "none" in est and best != "none":
        nb = est["none"]
        g = next(g for g in gaps if g["scheme"] == "none")
        if g["ahead_hours"] is not None and g["ahead_hours"] <= g["ahead_half_hours"]:  # not shown to pay
            lines = [f"Run checkpointing alone: {cfgs['none']}; expected TTT {_estimate_text(nb, floor)}.",
                     _fit(f"{_name(best)} ({cfgs[best]}) at {_estimate_text(b, floor)} is not shown to beat it.",
                          f"{_name(best)} at {_estimate_text(b, floor)} is not shown to beat it."),
                     f"Why: {_why_as_good(schemes, best)}."]
            out.update(scheme="none", r_star=1, microbatches=1, restart_depth=None,
                       ckpt_interval_min=float(schemes["none"]["ckpt_interval_min"]), ttt_hours=nb.mean,
                       mc_ttt_ci95_low=nb.interval(floor)[0], mc_ttt_ci95_high=nb.interval(floor)[1])
            out["not_shown_better"] = best
    if lines is None:
        lines = [f"Run {NAMES[best]}: {cfgs[best]}; expected TTT {_estimate_text(b, floor)}"
                 + ("; the only strategy compared." if len(schemes) == 1 else ".")]
        if best == "none" and len(schemes) > 1:
            lines.append(f"No redundancy does better: {_why_as_good(schemes, best)}.")
        rest = [g for g in gaps if g["scheme"] != "none"] + [g for g in gaps if g["scheme"] == "none"]
        for k, g in enumerate(rest):
            lines.append(_versus(g, cfgs, runner_up=k == 0 and g["scheme"] != "none"))
    lines += _limit_lines(out, est, limit_entry)
    if bound_entry is not None:
        out["bound_ttt_hours"] = bound_entry["ttt_hours"]
        lines.append(f"Group failures cost nothing: {hours_text(bound_entry['ttt_hours'], 1)} h (only job-wide "
                     "interruptions, checkpoints and restarts).")
    lines += pack("Assumes: ", list(context.get("assumes") or []))
    if context.get("batch"):
        lines.append(context["batch"])
    lines += list(context.get("trade") or [])
    if out["scheme"] == "elastic":
        lines.append("Needs: every group able to read every shard (elastic training rebalances the data).")
    out["text"] = "\n".join(lines)
    return out


def _fit(line: str, shorter: str) -> str:
    """``line``, or ``shorter`` where ``line`` would be ``LINE_MAX`` characters or more."""
    return line if len(line) < LINE_MAX else shorter


def _versus(g: dict, cfgs: dict, runner_up: bool = False) -> str:
    """One line against another strategy: 'x% (d ± h h on n common runs) faster than ...', 'Level with ...'
    where the 95% interval of the difference contains 0, or 'not measured'; the other's settings in words,
    or only its r where the line would be too long."""
    line = _versus_named(g, NAMES[g["scheme"]] + ("" if g["scheme"] == "none" else f" ({cfgs[g['scheme']]})")
                         + (", the runner-up" if runner_up else ""))
    if len(line) >= LINE_MAX:
        r = cfgs[g["scheme"]].split(", ")[0] if cfgs[g["scheme"]].startswith("r = ") else None
        line = _versus_named(g, ("the runner-up, " if runner_up else "") + NAMES[g["scheme"]]
                             + (f" at {r}" if r else ""))
    return line


def _versus_named(g: dict, name: str) -> str:
    if g["ahead_hours"] is None:  # one side has no run: no margin
        return f"No margin against {name}: not measured (its closed form: {hours_text(g['ttt_hours'], 1)} h)."
    d, half = g["ahead_hours"], g["ahead_half_hours"]
    dec = decimals_for(half)
    how = f" on {g['common_runs']} common runs" if g["paired"] else ""
    if abs(d) <= half:
        return (f"Level with {name}: a difference of {hours_text(d, dec)} ± {hours_text(half, dec)} h{how}, "
                "its 95% interval containing 0.")
    word = "faster than" if d > 0 else "slower than"
    return (f"{pct_text(abs(g['ahead_pct']))}% ({hours_text(abs(d), dec)} ± {hours_text(half, dec)} h{how}) "
            f"{word} {name}.")


def _limit_lines(out: dict, est: dict, lim: dict | None) -> list:
    """The limit's line, and ``out``'s ``limit_ttt_hours``, ``left_to_gain_pct`` and ``limit_exceeded``."""
    if lim is None or lim.get("ttt_hours") is None:
        out.update(limit_ttt_hours=None, left_to_gain_pct=None, limit_exceeded=None)
        return [] if lim is None else [f"The limit: {lim['what']}."]
    lt = lim["ttt_hours"]
    runs = np.asarray(lim["mc_ttt_runs_hours"], np.float64)
    ls = Sample(lt, lim["mc_ttt_stderr_hours"], int(runs.size), runs, "kernel")
    left = 100.0 * (out["ttt_hours"] - lt) / lt
    out.update(limit_ttt_hours=lt, left_to_gain_pct=left)
    beaten = []
    for s, e in est.items():
        if not e.measured:
            continue
        c = compare(ls, e)  # the scheme minus the limit
        if c["diff"] + c["half"] < 0:
            beaten.append((s, e.mean, c))
    out["limit_exceeded"] = bool(beaten)
    bounds = (lim["mc_ttt_ci95_low"], lim["mc_ttt_ci95_high"])
    dec = decimals_for(ls.half if bounds[0] is None else (bounds[1] - bounds[0]) / 2)
    lines = [f"The limit: {interval_text(lt, ls.half, bounds)}, an ideal that never wipes out and "
             f"computes at alive/N; {hours_text(out['ttt_hours'] - lt, dec)} h ({pct_text(left)}%) is left to gain."]
    for s, m, c in beaten:
        d = decimals_for(c["half"])
        lines.append(f"Limit exceeded: {NAMES[s]} at {hours_text(m, d)} h against the limit's {hours_text(lt, d)} h "
                     f"(a difference of {hours_text(c['diff'], d)} ± {hours_text(c['half'], d)} h).")
    return lines


def _why_as_good(schemes: dict, best: str) -> str:
    """Why no redundancy pays: every scheme's best r is 1, or the differences are within the noise."""
    rs = {s: int(e["r_star"]) for s, e in schemes.items() if s in ("spare", "rep")}
    if rs and all(r == 1 for r in rs.values()):
        return ("every redundant scheme's best r is 1: at this failure rate the compute that redundancy costs "
                "is more than the restarts it saves")
    if best == "none":
        return "each redundant scheme's expected TTT is higher than checkpointing alone's"
    return "the 95% interval of the difference contains 0 (more --runs would narrow it; it is small against the run)"
