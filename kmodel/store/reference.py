"""`ReferenceStore`: the `Store` with its fast paths switched off, for checking them.

Theory of operation
-------------------
`Store` implements each write operation once in general steps (kmodel/store/store.py: `_txn`, `_put`,
`_delete`, `_commit`, and the watch fan-out `_fan_out`) and, where a benchmark showed it matters, once more as
a fast path for the shape the model sends most:

* `Store.put` and the API server's txn (`_txn_one`: one compare, one put, else nothing or one read) write one
  key through `_write_one`, which does the keyspace, log, tracker and watcher steps in one function;
* a write that changed one key reaches its watchers through `_fan_out_one`, which builds each of the two
  possible events once and shares it between watchers.

`ReferenceStore` answers every request through the general steps only. Both must give the same responses,
revisions, history and watch responses for any sequence of requests: tests/store/test_reference.py drives
both with random sequences and compares them after every request, and tests/conformance compares `Store`
with a real etcd. A fast path that cannot be checked this way does not belong in `Store`.
"""

from __future__ import annotations

from typing import Any, Sequence

from . import errors
from .store import Store, _Write
from .types import Compare, PutOp, PutResponse, TxnRequest, TxnResponse


class ReferenceStore(Store):
    """A `Store` whose every write goes through the general steps (see the module docstring)."""

    def put(self, key: str, value: Any, *, prev_kv: bool = False) -> PutResponse:
        request = PutOp(key, value, prev_kv)
        if not key:
            self._fail(request, errors.empty_key())
        write = _Write(self.revision + 1)
        response = self._put(write, request)
        self._commit(write)
        self.history.append((request, response))
        return response

    def txn(self, compare: Sequence[Compare], success: Sequence[Any], failure: Sequence[Any]) -> TxnResponse:
        return self._txn(TxnRequest(tuple(compare), tuple(success), tuple(failure)))

    def _notify(self, write: _Write) -> None:
        self._fan_out(write)
