"""Every figure drawn from the tracked CSVs (no recomputation, a few seconds): no two series of one panel share
colour, line style and marker, and repair.png's wipe-out axis stays within its informative range."""

from __future__ import annotations

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
