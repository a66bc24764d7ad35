"""docs/api.md's examples run as they stand: each ```python block of the page, in a fresh namespace.

The clusters are small and their shapes those of tests/golden_cli.py (compiled once for both). The wipe-out
example loops over r = 2..12, one compiled kernel per r: the fast tier runs it at r = 2 and 3, the slow tier
at every r, as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "api.md"
FENCE = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)
LOOP = "for r in range(2, 13):"


def examples() -> list[tuple[str, str]]:
    """(the section's heading, the code) of every python block of the page."""
    text = PAGE.read_text()
    out = []
    for m in FENCE.finditer(text):
        heading = [ln for ln in text[:m.start()].splitlines() if ln.startswith("## ")][-1][3:]
        out.append((heading, m.group(1)))
    return out


def _run(code: str, capsys) -> str:
    exec(compile(code, str(PAGE), "exec"), {"__name__": "api_example"})
    return capsys.readouterr().out


def test_the_page_has_an_example_per_wing():
    headings = [h for h, _ in examples()]
    assert len(headings) == 7, headings
    for word in ("Report", "theory", "measure", "ttt", "rectlr", "planner", "failure trace"):
        assert any(word in h for h in headings), (word, headings)
    text = PAGE.read_text()
    assert "theory.expected_failures(" in text and "replay_ttt(" in text
    assert sum(LOOP in code for _, code in examples()) == 1


@pytest.mark.parametrize("index", range(7))
def test_each_example_runs(index, capsys):
    heading, code = examples()[index]
    if LOOP in code:
        code = code.replace(LOOP, "for r in (2, 3):")  # the fast tier's part of the loop; the slow tier: all
    out = _run(code, capsys)
    assert out.strip(), heading  # every example prints its answer


@pytest.mark.slow
def test_the_wipeout_example_runs_for_every_r(capsys):
    code = next(code for _, code in examples() if LOOP in code)
    out = _run(code, capsys)
    rows = [ln.split() for ln in out.splitlines() if ln.split() and ln.split()[0].isdigit()]
    assert [int(row[0]) for row in rows] == list(range(2, 13))
