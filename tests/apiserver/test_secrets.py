"""v1 Secret and ServiceAccount through the API pipeline: stringData merged into data and never stored, the keys
each type requires, immutable data, the 1 MiB limit, and who may read a Secret (RBAC)."""

from __future__ import annotations

import base64

from kmodel.objects import Secret

from .conftest import req


def secret(name: str = "s", **fields) -> dict:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, **fields}


def create(api, body: dict, *, token: str = "admin-token"):
    return api.handle(req("create", "secrets", "default", body=body, token=token), now=1_000)


def test_string_data_is_merged_into_data_as_base64_and_never_stored(api):
    answer = create(api, secret(data={"a": "eA=="}, stringData={"b": "two", "a": "one"}))
    assert answer.code == 201
    stored = api.handle(req("get", "secrets", "default", "s"), now=2_000).body
    assert isinstance(stored, Secret)
    assert stored.data == {"a": base64.b64encode(b"one").decode(), "b": base64.b64encode(b"two").decode()}
    assert stored.string_data == {} and stored.type == "Opaque"


def test_each_type_requires_its_keys_with_upstreams_messages(api):
    tls = create(api, secret(type="kubernetes.io/tls", stringData={"tls.crt": "x"}))
    assert (tls.code, tls.body.message) == (422, 'Secret "s" is invalid: data[tls.key]: Required value')
    token = create(api, secret(type="kubernetes.io/service-account-token"))
    assert token.body.message == ('Secret "s" is invalid: metadata.annotations[kubernetes.io/service-account.name]: '
                                  'Required value')
    docker = create(api, secret(type="kubernetes.io/dockerconfigjson", stringData={".dockerconfigjson": "{"}))
    assert (docker.code, docker.body.message) == (422, 'Secret "s" is invalid: data[.dockerconfigjson]: Invalid '
                                                       'value: "<secret contents redacted>": unexpected end of JSON input')
    listed = create(api, secret(type="kubernetes.io/dockerconfigjson", stringData={".dockerconfigjson": "[]"}))
    assert listed.body.message.endswith(": json: cannot unmarshal array into Go value of type map[string]interface {}")
    # a JSON null unmarshals into a map without an error
    nulled = create(api, secret(name="n", type="kubernetes.io/dockerconfigjson", stringData={".dockerconfigjson": "null"}))
    assert nulled.code == 201
    basic = create(api, secret(type="kubernetes.io/basic-auth"))
    assert basic.body.message == ('Secret "s" is invalid: [data[%s][username]: Required value, '
                                  'data[%s][password]: Required value]')
    assert create(api, secret(type="kubernetes.io/basic-auth", stringData={"username": "u"})).code == 201


def test_data_past_one_mebibyte_is_refused_and_a_bad_key_named(api):
    big = create(api, secret(stringData={"a": "x" * (1024 * 1024), "b": "y"}))
    assert (big.code, big.body.message) == (422, 'Secret "s" is invalid: data: Too long: must have at most '
                                                 '1048576 bytes')
    bad = create(api, secret(stringData={"a b": "x"}))
    assert bad.code == 422 and bad.body.message.startswith('Secret "s" is invalid: data[a b]: Invalid value: "a b": '
                                                           "a valid config key must consist of alphanumeric")


def test_an_immutable_secrets_data_and_type_never_change_but_its_labels_do(api):
    assert create(api, secret(stringData={"p": "q"}, immutable=True)).code == 201
    patch = api.handle(req("patch", "secrets", "default", "s", body={"stringData": {"p": "z"}}), now=2_000)
    assert (patch.code, patch.body.message) == (422, 'Secret "s" is invalid: data: Forbidden: field is immutable '
                                                     'when `immutable` is set')
    kind = api.handle(req("patch", "secrets", "default", "s", body={"type": "Other"}), now=2_000)
    assert kind.body.message == 'Secret "s" is invalid: type: Invalid value: "Other": field is immutable'
    labels = api.handle(req("patch", "secrets", "default", "s", body={"metadata": {"labels": {"a": "b"}}}), now=2_000)
    assert labels.code == 200


def test_a_service_account_is_named_as_a_dns_subdomain(api):
    bad = api.handle(req("create", "serviceaccounts", "default", body={
        "apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "Robot"}}), now=1_000)
    assert bad.code == 422 and bad.body.message.startswith('ServiceAccount "Robot" is invalid: metadata.name: ')


def _bind(api, role: str) -> None:
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": f"alice-{role}"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
               "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}]}
    assert api.handle(req("create", "rolebindings", "default", body=binding), now=1_000).code == 201


def test_view_cannot_read_secrets_edit_and_admin_can(api):
    assert create(api, secret(stringData={"p": "q"})).code == 201
    _bind(api, "view")
    as_alice = req("get", "secrets", "default", "s", token="alice-token")
    refused = api.handle(as_alice, now=2_000)
    assert (refused.code, refused.body.message) == (403, 'secrets "s" is forbidden: User "alice" cannot get resource '
                                                         '"secrets" in API group "" in the namespace "default"')
    assert api.handle(req("get", "configmaps", "default", "none", token="alice-token"), now=2_000).code == 404
    for role in ("edit", "admin"):
        api.handle(req("delete", "rolebindings", "default", f"alice-{'view' if role == 'edit' else 'edit'}"),
                   now=2_000)
        _bind(api, role)
        assert api.handle(req("get", "secrets", "default", "s", token="alice-token"), now=3_000).code == 200
    roles = req("create", "roles", "default", token="alice-token", body={
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "r"}, "rules": []})
    assert api.handle(roles, now=4_000).code == 201  # admin manages roles
