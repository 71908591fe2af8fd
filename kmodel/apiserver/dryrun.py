"""dryRun=All: a write that runs every stage (admission, defaulting, validation) and answers as if written, with
nothing stored (k8s.io/apiserver/pkg/registry/generic/registry/dryrun.go, DryRunnableStorage).

`DryRunRegistry` stands in for the registry's writes: a create still answers 409 AlreadyExists for a taken name
and returns the object without a resourceVersion (the store never gave it one); an update returns the new object
at the stored version's resourceVersion; a delete removes nothing. No revision is consumed, nothing reaches the
watch. Reads go to the store.
"""

from __future__ import annotations

from typing import Any, Optional

import attrs

from kmodel.apiserver import errors
from kmodel.apiserver.registry import Registry
from kmodel.apiserver.resources import Resource
from kmodel.store import KeyValue


class DryRunRegistry:
    """The registry's reads, and its writes answered without being made."""

    def __init__(self, registry: Registry) -> None:
        self._registry = registry
        self.store = registry.store

    def read(self, res: Resource, namespace: str, name: str) -> Optional[KeyValue]:
        return self._registry.read(res, namespace, name)

    def next_revision(self) -> int:
        return self._registry.next_revision()

    def create(self, res: Resource, obj: Any) -> Any:
        meta = obj.metadata
        if self._registry.read(res, meta.namespace, meta.name) is not None:
            raise errors.already_exists(res.group, res.name, meta.name)
        return _at_version(obj, "")

    def replace(self, res: Resource, read: KeyValue, obj: Any) -> Any:
        return _at_version(obj, read.value.metadata.resource_version)

    def remove(self, read: KeyValue) -> None:
        return None


def _at_version(obj: Any, version: str) -> Any:
    if obj.metadata.resource_version == version:
        return obj
    return attrs.evolve(obj, metadata=attrs.evolve(obj.metadata, resource_version=version))
