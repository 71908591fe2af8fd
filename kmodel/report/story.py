"""A violation told as a story: what the checker hands the report writers for each violation it replayed.

The checker replays a shrunk trace once more, without Hypothesis, and records what happened: the readable
names of the actions in order (`steps`) and the messages the network delivered while each action ran
(`messages`). The report writers turn that into a numbered list of steps and a Mermaid sequence diagram.
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


@attrs.frozen
class ViolationStory:
    """One violation, ready to be told: the invariant, its message, the trace and what replaying it showed.

    `steps` are the readable names of the trace's actions, in order. `messages` are the messages delivered
    while replaying, each ``(step index, src endpoint, dst endpoint, short label)`` with the 0-based index of
    the step during which it was delivered. `replay_command` is the shell command that replays the trace.
    Lists are accepted and stored as tuples, so a story is immutable and hashable.
    """

    invariant: str
    message: str
    trace_path: str
    steps: tuple[str, ...] = attrs.field(converter=_steps)
    messages: tuple[Message, ...] = attrs.field(converter=_messages)
    replay_command: str
