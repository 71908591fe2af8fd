"""The kmodel modules import each other without a cycle, and each layer imports only the layers below it.

The graph is read from the source (ast), not by importing anything, so it holds for whatever modules exist
when the test runs. Every `import kmodel...` and `from kmodel... import ...` counts wherever it is written:
at module level, inside a function (a late import that hides a cycle is still a cycle: it only moves the
failure to the moment the function first runs), and under `if TYPE_CHECKING:`. `from pkg import name` is an
edge to the module `pkg.name` when that is a module, else to `pkg`; a relative import is resolved against
the importing module's package. Importing a module also runs its parent packages' __init__ first: for the
cycle check, importing `a.b.c` is also an edge to `a.b` and `a` (unless the importer is inside them, when they
are already being imported); the layer check counts only the modules named.

Modules loaded by name at run time count for the layer check (`dynamic=True`): `importlib.import_module("kmodel.x")`
is an edge to kmodel.x, and in a module that calls `importlib.import_module` with a computed name (as
kmodel/component/registry.py loads every module of the packages in its BUILTIN_PACKAGES), every string literal
that names a kmodel module or package is an edge to it and to each module under it. So the registry sits in the
components' layer and nothing below it (the API server) may reach it. The cycle check leaves them out: the
registry and the components it loads depend on each other by design (a component's module imports the
registry's decorator at its top; the registry imports the module when it is first read, long after both are
loaded).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator, Optional

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "kmodel"
#: Subpackages kept in a folder of their own (pyproject.toml's package-dir): `kmodel.invariants` is invariants/.
PACKAGE_DIRS = {"kmodel.invariants": "invariants"}


def module_files(root: Path = ROOT, package: str = PACKAGE) -> dict[str, Path]:
    """module name -> its file, for every .py file under the package (a package is its __init__.py), its
    subpackages kept in folders of their own included."""
    folders = [(package, root / package)]
    folders += [(name, root / folder) for name, folder in PACKAGE_DIRS.items()
                if name.startswith(package + ".") and (root / folder).is_dir()]
    found = {}
    for name, folder in folders:
        for path in sorted(folder.rglob("*.py")):
            parts = [*name.split("."), *path.relative_to(folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _loads_by_name(tree: ast.AST) -> tuple[list[str], bool]:
    """The literal names a module passes to `importlib.import_module`, and whether it also passes a computed one."""
    literal, computed = [], False
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name != "import_module":
            continue
        arg = node.args[0]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            literal.append(arg.value)
        else:
            computed = True
    return literal, computed


def _dynamic_imports(tree: ast.AST, files: dict[str, Path], package: str) -> Iterator[str]:
    """The package's modules a module loads by name at run time (see the module docstring)."""
    literal, computed = _loads_by_name(tree)
    named = set(literal)
    if computed:
        named |= {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
                  and isinstance(node.value, str) and node.value in files}
    for name in sorted(named):
        if name in files:
            yield name
            yield from sorted(m for m in files if m.startswith(name + "."))


def _imported_modules(module: str, path: Path, files: dict[str, Path], package: str,
                      dynamic: bool = False) -> Iterator[str]:
    """The package's modules that `module` imports, wherever the import is written; with `dynamic`, also those it
    loads by name (`_dynamic_imports`)."""
    home = module if path.name == "__init__.py" else module.rpartition(".")[0]

    def resolve(name: str) -> Optional[str]:
        """The module a dotted name lives in: the name itself, or its longest prefix that is a module."""
        if name != package and not name.startswith(package + "."):
            return None
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    if dynamic:
        yield from _dynamic_imports(tree, files, package)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield resolve(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = home.split(".")
                source = ".".join(parts[: len(parts) - (node.level - 1)] + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                # `from pkg import sub` imports the module pkg.sub when there is one, else a name of pkg
                yield resolve(f"{source}.{alias.name}") if f"{source}.{alias.name}" in files else resolve(source)


def import_graph(root: Path = ROOT, package: str = PACKAGE, *, parents: bool = False,
                 dynamic: bool = False) -> nx.DiGraph:
    """The directed graph importer -> imported over the package's modules; with `parents`, also an edge to
    each package above an imported module that does not hold the importer (Python initialises those first);
    with `dynamic`, also an edge to each module it loads by name (see the module docstring)."""
    files = module_files(root, package)
    graph = nx.DiGraph()
    graph.add_nodes_from(files)
    for module, path in files.items():
        for target in _imported_modules(module, path, files, package, dynamic):
            if target is None or target == module:
                continue
            graph.add_edge(module, target)
            if parents:
                above = target.split(".")
                for i in range(1, len(above)):
                    parent = ".".join(above[:i])
                    if parent in files and module != parent and not module.startswith(parent + "."):
                        graph.add_edge(module, parent)
    return graph


def test_the_module_graph_is_acyclic() -> None:
    graph = import_graph(parents=True)
    assert graph.number_of_nodes() > 100, "the walk found too few kmodel modules: is ROOT right?"
    cycles = []
    for component in sorted((c for c in nx.strongly_connected_components(graph) if len(c) > 1), key=min):
        cycle = nx.find_cycle(graph.subgraph(component), source=min(component))
        cycles.append(" -> ".join([a for a, _ in cycle] + [cycle[0][0]]))
    assert not cycles, "import cycles between kmodel modules:\n  " + "\n  ".join(cycles)


def test_the_walk_sees_function_level_imports(tmp_path: Path) -> None:
    """A cycle closed by an import inside a function is found, and `from pkg import module` is an edge to
    the module, not to the package."""
    pkg = tmp_path / "kmodel"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "low.py").write_text("def f():\n    from kmodel.high import g\n")
    (pkg / "sub" / "other.py").write_text("from . import low\n")
    (pkg / "high.py").write_text("from kmodel.sub.low import f\n")
    graph = import_graph(tmp_path, "kmodel", parents=True)
    assert graph.has_edge("kmodel.sub.low", "kmodel.high")
    assert graph.has_edge("kmodel.high", "kmodel.sub.low")
    assert graph.has_edge("kmodel.sub.other", "kmodel.sub.low")
    assert not graph.has_edge("kmodel.sub.other", "kmodel.sub")  # its own package: already being imported
    assert graph.has_edge("kmodel.high", "kmodel.sub")  # kmodel/sub/__init__.py runs before kmodel.sub.low
    assert not nx.is_directed_acyclic_graph(graph)


def _scratch_package(root: Path, files: dict[str, str]) -> Path:
    """Write a scratch package under `root`: relative path -> source, folders made as needed."""
    for relative, source in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    return root


def test_the_layer_walk_sees_modules_loaded_by_name(tmp_path: Path) -> None:
    """`importlib.import_module` with a literal name is an edge; with a computed one, every literal naming a module
    or package of the module's is (a package's modules too); neither counts without `dynamic`."""
    _scratch_package(tmp_path, {
        "kmodel/__init__.py": "", "kmodel/plugins/__init__.py": "", "kmodel/plugins/one.py": "", "kmodel/high.py": "",
        "kmodel/low.py": "import importlib\n\ndef f():\n    return importlib.import_module('kmodel.high')\n",
        "kmodel/loader.py": "import importlib\nPACKAGES = ('kmodel.plugins',)\n\n"
                            "def load(name):\n    return importlib.import_module(f'{name}.one')\n"})
    graph = import_graph(tmp_path, "kmodel", dynamic=True)
    assert graph.has_edge("kmodel.low", "kmodel.high")
    assert graph.has_edge("kmodel.loader", "kmodel.plugins") and graph.has_edge("kmodel.loader", "kmodel.plugins.one")
    assert not import_graph(tmp_path, "kmodel").has_edge("kmodel.low", "kmodel.high")


def test_the_walk_sees_a_cycle_through_a_package_init(tmp_path: Path) -> None:
    """`a.py` imports `pkg.mod`, whose package's __init__ imports `a`: a cycle Python runs into, though no
    module names the package."""
    pkg = tmp_path / "kmodel"
    (pkg / "pkg").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "pkg" / "__init__.py").write_text("from kmodel.a import f\n")
    (pkg / "pkg" / "mod.py").write_text("")
    (pkg / "a.py").write_text("from kmodel.pkg.mod import g\n")
    assert nx.is_directed_acyclic_graph(import_graph(tmp_path, "kmodel"))
    assert not nx.is_directed_acyclic_graph(import_graph(tmp_path, "kmodel", parents=True))


# --- layers ---------------------------------------------------------------------------------------------

#: The layers, bottom up: a module may import its own layer and the layers below it. A module belongs to
#: the layer of the longest prefix listed that names it (so `kmodel.fixes` is the switches' table, low, and
#: `kmodel.fixes.command`, the command line of it, is at the top). The order is the design's (store,
#: network, clock, loop, objects, apiserver, client, components, cluster, invariants (the folder invariants/,
#: which reads a whole cluster), checker, command line), with the
#: modules it does not name placed where their imports put them:
#: * the root package (`__version__`), the command's error type, GC tuning, the tables of fixes and variants
#:   (names and descriptions, read by every layer that has a switch), the `Switches` value components are built with and the report renderer (it renders
#:   the stories it is given and imports nothing of the model) are below everything;
#: * `component` (the sans-IO protocol every component implements) sits on the network's messages;
#: * `ipam` (the allocators) is used by the API server, the node IPAM controller and the kubelet's CNI;
#: * `traffic` (application traffic between pods) and `etcdctl` (the bypass-apiserver variant's) are components;
#: * the experiments on the variants (kmodel.principles) run whole clusters and the checker: at the top;
#: * the component registry (kmodel.component.registry) loads every built-in component's module by name, so it is
#:   with them, above the API server (the cluster hands the API server the roles and tokens it reads there).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("kmodel", "kmodel.errors", "kmodel.runtime", "kmodel.fixes", "kmodel.variants", "kmodel.switches",
     "kmodel.report"),
    ("kmodel.store",),
    ("kmodel.network",),
    ("kmodel.component",),
    ("kmodel.clock",),
    ("kmodel.loop",),
    ("kmodel.objects",),
    ("kmodel.ipam",),
    ("kmodel.apiserver",),
    ("kmodel.client",),
    ("kmodel.controllers", "kmodel.scheduler", "kmodel.kubelet", "kmodel.proxy", "kmodel.traffic",
     "kmodel.etcdctl", "kmodel.component.registry"),
    ("kmodel.cluster",),
    ("kmodel.invariants",),
    ("kmodel.checker", "kmodel.simulate", "kmodel.serve"),
    ("kmodel.operator",),
    ("kmodel.operator.command", "kmodel.operator.fixture",
     "kmodel.cli", "kmodel.clidoc", "kmodel.__main__", "kmodel.launch", "kmodel.pytest_plugin", "kmodel.checker.command", "kmodel.fixes.command",
     "kmodel.component.command",
     "kmodel.simulate.command", "kmodel.principles", "kmodel.serve.command",
     "kmodel.serve.ctl"),
)

#: Imports that point up, each with why it is there. A new one fails the test; so does an entry here that no
#: longer matches any import (remove it then). An entry is (importer prefix, imported module).
KNOWN_UPWARD: dict[tuple[str, str], str] = {
    ("kmodel.apiserver.events", "kmodel.client.rate_limiter"):
        "the event recorder's spam filter is client-go's token bucket, which lives with the client's limiters",
    ("kmodel.controllers", "kmodel.cluster.components"):
        "a controller's factory `make(ctx: ClusterContext)` takes the cluster's wiring context "
        "(kmodel/component/registry.py loads the factories' modules by name)",
    ("kmodel.kubelet.component", "kmodel.cluster.config"):
        "the kubelet's node IP is the cluster's numbering of nodes (`node_ip`)",
}


def layer_of(module: str) -> int:
    best, layer = -1, None
    for i, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, layer = len(prefix), i
    assert layer is not None, f"{module} is in no layer: add its package to LAYERS in tests/test_imports.py"
    return layer


def _known(importer: str, imported: str) -> Optional[tuple[str, str]]:
    for prefix, target in KNOWN_UPWARD:
        if (importer == prefix or importer.startswith(prefix + ".")) and imported == target:
            return prefix, target
    return None


def test_every_import_points_down_the_layers() -> None:
    graph = import_graph(dynamic=True)
    upward, used = [], set()
    for importer, imported in sorted(graph.edges):
        if layer_of(imported) <= layer_of(importer):
            continue
        known = _known(importer, imported)
        if known is None:
            upward.append(f"{importer} (layer {layer_of(importer)}) imports {imported} (layer {layer_of(imported)})")
        else:
            used.add(known)
    assert not upward, "imports that point up the layers (see LAYERS):\n  " + "\n  ".join(upward)
    stale = sorted(set(KNOWN_UPWARD) - used)
    assert not stale, f"KNOWN_UPWARD lists imports that no longer exist (remove them): {stale}"


def test_the_layer_check_can_fail() -> None:
    assert layer_of("kmodel.store.store") < layer_of("kmodel.apiserver.pipeline") < layer_of("kmodel.cli")
    assert layer_of("kmodel.apiserver.bootstrap_policy") < layer_of("kmodel.component.registry")
    assert layer_of("kmodel.component.registry") == layer_of("kmodel.controllers.deployment")
    assert layer_of("kmodel.variants") < layer_of("kmodel.client.informer") < layer_of("kmodel.principles.costs")
    assert layer_of("kmodel.fixes") < layer_of("kmodel.store") < layer_of("kmodel.fixes.command")
    assert _known("kmodel.store.store", "kmodel.cli") is None


# --- where imports are written ----------------------------------------------------------------------------------

#: The modules whose functions may import kmodel modules: the command line's, so that `kmodel --help` and the light
#: subcommands start without loading the model and the checker (a subcommand's handler imports what it runs).
LATE_IMPORTERS: tuple[str, ...] = ("kmodel.cli", "kmodel.clidoc", "kmodel.serve.ctl", "kmodel.launch")
LATE_IMPORTER_SUFFIX = ".command"


def function_level_imports(root: Path = ROOT, package: str = PACKAGE) -> list[str]:
    """`module:line imported` for every import of a package module written inside a function."""
    files = module_files(root, package)
    found = []
    for module, path in files.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for inner in ast.walk(node):
                names = ([inner.module or ""] if isinstance(inner, ast.ImportFrom) and not inner.level
                         else [a.name for a in inner.names] if isinstance(inner, ast.Import) else [])
                found += [f"{module}:{inner.lineno} {name}" for name in names
                          if name == package or name.startswith(package + ".")]
    return sorted(set(found))


def test_kmodel_modules_are_imported_at_the_top_of_a_module() -> None:
    # An import inside a function hides what a module depends on, and a cycle until the function first runs
    # (the graph above counts them all the same). Only the command modules keep theirs, for start-up time.
    late = [f for f in function_level_imports() if not (
        f.split(":")[0] in LATE_IMPORTERS or f.split(":")[0].endswith(LATE_IMPORTER_SUFFIX))]
    assert not late, "imports of kmodel modules inside functions (move them to the top of the module):\n  " + \
        "\n  ".join(late)


def test_the_late_import_check_sees_one(tmp_path: Path) -> None:
    pkg = tmp_path / "kmodel"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from kmodel.b import g\n    return g\n")
    (pkg / "b.py").write_text("def g():\n    return 1\n")
    assert function_level_imports(tmp_path, "kmodel") == ["kmodel.a:2 kmodel.b"]
