"""Label and field selector parsing (upstream's messages) and matching."""

from __future__ import annotations

import pytest

from kmodel.apiserver.selectors import (
    SelectorError, label_selector_from_object, parse_field_selector, parse_label_selector,
)
from kmodel.objects import LabelSelector, LabelSelectorRequirement, ObjectMeta, Pod, PodSpec


@pytest.mark.parametrize("text, labels, expected", [
    ("", {}, True),
    ("app=web", {"app": "web"}, True),
    ("app==web", {"app": "db"}, False),
    ("app!=web", {}, True),
    ("app in (web,db)", {"app": "db"}, True),
    ("app notin (web,db)", {"app": "db"}, False),
    ("app", {"app": ""}, True),
    ("!app", {"app": "x"}, False),
    ("app=web,tier", {"app": "web"}, False),
    ("n>3", {"n": "4"}, True),
    ("n<3", {"n": "x"}, False),
])
def test_label_matching(text, labels, expected):
    assert parse_label_selector(text).matches(labels) is expected


@pytest.mark.parametrize("text, message", [
    ("x=a,", "found '', expected: identifier after ','"),
    ("=a", "found '=', expected: !, identifier, or 'end of string'"),
    ("x in a", "unable to parse requirement: found 'a' expected: '('"),
    ("x (", "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt"),
    ("!x=a", "found '=', expected: ',' or 'end of string'"),
])
def test_label_parse_errors(text, message):
    with pytest.raises(SelectorError) as e:
        parse_label_selector(text)
    assert str(e.value) == message


def test_field_selector_required_value_and_matching():
    f = parse_field_selector("spec.nodeName=n1,status.phase!=Failed", "pods")
    assert f.required_value("spec.nodeName") == "n1" and f.required_value("status.phase") is None
    pod = Pod(metadata=ObjectMeta(name="p"), spec=PodSpec(node_name="n1"))
    assert f.matches(pod)
    assert not parse_field_selector("metadata.name=q", "pods").matches(pod)


def test_field_selector_errors():
    with pytest.raises(SelectorError, match="^field label not supported: spec.foo$"):
        parse_field_selector("spec.foo=x", "pods")
    with pytest.raises(SelectorError, match='^"spec.type" is not a known field selector'):
        parse_field_selector("spec.type=x", "services")
    with pytest.raises(SelectorError, match="^invalid selector: 'a'; can't understand 'a'$"):
        parse_field_selector("a", "pods")


def test_from_metav1_selector():
    sel = LabelSelector(match_labels={"app": "web"},
                        match_expressions=(LabelSelectorRequirement(key="tier", operator="In", values=("a", "b")),))
    s = label_selector_from_object(sel)
    assert s.matches({"app": "web", "tier": "b"}) and not s.matches({"app": "web"})
    assert not label_selector_from_object(None).matches({})


def test_from_metav1_selector_parsed_once_per_object():
    """A selector object is parsed once (its versions share it): the same answer as parsing it afresh, and an
    invalid one is refused every time."""
    from kmodel.apiserver.selectors import _label_selector_from_object

    sel = LabelSelector(match_labels={"app": "web"},
                        match_expressions=(LabelSelectorRequirement(key="tier", operator="Exists"),))
    first = label_selector_from_object(sel)
    assert label_selector_from_object(sel) is first
    assert first == _label_selector_from_object(sel) and str(first) == str(_label_selector_from_object(sel))
    bad = LabelSelector(match_expressions=(LabelSelectorRequirement(key="tier", operator="Near"),))
    for _ in range(2):
        with pytest.raises(SelectorError, match="Near"):
            label_selector_from_object(bad)
