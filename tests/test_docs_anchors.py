"""Every ``docs/PAGE.md#anchor`` the package cites leads to a page and a heading that exist.

Comments and docstrings in ``spare_jax/`` point to the user documentation for the rules they follow (e.g.
``docs/runs.md#the-conventions-of-a-run``). An anchor is the GitHub slug of a heading of that page; it must
also be the slug mkdocs gives the same heading, so that the link works on GitHub and on the built site
alike. A citation without an anchor must still name a page that exists.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "spare_jax"
CITATION = re.compile(r"docs/([\w.-]+?\.md)(?:#([\w-]+))?")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def heading_text(raw: str) -> str:
    """A heading as a reader sees it: links by their text, code spans and emphasis without their marks."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", raw)
    return text.replace("`", "").replace("*", "")


def github_slug(text: str) -> str:
    """GitHub's anchor: lower case, punctuation dropped (letters, digits, ``_`` and ``-`` kept), each space a
    hyphen."""
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def mkdocs_slug(text: str) -> str:
    """Python-Markdown's ``toc`` slug (mkdocs' default): ASCII, punctuation dropped, runs of spaces and hyphens
    one hyphen."""
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(markdown: str) -> dict[str, str]:
    """GitHub anchor -> mkdocs anchor of every heading outside code blocks (repeated headings get GitHub's
    ``-1``, ``-2``, ... suffixes, and mkdocs' ``_1``, ``_2``, ...)."""
    out: dict[str, str] = {}
    seen_gh: dict[str, int] = {}
    seen_mk: dict[str, int] = {}
    fenced = False
    for line in markdown.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        m = None if fenced else HEADING.match(line)
        if not m:
            continue
        text = heading_text(m.group(2))
        gh, mk = github_slug(text), mkdocs_slug(text)
        n_gh, n_mk = seen_gh.get(gh, 0), seen_mk.get(mk, 0)
        seen_gh[gh], seen_mk[mk] = n_gh + 1, n_mk + 1
        out[f"{gh}-{n_gh}" if n_gh else gh] = f"{mk}_{n_mk}" if n_mk else mk
    return out


def citations(root: Path = PACKAGE) -> list[tuple[str, int, str, str | None]]:
    """``(file, line, page, anchor or None)`` for every ``docs/PAGE.md[#anchor]`` in the package's sources."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for i, line in enumerate(path.read_text().splitlines(), 1):
            for m in CITATION.finditer(line):
                found.append((path.relative_to(root.parent).as_posix(), i, m.group(1), m.group(2)))
    return found


def broken(found, docs: Path = ROOT / "docs") -> list[str]:
    """The citations of ``found`` whose page or anchor does not exist, each with its reason."""
    bad, pages = [], {}
    for where, line, page, anchor in found:
        path = docs / page
        if not path.is_file():
            bad.append(f"{where}:{line}: docs/{page} does not exist")
            continue
        if anchor is None:
            continue
        if page not in pages:
            pages[page] = anchors(path.read_text())
        table = pages[page]
        if anchor not in table:
            bad.append(f"{where}:{line}: docs/{page} has no heading with the anchor #{anchor}")
        elif table[anchor] != anchor:
            bad.append(f"{where}:{line}: docs/{page}#{anchor} is #{table[anchor]} on the built site: choose a "
                       "heading whose two anchors agree")
    return bad


FOUND = citations()


def test_the_package_cites_the_docs_with_anchors():
    """The scan itself: it finds the citations (so the test below cannot pass by reading nothing)."""
    with_anchor = [c for c in FOUND if c[3]]
    assert len(with_anchor) >= 60, with_anchor
    assert any(c[2] == "runs.md" and c[3] == "the-conventions-of-a-run" for c in FOUND)


def test_every_cited_page_and_anchor_exists():
    bad = broken(FOUND)
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("heading, github, mkdocs", [
    ("The conventions of a run", "the-conventions-of-a-run", "the-conventions-of-a-run"),
    ("Real clusters: scenarios", "real-clusters-scenarios", "real-clusters-scenarios"),
    ("`spare-jax bench`", "spare-jax-bench", "spare-jax-bench"),
    ("Failures, wipe-out, depth, overhead", "failures-wipe-out-depth-overhead", "failures-wipe-out-depth-overhead"),
    ("Against an independent simulator, N = 600, r = 8", "against-an-independent-simulator-n--600-r--8",
     "against-an-independent-simulator-n-600-r-8"),
    ("`--config` files", "--config-files", "-config-files"),
    ("Ω and τ* — ok", "ω-and-τ--ok", "and-ok"),
    ("Spare pools compared with [AIReSim](https://example.org)", "spare-pools-compared-with-airesim",
     "spare-pools-compared-with-airesim"),
])
def test_slugs(heading, github, mkdocs):
    assert github_slug(heading_text(heading)) == github
    assert mkdocs_slug(heading_text(heading)) == mkdocs
    markdown = pytest.importorskip("markdown")  # mkdocs' own renderer, where installed: the same anchor
    html = markdown.Markdown(extensions=["toc"]).convert("## " + heading)
    assert f'id="{mkdocs}"' in html, html


def test_a_planted_bad_citation_fails(tmp_path):
    """A wrong anchor, a missing page, a heading inside a code block and anchors that only GitHub knows (a
    repeated heading's, one with a run of punctuation) are each reported; good citations are not."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "page.md").write_text("# Page\n\n## A rule\n\n```text\n# not a heading\n```\n\n"
                                  "## N = 600, r = 8\n\n## A rule\n")
    pkg = tmp_path / "spare_jax"
    pkg.mkdir()
    (pkg / "mod.py").write_text('"""See docs/page.md#a-rule and docs/page.md#a-rule-1 and docs/page.md."""\n'
                                "# docs/page.md#a-rul\n"
                                "# docs/gone.md#a-rule\n"
                                "# docs/page.md#not-a-heading\n"
                                "# docs/page.md#n--600-r--8\n")
    found = citations(pkg)
    assert len(found) == 7
    bad = broken(found, docs)
    assert [b.split(":")[1] for b in bad] == ["1", "2", "3", "4", "5"], bad
    assert "#a-rule-1 is #a-rule_1 on the built site" in bad[0]
    assert "#a-rul" in bad[1] and "gone.md does not exist" in bad[2] and "not-a-heading" in bad[3]
    assert "#n-600-r-8 on the built site" in bad[4]
