"""Drawing an episode's actions (kmodel.operator.actions): a first object applied, then a mix of user actions on
the operator's custom objects (specs drawn from each CRD's structural schema by kmodel.checker.schema_draws, now
and then one that breaks it), faults on the operator and faults of the cluster.

Hypothesis draws a seed per episode, and the episode's shape (which kind of action at each step, which object,
which fault) comes from a `random.Random` of that seed, so the kinds come in the proportions below; Hypothesis
draws the specs themselves from the schema (its values near the schema's bounds). Hypothesis alone would favour
its simplest choices at every step (the first kind, the first object), which a real episode, seconds long, cannot
afford to repeat.

Object names come from a pool of two, so that drawn actions collide on one object (an update of what was just
created, a create after a delete, a delete during a fault) where operators keep their guards.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import strategies as st

from kmodel.checker import schema_draws
from kmodel.operator import actions as a
from kmodel.operator.spec import CustomResource

NAMES = ("a", "b")
#: one in this many specs breaks the schema (refused with 422)
BROKEN_ONE_IN = 8
#: the request faults drawn, with the 504s' write applied or not
REQUEST_FAULTS = ((429, False), (500, False), (503, False), (504, False), (504, True))
#: the parts of the cluster a cluster fault crashes and restarts
CLUSTER_TARGETS = ("kube-controller-manager",)
#: each step's kind, in these proportions: user actions about half, operator faults about two in five
STEP_KINDS = ("user",) * 5 + ("operator",) * 4 + ("cluster",)
#: the operator faults, a SIGKILL twice as often as each other (the fault Sieve's classes come from)
OPERATOR_FAULTS = ("kill", "kill", "pause", "cut", "fail", "break-watches", "expire-watches")
#: pauses, cuts and waits last one of these (wall seconds)
SPANS = (0.5, 1.0, 2.0)


def spec_of(draw: Any, rnd: random.Random, resource: CustomResource, may_break: bool = True) -> tuple[Any, bool]:
    """(spec, broken): a spec the schema accepts, or (one in BROKEN_ONE_IN) one that breaks it."""
    schema = resource.spec_schema
    if not schema:
        return {}, False
    spec = draw(schema_draws.valid(schema))
    found = schema_draws.breakages(schema, ("spec",)) if may_break and rnd.randrange(BROKEN_ONE_IN) == 0 else []
    if found:
        return schema_draws.broken({"spec": spec}, rnd.choice(found)).get("spec", {}), True
    return spec, False


def replicas_schema(resource: CustomResource) -> dict:
    """The schema of spec.replicas when the CRD has an integer one ({} otherwise: no scale actions)."""
    sub = (resource.spec_schema.get("properties") or {}).get("replicas") or {}
    return sub if sub.get("type") == "integer" else {}


def user_action(draw: Any, rnd: random.Random, resources: tuple[CustomResource, ...]) -> a.Action:
    """A user action on a custom object of the pool."""
    resource = rnd.choice(resources)
    name = rnd.choice(NAMES)
    choices = ["apply", "apply", "delete", "conflict"] + (["scale"] if replicas_schema(resource) else [])
    choice = rnd.choice(choices)
    if choice == "apply":
        spec, broken = spec_of(draw, rnd, resource)
        return a.ApplyObject(resource.plural, name, spec, broken)
    if choice == "scale":
        return a.ScaleObject(resource.plural, name, draw(schema_draws.valid(replicas_schema(resource))))
    if choice == "delete":
        return a.DeleteObject(resource.plural, name)
    return a.ConflictingWrite(resource.plural, name)


def change_while_down(draw: Any, rnd: random.Random, resources: tuple[CustomResource, ...],
                      present: set) -> a.Action:
    """The change made right after a SIGKILL (while the operator is down, or as its write is cut short): half the
    time a delete of an object the episode made, the one change a list after the restart cannot show; else a
    create of an object not there, which the operator must write for (its crash then falls between two of its
    writes). Objects are the (resource, name) pairs `present` says the drawn actions made and did not delete."""
    absent = [(r, n) for r in resources for n in NAMES if (r.plural, n) not in present]
    there = [(r, n) for r in resources for n in NAMES if (r.plural, n) in present]
    if there and (rnd.randrange(2) or not absent):
        resource, name = rnd.choice(there)
        return a.DeleteObject(resource.plural, name)
    if absent:
        resource, name = rnd.choice(absent)
        return a.ApplyObject(resource.plural, name, spec_of(draw, rnd, resource, may_break=False)[0])
    return user_action(draw, rnd, resources)


def operator_fault(rnd: random.Random) -> a.Action:
    kind = rnd.choice(OPERATOR_FAULTS)
    if kind == "kill":
        return a.KillOperator(rnd.randrange(4))
    if kind == "pause":
        return a.PauseOperator(rnd.choice(SPANS))
    if kind == "cut":
        return a.CutConnection(rnd.choice(SPANS))
    if kind == "fail":
        return a.FailRequest(*rnd.choice(REQUEST_FAULTS))
    return a.BreakWatches() if kind == "break-watches" else a.ExpireWatches()


def cluster_fault(rnd: random.Random) -> a.Action:
    if rnd.randrange(2):
        return a.RestartComponent(rnd.choice(CLUSTER_TARGETS), rnd.choice((0.5, 2.0)))
    return a.Wait(rnd.choice(SPANS))


@st.composite
def episode(draw: Any, resources: tuple[CustomResource, ...], steps: int) -> list[a.Action]:
    """`steps` actions: an object applied first, then steps of STEP_KINDS; the action after a SIGKILL is the
    change made while the operator is down (`change_while_down`), so that it must find it out when it starts
    again."""
    rnd = random.Random(draw(st.integers(0, 2 ** 64 - 1)))
    first = resources[0]
    drawn: list[a.Action] = [a.ApplyObject(first.plural, NAMES[0], spec_of(draw, rnd, first, may_break=False)[0])]
    present = {(first.plural, NAMES[0])}
    for _ in range(steps - 1):
        if isinstance(drawn[-1], a.KillOperator):
            action = change_while_down(draw, rnd, resources, present)
        else:
            kind = rnd.choice(STEP_KINDS)
            action = user_action(draw, rnd, resources) if kind == "user" else \
                operator_fault(rnd) if kind == "operator" else cluster_fault(rnd)
        if isinstance(action, a.ApplyObject) and not action.broken:
            present.add((action.resource, action.name))
        elif isinstance(action, a.DeleteObject):
            present.discard((action.resource, action.name))
        drawn.append(action)
    return drawn
