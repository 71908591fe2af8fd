"""The one place a checker rule is declared, and the tables read from it.

A rule is a method of a rule family: a class of `kmodel/checker/*_rules.py` that subclasses `RuleFamily`. It
is declared once, with this module's `rule` decorator (Hypothesis' own, which also records which rule is
running), and hands its action to `self._do(action)`; everything else is read from that declaration:

* the rule's name is its function's name: it is what the campaign's statistics count (report.json's `rules`);
* its family is the class it is declared in, and the machine's bases are the families (`rule_families`):
  every family whose `in_every_machine` is true is a base of `KmodelMachine`; the others (leader election's,
  the rules of an operator's own CRDs) are added by kmodel.checker.run when the cluster calls for them;
* an action is a class of `kmodel/checker/actions.py` or `*_actions.py` that subclasses `Action` and sets
  its `kind` (its name in a trace) in its own body (`action_classes`); the least value of a whole-number
  field read back from a trace is declared on the field itself: `replicas: int = at_least(0)`
  (kmodel.loop.events.check_json_fields reads it).

Rules written before this module (a plain mixin class listed in machine.py's bases, `self._do("name",
action)`, a `*_ACTIONS` tuple, a `*_MINIMUMS` dict keyed by kind) still work: a `*_MINIMUMS` dict of an
actions module is still read (`legacy_minimums`), `_do` still takes a name first, and the tests of
tests/checker/test_rulebook.py name each such declaration left to convert.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil
from types import ModuleType
from typing import Any, Callable, ClassVar

from hypothesis.stateful import RULE_MARKER
from hypothesis.stateful import rule as hypothesis_rule

from kmodel.checker.actions import Action
from kmodel.loop.events import at_least

__all__ = ["RuleFamily", "action_classes", "at_least", "legacy_minimums", "rule", "rule_families",
           "rule_names"]

#: the package whose `*_rules` and `*_actions` modules hold the families and their actions: this module's own
#: (so the import test sees only the checker's layer loaded by name, not every module of the package)
PACKAGE = __name__.rpartition(".")[0]


class RuleFamily:
    """Base of a family of checker rules: a mixin of the state machine (which provides `cluster` and `_do`)."""

    #: a base of every `KmodelMachine`; False for a family kmodel.checker.run adds when the cluster calls for it
    in_every_machine: ClassVar[bool] = True
    #: the columns of the family's table in docs/ after the rule's name, each a field of every rule's docstring
    #: (kmodel.checker.ruledoc); none: the family's rules are described by hand
    docs_columns: ClassVar[tuple[str, ...]] = ()
    cluster: Any
    _do: Any


def rule(**strategies: Any) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Hypothesis' `@rule(**strategies)`, and while the rule runs the machine knows its name (`_rule`), so that
    `self._do(action)` counts the action under it. The strategies, and so every draw, are Hypothesis' own."""

    def declare(function: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(function)
        def running(self: Any, *args: Any, **kwargs: Any) -> None:
            self._rule = function.__name__
            try:
                return function(self, *args, **kwargs)
            finally:
                self._rule = ""  # an action done outside a rule is never counted under the last rule's name

        return hypothesis_rule(**strategies)(running)

    return declare


def _modules(suffix: str) -> list[ModuleType]:
    """The modules of the checker package whose names end in `suffix`, imported, in name order."""
    package = importlib.import_module(PACKAGE)
    return [importlib.import_module(f"{PACKAGE}.{m.name}") for m in pkgutil.iter_modules(package.__path__)
            if m.name.endswith(suffix)]


def _declared_in(module: ModuleType, base: type) -> list[type]:
    """The subclasses of `base` that `module` defines (not those it imports), in name order."""
    return [c for _, c in sorted(vars(module).items())
            if inspect.isclass(c) and issubclass(c, base) and c is not base and c.__module__ == module.__name__]


@functools.cache
def rule_families() -> tuple[type[RuleFamily], ...]:
    """Every rule family of the checker package's `*_rules` modules, in module then class name order."""
    return tuple(c for m in _modules("_rules") for c in _declared_in(m, RuleFamily))


def rule_names(cls: type) -> list[str]:
    """The names of the rules a class declares in its own body, in name order."""
    return sorted(name for name, f in vars(cls).items() if getattr(f, RULE_MARKER, None) is not None)


@functools.cache
def action_classes() -> tuple[type[Action], ...]:
    """Every action the checker can take: each class of actions.py and the `*_actions` modules that subclasses
    `Action` and sets its own `kind`."""
    return tuple(c for m in _modules("actions") for c in _declared_in(m, Action) if "kind" in vars(c))


def legacy_minimums() -> dict[str, dict[str, int]]:
    """The `*_MINIMUMS` dicts (kind -> field -> least value) of actions modules written before `at_least`."""
    merged: dict[str, dict[str, int]] = {}
    for module in _modules("actions"):
        for name, value in sorted(vars(module).items()):
            if name.endswith("_MINIMUMS") and isinstance(value, dict):
                for kind, fields in value.items():
                    merged.setdefault(kind, {}).update(fields)
    return merged
