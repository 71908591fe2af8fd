"""What the checker's rules draw: small numbers that mean something whatever the cluster looks like.

A rule draws an index (`INDEX`) and takes it modulo the list of candidates that exist when it runs (`pick`), so
every draw names a real object, node or component, and shrinks toward the first candidate. The rule families
(machine.py and the mixins beside it) share these so their draws shrink alike.
"""

from __future__ import annotations

from typing import Any, Sequence

from hypothesis import strategies as st

#: an index into whatever list of candidates exists when the rule runs (taken modulo its length)
INDEX = st.integers(min_value=0, max_value=63)


def pick(index: int, options: Sequence[Any]) -> Any:
    """The candidate `index` names (modulo their number), or None when there is none."""
    return options[index % len(options)] if options else None
