"""The message classes of upstream's generated.proto definitions, looked up by apiVersion and kind.

They are built on first use from `descriptors.binpb` (benchmarks/regenerate_protobuf.py makes it with protoc
from the vendored .proto files in proto/) in a descriptor pool of the server's own, so that no other protobuf
user's registrations of the same names can clash with them.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Optional

from google.protobuf import descriptor_pb2, descriptor_pool, message, message_factory

DESCRIPTORS = Path(__file__).with_name("descriptors.binpb")
META = "k8s.io.apimachinery.pkg.apis.meta.v1"
#: API group -> the proto package prefix of its generated.proto (k8s.io/api/<dir>/<version>)
GROUP_PACKAGES = {
    "": "k8s.io.api.core",
    "apps": "k8s.io.api.apps",
    "batch": "k8s.io.api.batch",
    "coordination.k8s.io": "k8s.io.api.coordination",
    "rbac.authorization.k8s.io": "k8s.io.api.rbac",
    "authorization.k8s.io": "k8s.io.api.authorization",
    "policy": "k8s.io.api.policy",
    "discovery.k8s.io": "k8s.io.api.discovery",
    "authentication.k8s.io": "k8s.io.api.authentication",
    "events.k8s.io": "k8s.io.api.events",
    "scheduling.k8s.io": "k8s.io.api.scheduling",
}
#: the options kinds every group version registers (metav1.AddToGroupVersion), decoded as meta/v1's
OPTIONS_KINDS = ("DeleteOptions", "CreateOptions", "UpdateOptions", "PatchOptions")


@functools.lru_cache(maxsize=1)
def pool() -> descriptor_pool.DescriptorPool:
    files = descriptor_pb2.FileDescriptorSet.FromString(DESCRIPTORS.read_bytes())
    built = descriptor_pool.DescriptorPool()
    for f in files.file:
        built.Add(f)
    return built


@functools.lru_cache(maxsize=None)
def message_class(full_name: str) -> type[message.Message]:
    """The class of the message called `full_name` (KeyError when there is none)."""
    return message_factory.GetMessageClass(pool().FindMessageTypeByName(full_name))


def full_name(api_version: str, kind: str) -> Optional[str]:
    """The proto message name of `kind` in `api_version` ("apps/v1", "Deployment" ->
    "k8s.io.api.apps.v1.Deployment"), or None when no vendored generated.proto defines it."""
    group, _, version = api_version.rpartition("/")
    if kind in OPTIONS_KINDS:
        return f"{META}.{kind}"
    package = GROUP_PACKAGES.get(group)
    if package is None or not version or not kind.isidentifier():
        return None
    name = f"{package}.{version}.{kind}"
    try:
        pool().FindMessageTypeByName(name)
    except KeyError:
        return None
    return name
