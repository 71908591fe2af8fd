"""Bit tricks over Python ints used as allocation bitmaps.

Upstream keeps its allocation bitmaps in Go's math/big.Int (cidrset, the ClusterIP AllocationBitmap). A Python int
is the same thing and, being immutable, can be shared between model states for free. Bit i set means offset i is
taken. The helpers below find free offsets with a handful of whole-int operations (done in C) instead of a Python
loop over bits, so a scan costs O(bitmap words) rather than O(bits) interpreted steps.
"""

from __future__ import annotations


def is_set(bits: int, index: int) -> bool:
    """Whether offset `index` is taken."""
    return (bits >> index) & 1 == 1


def span_mask(begin: int, end: int) -> int:
    """A mask with bits begin..end (both inclusive) set; zero when end < begin."""
    if end < begin:
        return 0
    return ((1 << (end - begin + 1)) - 1) << begin


def first_clear(bits: int, lo: int, hi: int) -> int | None:
    """The lowest offset in [lo, hi) whose bit is clear, or None when all of them are set."""
    if hi <= lo:
        return None
    # ~bits has a one wherever an offset is free (and infinitely many above the top bit, cut off by the mask).
    free = (~bits >> lo) & ((1 << (hi - lo)) - 1)
    if free == 0:
        return None
    return lo + (free & -free).bit_length() - 1


def first_clear_from(bits: int, start: int, size: int) -> int | None:
    """The first clear offset scanning start, start+1, ... size-1, 0, 1, ... start-1 (a wrapping scan)."""
    found = first_clear(bits, start, size)
    if found is None:
        found = first_clear(bits, 0, start)
    return found


def set_bits(bits: int) -> list[int]:
    """The set offsets in ascending order."""
    out = []
    index = 0
    while bits:
        low = bits & -bits
        index = low.bit_length() - 1
        out.append(index)
        bits ^= low
    return out
