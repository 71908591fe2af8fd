"""NamespaceLifecycle (k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle).

* create in a namespace that does not exist → 404 `namespaces "x" not found`;
* create in a namespace being deleted (deletionTimestamp set or phase Terminating) → 403
  `<resource> "<name>" is forbidden: unable to create new content in namespace x because it is being
  terminated`;
* deleting one of the immortal namespaces (default, kube-system, kube-public) → 403
  `namespaces "default" is forbidden: this namespace may not be deleted`.

Other operations pass (upstream lets updates and deletes through, so content can be cleaned up).
The namespace is read from the store's current state (upstream: its informer, then a live lookup).
"""

from __future__ import annotations

from kmodel.apiserver import errors
from kmodel.apiserver.admission.attributes import CREATE, DELETE, AdmissionAttributes
from kmodel.apiserver.storeview import current_value

IMMORTAL_NAMESPACES = ("default", "kube-system", "kube-public")


def admit(a: AdmissionAttributes) -> None:
    res = a.resource
    if res.name == "namespaces":
        if a.operation == DELETE and a.name in IMMORTAL_NAMESPACES and not a.subresource:
            raise errors.forbidden("", "namespaces", a.name, "this namespace may not be deleted")
        return
    if a.operation != CREATE or not res.namespaced:
        return
    ns = current_value(a.store, "/registry/namespaces/" + a.namespace)
    if ns is None:
        raise errors.not_found("", "namespaces", a.namespace)
    if ns.metadata.deletion_timestamp is not None or ns.status.phase == "Terminating":
        raise errors.forbidden(
            res.group, res.name, a.name,
            f"unable to create new content in namespace {a.namespace} because it is being terminated")
