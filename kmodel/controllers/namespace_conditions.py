"""The status conditions the namespace controller writes on a namespace it is emptying (upstream's
namespaceConditionUpdater, pkg/controller/namespace/deletion/status_condition_utils.go, Kubernetes 1.31).

Every sync that empties content sets all five condition types the deleter maintains: True with a failure's
reason and message when that failure happened in this sync, else False with the type's "ok" reason and message.
A condition keeps its lastTransitionTime while its status stays the same; the namespace's status is written only
when some condition changed (`updated` returns None otherwise).

* NamespaceDeletionDiscoveryFailure: discovery failed (reason DiscoveryFailed, the error as message);
* NamespaceDeletionGroupVersionParsingFailure: a group version that did not parse (never, in the model: its
  resource table has only valid ones);
* NamespaceDeletionContentFailure: a resource could not be emptied (reason ContentDeletionFailed, `Failed to
  delete all resource types, N remaining: <the errors, sorted, joined by ", ">`);
* NamespaceContentRemaining: objects remain (reason SomeResourcesRemain, `Some resources are remaining:
  <resource>.<group> has N resource instances, ...`, sorted);
* NamespaceFinalizersRemaining: remaining objects hold finalizers (reason SomeFinalizerRemain, `Some finalizers
  are remaining: <finalizer> in N resource instances, ...`, sorted).
"""

from __future__ import annotations

from typing import Optional

import attrs

from kmodel.objects.core import Namespace, NamespaceCondition

DISCOVERY_FAILURE = "NamespaceDeletionDiscoveryFailure"
GV_PARSING_FAILURE = "NamespaceDeletionGroupVersionParsingFailure"
CONTENT_FAILURE = "NamespaceDeletionContentFailure"
CONTENT_REMAINING = "NamespaceContentRemaining"
FINALIZERS_REMAINING = "NamespaceFinalizersRemaining"

#: the condition types the deleter maintains, in upstream's order (conditionTypes)
CONDITION_TYPES = (DISCOVERY_FAILURE, GV_PARSING_FAILURE, CONTENT_FAILURE, CONTENT_REMAINING, FINALIZERS_REMAINING)
#: (reason, message) of each type when nothing went wrong (okReasons, okMessages)
OK = {
    DISCOVERY_FAILURE: ("ResourcesDiscovered", "All resources successfully discovered"),
    GV_PARSING_FAILURE: ("ParsedGroupVersions", "All legacy kube types successfully parsed"),
    CONTENT_FAILURE: ("ContentDeleted", "All content successfully deleted, may be waiting on finalization"),
    CONTENT_REMAINING: ("ContentRemoved", "All content successfully removed"),
    FINALIZERS_REMAINING: ("ContentRemoved", "All content successfully removed"),
}


@attrs.define
class DeletionOutcome:
    """What one sweep of a namespace's content found (the inputs of upstream's Process* calls)."""

    #: the discovery error's message ("" when discovery succeeded)
    discovery_error: str = ""
    #: one error message per resource that could not be emptied
    content_errors: list[str] = attrs.field(factory=list)
    #: "<resource>.<group>" -> objects remaining
    remaining: dict[str, int] = attrs.field(factory=dict)
    #: finalizer -> remaining objects holding it
    finalizers: dict[str, int] = attrs.field(factory=dict)


def failures(outcome: DeletionOutcome) -> dict[str, tuple[str, str]]:
    """The condition types this sweep sets True, with their (reason, message)."""
    found: dict[str, tuple[str, str]] = {}
    if outcome.discovery_error:
        found[DISCOVERY_FAILURE] = ("DiscoveryFailed", outcome.discovery_error)
    if outcome.content_errors:
        errors = sorted(outcome.content_errors)
        found[CONTENT_FAILURE] = ("ContentDeletionFailed", f"Failed to delete all resource types, {len(errors)} "
                                                           f"remaining: {', '.join(errors)}")
    if outcome.remaining:
        parts = sorted(f"{resource} has {n} resource instances" for resource, n in outcome.remaining.items() if n)
        found[CONTENT_REMAINING] = ("SomeResourcesRemain", f"Some resources are remaining: {', '.join(parts)}")
    if outcome.finalizers:
        parts = sorted(f"{finalizer} in {n} resource instances" for finalizer, n in outcome.finalizers.items() if n)
        found[FINALIZERS_REMAINING] = ("SomeFinalizerRemain", f"Some finalizers are remaining: {', '.join(parts)}")
    return found


def updated(ns: Namespace, outcome: DeletionOutcome, now: int) -> Optional[Namespace]:
    """`ns` with the conditions of this sweep (updateConditions), or None when none of them changed."""
    failed = failures(outcome)
    conditions = list(ns.status.conditions)
    changed = False
    for kind in CONDITION_TYPES:
        status, (reason, message) = ("True", failed[kind]) if kind in failed else ("False", OK[kind])
        index = next((i for i, c in enumerate(conditions) if c.type == kind), None)
        if index is None:
            conditions.append(NamespaceCondition(type=kind, status=status, last_transition_time=now, reason=reason,
                                                 message=message))
            changed = True
            continue
        old = conditions[index]
        if (old.status, old.reason, old.message) != (status, reason, message):
            since = old.last_transition_time if old.status == status else now
            conditions[index] = attrs.evolve(old, status=status, reason=reason, message=message,
                                             last_transition_time=since)
            changed = True
    if not changed:
        return None
    return attrs.evolve(ns, status=attrs.evolve(ns.status, conditions=tuple(conditions)))
