"""The numbers the docs quote from data files match those files (experiments/quote_numbers.py).

Pure Python, no JAX: each marked number in README.md and the docs pages the script covers is formatted afresh
from its file under figures/ and compared with the text, and each marked code block (the planning page's
transcript) with its file; the parser is checked on tiny synthetic pages. The pooled closed form against whole
runs (figures/closed_form_vs_runs.json, which docs/validation.md quotes) is checked against its chunk files.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("quote_numbers", ROOT / "experiments" / "quote_numbers.py")
qn = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(qn)


@pytest.mark.parametrize("rel", qn.DOCS)
def test_every_quoted_number_matches_its_data_file(rel):
    text = (ROOT / rel).read_text()
    new, diffs = qn.refresh(text, rel)
    assert not diffs, ("numbers or blocks differ from their data files; run `python experiments/quote_numbers.py`:\n"
                       + "\n".join(diffs))
    assert new == text


# the pages a user reads first: every number on them that a command printed is a quote
FIRST_PAGES = ["README.md", "docs/index.md", "docs/tutorial.md", "docs/planning.md", "docs/best_600k.md",
               "docs/results.md"]


@pytest.mark.parametrize("rel", [*FIRST_PAGES, "docs/validation.md"])
def test_the_pages_quote_data_files(rel):
    assert rel in qn.DOCS
    assert qn.MARKER.search((ROOT / rel).read_text()), rel


def _planted(value: str) -> str:
    """``value`` with its last digit changed (1,762 -> 1,763; 0.0% -> 0.1%)."""
    i = max(i for i, ch in enumerate(value) if ch.isdigit())
    return value[:i] + str((int(value[i]) + 1) % 10) + value[i + 1:]


@pytest.mark.parametrize("rel", FIRST_PAGES)
def test_a_changed_number_anywhere_on_the_page_is_found(rel):
    """Every quoted number of the page, changed in the text alone (its last digit), is reported at its line, and
    the page is put back as it was."""
    text = (ROOT / rel).read_text()
    found = [m for m in qn.MARKER.finditer(text) if m.group("value")]
    assert len(found) >= 10, rel
    page, at = [], 0
    for m in found:
        page += [text[at:m.start("value")], _planted(m.group("value"))]
        at = m.end("value")
    new, diffs = qn.requote("".join(page) + text[at:], rel, qn.DATA_DIR)
    want = [f"{rel}:{text.count(chr(10), 0, m.start()) + 1}: " for m in found]
    assert len(diffs) == len(found) and all(d.startswith(w) for d, w in zip(diffs, want)), (len(diffs), len(found))
    assert all(f"the docs say {_planted(m.group('value')).rstrip('%')}" in d for d, m in zip(diffs, found))
    assert new == text


@pytest.mark.parametrize("name", ["plan_262k", "plan_default", "optimize", "run"])
def test_a_changed_transcript_makes_its_pages_differ(name):
    """A transcript's number changed (what a new run of the command would give) makes every page that quotes it
    differ, naming the transcript."""
    record = json.loads((ROOT / "figures" / "transcripts" / f"{name}.json").read_text())
    record["wall_seconds"] *= 1.5
    quoting = [rel for rel in FIRST_PAGES if f"transcripts/{name}.json wall_seconds" in (ROOT / rel).read_text()]
    assert quoting, name
    for rel in quoting:
        _, diffs = qn.requote((ROOT / rel).read_text(), rel, qn.DATA_DIR, {f"transcripts/{name}.json": record})
        assert diffs and all(f"transcripts/{name}.json wall_seconds" in d for d in diffs), diffs


def test_every_transcript_says_what_ran_where_and_when():
    """figures/transcripts/*.json (experiments/doc_transcripts.py): the command, its output, its wall time, the
    machine, the load and the commit; each is quoted by a page."""
    spec = importlib.util.spec_from_file_location("doc_transcripts", ROOT / "experiments" / "doc_transcripts.py")
    dt = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dt)
    pages = "".join((ROOT / rel).read_text() for rel in qn.DOCS)
    files = sorted((ROOT / "figures" / "transcripts").glob("*.json"))
    assert files
    for path in files:
        record = json.loads(path.read_text())
        assert record["name"] == path.stem and record["command"] == "spare-jax " + " ".join(dt.COMMANDS[path.stem])
        assert record["exit_code"] == 0 and isinstance(record["output"], dict) and record["wall_seconds"] > 0
        assert len(record["commit"]) == 40 and record["machine"]["cpus"] >= 1 and record["date_utc"].endswith("Z")
        assert record["load_avg_1min_before"] >= 0
        assert f"transcripts/{path.stem}.json " in pages, f"{path.name} is quoted by no page"


def test_the_planning_example_is_a_quoted_block():
    text = (ROOT / "docs" / "planning.md").read_text()
    assert "<!-- q-block: planning_example.txt -->" in text.split("\n## ")[0]  # the first example
    assert (ROOT / "figures" / "planning_example.txt").read_text().startswith("$ spare-jax plan --gpus 262144 ")


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


# ---------------------------------------------------------------- marked code blocks

@pytest.fixture
def transcript(tmp_path):
    (tmp_path / "t.txt").write_text("$ cmd --x 1\nscheme  TTT h\n\nspare   1,742\n")
    return tmp_path


INDENTED = ("Intro.\n\n<!-- q-block: t.txt -->\n\n    $ cmd --x 1\n    scheme  TTT h\n\n    spare   1,742\n\n"
            "After the block.\n")


def test_a_matching_block_is_left_alone(transcript):
    assert qn.reblock(INDENTED, "p.md", transcript) == (INDENTED, [])
    fenced = "a\n\n<!-- q-block: t.txt -->\n\n```text\n$ cmd --x 1\nscheme  TTT h\n\nspare   1,742\n```\nb\n"
    assert qn.reblock(fenced, "p.md", transcript) == (fenced, [])


@pytest.mark.parametrize("page", [INDENTED, INDENTED.replace("    spare   1,742\n\nAfter", "    spare   1,742\nAfter")])
def test_a_block_that_differs_is_found_and_rewritten(transcript, page):
    stale = page.replace("    spare   1,742", "    spare   1,746")
    stale = stale.replace("    $ cmd --x 1\n", "    $ cmd --x 1 --report a.html\n")
    new, diffs = qn.reblock(stale, "p.md", transcript)
    assert diffs == ["p.md:3: block t.txt differs from its data file at its line 1: the docs say "
                     "'$ cmd --x 1 --report a.html', the data file gives '$ cmd --x 1'"]
    assert new == page
    assert qn.reblock(new, "p.md", transcript)[1] == []


def test_a_block_with_lines_more_or_fewer_differs(transcript):
    longer = INDENTED.replace("    spare   1,742\n", "    spare   1,742\n    rep     2,228\n")
    new, diffs = qn.reblock(longer, "p.md", transcript)
    assert diffs == ["p.md:3: block t.txt differs from its data file at its line 5: the docs say 'rep     2,228', "
                     "the data file gives (nothing)"]
    assert new == INDENTED
    fenced = "<!-- q-block: t.txt -->\n\n~~~\n$ cmd --x 1\n~~~\n"
    new, diffs = qn.reblock(fenced, "p.md", transcript)
    assert len(diffs) == 1 and "its line 2: the docs say (nothing), the data file gives 'scheme  TTT h'" in diffs[0]
    assert new == "<!-- q-block: t.txt -->\n\n~~~\n$ cmd --x 1\nscheme  TTT h\n\nspare   1,742\n~~~\n"


@pytest.mark.parametrize("page, words", [
    ("a\n<!-- q-block: nope.txt -->\n\n    x\n", ["p.md:2", "nope.txt", "no such data file"]),
    ("a\n<!-- q-block: t.txt -->\n    x\n", ["p.md:2", "a blank line and a code block"]),
    ("a\n<!-- q-block: t.txt -->\n\nprose, not code\n", ["p.md:2", "a blank line and a code block"]),
    ("a\n<!-- q-block: t.txt -->\n", ["p.md:2", "a blank line and a code block"]),
    ("a\n<!-- q-block: t.txt -->\n\n```\nx\n", ["p.md:4", "never closed"]),
])
def test_a_bad_block_marker_is_an_error(transcript, page, words):
    with pytest.raises(qn.QuoteError) as err:
        qn.reblock(page, "p.md", transcript)
    for w in words:
        assert w in str(err.value), (w, str(err.value))


def test_a_changed_transcript_makes_the_planning_page_differ(tmp_path):
    text = (ROOT / "figures" / "planning_example.txt").read_text()
    (tmp_path / "planning_example.txt").write_text(text.replace("spare    5 ", "spare    6 ", 1))
    assert text != (tmp_path / "planning_example.txt").read_text()
    _, diffs = qn.reblock((ROOT / "docs" / "planning.md").read_text(), "docs/planning.md", tmp_path)
    assert len(diffs) == 1 and "block planning_example.txt differs" in diffs[0] and "spare    6" in diffs[0]


def test_main_rewrites_a_block(transcript, tmp_path, monkeypatch, capsys):
    page = tmp_path / "p.md"
    page.write_text(INDENTED.replace("1,742", "1,746"))
    monkeypatch.setattr(qn, "DATA_DIR", transcript)
    assert qn.main(["--check", str(page)]) == 1
    assert "block t.txt differs" in capsys.readouterr().out
    assert qn.main([str(page)]) == 0 and page.read_text() == INDENTED
    assert qn.main(["--check", str(page)]) == 0


# ---------------------------------------------------------------- signs, and the pooled closed form against runs

def test_a_signed_number_is_quoted_with_its_sign():
    cache = {"z.json": {"z": 0.287, "w": -4.047}}
    page = "z = <!-- q: z.json z {:+.2f} -->+0.29, w = <!-- q: z.json w {:+.2f} -->-4.05\n"
    assert qn.requote(page, "p.md", Path("/nonexistent"), cache) == (page, [])
    flipped = page.replace("-->+0.29", "-->-0.29")
    new, diffs = qn.requote(flipped, "p.md", Path("/nonexistent"), cache)
    assert diffs == ["p.md:1: z.json z: the docs say -0.29, the data file gives +0.29"] and new == page


def _chunks(case):
    path = ROOT / "figures" / f"closed_form_vs_runs_{case}.jsonl"
    return [json.loads(s) for s in path.read_text().splitlines() if s.strip()]


@pytest.mark.parametrize("case", ["small", "paper"])
def test_the_pooled_closed_form_check_matches_its_chunks(case):
    """figures/closed_form_vs_runs.json (`closed_form_vs_runs.py pool`) is its chunk files pooled: the runs'
    mean, and a standard error from every run's spread (within chunks and between their means)."""
    got = json.loads((ROOT / "figures" / "closed_form_vs_runs.json").read_text())[case]
    lines = _chunks(case)
    for k in range(1, len(lines) + 1):
        part = lines[:k]
        runs = sum(x["runs"] for x in part)
        mean = sum(x["runs"] * x["mean"] for x in part) / runs
        sumsq = sum((x["runs"] - 1) * x["runs"] * x["se"] ** 2 + x["runs"] * x["mean"] ** 2 for x in part)
        se = math.sqrt((sumsq - runs * mean ** 2) / (runs - 1) / runs)
        row = got["by_runs"][k - 1]
        assert row["mc_runs"] == runs
        assert row["mc_ttt_hours"] == pytest.approx(mean, rel=1e-12)
        assert row["mc_ttt_stderr_hours"] == pytest.approx(se, rel=1e-6)
        assert row["z_form_vs_runs"] == pytest.approx((got["theory_ttt_hours"] - mean) / se, rel=1e-6)
        assert row["rel_gap"] == pytest.approx(got["theory_ttt_hours"] / mean - 1, rel=1e-9)
    assert {k: got[k] for k in row} == row  # the whole pool is the last row
    assert got["chunks"] == len(lines) and got["seeds"] == [x["seed"] for x in lines]
    assert got["chunk_elapsed_s_max"] == max(x["elapsed_s"] for x in lines)


def test_a_changed_pool_makes_the_validation_page_differ():
    pool = json.loads((ROOT / "figures" / "closed_form_vs_runs.json").read_text())
    pool["paper"]["z_form_vs_runs"] = 3.2
    _, diffs = qn.requote((ROOT / "docs" / "validation.md").read_text(), "docs/validation.md", qn.DATA_DIR,
                          {"closed_form_vs_runs.json": pool})
    assert diffs and all("paper.z_form_vs_runs: the docs say +4.05, the data file gives +3.20" in d for d in diffs), diffs


def test_the_planning_example_json_is_a_plan_in_the_vocabulary():
    """figures/planning_example.json is `plan --json` of the transcript's command: its keys are the vocabulary's."""
    import sys

    sys.path.insert(0, str(ROOT / "tests"))
    from vocabulary_keys import problems, read_vocabulary

    record = json.loads((ROOT / "figures" / "planning_example.json").read_text())
    assert record["inputs"]["gpus"] == 262144 and record["inputs"]["deadline_hours"] == 2000
    assert problems(record, "plan", read_vocabulary()) == []


# ---------------------------------------------------------------- quoted sentences

def test_a_quoted_sentence_is_checked_and_rewritten(tmp_path):
    (tmp_path / "v.json").write_text(json.dumps({"verdict": {"text": "Run SPARe (r = 5): 1,742 h."}}))
    page = "Intro.\n\n<!-- q-text: v.json verdict.text -->\n\n> Run SPARe (r = 5): 1,742 h.\n\nAfter.\n"
    assert qn.refresh(page, "p.md", tmp_path) == (page, [])
    stale = page.replace("1,742 h", "1,746 h")
    new, diffs = qn.refresh(stale, "p.md", tmp_path)
    assert diffs == ["p.md:3: text v.json verdict.text differs from its data file"] and new == page
    for bad, words in [("<!-- q-text: v.json verdict.text -->\n> x\n", "a blank line"),
                       ("<!-- q-text: v.json verdict.text -->\n\nprose\n", "a blank line"),
                       ("<!-- q-text: v.json verdict -->\n\n> x\n", "not a one-line string"),
                       ("<!-- q-text: v.json verdict.nope -->\n\n> x\n", "'nope'")]:
        with pytest.raises(qn.QuoteError, match=words):
            qn.retext(bad, "p.md", tmp_path)


def test_the_best_600k_verdict_is_a_quoted_sentence():
    text = (ROOT / "docs" / "best_600k.md").read_text()
    assert "<!-- q-text: best_600k.json with_repair_and_batch.verdict.text -->" in text
    record = json.loads((ROOT / "figures" / "best_600k.json").read_text())
    record["with_repair_and_batch"]["verdict"]["text"] += " Changed."
    _, diffs = qn.retext(text, "docs/best_600k.md", qn.DATA_DIR, {"best_600k.json": record})
    assert len(diffs) == 1 and "with_repair_and_batch.verdict.text differs" in diffs[0]


# the time claims of the first pages that no data file holds: experiments too long to re-run for a page
UNQUOTED_TIMES = {"25–40 minutes on 2 cores",  # make figures (spare-jax run --full)
                  "1 h 26 min on 2 cores",  # the 600k spare-pool plan (figures/spares_600k.json keeps no time)
                  "5 min on 2 shared cores"}  # experiments/levers.py


@pytest.mark.parametrize("rel", FIRST_PAGES)
def test_a_time_claim_is_a_quote(rel):
    """A time on 2 cores in the prose of a first page is quoted (a transcript's `wall_seconds`, an experiment's
    `elapsed_s`), but for the few experiments listed above."""
    assert _unquoted_times((ROOT / rel).read_text()) <= UNQUOTED_TIMES


def test_an_unquoted_time_claim_is_found():
    assert _unquoted_times("It took 59 s on 2 busy cores, and <!-- q: t.json wall_seconds {:.0f} -->59 s on 2 "
                           "cores.\n\n```\n3 min on 2 cores\n```\n") == {"59 s on 2 busy cores"}


def _unquoted_times(text: str) -> set:
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    prose = qn.MARKER.sub("Q", prose)
    return set(re.findall(r"(?<![\w.,])\d[\d,.]*(?:[–-]\d[\d,.]*)?(?: h \d+)?\s*(?:s|min|minutes|seconds)\b"
                        r"[^.;|]{0,30}?on 2(?: \w+)? cores", prose))
