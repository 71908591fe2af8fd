"""validate_update: immutable fields."""

import attrs

from kmodel.objects import LabelSelector, decode, frozen_map, validate_update

from .test_invalid_objects import deployment, pod


def test_deployment_selector_is_immutable():
    old = decode(deployment())
    sel = LabelSelector(match_labels=frozen_map(app="web", tier="fe"))
    tmpl = old.spec.template
    new_tmpl = attrs.evolve(tmpl, metadata=attrs.evolve(tmpl.metadata, labels=frozen_map(app="web", tier="fe")))
    new = attrs.evolve(old, spec=attrs.evolve(old.spec, selector=sel, template=new_tmpl))
    errs = validate_update(new, old)
    assert [(e.field, e.detail) for e in errs] == [("spec.selector", "field is immutable")]
    scaled = attrs.evolve(old, spec=attrs.evolve(old.spec, replicas=5))
    assert validate_update(scaled, old) == []


def test_pod_spec_is_mostly_immutable():
    old = decode(pod())
    c = old.spec.containers[0]
    new_image = attrs.evolve(old, spec=attrs.evolve(old.spec, containers=(attrs.evolve(c, image="busybox:1.37"),)))
    assert validate_update(new_image, old) == []
    moved = attrs.evolve(old, spec=attrs.evolve(old.spec, node_name="n1"))
    errs = validate_update(moved, old)
    assert [e.field for e in errs] == ["spec"]
    assert errs[0].detail.startswith("pod updates may not change fields other than `spec.containers[*].image`")


def test_name_is_immutable():
    old = decode(pod())
    new = attrs.evolve(old, metadata=attrs.evolve(old.metadata, name="q"))
    assert [str(e) for e in validate_update(new, old)] == ['metadata.name: Invalid value: "q": field is immutable']
