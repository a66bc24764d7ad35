"""The package's wings import downwards only: cli -> planner | suite -> measure | ttt | rectlr -> kernels | theory
| reference -> model.

Every ``import``/``from ... import`` of spare_jax (module level and inside functions) is walked; an import of
a wing above, or of a sibling on the same level, fails, and so does a circle between modules. The leaf
utilities (``plotting``, ``stages``, ``results``) import nothing of ours and may be used by any wing; the
package root and ``__main__`` are left out. The independent reference simulators (``reference``) import
the model only, and in the package only the benchmark (``suite.bench``) runs them.

No public function or method takes more than 8 parameters (the values ``Cluster``, ``Sampling`` and small
option classes carry the rest); the few still above are listed, and the list may only shrink.
"""
import ast
import os
import re

import pytest

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "spare_jax")
LEVEL = {"model": 0, "kernels": 1, "theory": 1, "reference": 1, "measure": 2, "ttt": 2, "rectlr": 2, "planner": 3,
         "suite": 3, "cli": 4}
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


MODULES = _modules()
CHECKED = {n: p for n, p in MODULES.items() if n and n != "__main__"}
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


def test_the_reference_simulators_import_the_model_only():
    """``reference`` is checked against the engine, so it may lean on nothing but the model (not even the leaf
    utilities)."""
    mods = [n for n in GRAPH if _wing(n) == "reference"]
    assert {"reference.refrun", "reference.simpyrun"} <= set(mods)
    bad = [f"{n} -> {t}" for n in mods for t in GRAPH[n] if _wing(t) not in ("model", "reference")]
    assert not bad, f"the reference simulators import more than the model: {bad}"


def test_only_the_benchmark_imports_the_reference_simulators():
    """In the package only ``suite.bench`` runs the reference simulators (tests and experiments use them too)."""
    users = sorted(n for n, targets in GRAPH.items()
                   if _wing(n) != "reference" and any(_wing(t) == "reference" for t in targets))
    assert users == ["suite.bench"], f"modules importing spare_jax.reference: {users} (only suite.bench may)"


def test_the_architecture_page_names_every_module_in_its_wing():
    """docs/architecture.md matches the tree, module by module: a table row per wing naming each of its
    modules, and the leaf utilities in the text."""
    page = open(os.path.join(os.path.dirname(ROOT), "docs", "architecture.md")).read()
    rows = dict(re.findall(r"^\| `(\w+)/` \| (.*) \|$", page, re.MULTILINE))
    assert set(rows) == set(LEVEL), f"wings in the table {sorted(rows)} against the tree {sorted(LEVEL)}"
    missing = [n for n in CHECKED if "." in n and n.count(".") == 1
               and f"`{n.split('.')[1]}`" not in rows[_wing(n)]]
    assert not missing, f"modules docs/architecture.md does not name in their wing's row: {missing}"
    assert all(f"`{leaf}`" in page for leaf in LEAVES)
    assert not [n for n in CHECKED if n.count(".") > 1], "a wing within a wing: give it a row of its own"


def test_the_walk_sees_the_real_imports():
    """The walk itself: it finds known edges (so the tests above cannot pass by reading nothing)."""
    assert "model.placement" in GRAPH["kernels.wipeout"]
    assert "ttt.config" in GRAPH["ttt.montecarlo"]
    assert len(GRAPH) > 40


# ------------------------------------------------------------------------------------------------ parameters
MAX_PARAMETERS = 8
# public functions still above MAX_PARAMETERS: none is left (the list can only shrink, and nothing joins it)
TOO_MANY_PARAMETERS = set()


def _parameter_count(fn, method: bool) -> int:
    """Positional, keyword-only, ``*args`` and ``**kwargs`` (one each); a method's ``self``/``cls`` not counted."""
    a = fn.args
    names = [x.arg for x in a.posonlyargs + a.args]
    if method and names and names[0] in ("self", "cls"):
        names = names[1:]
    return len(names) + len(a.kwonlyargs) + (a.vararg is not None) + (a.kwarg is not None)


def _public_functions(tree):
    """``(qualified name, parameter count)`` of the module's public functions and its classes' public methods
    (names not starting with ``_``; functions nested in functions are not reachable and left out)."""
    found = []

    def visit(node, prefix, in_class):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and not child.name.startswith("_"):
                found.append((prefix + child.name, _parameter_count(child, in_class)))
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.", True)

    visit(tree, "", False)
    return found


def _parameter_counts():
    out = {}
    for path in sorted(MODULES.values()):
        rel = os.path.relpath(path, ROOT).replace(os.sep, "/")
        for name, count in _public_functions(ast.parse(open(path).read())):
            out[(rel, name)] = count
    return out


COUNTS = _parameter_counts()


def test_the_parameter_count_follows_the_rules():
    tree = ast.parse("def f(a, b=1, /, c=2, *args, d, e=3, **kw): pass\n"
                     "def _hidden(a, b, c, d, e, f, g, h, i): pass\n"
                     "class C:\n"
                     "    def m(self, a, *, b): pass\n"
                     "    @classmethod\n"
                     "    def k(cls): pass\n"
                     "    def __init__(self, a, b, c, d, e, f, g, h, i): pass\n")
    assert dict(_public_functions(tree)) == {"f": 7, "C.m": 2, "C.k": 0}
    assert len(COUNTS) > 200 and COUNTS[("measure/wipeout.py", "wipeout")] == 5


def test_public_functions_take_at_most_8_parameters():
    over = {f"{path} {name} ({n})" for (path, name), n in COUNTS.items()
            if n > MAX_PARAMETERS and (path, name) not in TOO_MANY_PARAMETERS}
    assert not over, (f"public functions with more than {MAX_PARAMETERS} parameters: {sorted(over)}; take a "
                      "Cluster, a Sampling or a small frozen dataclass of options instead")


def test_the_list_of_functions_above_the_limit_only_shrinks():
    stale = [f"{path} {name}" + ("" if (path, name) not in COUNTS else f" ({COUNTS[(path, name)]})")
             for path, name in sorted(TOO_MANY_PARAMETERS) if COUNTS.get((path, name), 0) <= MAX_PARAMETERS]
    assert not stale, (f"gone, or down to {MAX_PARAMETERS} parameters or fewer: {stale}; remove them from "
                       "TOO_MANY_PARAMETERS")
