"""POST serviceaccounts/<name>/token: a bound token the authenticator then accepts as the service account, until
it expires or the service account is gone; issued from the replica's seeded random source."""

from __future__ import annotations

import base64
import json

from kmodel.apiserver.authentication import AUTHENTICATED
from kmodel.apiserver.bootstrap_policy import bootstrap_policy
from kmodel.component.registry import builtin_controller_roles
from kmodel.apiserver.pipeline import Pipeline
from kmodel.objects import Namespace, ObjectMeta
from kmodel.store import Store

from .conftest import install, req

SA = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}}
REQUEST = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}


def token_for(api, now: int = 2_000, body: dict = REQUEST, name: str = "robot"):
    return api.handle(req("create", "serviceaccounts", "default", name, subresource="token", body=body), now=now)


def who(api, token: str, now: int) -> tuple[int, str]:
    answer = api.handle(req("list", "pods", "default", token=token), now=now)
    return answer.code, getattr(answer.body, "message", "")


def test_a_token_request_answers_a_jwt_with_upstreams_claims_and_an_expiry(api):
    assert api.handle(req("create", "serviceaccounts", "default", body=SA), now=1_000).code == 201
    answer = token_for(api)
    assert answer.code == 201
    status = answer.body.status
    assert status.expiration_timestamp == 2_000 + 3_600_000
    assert answer.body.spec.audiences == ("https://kubernetes.default.svc.cluster.local",)
    claims = json.loads(base64.urlsafe_b64decode(status.token.split(".")[1] + "=="))
    assert claims["sub"] == "system:serviceaccount:default:robot"
    assert claims["kubernetes.io"]["serviceaccount"]["name"] == "robot"
    assert claims["exp"] - claims["iat"] == 3_600


def test_the_token_authenticates_as_the_service_account_until_it_expires(api):
    api.handle(req("create", "serviceaccounts", "default", body=SA), now=1_000)
    token = token_for(api).body.status.token
    user = api.authenticator.authenticate(token)
    assert user.name == "system:serviceaccount:default:robot"
    assert user.groups == ("system:serviceaccounts", "system:serviceaccounts:default", AUTHENTICATED)
    assert who(api, token, 10_000) == (403, 'pods is forbidden: User "system:serviceaccount:default:robot" cannot '
                                            'list resource "pods" in API group "" in the namespace "default"')
    assert who(api, token, 2_000 + 3_600_000) == (401, "Unauthorized")
    assert who(api, token[:-2] + "xx", 10_000) == (401, "Unauthorized")


def test_a_token_dies_with_its_service_account_even_if_one_is_made_again_under_its_name(api):
    api.handle(req("create", "serviceaccounts", "default", body=SA), now=1_000)
    token = token_for(api).body.status.token
    api.handle(req("delete", "serviceaccounts", "default", "robot"), now=3_000)
    assert who(api, token, 4_000) == (401, "Unauthorized")
    api.handle(req("create", "serviceaccounts", "default", body=SA), now=5_000)
    assert who(api, token, 6_000) == (401, "Unauthorized")


def test_another_replica_of_the_same_cluster_accepts_the_token_and_a_replay_issues_the_same(store):
    first, second = Pipeline(store), Pipeline(store)
    first.handle(req("create", "serviceaccounts", "default", body=SA), now=1_000)
    token = token_for(first).body.status.token
    assert who(second, token, 3_000)[0] == 403  # authenticated (then refused by RBAC), not 401
    assert token_for(first, now=2_000).body.status.token != token  # a new jti each time


def test_refusals_a_short_expiry_a_missing_account_and_a_bound_object(api):
    short = token_for(api, body={**REQUEST, "spec": {"expirationSeconds": 60}}, name="robot")
    assert short.code == 404  # the service account is looked up before the request is validated
    api.handle(req("create", "serviceaccounts", "default", body=SA), now=1_000)
    short = token_for(api, body={**REQUEST, "spec": {"expirationSeconds": 60}})
    assert (short.code, short.body.message) == (422, 'TokenRequest.authentication.k8s.io "" is invalid: '
                                                     'spec.expirationSeconds: Invalid value: 60: may not specify a '
                                                     'duration less than 10 minutes')
    assert token_for(api, name="nobody").body.message == 'serviceaccounts "nobody" not found'
    bound = token_for(api, body={**REQUEST, "spec": {"boundObjectRef": {"kind": "Pod", "name": "p"}}})
    assert bound.code == 400
    other = token_for(api, body={**REQUEST, "metadata": {"name": "other"}})
    assert other.body.message == ('TokenRequest.authentication.k8s.io "robot" is invalid: metadata.name: Invalid '
                                  'value: "other": must match the service account name if specified')


def test_two_runs_from_one_seed_issue_the_same_token():
    tokens = []
    for _ in range(2):
        store = Store()
        for obj in [*bootstrap_policy(builtin_controller_roles()), Namespace(metadata=ObjectMeta(name="default"))]:
            install(store, obj)
        api = Pipeline(store)
        api.handle(req("create", "serviceaccounts", "default", body=SA), now=1_000)
        tokens.append(token_for(api).body.status.token)
    assert tokens[0] == tokens[1]
