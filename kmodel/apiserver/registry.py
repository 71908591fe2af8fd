"""The generic registry's store writes and reads (k8s.io/apiserver/pkg/registry/generic/registry/store.go
over storage/etcd3/store.go), as etcd v3 transactions on kmodel/store.

Theory of operation
-------------------
Values in the store are the frozen objects themselves, with metadata.resourceVersion already set to the
revision of the write that stores them: the store is in-process and one request runs at a time, so the
registry knows that revision (`store.revision + 1`) before writing. resourceVersion is therefore always
the key's mod_revision, as in Kubernetes.

* create: `txn(create_revision(key) == 0, put)`; a failed compare is 409 AlreadyExists.
* update / status / binding / graceful delete: `txn(mod_revision(key) == read_revision, put)`; a failed
  compare means someone wrote in between: the caller re-reads and retries (GuaranteedUpdate). A write equal
  to the stored object (apart from resourceVersion) is skipped: no revision, the stored object returned.
* delete: `txn(mod_revision(key) == read_revision, delete)`.
* get / list: a Range (recorded in the store's history); a list filters by label and field selector and
  answers with the revision of the read as its resourceVersion.

`Conflict` is raised (not an APIError) when a compare fails, for the caller's retry loop.
"""

from __future__ import annotations

from typing import Any, Optional

from kmodel.apiserver import errors
from kmodel.apiserver.resources import Resource, list_prefix, object_key
from kmodel.apiserver.selectors import FieldSelector, LabelSelector
from kmodel.apiserver.storeview import current
from kmodel.apiserver.wire import ListResult
from kmodel.store import Compare, DeleteOp, KeyValue, PutOp, Store, prefix_end

_new = tuple.__new__


class Conflict(Exception):
    """A txn compare failed: the key changed since it was read."""


class Registry:
    """Store access for every resource. Stateless apart from the store it writes to."""

    def __init__(self, store: Store) -> None:
        self.store = store

    # --- reads ---------------------------------------------------------------------------------------

    def read(self, res: Resource, namespace: str, name: str) -> Optional[KeyValue]:
        """The current KeyValue of an object without a store request (for read-modify-write)."""
        return current(self.store, object_key(res, namespace, name))

    def get(self, res: Resource, namespace: str, name: str) -> Any:
        """A consistent GET; 404 when absent."""
        response = self.store.range(object_key(res, namespace, name))
        if not response.kvs:
            raise errors.not_found(res.group, res.name, name)
        return response.kvs[0].value

    def list(self, res: Resource, namespace: str, labels: LabelSelector, fields: FieldSelector) -> ListResult:
        """A consistent LIST of `res` in `namespace` ("" = all), filtered by the selectors."""
        prefix = list_prefix(res, namespace)
        response = self.store.range(prefix, prefix_end(prefix))
        if labels.empty() and fields.empty():
            items = tuple(kv.value for kv in response.kvs)
        else:
            items = tuple(o for o in (kv.value for kv in response.kvs)
                          if labels.matches(o.metadata.labels) and fields.matches(o))
        return ListResult(items, str(response.header_revision))

    # --- writes --------------------------------------------------------------------------------------

    def next_revision(self) -> int:
        return self.store.revision + 1

    def create(self, res: Resource, obj: Any) -> Any:
        meta = obj.metadata
        key = object_key(res, meta.namespace, meta.name)
        response = self.store.txn((_new(Compare, (key, "CREATE", "EQUAL", 0, None)),),
                                  (_new(PutOp, (key, obj, False)),), ())
        if not response.succeeded:
            raise errors.already_exists(res.group, res.name, meta.name)
        return obj

    def replace(self, res: Resource, read: KeyValue, obj: Any) -> Any:
        """Store `obj` over the version `read`; raises Conflict when the key moved."""
        key = read.key
        response = self.store.txn((_new(Compare, (key, "MOD", "EQUAL", read.mod_revision, None)),),
                                  (_new(PutOp, (key, obj, False)),), ())
        if not response.succeeded:
            raise Conflict(key)
        return obj

    def remove(self, read: KeyValue) -> None:
        """Delete the version `read`; raises Conflict when the key moved."""
        key = read.key
        response = self.store.txn([_new(Compare, (key, "MOD", "EQUAL", read.mod_revision, None))],
                                  [_new(DeleteOp, (key, None, False))], [])
        if not response.succeeded:
            raise Conflict(key)
