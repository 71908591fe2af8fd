"""Admission: the plugins that change (mutating) or refuse (validating) a request after authorization.

Theory of operation
-------------------
Each plugin is a function of an `AdmissionAttributes` (upstream's admission.Attributes: operation, resource,
subresource, namespace, name, the new object, the old object, the user, logical now). A mutating plugin
returns the object to go on with; any plugin refuses by raising `APIError`.

The chains run in kube-apiserver's plugin order (pkg/kubeapiserver/options/plugins.go), which places
NamespaceLifecycle and NodeRestriction among the *mutating* plugins (both implement Admit): they refuse
before schema validation, as upstream. PodSecurity is validating and runs after it.

    mutating:   NamespaceLifecycle, NodeRestriction, Priority, DefaultTolerationSeconds
    (registry:  metadata defaults (BeforeCreate), ClusterIP allocation, schema validation)
    validating: PodSecurity, Priority (PriorityClasses)
"""

from __future__ import annotations

from typing import Any

from kmodel.apiserver.admission import namespace_lifecycle, node_restriction, pod_security, priority, tolerations
from kmodel.apiserver.admission.attributes import CONNECT, CREATE, DELETE, UPDATE, AdmissionAttributes, Plugin

__all__ = ["CONNECT", "CREATE", "DELETE", "UPDATE", "AdmissionAttributes", "Plugin", "run_mutating", "run_validating"]


def run_mutating(a: AdmissionAttributes) -> Any:
    """Run the mutating chain; returns the (possibly new) object."""
    namespace_lifecycle.admit(a)
    node_restriction.admit(a)
    a.obj = priority.admit(a)
    a.obj = tolerations.admit(a)
    return a.obj


def run_validating(a: AdmissionAttributes) -> None:
    pod_security.validate(a)
    priority.validate(a)
