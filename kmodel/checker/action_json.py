"""Every action the checker can take, by its `kind`, and reading one back from a trace's JSON.

Each rule family keeps its actions in a module of its own (actions.py: the core; `*_actions.py`: the
families'); kmodel.checker.rulebook finds them all, so that a trace naming any of them reads back, and nothing
below it needs to know the families.
"""

from __future__ import annotations

from typing import Any

from kmodel.checker.actions import Action
from kmodel.checker.rulebook import action_classes, legacy_minimums
from kmodel.loop.events import check_json_fields

#: kind -> action class, every family's
ACTIONS: dict[str, type[Action]] = {cls.kind: cls for cls in action_classes()}

#: the least values of whole-number fields still declared in a family's `*_MINIMUMS` dict rather than on the
#: field (`at_least`); check_json_fields reads the field's own first
ACTION_MINIMUMS: dict[str, dict[str, int]] = legacy_minimums()


def action_from_json(data: Any) -> Action:
    """Rebuild an action from its `to_json()` form; ValueError if it is not one."""
    if not isinstance(data, dict):
        raise ValueError(f"an action is a JSON object, not {type(data).__name__}")
    fields = {k: v for k, v in data.items() if k not in ("name", "say")}
    cls = ACTIONS.get(data.get("name"))  # type: ignore[arg-type]
    if cls is None:
        raise ValueError(f"unknown action {data.get('name')!r}; known: {', '.join(sorted(ACTIONS))}")
    check_json_fields(cls, cls.kind, fields, ACTION_MINIMUMS.get(cls.kind, {}))
    try:
        return cls(**fields)
    except (TypeError, ValueError, KeyError) as exc:
        raise ValueError(f"bad {cls.kind} action: {exc}") from None
