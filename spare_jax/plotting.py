"""Figures: theory as lines, Monte Carlo as points with error bars, print resolution (SPEC §6, issue 7)."""

from __future__ import annotations

import csv
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

DPI = 200
COLORS = {"stacked": "tab:blue", "block": "tab:orange", "random": "tab:green", "spare": "tab:blue",
          "rep": "tab:orange", "none": "tab:gray"}


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


def save(fig, path: str) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
