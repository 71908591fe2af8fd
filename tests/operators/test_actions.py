"""Episode actions as data: each kind's JSON form reads back as the same action; a malformed one is refused."""

from __future__ import annotations

import pytest

from kmodel.operator import actions as a


@pytest.mark.parametrize("action", [
    a.ApplyObject("websites", "a", {"content": "x"}), a.ApplyObject("websites", "b", {}, broken=True),
    a.ScaleObject("shards", "a", 2), a.DeleteObject("shards", "b"), a.ConflictingWrite("websites", "a"),
    a.KillOperator(), a.KillOperator(2), a.PauseOperator(0.5), a.CutConnection(1.0), a.FailRequest(504, True),
    a.BreakWatches(), a.ExpireWatches(), a.RestartComponent("kube-controller-manager", 0.5), a.Wait(1.0)])
def test_an_action_reads_back_from_its_json(action: a.Action) -> None:
    assert a.action_from_json(action.to_json()) == action
    assert action.text


def test_a_malformed_action_is_refused_saying_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="not an episode action"):
        a.action_from_json({"kind": "explode"})
    with pytest.raises(ValueError, match="kill"):
        a.action_from_json({"kind": "kill", "when": 3})
