"""No import cycle between the modules, nor between the packages, of
`migrate/` and `recipes/`: the engine never imports a recipe or the
semantic model (recipes use the engine's recipe API), and the layers of
`recipes/` import downwards only (recipe modules and `_pyast` -> `_model` ->
`_fissix`). Every import statement that can run counts, the ones inside
functions too; those under ``if TYPE_CHECKING:`` (annotations only) do not."""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Set

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("migrate", "recipes")
# The registry imports the `recipes` package to list its modules: plugin
# discovery, the one edge from the engine to the recipes (whose __init__
# imports nothing).
DISCOVERY = ("migrate.registry", "recipes")


def modules() -> Dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imported(module: str, path: Path, node: ast.AST, known: Dict[str, Path]) -> Set[str]:
    """The known modules an import statement loads (its longest known prefix)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        here = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        base = ".".join(here[:len(here) - node.level + 1] + [node.module or ""]).strip(".") \
            if node.level else node.module
        names = [base] + [f"{base}.{alias.name}" for alias in node.names]
    found = set()
    for name in names:
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name and name != module:
            found.add(name)
    return found


def _type_checking(test: ast.AST) -> bool:
    """``TYPE_CHECKING`` or ``typing.TYPE_CHECKING``."""
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING" \
        or isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _run_time_imports(tree: ast.AST):
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If) and _type_checking(node.test):
            stack.extend(node.orelse)
        else:
            stack.extend(ast.iter_child_nodes(node))


@lru_cache(maxsize=1)
def import_graph() -> Dict[str, Set[str]]:
    """module -> the modules it imports (the tests read it, never change it)."""
    known = modules()
    graph = {name: set() for name in known}
    for module, path in known.items():
        for node in _run_time_imports(ast.parse(path.read_text(encoding="utf-8"))):
            graph[module] |= _imported(module, path, node, known)
    graph[DISCOVERY[0]].discard(DISCOVERY[1])
    return graph


LAYERS = ("recipes._fissix", "recipes._model", "recipes", "migrate")  # the engine's subpackages are its own


def package_of(module: str) -> str:
    """The package a module belongs to, as the layers go: the engine (with
    its subpackages), the recipes (with `_pyast`), the model, the fissix helpers."""
    return next(layer for layer in LAYERS if module == layer or module.startswith(layer + "."))


def package_graph(graph: Dict[str, Set[str]]) -> Dict[str, Set[str]]:
    packages: Dict[str, Set[str]] = {}
    for module, targets in graph.items():
        edges = packages.setdefault(package_of(module), set())
        edges.update(package_of(t) for t in targets)
    for package, edges in packages.items():
        edges.discard(package)
    return packages


def cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle_between_modules():
    assert cycles(import_graph()) == []


def test_no_import_cycle_between_packages():
    assert cycles(package_graph(import_graph())) == []


def test_the_engine_imports_no_recipe():
    graph = import_graph()
    assert graph["recipes"] == set()  # what the registry's discovery loads
    assert {(m, t) for m, targets in graph.items() if m.startswith("migrate")
            for t in targets if t.startswith("recipes")} == set()


def test_the_walk_finds_cycles_and_function_level_imports():
    """The graph holds what the tests above rely on: relative, package and
    function-level imports resolve, and a cycle is found."""
    graph = import_graph()
    assert "migrate.toplevel" in graph["migrate.traversal"]  # `from . import toplevel`
    assert "migrate.engine" in graph["recipes._fissix.edits"]  # imported inside a function
    assert "migrate.incremental" not in graph["migrate.traversal"]  # under TYPE_CHECKING
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
