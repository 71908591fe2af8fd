"""Drawing an episode's actions (kmodel.operator.actions) with Hypothesis: a first object applied, then a mix of
user actions on the operator's custom objects (specs drawn from each CRD's structural schema by
kmodel.checker.schema_draws, now and then one that breaks it), faults on the operator and faults of the cluster.

Object names come from a pool of two, so that drawn actions collide on one object (an update of what was just
created, a create after a delete, a delete during a fault) where operators keep their guards.
"""

from __future__ import annotations

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


@st.composite
def spec_of(draw: Any, resource: CustomResource) -> tuple[Any, bool]:
    """(spec, broken): a spec the schema accepts, or one that breaks it."""
    schema = resource.spec_schema
    if not schema:
        return {}, False
    spec = draw(schema_draws.valid(schema))
    if draw(st.integers(1, BROKEN_ONE_IN)) == 1:
        found = schema_draws.breakages(schema, ("spec",))
        if found:
            breakage = draw(st.sampled_from(found))
            return schema_draws.broken({"spec": spec}, breakage).get("spec", {}), True
    return spec, False


def replicas_schema(resource: CustomResource) -> dict:
    """The schema of spec.replicas when the CRD has an integer one ({} otherwise: no scale actions)."""
    sub = (resource.spec_schema.get("properties") or {}).get("replicas") or {}
    return sub if sub.get("type") == "integer" else {}


@st.composite
def user_action(draw: Any, resources: tuple[CustomResource, ...], while_down: bool = False) -> a.Action:
    """A user action on a custom object; `while_down` (the operator was just killed): a delete half the time,
    since a delete is the one change a list made after the restart cannot show (the object is simply gone)."""
    resource = draw(st.sampled_from(resources))
    name = draw(st.sampled_from(NAMES))
    choices = ["apply", "apply", "delete", "conflict"] + (["scale"] if replicas_schema(resource) else [])
    if while_down:
        choices += ["delete"] * (len(choices) - 2)
    choice = draw(st.sampled_from(choices))
    if choice == "apply":
        spec, broken = draw(spec_of(resource))
        return a.ApplyObject(resource.plural, name, spec, broken)
    if choice == "scale":
        return a.ScaleObject(resource.plural, name, draw(schema_draws.valid(replicas_schema(resource))))
    if choice == "delete":
        return a.DeleteObject(resource.plural, name)
    return a.ConflictingWrite(resource.plural, name)


def operator_fault() -> st.SearchStrategy:
    """A fault on the operator; a SIGKILL twice as often as each other kind (the fault Sieve's classes come from)."""
    kill = st.builds(a.KillOperator, st.integers(0, 3))
    return st.one_of(
        kill, kill,
        st.builds(a.PauseOperator, st.sampled_from((0.5, 1.0, 2.0))),
        st.builds(a.CutConnection, st.sampled_from((0.5, 1.0, 2.0))),
        st.sampled_from(REQUEST_FAULTS).map(lambda f: a.FailRequest(*f)),
        st.just(a.BreakWatches()),
        st.just(a.ExpireWatches()),
    )


def cluster_fault() -> st.SearchStrategy:
    return st.one_of(st.builds(a.RestartComponent, st.sampled_from(CLUSTER_TARGETS), st.sampled_from((0.5, 2.0))),
                     st.builds(a.Wait, st.sampled_from((0.5, 1.0, 2.0))))


@st.composite
def episode(draw: Any, resources: tuple[CustomResource, ...], steps: int) -> list[a.Action]:
    """`steps` actions: an object applied first, then user actions (about half), operator faults (about two in
    five) and cluster faults or waits; the action after a SIGKILL is a user action (a delete half the time), the
    change made while the operator is down (or as its write is cut short), so that it must find it out when it
    starts again."""
    first_resource = resources[0]
    spec, _ = draw(spec_of(first_resource).filter(lambda drawn: not drawn[1]))
    drawn: list[a.Action] = [a.ApplyObject(first_resource.plural, NAMES[0], spec)]
    kinds = st.sampled_from(("user",) * 5 + ("operator",) * 4 + ("cluster",))
    for _ in range(steps - 1):
        killed = isinstance(drawn[-1], a.KillOperator)
        kind = "user" if killed else draw(kinds)
        if kind == "user":
            drawn.append(draw(user_action(resources, while_down=killed)))
        elif kind == "operator":
            drawn.append(draw(operator_fault()))
        else:
            drawn.append(draw(cluster_fault()))
    return drawn
