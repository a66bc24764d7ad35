"""Every figure drawn from the tracked CSVs (no recomputation, a few seconds): no two series of one panel share
colour, line style and marker, and repair.png's wipe-out axis stays within its informative range."""

from __future__ import annotations

import json
import os
import runpy
import shutil
import sys

import matplotlib.colors as mcolors
import pytest


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIG = os.path.join(ROOT, "figures")


@pytest.fixture
def drawn(monkeypatch):
    """Capture each figure as it is saved (rendered, not written): {file name: Figure}."""
    from matplotlib.figure import Figure

    figs = {}

    def savefig(self, path, *args, **kwargs):
        self.canvas.draw()
        figs[os.path.basename(str(path))] = self

    monkeypatch.setattr(Figure, "savefig", savefig)
    return figs


def _series(ax):
    """(label, (colour, line style, marker)) of each labelled series of a panel (lines and error bars)."""
    out = []
    lines = [ln for ln in ax.get_lines() if not ln.get_label().startswith("_")]
    for c in ax.containers:
        if hasattr(c, "lines") and c.get_label() and not c.get_label().startswith("_"):
            lines.append((c.get_label(), c.lines[0]))
    for item in lines:
        label, ln = item if isinstance(item, tuple) else (item.get_label(), item)
        if len(ln.get_xdata()) == 0 and not isinstance(item, tuple):
            continue  # a legend-only proxy
        style = (mcolors.to_hex(ln.get_color()), str(ln.get_linestyle()), str(ln.get_marker()))
        out.append((label, style))
    return out


def _check_distinct(figs):
    assert figs
    for name, fig in figs.items():
        for ax in fig.axes:
            seen = {}
            for label, style in _series(ax):
                assert style not in seen, f"{name}: {label!r} and {seen[style]!r} share colour, line and marker"
                seen[style] = label


def test_repair_png_distinct_and_clipped(tmp_path, drawn):
    from spare_jax.suite import repair

    repair.replot_repair(FIG, str(tmp_path))
    _check_distinct(drawn)
    rows = repair._read_csv(os.path.join(FIG, "repair_wipeout.csv"))
    lo, hi = repair.y_limits(rows)
    ax = drawn["repair.png"].axes[0]
    y0, y1 = ax.get_ylim()
    checked = max(x["mc_uptime_h"] for x in rows if x["mc_uptime_h"] is not None)
    assert y1 <= hi * 1.0001 and y1 >= checked, (y1, hi, checked)
    assert y0 >= lo * 0.9999
    assert hi < 1e5  # not 10^22 h
    assert any(ln.get_label().startswith("theory >") for ln in ax.get_lines())  # the "beyond" markers


@pytest.mark.slow
def test_run_figures_and_ring_ttt_from_their_csvs(tmp_path, drawn, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["replot_run_figures.py", FIG, str(tmp_path)])
    runpy.run_path(os.path.join(ROOT, "experiments", "replot_run_figures.py"), run_name="__main__")
    for name in ("ring_ttt.csv", "ring_ttt_job_share.csv"):
        shutil.copy(os.path.join(FIG, name), tmp_path / name)
    from spare_jax.suite import rings

    rings.replot_ring_ttt(str(tmp_path))
    assert {"ttt_vs_r.png", "rstar_vs_n.png", "wipeout_theory_vs_mc.png", "overhead_vs_r.png",
            "ring_ttt.png"} <= set(drawn)
    _check_distinct(drawn)
    ax = drawn["wipeout_theory_vs_mc.png"].axes[0]
    import csv

    rs = sorted({int(r["redundancy"]) for r in csv.DictReader(open(os.path.join(FIG, "wipeout_validation.csv")))})
    assert [int(t) for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]] == rs


# ---------------------------------------------------------------------------------------------------------
# every figure function of the package, rendered (tracked CSVs where they hold the data, small synthetic data
# otherwise): distinct series, integer ticks on integer axes, one typography

# (module, function) of every function in spare_jax/ that draws a figure (calls plotting.save, savefig or
# report.png_uri); the test below fails when one is added without being rendered here
FIGURE_FUNCTIONS = {
    ("spare_jax.planner.report", "figure_ttt_vs_r"), ("spare_jax.planner.report", "figure_ttt_distribution"),
    ("spare_jax.planner.report", "figure_sensitivity"), ("spare_jax.suite.microbatches", "plot_microbatches"),
    ("spare_jax.suite.overhead", "_plot_overhead"), ("spare_jax.suite.reorder", "_plot_reorder"),
    ("spare_jax.suite.repair", "_plot"), ("spare_jax.suite.rings", "_plot"), ("spare_jax.suite.scenarios", "_plot"),
    ("spare_jax.suite.training", "_plot_rstar"), ("spare_jax.suite.training", "_plot_ttt"),
    ("spare_jax.suite.wipeout", "_plot_wipeout"),
    ("spare_jax.planner.report", "render_html"),  # the spare pool's figure (plan --spares auto) is drawn inline
    ("spare_jax.planner.trace_report", "figure_replay_vs_model"), ("spare_jax.planner.trace_report", "figure_down_periods"),
}
INTEGER_AXES = ("redundancy r", "r*", "failed groups k", "failure number", "depth d*")
ASCII_STAND_INS = ("Omega", "+-", "tau*", "tau =", "log2", "$")  # Ω, ±, τ*, τ, log₂; no mathtext


def _figure_functions_in_package():
    import ast

    found = set()
    pkg = os.path.join(ROOT, "spare_jax")
    for dirpath, _, files in os.walk(pkg):
        for f in files:
            if not f.endswith(".py"):
                continue
            path = os.path.join(dirpath, f)
            module = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
            tree = ast.parse(open(path).read())
            for node in tree.body:
                if not isinstance(node, ast.FunctionDef):
                    continue
                for call in ast.walk(node):
                    if isinstance(call, ast.Call):
                        fn = call.func
                        name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
                        owner = fn.value.id if isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name) else ""
                        if name in ("savefig", "_png", "png_uri") or (name == "save" and owner == "plotting"):
                            found.add((module, node.name))
                            break
    return found - {("spare_jax.plotting", "save"), ("spare_jax.planner.report", "png_uri"),
                    ("spare_jax.planner.trace_report", "_png")}


def _fake_plan(monkeypatch, **kw):
    """A plan whose optimiser and Monte Carlo are faked (instant): Rep's curve starts on checkpointing alone
    (r* = 1 for both, the same TTT), the case where Rep was drawn under none."""
    import numpy as np

    from spare_jax.planner import plan as planmod

    def optimize(n, r_max, model, cfg, scenario, epochs, seed, progress):
        f = cfg.restart_min / 60.0 + cfg.ckpt_cost_min / 5.0
        curves = {"spare": [{"redundancy": r, "ckpt_interval_min": 30.0, "ttt_hours": f * (900 + 40 * (r - 4) ** 2)}
                            for r in range(1, r_max + 1)],
                  "rep": [{"redundancy": r, "ckpt_interval_min": 20.0, "ttt_hours": f * (1000 + 150 * (r - 1))}
                          for r in range(1, r_max + 1) if n % r == 0],
                  "none": [{"redundancy": 1, "ckpt_interval_min": 20.0, "ttt_hours": f * 1000.0}]}
        schemes = {}
        for s, pts in curves.items():
            best = min(pts, key=lambda p: p["ttt_hours"])
            schemes[s] = {"r_star": best["redundancy"], "ckpt_interval_min": best["ckpt_interval_min"],
                          "ttt_hours": best["ttt_hours"], "availability_pct": 72.0, "mean_uptime_min": 300.0,
                          "ttt_over_w": best["ttt_hours"] / cfg.work_hours}
        return {"schemes": schemes, "curves": curves, "method": "closed form"}

    def monte_carlo(scheme, cluster, entry, cfg, gpus, sampling, notes):
        return np.random.default_rng(len(scheme)).normal(entry["ttt_hours"], 30.0, sampling.count)

    monkeypatch.setattr(planmod, "_optimize", optimize)
    monkeypatch.setattr(planmod, "_monte_carlo", monte_carlo)
    monkeypatch.setattr(planmod, "failures_endured", lambda s, n, r: float(r - 1))
    monkeypatch.setattr(planmod, "limit", lambda *a: {"ttt_hours": None, "what": "not computed (faked)"})
    return planmod


def _check_integer_ticks(name, fig):
    for ax in fig.axes:
        for axis, label, scale, lim in ((ax.xaxis, ax.get_xlabel(), ax.get_xscale(), ax.get_xlim()),
                                        (ax.yaxis, ax.get_ylabel(), ax.get_yscale(), ax.get_ylim())):
            if scale != "linear" or not any(word in label for word in INTEGER_AXES):
                continue
            ticks = [t for t in axis.get_majorticklocs() if min(lim) <= t <= max(lim)]
            assert all(abs(t - round(t)) < 1e-9 for t in ticks), f"{name}: {label!r} ticks {ticks}"


def _check_typography(name, fig):
    for text in fig.findobj(lambda a: hasattr(a, "get_text") and callable(a.get_text)):
        s = text.get_text()
        if s.startswith("$\\mathdefault{"):  # matplotlib's own log-axis tick labels (10^k)
            continue
        for bad in ASCII_STAND_INS:
            assert bad not in s, f"{name}: {s!r} contains {bad!r}"


@pytest.mark.slow
def test_every_figure_function_renders_distinct_series(tmp_path, drawn, monkeypatch):
    import importlib

    import numpy as np

    from spare_jax import plotting
    from spare_jax.planner import report

    assert _figure_functions_in_package() == FIGURE_FUNCTIONS
    # the suite's figures, from the tracked CSVs (reorder's latencies are not tracked: synthetic ones)
    monkeypatch.setattr(sys, "argv", ["replot_run_figures.py", FIG, str(tmp_path)])
    runpy.run_path(os.path.join(ROOT, "experiments", "replot_run_figures.py"), run_name="__main__")
    importlib.import_module("spare_jax.suite.scenarios").replot_scenarios(FIG, str(tmp_path))
    importlib.import_module("spare_jax.suite.microbatches").replot_microbatches(FIG, str(tmp_path))
    rows = plotting.read_csv(os.path.join(FIG, "reorder_movement.csv"))
    ms = np.random.default_rng(0).lognormal(0.0, 1.0, len(rows))
    importlib.import_module("spare_jax.suite.reorder")._plot_reorder(
        rows, ms, rows[0]["groups"], sorted({x["redundancy"] for x in rows}), str(tmp_path / "reorder_movement.png"))
    # the plan report's three figures, on a faked plan (seconds)
    planmod = _fake_plan(monkeypatch)
    result = planmod.plan(planmod.Fleet(8192, 1024), planmod.Costs(deadline_hours=1200.0), planmod.PlanOptions(runs=50),
                          progress=False)
    figs = {}

    def png(fig):
        fig.canvas.draw()
        figs[f"report figure {len(figs) + 1}"] = fig
        return "data:image/png;base64,"

    monkeypatch.setattr(report, "png_uri", png)
    report.figure_ttt_vs_r(result)
    report.figure_ttt_distribution(result)
    report.figure_sensitivity(result)
    # plan --failure-trace's two figures, on the recorded optimize on the small test trace
    from spare_jax.planner import trace_report
    from spare_jax.planner.trace_replay import TraceOptions, load_trace

    monkeypatch.setattr(trace_report, "_png", png)
    with open(os.path.join(ROOT, "tests", "data", "golden_cli", "optimize_trace.json")) as fh:
        trace_report.figure_replay_vs_model(json.load(fh))
    trace_report.figure_down_periods(load_trace(24, TraceOptions(os.path.join(ROOT, "tests", "data", "traces",
                                                                              "small.csv")))[0])
    drawn.update(figs)
    assert {"scenarios.png", "microbatches.png", "reorder_movement.png", "ttt_vs_r.png", "rstar_vs_n.png",
            "wipeout_theory_vs_mc.png", "overhead_vs_r.png", "ring_ttt.png", "repair.png", "report figure 1",
            "report figure 2", "report figure 3"} <= set(drawn)
    _check_distinct(drawn)
    for name, fig in drawn.items():
        _check_integer_ticks(name, fig)
        _check_typography(name, fig)
    # the report's rep and none curves coincide at r = 1 here: told apart by line style and marker
    ax = drawn["report figure 1"].axes[0]
    styles = {ln.get_label().split(":")[0]: (ln.get_linestyle(), ln.get_marker()) for ln in ax.get_lines()
              if not ln.get_label().startswith("_")}
    assert styles["rep"] != styles["none"] and len(set(styles.values())) == 3


@pytest.mark.slow
def test_scenarios_png_without_the_reference_column(tmp_path, drawn):
    """A scenarios_uptime.csv written before the exact reference was kept beside the Monte Carlo still draws
    (the reference from the closed form); with the column, the curve is the column's."""
    import csv
    import importlib

    scen = importlib.import_module("spare_jax.suite.scenarios")
    scen.replot_scenarios(FIG, str(tmp_path))
    refs = [ln for ln in drawn["scenarios.png"].axes[0].get_lines() if ln.get_label().startswith("no domains")]
    assert len(refs) == 2
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(os.path.join(FIG, "scenarios_job_wide.csv"), src)
    rows = list(csv.DictReader(open(os.path.join(FIG, "scenarios_uptime.csv"))))
    with open(src / "scenarios_uptime.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, list(rows[0]) + ["exact_uptime_no_domains_min"])
        w.writeheader()
        for row in rows:
            w.writerow({**row, "exact_uptime_no_domains_min": 123.0 if row["job_mtbf_min"] else 456.0})
    scen.replot_scenarios(str(src), str(tmp_path))
    ys = {ln.get_label(): set(ln.get_ydata()) for ln in drawn["scenarios.png"].axes[0].get_lines()
          if ln.get_label().startswith("no domains")}
    assert ys == {"no domains, exact": {456.0}, "no domains, exact (+ job-wide)": {123.0}}
    # no reference at all: the rest is drawn
    scen._plot(scen.plotting.read_csv(os.path.join(FIG, "scenarios_uptime.csv")), None,
               scen.plotting.read_csv(os.path.join(FIG, "scenarios_job_wide.csv")), 600, 5, 5e4, 2e3,
               str(tmp_path / "scenarios.png"))
    assert not [ln for ln in drawn["scenarios.png"].axes[0].get_lines() if ln.get_label().startswith("no domains")]
