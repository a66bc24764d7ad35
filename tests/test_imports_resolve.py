"""Every ``from spare_jax... import name`` in the package, the tests and the experiments names something that
module defines (or a submodule of it). An import inside a function fails only when that function runs, so a
module split or a rename that leaves one importer behind is caught here, by reading the files, not later by
the one test (or the one user) that reaches it. A module with a module-level ``__getattr__`` (the package
root's lazy names) is not checked."""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
FOLDERS = ("spare_jax", "tests", "experiments")
# recorders of an older tree's outputs, run at the commit they name (their imports are that tree's)
OLDER_TREE = {"tests/data/make_router_choices.py": "records the choices of the code before the router"}


def _bound(body) -> set:
    """The names a module's top level binds (definitions, assignments, imports), also inside top-level
    ``if``/``try`` blocks."""
    out = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                out.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.If, ast.Try)):
            for block in (node.body, getattr(node, "orelse", []), getattr(node, "finalbody", []),
                          *[h.body for h in getattr(node, "handlers", [])]):
                out |= _bound(block)
    return out


def _module_file(name: str):
    path = ROOT.joinpath(*name.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _target(node: ast.ImportFrom, path: pathlib.Path):
    """The dotted module ``node`` imports from, or None outside spare_jax."""
    if node.level:
        parts = list(path.relative_to(ROOT).parent.parts)
        parts = parts[: len(parts) - (node.level - 1)]
        name = ".".join(parts + ([node.module] if node.module else []))
    else:
        name = node.module or ""
    return name if name.split(".")[0] == "spare_jax" else None


def test_every_name_imported_from_the_package_exists():
    defined, missing = {}, []
    files = [p for folder in FOLDERS for p in sorted((ROOT / folder).rglob("*.py"))
             if str(p.relative_to(ROOT)) not in OLDER_TREE]
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or (target := _target(node, path)) is None:
                continue
            source = _module_file(target)
            if source is None:
                missing.append(f"{path.relative_to(ROOT)}:{node.lineno}: no module {target}")
                continue
            if source not in defined:
                body = ast.parse(source.read_text(encoding="utf-8")).body
                names = _bound(body)
                defined[source] = None if "__getattr__" in names else names
            names = defined[source]
            for alias in node.names:
                if names is None or alias.name == "*" or alias.name in names \
                        or _module_file(f"{target}.{alias.name}") is not None:
                    continue
                missing.append(f"{path.relative_to(ROOT)}:{node.lineno}: {target} has no {alias.name}")
    assert len(files) > 100  # the scan sees the tree
    assert missing == []
