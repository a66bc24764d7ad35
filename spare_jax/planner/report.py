"""A self-contained HTML report of a plan (docs/planning.md#outputs): the tables, the parameters with their sources,
and figures embedded as base64 PNG data URIs. No external resource (no CDN, stylesheet or script): the file opens
offline and can be mailed as it is.

Figures (matplotlib, Agg):
(a) expected time-to-train vs r per scheme (tau optimised per r), on a linear axis around the optimum, r*
    and tau* marked;
(b) the distribution (empirical CDF) of the Monte Carlo runs' time-to-train at (r*, tau*), with the
    deadline;
(c) the sensitivity: the change of the best expected TTT per scheme when one input is scaled.
"""

from __future__ import annotations

import base64
import datetime
import html
import io

from .. import plotting
from .plan import PlanResult  # noqa: F401
from .searched_rows import quantile_fields
from .table import (runs_text, cost_head, describe_scenario, model_text, price_text,  # noqa: F401
                    failures_text, left_text, r_text, sensitivity_rows, spread_text, survived_column, tau_text,
                    ttt_text)

_CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 1100px;
       color: #222; line-height: 1.4; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; margin-top: 1.6em; border-bottom: 1px solid #ccc; padding-bottom: 0.2em; }
p.sub { color: #555; margin-top: 0; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.92em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; }
th { background: #f2f2f2; text-align: center; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.flag { white-space: nowrap; font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 0.92em; }
p.verdict { font-size: 1.1em; margin: 0.6em 0 0.2em; }
ul.verdict { margin-top: 0.2em; }
ul.verdict li { margin-bottom: 0.15em; }
.wide { overflow-x: auto; max-width: 100%; }
@media (max-width: 1100px) { table { font-size: 0.8em; } th, td { padding: 0.25em 0.35em; } }
tr.best td { background: #eef6ee; }
figure { margin: 1em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #ddd; }
figcaption { color: #444; font-size: 0.9em; margin-top: 0.3em; }
ul.notes li { margin-bottom: 0.3em; }
.small { font-size: 0.85em; color: #555; }
"""


def escape(x) -> str:
    return html.escape(str(x), quote=True)


def png_uri(fig) -> str:
    """The figure as a data URI (PNG, base64), closed afterwards."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def figure_ttt_vs_r(result: PlanResult) -> str:
    """(a) expected TTT vs r per scheme, linear axes around the optimum: the y range reaches the optima within
    2x the best one (schemes beyond are listed as off scale); r* and tau* are stars and in the legend."""
    fig, (ax,) = plotting.new_figure(width=7.5, height=5.0)
    optima = sorted(e["ttt_hours"] for e in result.schemes.values())
    best = optima[0]
    # the y range reaches every point within 2x the best optimum of the curves whose optimum is within it
    shown = [p["ttt_hours"] for s, pts in result.curves.items() if result.schemes[s]["ttt_hours"] <= 2.0 * best
             for p in pts if p["ttt_hours"] <= 2.0 * best]
    top = max(1.25 * best, 1.05 * max(shown + [o for o in optima if o <= 2.0 * best]))
    # none first (below), then rep with large hollow squares, then spare: where Rep's r* is 1 its curve starts
    # on checkpointing alone and the two stay told apart by line style and marker
    order = sorted(result.curves, key=lambda s: {"none": 0, "rep": 1}.get(s, 2))
    w = result.inputs["work_hours"]
    for s in order:
        points = result.curves[s]
        e = result.schemes[s]
        r_star, tau = e["r_star"], e["ckpt_interval_min"]
        color, ls, marker = plotting.SCHEME_STYLE.get(s, (None, "-", "o"))
        when = "final checkpoint only" if tau >= 60.0 * w * (1 - 1e-9) else f"τ* = {tau:.0f} min"
        label = (f"{s}: " + ("" if s == "elastic" else f"r* = {r_star}, ") + f"{when}, {e['ttt_hours']:,.0f} h")
        if e["ttt_hours"] > top:
            label += " (off scale)"
        if s == "elastic":  # no redundancy r: one level across the axis
            ax.axhline(e["ttt_hours"], color=color, ls=ls, lw=1.4, label=label)
            continue
        rs = [p["redundancy"] for p in points]
        ys = [p["ttt_hours"] if p["ttt_hours"] <= top else float("nan") for p in points]  # off scale: not drawn
        off = [p["redundancy"] for p in points if p["ttt_hours"] > top]
        if off and e["ttt_hours"] <= top:
            label += f" (r = {_ranges(off)}: above the plot)"
        hollow = s == "rep"
        ax.plot(rs, ys, ls=ls, marker=marker, color=color, label=label, ms=7 if hollow else 4,
                mfc="none" if hollow else color, lw=1.6 if s == "none" else 1.2)
        if e["ttt_hours"] <= top:
            ax.plot([r_star], [e["ttt_hours"]], marker="*", ms=16, color=color, markeredgecolor="black", zorder=5)
    ax.set_ylim(0.97 * best, top)
    ax.set_xlabel("redundancy r")
    ax.set_ylabel("expected time-to-train (h)")
    ax.set_title("Expected time-to-train vs r (τ optimised per r; stars: r*)")
    plotting.integer_x(ax)
    ax.grid(alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()  # the legend in the schemes' order (spare first)
    rank = {s: i for i, s in enumerate(result.curves)}
    pairs = sorted(zip(handles, labels), key=lambda hl: rank.get(hl[1].split(":")[0], len(rank)))
    ax.legend([h for h, _ in pairs], [lab for _, lab in pairs], loc="upper center", bbox_to_anchor=(0.5, -0.16),
              fontsize=8, ncol=1, frameon=False)
    return png_uri(fig)


def _ranges(values) -> str:
    """'1, 7–16': sorted whole numbers with their runs written as ranges."""
    out, run = [], []
    for v in sorted(values):
        if run and v != run[-1] + 1:
            out.append(run)
            run = []
        run.append(v)
    out.append(run)
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}, {r[1]}" if len(r) == 2 else f"{r[0]}–{r[-1]}"
                     for r in out if r)


def figure_ttt_distribution(result: PlanResult) -> str | None:
    """(b) empirical CDF of each scheme's Monte Carlo runs, with the deadline."""
    import numpy as np

    runs = {s: h for s, h in result.runs_hours.items() if h is not None and len(h)}
    if not runs:
        return None
    fig, (ax,) = plotting.new_figure(width=7.5, height=4.2)
    lo, hi = cdf_range(runs, result.inputs.get("deadline_hours"))
    for s, h in runs.items():
        x = np.sort(np.asarray(h))
        y = np.arange(1, x.size + 1) / x.size
        color, ls, _ = plotting.SCHEME_STYLE.get(s, (None, "-", "o"))
        ls = "-." if ls == ":" else ls  # dotted marks the expected values
        r = "" if s == "elastic" else f"r* = {result.schemes[s]['r_star']}, "
        label = f"{s} ({r}{x.size} runs)" + (" (off scale)" if x[0] > hi else "")
        ax.step(x, y, where="post", color=color, ls=ls, lw=1.6 if s == "none" else 1.2, label=label)
        if lo <= result.schemes[s]["ttt_hours"] <= hi:
            ax.axvline(result.schemes[s]["ttt_hours"], color=color, ls=":", lw=1)
    deadline = result.inputs.get("deadline_hours")
    if deadline is not None and lo <= deadline <= hi:
        ax.axvline(deadline, color="tab:red", lw=2, label=f"deadline {deadline:g} h")
    ax.set_xlim(lo, hi)
    ax.set_xlabel("time-to-train (h)")
    ax.set_ylabel("fraction of runs finished")
    ax.set_title("Time-to-train of Monte Carlo runs at (r*, τ*); thin dotted: expected", fontsize=10)
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    return png_uri(fig)


def cdf_range(runs: dict, deadline=None) -> tuple:
    """The CDF figure's x range: from the lowest 1% quantile to the highest 99% quantile of the schemes whose
    runs lie within 1.5x the best median (a scheme far slower is off scale rather than squashing the others
    into one line), with a margin of 4% each side; the deadline is kept in view where it lies within 1.5x
    the best median too."""
    import numpy as np

    q = {s: np.quantile(np.asarray(h, np.float64), [0.01, 0.5, 0.99]) for s, h in runs.items()}
    best = min(v[1] for v in q.values())
    near = [v for v in q.values() if v[1] <= 1.5 * best] or list(q.values())
    lo, hi = min(v[0] for v in near), max(v[2] for v in near)
    if deadline is not None and deadline <= 1.5 * best:
        lo, hi = min(lo, deadline), max(hi, deadline)
    pad = max(0.04 * (hi - lo), 1e-6 * max(abs(hi), 1.0))
    return lo - pad, hi + pad


def figure_sensitivity(result: PlanResult) -> str | None:
    """(c) change of the best expected TTT (%) per scheme for each scaled input."""
    import numpy as np

    if not result.sensitivity:
        return None
    labels = [row["label"] for row in result.sensitivity]
    schemes = [s for s in result.schemes if s in result.sensitivity[0]["schemes"]]
    fig, (ax,) = plotting.new_figure(width=7.5, height=0.45 * len(labels) * len(schemes) / 2 + 1.8)
    y = np.arange(len(labels))
    h = 0.8 / len(schemes)
    for i, s in enumerate(schemes):
        base = result.schemes[s]["ttt_hours"]
        change = [100.0 * (row["schemes"][s]["ttt_hours"] / base - 1.0) for row in result.sensitivity]
        bars = ax.barh(y + (i - (len(schemes) - 1) / 2) * h, change, height=h, color=plotting.COLORS.get(s),
                       label=s)
        for bar, row in zip(bars, result.sensitivity):
            r_new, r0 = row["schemes"][s]["r_star"], result.schemes[s]["r_star"]
            if r_new != r0:
                ax.annotate(f"r* = {r_new}", (bar.get_width(), bar.get_y() + bar.get_height() / 2), fontsize=7,
                            xytext=(3 if bar.get_width() >= 0 else -3, 0), textcoords="offset points",
                            ha="left" if bar.get_width() >= 0 else "right", va="center")
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(y)
    ax.set_yticklabels(labels)
    ax.invert_yaxis()
    ax.set_xlabel("change of the expected time-to-train (%)")
    ax.set_title("Sensitivity (optimiser re-run; r* labelled where it moves)")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    return png_uri(fig)


def _table(head: list, rows: list, best_row: int | None = None, numeric_from: int = 1) -> str:
    out = ["<table>", "<thead><tr>" + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr></thead>", "<tbody>"]
    for i, row in enumerate(rows):
        cls = ' class="best"' if i == best_row else ""
        cells = "".join(f'<td class="num">{escape(c)}</td>' if j >= numeric_from else f"<td>{escape(c)}</td>"
                        for j, c in enumerate(row))
        out.append(f"<tr{cls}>{cells}</tr>")
    out += ["</tbody>", "</table>"]
    return "\n".join(out)


def _flags(text: str) -> str:
    """``text`` escaped, each flag (``--name``) in a span that is never broken across lines."""
    import re

    return re.sub(r"(--[a-z][a-z0-9-]*)", r'<span class="flag">\1</span>', escape(text))


def verdict_html(text: str) -> list:
    """The verdict's lines: the first (what to run) as a paragraph, the others as a list; flags (``--name``)
    never broken across lines."""
    first, *rest = text.split("\n")
    esc = _flags
    out = [f'<p class="verdict"><b>Verdict.</b> <span class="answer">{esc(first)}</span></p>']
    if rest:
        out += ['<ul class="verdict">'] + [f"<li>{esc(line)}</li>" for line in rest] + ["</ul>"]
    return out


def _fmt(v, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def render_html(result: PlanResult) -> str:
    """The report as one HTML string (well-formed: void elements self-closed, all text escaped)."""
    inp = result.inputs
    deadline = inp.get("deadline_hours")
    title = (f"Training plan: {inp['gpus']:,} GPUs, {inp['groups']} groups of {inp['gpus_per_group']:,}, "
             f"{inp['work_hours']:g} h of work")
    parts = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8"/>',
             '<meta name="viewport" content="width=device-width, initial-scale=1"/>',
             f"<title>{escape(title)}</title>", f"<style>{_CSS}</style>", "</head>", "<body>",
             f"<h1>{escape(title)}</h1>",
             f'<p class="sub">spare-jax plan, {escape(datetime.date.today().isoformat())}; method: {escape(inp.get("method_detail", inp["method"]))}'
             + (f"; preset {escape(inp['preset'])}" if inp.get("preset") else "") + "</p>"]
    parts.append(f"<p>Model: {escape(model_text(inp))}."
                 + (f" Price: {escape(price_text(inp))}." if "gpu_hour_price" in inp else "") + "</p>")

    schemes = result.schemes
    if result.verdict is not None:
        parts[parts.index(f"<h1>{escape(title)}</h1>") + 1:1] = verdict_html(result.verdict["text"])
    best = result.verdict["scheme"] if result.verdict is not None and result.verdict["scheme"] in schemes \
        else min(schemes, key=lambda s: schemes[s]["ttt_hours"])
    survived = survived_column(schemes)
    head = ["scheme", "r*", "τ* (min)", "expected TTT (h)", "5–95% (h)",
            f"P(TTT > {deadline:g} h)" if deadline is not None else "P(TTT > deadline)", "availability (%)",
            "failures survived per run" if survived else "failures endured", "left to gain (%)", "GPU-hours",
            cost_head(inp)]
    rows = []
    for s, e in schemes.items():
        rows.append([s, r_text(s, e), tau_text(e, inp), ttt_text(e), spread_text(e, " – "),
                     _fmt(e["p_over_deadline"], ".2f"), f"{e['availability_pct']:.1f}",
                     failures_text(e, survived), left_text(e), f"{e['gpu_hours']:,.0f}", f"{e['cost']:,.0f}"])
    price = inp.get("gpu_hour_price", 0.0)
    lim = getattr(result, "limit", None)
    if lim is not None and lim.get("ttt_hours") is not None:
        t = lim["ttt_hours"]
        q = quantile_fields(lim["mc_ttt_runs_hours"]) if lim.get("mc_ttt_runs_hours") else \
            {"mc_ttt_p05_hours": None, "mc_ttt_p95_hours": None}
        rows.append(["limit", "-", tau_text(lim, inp), f"{t:,.1f} ± {lim['mc_ttt_stderr_hours']:,.1f}"
                     if lim["mc_ttt_stderr_hours"] >= 0.05 else f"{t:,.1f}", spread_text(q, " – "), "-", "-", "-",
                     "0", f"{t * inp['gpus']:,.0f}", f"{t * inp['gpus'] * price:,.0f}"])
    if result.bound is not None:
        b = result.bound
        rows.append(["group failures cost nothing", "-", tau_text(b, inp), f"{b['ttt_hours']:,.1f}", "-",
                     "-", "-", "-", "-", f"{b['ttt_hours'] * inp['gpus']:,.0f}", f"{b['ttt_hours'] * inp['gpus'] * price:,.0f}"])
    parts += ["<h2>Plan per scheme</h2>", '<div class="wide">', _table(head, rows, best_row=list(schemes).index(best)),
              "</div>",
              '<p class="small">spare: SPARe stacks with adaptive reordering; rep: replica sets (r divides N); '
              "none: checkpoint/restart only; limit: the expected TTT, in the same whole-run kernel, of an "
              "ideal scheme that never wipes out and computes at alive/N (elastic training that shrinks the batch), "
              "at its own best τ, which no strategy that uses only the capacity that is up should beat; left to "
              "gain: (TTT − limit) / limit; group failures cost nothing: the TTT of a run whose only losses are "
              "job-wide interruptions, checkpoints and restarts. Expected TTT from "
              "the optimiser "
              f"({escape(inp.get('method_detail', inp['method']))}); the 5–95% range and P(TTT &gt; deadline) from "
              f"{escape(runs_text(schemes))} at (r*, τ*). "
              + ("Failures survived per run: the group failures the whole runs survived, on average (with "
                 "repair). " if survived else "Failures endured: E[T] − 1 of the i.i.d. theory at r* (group "
                 "failures absorbed before the wipe-out). ") + "GPU-hours = TTT × GPUs; cost = GPU-hours × price.</p>"]

    fig_a = figure_ttt_vs_r(result)
    parts += ["<h2>Figures</h2>", "<figure>", f'<img src="{fig_a}" alt="expected time-to-train vs r"/>',
              "<figcaption>(a) Expected time-to-train vs redundancy r per scheme, τ optimised at each r; stars: "
              "r* with τ*. Linear axes around the optimum.</figcaption>", "</figure>"]
    fig_b = figure_ttt_distribution(result)
    if fig_b is not None:
        parts += ["<figure>", f'<img src="{fig_b}" alt="time-to-train distribution"/>',
                  "<figcaption>(b) Empirical CDF of the time-to-train of the Monte Carlo runs at (r*, τ*)"
                  + (", with the deadline" if deadline is not None else "") + ".</figcaption>", "</figure>"]

    if result.spares is not None:
        from .spares import figure_spares, report_rows

        head, rows, text = report_rows(result.spares)
        parts += ["<h2>Spare pool (--spares auto)</h2>", f"<p>{escape(text)}</p>", _table(head, rows)]
        fig = figure_spares(result.spares)
        if fig is not None:
            parts += ["<figure>", f'<img src="{png_uri(fig)}" alt="time-to-train and cost against the spares"/>',
                      "<figcaption>Time-to-train and total cost against the spares K per scheme; stars: the "
                      "cheapest K that meets the wait; ×: K whose longest wait is too often too long.</figcaption>",
                      "</figure>"]

    if result.sensitivity:
        head, rows = sensitivity_rows(result, ("r*", "TTT (h)", "TTT keeping r* (h)"), ": ")
        parts += ["<h2>Sensitivity</h2>",
                  "<p>The optimiser re-run with one uncertain input scaled. “TTT keeping r*”: the time-to-train "
                  "if the run keeps the base plan's r* (τ re-optimised), shown where r* moves.</p>",
                  _table(head, rows)]
        fig_c = figure_sensitivity(result)
        parts += ["<figure>", f'<img src="{fig_c}" alt="sensitivity"/>',
                  "<figcaption>(c) Change of the expected time-to-train when one input is scaled.</figcaption>",
                  "</figure>"]

    parts += ["<h2>Parameters and sources</h2>",
              _table(["parameter", "value", "source"], [[r["parameter"], r["value"], r["source"]]
                                                        for r in result.sources] or
                     [[k, v, "input to plan()"] for k, v in inp.items() if not isinstance(v, dict)], numeric_from=9)]
    if result.preset:
        p = result.preset
        parts.append(f"<p>Preset <b>{escape(p['name'])}</b>: {escape(p['description'])}.</p>")
        if p["sources"]:
            parts += ["<p>Sources:</p>", "<ul>"] + [f"<li>{escape(s)}</li>" for s in p["sources"]] + ["</ul>"]
        if p["assumptions"]:
            parts += ["<p>Assumptions (not in the sources):</p>", "<ul>"] + [
                f"<li>{escape(a)}</li>" for a in p["assumptions"]] + ["</ul>"]
    if result.fit is not None:
        parts += _fit_section(result.fit)
    if result.notes:
        parts += ["<h2>Notes</h2>", '<ul class="notes">'] + [f"<li>{_flags(n)}</li>" for n in result.notes] + ["</ul>"]
    parts += ["</body>", "</html>"]
    return "\n".join(parts) + "\n"


def _fit_section(fit: dict) -> list:
    ex, wb = fit["exponential"], fit["weibull"]
    rows = [["nodes watched", f"{fit['nodes']:,}"], ["failures", f"{fit['failures']:,}"],
            ["window", f"{fit['window_hours']:g} h"], ["exposure", f"{fit['exposure_node_hours']:,.0f} node-hours"],
            ["exponential: node MTBF (95% CI)",
             f"{ex['mtbf_hours']:,.1f} h ({ex['mtbf_ci95_low']:,.1f} – {ex['mtbf_ci95_high']:,.1f})"]]
    if wb is not None:
        rows += [["Weibull renewal: shape k (95% CI)",
                  f"{wb['shape']:.3f} ({wb['shape_ci95_low']:.3f} – {wb['shape_ci95_high']:.3f})"],
                 ["Weibull renewal: node MTBF (95% CI)",
                  f"{wb['mtbf_hours']:,.1f} h ({wb['mtbf_ci95_low']:,.1f} – {wb['mtbf_ci95_high']:,.1f})"],
                 ["LR test of k = 1 (exponential): p", f"{wb['p_exponential']:.3g}"]]
    return ["<h2>Failure log fit</h2>", f"<p>{escape(fit['path'])}, maximum likelihood.</p>",
            _table(["quantity", "value"], rows, numeric_from=1)]


def write_report(result: PlanResult, path: str) -> None:
    """Write the report; ValueError when the file cannot be written."""
    text = render_html(result)
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise ValueError(f"`report`: cannot write {path}: {exc.strerror}") from None
