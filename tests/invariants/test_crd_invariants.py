"""The custom resource invariants: each holds on a run that drives a CRD through kubectl, and catches a planted
violation of the kind it is there for."""

from __future__ import annotations

import attrs

from kmodel.invariants.registry import REGISTRY
from kmodel.apiserver import openapi_schema
from kmodel.checker.crd_actions import DATABASE_CRD, database_manifest
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Delete, Patch
from kmodel.objects.frozendict import freeze

SAFETY = ("custom-objects-valid", "custom-objects-scoped")


def check(cluster: Cluster, name: str, memo: dict | None = None) -> list[str]:
    return list(REGISTRY[name].check(cluster, {} if memo is None else memo))


def database_cluster() -> Cluster:
    c = Cluster(ClusterConfig(nodes=1, components=("garbagecollector",)))
    c.apply([DATABASE_CRD])
    c.run(2_000)
    c.apply([database_manifest("orders", 2), database_manifest("users", 1, "negative-replicas")])
    c.submit(Patch("databases", "default", "orders", {"status": {"replicas": 2}}, subresource="status"))
    c.run(4_000)
    return c


def test_the_guarantees_hold_while_a_crd_and_its_objects_are_written_and_deleted():
    c = database_cluster()
    assert [o.metadata.name for o in c.objects("databases", "default")] == ["orders"]  # users was invalid: 422
    assert [r.response.code for r in c.kubectl.results][-3:] == [201, 422, 200]
    memos: dict = {}
    for name in SAFETY:
        assert check(c, name, memos.setdefault(name, {})) == []
    assert check(c, "crd-objects-removed") == []
    c.submit(Delete("customresourcedefinitions", "", "databases.example.com"))
    c.run(8_000)
    assert c.get("customresourcedefinitions", "", "databases.example.com") is None
    for name in SAFETY:
        assert check(c, name, memos[name]) == []
    assert check(c, "crd-objects-removed") == []


def test_an_invalid_stored_object_breaks_custom_objects_valid():
    c = database_cluster()
    key = "/registry/example.com/databases/default/orders"
    stored = c.store.peek(key)[0].value
    spec = dict(stored.content["spec"], replicas=-4)
    c.store.put(key, attrs.evolve(stored, content=stored.content.set("spec", freeze(spec))))
    found = check(c, "custom-objects-valid")
    assert found == [f"{key} (revision {c.store.revision}) breaks its CRD's schema: spec.replicas: -4 is less than the "
                     f"minimum of 0"]


def test_an_object_at_another_version_breaks_custom_objects_valid():
    c = database_cluster()
    key = "/registry/example.com/databases/default/orders"
    stored = c.store.peek(key)[0].value
    c.store.put(key, attrs.evolve(stored, api_version="example.com/v2"))
    assert "not at the storage version example.com/v1" in check(c, "custom-objects-valid")[0]


def test_an_object_without_its_namespace_breaks_custom_objects_scoped():
    c = database_cluster()
    stored = c.store.peek("/registry/example.com/databases/default/orders")[0].value
    c.store.put("/registry/example.com/databases/orders", attrs.evolve(
        stored, metadata=attrs.evolve(stored.metadata, namespace="")))
    found = check(c, "custom-objects-scoped")
    assert found == ["/registry/example.com/databases/orders: a Database of a Namespaced CRD stored without its "
                     "namespace ('')"]


def test_objects_left_after_their_crd_break_crd_objects_removed():
    c = database_cluster()
    stored = c.store.peek("/registry/example.com/databases/default/orders")[0].value
    c.submit(Delete("customresourcedefinitions", "", "databases.example.com"))
    c.run(6_000)
    c.store.put("/registry/example.com/databases/default/orders", stored)  # a leftover the finalizer missed
    assert check(c, "crd-objects-removed") == [
        "/registry/example.com/databases/default/orders is stored, but no Established CRD serves it"]


def test_a_crd_left_terminating_breaks_crd_objects_removed():
    c = database_cluster()
    c.apply([{**database_manifest("kept", 1), "metadata": {"name": "kept", "namespace": "default",
                                                           "finalizers": ["example.com/hold"]}}])
    c.run(6_000)
    c.submit(Delete("customresourcedefinitions", "", "databases.example.com"))
    c.run(8_000)
    found = check(c, "crd-objects-removed")
    assert found and "CRD databases.example.com is still terminating" in found[0]


# -- the oracle is the invariant's own: a mistake planted in the API server's validation is caught ---------------

def _forgets_the_minimum(schema: dict, value: float, path: str, where: str, errors: list) -> None:
    """The API server's number check with a planted mistake: it checks maximum and never minimum."""
    maximum = schema.get("maximum")
    if maximum is not None and value > maximum:
        errors.append(openapi_schema.invalid(path, value, f"{where} in body should be less than or equal to {maximum}"))


def test_custom_objects_valid_catches_a_validator_that_lets_a_negative_replicas_through(monkeypatch):
    monkeypatch.setattr(openapi_schema, "_validate_number", _forgets_the_minimum)
    c = database_cluster()
    assert [r.response.code for r in c.kubectl.results][-3:] == [201, 201, 200]  # users (replicas -1) stored
    found = check(c, "custom-objects-valid")
    assert found == [f"/registry/example.com/databases/default/users (revision {c.store.peek(USERS)[0].mod_revision}) "
                     f"breaks its CRD's schema: spec.replicas: -1 is less than the minimum of 0"]


def test_custom_objects_valid_catches_a_decoder_that_stores_an_unknown_field(monkeypatch):
    monkeypatch.setattr(openapi_schema, "prune", lambda schema, value, root=True: (value, []))  # prunes nothing
    c = database_cluster()
    c.apply([database_manifest("sized", 1, "unknown-field")])
    c.run(c.now + 2_000)
    assert c.get("databases", "default", "sized").spec["size"] == "large"
    [message] = check(c, "custom-objects-valid")
    assert "databases/default/sized" in message and "'size' was unexpected" in message


def test_custom_objects_valid_ratchets_values_an_update_left_as_they_were():
    """A schema made stricter after an object was stored: a later write that leaves the now-invalid value as it
    was is no violation (upstream's validation ratcheting), one that changes it to another invalid value is."""
    c = database_cluster()
    key = "/registry/example.com/databases/default/orders"
    crd = c.get("customresourcedefinitions", "", "databases.example.com")
    c.apply([{**DATABASE_CRD, "spec": {**DATABASE_CRD["spec"], "versions": [_with_maximum(1)]}}])
    c.run(c.now + 2_000)
    assert c.get("customresourcedefinitions", "", "databases.example.com").metadata.generation > crd.metadata.generation
    memo: dict = {}
    assert check(c, "custom-objects-valid", memo) == []
    stored = c.store.peek(key)[0].value  # spec.replicas 2, above the new maximum
    c.store.put(key, attrs.evolve(stored, content=stored.content.set("status", freeze({"replicas": 1}))))
    assert check(c, "custom-objects-valid", memo) == []
    c.store.put(key, attrs.evolve(stored, content=stored.content.set("spec", freeze(dict(stored.spec, replicas=3)))))
    [message] = check(c, "custom-objects-valid", memo)
    assert message.endswith("breaks its CRD's schema: spec.replicas: 3 is greater than the maximum of 1")


def test_custom_objects_valid_agrees_with_the_api_servers_ratcheting():
    """The API server accepts a status write beside a spec value the tightened schema refuses (ratcheting), and
    the invariant finds nothing wrong with what it stored."""
    c = database_cluster()
    memo: dict = {}
    c.apply([{**DATABASE_CRD, "spec": {**DATABASE_CRD["spec"], "versions": [_with_maximum(1)]}}])
    c.run(c.now + 2_000)
    c.submit(Patch("databases", "default", "orders", {"status": {"replicas": 1}}, subresource="status"))
    c.run(c.now + 2_000)
    assert c.kubectl.results[-1].response.code == 200
    assert c.get("databases", "default", "orders").content["status"]["replicas"] == 1
    assert check(c, "custom-objects-valid", memo) == []


def test_custom_objects_valid_matches_map_list_items_by_key():
    """In an `x-kubernetes-list-type: map` list, an item keeps its old value when the list is reordered (upstream
    correlates such items by their keys); a changed item is judged."""
    version = _with_maximum(5)
    schema = version["schema"]["openAPIV3Schema"]
    spec = schema["properties"]["spec"]
    members = {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
               "items": {"type": "object", "properties": {"name": {"type": "string"},
                                                          "size": {"type": "integer", "maximum": 1}}}}
    spec = {**spec, "properties": {**spec["properties"], "members": members}}
    version = {**version, "schema": {"openAPIV3Schema": {**schema, "properties": {**schema["properties"],
                                                                                  "spec": spec}}}}
    c = database_cluster()
    c.apply([{**DATABASE_CRD, "spec": {**DATABASE_CRD["spec"], "versions": [version]}}])
    c.run(c.now + 2_000)
    key = "/registry/example.com/databases/default/orders"
    stored = c.store.peek(key)[0].value

    def put(members_value):
        c.store.put(key, attrs.evolve(stored, content=stored.content.set(
            "spec", freeze(dict(stored.content["spec"], members=members_value)))))

    memo: dict = {}
    put([{"name": "a", "size": 1}, {"name": "b", "size": 7}])
    assert len(check(c, "custom-objects-valid", memo)) == 1  # a create of the item: judged
    put([{"name": "b", "size": 7}, {"name": "a", "size": 1}])
    assert check(c, "custom-objects-valid", memo) == []
    put([{"name": "b", "size": 8}, {"name": "a", "size": 1}])
    [message] = check(c, "custom-objects-valid", memo)
    assert "spec.members.0.size: 8 is greater than the maximum of 1" in message


def with_tags_set(max_length: int) -> dict:
    """The Database CRD's version with spec.tags, an `x-kubernetes-list-type: set` of strings of at most
    `max_length` characters."""
    version = _with_maximum(5)
    schema = version["schema"]["openAPIV3Schema"]
    spec = schema["properties"]["spec"]
    tags = {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string", "maxLength": max_length}}
    spec = {**spec, "properties": {**spec["properties"], "tags": tags}}
    return {**version, "schema": {"openAPIV3Schema": {**schema, "properties": {**schema["properties"],
                                                                              "spec": spec}}}}


def test_custom_objects_valid_ratchets_a_set_only_as_a_whole():
    """An item of an `x-kubernetes-list-type: set` list keeps its old value only while the whole set is as it was
    (upstream correlates no set item): a changed set is judged afresh, even where an invalid item kept its
    place, which an oracle matching set items by index would let through."""
    c = database_cluster()
    c.apply([{**DATABASE_CRD, "spec": {**DATABASE_CRD["spec"], "versions": [with_tags_set(3)]}}])
    c.run(c.now + 2_000)
    key = "/registry/example.com/databases/default/orders"
    stored = c.store.peek(key)[0].value

    def put(tags, status=None):
        content = stored.content.set("spec", freeze(dict(stored.content["spec"], tags=tags)))
        if status is not None:
            content = content.set("status", freeze(status))
        c.store.put(key, attrs.evolve(stored, content=content))

    memo: dict = {}
    put(["toolong", "b"])
    assert len(check(c, "custom-objects-valid", memo)) == 1  # the set is new: judged
    put(["toolong", "b"], status={"replicas": 1})
    assert check(c, "custom-objects-valid", memo) == []  # the set as it was: ratcheted as a whole
    put(["toolong", "c"])
    [message] = check(c, "custom-objects-valid", memo)
    assert "spec.tags.0: 'toolong' is too long" in message


USERS = "/registry/example.com/databases/default/users"


def _with_maximum(maximum: int) -> dict:
    version = DATABASE_CRD["spec"]["versions"][0]
    schema = version["schema"]["openAPIV3Schema"]
    spec = schema["properties"]["spec"]
    replicas = {**spec["properties"]["replicas"], "maximum": maximum}
    spec = {**spec, "properties": {**spec["properties"], "replicas": replicas}}
    return {**version, "schema": {"openAPIV3Schema": {**schema, "properties": {**schema["properties"], "spec": spec}}}}
