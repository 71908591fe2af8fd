"""The store's history and watch queues do not depend on PYTHONHASHSEED."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = r"""
from kmodel.store import Store, PutOp, DeleteOp, prefix_end
s = Store()
ids = [s.watch(p, prefix_end(p), prev_kv=True) for p in ["a", "b", "a/"]] + [s.watch("a", "\0")]
for i in range(200):
    k = "abc"[i % 3] + "/" + str(i % 7)
    if i % 5 == 0:
        s.txn([], [PutOp(k + "x", str(i)), DeleteOp(k[0], "\0")], [])
    else:
        s.put(k, str(i))
    if i % 50 == 49:
        s.compact(s.revision - 3)
        ids.append(s.watch("a", "\0", start_revision=s.revision - 2))
print(repr(s.history))
print(repr([s.take_watch_responses(w) for w in ids]))
"""


def test_same_output_under_different_hash_seeds():
    outputs = set()
    for seed in ("0", "1", "12345"):
        result = subprocess.run(
            [sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True,
            env={"PYTHONHASHSEED": seed, "PATH": ""}, cwd=__file__.rsplit("/tests/", 1)[0],
        )
        outputs.add(result.stdout)
    assert len(outputs) == 1
