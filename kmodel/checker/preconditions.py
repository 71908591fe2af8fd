"""Preconditions asked at most once per step.

Hypothesis asks a rule's precondition while it chooses the next rule, often several times in one step (whether
any rule can run at all, then for each rule it draws until one passes, then, when the drawn ones keep failing,
for the rules in turn). Between two rules nothing changes the cluster, so the answer is the same each time:
`once_per_step` keeps it, under the step it was worked out in, for the preconditions that read the store. The
answers are those the plain predicate gives (Hypothesis' draws, and so the exploration, are the same); only the
repeated work goes.
"""

from __future__ import annotations

import functools
from typing import Any, Callable


def once_per_step(predicate: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """`predicate(machine)`, worked out once per step of the machine: while neither Hypothesis has run a rule
    (`KmodelMachine.check_invariants` counts them in `_rules_run`) nor the session has executed an action
    since it was last asked."""

    @functools.wraps(predicate)
    def asked(machine: Any) -> bool:
        step = (machine._rules_run, len(machine.session.actions), machine.session)
        kept = machine.__dict__.setdefault("_preconditions", {})
        answer = kept.get(asked)
        if answer is not None and answer[0] == step:
            return answer[1]
        value = predicate(machine)
        kept[asked] = (step, value)
        return value

    return asked
