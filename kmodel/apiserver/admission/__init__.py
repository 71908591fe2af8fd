"""Admission: the plugins that change (mutating) or refuse (validating) a request after authorization.

Theory of operation
-------------------
Each plugin is a function of an `AdmissionAttributes` (upstream's admission.Attributes: operation, resource,
subresource, namespace, name, the new object, the old object, the user, logical now). A mutating plugin
returns the object to go on with; any plugin refuses by raising `APIError`.

The chains run in kube-apiserver's plugin order (pkg/kubeapiserver/options/plugins.go), which places
NamespaceLifecycle and NodeRestriction among the *mutating* plugins (both implement Admit): they refuse
before schema validation, as upstream. PodSecurity is validating and runs after it.

    mutating:   NamespaceLifecycle, NodeRestriction, DefaultTolerationSeconds
    (registry:  metadata defaults (BeforeCreate), ClusterIP allocation, schema validation)
    validating: PodSecurity
"""

from __future__ import annotations

from typing import Any, Callable

from kmodel.apiserver.authentication import UserInfo
from kmodel.apiserver.resources import Resource
from kmodel.store import Store

CREATE, UPDATE, DELETE, CONNECT = "CREATE", "UPDATE", "DELETE", "CONNECT"


class AdmissionAttributes:
    """admission.Attributes. `obj` may be replaced by mutating plugins."""

    __slots__ = ("operation", "resource", "subresource", "namespace", "name", "obj", "old", "user", "now",
                 "store")

    def __init__(self, operation: str, resource: Resource, subresource: str, namespace: str, name: str,
                 obj: Any, old: Any, user: UserInfo, now: int, store: Store) -> None:
        self.operation = operation
        self.resource = resource
        self.subresource = subresource
        self.namespace = namespace
        self.name = name
        self.obj = obj
        self.old = old
        self.user = user
        self.now = now
        self.store = store


Plugin = Callable[[AdmissionAttributes], Any]


def run_mutating(a: AdmissionAttributes) -> Any:
    """Run the mutating chain; returns the (possibly new) object."""
    namespace_lifecycle, node_restriction, tolerations, _ = _PLUGINS or _plugins()
    namespace_lifecycle(a)
    node_restriction(a)
    a.obj = tolerations(a)
    return a.obj


def run_validating(a: AdmissionAttributes) -> None:
    (_PLUGINS or _plugins())[3](a)


_PLUGINS: tuple = ()  # the plugins' entry points, in chain order (see _plugins)


def _plugins() -> tuple:
    """The plugins' entry points (their modules are imported on first use: they import this module's names;
    a function-level import on every request costs more than the plugins that do nothing)."""
    global _PLUGINS
    if not _PLUGINS:
        from kmodel.apiserver.admission import namespace_lifecycle, node_restriction, pod_security, tolerations

        _PLUGINS = (namespace_lifecycle.admit, node_restriction.admit, tolerations.admit, pod_security.validate)
    return _PLUGINS
