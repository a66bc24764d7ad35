"""Figures: theory as lines, Monte Carlo as points with error bars, print resolution
(docs/reproducing.md#how-the-figures-are-drawn)."""

from __future__ import annotations

import csv
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

DPI = 200
COLORS = {"stacked": "tab:blue", "block": "tab:orange", "random": "tab:green", "spare": "tab:blue",
          "rep": "tab:orange", "none": "tab:gray", "elastic": "tab:green"}
# one style per scheme (colour, line style, marker), so that no curve hides another of the same colour and look
# where two coincide (Rep at r* = 1 is checkpointing alone)
SCHEME_STYLE = {"spare": ("tab:blue", "-", "o"), "rep": ("tab:orange", "--", "s"), "none": ("tab:gray", ":", "^"),
                "elastic": ("tab:green", "-.", "D")}
# Typography of every figure: Unicode symbols (Ω, τ*, ±, −, ×, log₂), no mathtext.


def write_csv(path: str, rows: list[dict]) -> None:
    """Rows of dicts to CSV (the union of keys, in first-seen order)."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    keys: list[str] = []
    for row in rows:
        for k in row:
            if k not in keys:
                keys.append(k)
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        for row in rows:
            w.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in keys})


def write_json(path: str, data) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as fh:
        json.dump(data, fh, indent=1, default=float)


def new_figure(ncols: int = 1, width: float = 6.4, height: float = 4.6):
    fig, axes = plt.subplots(1, ncols, figsize=(width * ncols, height), squeeze=False)
    return fig, axes[0]


def integer_x(ax) -> None:
    """Integer ticks on the x axis (redundancy, depth)."""
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def integer_y(ax) -> None:
    """Integer ticks on the y axis (r*, a count)."""
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(integer=True))


def read_csv(path: str) -> list[dict]:
    """A CSV written by ``write_csv`` back as rows: numbers as int or float, empty cells as None."""
    out = []
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            for k, v in row.items():
                if v == "":
                    row[k] = None
                    continue
                try:
                    row[k] = int(v)
                except ValueError:
                    try:
                        row[k] = float(v)
                    except ValueError:
                        pass
            out.append(row)
    return out


def save(fig, path: str) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
