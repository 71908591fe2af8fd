"""Static pods (pkg/kubelet/config/common.go, file.go) and their mirror pods (pkg/kubelet/pod/mirror_client.go).

Theory of operation
-------------------
A static pod comes from the kubelet's manifest folder, not from the API: the kubelet runs it from start,
whether or not an API server answers. Reading a manifest (applyDefaults) the kubelet names it
`<name>-<node>`, puts it in namespace "default" when it has none, binds it to itself (spec.nodeName), gives
it a uid that is the hash of the manifest and the host (so the same manifest gets the same uid after a
kubelet restart, which is how running containers are found again), records the hash in the annotations
kubernetes.io/config.hash and config.source=file, and adds a toleration of every NoExecute taint (taint
eviction must not chase it).

So that the rest of the cluster sees it, the kubelet keeps a *mirror pod* in the API: the same pod with the
annotation kubernetes.io/config.mirror = the hash and an ownerReference (controller) to its Node. The mirror
pod is created once an API server answers and the Node is known, recreated when deleted, and replaced
(deleted with grace 0, then created again) when it is being deleted or no longer matches the hash. Status
updates for the static pod go to its mirror pod. A mirror pod is never run: the API pods the kubelet runs
are the ones without the mirror annotation.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Optional

from kmodel.objects import Pod, dump, frozen_map, with_defaults
from kmodel.objects.core import Toleration
from kmodel.objects.meta import OwnerReference
from kmodel.objects.fastevolve import evolve

CONFIG_HASH_ANNOTATION = "kubernetes.io/config.hash"
CONFIG_SOURCE_ANNOTATION = "kubernetes.io/config.source"
CONFIG_MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
FILE_SOURCE = "file"


def _hash(pod: Any, node: str) -> str:
    """md5 over the manifest and "host:<node>" (DeepHashObject + the host, as applyDefaults)."""
    h = hashlib.md5()
    h.update(json.dumps(dump(pod), sort_keys=True, separators=(",", ":")).encode())
    h.update(f"host:{node}".encode())
    return h.hexdigest()


def static_pod(manifest: Pod, node: str) -> Pod:
    """The pod the kubelet runs for one manifest (see the module docstring)."""
    uid = _hash(manifest, node)
    meta = manifest.metadata
    annotations = dict(meta.annotations)
    annotations[CONFIG_HASH_ANNOTATION] = uid
    annotations[CONFIG_SOURCE_ANNOTATION] = FILE_SOURCE
    spec = manifest.spec
    tolerations = tuple(spec.tolerations) + (Toleration(operator="Exists", effect="NoExecute"),)
    pod = evolve(
        manifest,
        metadata=evolve(meta, name=f"{meta.name}-{node}".lower(), namespace=meta.namespace or "default",
                              uid=uid, annotations=frozen_map(annotations)),
        spec=evolve(spec, node_name=node, tolerations=tolerations),
    )
    return with_defaults(pod)


def is_static_pod(pod: Pod) -> bool:
    return pod.metadata.annotations.get(CONFIG_SOURCE_ANNOTATION, "api") != "api" and \
        CONFIG_MIRROR_ANNOTATION not in pod.metadata.annotations


def is_mirror_pod(pod: Pod) -> bool:
    return CONFIG_MIRROR_ANNOTATION in pod.metadata.annotations


def mirror_pod(static: Pod, node: str, node_uid: str) -> Pod:
    """CreateMirrorPod: the static pod with the mirror annotation and its Node as controller owner."""
    meta = static.metadata
    annotations = dict(meta.annotations)
    annotations[CONFIG_MIRROR_ANNOTATION] = meta.annotations[CONFIG_HASH_ANNOTATION]
    owner = OwnerReference(api_version="v1", kind="Node", name=node, uid=node_uid, controller=True)
    return evolve(static, metadata=evolve(
        meta, uid="", resource_version="", annotations=frozen_map(annotations), owner_references=(owner,)))


def is_mirror_of(mirror: Optional[Pod], static: Pod) -> bool:
    """IsMirrorPodOf: same full name and the mirror annotation equal to the static pod's hash."""
    if mirror is None:
        return False
    return (mirror.metadata.name == static.metadata.name and mirror.metadata.namespace == static.metadata.namespace
            and mirror.metadata.annotations.get(CONFIG_MIRROR_ANNOTATION)
            == static.metadata.annotations.get(CONFIG_HASH_ANNOTATION))
