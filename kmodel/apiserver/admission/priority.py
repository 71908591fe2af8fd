"""Priority (plugin/pkg/admission/priority, release 1.31).

Pods (Admit, the main resource only):

* create: the pod's priorityClassName is resolved to its PriorityClass, whose value becomes spec.priority and
  whose preemptionPolicy becomes spec.preemptionPolicy; a class that does not exist → 403 `pods "x" is forbidden:
  no PriorityClass with name x was found`. Without a class name, the class marked globalDefault is taken (its
  name goes into priorityClassName; of several, the one of the lowest value), else priority 0 and
  PreemptLowerPriority. A pod that brings its own spec.priority or preemptionPolicy, different from the one
  computed, → 403 `the integer value of priority (N) must not be provided in pod spec; priority admission
  controller computed M from the given PriorityClass name` (and the same for the string of PreemptionPolicy);
* update: a priority or preemptionPolicy left out keeps the old pod's (validation then refuses any change).

PriorityClasses (Validate, create and update): one marked globalDefault while another already is → 403
`PriorityClass x is already marked as default. Only one default can exist`.

A 403 names the object as admission.NewForbidden does: its name, else its generateName (the name is generated
later). The classes are read from the store's current state (upstream: the plugin's informer), as every plugin
of the model does (kmodel/apiserver/storeview.py).
"""

from __future__ import annotations

from typing import Any, Optional

from kmodel.apiserver import errors
from kmodel.apiserver.admission.attributes import CREATE, UPDATE, AdmissionAttributes
from kmodel.apiserver.fastevolve import evolve
from kmodel.apiserver.storeview import current_prefix, current_value
from kmodel.memo import POD_SPEC_MEMO_SIZE, identity_memo
from kmodel.objects.fastevolve import with_spec
from kmodel.objects.scheduling import DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS, PREEMPT_LOWER_PRIORITY

PREFIX = "/registry/priorityclasses/"


def _forbidden_name(a: AdmissionAttributes) -> str:
    """extractResourceName: the request's name, else the object's name or generateName, else "Unknown"."""
    if a.name:
        return a.name
    meta = a.obj.metadata
    return meta.name or meta.generate_name or "Unknown"


def _forbidden(a: AdmissionAttributes, reason: str) -> errors.APIError:
    return errors.forbidden(a.resource.group, a.resource.name, _forbidden_name(a), reason)


def default_priority_class(store: Any) -> Optional[Any]:
    """getDefaultPriorityClass: the class marked globalDefault of the lowest value (several can exist after a
    race), or None."""
    chosen = None
    for kv in current_prefix(store, PREFIX):
        pc = kv.value
        if pc.global_default and (chosen is None or chosen.value > pc.value):
            chosen = pc
    return chosen


def _with_priority(spec: Any, resolved: tuple[str, int, Optional[str]]) -> Any:
    """The spec with the resolved (priorityClassName, priority, preemptionPolicy); the same spec when it has them."""
    class_name, priority, policy = resolved
    if spec.priority_class_name == class_name and spec.priority == priority and \
            (policy is None or spec.preemption_policy == policy):
        return spec
    changes: dict[str, Any] = {"priority_class_name": class_name, "priority": priority}
    if policy is not None:
        changes["preemption_policy"] = policy
    return evolve(spec, **changes)


# pods of one template share their spec object: so do their admitted specs (validation memoises on them)
_with_priority_memo = identity_memo(_with_priority, maxsize=POD_SPEC_MEMO_SIZE, extra=True)


def _admit_pod_create(a: AdmissionAttributes) -> Any:
    pod = a.obj
    spec = pod.spec
    if not spec.priority_class_name:
        default = default_priority_class(a.store)
        if default is not None:
            class_name, priority, policy = default.metadata.name, default.value, default.preemption_policy
        else:
            class_name, priority, policy = "", DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS, PREEMPT_LOWER_PRIORITY
    else:
        pc = current_value(a.store, PREFIX + spec.priority_class_name)
        if pc is None:
            raise _forbidden(a, f"no PriorityClass with name {spec.priority_class_name} was found")
        class_name, priority, policy = spec.priority_class_name, pc.value, pc.preemption_policy
    if spec.priority is not None and spec.priority != priority:
        raise _forbidden(a, f"the integer value of priority ({spec.priority}) must not be provided in pod spec; "
                            f"priority admission controller computed {priority} from the given PriorityClass name")
    if policy is not None and spec.preemption_policy is not None and spec.preemption_policy != policy:
        raise _forbidden(a, f"the string value of PreemptionPolicy ({spec.preemption_policy}) must not be provided "
                            f"in pod spec; priority admission controller computed {policy} from the given "
                            f"PriorityClass name")
    return with_spec(pod, _with_priority_memo(spec, (class_name, priority, policy)))


def _admit_pod_update(a: AdmissionAttributes) -> Any:
    pod, old = a.obj, a.old
    spec, old_spec = pod.spec, old.spec
    changes: dict[str, Any] = {}
    if spec.priority is None and old_spec.priority is not None:
        changes["priority"] = old_spec.priority
    if spec.preemption_policy is None and old_spec.preemption_policy is not None:
        changes["preemption_policy"] = old_spec.preemption_policy
    return with_spec(pod, evolve(spec, **changes)) if changes else pod


def admit(a: AdmissionAttributes) -> Any:
    """The mutating half: pods."""
    if a.resource.name != "pods" or a.subresource:
        return a.obj
    if a.operation == CREATE:
        return _admit_pod_create(a)
    if a.operation == UPDATE and a.old is not None:
        return _admit_pod_update(a)
    return a.obj


def validate(a: AdmissionAttributes) -> None:
    """The validating half: PriorityClasses marked globalDefault."""
    if a.resource.name != "priorityclasses" or a.subresource or a.operation not in (CREATE, UPDATE):
        return
    if not a.obj.global_default:
        return
    default = default_priority_class(a.store)
    if default is None:
        return
    if a.operation == CREATE or default.metadata.name != a.obj.metadata.name:
        raise _forbidden(a, f"PriorityClass {default.metadata.name} is already marked as default. "
                            f"Only one default can exist")
