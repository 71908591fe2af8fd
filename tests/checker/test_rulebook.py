"""One place per rule (kmodel.checker.rulebook): a rule's name, family, actions and their least values are read
from where they are declared, and a declaration written the old way is named here for converting."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import attrs
import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RULE_MARKER

from kmodel.checker import statefulset_actions
from kmodel.checker.action_json import ACTIONS, action_from_json
from kmodel.checker.machine import KmodelMachine
from kmodel.checker.rulebook import (
    RuleFamily, action_classes, at_least, legacy_minimums, rule, rule_families, rule_names,
)
from kmodel.loop.events import check_json_fields

CHECKER = Path(__file__).resolve().parents[2] / "kmodel" / "checker"


def _modules(suffix: str) -> list[Path]:
    return sorted(p for p in CHECKER.glob(f"*{suffix}.py"))


def test_every_mixin_of_rules_is_a_rule_family():
    """A class of a `*_rules` module with rules of its own must subclass RuleFamily, or the machine never has
    its rules."""
    plain = []
    for path in _modules("_rules"):
        module = importlib.import_module(f"kmodel.checker.{path.stem}")
        for name, cls in vars(module).items():
            if inspect.isclass(cls) and cls.__module__ == module.__name__ and rule_names(cls) \
                    and not issubclass(cls, RuleFamily):
                plain.append(f"{path.name}: {name}")
    assert not plain, ("convert these mixins to `class X(RuleFamily)` (kmodel.checker.rulebook) and drop them "
                       f"from KmodelMachine's bases: {plain}")


def test_every_family_is_a_base_of_the_machine_unless_run_adds_it():
    machine = set(KmodelMachine.__mro__)
    for family in rule_families():
        assert (family in machine) == family.in_every_machine, family


def test_no_actions_module_keeps_a_minimums_dict_or_an_actions_tuple():
    """Old-style declarations still work (a `*_MINIMUMS` dict is still read), but each is named for converting:
    a least value belongs on its field (`at_least`), and the registry finds the action classes itself."""
    old = []
    for path in _modules("actions"):
        module = importlib.import_module(f"kmodel.checker.{path.stem}")
        old += [f"{path.name}: {name}" for name in vars(module)
                if name.endswith("_MINIMUMS") or (name.endswith("_ACTIONS") and isinstance(vars(module)[name], tuple))]
    assert not old, ("convert: give each field of a `*_MINIMUMS` entry `= at_least(n)` and delete the dict; "
                     f"delete a `*_ACTIONS` tuple (kmodel.checker.rulebook finds the classes): {old}")


def test_no_rule_names_itself():
    """`self._do("scale_statefulset", ...)` inside `scale_statefulset` repeats what the function says:
    `self._do(action)`. A label that differs (what a fault rule did instead) stays."""
    repeats = []
    for path in [*_modules("_rules"), CHECKER / "machine.py"]:
        for function in ast.walk(ast.parse(path.read_text())):
            if not isinstance(function, ast.FunctionDef):
                continue
            for call in ast.walk(function):
                if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "_do"
                        and len(call.args) == 2 and isinstance(call.args[0], ast.Constant)
                        and call.args[0].value == function.name):
                    repeats.append(f"{path.name}:{call.lineno} {function.name}")
    assert not repeats, f"write `self._do(action)`: the rule's name is its function's: {repeats}"


def test_the_registry_has_every_action_class_once():
    kinds = [c.kind for c in action_classes()]
    assert len(kinds) == len(set(kinds)) == len(ACTIONS)
    assert "Action" not in {c.__name__ for c in action_classes()}  # the base sets no kind


def test_a_least_value_is_read_from_the_field():
    with pytest.raises(ValueError, match="apply-statefulset: replicas must be at least 0, not -1"):
        action_from_json({"name": "apply-statefulset", "replicas": -1})
    with pytest.raises(ValueError, match="delete-with: grace_period_seconds must be at least 0, not -5"):
        action_from_json({"name": "delete-with", "resource": "pods", "namespace": "default", "object": "x",
                          "grace_period_seconds": -5})


def test_a_minimums_dict_written_the_old_way_is_still_read(monkeypatch):
    monkeypatch.setattr(statefulset_actions, "OLD_MINIMUMS", {"scale-statefulset": {"replicas": 2}}, raising=False)
    minimums = legacy_minimums()
    assert minimums == {"scale-statefulset": {"replicas": 2}}
    cls = ACTIONS["scale-statefulset"]
    # the field's own least value comes first; the dict's is for fields that declare none
    check_json_fields(cls, cls.kind, {"replicas": 0}, minimums[cls.kind])

    @attrs.frozen
    class Old:
        replicas: int

    @attrs.frozen
    class New:
        replicas: int = at_least(3)

    with pytest.raises(ValueError, match="replicas must be at least 2, not 1"):
        check_json_fields(Old, "old", {"replicas": 1}, minimums["scale-statefulset"])
    with pytest.raises(ValueError, match="replicas must be at least 3, not 2"):
        check_json_fields(New, "new", {"replicas": 2}, {})


class _Family(RuleFamily):
    done: list

    @rule(n=st.integers(0, 3))
    def grow(self, n: int) -> None:
        """Grows."""
        self._do(n)

    def _do(self, *args):
        self.done.append((self._rule, *args))


def test_a_rule_counts_its_action_under_its_own_name_and_stays_hypothesis_rule():
    family = _Family()
    family.done = []
    family.grow(2)
    assert family.done == [("grow", 2)]
    declared = getattr(_Family.grow, RULE_MARKER)
    assert set(declared.arguments) == {"n"}
    assert _Family.grow.__name__ == "grow" and _Family.grow.__doc__ == "Grows."
    assert rule_names(_Family) == ["grow"]


def test_a_machines_rule_names_are_the_statistics_names():
    """What report.json's `rules` counts: each rule's function name (the fault rules also count the kind that
    happened instead)."""
    names = {n for cls in KmodelMachine.__mro__ for n in rule_names(cls)}
    assert {"apply_statefulset", "list_objects", "create_namespace", "next_event", "settle"} <= names


def test_an_action_done_outside_a_rule_must_say_its_label():
    """After a rulebook rule returns, the machine no longer counts actions under its name: `_do(action)` with no
    rule running is refused, so an action is never counted under the last rule that ran."""
    import types

    import pytest

    from kmodel.checker.machine import KmodelMachine
    from kmodel.checker.rulebook import rule

    class Probe:
        _rule = ""

        @rule()
        def poke(self) -> None:
            assert self._rule == "poke"

    probe = Probe()
    Probe.poke(probe)
    assert probe._rule == ""
    with pytest.raises(TypeError, match="outside a rule"):
        KmodelMachine._do(types.SimpleNamespace(_rule=probe._rule), object())
