"""The errors the store raises, with etcd's exact texts and gRPC code names.

The texts are what an etcd 3.4 client sees (rpctypes' ``ErrGRPC*`` values, which
prefix the mvcc errors with "etcdserver: "); the codes are the gRPC status code
names those errors carry. Each was checked against a real etcd 3.4.23.
"""

from __future__ import annotations


class StoreError(Exception):
    """A request etcd refuses. ``code`` is the gRPC code name, ``message`` etcd's text."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return self.message

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StoreError) and (self.code, self.message) == (other.code, other.message)

    def __hash__(self) -> int:
        return hash((self.code, self.message))


def compacted() -> StoreError:
    return StoreError("OutOfRange", "etcdserver: mvcc: required revision has been compacted")


def future_revision() -> StoreError:
    return StoreError("OutOfRange", "etcdserver: mvcc: required revision is a future revision")


def empty_key() -> StoreError:
    return StoreError("InvalidArgument", "etcdserver: key is not provided")


def duplicate_key() -> StoreError:
    return StoreError("InvalidArgument", "etcdserver: duplicate key given in txn request")


def too_many_ops() -> StoreError:
    return StoreError("InvalidArgument", "etcdserver: too many operations in txn request")


# Not an error raised: the cancel_reason etcd gives a watch whose range is empty (key >= range_end).
EMPTY_WATCHER_RANGE = "mvcc: watcher range is empty"
