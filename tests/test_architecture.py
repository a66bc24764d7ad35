"""The package's wings import downwards only: cli -> planner | suite -> measure | ttt | rectlr -> kernels | theory
| reference -> model.

Every ``import``/``from ... import`` of spare_jax (module level and inside functions) is walked; an import of
a wing above, or of a sibling on the same level, fails, and so does a circle between modules. The leaf
utilities (``plotting``, ``stages``, ``results``) import nothing of ours and may be used by any wing; the
package root and ``__main__`` are left out. The independent reference simulators (``reference``) import
the model only, and in the package only the benchmark (``suite.bench``) runs them.

No function or method takes more than 8 parameters (the values ``Cluster``, ``Sampling`` and small
option classes carry the rest), and no module imports an underscore name from another: both lists of
exceptions are empty, and nothing joins them.
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


def _from_target(node, pkg):
    """The module (without the package prefix) that ``from ... import`` ``node`` in package ``pkg`` reads
    from; None for a module outside spare_jax."""
    if node.level:
        base = [p for p in pkg.split(".") if p]
        base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
        return ".".join(base + ([node.module] if node.module else []))
    if (node.module or "").split(".")[0] == "spare_jax":
        return node.module[len("spare_jax"):].lstrip(".")
    return None


def _imports(name, path):
    """Absolute module names (without the package prefix) that ``name`` imports."""
    is_pkg = path.endswith("__init__.py")
    pkg = name if is_pkg else (name.rsplit(".", 1)[0] if "." in name else "")
    found = set()
    for node in ast.walk(ast.parse(open(path).read())):
        if isinstance(node, ast.ImportFrom):
            target = _from_target(node, pkg)
            if target is None:
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


def test_the_planner_asks_ttt_for_its_runs():
    """The planner builds no run setup and calls no kernel driver: its whole runs come through ``ttt``
    (``ttt.search.candidate_runs``, ``ttt.runs.whole_run_ttt``, ``ttt.runs.replay_runs``)."""
    bad = sorted(f"{n} -> {t}" for n, targets in GRAPH.items() if _wing(n) == "planner"
                 for t in targets if t in ("kernels.run_driver", "model.runsetup"))
    assert not bad, f"the planner goes around ttt: {bad}"


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


# --------------------------------------------------------------------------------------------- private names
# Imports of an underscore name across modules, as (importing module, module imported from, name): there are
# none, and nothing joins this list (a name another module uses is public, or the function moves).
PRIVATE_IMPORTS_ALLOWED = set()


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_imports(name, path=None, source=None):
    """``(module imported from, name)`` for every underscore name that module ``name`` takes from another module
    of spare_jax: ``from X import _y`` (relative or absolute, module level or inside a function), and
    ``M._y`` where ``M`` is a module of ours imported as a name (``from . import repair``, ``import
    spare_jax.kernels.repair as repair``)."""
    is_pkg = path is not None and path.endswith("__init__.py")
    pkg = name if is_pkg else (name.rsplit(".", 1)[0] if "." in name else "")
    tree = ast.parse(source if source is not None else open(path).read())
    found, modules = set(), {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            target = _from_target(node, pkg)
            if target is None:
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}" if target else alias.name
                if sub in MODULES:
                    modules[alias.asname or alias.name] = sub
                if _is_private(alias.name) and target != name:
                    found.add((target, alias.name))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "spare_jax" and alias.asname:
                    modules[alias.asname] = alias.name[len("spare_jax"):].lstrip(".")
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and _is_private(node.attr) and isinstance(node.value, ast.Name)
                and node.value.id in modules and modules[node.value.id] != name):
            found.add((modules[node.value.id], node.attr))
    return found


PRIVATE_IMPORTS = {(n, target, attr) for n, p in CHECKED.items() for target, attr in _private_imports(n, p)}


def test_the_private_import_walk_finds_a_planted_one():
    planted = ("from ..kernels.repair import _jitted, simulate_repair\n"
               "from .epochs import pool_depths as _level_depths\n"
               "from . import closed_form\n"
               "def f():\n"
               "    from spare_jax.ttt.search import _runs\n"
               "    return closed_form._ttt_closed_form, _private_here, __name__\n")
    found = _private_imports("ttt.fake", source=planted)
    assert found == {("kernels.repair", "_jitted"), ("ttt.search", "_runs"), ("ttt.closed_form", "_ttt_closed_form")}
    # the walk reads the package: a real module's own source, with one underscore import planted, yields
    # exactly that import besides what the package walk found in it
    name, path = "ttt.answer", CHECKED["ttt.answer"]
    source = open(path).read() + "\nfrom .montecarlo import _count_runs\n"
    assert _private_imports(name, path, source) == _private_imports(name, path) | {("ttt.montecarlo", "_count_runs")}
    assert len(CHECKED) > 40


def test_no_module_imports_an_underscore_name_from_another():
    bad = sorted(f"{n} takes {attr} from {target}" for n, target, attr in PRIVATE_IMPORTS - PRIVATE_IMPORTS_ALLOWED)
    assert not bad, (f"underscore names used outside their module: {bad}; a name another module uses is public "
                     "(drop the underscore), or the function moves to where it is used")


def test_the_list_of_private_imports_only_shrinks():
    stale = sorted(" ".join(x) for x in PRIVATE_IMPORTS_ALLOWED - PRIVATE_IMPORTS)
    assert not stale, f"no longer imported: {stale}; remove them from PRIVATE_IMPORTS_ALLOWED"


@pytest.mark.parametrize("wing", sorted(LEVEL))
def test_a_wings_init_lists_its_public_api_and_nothing_else(wing):
    """Imports, ``__all__`` and a docstring; every name in ``__all__`` public and imported, every public name
    imported listed."""
    tree = ast.parse(open(MODULES[wing]).read())
    imported, listed = set(), None
    for i, node in enumerate(tree.body):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imported |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["__all__"]:
            listed = ast.literal_eval(node.value)
        else:
            assert i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant), (
                f"{wing}/__init__.py holds more than its imports and __all__: {ast.unparse(node)[:80]}")
    if not imported:
        return  # a wing whose modules are imported one by one
    public = {x for x in imported if not x.startswith("_") and x != "annotations"}
    assert listed is not None, f"{wing}/__init__.py imports names but has no __all__"
    assert not [x for x in listed if x.startswith("_")], f"{wing}.__all__ lists private names"
    assert sorted(listed) == sorted(public), (f"{wing}.__all__ and its imports differ: "
                                              f"{sorted(set(listed) ^ public)}")


# ------------------------------------------------------------------------------------------------ parameters
MAX_PARAMETERS = 8
# functions above MAX_PARAMETERS: there are none, and nothing joins this list (take a Cluster, a Sampling or a
# small frozen dataclass of options instead, or split the function)
TOO_MANY_PARAMETERS = set()
# functions that take ``**kwargs``: each hands them, unread, to the standard library's own keyword arguments
# (argparse's), or takes the keyword arguments a library calls it with (jax.monitoring's listeners); a
# ``**kwargs`` that hides parameters of ours is refused (name them, or take an options value)
KWARGS_ALLOWED = {
    ("cli/base.py", "Parser.__init__"),
    ("cli/deprecation.py", "DeprecatedFlag.__init__"),
    ("kernels/compiles.py", "count_compiles.listener"),
}


def _parameter_count(fn, method: bool) -> int:
    """Positional, keyword-only, ``*args`` and ``**kwargs`` (one each); a method's ``self``/``cls`` not counted."""
    a = fn.args
    names = [x.arg for x in a.posonlyargs + a.args]
    if method and names and names[0] in ("self", "cls"):
        names = names[1:]
    return len(names) + len(a.kwonlyargs) + (a.vararg is not None) + (a.kwarg is not None)


def _functions(tree):
    """``(qualified name, parameter count, takes **kwargs)`` of every function of the module: public and
    private, methods (dunder ones included) and functions nested in functions (``outer.inner``)."""
    found = []

    def visit(node, prefix, in_class):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append((prefix + child.name, _parameter_count(child, in_class), child.args.kwarg is not None))
                visit(child, f"{prefix}{child.name}.", False)
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.", True)

    visit(tree, "", False)
    return found


def _parameter_counts():
    out, kwargs = {}, set()
    for path in sorted(CHECKED.values()):
        rel = os.path.relpath(path, ROOT).replace(os.sep, "/")
        for name, count, kw in _functions(ast.parse(open(path).read())):
            out[(rel, name)] = count
            if kw:
                kwargs.add((rel, name))
    return out, kwargs


COUNTS, KWARGS = _parameter_counts()


def test_the_parameter_count_follows_the_rules():
    tree = ast.parse("def f(a, b=1, /, c=2, *args, d, e=3, **kw): pass\n"
                     "def _hidden(a, b, c, d, e, f, g, h, i): pass\n"
                     "class C:\n"
                     "    def m(self, a, *, b): pass\n"
                     "    @classmethod\n"
                     "    def k(cls): pass\n"
                     "    def __init__(self, a, b, c, d, e, f, g, h, i, **options):\n"
                     "        def inner(x, *, y): pass\n")
    assert {n: c for n, c, _ in _functions(tree)} == {"f": 7, "_hidden": 9, "C.m": 2, "C.k": 0, "C.__init__": 10,
                                                      "C.__init__.inner": 2}
    assert {n for n, _, kw in _functions(tree) if kw} == {"f", "C.__init__"}
    assert len(COUNTS) > 400 and COUNTS[("measure/wipeout.py", "wipeout")] == 5


def test_functions_take_at_most_8_parameters():
    over = {f"{path} {name} ({n})" for (path, name), n in COUNTS.items()
            if n > MAX_PARAMETERS and (path, name) not in TOO_MANY_PARAMETERS}
    assert not over, (f"functions with more than {MAX_PARAMETERS} parameters: {sorted(over)}; take a Cluster, a "
                      "Sampling or a small frozen dataclass of options instead, or split the function")


def test_the_list_of_functions_above_the_limit_only_shrinks():
    stale = [f"{path} {name}" + ("" if (path, name) not in COUNTS else f" ({COUNTS[(path, name)]})")
             for path, name in sorted(TOO_MANY_PARAMETERS) if COUNTS.get((path, name), 0) <= MAX_PARAMETERS]
    assert not stale, (f"gone, or down to {MAX_PARAMETERS} parameters or fewer: {stale}; remove them from "
                       "TOO_MANY_PARAMETERS")


def test_no_kwargs_hide_parameters():
    hidden = sorted(f"{path} {name}" for path, name in KWARGS - KWARGS_ALLOWED)
    assert not hidden, f"**kwargs that hide parameters: {hidden}; name them, or take a small frozen dataclass"
    stale = sorted(f"{path} {name}" for path, name in KWARGS_ALLOWED - KWARGS)
    assert not stale, f"no longer take **kwargs: {stale}; remove them from KWARGS_ALLOWED"
