"""Write the numbers and transcripts the docs quote from data files under figures/ into the committed Markdown.

    python experiments/quote_numbers.py           # rewrite every quoted number or block that differs from its file
    python experiments/quote_numbers.py --check   # only report the differences; exit 1 on any

A quoted number is an HTML comment followed at once by the number (GitHub and mkdocs show only the number):

    <!-- q: summary.json plan[0].mc_ttt_hours {:,.0f} -->1,762

* the first word is the data file, under figures/ (a JSON file, or a CSV file read as a list of rows);
* the last word is a Python format spec, without spaces: `{:,.0f}` gives 1,762, `{:.1f}` 95.6, `{}` an
  integer as it is, `{:.0%}` 0.32 as 32% (the % is then part of the quoted number);
* the words between name the value: a path of keys separated by dots, where `name[2]` takes the third
  element of a list and `[col=value,col=value]` the one element of a list whose fields have these values
  (`[scheme=rep,redundancy=2]` for a CSV row). Several paths, numbers, `+ - * /` and parentheses, each
  separated by spaces, make a small sum: `( plan[0].mc_ttt_ci95_high - plan[0].mc_ttt_ci95_low ) / 2`.

A marker never begins a line (Markdown would read the whole line as HTML): keep a word before it.

A quoted sentence, a string a command printed (a verdict's text), is a line of its own, a blank line, then a
one-line blockquote that is the string:

    <!-- q-text: best_600k.json with_repair_and_batch.verdict.text -->

    > Run elastic training (m = 64, one final checkpoint): ...

The quoted number is the text right after the comment that looks like a number (digits, thousands commas, a
decimal point, a leading minus or plus, as `{:+.2f}` gives +0.29; a trailing % where the format gives one).
Without --check the script writes the formatted value there; the data file is the truth. A data file, key or
row that is missing is an error naming the file, the key and the place in the docs (exit 2).

A quoted block is a command's transcript kept whole in a text file under figures/: a line of its own

    <!-- q-block: planning_example.txt -->

then a blank line, then a code block, indented by four spaces or fenced (``` or ~~~). The block's lines are
the file's (indented, for an indented block; empty lines stay empty); without --check the script writes them
there, and a difference is reported with the block's first line that differs. A marker with no code block
after it, an unclosed fence or a missing file is an error (exit 2). Markers cannot go inside a code block,
so a transcript is quoted whole, and the prose around it quotes its numbers from a JSON file of the same run.

The data files it reads come from the experiments: summary.json (`make figures`), the CSV and JSON files of
experiments/*.py, closed_form_vs_runs.json (`experiments/closed_form_vs_runs.py pool`: the committed chunk
files pooled), planning_example.txt|json (`experiments/planning_example.py`) and transcripts/NAME.json (the
documented commands run with --json, their time, machine, load and commit: `experiments/doc_transcripts.py`).
The pages it covers (DOCS): README.md, docs/index.md, docs/planning.md, docs/results.md, docs/validation.md,
docs/best_600k.md, docs/performance.md, docs/repair.md and docs/tutorial.md (or the files named on the command
line); tests/test_doc_quotes.py fails while a number or block differs.
"""

from __future__ import annotations

import argparse
import ast
import csv
import json
import operator
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = ROOT / "figures"
DOCS = ["README.md", "docs/index.md", "docs/planning.md", "docs/results.md", "docs/validation.md", "docs/best_600k.md",
        "docs/performance.md", "docs/repair.md", "docs/tutorial.md", "docs/traces.md"]

BLOCK = re.compile(r"^<!--\s*q-block:\s*(?P<name>\S+)\s*-->\s*$")
TEXT = re.compile(r"^<!--\s*q-text:\s*(?P<spec>.*?)\s*-->\s*$")
FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})")
MARKER = re.compile(r"<!--\s*q:\s*(?P<spec>.*?)\s*-->(?P<value>[-+]?\d+(?:,\d{3})*(?:\.\d+)?%?)?")
_OPS = {"+", "-", "*", "/", "(", ")"}
_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


class QuoteError(Exception):
    """A marker that cannot be resolved: bad syntax, a missing data file, key or row."""


def _load(name: str, data_dir: Path, cache: dict) -> object:
    if name not in cache:
        path = data_dir / name
        if not path.is_file():
            raise QuoteError(f"{name}: no such data file (looked in {path})")
        if name.endswith(".csv"):
            with path.open(newline="") as f:
                cache[name] = list(csv.DictReader(f))
        else:
            cache[name] = json.loads(path.read_text())
    return cache[name]


def _same(have: object, want: str) -> bool:
    try:
        return float(have) == float(want)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(have) == want


def _segments(path: str) -> list[str]:
    """Split a key path on dots outside brackets: `plan[0].x` -> `plan`, `[0]`, `x`."""
    out, depth, cur = [], 0, ""
    for ch in path:
        if ch == "[":
            if depth == 0 and cur:
                out.append(cur)
                cur = ""
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "." and depth == 0:
            if cur:
                out.append(cur)
            cur = ""
            continue
        cur += ch
        if ch == "]" and depth == 0:
            out.append(cur)
            cur = ""
    if cur:
        out.append(cur)
    return out


def lookup(data: object, path: str, name: str) -> object:
    """The value at `path` in `data` (loaded from the data file `name`); QuoteError names file and key."""
    node = data
    for seg in _segments(path):
        if seg.startswith("[") and seg.endswith("]"):
            inner = seg[1:-1]
            if not isinstance(node, list):
                raise QuoteError(f"{name}: key {path!r}: {seg} applied to something that is not a list")
            if "=" in inner:
                pairs = [p.split("=", 1) for p in inner.split(",")]
                hits = [row for row in node if isinstance(row, dict)
                        and all(k in row and _same(row[k], v) for k, v in pairs)]
                if len(hits) != 1:
                    raise QuoteError(f"{name}: key {path!r}: {len(hits)} rows match {seg}, not one")
                node = hits[0]
            else:
                try:
                    node = node[int(inner)]
                except (ValueError, IndexError):
                    raise QuoteError(f"{name}: key {path!r}: no element {seg}") from None
        else:
            if not isinstance(node, dict) or seg not in node:
                raise QuoteError(f"{name}: no key {path!r} (missing {seg!r})")
            node = node[seg]
    return node


def _number(value: object, name: str, path: str) -> float | int:
    if isinstance(value, bool) or value is None:
        raise QuoteError(f"{name}: key {path!r} is {value!r}, not a number")
    if isinstance(value, (int, float)):
        return value
    try:
        return int(str(value))
    except ValueError:
        try:
            return float(str(value))
        except ValueError:
            raise QuoteError(f"{name}: key {path!r} is {value!r}, not a number") from None


def _eval(node: ast.AST, values: list) -> float | int:
    if isinstance(node, ast.Expression):
        return _eval(node.body, values)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_eval(node.left, values), _eval(node.right, values))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand, values)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.Name) and node.id.startswith("_v"):
        return values[int(node.id[2:])]
    raise QuoteError("only numbers, key paths, + - * / and parentheses are allowed")


def resolve(spec: str, data_dir: Path = DATA_DIR, cache: dict | None = None) -> str:
    """The formatted value a marker's spec (`FILE EXPR FORMAT`) names."""
    cache = {} if cache is None else cache
    words = spec.split()
    if len(words) < 3 or not (words[-1].startswith("{") and words[-1].endswith("}")):
        raise QuoteError(f"marker {spec!r}: expected 'FILE KEY FORMAT', e.g. 'summary.json plan[0].r_star {{}}'")
    name, expr, fmt = words[0], words[1:-1], words[-1]
    data = _load(name, data_dir, cache)
    values, parts = [], []
    for word in expr:
        if word in _OPS or re.fullmatch(r"\d+(\.\d+)?", word):
            parts.append(word)
        else:
            parts.append(f"_v{len(values)}")
            values.append(_number(lookup(data, word, name), name, word))
    try:
        value = _eval(ast.parse(" ".join(parts), mode="eval"), values)
        return fmt.format(value)
    except (SyntaxError, ValueError, ZeroDivisionError) as e:
        raise QuoteError(f"marker {spec!r}: {e}") from None


def requote(text: str, where: str, data_dir: Path = DATA_DIR, cache: dict | None = None):
    """(the text with every quoted number from its data file, the differences found).

    Each difference is a line `where:LINE: FILE KEY: the docs say X, the data file gives Y`."""
    cache = {} if cache is None else cache
    diffs: list[str] = []

    def fix(m: re.Match) -> str:
        line = text.count("\n", 0, m.start()) + 1
        if not text[text.rfind("\n", 0, m.start()) + 1:m.start()].strip():
            raise QuoteError(f"{where}:{line}: a marker must not begin a line (Markdown would read the line as HTML)")
        try:
            want = resolve(m.group("spec"), data_dir, cache)
        except QuoteError as e:
            raise QuoteError(f"{where}:{line}: {e}") from None
        have = m.group("value") or ""
        if have.endswith("%") and not want.endswith("%"):
            # the % sign is prose, not part of a number formatted without one
            have, tail = have[:-1], "%"
        else:
            tail = ""
        if have != want:
            spec = " ".join(m.group("spec").split()[:-1])
            diffs.append(f"{where}:{line}: {spec}: the docs say {have or '(nothing)'}, the data file gives {want}")
        comment = m.group(0) if m.group("value") is None else m.group(0)[: len(m.group(0)) - len(m.group("value"))]
        return comment + want + tail

    return MARKER.sub(fix, text), diffs


def _first_difference(have: list[str], want: list[str]) -> str:
    k = next((k for k in range(max(len(have), len(want)))
              if k >= len(have) or k >= len(want) or have[k] != want[k]))
    said = repr(have[k]) if k < len(have) else "(nothing)"
    given = repr(want[k]) if k < len(want) else "(nothing)"
    return f"its line {k + 1}: the docs say {said}, the data file gives {given}"


def reblock(text: str, where: str, data_dir: Path = DATA_DIR):
    """(the text with every marked code block replaced by its data file's text, the differences found).

    A marked block is a line `<!-- q-block: FILE -->`, one or more blank lines, then a code block: indented by
    four spaces (its lines are the file's, each indented; empty lines stay empty) or fenced with ``` or ~~~
    (the fences stay; the lines between them are the file's). Each difference is a line
    `where:LINE: block FILE differs from its data file at its line K: ...`."""
    lines = text.split("\n")
    out: list[str] = []
    diffs: list[str] = []
    i = 0
    while i < len(lines):
        m = BLOCK.match(lines[i])
        out.append(lines[i])
        i += 1
        if not m:
            continue
        at, name = i, m.group("name")
        path = data_dir / name
        if not path.is_file():
            raise QuoteError(f"{where}:{at}: {name}: no such data file (looked in {path})")
        want = path.read_text().rstrip("\n").split("\n")
        blank = i
        while i < len(lines) and not lines[i].strip():
            out.append(lines[i])
            i += 1
        fence = FENCE.match(lines[i]) if i < len(lines) else None
        if i == blank or i == len(lines) or not (fence or lines[i].startswith("    ")):
            raise QuoteError(f"{where}:{at}: a q-block marker must be followed by a blank line and a code block "
                             "(indented by four spaces, or fenced)")
        if fence:
            mark = fence.group("fence")
            end = next((j for j in range(i + 1, len(lines))
                        if lines[j].startswith(mark) and not lines[j].strip().strip(mark[0])), None)
            if end is None:
                raise QuoteError(f"{where}:{i + 1}: the code block after the q-block marker is never closed")
            have = lines[i + 1:end]
            out += [lines[i], *want, lines[end]]
            i = end + 1
        else:
            end = i
            while end < len(lines) and (lines[end].startswith("    ") or not lines[end].strip()):
                end += 1
            while not lines[end - 1].strip():  # blank lines after the block are not the block's
                end -= 1
            have = [line[4:] for line in lines[i:end]]
            out += ["    " + line if line else "" for line in want]
            i = end
        if have != want:
            diffs.append(f"{where}:{at}: block {name} differs from its data file at {_first_difference(have, want)}")
    return "\n".join(out), diffs


def retext(text: str, where: str, data_dir: Path = DATA_DIR, cache: dict | None = None):
    """(the text with every quoted sentence from its data file, the differences found).

    A quoted sentence is a line `<!-- q-text: FILE KEY -->`, a blank line, then a one-line blockquote, `> ` and
    the string at KEY (a command's printed sentence, as a verdict's `text`). Each difference is a line
    `where:LINE: text FILE KEY differs from its data file`."""
    cache = {} if cache is None else cache
    lines = text.split("\n")
    diffs: list[str] = []
    for i, line in enumerate(lines):
        m = TEXT.match(line)
        if not m:
            continue
        words = m.group("spec").split()
        if len(words) != 2:
            raise QuoteError(f"{where}:{i + 1}: expected 'FILE KEY' in a q-text marker, got {m.group('spec')!r}")
        name, key = words
        try:
            value = lookup(_load(name, data_dir, cache), key, name)
        except QuoteError as e:
            raise QuoteError(f"{where}:{i + 1}: {e}") from None
        if not isinstance(value, str) or "\n" in value:
            raise QuoteError(f"{where}:{i + 1}: {name}: key {key!r} is not a one-line string")
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        if j == i + 1 or j >= len(lines) or not lines[j].startswith("> "):
            raise QuoteError(f"{where}:{i + 1}: a q-text marker must be followed by a blank line and a line '> ...'")
        if lines[j][2:] != value:
            diffs.append(f"{where}:{i + 1}: text {name} {key} differs from its data file")
            lines[j] = "> " + value
    return "\n".join(lines), diffs


def refresh(text: str, where: str, data_dir: Path = DATA_DIR, cache: dict | None = None):
    """(the text with every quoted number, sentence and marked block from its data file, the differences)."""
    text, diffs = requote(text, where, data_dir, cache)
    text, text_diffs = retext(text, where, data_dir, cache)
    text, block_diffs = reblock(text, where, data_dir)
    return text, diffs + text_diffs + block_diffs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="only report differences; exit 1 on any")
    ap.add_argument("files", nargs="*", help=f"Markdown files (default: {' '.join(DOCS)})")
    args = ap.parse_args(argv)
    cache: dict = {}
    found = []
    try:
        for rel in args.files or DOCS:
            path = ROOT / rel if not Path(rel).is_absolute() else Path(rel)
            text = path.read_text()
            new, diffs = refresh(text, rel, DATA_DIR, cache)
            found += diffs
            if diffs and not args.check:
                path.write_text(new)
    except QuoteError as e:
        print(f"quote_numbers: {e}", file=sys.stderr)
        return 2
    for d in found:
        print(d)
    if args.check:
        return 1 if found else 0
    print(f"quote_numbers: {len(found)} quote(s) rewritten" if found else "quote_numbers: every quote matches")
    return 0


if __name__ == "__main__":
    sys.exit(main())
