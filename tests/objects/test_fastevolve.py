"""fastevolve builds exactly what attrs would: evolve, replacer and constructor against attrs itself."""

from __future__ import annotations

import inspect

import attrs
import pytest

import kmodel.objects as objects
from kmodel.objects import ObjectMeta, Pod, PodSpec, PodStatus
from kmodel.objects.fastevolve import constructor, evolve, replacer


def _kinds() -> list[type]:
    found = []
    for name in sorted(dir(objects)):
        cls = getattr(objects, name)
        if inspect.isclass(cls) and attrs.has(cls):
            try:
                cls()
            except TypeError:
                continue  # needs arguments: not a value with defaults
            found.append(cls)
    return found


@pytest.mark.parametrize("cls", _kinds(), ids=lambda c: c.__name__)
def test_every_kind_builds_equal_frozen_objects(cls):
    fields = attrs.fields(cls)
    base = cls()
    first = fields[0].name
    value = getattr(base, first)
    built = replacer(cls, first)(base, value)
    assert type(built) is cls and built == attrs.evolve(base, **{first: value})
    assert evolve(base, **{first: value}) == base
    assert constructor(cls)(*(getattr(base, f.name) for f in fields)) == base
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        setattr(built, first, value)


def test_replacer_sets_the_named_fields_and_keeps_the_others():
    meta = ObjectMeta(name="a", namespace="ns", labels={"app": "web"}, resource_version="3")
    changed = replacer(ObjectMeta, "name", "resource_version")(meta, "b", "7")
    assert changed == attrs.evolve(meta, name="b", resource_version="7")
    assert changed.labels is meta.labels  # shared, not copied
    pod = Pod(metadata=meta, spec=PodSpec(node_name="n1"))
    status = PodStatus(phase="Running")
    assert replacer(Pod, "metadata", "status")(pod, changed, status) == attrs.evolve(pod, metadata=changed,
                                                                                      status=status)
    with pytest.raises(TypeError):
        replacer(Pod, "nope")


def test_a_class_whose_init_does_more_than_store_gets_its_init_called():
    @attrs.frozen
    class Checked:
        n: int = attrs.field(default=0, validator=attrs.validators.ge(0))
        s: str = attrs.field(default="", converter=str)

    assert replacer(Checked, "s")(Checked(), 5) == Checked(s="5")  # the converter ran
    with pytest.raises(ValueError):
        replacer(Checked, "n")(Checked(), -1)  # the validator ran
    with pytest.raises(ValueError):
        evolve(Checked(), n=-1)
    assert constructor(Checked) is Checked
