"""A CustomResourceDefinition makes its resource servable: CRUD through the pipeline, watch through replicas."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from client.harness import Cluster, Probe  # noqa: E402

from kmodel.apiserver.crd_status import ESTABLISHED, NAMES_ACCEPTED  # noqa: E402
from kmodel.objects import dump  # noqa: E402
from tests.apiserver.conftest import req  # noqa: E402
from tests.apiserver.crd_fixtures import DATABASE, crd_body, database  # noqa: E402

NOW = 10_000


def create_crd(api, body=None):
    r = api.handle(req("create", "customresourcedefinitions", body=body or crd_body()), now=NOW)
    assert r.code == 201, r.body
    return api.handle(req("get", "customresourcedefinitions", name=r.body.metadata.name), now=NOW).body


def test_before_its_crd_the_resource_is_not_served(api):
    r = api.handle(req("create", "databases", "default", body=database()), now=NOW)
    assert (r.code, r.body.message) == (404, "the server could not find the requested resource")


def test_a_created_crd_gets_names_accepted_and_established_and_its_resource_is_served(api):
    crd = create_crd(api)
    assert crd.status.is_true(NAMES_ACCEPTED) and crd.status.is_true(ESTABLISHED)
    assert crd.status.condition(NAMES_ACCEPTED).reason == "NoConflicts"
    assert crd.status.accepted_names.plural == "databases" and crd.status.accepted_names.list_kind == "DatabaseList"
    assert crd.status.stored_versions == ("v1",)
    r = api.handle(req("create", "databases", "default", body=database()), now=NOW)
    assert r.code == 201
    obj = r.body
    assert (obj.api_version, obj.kind, obj.metadata.generation) == ("example.com/v1", "Database", 1)
    assert obj.metadata.uid and obj.metadata.creation_timestamp == NOW
    got = api.handle(req("get", "databases", "default", "orders"), now=NOW).body
    assert got == obj
    listed = api.handle(req("list", "databases", "default"), now=NOW).body
    assert [o.metadata.name for o in listed.items] == ["orders"]
    gone = api.handle(req("delete", "databases", "default", "orders"), now=NOW)
    assert gone.code == 200
    assert api.handle(req("get", "databases", "default", "orders"), now=NOW).code == 404


def test_the_example_object_is_valid_against_the_example_crd_and_gets_its_defaults(api):
    create_crd(api)
    r = api.handle(req("create", "databases", "default", body=DATABASE), now=NOW)
    assert r.code == 201, r.body
    assert dump(r.body)["spec"] == DATABASE["spec"]
    r = api.handle(req("create", "databases", "default", body=database("bare", spec={"engine": "mysql"})), now=NOW)
    assert dump(r.body)["spec"] == {"engine": "mysql", "replicas": 1}


def test_objects_are_stored_under_group_and_plural_in_etcd(api, store):
    create_crd(api)
    api.handle(req("create", "databases", "default", body=database()), now=NOW)
    assert store.peek("/registry/example.com/databases/default/orders")


def test_a_cluster_scoped_crd_serves_objects_without_namespace(api):
    body = crd_body()
    body["spec"]["scope"] = "Cluster"
    create_crd(api, body)
    r = api.handle(req("create", "databases", body=database(namespace="")), now=NOW)
    assert r.code == 201 and r.body.metadata.namespace == ""


def test_a_body_at_another_served_version_is_stored_at_the_storage_version(api):
    create_crd(api)
    r = api.handle(req("create", "databases", "default", body=database(apiVersion="example.com/v1beta1")), now=NOW)
    assert r.code == 201 and r.body.api_version == "example.com/v1"


def test_an_update_without_resource_version_is_refused_as_for_every_custom_resource(api):
    create_crd(api)
    api.handle(req("create", "databases", "default", body=database()), now=NOW)
    r = api.handle(req("update", "databases", "default", "orders", body=database(spec={"engine": "mysql"})), now=NOW)
    assert r.code == 422
    assert r.body.message == ('Database.example.com "orders" is invalid: metadata.resourceVersion: Invalid value: '
                              '0x0: must be specified for an update')


def test_a_second_crd_with_a_taken_plural_is_not_accepted(api):
    create_crd(api)
    body = crd_body()
    body["metadata"]["name"] = "databases.other.io"
    body["spec"]["group"] = "other.io"
    crd = create_crd(api, body)
    cond = crd.status.condition(NAMES_ACCEPTED)
    assert (cond.status, cond.reason, cond.message) == ("False", "PluralConflict", '"databases" is already in use')
    assert not crd.status.is_true(ESTABLISHED)


def test_a_crd_named_otherwise_than_plural_dot_group_is_invalid(api):
    body = crd_body()
    body["metadata"]["name"] = "dbs.example.com"
    r = api.handle(req("create", "customresourcedefinitions", body=body), now=NOW)
    assert r.code == 422
    assert r.body.message == ('CustomResourceDefinition.apiextensions.k8s.io "dbs.example.com" is invalid: '
                              'metadata.name: Invalid value: "dbs.example.com": must be spec.names.plural+"."+spec.group')


def test_the_plural_dot_group_name_is_checked_with_the_object_meta_before_the_labels(api):
    """upstream's nameValidationFn runs inside ValidateObjectMeta: metadata.name's errors come first."""
    body = crd_body()
    body["metadata"]["name"] = "dbs.example.com"
    body["metadata"]["labels"] = {"a/b/c": "x"}
    r = api.handle(req("create", "customresourcedefinitions", body=body), now=NOW)
    assert r.code == 422
    assert r.body.message.startswith(
        'CustomResourceDefinition.apiextensions.k8s.io "dbs.example.com" is invalid: [metadata.name: Invalid value: '
        '"dbs.example.com": must be spec.names.plural+"."+spec.group, metadata.labels: Invalid value: "a/b/c": ')


def test_a_crd_needs_exactly_one_storage_version_and_structural_schemas(api):
    body = crd_body()
    body["spec"]["versions"][1]["storage"] = True
    del body["spec"]["versions"][1]["schema"]
    r = api.handle(req("create", "customresourcedefinitions", body=body), now=NOW)
    assert r.code == 422
    fields = [c.field for c in r.body.details.causes]
    assert fields == ["spec.versions[1].schema.openAPIV3Schema", "spec.versions"]
    assert "must have exactly one version marked as storage version" in r.body.message
    body = crd_body()
    body["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["engine"] = {}
    r = api.handle(req("create", "customresourcedefinitions", body=body), now=NOW)
    assert r.body.details.causes[0].message == "Required value: must not be empty for specified object fields"
    assert r.body.details.causes[0].field == \
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[engine].type"


def test_custom_objects_are_watched_and_listed_through_the_replicas_watch_cache():
    p = Probe("probe", ["apiserver-0"])
    c = Cluster(1, probes=[p])
    c.act(p, lambda now, out: p.client.create(now, out, "customresourcedefinitions", crd_body(), namespace="",
                                              on_done=p.record))
    c.run()
    assert p.answers[-1].code == 201
    events = []
    c.act(p, lambda now, out: p.client.watch(now, out, "databases", namespace="default", resource_version="0",
                                             on_event=lambda now, stream, ev, out: events.append(ev),
                                             on_closed=lambda *a: None))
    c.act(p, lambda now, out: p.client.create(now, out, "databases", database(), namespace="default",
                                              on_done=p.record))
    c.run()
    assert p.answers[-1].code == 201
    assert [(e.type, e.object.metadata.name) for e in events] == [("ADDED", "orders")]
    c.act(p, lambda now, out: p.client.list(now, out, "databases", namespace="default", resource_version="0",
                                            on_done=p.record))
    c.run()
    assert [o.metadata.name for o in p.answers[-1].body.items] == ["orders"]
    assert dump(p.answers[-1].body.items[0])["spec"]["engine"] == "postgres"


def test_label_and_field_selectors_select_custom_objects(api):
    create_crd(api)
    for name, tier in (("a", "gold"), ("b", "silver")):
        body = database(name)
        body["metadata"]["labels"] = {"tier": tier}
        api.handle(req("create", "databases", "default", body=body), now=NOW)
    r = api.handle(req("list", "databases", "default", label_selector="tier=gold"), now=NOW)
    assert [o.metadata.name for o in r.body.items] == ["a"]
    r = api.handle(req("list", "databases", "default", field_selector="metadata.name=b"), now=NOW)
    assert [o.metadata.name for o in r.body.items] == ["b"]
