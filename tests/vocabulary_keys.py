"""The JSON keys of every command against docs/vocabulary.md: which keys the vocabulary lists, which spellings
it forbids, and a walk over a command's ``--json`` that yields each key with its path.

``python tests/vocabulary_keys.py`` prints the keys of the recorded outputs (tests/data/golden_cli/) that the
vocabulary does not list, and the forbidden spellings found, one per line.
"""
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VOCABULARY = os.path.join(ROOT, "docs", "vocabulary.md")
GOLDEN = os.path.join(HERE, "data", "golden_cli")

SCHEMES = {"spare", "rep", "none", "elastic"}
# dicts whose keys are data, not names: schemes, depths and phases, preset names, a preset's derived figures
# (labels such as "cluster_mtbf_hours at 1,024 GPUs")
LABEL_PARENTS = {"derived"}


def _cells(line: str) -> list:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _ticked(cell: str) -> list:
    return re.findall(r"`([^`]+)`", cell)


def read_vocabulary(path: str = VOCABULARY) -> dict:
    """``{"keys": set, "forbidden": {key: {command or None}}, "counts": set, "lists": set}`` from the tables of
    docs/vocabulary.md: every table with a ``JSON key`` column gives keys (the names inside backticks; in
    ``a: [{b, c}]`` each of a, b, c); a ``forbidden spellings`` column gives forbidden keys (``cmd:key``: only
    in that command's JSON); a ``type`` column saying ``integer`` or ``list`` marks the cell's counts or lists
    (of ``a: [{b, c}]``, ``a`` alone)."""
    keys, forbidden, counts, lists = set(), {}, set(), set()
    header = None
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.startswith("|"):
                header = None
                continue
            cells = _cells(line)
            if header is None:
                header = [c.lower() for c in cells]
                continue
            if set("".join(cells)) <= set("-: "):
                continue
            row = dict(zip(header, cells))
            names, outer = [], []  # every name; the outer one of each cell (``a`` of ``a: [{b, c}]``)
            for tick in _ticked(row.get("json key", "")):
                found = re.findall(r"[a-z][a-z0-9_]*", tick)
                names += found
                outer += found[:1]
            keys.update(names)
            for tick in _ticked(row.get("forbidden spellings", "")):
                cmd, _, key = tick.rpartition(":")
                forbidden.setdefault(key, set()).add(cmd or None)
            kind = row.get("type", "").lower()
            if "integer" in kind:
                counts.update(outer)
            if "list" in kind:
                lists.update(outer)
    return {"keys": keys, "forbidden": forbidden, "counts": counts, "lists": lists}


def _is_label(key: str) -> bool:
    if key in SCHEMES:
        return True
    try:
        float(key)
        return True
    except ValueError:
        return False


def walk(obj, path: str = ""):
    """``(path, key, value)`` for every key of ``obj`` (lists walked item by item)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            here = f"{path}.{k}" if path else k
            if _is_label(k) or path.rsplit(".", 1)[-1] in LABEL_PARENTS:
                yield from walk(v, here)
                continue
            yield here, k, v
            yield from walk(v, here)
    elif isinstance(obj, list):
        for item in obj:
            yield from walk(item, path + "[]")


def problems(doc: dict, command: str, vocab: dict) -> list:
    """Every key of ``doc`` (``command``'s JSON) the vocabulary does not list, every forbidden spelling, every
    count that is not an integer and every list that is not a list."""
    out = []
    if command == "presets":  # one object per preset, keyed by its name
        doc = {"presets": list(doc.values())}
    for path, key, value in walk(doc):
        if key in vocab["forbidden"] and vocab["forbidden"][key] & {None, command}:
            out.append(f"{command}: {path}: {key!r} is a forbidden spelling")
        elif key not in vocab["keys"]:
            out.append(f"{command}: {path}: {key!r} is not in docs/vocabulary.md")
        if key in vocab["counts"] and value is not None and not (
                isinstance(value, int) and not isinstance(value, bool)):
            out.append(f"{command}: {path}: {key!r} is a count, got {value!r}")
        if key in vocab["lists"] and value is not None and not isinstance(value, list):
            out.append(f"{command}: {path}: {key!r} is a list, got {value!r}")
    return out


def recorded() -> dict:
    """``{case: (command, json)}`` of the recorded outputs (tests/golden_cli.py's cases)."""
    import sys

    sys.path.insert(0, HERE)
    from golden_cli import CASES

    out = {}
    for name, argv in CASES.items():
        with open(os.path.join(GOLDEN, f"{name}.json")) as fh:
            out[name] = (argv[0], json.load(fh))
    return out


if __name__ == "__main__":
    vocab = read_vocabulary()
    seen = set()
    for name, (command, doc) in sorted(recorded().items()):
        for line in problems(doc, command, vocab):
            if line not in seen:
                seen.add(line)
                print(f"{name}: {line}")
