"""The user documentation: README.md and docs/ (built with mkdocs).

* `mkdocs build --strict` succeeds with no warning (broken links or anchors, pages missing from the nav,
  figures that do not resolve), into a temporary site directory;
* README.md stays short (at most 200 lines);
* neither README.md nor any docs page speaks of the project's internal workings (its specification's
  sections, its issue tracker, who built what, work in progress).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted((ROOT / "docs").glob("*.md"))
USER_FILES = [ROOT / "README.md", *DOCS]

# Words that speak to the developers, not to users.
INTERNAL = [
    (re.compile(r"SPEC\s*§"), "a section of the internal specification"),
    (re.compile(r"\bissues?\b", re.IGNORECASE), "the issue tracker"),
    (re.compile(r"\bby\s+a\s+(separate\s+)?helper\b", re.IGNORECASE), "who built it"),
    (re.compile(r"\(in progress\)", re.IGNORECASE), "work in progress"),
    (re.compile(r"NOTES_\w+\.md"), "the removed developer notes"),
]


def test_mkdocs_build_is_strictly_clean(tmp_path):
    site = tmp_path / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
         "--site-dir", str(site)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log
    assert "WARNING" not in log, log
    assert (site / "index.html").is_file()
    # every figure a page shows was copied into the site from figures/ (and figures/ has no copy in docs/)
    assert not (ROOT / "docs" / "figures").exists()
    shown = {m for p in DOCS for m in re.findall(r"\]\(\.\./figures/([^)#]+)\)", p.read_text())}
    assert shown, "no page shows a figure"
    for name in shown:
        assert (ROOT / "figures" / name).is_file(), name
        assert (site / "figures" / name).is_file(), name


def test_every_docs_page_is_in_the_nav():
    config = (ROOT / "mkdocs.yml").read_text()
    listed = set(re.findall(r"^\s*-\s*[^:#\n]+:\s*(\S+\.md)\s*$", config, re.MULTILINE))
    missing = [p.name for p in DOCS if p.name not in listed]
    assert not missing, f"pages not in the mkdocs.yml nav: {missing}"


def test_readme_is_short():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines (at most 200)"


def test_readme_links_resolve():
    text = (ROOT / "README.md").read_text()
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" in target:
            continue
        assert (ROOT / target).exists(), target


@pytest.mark.parametrize("path", USER_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_internal_words(path):
    text = path.read_text()
    found = []
    for pattern, what in INTERNAL:
        for m in pattern.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            found.append(f"line {line}: {m.group(0)!r} ({what})")
    assert not found, "\n".join(found)
