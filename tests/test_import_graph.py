"""The package's import graph, read from its source (ast; nothing is imported): the window, the views and the
command line depend on each other in one direction only, and nothing inside the package imports ``__main__``.

An import inside a function counts (it runs when the function does: the six-file circle of #38 was made of
such imports); one under ``if TYPE_CHECKING:`` does not. Importing ``a.b.c`` runs ``a`` and ``a.b`` too.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import posenc_gui

PACKAGE = "posenc_gui"
ROOT = Path(posenc_gui.__file__).resolve().parent
#: The three layers whose imports must not go round in a circle, by module name prefix.
LAYERS = {
    "command line": ("posenc_gui.__main__", "posenc_gui.cli"),
    "window": ("posenc_gui.mainwindow", "posenc_gui.window"),
    "views": ("posenc_gui.views",),
}


def module_names(root: Path) -> dict[str, Path]:
    """Every module of the package at ``root`` by dotted name (a package by its own name)."""
    names = {}
    for path in sorted(root.rglob("*.py")):
        parts = [PACKAGE, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``tree`` outside ``if TYPE_CHECKING:`` blocks."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                yield child
                yield from _runtime_nodes(child)
            continue
        yield node
        yield from _runtime_nodes(node)


def imported_modules(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules that module ``name`` (its source at ``path``) imports at run time, with the
    packages each import runs on the way."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        targets = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")[: len(name.split(".")) - node.level + (1 if is_package else 0)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            targets = [module, *(f"{module}.{alias.name}" for alias in node.names)]
        for target in targets:
            parts = target.split(".")
            found |= {".".join(parts[:end]) for end in range(1, len(parts) + 1)} & known
    found.discard(name)
    return found


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module → the package's modules it imports (see :func:`imported_modules`)."""
    names = module_names(root)
    return {name: imported_modules(name, path, set(names)) for name, path in names.items()}


def layer_of(module: str) -> str | None:
    for layer, prefixes in LAYERS.items():
        if any(module == prefix or module.startswith(prefix + ".") for prefix in prefixes):
            return layer
    return None


def layer_edges(graph: dict[str, set[str]]) -> dict[tuple[str, str], list[str]]:
    """``(layer, other layer)`` → a chain of imports by which the first reaches the second, through modules of
    no layer (the model, the state, export …) only."""
    edges: dict[tuple[str, str], list[str]] = {}
    for start in sorted(graph):
        source = layer_of(start)
        if source is None:
            continue
        chains, seen = [[start]], {start}
        while chains:
            chain = chains.pop(0)
            for target in sorted(graph[chain[-1]]):
                if target in seen:
                    continue
                seen.add(target)
                reached = layer_of(target)
                if reached is None:
                    chains.append([*chain, target])
                elif reached != source:
                    edges.setdefault((source, reached), [*chain, target])
    return edges


def layer_circles(graph: dict[str, set[str]]) -> list[str]:
    """Each circle of imports between layers, as the chains that make it (empty when there is none)."""
    edges = layer_edges(graph)
    circles = []
    layers = list(LAYERS)
    for first in layers:
        for second in layers:
            if first < second and (first, second) in edges and (second, first) in edges:
                circles.append(" → ".join(edges[first, second]) + "  and back by  " + " → ".join(edges[second, first]))
    for a, b, c in ((layers[0], layers[1], layers[2]), (layers[0], layers[2], layers[1])):
        if (a, b) in edges and (b, c) in edges and (c, a) in edges:
            circles.append("; ".join(" → ".join(edges[pair]) for pair in ((a, b), (b, c), (c, a))))
    return circles


def test_the_window_the_views_and_the_command_line_import_each_other_in_one_direction():
    graph = import_graph()
    assert {"posenc_gui.mainwindow", "posenc_gui.views.export_ui", "posenc_gui.cli.export"} <= set(graph)
    assert layer_circles(graph) == []
    edges = layer_edges(graph)
    # the direction: the command line opens the window, which shows the views
    assert ("command line", "window") in edges and ("window", "views") in edges
    assert ("views", "command line") not in edges and ("views", "window") not in edges


def test_nothing_in_the_package_imports_its_entry_point():
    graph = import_graph()
    importers = sorted(name for name, imported in graph.items() if "posenc_gui.__main__" in imported)
    assert importers == []


def test_the_graph_sees_a_lazy_circle_and_leaves_type_checking_imports_out(tmp_path):
    """The reader finds the kind of circle #38 found (a function's import) and ignores annotations' imports."""
    package = tmp_path / PACKAGE
    (package / "views").mkdir(parents=True)
    (package / "cli").mkdir()
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text("from .cli import main\n")
    (package / "cli" / "__init__.py").write_text("def main():\n    from ..views import ui\n")
    (package / "views" / "__init__.py").write_text("from typing import TYPE_CHECKING\n"
                                                   "if TYPE_CHECKING:\n    from ..mainwindow import MainWindow\n")
    (package / "views" / "ui.py").write_text("def wait():\n    from .. import __main__\n")
    (package / "mainwindow.py").write_text("from .views import ui\n")
    graph = import_graph(package)
    assert graph["posenc_gui.views"] == set()
    assert graph["posenc_gui.views.ui"] == {"posenc_gui", "posenc_gui.__main__"}
    assert len(layer_circles(graph)) == 1 and "posenc_gui.views.ui → posenc_gui.__main__" in layer_circles(graph)[0]
