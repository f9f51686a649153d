"""skcrowd's import graph, read from the source: no import cycle, no upward import.

Every module of the package is parsed with :mod:`ast`; every ``import`` and
``from ... import`` statement counts, at module level or inside a function
(relative ones resolved against the module's package). ``from pkg import name``
is an edge to the module ``pkg.name`` when that is a module, else to ``pkg``.
Two things are not edges: the implicit import of a module's parent packages,
and ``importlib.import_module`` with a computed name (the lazy public names of
``skcrowd/__init__.py``).
"""

import ast
from pathlib import Path

import pytest

import skcrowd

PACKAGE_DIR = Path(skcrowd.__file__).parent

# The layers, bottom first. A module belongs to the first layer that names it or
# one of its parent packages; modules named nowhere are the top layer ("above":
# quality, consensus, neural, pruning, datasets, plotting, the CLI, ...).
# A module may import modules of its own layer and of the layers below, never one
# above: the votes know nothing of the backends, the backends nothing of the
# kernels, the kernels nothing of the estimators built on them.
LAYERS = [
    # the votes: their validation and formats (soft votes too), and the kernels' index arrays
    # of a block of votes (BlockLayout), which the backends build per block; the import of an
    # optional dependency, failing with the extra that installs it
    ("votes", ["skcrowd.votes", "skcrowd._soft_votes", "skcrowd._layout", "skcrowd._optional"]),
    # where the votes live: memory, out-of-core files, Dask
    ("backends", ["skcrowd.backends"]),
    # the numerics of the EM models (numpy and numba)
    ("kernels", ["skcrowd.aggregation.kernels"]),
    # what every estimator shares: the failed-fit policy and the feature-model
    # mixin, holding out tasks and votes, and the scores (of votes, gold labels,
    # agreement), which read votes and call fitted estimators without knowing them
    ("estimator bases and scores", ["skcrowd.base", "skcrowd._holdout", "skcrowd.metrics"]),
    # the aggregators: the base aggregator, the EM driver and the models
    ("aggregation", ["skcrowd.aggregation"]),
]
TOP = "above"


def _modules():
    """``{dotted name: (path, is_package)}`` of every module of skcrowd."""
    modules = {}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        modules[".".join(parts)] = (path, is_package)
    return modules


def _known_module(name, modules):
    """``name`` or its nearest parent that is a module of skcrowd; None outside skcrowd."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imports(name, path, is_package, modules):
    """``[(imported name, module, line)]`` of the module's imports from skcrowd, resolved.

    The imported name is the dotted name of what is imported (``skcrowd.votes._fmt``); the
    module, the skcrowd module that the import runs (``skcrowd.votes``).
    """
    package = name if is_package else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1])
            source = ".".join(p for p in (base, node.module) if p)
            targets = [f"{source}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            if target.split(".")[0] != "skcrowd":
                continue
            module = _known_module(target, modules)
            if module != name:
                found.append((target, module, node.lineno))
    return found


def _graph():
    """``{module: {imported module: first line}}`` over skcrowd's modules."""
    modules = _modules()
    graph = {}
    for name, (path, is_package) in modules.items():
        edges = graph.setdefault(name, {})
        for _, target, line in _imports(name, path, is_package, modules):
            edges.setdefault(target, line)
    return graph


GRAPH = _graph()


def _layer(module):
    for index, (_, prefixes) in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return index
    return len(LAYERS)


def _layer_name(index):
    return LAYERS[index][0] if index < len(LAYERS) else TOP


def _where(module, target):
    return f"{module} (line {GRAPH[module][target]}) -> {target}"


def _components(graph):
    """The strongly connected components of ``graph`` with more than one module."""
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def visit(v):  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return components


def _cycles(graph):
    """One shortest cycle, as a list of modules from and back to its first, per component."""
    cycles = []
    for component in _components(graph):
        start = min(component)
        previous, frontier, cycle = {start: None}, [start], None
        while frontier and cycle is None:  # breadth-first, inside the component
            following = []
            for v in frontier:
                for w in sorted(graph[v]):
                    if w == start and cycle is None:
                        cycle = [v]
                        while previous[cycle[-1]] is not None:
                            cycle.append(previous[cycle[-1]])
                        cycle = cycle[::-1] + [start]
                    elif w in component and w not in previous:
                        previous[w] = v
                        following.append(w)
            frontier = following
        cycles.append(cycle)
    return cycles


def _describe(cycle):
    """``a (line 3) -> b (line 7) -> a``: each module, with the line that imports the next."""
    return " -> ".join(f"{a} (line {GRAPH[a][b]})" for a, b in zip(cycle, cycle[1:])) \
        + f" -> {cycle[-1]}"


def test_the_graph_is_read():
    # a few edges that exist, so that a parsing mistake cannot pass every test below
    assert "skcrowd.votes" in GRAPH["skcrowd.backends._blocks"]
    assert "skcrowd._layout" in GRAPH["skcrowd.backends._blocks"]
    assert "skcrowd.datasets._folder" in GRAPH["skcrowd.datasets._fetchers"]
    assert "skcrowd.aggregation.kernels._common" in GRAPH["skcrowd.aggregation.kernels"]
    assert _layer("skcrowd.aggregation.kernels.dawid_skene") == 2
    assert _layer("skcrowd.aggregation._em") == 4
    assert _layer_name(_layer("skcrowd.quality")) == TOP


@pytest.mark.parametrize("package", ["skcrowd.datasets", "skcrowd.metrics", "skcrowd.backends",
                                     "skcrowd.aggregation.kernels"])
def test_no_import_cycle_within_a_subpackage(package):
    inside = {m: {t: line for t, line in edges.items() if t.startswith(package + ".")}
              for m, edges in GRAPH.items() if m.startswith(package + ".")}
    cycles = _cycles(inside)
    assert not cycles, "import cycles: " + "; ".join(_describe(c) for c in cycles)


def test_a_cycle_is_found():
    # the checks below pass on no cycle: make sure they would see one
    graph = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3, "d": 4}, "d": {}}
    assert _cycles(graph) == [["a", "b", "c", "a"]]
    assert _cycles({"a": {"b": 1}, "b": {}}) == []


def test_no_import_cycle_in_the_package():
    cycles = _cycles(GRAPH)
    assert not cycles, "import cycles: " + "; ".join(_describe(c) for c in cycles)


def test_no_lower_layer_imports_an_upper_one():
    upward = [
        f"{_where(m, t)}: {_layer_name(_layer(m))} imports {_layer_name(_layer(t))}"
        for m, edges in sorted(GRAPH.items())
        for t in sorted(edges) if _layer(t) > _layer(m)
    ]
    assert not upward, "upward imports:\n" + "\n".join(upward)


def test_cli_uses_public_names_of_the_subpackages():
    modules = _modules()
    path, is_package = modules["skcrowd._cli"]
    private = []
    for name, module, line in _imports("skcrowd._cli", path, is_package, modules):
        parts = name.split(".")
        depth = len(module.split("."))
        private_module = any(p.startswith("_") for p in parts[1:depth])
        # a name of a subpackage's __init__, such as skcrowd.datasets._fetchers
        private_name = (module != "skcrowd" and modules[module][1] and len(parts) > depth
                        and parts[depth].startswith("_"))
        if private_module or private_name:
            private.append(f"line {line}: {name}")
    assert not private, f"_cli.py imports private parts of subpackages: {private}"
