"""kmodel.memo.identity_memo: the answer of the plain function, computed once per live object."""

from kmodel.memo import identity_memo


def test_the_memo_answers_as_the_function_and_computes_once_per_object() -> None:
    calls = []

    def size(obj: tuple) -> int:
        calls.append(obj)
        return len(obj)

    memo = identity_memo(size)
    a, b = (1, 2), (1, 2, 3)
    assert [memo(a), memo(a), memo(b), memo(a)] == [2, 2, 3, 2]
    assert calls == [a, b]
    assert memo.__wrapped__ is size


def test_an_equal_but_distinct_object_is_computed_again() -> None:
    calls = []
    memo = identity_memo(lambda obj: calls.append(obj) or sum(obj))
    first, second = [1, 2], [1, 2]
    assert memo(first) == memo(second) == 3
    assert len(calls) == 2


def test_the_memo_is_cleared_when_full_and_keeps_answering() -> None:
    calls = []
    memo = identity_memo(lambda obj: calls.append(obj) or obj[0], maxsize=2)
    objs = [(i,) for i in range(3)]
    assert [memo(o) for o in objs] == [0, 1, 2]
    assert memo(objs[0]) == 0  # dropped with the clear at the third entry, computed again
    assert len(calls) == 4


def test_extra_argument_is_part_of_the_key() -> None:
    calls = []
    memo = identity_memo(lambda obj, x: calls.append((obj, x)) or len(obj) * x, extra=True)
    obj = (1, 2)
    assert [memo(obj, 1), memo(obj, 2), memo(obj, 1)] == [2, 4, 2]
    assert len(calls) == 2
