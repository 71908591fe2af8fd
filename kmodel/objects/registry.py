"""The table of top-level API kinds: apiVersion + kind -> class, with group, resource and scope."""

from __future__ import annotations

from typing import Callable, TypeVar

import attrs

T = TypeVar("T")


@attrs.frozen
class KindInfo:
    api_version: str  # "apps/v1"
    kind: str  # "Deployment"
    resource: str  # "deployments"
    namespaced: bool
    cls: type

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def version(self) -> str:
        return self.api_version.rpartition("/")[2]

    @property
    def group_kind(self) -> str:
        """GroupKind.String(): "Deployment.apps", or "Pod" for the core group."""
        return f"{self.kind}.{self.group}" if self.group else self.kind


KINDS: dict[tuple[str, str], KindInfo] = {}
_BY_CLASS: dict[type, KindInfo] = {}


def api_kind(api_version: str, kind: str, resource: str, *, namespaced: bool) -> Callable[[T], T]:
    """Class decorator registering a top-level kind."""

    def register(cls: T) -> T:
        info = KindInfo(api_version, kind, resource, namespaced, cls)
        KINDS[(api_version, kind)] = info
        _BY_CLASS[cls] = info  # type: ignore[index]
        cls.API_VERSION = api_version  # type: ignore[attr-defined]
        cls.KIND = kind  # type: ignore[attr-defined]
        return cls

    return register


def kind_info(obj_or_cls: object) -> KindInfo:
    """The KindInfo of a top-level object or class."""
    cls = obj_or_cls if isinstance(obj_or_cls, type) else type(obj_or_cls)
    return _BY_CLASS[cls]


def lookup(api_version: str, kind: str) -> KindInfo | None:
    return KINDS.get((api_version, kind))
