"""The invariant registry: one function per invariant, registered with its name, kind and principle.

An invariant is a function that only reads. It is given the cluster under check and a scratch dict of its
own (kept between checks of one run, so an invariant can be incremental: remember how far into the store's
history or the audit trail it has looked, and look only at what is new), and yields one message per
violation it finds (nothing when it holds):

    @invariant("unique-pod-ips", kind=SAFETY, principle="network model")
    def unique_pod_ips(cluster: Cluster, memo: dict) -> Iterator[str]:
        '''No two pods that are not terminated have the same IP.'''
        ...

A runner may put one more thing in every memo: under the key `SHARED`, a dict shared by all the invariants of
the run, for state several invariants derive from the same inputs (the four watch guarantees read the etcd
watches once between them), and under `CHECK` in that dict the count of the runner's checks so far. An invariant
must work without either (a test may call it with a bare `{}`).

The docstring's first sentence is the invariant's guarantee, printed by `kmodel invariants` and in reports.
Safety invariants are checked after every step (one that declares what it reads, `reads=`, is skipped after a
step that changed none of that: kmodel.invariants.inputs); liveness invariants once faults have healed and the
cluster has run fairly to quiescence (the checker's `settle`).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator, Optional

import attrs

from kmodel.invariants.inputs import Input

SAFETY = "safety"
LIVENESS = "liveness"
#: the memo key of the dict shared by every invariant of a run (see the module docstring)
SHARED = "shared"
#: the key, in the shared dict, of the runner's count of the checks it made (each time it asks the invariants
#: after a step): what several invariants derive from the cluster as it stands (the cluster does not change
#: while they are asked) can be derived once per check, by the first to need it. Absent: derive it each time
CHECK = "check"

Check = Callable[[Any, dict], Iterable[str]]


@attrs.frozen
class Invariant:
    name: str
    kind: str
    principle: str
    guarantee: str
    check: Check = attrs.field(eq=False, repr=False)
    #: everything its verdict depends on (kmodel.invariants.inputs), so a runner may skip it while none of that
    #: changed; None: not declared, asked at every check
    reads: Optional[tuple[Input, ...]] = attrs.field(default=None, eq=False, repr=False)


REGISTRY: dict[str, Invariant] = {}


def first_sentence(doc: str | None) -> str:
    text = " ".join((doc or "").split())
    head, dot, _ = text.partition(". ")
    return head + "." if dot else text


def invariant(name: str, *, kind: str, principle: str,
              reads: Optional[Iterable[Input]] = None) -> Callable[[Check], Check]:
    """Register the decorated function as the invariant `name`; `reads`: every input its verdict depends on
    (kmodel.invariants.inputs), for a safety invariant a runner may then skip while none of them changed."""
    if kind not in (SAFETY, LIVENESS):
        raise ValueError(f"invariant {name}: kind must be {SAFETY!r} or {LIVENESS!r}, not {kind!r}")
    declared = None if reads is None else tuple(reads)
    if declared is not None and (not declared or not all(isinstance(i, Input) for i in declared)):
        raise ValueError(f"invariant {name}: reads must name at least one kmodel.invariants.inputs.Input")

    def register(fn: Check) -> Check:
        guarantee = _documented(REGISTRY, "invariant", name, fn, "whose first sentence is its guarantee")
        REGISTRY[name] = Invariant(name, kind, principle, guarantee, fn, declared)
        return fn

    return register


def _documented(table: dict, what: str, name: str, fn: Callable, needs: str) -> str:
    """The first sentence of `fn`'s docstring, `name` being new in `table`: ValueError for a name registered twice
    or a function that does not say what it is."""
    if name in table:
        raise ValueError(f"{what} {name!r} is registered twice")
    sentence = first_sentence(fn.__doc__)
    if not sentence:
        raise ValueError(f"{what} {name!r} needs a docstring {needs}")
    return sentence


def registered(kind: str | None = None) -> list[Invariant]:
    """The registered invariants (of one kind, if given), by name."""
    return [inv for name, inv in sorted(REGISTRY.items()) if kind is None or inv.kind == kind]


def violations(inv: Invariant, cluster: Any, memo: dict) -> Iterator[str]:
    yield from inv.check(cluster, memo)


# -- sometimes properties (kmodel.invariants.sometimes says what they are) ---------------------------------

Reached = Callable[[Any, dict], bool]


@attrs.frozen
class Sometimes:
    name: str
    principle: str
    situation: str  # one sentence: what was reached
    reached: Reached = attrs.field(eq=False, repr=False)
    #: reachable only where controller managers or schedulers elect a leader (more than one of either): a run of
    #: one of each neither counts nor lists it
    elections_only: bool = False


SOMETIMES: dict[str, Sometimes] = {}


def sometimes(name: str, *, principle: str, elections_only: bool = False) -> Callable[[Reached], Reached]:
    """Register the decorated function as the sometimes property `name` (its docstring's first sentence says
    what situation it is); `elections_only` for a situation only a cluster that elects leaders can reach."""

    def register(fn: Reached) -> Reached:
        situation = _documented(SOMETIMES, "sometimes property", name, fn, "saying what situation it is")
        SOMETIMES[name] = Sometimes(name, principle, situation, fn, elections_only)
        return fn

    return register


def registered_sometimes() -> list[Sometimes]:
    """The registered sometimes properties, by name."""
    return [SOMETIMES[name] for name in sorted(SOMETIMES)]
