"""Reach: which lines and branch outcomes of the model a check ran, measured by coverage.py in branch mode.

`kmodel check --reach` runs its campaign inside a `Measurement`; `reach_of` reads what coverage.py recorded and
`reach_json` makes report.json's `reach` section of it; benchmarks/reach.py loads the coverage data of
the unit tests' run and reads it with the same `reach_of`, so both count the same things the same way.

What is counted, per package (kmodel/<name> for each of MODEL_PACKAGES, and the module of each `--component`):

* a *branch outcome* is one way out of a line that has several (coverage.py's branch arcs: the two sides of an
  `if`, a loop entered or not, a `match` case, a jump out of a `try`); *taken* when the run went that way once;
* a *line* is a statement.

Only code inside functions and methods is counted. A module's top-level code (imports, `def` and `class`
statements, class bodies, constants) runs once at import, whatever the run does, so it says nothing about what
the exploration did; a unit-test run counts the same way (`function_lines`). A module of a model package that
is a front end (FRONT_ENDS: `kmodel fixes`) is not counted either: it is the command line's, not the model's.

When is it measured? The `kmodel` command (kmodel.launch) starts the measurement before it imports any of the
model when its arguments are `check ... --reach` (`start_before_import`): the functions that run while the
model is imported (the registration of the built-in components) and while the options are read (resolving
--component values, checking --fix names) are measured with the exploration, as a unit-test run under
coverage.py measures them. `main(["check", "--reach", ...])` called in a process that has imported kmodel
already measures from the moment the options are read on, which misses those.

The coverage.py module is imported only here, and this module only when a reach is asked for: a check without
`--reach` runs exactly as before, untraced. Of the model, this module imports only the component registry
(kmodel.component), whose import runs none of the model's functions, so that kmodel.launch can import it to
start a measurement before the rest of the model is imported.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import tempfile
import types
from functools import lru_cache
from inspect import CO_NEWLOCALS  # a code object that runs in a frame of its own: a function's
from pathlib import Path
from typing import Any, Optional, Sequence

import attrs

from kmodel.component.registry import resolve

#: the model packages (kmodel/<name>) whose reach is measured: the model's own code, below the checker, the
#: reports and the front ends (kmodel/checker draws the inputs; it is not a mechanism of the cluster)
MODEL_PACKAGES: tuple[str, ...] = ("store", "apiserver", "client", "clock", "cluster", "component", "controllers",
                                   "ipam", "kubelet", "loop", "network", "objects", "proxy", "scheduler", "traffic",
                                   "fixes")

#: files of a model package (under kmodel/) that are front ends, not the model: `kmodel fixes` (the command line's layer of
#: tests/test_imports.py, with kmodel.cli); a check never runs them, so they are not counted
FRONT_ENDS: tuple[str, ...] = ("fixes/command.py",)

#: the code objects a module builds and runs while it is imported: comprehensions and generator expressions
#: at module or class level (a lambda or a function there runs only when called)
_IMPORT_TIME_NAMES = frozenset({"<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>"})


@attrs.frozen
class Source:
    """One measured package: its name in the report and the module it imports as."""

    name: str  # "store", or a component's module ("examples.operators.tenant")
    module: str  # "kmodel.store"


def model_sources(components: Sequence[str] = ()) -> tuple[Source, ...]:
    """The model packages, then the module of each component of one's own that `components` names (a check's
    --component values: package.module:factory, a registered or an entry point's name); the built-in ones are
    in the model packages already."""
    sources = [Source(name, f"kmodel.{name}") for name in MODEL_PACKAGES]
    for spec in components:
        module = resolve(spec).path.partition(":")[0]
        if module and not module.startswith("kmodel.") and module not in [s.module for s in sources]:
            sources.append(Source(module, module))
    return tuple(sources)


def coverage_of(sources: Sequence[Source], data_file: Optional[str] = None) -> Any:
    """A coverage.py measurement of `sources` in branch mode, ignoring any .coveragerc (the figures must not
    depend on the folder a check runs from); `data_file`: coverage data to load instead of measuring."""
    import coverage

    cov = coverage.Coverage(branch=True, data_file=data_file, source_pkgs=[s.module for s in sources],
                            config_file=False)
    # the model is imported before a check starts measuring (hence counted inside functions only): no warning
    cov.set_option("run:disable_warnings", ["module-not-measured"])
    return cov


#: the measurement `start_before_import` started, and the modules it measures (None: none started)
_started_early: Optional[tuple[Any, frozenset[str]]] = None


def start_before_import(component_modules: Sequence[str] = ()) -> None:
    """Start measuring the model packages and `component_modules` (the modules of the --component values given as
    package.module:factory) before the model is imported: kmodel.launch calls it for `kmodel check --reach`, so
    that what runs at import and while the options are read is measured too. The check's `Measurement` goes on
    with it."""
    global _started_early
    modules = [f"kmodel.{name}" for name in MODEL_PACKAGES]
    modules += [m for m in component_modules if m and not m.startswith("kmodel.") and m not in modules]
    cov = coverage_of([Source(m, m) for m in modules])
    cov.start()
    _started_early = (cov, frozenset(modules))


class Measurement:
    """A check's campaign measured by coverage.py: `with Measurement(components): ...` runs the body traced,
    then `section()` is report.json's `reach` section of what it took. It goes on with the measurement
    `start_before_import` started, when that one measures every module of `components`; otherwise (a component
    named by an entry point's name, or a check called from a process that started none) it starts its own,
    and what ran before it is not measured."""

    def __init__(self, components: Sequence[str] = ()) -> None:
        global _started_early
        self.sources = model_sources(components)
        early, _started_early = _started_early, None
        if early is not None and {s.module for s in self.sources} <= early[1]:
            self.coverage, self.started = early[0], True
            return
        if early is not None:  # it misses a module to measure: measure anew, all of them
            early[0].stop()
        self.coverage, self.started = coverage_of(self.sources), False

    def __enter__(self) -> "Measurement":
        if not self.started:
            self.coverage.start()
            self.started = True
        return self

    def __exit__(self, *exc: object) -> None:
        self.coverage.stop()

    def section(self) -> dict[str, Any]:
        return reach_json(reach_of(self.coverage, self.sources))


@attrs.frozen
class Outcome:
    """One branch outcome: from `line` of `file` to `to` (None: out of the function), and the line's text."""

    package: str
    file: str
    line: int
    to: Optional[int]
    source: str

    def where(self) -> str:
        return where(self.file, self.line, self.to)


def where(file: str, line: int, to: Optional[int]) -> str:
    """An outcome as the reports and benchmarks/reach.py name it: ``file:line -> target`` (``exit``: out of the
    function)."""
    return f"{file}:{line} -> {'exit' if to is None else to}"


@attrs.frozen
class PackageReach:
    name: str
    lines_taken: int
    lines: int
    outcomes_taken: int
    outcomes: int


@attrs.frozen
class Reach:
    """What a measured run took: per package the counts; every outcome, taken or not (each once, in a stable
    order: package, file, line, target)."""

    packages: tuple[PackageReach, ...]
    taken: tuple[Outcome, ...]
    never: tuple[Outcome, ...]

    def total(self) -> PackageReach:
        return PackageReach("total", *(sum(getattr(p, f) for p in self.packages)
                                       for f in ("lines_taken", "lines", "outcomes_taken", "outcomes")))


@lru_cache(maxsize=None)
def function_lines(path: str) -> frozenset[int]:
    """The lines of `path` that run inside a function or method call (not at import): the lines of every
    function's code object that no import-time code object has too (so a `def` line, which the module runs,
    is not one)."""
    try:
        code = compile(Path(path).read_text(encoding="utf-8"), path, "exec")
    except (OSError, SyntaxError, ValueError):
        return frozenset()
    inside: set[int] = set()
    outside: set[int] = set()

    def walk(obj: types.CodeType, parent_at_import: bool) -> None:
        if not obj.co_flags & CO_NEWLOCALS:  # the module's own code, or a class body: runs where its parent does
            at_import = parent_at_import
        else:  # a function: runs when called, but a comprehension at module or class level runs at import
            at_import = parent_at_import and obj.co_name in _IMPORT_TIME_NAMES
        (outside if at_import else inside).update(line for _, _, line in obj.co_lines() if line is not None)
        for const in obj.co_consts:
            if isinstance(const, types.CodeType):
                walk(const, at_import)

    walk(code, True)
    return frozenset(inside - outside)


def _package_of(path: str, places: Sequence[tuple[str, Source]]) -> Optional[Source]:
    absolute = os.path.abspath(path)
    for place, source in places:
        if absolute == place or absolute.startswith(place + os.sep):
            return source
    return None


def _places(sources: Sequence[Source]) -> list[tuple[str, Source]]:
    """Where each source lives: its package's folder, or a module's file; the longest first, so a component
    module inside a measured package's folder is its own."""
    places = []
    for source in sources:
        module = sys.modules.get(source.module) or importlib.import_module(source.module)
        file = os.path.abspath(module.__file__ or "")
        places.append((os.path.dirname(file) if os.path.basename(file) == "__init__.py" else file, source))
    return sorted(places, key=lambda p: -len(p[0]))


def _front_end_files() -> frozenset[str]:
    """The files of FRONT_ENDS (paths under the kmodel package, so that naming them is no import)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return frozenset(os.path.join(package, *relative.split("/")) for relative in FRONT_ENDS)


def _shown(path: str) -> str:
    """A file as the report names it: relative to the working folder when inside it, else in full."""
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute)
    return absolute if relative.startswith("..") else relative.replace(os.sep, "/")


def reach_of(cov: Any, sources: Sequence[Source]) -> Reach:
    """What the measurement `cov` (stopped, or loaded from its data) took of `sources`, counted inside functions
    only (see the module docstring). Read from coverage.py's JSON report, its documented public form."""
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "coverage.json")
        cov.json_report(outfile=out)
        with open(out, encoding="utf-8") as handle:
            files = json.load(handle)["files"]
    places = _places(sources)
    front_ends = _front_end_files()
    counts = {s.name: [0, 0, 0, 0] for s in sources}
    taken: list[Outcome] = []
    never: list[Outcome] = []
    order = {s.name: i for i, s in enumerate(sources)}
    for path in sorted(files):
        source = _package_of(path, places)
        if source is None or os.path.abspath(path) in front_ends:
            continue
        entry = files[path]
        inside = function_lines(os.path.abspath(path))
        text = Path(path).read_text(encoding="utf-8").splitlines()
        executed = [line for line in entry["executed_lines"] if line in inside]
        missing = [line for line in entry["missing_lines"] if line in inside]
        figures = counts[source.name]
        figures[0] += len(executed)
        figures[1] += len(executed) + len(missing)
        for arcs, into in ((entry["executed_branches"], taken), (entry["missing_branches"], never)):
            for start, end in arcs:
                if start not in inside:
                    continue
                into.append(Outcome(source.name, _shown(path), start, end if end > 0 else None,
                                    text[start - 1].strip() if 0 < start <= len(text) else ""))
                figures[3] += 1
                figures[2] += into is taken

    def key(o: Outcome) -> tuple:
        return order[o.package], o.file, o.line, -1 if o.to is None else o.to

    packages = tuple(PackageReach(s.name, *counts[s.name]) for s in sources)
    return Reach(packages, tuple(sorted(taken, key=key)), tuple(sorted(never, key=key)))


def coverage_version() -> str:
    import coverage

    return coverage.__version__


def _counts_json(p: PackageReach) -> dict[str, Any]:
    return {"lines": {"taken": p.lines_taken, "total": p.lines},
            "outcomes": {"taken": p.outcomes_taken, "total": p.outcomes}}


def reach_json(reach: Reach) -> dict[str, Any]:
    """report.json's `reach` section (docs/reports.md): the counts per package and in all, and every outcome
    never taken, with the text of its line."""
    return {
        "measured": "lines and branch outcomes inside functions and methods of the model packages and the "
                    "components of one's own, while the check explored (coverage.py, branch mode)",
        "coverage_py": coverage_version(),
        "packages": [{"name": p.name, **_counts_json(p)} for p in reach.packages],
        "total": _counts_json(reach.total()),
        "never_taken": [{"package": o.package, "file": o.file, "line": o.line, "to": o.to, "source": o.source}
                        for o in reach.never],
    }
