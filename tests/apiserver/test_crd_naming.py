"""The naming controller after a CRD is deleted (apiextensions-apiserver pkg/controller/status/
naming_controller.go, Kubernetes 1.30-1.32): sync of a CRD that is gone calls requeueAllOtherGroupCRDs, so a
CRD refused for a name the deleted one held is checked again and accepted."""

from __future__ import annotations

from kmodel.apiserver.crd_status import ESTABLISHED, NAMES_ACCEPTED
from tests.apiserver.conftest import req
from tests.apiserver.crd_fixtures import crd_body, database

NOW = 10_000


def second_database_crd() -> dict:
    """A CRD of the same group whose kind, Database, is the example CRD's: refused with KindConflict."""
    body = crd_body()
    body["metadata"]["name"] = "dbs.example.com"
    body["spec"]["names"] = {"plural": "dbs", "singular": "db", "kind": "Database"}
    return body


def get_crd(api, name):
    return api.handle(req("get", "customresourcedefinitions", name=name), now=NOW).body


def test_a_crd_refused_for_a_conflict_is_accepted_once_the_other_crd_is_deleted(api):
    assert api.handle(req("create", "customresourcedefinitions", body=crd_body()), now=NOW).code == 201
    assert api.handle(req("create", "customresourcedefinitions", body=second_database_crd()), now=NOW).code == 201
    refused = get_crd(api, "dbs.example.com")
    cond = refused.status.condition(NAMES_ACCEPTED)
    assert (cond.status, cond.reason, cond.message) == ("False", "KindConflict", '"Database" is already in use')
    assert not refused.status.is_true(ESTABLISHED)
    assert api.handle(req("create", "dbs", "default", body=database()), now=NOW).code == 404

    assert api.handle(req("delete", "customresourcedefinitions", name="databases.example.com"), now=NOW + 1).code == 200
    accepted = get_crd(api, "dbs.example.com")
    cond = accepted.status.condition(NAMES_ACCEPTED)
    assert (cond.status, cond.reason, cond.message) == ("True", "NoConflicts", "no conflicts found")
    assert accepted.status.is_true(ESTABLISHED)
    assert accepted.status.accepted_names.plural == "dbs" and accepted.status.accepted_names.kind == "Database"
    assert api.handle(req("create", "dbs", "default", body=database()), now=NOW + 1).code == 201


def test_a_crd_removed_when_its_last_finalizer_goes_frees_its_names_too(api):
    body = crd_body()
    body["metadata"]["finalizers"] = ["example.com/keep"]
    assert api.handle(req("create", "customresourcedefinitions", body=body), now=NOW).code == 201
    assert api.handle(req("create", "customresourcedefinitions", body=second_database_crd()), now=NOW).code == 201
    assert api.handle(req("delete", "customresourcedefinitions", name="databases.example.com"), now=NOW).code == 200
    assert not get_crd(api, "dbs.example.com").status.is_true(NAMES_ACCEPTED)  # still held while terminating
    patch = {"metadata": {"finalizers": None}}
    assert api.handle(req("patch", "customresourcedefinitions", name="databases.example.com", body=patch),
                      now=NOW + 1).code == 200
    assert api.handle(req("get", "customresourcedefinitions", name="databases.example.com"), now=NOW).code == 404
    assert get_crd(api, "dbs.example.com").status.is_true(NAMES_ACCEPTED)
