"""The plan's readable text: the scheme table, the sensitivity table, and the phrases the report shares
(price, cost heading, model line, TTT with its standard error, scenario description)."""

from __future__ import annotations

import math

def format_table(result) -> str:
    """The readable tables: one row per scheme, then the sensitivity (text, fixed-width columns)."""
    inp = result.inputs
    deadline = inp.get("deadline_hours")
    lines = [] if result.verdict is None else verdict_lines(result.verdict["text"]) + [""]
    lines += [f"spare-jax plan: {inp['gpus']:,} GPUs = {inp['groups']:,} groups x {inp['gpus_per_group']:,} GPUs; "
             f"per-GPU MTBF {inp['gpu_mtbf_hours']:,.6g} h ({inp['gpu_mtbf_from']}); cluster MTBF "
             f"{inp['cluster_mtbf_min']:,.4g} min (group failures)",
             f"restart {inp['restart_min']:,g} min, checkpoint {inp['ckpt_cost_min']:,g} min, work "
             f"{inp['work_hours']:,g} h, price {price_text(inp)}, method: {inp.get('method_detail', inp['method'])}",
             "model: " + model_text(inp), ""]
    survived = survived_column(result.schemes)
    head = ["scheme", "r*", "tau* min", "TTT h", "5-95% h", f"P(>{deadline:,g} h)" if deadline else "P(>deadline)",
            "avail %", "failures survived/run" if survived else "failures endured", "left %", "GPU-h",
            cost_head(inp)]
    rows = []
    for s, e in result.schemes.items():
        rows.append([s, r_text(s, e), tau_text(e, inp), ttt_text(e), spread_text(e, "-"),
                     "-" if e["p_over_deadline"] is None else f"{e['p_over_deadline']:.2f}",
                     f"{e['availability_pct']:.1f}", failures_text(e, survived), left_text(e),
                     f"{e['gpu_hours']:,.0f}", f"{e['cost']:,.0f}"])
    lines += _columns(head, rows)
    lines.append(f"TTT h: expected time-to-train ({inp.get('method_detail', inp['method'])}); 5-95%: quantiles of "
                 f"{runs_text(result.schemes)} at (r*, tau*); left %: (TTT - limit) / limit")
    lines += limit_lines(result)
    lines += inputs_lines(result)
    if result.sensitivity:
        lines += ["", "sensitivity (optimiser re-run with one input scaled): r* / TTT h per scheme; "
                      "'keep r*': TTT h with the base r*"]
        head, rows = sensitivity_rows(result, ("r*", "TTT h", "keep r*"), " ")
        lines += _columns(head, rows)
    for note in result.notes:
        lines.append("note: " + note)
    return "\n".join(lines)


def verdict_lines(text: str) -> list:
    """The verdict's lines for the text output: 'verdict: ' before the first, the others indented."""
    first, *rest = text.split("\n")
    return ["verdict: " + first] + ["  " + line for line in rest]


def r_text(s: str, e: dict) -> str:
    """The r* cell: '-' for elastic training, which has no redundancy r."""
    return "-" if s == "elastic" else str(e["r_star"])


def tau_text(e: dict, inp: dict) -> str:
    """The tau* cell (minutes): 'final only' for a single final checkpoint (an interval of W)."""
    tau = e["ckpt_interval_min"]
    if tau >= 60.0 * inp["work_hours"] * (1 - 1e-9):
        return "final only"
    return f"{tau:.1f}"


def inputs_lines(result) -> list:
    """Every input that changes the answer, with where its value came from (``result.sources``, which the
    command fills)."""
    rows = getattr(result, "sources", None) or []
    if not rows:
        return []
    return ["", "inputs (value, where it came from):"] + [f"  {r['parameter']}: {r['value']} ({r['source']})"
                                                         for r in rows]


def limit_lines(result) -> list:
    """The limit's line and that of a run whose group failures cost nothing (text)."""
    from .verdict import interval_text, minutes_text

    out = []
    lim = getattr(result, "limit", None)
    if lim is not None and lim.get("ttt_hours") is not None:
        depth = "" if lim["restart_depth"] is None else f", proactive restart at depth {lim['restart_depth']:.4f}"
        tau = lim["ckpt_interval_min"]
        at = ("one final checkpoint" if tau >= 60.0 * result.inputs["work_hours"] * (1 - 1e-9)
              else f"tau = {minutes_text(tau)} min")
        ci = (lim["mc_ttt_ci95_low"], lim["mc_ttt_ci95_high"])
        out.append(f"limit: {interval_text(lim['ttt_hours'], lim['mc_ttt_stderr_hours'], ci)}, "
                   f"{lim['mc_runs']} whole runs at {at}{depth} ({lim['what']})")
    elif lim is not None:
        out.append(f"limit: {lim['what']}")
    if result.bound is not None:
        b = result.bound
        at = ("one final checkpoint" if b["ckpt_interval_min"] >= 60.0 * result.inputs["work_hours"] * (1 - 1e-9)
              else f"tau = {minutes_text(b['ckpt_interval_min'])} min")
        out.append(f"group failures cost nothing: {b['ttt_hours']:,.1f} h at {at} ({b['what']})")
    return out


def survived_column(schemes: dict) -> bool:
    """Whether the failures column shows what the runs survived (with repair: ``failures_endured`` is null)."""
    return any(e.get("failures_endured") is None for e in schemes.values())


def failures_text(e: dict, survived: bool) -> str:
    if survived:
        v = e.get("failures_survived_per_run")
        return "-" if v is None else f"{v:,.0f}"
    return f"{e['failures_endured']:.2f}"


def left_text(e: dict) -> str:
    v = e.get("left_to_gain_pct")
    if v is None:
        return "-"
    from .verdict import pct_text

    return pct_text(v)


def spread_text(e: dict, dash: str) -> str:
    """'765.41-765.83': the 5% and 95% quantiles with the decimals their distance needs."""
    from .verdict import decimals_for

    lo, hi = e["mc_ttt_p05_hours"], e["mc_ttt_p95_hours"]
    if lo is None:
        return "-"
    if hi is None:
        return f"{lo:,.0f}{dash}?"
    dec = decimals_for((hi - lo) / 2.0) if hi > lo else 1
    return f"{lo:,.{dec}f}{dash}{hi:,.{dec}f}"


def sensitivity_rows(result, titles: tuple, sep: str) -> tuple[list, list]:
    """The sensitivity table's heading and rows (text cells): per scheme r*, TTT and the TTT keeping the
    base r* (empty where r* does not move); ``titles`` name those three columns after ``{scheme}{sep}``."""
    schemes = result.schemes
    sens = [s for s in schemes if s in result.sensitivity[0]["schemes"]]
    head = ["input"] + [f"{s}{sep}{k}" for s in sens for k in titles]
    rows = [["base"] + [x for s in sens for x in (str(schemes[s]["r_star"]), f"{schemes[s]['ttt_hours']:,.0f}", "")]]
    for row in result.sensitivity:
        cells = [row["label"]]
        for s in sens:
            e = row["schemes"][s]
            keep = e["ttt_hours_at_base_r"]
            cells += [str(e["r_star"]), f"{e['ttt_hours']:,.0f}",
                      "" if keep is None or e["r_star"] == schemes[s]["r_star"] else f"{keep:,.0f}"]
        rows.append(cells)
    return head, rows


def price_text(inp: dict) -> str:
    """'2 USD per GPU-hour', or '2 per GPU-hour' when no currency was given."""
    cur = inp.get("currency")
    return f"{inp['gpu_hour_price']:,g} {cur + ' ' if cur else ''}per GPU-hour"


def cost_head(inp: dict) -> str:
    """The cost column's title: 'cost (USD)', or 'cost' in the price's unit when no currency was given."""
    return f"cost ({inp['currency']})" if inp.get("currency") else "cost"


def model_text(inp: dict) -> str:
    """Every input beyond the paper's model that changed the answer (scenario, micro-batches, failure log)."""
    desc = inp.get("scenario") or {}
    parts = [] if not desc else [describe_scenario(desc)]
    if inp.get("fit_law"):
        parts.append(f"failure rate fitted from a log ({inp['fit_law']} law)")
    if inp.get("restart_depth") is not None:
        parts.append(f"proactive restart at depth {inp['restart_depth']:g} (spare)")
    pool = ("" if inp.get("spares") is None else
            f"a pool of {inp['spares']:,} spare node sets, hardware repair {inp['hardware_repair_min']:g} min")
    if inp.get("repair_time_min") is not None:
        law = inp.get("repair_law", "fixed")
        repair = (f"repair without a global restart: {inp['repair_time_min']:g} min ({law}"
                  + (f", sigma {inp['repair_sigma']:g}" if law == "lognormal" else "") + ")")
        return "; ".join([p for p in parts if p != "none"] + [repair] + ([pool] if pool else []))
    if (not parts or parts == ["none"]) and not pool:
        return "the paper's (i.i.d. group failures, whole shards, no repair, no job-wide or domain failures)"
    return "; ".join([p for p in parts if p != "none"] + ["no repair"] + ([pool] if pool else []))


def ttt_text(entry: dict) -> str:
    """'1,694' or, for a Monte Carlo estimate, '1,564 ± 7' (one standard error, with the decimals it needs)."""
    from .verdict import decimals_for

    se = entry.get("ttt_stderr_hours")
    if se is None and entry.get("method") == "whole_runs":
        se = entry.get("mc_ttt_stderr_hours")
    if se is None or not math.isfinite(se):
        return f"{entry['ttt_hours']:,.0f}"
    dec = decimals_for(se) if se > 0 else 0
    dec = 0 if se >= 5 else dec
    return f"{entry['ttt_hours']:,.{dec}f} ± {se:,.{dec}f}"


def describe_scenario(desc: dict) -> str:
    """One line for ``Scenario.describe()``: 'job-wide MTBF 847 min; domains of 8 groups (switch), MTBF ...'."""
    parts = []
    if "job_mtbf_min" in desc:
        parts.append(f"job-wide MTBF {desc['job_mtbf_min']:,.4g} min")
    if "job_fraction" in desc:
        parts.append(f"job-wide fraction {desc['job_fraction']:g}")
    for d in desc.get("domains", []):
        name = f" ({d['name']})" if d.get("name") else ""
        parts.append(f"domains of {d['size']} groups{name}, MTBF {d['mtbf_min']:,.4g} min each")
    if desc.get("ring", "contiguous") != "contiguous":
        parts.append(f"ring {desc['ring']}")
    if "lemon_fraction" in desc:
        parts.append(f"lemons {desc['lemon_fraction']:g} of groups failing {desc['lemon_factor']:g}x as often")
    if "group_mtbf_min" in desc:
        parts.append("per-group MTBFs from a file")
    if desc.get("microbatches", 1) > 1:
        parts.append(f"{desc['microbatches']} micro-batches per shard")
    return "; ".join(parts) or "none"


def runs_text(schemes: dict) -> str:
    """'200 Monte Carlo runs per scheme' (or per scheme when they differ)."""
    runs = [e["mc_runs"] for e in schemes.values()]
    if len(set(runs)) == 1:
        return f"{runs[0]} Monte Carlo runs per scheme"
    return "Monte Carlo runs (" + ", ".join(f"{s} {e['mc_runs']}" for s, e in schemes.items()) + ")"


def _columns(head: list, rows: list) -> list:
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    fmt = lambda cells: "  ".join(str(c).rjust(w) if i else str(c).ljust(w)  # noqa: E731
                                  for i, (c, w) in enumerate(zip(cells, widths)))
    return [fmt(head), "  ".join("-" * w for w in widths)] + [fmt(r) for r in rows]
