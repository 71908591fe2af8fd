"""Logical time and timers: set, replace, cancel, due order, and the heap against a naive model."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kmodel.clock import Clock


def test_set_replace_cancel():
    c = Clock()
    c.set_after("a", "t", 100)
    c.set_at("a", "t", 50)  # replaces
    assert c.due_at("a", "t") == 50
    assert len(c) == 1
    assert c.next_due() == 50
    assert c.cancel("a", "t") is True
    assert c.cancel("a", "t") is False
    assert c.next_due() is None and len(c) == 0


def test_due_timers_are_in_due_owner_name_order():
    c = Clock()
    c.set_at("b", "x", 10)
    c.set_at("a", "y", 10)
    c.set_at("a", "x", 10)
    c.set_at("a", "z", 5)
    c.set_at("a", "late", 11)
    assert c.due_timers() == []
    c.advance_to(10)
    assert c.due_timers() == [(5, "a", "z"), (10, "a", "x"), (10, "a", "y"), (10, "b", "x")]
    assert c.earliest_due() == (5, "a", "z")
    assert c.next_due_after_now() == 11


def test_pop_removes_a_due_timer_and_refuses_a_future_one():
    c = Clock()
    c.set_at("a", "t", 10)
    with pytest.raises(ValueError, match="not yet"):
        c.pop("a", "t")
    c.advance_to(10)
    assert c.pop("a", "t") == 10
    assert c.next_due() is None


def test_time_only_moves_forward_and_is_an_int():
    c = Clock(now=5)
    with pytest.raises(ValueError):
        c.advance_to(4)
    with pytest.raises(TypeError):
        c.advance_to(6.0)
    with pytest.raises(ValueError):
        c.set_after("a", "t", -1)


def test_cancel_owner_cancels_only_that_owner():
    c = Clock()
    c.set_at("a", "x", 1)
    c.set_at("a", "y", 2)
    c.set_at("b", "x", 3)
    assert c.cancel_owner("a") == 2
    assert c.next_due() == 3
    assert c.timers_of("a") == {}
    assert c.timers_of("b") == {"x": 3}


def test_many_resets_keep_the_heap_small():
    c = Clock()
    for i in range(10_000):
        c.set_at("a", "resync", i)
    assert len(c) == 1
    assert len(c._heap) <= 130
    assert c.next_due() == 9_999


ops = st.lists(
    st.one_of(
        st.tuples(st.just("set"), st.sampled_from("ab"), st.sampled_from("xyz"), st.integers(0, 50)),
        st.tuples(st.just("cancel"), st.sampled_from("ab"), st.sampled_from("xyz")),
        st.tuples(st.just("advance"), st.integers(0, 20)),
        st.tuples(st.just("fire")),
    ),
    max_size=80,
)


@settings(max_examples=300, deadline=None)
@given(ops)
def test_clock_agrees_with_a_naive_model(script):
    c = Clock()
    model: dict[tuple[str, str], int] = {}
    for op in script:
        if op[0] == "set":
            _, owner, name, delay = op
            c.set_after(owner, name, delay)
            model[(owner, name)] = c.now + delay
        elif op[0] == "cancel":
            _, owner, name = op
            assert c.cancel(owner, name) == ((owner, name) in model)
            model.pop((owner, name), None)
        elif op[0] == "advance":
            c.advance_to(c.now + op[1])
        else:
            first = c.earliest_due()
            if first is not None:
                c.pop(first[1], first[2])
                del model[(first[1], first[2])]
        expected_due = sorted((due, o, n) for (o, n), due in model.items() if due <= c.now)
        assert c.due_timers() == expected_due
        future = [due for due in model.values() if due > c.now]
        assert c.next_due_after_now() == (min(future) if future else None)
        assert c.next_due() == (min(model.values()) if model else None)
        assert len(c) == len(model)
