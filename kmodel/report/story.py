"""A violation told as a story: what the checker hands the report writers for each violation it replayed.

The checker replays a shrunk trace once more, without Hypothesis, and records what happened: the readable
names of the actions in order (`steps`), the messages the network delivered while each action ran
(`messages`), what changed in the cluster at each step (`changes`: objects created, updated and deleted,
components down, partitions), what the violation names (`focus_endpoints`, `focus_objects`: kmodel.report.focus),
the last state of the objects it names (`final_states`) and what each known fix of that invariant does to the
trace (`fixes`). The report writers turn that into a numbered list of steps, a table of changes, a Mermaid
sequence diagram centred on what the violation names, and the fix that takes it out.
Nothing here runs the model; a story is plain data, so a test can write one by hand.
"""

from __future__ import annotations

from typing import Iterable

import attrs

#: One delivered message: (step index, source endpoint, destination endpoint, short label). The step index is
#: 0-based into `ViolationStory.steps`; an index below 0 means "before the first step" and one at or past
#: ``len(steps)`` means "after the last step" (for instance during the final settle).
Message = tuple[int, str, str, str]


def _steps(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(str(step) for step in value)


def _messages(value: Iterable[Iterable]) -> tuple[Message, ...]:
    out = []
    for message in value:
        step, src, dst, label = message
        out.append((int(step), str(src), str(dst), str(label)))
    return tuple(out)


def _strings(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(str(item) for item in value)


def _landed(value: Iterable[Iterable]) -> tuple[tuple[str, int], ...]:
    return tuple((str(ref), int(step)) for ref, step in value)


@attrs.frozen
class StepChanges:
    """What one step changed, seen as the difference between the cluster before and after it (as TLC prints the
    state along an error trace): objects by reference (``resource/namespace/name``, or ``resource/name`` for a
    cluster-scoped one), each list in key order. An object deleted and created again within the step is in both
    `deleted` and `created`; one created and deleted within it is in neither. `down` and `partitions` are the
    state after the step: the components down, and each group of endpoints cut off from the rest."""

    step: int  # 0-based index into ViolationStory.steps
    created: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    updated: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    deleted: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    down: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    partitions: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    #: the logical time after the step, in ms
    time_ms: int = 0
    #: the objects of `created`, `updated` and `deleted` that a kubectl command of an earlier step changed, each
    #: with that step's index: the model's kubectl sends a command's request when the loop lets it, so an apply
    #: step's object often lands in a later step (the report shows it on the apply's row)
    landed: tuple[tuple[str, int], ...] = attrs.field(default=(), converter=_landed)

    @property
    def empty(self) -> bool:
        return not (self.created or self.updated or self.deleted)


@attrs.frozen
class ObjectState:
    """The last state of an object the violation names: `text` is its YAML (the live version at the end, or the
    last one seen before it was deleted); `status` says which ("live", "deleted in step 5")."""

    ref: str
    status: str
    text: str


@attrs.frozen
class FixVerdict:
    """A known fix of the violated invariant (kmodel.fixes) and what replaying the trace with it on showed:
    `takes_out` when the violation is gone; `outcome` says what happened in words; `command` replays it."""

    name: str
    takes_out: bool
    outcome: str
    command: str
    bug: str = ""
    upstream: str = ""


def _tuple(value: Iterable) -> tuple:
    return tuple(value)


@attrs.frozen
class ViolationStory:
    """One violation, ready to be told: the invariant, its message, the trace and what replaying it showed.

    `steps` are the readable names of the trace's actions, in order. `messages` are the messages delivered
    while replaying, each ``(step index, src endpoint, dst endpoint, short label)`` with the 0-based index of
    the step during which it was delivered. `replay_command` is the shell command that replays the trace.
    The other fields are optional (see the module docstring). Lists are accepted and stored as tuples, so a
    story is immutable and hashable.
    """

    invariant: str
    message: str
    trace_path: str
    steps: tuple[str, ...] = attrs.field(converter=_steps)
    messages: tuple[Message, ...] = attrs.field(converter=_messages)
    replay_command: str
    changes: tuple[StepChanges, ...] = attrs.field(default=(), converter=_tuple)
    focus_endpoints: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    focus_objects: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    final_states: tuple[ObjectState, ...] = attrs.field(default=(), converter=_tuple)
    fixes: tuple[FixVerdict, ...] = attrs.field(default=(), converter=_tuple)
