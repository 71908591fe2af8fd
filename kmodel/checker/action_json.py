"""Every action the checker can take, by its `kind`, and reading one back from a trace's JSON.

Each rule family keeps its actions in a module of its own (actions.py: the core; workload_actions.py,
access_actions.py, fault_actions.py, statefulset_actions.py, crd_actions.py, own_crd_actions.py,
patch_actions.py, job_actions.py, collide_actions.py, etcd_client_actions.py); this module
gathers them into one registry, so that a trace naming any
of them reads back, and nothing below it needs to know the families.
"""

from __future__ import annotations

from typing import Any

from kmodel.checker.access_actions import ACCESS_ACTIONS
from kmodel.checker.actions import CORE_ACTIONS, CORE_MINIMUMS, Action
from kmodel.checker.collide_actions import COLLIDE_ACTIONS, COLLIDE_MINIMUMS
from kmodel.checker.crd_actions import CRD_ACTIONS, CRD_MINIMUMS
from kmodel.checker.etcd_client_actions import ETCD_CLIENT_ACTIONS, ETCD_CLIENT_MINIMUMS
from kmodel.checker.fault_actions import FAULT_ACTIONS, FAULT_MINIMUMS
from kmodel.checker.job_actions import JOB_ACTIONS, JOB_MINIMUMS
from kmodel.checker.leader_actions import LEADER_ACTIONS, LEADER_MINIMUMS
from kmodel.checker.own_crd_actions import OWN_CRD_ACTIONS, OWN_CRD_MINIMUMS
from kmodel.checker.patch_actions import PATCH_ACTIONS
from kmodel.checker.statefulset_actions import STATEFULSET_ACTIONS, STATEFULSET_MINIMUMS
from kmodel.checker.workload_actions import WORKLOAD_ACTIONS, WORKLOAD_MINIMUMS
from kmodel.loop.events import check_json_fields

#: kind -> action class, every family's
ACTIONS: dict[str, type[Action]] = {
    cls.kind: cls for cls in (*CORE_ACTIONS, *WORKLOAD_ACTIONS, *ACCESS_ACTIONS, *FAULT_ACTIONS, *LEADER_ACTIONS,
                              *STATEFULSET_ACTIONS, *CRD_ACTIONS, *OWN_CRD_ACTIONS, *PATCH_ACTIONS,
                              *JOB_ACTIONS, *COLLIDE_ACTIONS, *ETCD_CLIENT_ACTIONS)}

#: the least value of each whole-number field of an action read from a trace (see check_json_fields)
ACTION_MINIMUMS: dict[str, dict[str, int]] = {
    **CORE_MINIMUMS, **WORKLOAD_MINIMUMS, **FAULT_MINIMUMS, **LEADER_MINIMUMS, **STATEFULSET_MINIMUMS, **CRD_MINIMUMS,
    **OWN_CRD_MINIMUMS, **JOB_MINIMUMS, **COLLIDE_MINIMUMS, **ETCD_CLIENT_MINIMUMS,
    "delete-with": {"grace_period_seconds": 0}}


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
