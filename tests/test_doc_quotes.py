"""The numbers the docs quote from data files match those files (experiments/quote_numbers.py).

Pure Python, no JAX: each marked number in README.md and the docs pages the script covers is formatted afresh
from its file under figures/ and compared with the text; the parser is checked on a tiny synthetic page.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("quote_numbers", ROOT / "experiments" / "quote_numbers.py")
qn = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(qn)


@pytest.mark.parametrize("rel", qn.DOCS)
def test_every_quoted_number_matches_its_data_file(rel):
    text = (ROOT / rel).read_text()
    new, diffs = qn.requote(text, rel)
    assert not diffs, ("numbers differ from their data files; run `python experiments/quote_numbers.py`:\n"
                       + "\n".join(diffs))
    assert new == text


def test_readme_and_index_quote_data_files():
    for rel in ("README.md", "docs/index.md"):
        assert qn.MARKER.search((ROOT / rel).read_text()), rel


@pytest.fixture
def data(tmp_path):
    (tmp_path / "s.json").write_text(json.dumps(
        {"plan": [{"ttt": 1762.1, "lo": 1760.0, "hi": 1764.2, "r": 6}], "share": 0.3197}))
    (tmp_path / "t.csv").write_text("scheme,r,ttt\nspare,2,2871.8\nrep,2,2595.9\n")
    return tmp_path


def test_a_matching_page_is_left_alone(data):
    page = ("SPARe <!-- q: s.json plan[0].ttt {:,.0f} -->1,762 ± "
            "<!-- q: s.json ( plan[0].hi - plan[0].lo ) / 2 {:.1f} -->2.1 h at r = <!-- q: s.json plan[0].r {} -->6, "
            "**<!-- q: s.json share {:.0%} -->32%** shorter; rep <!-- q: t.csv [scheme=rep,r=2].ttt {:,.1f} -->2,595.9 h.\n")
    assert qn.requote(page, "p.md", data) == (page, [])


def test_a_mismatch_is_found_and_fixed(data):
    page = "line one\nMonte Carlo <!-- q: s.json plan[0].ttt {:,.0f} -->1,761 ± 4 h (95.6%).\n"
    new, diffs = qn.requote(page, "p.md", data)
    assert diffs == ["p.md:2: s.json plan[0].ttt: the docs say 1,761, the data file gives 1,762"]
    assert new == page.replace("-->1,761", "-->1,762")
    assert qn.requote(new, "p.md", data)[1] == []


def test_a_percent_that_is_prose_stays():
    page = "x <!-- q: s.json plan[0].r {:.1f} -->5.0% and more"
    new, diffs = qn.requote(page, "p.md", Path("/nonexistent"), {"s.json": {"plan": [{"r": 6}]}})
    assert new == "x <!-- q: s.json plan[0].r {:.1f} -->6.0% and more"
    assert len(diffs) == 1


@pytest.mark.parametrize("spec, words", [
    ("nope.json plan[0].ttt {:.0f}", ["nope.json", "no such data file"]),
    ("s.json plan[0].missing {:.0f}", ["s.json", "plan[0].missing", "'missing'"]),
    ("s.json plan[3].ttt {:.0f}", ["s.json", "plan[3].ttt", "[3]"]),
    ("t.csv [scheme=elastic].ttt {:.0f}", ["t.csv", "[scheme=elastic].ttt", "0 rows"]),
    ("t.csv [r=2].ttt {:.0f}", ["t.csv", "[r=2].ttt", "2 rows"]),
    ("s.json plan[0].ttt", ["expected 'FILE KEY FORMAT'"]),
    ("s.json plan[0].ttt {:.0f} {:.0f}", ["s.json", "{:.0f}"]),
])
def test_a_missing_file_or_key_is_an_error_naming_it(data, spec, words):
    page = f"a\nb <!-- q: {spec} -->1 c\n"
    with pytest.raises(qn.QuoteError) as err:
        qn.requote(page, "p.md", data)
    msg = str(err.value)
    assert msg.startswith("p.md:2: "), msg
    for w in words:
        assert w in msg, (w, msg)


def test_check_exits_1_on_a_difference_and_rewrites_without_it(data, tmp_path, monkeypatch, capsys):
    page = tmp_path / "p.md"
    page.write_text("x <!-- q: s.json plan[0].ttt {:,.0f} -->1,761 h\n")
    monkeypatch.setattr(qn, "DATA_DIR", data)
    assert qn.main(["--check", str(page)]) == 1
    assert "1,761" in page.read_text() and "the data file gives 1,762" in capsys.readouterr().out
    assert qn.main([str(page)]) == 0
    assert page.read_text() == "x <!-- q: s.json plan[0].ttt {:,.0f} -->1,762 h\n"
    assert qn.main(["--check", str(page)]) == 0
    page.write_text("x <!-- q: s.json plan[0].nope {:,.0f} -->1,761 h\n")
    assert qn.main(["--check", str(page)]) == 2
    assert "s.json: no key 'plan[0].nope'" in capsys.readouterr().err


def test_a_marker_may_not_begin_a_line(data):
    with pytest.raises(qn.QuoteError, match="p.md:2: a marker must not begin a line"):
        qn.requote("a\n  <!-- q: s.json plan[0].ttt {:,.0f} -->1,762 h\n", "p.md", data)


def test_a_changed_data_file_makes_the_real_page_differ():
    summary = json.loads((ROOT / "figures" / "summary.json").read_text())
    summary["plan"][0]["mc_ttt_hours"] += 10.0
    _, diffs = qn.requote((ROOT / "docs" / "index.md").read_text(), "docs/index.md", qn.DATA_DIR,
                          {"summary.json": summary})
    assert diffs and all("plan[0].mc_ttt_hours" in d for d in diffs), diffs
