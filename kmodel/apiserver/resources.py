"""The resource table: what kube-apiserver serves, and where each resource lives in etcd.

One `Resource` per plural resource name: its kind and class (from kmodel/objects' registry), group and
apiVersion, scope, subresources, whether an update without resourceVersion is allowed, and its etcd key
prefix. The prefixes are kube-apiserver's defaults (pkg/kubeapiserver/default_storage_factory_builder.go and
each registry's `NewREST` prefix): pods under /registry/pods/, nodes under /registry/minions/, services
under /registry/services/specs/, endpoints under /registry/services/endpoints/, configmaps under
/registry/configmaps/, leases under /registry/leases/, endpointslices under /registry/endpointslices/, deployments, replicasets and statefulsets under
/registry/deployments/, /registry/replicasets/ and /registry/statefulsets/, RBAC under /registry/{roles,rolebindings,clusterroles,clusterrolebindings}/, secrets, serviceaccounts and jobs
under /registry/secrets/, /registry/serviceaccounts/ and /registry/jobs/.

Keys: namespaced `<prefix>/<namespace>/<name>`, cluster-scoped `<prefix>/<name>`. `list_prefix(resource,
namespace)` is the prefix a list or watch ranges over (every namespace when namespace is "").

`bindings` is a create-only virtual resource (POST pods/<name>/binding, or POST bindings with the pod's
name): nothing is stored under it; so are `selfsubjectaccessreviews` (the answer says whether the requester may
do what it asks) and `selfsubjectreviews` (the answer says who the requester is). TokenRequest is served only as
serviceaccounts/<name>/token.

One storage, two group versions: kube-apiserver serves the Events of /registry/events as core/v1 `events` and as
events.k8s.io/v1 `events` (pkg/registry/events/rest). `RESOURCES` is the storage table, keyed by plural;
`GROUP_VERSIONS` holds the other group versions of a stored resource, keyed by their group-qualified name
(`events.events.k8s.io`, which is what a `Request` names them by): the same prefix and class, its own group (so
RBAC and discovery see it apart) and a `wire` conversion of its JSON (kmodel.objects.events_v1).
`resource(name)` finds either; `served(group, plural)` finds what a URL names.
"""

from __future__ import annotations

from typing import Any, Optional

import attrs

from kmodel.objects import apiextensions, apps, authentication, authorization, batch, coordination, core, discovery, events_v1, rbac, scheduling, secrets  # noqa: F401  (registers the kinds)
from kmodel.objects.registry import KINDS, KindInfo


@attrs.frozen
class Resource:
    name: str  # plural, e.g. "pods"
    kind: str  # "Pod"
    group: str  # "" for core, "apps", ...
    api_version: str  # "v1", "apps/v1"
    namespaced: bool
    cls: type
    prefix: str  # etcd key prefix without the trailing slash, e.g. "/registry/pods"
    subresources: tuple = ()
    allow_unconditional_update: bool = True
    has_status: bool = False  # main-resource updates keep the stored status (a status subresource exists)
    #: a custom resource: the CustomResourceDefinition that declares it (kmodel/apiserver/customresources.py)
    crd: Any = None
    #: another group version of a stored resource: its JSON conversion to and from the stored kind's
    #: (`to_core(doc)`, `from_core(doc)`, `core_field_selector(selector)`; kmodel.objects.events_v1)
    wire: Any = None

    @property
    def key(self) -> str:
        """What a `Request` names the resource by: its plural, or for another group version of a stored resource
        its group-qualified name."""
        return self.group_resource if self.wire is not None else self.name

    @property
    def group_kind(self) -> str:
        """schema.GroupKind.String(): "Pod", "Deployment.apps"."""
        return f"{self.kind}.{self.group}" if self.group else self.kind

    @property
    def group_resource(self) -> str:
        """schema.GroupResource.String(): "pods", "deployments.apps"."""
        return f"{self.name}.{self.group}" if self.group else self.name


# resource -> (etcd prefix, subresources); kinds come from kmodel/objects
_LAYOUT: dict[str, tuple[str, tuple[str, ...]]] = {
    "namespaces": ("/registry/namespaces", ("status", "finalize")),
    "nodes": ("/registry/minions", ("status",)),
    "pods": ("/registry/pods", ("status", "binding")),
    "services": ("/registry/services/specs", ("status",)),
    "endpoints": ("/registry/services/endpoints", ()),
    "events": ("/registry/events", ()),
    "configmaps": ("/registry/configmaps", ()),
    "bindings": ("", ()),
    "deployments": ("/registry/deployments", ("status", "scale")),
    "replicasets": ("/registry/replicasets", ("status", "scale")),
    "statefulsets": ("/registry/statefulsets", ("status", "scale")),
    "leases": ("/registry/leases", ()),
    "endpointslices": ("/registry/endpointslices", ()),
    "roles": ("/registry/roles", ()),
    "clusterroles": ("/registry/clusterroles", ()),
    "rolebindings": ("/registry/rolebindings", ()),
    "clusterrolebindings": ("/registry/clusterrolebindings", ()),
    "customresourcedefinitions": ("/registry/apiextensions.k8s.io/customresourcedefinitions", ("status",)),
    "secrets": ("/registry/secrets", ()),
    "serviceaccounts": ("/registry/serviceaccounts", ("token",)),
    "jobs": ("/registry/jobs", ("status",)),
    "selfsubjectaccessreviews": ("", ()),
    "selfsubjectreviews": ("", ()),
}
#: kinds registered only so that their bodies decode, served as a subresource of another resource
#: (TokenRequest: POST serviceaccounts/<name>/token), never as a resource of their own
_SUBRESOURCE_KINDS = frozenset({"tokenrequests"})


def _build() -> dict[str, Resource]:
    by_resource: dict[str, KindInfo] = {info.resource: info for info in KINDS.values()}
    table: dict[str, Resource] = {}
    for name in sorted(by_resource.keys() - _SUBRESOURCE_KINDS):
        info = by_resource[name]
        prefix, subs = _LAYOUT.get(name, (f"/registry/{name}", ()))
        table[name] = Resource(
            name=name, kind=info.kind, group=info.group, api_version=info.api_version,
            namespaced=info.namespaced, cls=info.cls, prefix=prefix, subresources=subs,
            has_status="status" in subs,
        )
    return table


RESOURCES: dict[str, Resource] = _build()
_BY_CLASS: dict[type, Resource] = {r.cls: r for r in RESOURCES.values()}


def _group_version(stored: str, group: str, version: str, wire: Any) -> Resource:
    base = RESOURCES[stored]
    return attrs.evolve(base, group=group, api_version=f"{group}/{version}", wire=wire)


#: the other group versions of stored resources, by group-qualified name (see the module docstring)
GROUP_VERSIONS: dict[str, Resource] = {
    res.key: res for res in (_group_version("events", "events.k8s.io", "v1", events_v1),)
}
#: every built-in resource the server serves, by the name a Request gives
SERVED: dict[str, Resource] = {**RESOURCES, **GROUP_VERSIONS}
_BY_URL: dict[tuple[str, str], Resource] = {(r.group, r.name): r for r in SERVED.values()}


def resource(name: str) -> Optional[Resource]:
    """The resource a Request names `name` (a plural, or a group-qualified name of GROUP_VERSIONS), or None when
    the server does not serve it."""
    return RESOURCES.get(name) or GROUP_VERSIONS.get(name)


def served(group: str, plural: str) -> Optional[Resource]:
    """The built-in resource `plural` of API group `group` ("" for core), or None."""
    return _BY_URL.get((group, plural))


def storage_name(name: str) -> str:
    """The plural of the stored resource a Request's resource name reads (the watch cache is keyed by it)."""
    res = GROUP_VERSIONS.get(name)
    return res.name if res is not None else name


def resource_of(obj: object) -> Resource:
    """The resource an object belongs to."""
    return _BY_CLASS[type(obj)]


def object_key(res: Resource, namespace: str, name: str) -> str:
    """The etcd key of one object."""
    if res.namespaced:
        return f"{res.prefix}/{namespace}/{name}"
    return f"{res.prefix}/{name}"


def list_prefix(res: Resource, namespace: str = "") -> str:
    """The key prefix (with trailing slash) a list or watch of `res` in `namespace` ranges over."""
    if res.namespaced and namespace:
        return f"{res.prefix}/{namespace}/"
    return f"{res.prefix}/"


def key_prefix(name: str, namespace: str = "") -> str:
    """list_prefix by resource name, for the watch cache and tests."""
    return list_prefix(RESOURCES[name], namespace)
