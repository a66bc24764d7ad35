"""The package's wings import downwards only: cli -> planner | suite -> measure | ttt | rectlr -> kernels | theory
-> model.

Every ``import``/``from ... import`` of spare_jax (module level and inside functions) is walked; an import of
a wing above, or of a sibling on the same level, fails, and so does a circle between modules. The leaf
utilities (``plotting``, ``stages``) import nothing of ours and may be used by any wing; the package root
and the old names kept for one release (``_moved.alias``) are left out.
"""
import ast
import os

import pytest

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "spare_jax")
LEVEL = {"model": 0, "kernels": 1, "theory": 1, "measure": 2, "ttt": 2, "rectlr": 2, "planner": 3, "suite": 3,
         "cli": 4}
LEAVES = {"plotting", "stages", "results"}


def _modules():
    out = {}
    for dirpath, _, files in os.walk(ROOT):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                name = rel[: -len(".__init__")] if rel.endswith(".__init__") else rel
                out["" if name == "__init__" else name] = path
    return out


def _imports(name, path):
    """Absolute module names (without the package prefix) that ``name`` imports."""
    is_pkg = path.endswith("__init__.py")
    pkg = name if is_pkg else (name.rsplit(".", 1)[0] if "." in name else "")
    found = set()
    for node in ast.walk(ast.parse(open(path).read())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = [p for p in pkg.split(".") if p]
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                target = ".".join(base + ([node.module] if node.module else []))
            elif (node.module or "").split(".")[0] == "spare_jax":
                target = node.module[len("spare_jax"):].lstrip(".")
            else:
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}" if target else alias.name
                found.add(sub if sub in MODULES else target)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "spare_jax":
                    found.add(alias.name[len("spare_jax"):].lstrip("."))
    return {t for t in found if t and t != name}


def _is_alias(path):
    return "alias(__name__" in open(path).read()


MODULES = _modules()
CHECKED = {n: p for n, p in MODULES.items() if n and n != "__main__" and n != "_moved" and not _is_alias(p)}
GRAPH = {n: _imports(n, p) for n, p in CHECKED.items()}


def _wing(name):
    return name.split(".")[0]


def test_every_module_sits_in_a_wing_or_is_a_leaf_utility():
    stray = [n for n in CHECKED if _wing(n) not in LEVEL and n not in LEAVES]
    assert not stray, f"modules outside the wings: {stray} (see docs/architecture.md)"


def test_leaf_utilities_import_nothing_of_ours():
    for leaf in LEAVES:
        assert not GRAPH[leaf], f"{leaf} imports {GRAPH[leaf]}"


@pytest.mark.parametrize("wing", sorted(LEVEL))
def test_imports_point_down(wing):
    bad = []
    for name, targets in GRAPH.items():
        if _wing(name) != wing:
            continue
        for t in targets:
            tw = _wing(t)
            if tw == wing or t in LEAVES or tw in LEAVES:
                continue
            if tw not in LEVEL or LEVEL[tw] >= LEVEL[wing]:
                bad.append(f"{name} -> {t}")
    assert not bad, f"upward or sideways imports: {bad}"


def test_no_import_circle():
    """Tarjan's strongly connected components over module-level and function-level imports alike."""
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in GRAPH.get(v, ()):
            if w not in GRAPH:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in GRAPH:
        if v not in index:
            visit(v)
    assert not comps, f"import circles: {comps}"


def test_the_walk_sees_the_real_imports():
    """The walk itself: it finds known edges (so the tests above cannot pass by reading nothing)."""
    assert "model.placement" in GRAPH["kernels.wipeout"]
    assert "ttt.config" in GRAPH["ttt.montecarlo"]
    assert len(GRAPH) > 40
