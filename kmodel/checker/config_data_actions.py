"""The config-data action: kubectl apply (or delete) of a ConfigMap or a Secret, in one of the shapes users write.

Theory of operation
-------------------
`ApplyConfigData` names the resource, the object (two names per kind, so that applies meet what an earlier one
stored) and a shape, a row of `CONFIGMAP_SHAPES` or `SECRET_SHAPES`, listed plain first. Each row is a
manifest kubectl sends as it is written (the model's apply: a create, or a merge patch of the manifest onto
what is stored), or `delete` (kubectl delete, so that an immutable object can be replaced). The rows reach the
API server's checks of such data (release 1.31's ValidateConfigMap, ValidateSecret and their updates):

* ConfigMaps: data and binaryData, a key that is not a valid key (`a/b`, `..`, a leading `..`), the same key
  in both maps (422), `immutable: true` and then any change of the data or of the flag (422: `field is
  immutable when immutable is set`);
* Secrets: data (base64) and stringData (merged into data), each type's required keys present or missing:
  `kubernetes.io/basic-auth` (a username or a password), `kubernetes.io/tls` (tls.crt and tls.key),
  `kubernetes.io/dockerconfigjson` (.dockerconfigjson, valid JSON), `kubernetes.io/service-account-token`
  (the service-account annotation), a type change of a stored Secret (422: the type is immutable), and
  `immutable: true`.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Callable, ClassVar

import attrs

from kmodel.checker.access_actions import one_of
from kmodel.checker.actions import Action
from kmodel.checker.simpler import Simplest, default
from kmodel.cluster import Cluster, Delete
from kmodel.cluster.kubectl import Apply

DELETE = "delete"
#: the objects applied, per resource, in the default namespace
CONFIG_NAMES: dict[str, tuple[str, ...]] = {"configmaps": ("settings", "flags"), "secrets": ("creds", "certs")}


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _configmap(**fields: Any) -> Callable[[str], dict]:
    return lambda name: {"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": name, "namespace": "default"}, **fields}


def _secret(secret_type: str = "", **fields: Any) -> Callable[[str], dict]:
    typed = {"type": secret_type} if secret_type else {}
    return lambda name: {"apiVersion": "v1", "kind": "Secret",
                         "metadata": {"name": name, "namespace": "default"}, **typed, **fields}


#: ConfigMap rows, plain first: what each sends is in its name
CONFIGMAP_SHAPES: dict[str, Any] = {
    "plain": _configmap(data={"mode": "a"}),
    "changed": _configmap(data={"mode": "b"}),
    "binary": _configmap(binaryData={"blob": _b64("\x00\x01")}),
    "immutable": _configmap(data={"mode": "a"}, immutable=True),
    "mutable-again": _configmap(data={"mode": "a"}, immutable=False),
    "key-with-slash": _configmap(data={"a/b": "x"}),
    "dot-dot-key": _configmap(data={"..": "x"}),
    "hidden-dot-dot-key": _configmap(data={"..cfg": "x"}),
    "key-in-both-maps": _configmap(data={"mode": "a"}, binaryData={"mode": _b64("a")}),
    DELETE: DELETE,
}

#: Secret rows, plain first
SECRET_SHAPES: dict[str, Any] = {
    "plain": _secret(data={"password": _b64("hunter2")}),
    "string-data": _secret(stringData={"password": "hunter3"}),
    "basic-auth": _secret("kubernetes.io/basic-auth", stringData={"username": "admin"}),
    "basic-auth-empty": _secret("kubernetes.io/basic-auth", data={"token": _b64("x")}),
    "tls": _secret("kubernetes.io/tls", data={"tls.crt": _b64("crt"), "tls.key": _b64("key")}),
    "tls-without-key": _secret("kubernetes.io/tls", data={"tls.crt": _b64("crt")}),
    "dockerconfigjson": _secret("kubernetes.io/dockerconfigjson",
                                data={".dockerconfigjson": _b64(json.dumps({"auths": {}}))}),
    "dockerconfigjson-not-json": _secret("kubernetes.io/dockerconfigjson", data={".dockerconfigjson": _b64("{")}),
    "dockerconfigjson-without-key": _secret("kubernetes.io/dockerconfigjson", data={"config": _b64("{}")}),
    "service-account-token-unannotated": _secret("kubernetes.io/service-account-token"),
    "immutable": _secret(data={"password": _b64("hunter2")}, immutable=True),
    "bad-key": _secret(data={"a/b": _b64("x")}),
    DELETE: DELETE,
}
SHAPES: dict[str, tuple[str, ...]] = {"configmaps": tuple(CONFIGMAP_SHAPES), "secrets": tuple(SECRET_SHAPES)}
_ROWS = {"configmaps": CONFIGMAP_SHAPES, "secrets": SECRET_SHAPES}


@attrs.frozen
class ApplyConfigData(Action):
    """kubectl apply of `object` (a ConfigMap or a Secret of the default namespace) in the shape `shape`, or
    kubectl delete of it when the shape is `delete`."""

    kind: ClassVar[str] = "apply-config-data"
    #: a shape simplifies to the plain one, the first of both tables (an earlier row may be another kind's)
    simplest: ClassVar[Simplest] = (("shape", default("plain")),)
    resource: str = attrs.field(validator=one_of(tuple(CONFIG_NAMES)))
    object: str = attrs.field()
    shape: str = attrs.field(default="plain")

    @object.validator
    def _named(self, attribute: Any, value: str) -> None:
        one_of(CONFIG_NAMES.get(self.resource, ()))(self, attribute, value)

    @shape.validator
    def _shaped(self, attribute: Any, value: str) -> None:
        one_of(SHAPES.get(self.resource, ()))(self, attribute, value)

    @property
    def name(self) -> str:
        kind = "configmap" if self.resource == "configmaps" else "secret"
        if self.shape == DELETE:
            return f"kubectl delete {kind} {self.object}"
        return f"kubectl apply {kind} {self.object} ({self.shape})"

    def apply(self, cluster: Cluster) -> None:
        row = _ROWS[self.resource][self.shape]
        if row == DELETE:
            cluster.submit(Delete(self.resource, "default", self.object))
        else:
            cluster.submit(Apply(row(self.object)))
