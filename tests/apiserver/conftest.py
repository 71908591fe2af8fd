"""Fixtures: a store with the bootstrap policy, namespaces and the shared manifests installed."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from kmodel.apiserver.bootstrap_policy import bootstrap_policy
from kmodel.component.registry import builtin_controller_roles
from kmodel.apiserver.pipeline import Pipeline
from kmodel.apiserver.resources import object_key, resource_of
from kmodel.apiserver.wire import Request
from kmodel.objects import Namespace, ObjectMeta, load_yaml
from kmodel.objects.scheduling import system_priority_classes
from kmodel.store import Store

MANIFESTS = Path(__file__).resolve().parents[2] / "examples"
_ids = itertools.count(1)


def manifest(name: str) -> list:
    return load_yaml((MANIFESTS / name).read_text())


def install(store: Store, obj) -> None:
    """Put an object straight into the store, as a cluster's boot does."""
    res = resource_of(obj)
    store.put(object_key(res, obj.metadata.namespace, obj.metadata.name), obj)


def req(verb: str, resource: str, namespace: str = "", name: str = "", *, token: str = "admin-token", **kw) -> Request:
    return Request(next(_ids), verb, resource, namespace, name, token=token, **kw)


@pytest.fixture
def store() -> Store:
    s = Store()
    for obj in (*bootstrap_policy(builtin_controller_roles()), *system_priority_classes()):
        install(s, obj)
    for ns in ("default", "kube-system", "kube-node-lease", "shop"):
        install(s, Namespace(metadata=ObjectMeta(name=ns)))
    return s


@pytest.fixture
def api(store: Store) -> Pipeline:
    return Pipeline(store)
