"""Server-side apply through the pipeline (kmodel/apiserver/apply/), with cases from upstream's fieldmanager tests
(k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager and test/integration/apiserver/apply, Kubernetes 1.31):
apply creates, a conflict with another manager is 409 naming it, force takes the field, equal values share it,
a field an applier stops sending is removed unless someone else owns it; Update operations record managers."""

from __future__ import annotations

import copy
import json

import pytest

from kmodel.apiserver.pipeline import Pipeline
from kmodel.apiserver.wire import PatchBody
from kmodel.objects import dump

from .conftest import req

DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
    "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
             "template": {"metadata": {"labels": {"app": "web"}},
                          "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}}}


def apply(api: Pipeline, config: dict, manager: str = "kubectl", *, force: bool = False, dry_run: bool = False,
          now: int = 1000):
    name = config["metadata"]["name"]
    return api.handle(req("patch", "deployments", "default", name, body=PatchBody("apply", config),
                          field_manager=manager, force=force, dry_run=dry_run), now=now)


def managed(obj) -> dict:
    """manager/operation -> FieldsV1 of an object's managedFields."""
    return {f"{m['manager']}/{m['operation']}": m["fieldsV1"] for m in dump(obj)["metadata"].get("managedFields", [])}


def with_replicas(replicas: int) -> dict:
    config = copy.deepcopy(DEPLOYMENT)
    config["spec"]["replicas"] = replicas
    return config


def test_apply_creates_the_object_and_records_only_what_was_applied(api: Pipeline) -> None:
    r = apply(api, DEPLOYMENT)
    assert r.code == 201, r.body
    fields = managed(r.body)
    assert list(fields) == ["kubectl/Apply"]
    spec = fields["kubectl/Apply"]["f:spec"]
    assert spec["f:selector"] == {}  # LabelSelector is an atomic struct
    assert spec["f:template"]["f:spec"]["f:containers"] == {'k:{"name":"nginx"}': {".": {}, "f:image": {},
                                                                                   "f:name": {}}}
    assert "f:imagePullPolicy" not in json.dumps(fields)  # defaults are not the applier's
    entry = dump(r.body)["metadata"]["managedFields"][0]
    assert (entry["apiVersion"], entry["fieldsType"], entry["time"]) == ("apps/v1", "FieldsV1", "2024-01-01T00:00:01Z")


def test_applying_the_same_configuration_again_writes_nothing(api: Pipeline) -> None:
    first = apply(api, DEPLOYMENT).body
    again = apply(api, DEPLOYMENT, now=60_000)  # a minute later: only the entry's time would change
    assert again.code == 200 and again.body.metadata.resource_version == first.metadata.resource_version


def test_a_conflicting_apply_is_409_naming_the_manager_and_the_field(api: Pipeline) -> None:
    apply(api, DEPLOYMENT, "alice")
    r = apply(api, with_replicas(3), "bob")
    assert r.code == 409 and r.body.reason == "Conflict"
    assert r.body.message == 'Apply failed with 1 conflict: conflict with "alice": .spec.replicas'
    cause = r.body.details.causes[0]
    assert (cause.reason, cause.message, cause.field) == ("FieldManagerConflict", 'conflict with "alice"',
                                                          ".spec.replicas")


def test_conflicts_with_an_update_manager_name_its_api_version(api: Pipeline) -> None:
    created = api.handle(req("create", "deployments", "default", body=DEPLOYMENT, field_manager="kubectl-create"),
                         now=500)
    assert created.code == 201
    assert "f:replicas" in managed(created.body)["kubectl-create/Update"]["f:spec"]
    config = with_replicas(5)
    config["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    r = apply(api, config, "ci")
    assert r.code == 409
    assert r.body.message == ('Apply failed with 2 conflicts: conflicts with "kubectl-create" using apps/v1:\n'
                              '- .spec.replicas\n- .spec.template.spec.containers[name="nginx"].image')


def test_force_takes_the_fields_from_their_owner(api: Pipeline) -> None:
    apply(api, DEPLOYMENT, "alice")
    r = apply(api, with_replicas(3), "bob", force=True)
    assert r.code == 200 and r.body.spec.replicas == 3
    fields = managed(r.body)
    assert "f:replicas" not in fields["alice/Apply"]["f:spec"]
    assert "f:replicas" in fields["bob/Apply"]["f:spec"]


def test_applying_an_equal_value_shares_the_field(api: Pipeline) -> None:
    apply(api, DEPLOYMENT, "alice")
    r = apply(api, DEPLOYMENT, "bob")
    assert r.code == 200
    fields = managed(r.body)
    assert fields["alice/Apply"]["f:spec"]["f:replicas"] == fields["bob/Apply"]["f:spec"]["f:replicas"] == {}


def test_a_field_no_longer_applied_is_removed_unless_someone_else_owns_it(api: Pipeline) -> None:
    config = copy.deepcopy(DEPLOYMENT)
    config["metadata"]["labels"] = {"team": "a", "tier": "web"}
    apply(api, config, "alice")
    shared = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "labels": {"tier": "web"}}}
    assert apply(api, shared, "bob").code == 200
    config["metadata"]["labels"] = {}
    r = apply(api, config, "alice")
    assert r.code == 200
    assert dict(r.body.metadata.labels) == {"tier": "web"}  # team was alice's alone; bob still owns tier


def test_a_list_item_no_longer_applied_is_removed(api: Pipeline) -> None:
    config = copy.deepcopy(DEPLOYMENT)
    config["spec"]["template"]["spec"]["containers"].append({"name": "sidecar", "image": "busybox"})
    apply(api, config, "alice")
    r = apply(api, DEPLOYMENT, "alice")
    assert [c.name for c in r.body.spec.template.spec.containers] == ["nginx"]


def test_an_update_takes_the_fields_it_changes_without_conflict(api: Pipeline) -> None:
    obj = apply(api, DEPLOYMENT, "alice").body
    scaled = dump(obj)
    scaled["spec"]["replicas"] = 7
    r = api.handle(req("update", "deployments", "default", "web", body=scaled, field_manager="kubectl-scale"),
                   now=2000)
    assert r.code == 200
    fields = managed(r.body)
    assert fields["kubectl-scale/Update"] == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" not in fields["alice/Apply"]["f:spec"]
    assert [m["manager"] for m in dump(r.body)["metadata"]["managedFields"]] == ["alice", "kubectl-scale"]


def test_an_object_without_managers_is_owned_before_first_apply(api: Pipeline) -> None:
    assert api.handle(req("create", "deployments", "default", body=DEPLOYMENT), now=500).code == 201
    r = apply(api, with_replicas(4), "ci")
    assert r.code == 409
    assert r.body.message == ('Apply failed with 1 conflict: conflict with "before-first-apply" using apps/v1: '
                              '.spec.replicas')


def test_an_apply_needs_a_field_manager_and_its_kinds_version(api: Pipeline) -> None:
    r = apply(api, DEPLOYMENT, "")
    assert r.code == 422
    assert r.body.message == 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required ' \
                             'for apply patch'
    wrong = dict(DEPLOYMENT, apiVersion="apps/v1beta1")
    r = apply(api, wrong)
    assert r.code == 400
    assert r.body.message == ("Incorrect version specified in apply patch. Specified patch version: apps/v1beta1, "
                              "expected: apps/v1")


def test_apply_runs_validation(api: Pipeline) -> None:
    r = apply(api, with_replicas(-1))
    assert r.code == 422 and "spec.replicas" in r.body.message


def test_apply_to_a_custom_resource_follows_its_schema(api: Pipeline) -> None:
    from tests.apiserver.crd_fixtures import crd_body, database
    assert api.handle(req("create", "customresourcedefinitions", body=crd_body()), now=10).code == 201
    config = database(spec={"engine": "postgres", "tags": ["a", "b"], "config": {"x": {"y": 1}}})

    def apply_db(body: dict, manager: str, force: bool = False):
        return api.handle(req("patch", "databases", "default", "orders", body=PatchBody("apply", body),
                              field_manager=manager, force=force), now=20)

    r = apply_db(config, "op")
    assert r.code == 201, r.body
    assert r.body.content["spec"]["replicas"] == 1  # the schema's default, not the applier's
    fields = managed(r.body)["op/Apply"]["f:spec"]
    # tags: an atomic list; config (x-kubernetes-preserve-unknown-fields) a map whose entries are members
    assert fields == {"f:config": {"f:x": {".": {}, "f:y": {}}}, "f:engine": {}, "f:tags": {}}
    config["spec"]["tags"] = ["c"]
    r = apply_db(config, "other")
    assert (r.code, r.body.message) == (409, 'Apply failed with 1 conflict: conflict with "op": .spec.tags')
    assert apply_db(config, "other", force=True).body.content["spec"]["tags"] == ("c",)
