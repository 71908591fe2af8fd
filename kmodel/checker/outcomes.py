"""Which branch outcomes of the model one example took: coverage.py's tracer read example by example.

A guided campaign (kmodel.checker.guided) asks, after each example it measures, which branch outcomes that
example took, to keep it when one of them is new. `kmodel check --reach` (kmodel.checker.reach) reads a whole
run's coverage data once, through coverage.py's JSON report; that is far too dear per example (it analyses
every file). `ExampleOutcomes` instead reads the arcs the tracer recorded since the last read straight from
coverage.py's collector and empties it, and turns each raw arc into the branch outcome coverage.py's report
would count it as (the same translation: multi-line statements to their first line, then only arcs that leave a
line with several exits), inside functions only, as reach counts. What an arc means is worked out once per
file and once per arc, so an example costs what its new arcs cost.

An outcome is keyed by where it is, never by an object's identity: ``kmodel/store/kv.py:120 -> 121``
(`reach.where`; the file relative to the folder its top-level package sits in), so keys are the same in every
process and under any PYTHONHASHSEED.

The collector is coverage.py's own (`Coverage._collector`, its `data` of packed arcs: coverage.py 7, the
release constraints.txt pins); `ExampleOutcomes` checks that it looks as expected when it starts and says so
in one line if not.
"""

from __future__ import annotations

import os
import sys
import types
from inspect import CO_NEWLOCALS
from pathlib import Path
from typing import Any, Optional, Sequence

from kmodel.checker.reach import Source, coverage_of, function_lines, model_sources, where


class OutcomesUnavailable(Exception):
    """coverage.py's collector is not the one this module reads (another release)."""


def _unpack(packed: int) -> tuple[int, int]:
    """A raw arc as coverage.py's C tracer packs it in one integer (coverage/collector.py: flush_data)."""
    first = packed & 0xFFFFFFF
    second = (packed & (0xFFFFFFF << 28)) >> 28
    if packed & (1 << 56):
        first = -first
    if packed & (1 << 57):
        second = -second
    return first, second


class _File:
    """One measured file: its key path and what each raw arc of it means (a branch outcome, or nothing)."""

    def __init__(self, path: str, shown: str, cov: Any) -> None:
        from coverage.python import PythonFileReporter

        self.shown = shown
        self.reporter = PythonFileReporter(path, cov)
        possible = self.reporter.arcs()
        exits = self.reporter.exit_counts()
        branch_lines = {line for line, count in exits.items() if count > 1}
        inside = function_lines(path)
        #: the outcomes reach counts: arcs that may happen, from a line with several exits, inside a function
        self.outcomes = {arc for arc in possible if arc[0] in branch_lines and arc[0] in inside}
        dests: dict[int, set[int]] = {}
        for start, end in possible:
            dests.setdefault(start, set()).add(end)
        self.single = {start: next(iter(ends)) for start, ends in dests.items() if len(ends) == 1}
        self.meaning: dict[tuple[int, int], Optional[str]] = {}
        functions = function_of_lines(path)
        #: each outcome's key -> its region, ``file:function`` (kmodel.checker.steering)
        self.regions = {where(shown, start, end if end > 0 else None): f"{shown}:{functions.get(start, '?')}"
                        for start, end in sorted(self.outcomes)}

    def outcome(self, raw: tuple[int, int]) -> Optional[str]:
        """The key of the branch outcome a raw arc is, or None (coverage.py's analysis: results.py)."""
        if raw in self.meaning:
            return self.meaning[raw]
        arcs = self.reporter.translate_arcs([raw])
        arcs = {(a, b) if a != b else (a, self.single.get(a, b)) for a, b in arcs if a != b or a in self.single}
        arcs = self.reporter.translate_arcs(arcs) & self.outcomes
        key = None
        if arcs:
            start, end = min(arcs)
            key = where(self.shown, start, end if end > 0 else None)
        self.meaning[raw] = key
        return key


def function_of_lines(path: str) -> dict[int, str]:
    """Each line of `path` run by a function -> the qualified name of the innermost function that runs it."""
    try:
        code = compile(Path(path).read_text(encoding="utf-8"), path, "exec")
    except (OSError, SyntaxError, ValueError):
        return {}
    lines: dict[int, str] = {}

    def walk(obj: types.CodeType) -> None:
        if obj.co_flags & CO_NEWLOCALS:  # a function (a class body or the module is not one)
            lines.update((line, obj.co_qualname) for _, _, line in obj.co_lines() if line is not None)
        for const in obj.co_consts:
            if isinstance(const, types.CodeType):
                walk(const)  # after its parent: an inner function's lines are its own

    walk(code)
    return lines


def _roots(sources: Sequence[Source]) -> list[tuple[str, str]]:
    """(a measured place, the folder its top-level package sits in), the longest place first: a key names a
    file relative to that folder (kmodel/store/kv.py, examples/operators/tenant.py)."""
    import importlib

    roots = []
    for source in sources:
        module = sys.modules.get(source.module) or importlib.import_module(source.module)
        file = os.path.abspath(module.__file__ or "")
        place = os.path.dirname(file) if os.path.basename(file) == "__init__.py" else file
        root = place
        for _ in source.module.split("."):
            root = os.path.dirname(root)
        roots.append((place, root))
    return sorted(roots, key=lambda r: -len(r[0]))


class ExampleOutcomes:
    """coverage.py in branch mode over the model packages (and each `components` module), switched on and off
    around the examples measured; `taken()` is the set of outcome keys since the last call."""

    def __init__(self, components: Sequence[str] = ()) -> None:
        self.sources = model_sources(components)
        self.coverage = coverage_of(self.sources)
        self._roots = _roots(self.sources)
        self._files: dict[str, Optional[_File]] = {}
        #: of every file measured so far: each outcome's region, and each region's outcomes
        self.regions: dict[str, str] = {}
        self.region_outcomes: dict[str, set[str]] = {}

    def start(self) -> None:
        self.coverage.start()
        collector = getattr(self.coverage, "_collector", None)
        if not isinstance(getattr(collector, "data", None), dict) or not getattr(collector, "branch", False):
            self.coverage.stop()
            raise OutcomesUnavailable("a guided campaign reads coverage.py 7's collector; install the release "
                                      "constraints.txt names (pip install -c constraints.txt coverage)")

    def stop(self) -> None:
        self.coverage.stop()

    def _file(self, path: str) -> Optional[_File]:
        if path not in self._files:
            absolute = os.path.abspath(path)
            for place, root in self._roots:
                if absolute == place or absolute.startswith(place + os.sep):
                    shown = os.path.relpath(absolute, root).replace(os.sep, "/")
                    file = self._files[path] = _File(absolute, shown, self.coverage)
                    self.regions.update(file.regions)
                    for key, region in file.regions.items():
                        self.region_outcomes.setdefault(region, set()).add(key)
                    break
            else:
                self._files[path] = None
        return self._files[path]

    def region_of(self, key: str) -> Optional[str]:
        """The region (``file:function``) of an outcome of a file measured so far."""
        return self.regions.get(key)

    def missing(self, seen: set[str]) -> dict[str, int]:
        """Per region of the files measured so far, its outcomes not in `seen`."""
        return {region: len(keys - seen) for region, keys in sorted(self.region_outcomes.items())}

    def taken(self) -> set[str]:
        """The branch outcomes taken since the last call (the collector is emptied)."""
        collector = self.coverage._collector
        packed = getattr(collector.core, "packed_arcs", False)
        keys: set[str] = set()
        for path, raws in list(collector.data.items()):
            arcs = list(raws)
            raws.clear()
            file = self._file(path)
            if file is None:
                continue
            for raw in arcs:
                key = file.outcome(_unpack(raw) if packed else raw)
                if key is not None:
                    keys.add(key)
        return keys
