"""``plan --failure-trace``: the strategies ranked on a failure trace's replay, the fitted model's ranking beside
it (docs/traces.md#planning-on-a-trace), and its self-contained HTML report: the table, where the two rankings
disagree, the fit, and two figures embedded as base64 PNG (the replay's TTT per strategy beside the model's,
and the trace's down periods over time)."""

from __future__ import annotations

import datetime

from .. import plotting  # noqa: F401 - the figures' backend (Agg)

from ..model.cluster import Cluster, Sampling
from ..model.training import Training
from ..results import Report
from .report import escape as _e, png_uri as _png  # the plan report's escaping and figure encoding
from .trace_replay import TraceOptions, compare_schemes, load_trace, model_parts, trace_policies


_CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 1100px;
       color: #222; line-height: 1.4; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
p.sub { color: #555; margin-top: 0; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.92em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; } th { background: #f2f2f2; }
tr.best td { background: #eef6ee; }
figure img { max-width: 100%; height: auto; border: 1px solid #ddd; }
figcaption { color: #444; font-size: 0.9em; }
"""


def _table(head: list, rows: list, best_row: int | None = None) -> str:
    out = ["<table>", "<thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr></thead>", "<tbody>"]
    for i, row in enumerate(rows):
        cls = ' class="best"' if i == best_row else ""
        out.append(f"<tr{cls}>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>")
    return "\n".join(out + ["</tbody>", "</table>"])


def plan_on_trace(cluster: Cluster, training: Training, options: TraceOptions, r_max: int,
                  sampling: Sampling = Sampling(16)) -> Report:
    """The strategies of ``trace_policies`` replayed and ranked by the replay (``compare_schemes``), with a
    sentence saying where the model's ranking disagrees (``ranking_text``)."""
    policies = trace_policies(cluster.groups, r_max, options.repair != "none")
    rep = compare_schemes(cluster, training, policies, options, sampling).to_json()
    best = min(rep["strategies"], key=lambda r: r["replay_rank"])
    parts = model_parts(cluster, training, best, options, sampling)
    return Report({**rep, "ranking_text": ranking_text(rep), "gap_parts": parts, "gap_text": gap_text(best, parts)})


def gap_text(row: dict, parts: list) -> str:
    """One sentence: for the replay's best strategy, how the model's error moves with each part of the fit."""
    full = parts[0]["model_error_pct"]
    moves = "; ".join(f"{p['parts']}: {p['model_error_pct']:+.1f}%" for p in parts[1:])
    closest = min(parts, key=lambda p: abs(p["model_error_pct"]))
    return (f"For {row['name']} the full fit's error is {full:+.1f}% ({moves}); the closest to the replay is "
            f"{closest['parts']}.")


def ranking_text(rep: dict) -> str:
    """One sentence: the best strategy by the replay, by the model, and where the rankings disagree."""
    rows = sorted(rep["strategies"], key=lambda r: r["replay_rank"])
    text = f"On the replay the best is {rep['best_replay']} ({rows[0]['replay_ttt_hours']:,.1f} h)"
    if rep["rankings_agree"]:
        return text + "; the fitted model ranks every strategy the same."
    model_best = min(rows, key=lambda r: r["model_rank"])
    text += (f"; the fitted model would pick {rep['best_model']} ({model_best['model_ttt_hours']:,.1f} h in the "
             "model)" if rep["best_model"] != rep["best_replay"] else "; the fitted model picks it too")
    moved = ", ".join(f"{r['name']} ({r['replay_rank']} by the replay, {r['model_rank']} by the model)"
                      for r in rows if r["replay_rank"] != r["model_rank"])
    return text + f". The rankings differ at {moved}."


def figure_replay_vs_model(rep: dict) -> str:
    import matplotlib.pyplot as plt
    import numpy as np

    rows = rep["strategies"]
    fig, ax = plt.subplots(figsize=(8, 4))
    x = np.arange(len(rows))
    ax.bar(x - 0.2, [r["replay_ttt_hours"] for r in rows], 0.4,
           yerr=[1.96 * (r["replay_ttt_stderr_hours"] or 0.0) for r in rows], label="replay of the trace")
    ax.bar(x + 0.2, [r["model_ttt_hours"] for r in rows], 0.4,
           yerr=[1.96 * r["model_ttt_stderr_hours"] for r in rows], label="fitted independent model")
    if rep.get("replay_limit_ttt_hours") is not None:
        ax.axhline(rep["replay_limit_ttt_hours"], color="0.4", ls=":", lw=1, label="the limit (replayed)")
    ax.set_xticks(x, [r["name"] for r in rows], rotation=30, ha="right")
    ax.set_ylabel("expected time-to-train (h)")
    ax.legend(fontsize=8)
    return _png(fig)


def figure_down_periods(units) -> str:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    ax.hlines(units.unit, units.start_hours, units.end_hours, lw=2.0, color="tab:red")
    ax.plot(units.start_hours, units.unit, "|", ms=2, color="tab:red")
    ax.set_xlabel("trace time (h, scaled)")
    ax.set_ylabel("group (unit)")
    ax.set_xlim(0, units.circle_hours)
    return _png(fig)


def render_trace_html(rep: dict, units) -> str:
    title = (f"Training plan on a failure trace: {rep['groups']} groups, {rep['work_hours']:g} h of work, "
             f"{rep['failure_trace']}")
    head = ["strategy", "τ (min)", "replay TTT (h)", "model TTT (h)", "model error (%)", "beyond the stat. error",
            "replay rank", "model rank", "wipe-outs per run (replay / model)"]
    rows = sorted(rep["strategies"], key=lambda r: r["replay_rank"])
    body = [[r["name"], f"{r['ckpt_interval_min']:,.0f}",
             f"{r['replay_ttt_hours']:,.1f} ± {r['replay_ttt_stderr_hours']:,.1f}",
             f"{r['model_ttt_hours']:,.1f} ± {r['model_ttt_stderr_hours']:,.1f}", f"{r['model_error_pct']:+.1f}",
             "yes" if r["model_error_beyond_stats"] else "no", r["replay_rank"], r["model_rank"],
             f"{r['replay_wipeouts_mean']:.2f} / {r['model_wipeouts_mean']:.2f}"] for r in rows]
    fit = rep["trace_fit"]
    frows = []
    if fit.get("failure") and fit["failure"].get("weibull"):
        w = fit["failure"]["weibull"]
        frows.append(["Weibull shape k (95% CI), p of k = 1",
                      f"{w['shape']:.3f} ({w['shape_ci95_low']:.3f} – {w['shape_ci95_high']:.3f}), "
                      f"{w['p_exponential']:.3g}"])
    if fit.get("repair"):
        frows.append(["repair law verdict", f"{fit['repair']['verdict']} (mean {fit['repair']['mean_hours']:.3g} h)"])
    b = fit["bursts"]
    frows.append(["failures in bursts (independent units)",
                  f"{b['burst_pct']:.1f}% ({b['burst_independent_pct']:.1f}%)"])
    if b.get("neighbour_pct") is not None:
        frows.append(["of those pairs, on neighbours (independent units)",
                      f"{b['neighbour_pct']:.1f}% ({b['neighbour_independent_pct']:.1f}%)"])
    if fit.get("uneven"):
        frows.append(["failures on the most-failing 1% (even units)",
                      f"{fit['uneven']['top_pct']:.1f}% ({fit['uneven']['top_even_pct']:.1f}%)"])
    parts = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8"/>',
             f"<title>{_e(title)}</title>", f"<style>{_CSS}</style>", "</head>", "<body>", f"<h1>{_e(title)}</h1>",
             f'<p class="sub">spare-jax plan --failure-trace, {_e(datetime.date.today().isoformat())}; ranked by '
             f"the replay; time scale {rep['trace_time_scale']:g}, repair {_e(rep['repair_from'])}</p>",
             f"<p><b>Ranking.</b> {_e(rep['ranking_text'])}</p>",
             f"<p><b>The model's parts.</b> {_e(rep['gap_text'])}</p>",
             _table(head, body, best_row=0),
             "<figure>", f'<img src="{figure_replay_vs_model(rep)}" alt="replay vs model TTT"/>',
             "<figcaption>The replay's expected time-to-train per strategy beside the fitted independent model's "
             "(95% intervals).</figcaption>", "</figure>",
             "<h2>The trace</h2>", "<figure>", f'<img src="{figure_down_periods(units)}" alt="down periods"/>',
             "<figcaption>The down periods of each group's unit over the (scaled) trace.</figcaption>", "</figure>",
             "<h2>The fit</h2>", _table(["quantity", "value"], frows), "</body>", "</html>"]
    return "\n".join(parts)


def write_trace_report(rep: dict, options: TraceOptions, path: str) -> None:
    """Write the HTML report of ``plan_on_trace``'s answer; ValueError when the file cannot be written."""
    units, _ = load_trace(rep["groups"], options)
    text = render_trace_html(rep, units)
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise ValueError(f"`report`: cannot write {path}: {exc.strerror}") from None
