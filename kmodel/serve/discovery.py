"""Discovery documents: what /api, /apis, /api/v1 and /apis/GROUP/VERSION answer, from the model's resource table
(kmodel.apiserver.resources), in the unaggregated form (APIVersions, APIGroupList, APIGroup, APIResourceList)
that kubectl and the client libraries read. The verbs listed are those the server serves for each resource;
short names and categories are upstream's for the kinds the model has, and those a CRD accepted for its own.
Custom resources are listed while their CRDs are Established (the caller reads them on the model's thread).
"""

from __future__ import annotations

from typing import Optional, Sequence

from kmodel.apiserver.resources import RESOURCES, SERVED, Resource
from kmodel.objects.logical_time import EPOCH_RFC3339

#: the Kubernetes release whose API this server speaks (GET /version)
SERVED_VERSION = {"major": "1", "minor": "32", "gitVersion": "v1.32.0-kmodel", "gitCommit": "", "gitTreeState": "",
                  "buildDate": EPOCH_RFC3339,  # the model's epoch: a build has no date of its own
                  "goVersion": "", "compiler": "kmodel", "platform": "model"}

SHORT_NAMES = {
    "pods": ["po"], "services": ["svc"], "nodes": ["no"], "namespaces": ["ns"], "endpoints": ["ep"],
    "configmaps": ["cm"], "events": ["ev"], "deployments": ["deploy"], "replicasets": ["rs"],
    "statefulsets": ["sts"], "customresourcedefinitions": ["crd", "crds"], "serviceaccounts": ["sa"],
    "priorityclasses": ["pc"],
}
#: `kubectl get all` lists the resources in category "all"
CATEGORY_ALL = ("pods", "services", "deployments", "replicasets", "statefulsets", "jobs")
#: the virtual resources a client can only create (nothing is stored)
CREATE_ONLY = ("bindings", "selfsubjectaccessreviews", "selfsubjectreviews")
ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


def group_versions(custom: Sequence[Resource] = ()) -> list[tuple[str, str]]:
    """(group, version) of every API group the model serves but the core one, sorted by group; `custom`: the
    custom resources served now (their CRDs' groups and storage versions)."""
    seen = {res.group: res.api_version.rpartition("/")[2] for res in [*SERVED.values(), *custom] if res.group}
    return sorted(seen.items())


def api_versions(server_address: str) -> dict:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]}


def api_group(group: str, version: str) -> dict:
    gv = {"groupVersion": f"{group}/{version}", "version": version}
    return {"name": group, "versions": [gv], "preferredVersion": gv}


def api_group_list(custom: Sequence[Resource] = ()) -> dict:
    return {"kind": "APIGroupList", "apiVersion": "v1",
            "groups": [api_group(g, v) for g, v in group_versions(custom)]}


def api_group_doc(group: str, custom: Sequence[Resource] = ()) -> Optional[dict]:
    for g, v in group_versions(custom):
        if g == group:
            return {"kind": "APIGroup", "apiVersion": "v1", **api_group(g, v)}
    return None


def _entry(res: Resource, name: str, verbs: list[str], kind: str = "", group: str = "", version: str = "") -> dict:
    out = {"name": name, "singularName": "" if "/" in name else res.kind.lower(), "namespaced": res.namespaced,
           "kind": kind or res.kind, "verbs": verbs}
    if group:
        out["group"], out["version"] = group, version
    if "/" not in name:
        if name in SHORT_NAMES:
            out["shortNames"] = SHORT_NAMES[name]
        if name in CATEGORY_ALL:
            out["categories"] = ["all"]
    return out


def _custom_entry(res: Resource) -> dict:
    names = res.crd.status.accepted_names
    out = {"name": res.name, "singularName": names.singular or res.kind.lower(), "namespaced": res.namespaced,
           "kind": res.kind, "verbs": ALL_VERBS}
    if names.short_names:
        out["shortNames"] = list(names.short_names)
    if names.categories:
        out["categories"] = list(names.categories)
    return out


def resource_list(api_version: str, custom: Sequence[Resource] = ()) -> Optional[dict]:
    """The APIResourceList of one group version, None when the model serves none of it."""
    entries: list[dict] = []
    table = {**SERVED, **{res.name: res for res in custom if res.name not in RESOURCES}}
    for key in sorted(table):
        res = table[key]
        if res.api_version != api_version:
            continue
        name = res.name
        if res.crd is not None:
            entries.append(_custom_entry(res))
            for sub in res.subresources:
                kind = "Scale" if sub == "scale" else res.kind
                entries.append(_entry(res, f"{name}/{sub}", ["get", "patch", "update"], kind,
                                      *(("autoscaling", "v1") if sub == "scale" else ())))
            continue
        if name in CREATE_ONLY:
            entries.append(_entry(res, name, ["create"]))
            continue
        entries.append(_entry(res, name, ALL_VERBS))
        for sub in res.subresources:
            if sub == "token":  # serviceaccounts/token answers an authentication.k8s.io/v1 TokenRequest
                entries.append(_entry(res, f"{name}/{sub}", ["create"], "TokenRequest", "authentication.k8s.io", "v1"))
                continue
            if sub == "scale":  # answers an autoscaling/v1 Scale
                entries.append(_entry(res, f"{name}/{sub}", ["get", "patch", "update"], "Scale", "autoscaling", "v1"))
                continue
            verbs = ["create"] if sub == "binding" else (["update"] if sub == "finalize" else ["get", "patch", "update"])
            kind = "Binding" if sub == "binding" else res.kind
            entries.append(_entry(res, f"{name}/{sub}", verbs, kind))
    if not entries:
        return None
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": api_version, "resources": entries}


# -- OpenAPI v3 (only what kubectl reads to choose server-side field validation) -------------------------------

def _gv_path(api_version: str) -> str:
    return f"api/{api_version}" if "/" not in api_version else f"apis/{api_version}"


def openapi_v3_root() -> dict:
    """/openapi/v3: the group versions, each pointing at its document."""
    versions = sorted({res.api_version for res in SERVED.values()})
    return {"paths": {_gv_path(v): {"serverRelativeURL": f"/openapi/v3/{_gv_path(v)}"} for v in versions}}


def openapi_v3_group_version(path: str) -> Optional[dict]:
    """/openapi/v3/api/v1, /openapi/v3/apis/GROUP/VERSION: one PATCH operation per resource, carrying its
    x-kubernetes-group-version-kind and the fieldValidation query parameter, which is what kubectl's
    QueryParamVerifierV3 looks for before it asks for server-side field validation. No schemas (an empty
    components.schemas): kubectl then computes apply's strategic merge patches from its own built-in types, as with
    a server without OpenAPI, and `kubectl explain` says in one line that the kind is not in the OpenAPI schema
    (without components at all it fails on a Go template error)."""
    paths = {}
    for key in sorted(SERVED):
        res = SERVED[key]
        name = res.name
        if _gv_path(res.api_version) != path or name in CREATE_ONLY:
            continue
        group, _, version = res.api_version.rpartition("/")
        scope = "/namespaces/{namespace}" if res.namespaced else ""
        paths[f"/{path}{scope}/{name}/{{name}}"] = {"patch": {
            "x-kubernetes-group-version-kind": {"group": group, "version": version, "kind": res.kind},
            "parameters": [{"name": "fieldValidation", "in": "query", "schema": {"type": "string"}}],
            "responses": {"200": {"description": "OK"}}}}
    if not paths:
        return None
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes (kmodel serve)", "version": "v1.32.0"},
            "paths": paths, "components": {"schemas": {}}}
