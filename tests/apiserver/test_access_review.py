"""POST selfsubjectaccessreviews (what kubectl auth can-i asks): allowed as authorization would decide the request
it describes, for any authenticated user (system:basic-user); nothing stored."""

from __future__ import annotations

from .conftest import req


def review(api, token: str, **attributes):
    body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": attributes}}
    return api.handle(req("create", "selfsubjectaccessreviews", body=body, token=token), now=1_000)


def test_the_answer_is_what_authorization_would_say(api):
    yes = review(api, "admin-token", verb="get", resource="secrets", namespace="default")
    assert yes.code == 201 and yes.body.status.allowed is True
    no = review(api, "alice-token", verb="get", resource="secrets", namespace="default")
    assert no.code == 201 and no.body.status.allowed is False and no.body.status.denied is False
    scheduler = review(api, "scheduler-token", verb="create", resource="pods", subresource="binding",
                       namespace="default")
    assert scheduler.body.status.allowed is True


def test_anonymous_may_not_ask_and_an_empty_spec_is_invalid(api):
    assert review(api, "", verb="get", resource="pods").code == 403
    empty = api.handle(req("create", "selfsubjectaccessreviews", token="alice-token", body={
        "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": {}}), now=1_000)
    assert empty.code == 422
