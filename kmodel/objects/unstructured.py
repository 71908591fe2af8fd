"""Custom objects: instances of a CustomResourceDefinition's kind, held unstructured.

A `CustomObject` is the model's unstructured.Unstructured: apiVersion and kind as written, `metadata` as the
model's typed ObjectMeta (so the store, watch cache, selectors, finalizers, ownerReferences, the garbage
collector and RBAC treat it as any other object), and `content`, every other top-level field (spec, status,
anything the schema keeps) as frozen JSON (FrozenDicts and tuples). `to_json()` is its JSON shape.
"""

from __future__ import annotations

from typing import Any, Optional

import attrs

from .frozendict import EMPTY_MAP, FrozenDict, freeze, thaw
from .meta import ObjectMeta


@attrs.frozen
class CustomObject:
    api_version: str = ""
    kind: str = ""
    metadata: ObjectMeta = ObjectMeta()
    content: FrozenDict = EMPTY_MAP  # every top-level field but apiVersion, kind and metadata

    @property
    def spec(self) -> Any:
        return self.content.get("spec")

    @property
    def status(self) -> Any:
        return self.content.get("status")

    def field(self, path: tuple[str, ...]) -> Any:
        """The value at a path of keys under the top level (None when absent)."""
        value: Any = self.content
        for key in path:
            if not isinstance(value, dict):
                return None
            value = value.get(key)
        return value

    def to_json(self) -> dict:
        from .codec import dump_struct

        out: dict[str, Any] = {"apiVersion": self.api_version, "kind": self.kind,
                               "metadata": dump_struct(self.metadata)}
        for key in sorted(self.content):
            out[key] = thaw(self.content[key])
        return out


def custom_object(api_version: str, kind: str, metadata: ObjectMeta, content: Optional[dict] = None) -> CustomObject:
    """A CustomObject with `content` frozen."""
    return CustomObject(api_version, kind, metadata, freeze(dict(content or {})))
