"""What an admission plugin is given: `AdmissionAttributes` (upstream's admission.Attributes) and the
operation names. Its own module, below the plugins and the chain that runs them (kmodel/apiserver/admission
/__init__.py), so that each plugin imports it without importing the chain."""

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
