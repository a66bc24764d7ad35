"""The planner's verdict: which strategy to run, by how much it beats the next best and checkpointing
alone, with its uncertainty; and the bound no strategy can beat.

A strategy is named only where its 95% interval lies wholly below checkpointing alone's (``none``);
otherwise the verdict says checkpointing alone is as good, and why. The bound is the expected TTT of a run
whose group failures cost nothing (depth 1 always): only job-wide interruptions, checkpoints and their
restarts remain, at the best interval (``ttt.closed_form.none_ttt_exact`` with the job-wide rate, exact).
"""

from __future__ import annotations

import math

import numpy as np

NAMES = {"spare": "SPARe", "rep": "replication", "none": "checkpointing alone", "elastic": "elastic training"}
Z95 = 1.959963984540054


def _estimate(entry: dict) -> tuple[float, float]:
    """(TTT hours, standard error) of one scheme: the exact closed form where it answers (standard error 0;
    the table shows the same number), else its Monte Carlo at (r*, tau*) where it ran, else the closed form."""
    mean, se = entry.get("mc_ttt_hours"), entry.get("mc_ttt_stderr_hours")
    if entry.get("method") == "closed_form" or mean is None or se is None or not math.isfinite(mean):
        return float(entry["ttt_hours"]), 0.0
    return float(mean), float(se)


def bound(work_hours: float, ckpt_cost_min: float, restart_min: float, job_mtbf_min: float | None) -> dict:
    """The expected TTT (hours) of a run whose group failures cost nothing, at its best interval: an even
    split of W into K intervals (the exact form's optimum), K searched around the Daly count."""
    from ..ttt.closed_form import none_best_even_split

    work = work_hours * 60.0
    if not job_mtbf_min:
        return {"ttt_hours": (work + ckpt_cost_min) / 60.0, "ckpt_interval_min": work,
                "what": "no job-wide failures: one final checkpoint"}
    rate = 1.0 / job_mtbf_min
    daly = math.sqrt(2.0 * max(ckpt_cost_min, 1e-9) * (job_mtbf_min + restart_min))
    k_mid = max(1, round(work / daly))
    tau, ttt = none_best_even_split(rate, np.arange(max(1, k_mid // 4), 4 * k_mid + 2), ckpt_cost_min, restart_min,
                                    work)
    return {"ttt_hours": ttt / 60.0, "ckpt_interval_min": tau,
            "what": "group failures cost nothing: only job-wide interruptions, checkpoints and restarts"}


def _config(s: str, e: dict) -> str:
    parts = [] if s in ("none", "elastic") else [f"r = {e['r_star']}"]
    if e.get("microbatches", 1) > 1:
        parts.append(f"m = {e['microbatches']}")
    if e.get("restart_depth") is not None:
        parts.append(f"D_max = {e['restart_depth']:g}")
    parts.append(f"tau = {e['ckpt_interval_min']:.3g} min")
    if e.get("repair_time_min") is not None:  # where several repair times were searched
        parts.append(f"repair {e['repair_time_min']:g} min")
    return ", ".join(parts)


def verdict(schemes: dict, bound_entry: dict | None = None) -> dict:
    """The verdict object (JSON ``verdict``) from the plan's per-scheme entries."""
    # a redundant scheme at r* = 1 is checkpointing alone: it is not a strategy of its own
    est = {s: _estimate(e) for s, e in schemes.items()
           if not (s in ("spare", "rep") and int(e["r_star"]) == 1 and "none" in schemes)}
    order = sorted(est, key=lambda s: est[s][0])
    best = order[0]
    mean, se = est[best]
    out = {"scheme": best, "r_star": int(schemes[best]["r_star"]),
           "microbatches": int(schemes[best].get("microbatches", 1)),
           "ckpt_interval_min": float(schemes[best]["ckpt_interval_min"]),
           "restart_depth": schemes[best].get("restart_depth"),
           "ttt_hours": mean, "mc_ttt_ci95_low": mean - Z95 * se, "mc_ttt_ci95_high": mean + Z95 * se}
    gaps = []
    for other in order[1:]:
        m2, se2 = est[other]
        diff, dse = m2 - mean, math.hypot(se, se2)
        gaps.append({"scheme": other, "ttt_hours": m2, "ahead_hours": diff, "ahead_stderr_hours": dse,
                     "ahead_pct": 100.0 * diff / m2})
    out["ahead_of"] = gaps
    text = None
    if "none" in est and best != "none":
        m_none, se_none = est["none"]
        if out["mc_ttt_ci95_high"] >= m_none - Z95 * se_none:  # the intervals overlap: not shown to pay
            why = _why_as_good(schemes, est, best)
            text = (f"Checkpointing alone is as good here: {NAMES[best]} ({_config(best, schemes[best])}) at "
                    f"{mean:,.4g} h (95% CI {out['mc_ttt_ci95_low']:,.4g}-{out['mc_ttt_ci95_high']:,.4g}) is not "
                    f"shown to beat it ({m_none:,.4g} h +- {Z95 * se_none:,.2g}); {why}.")
            out.update(scheme="none", r_star=1, microbatches=1, restart_depth=None,
                       ckpt_interval_min=float(schemes["none"]["ckpt_interval_min"]), ttt_hours=m_none,
                       mc_ttt_ci95_low=m_none - Z95 * se_none, mc_ttt_ci95_high=m_none + Z95 * se_none)
            out["not_shown_better"] = best
    if text is None and len(schemes) == 1:
        text = (f"{NAMES[best][0].upper() + NAMES[best][1:]} ({_config(best, schemes[best])}): {mean:,.4g} h (95% "
                f"CI {out['mc_ttt_ci95_low']:,.4g}-{out['mc_ttt_ci95_high']:,.4g}); the only strategy compared.")
    if text is None:
        if best == "none":
            why = _why_as_good(schemes, est, best)
            text = (f"Run checkpointing alone (tau = {schemes['none']['ckpt_interval_min']:.3g} min): "
                    f"{mean:,.4g} h (95% CI {out['mc_ttt_ci95_low']:,.4g}-{out['mc_ttt_ci95_high']:,.4g}); no "
                    f"redundancy does better here: {why}.")
        else:
            text = f"Run {NAMES[best]} ({_config(best, schemes[best])}): {mean:,.4g} h (95% CI " \
                   f"{out['mc_ttt_ci95_low']:,.4g}-{out['mc_ttt_ci95_high']:,.4g})"
            nxt = [g for g in gaps if g["scheme"] != "none"]
            if nxt:
                g = nxt[0]
                text += ", " + _margin(g) + f" {NAMES[g['scheme']]} ({_config(g['scheme'], schemes[g['scheme']])})"
            g = next((g for g in gaps if g["scheme"] == "none"), None)
            if g is not None:
                text += f"{' and' if nxt else ','} " + _margin(g) + " checkpointing alone"
            text += "."
    if bound_entry is not None:
        left = out["ttt_hours"] - bound_entry["ttt_hours"]
        text += (f" Bound (a run whose group failures cost nothing): {bound_entry['ttt_hours']:,.4g} h; "
                 f"{left:,.3g} h ({100.0 * left / out['ttt_hours']:.2g}%) is left to gain.")
        out["bound_ttt_hours"] = bound_entry["ttt_hours"]
    out["text"] = text
    return out


def _margin(gap: dict) -> str:
    """'x% (d +- h h) faster than', or 'level with' where the difference is within its 95% interval."""
    half = Z95 * gap["ahead_stderr_hours"]
    if gap["ahead_hours"] <= half:
        return f"level with (a difference of {gap['ahead_hours']:,.3g} +- {half:,.2g} h)"
    return f"{gap['ahead_pct']:.3g}% ({gap['ahead_hours']:,.3g} +- {half:,.2g} h) faster than"


def _why_as_good(schemes: dict, est: dict, best: str) -> str:
    """Why no redundancy pays: every scheme's best r is 1, or the differences are within the noise."""
    rs = {s: int(e["r_star"]) for s, e in schemes.items() if s in ("spare", "rep")}
    if rs and all(r == 1 for r in rs.values()):
        return ("every redundant scheme's best r is 1: at this failure rate the compute that redundancy costs "
                "is more than the restarts it saves")
    if best == "none":
        return "each redundant scheme's expected TTT is higher than checkpointing alone's"
    return ("the difference is within the Monte Carlo's 95% intervals (more --runs would narrow them, but it "
            "is small against the whole run)")
