"""Process-wide settings for a long model run: opt-in, never applied on import.

Why: a run keeps every store write forever (the store's history, the revision log, each key's versions),
so the live heap only grows. CPython's cyclic GC starts a collection after every 700 net new container
objects and, every so often, walks the whole heap; with a growing history most of a store write's cost
becomes the collector re-walking objects that can never be garbage (they are immutable records that
nothing cyclic refers to). `tune_gc()` trades a little memory for that time:

* a first-generation threshold of 100,000 allocations instead of 700 (the young collections still run,
  100x less often; cycles made by the model are still found);
* `gc.freeze()` moves everything alive at the call (imports, the booted cluster) into a permanent
  generation that collections no longer walk. Call it after setup.

Nothing observable changes: the collector only frees unreachable cycles, and the model's answers never
depend on when that happens. `python benchmarks/bench_store.py` prints figures with and without it.
The kmodel CLI and the benchmarks call it; library code and tests never need to.
"""

from __future__ import annotations

import gc

GEN0_THRESHOLD = 100_000
GEN1_THRESHOLD = 50
GEN2_THRESHOLD = 50


def tune_gc(*, freeze: bool = True) -> tuple[int, int, int]:
    """Raise the collector's thresholds (and freeze what is alive now); returns the previous thresholds,
    for `restore_gc`."""
    previous = gc.get_threshold()
    gc.set_threshold(GEN0_THRESHOLD, GEN1_THRESHOLD, GEN2_THRESHOLD)
    if freeze:
        gc.freeze()
    return previous


def restore_gc(previous: tuple[int, int, int]) -> None:
    """Undo `tune_gc`: the previous thresholds, and frozen objects back under collection."""
    gc.set_threshold(*previous)
    gc.unfreeze()
