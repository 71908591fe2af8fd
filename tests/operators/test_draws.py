"""Episode draws: the seed decides them, the kinds come in their proportions, and a SIGKILL is followed by the
change made while the operator is down."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, Phase, given, seed, settings, strategies as st

from kmodel.operator import actions as a
from kmodel.operator.draws import BROKEN_ONE_IN, episode
from kmodel.operator.spec import custom_resources, read_manifests

RESOURCES = custom_resources(read_manifests(["examples/operators/client.yaml"]))


def drawn(from_seed: int, count: int) -> list[list[a.Action]]:
    out: list[list[a.Action]] = []

    @seed(from_seed)
    @settings(max_examples=count, database=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(st.data())
    def collect(data: st.DataObject) -> None:
        out.append(data.draw(episode(RESOURCES, 8)))

    collect()
    return out


def test_the_same_seed_draws_the_same_episodes() -> None:
    assert drawn(3, 10) == drawn(3, 10)
    assert drawn(3, 10) != drawn(4, 10)


def test_kinds_come_in_their_proportions_and_a_kill_is_followed_by_a_user_action() -> None:
    episodes = drawn(0, 200)
    steps = [action for actions in episodes for action in actions[1:]]
    kinds = Counter(type(action).__name__ for action in steps)
    assert set(kinds) == {cls.__name__ for cls in a.KINDS.values()}
    applies = [x for x in steps if isinstance(x, a.ApplyObject)]
    assert 0.5 / BROKEN_ONE_IN < sum(x.broken for x in applies) / len(applies) < 2 / BROKEN_ONE_IN
    assert all(isinstance(actions[0], a.ApplyObject) and not actions[0].broken for actions in episodes)
    after_kill = [actions[i + 1] for actions in episodes for i in range(len(actions) - 1)
                  if isinstance(actions[i], a.KillOperator)]
    assert after_kill and all(isinstance(x, (a.ApplyObject, a.ScaleObject, a.DeleteObject, a.ConflictingWrite))
                              for x in after_kill)
    assert sum(isinstance(x, a.DeleteObject) for x in after_kill) > len(after_kill) / 3
    assert sum(isinstance(x, a.ApplyObject) for x in after_kill) > len(after_kill) / 4


def test_the_change_after_a_kill_deletes_what_was_made_or_makes_what_is_not_there() -> None:
    for actions in drawn(1, 100):
        present = set()
        for before, action in zip(actions, actions[1:] + [None]):
            if isinstance(before, a.ApplyObject) and not before.broken:
                present.add(before.name)
            elif isinstance(before, a.DeleteObject):
                present.discard(before.name)
            if isinstance(before, a.KillOperator) and isinstance(action, a.DeleteObject):
                assert action.name in present
            elif isinstance(before, a.KillOperator) and isinstance(action, a.ApplyObject) and len(present) < 2:
                assert action.name not in present and not action.broken
