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


def _revision(**changes):
    r = {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "web-7b9c", "namespace": "default"},
         "data": {"spec": {"template": {"$patch": "replace"}}}, "revision": 1}
    r.update(changes)
    return {k: v for k, v in r.items() if v is not None}


def test_a_controller_revision_needs_data_and_a_revision_not_negative():
    """ValidateControllerRevisionCreate (pkg/apis/apps/validation)."""
    from kmodel.objects import validate
    assert validate(decode(_revision())) == []
    assert [str(e) for e in validate(decode(_revision(data=None)))] == ["data: Required value: data is mandatory"]
    assert [e.field for e in validate(decode(_revision(revision=-1)))] == ["revision"]


def test_a_controller_revisions_data_is_immutable_and_its_number_is_not():
    """ValidateControllerRevisionUpdate: a controller renumbers a revision (a rollback), never rewrites it."""
    old = decode(_revision())
    assert validate_update(attrs.evolve(old, revision=3), old) == []
    rewritten = attrs.evolve(old, data=frozen_map(spec=frozen_map()))
    assert [(e.field, e.detail) for e in validate_update(rewritten, old)] == [("data", "field is immutable")]


def _annotated(p, **annotations):
    return attrs.evolve(p, metadata=attrs.evolve(p.metadata, annotations=frozen_map(**annotations)))


COST = "controller.kubernetes.io/pod-deletion-cost"
MIRROR = "kubernetes.io/config.mirror"


def test_pod_deletion_cost_must_be_a_32bit_integer_without_sign_or_leading_zero():
    """ValidatePodSpecificAnnotations with helper.GetDeletionCostFromPodAnnotations: '+10' and '008' are refused
    although strconv.ParseInt takes them; '-08' passes (only the first character is checked)."""
    from kmodel.objects import validate

    base = decode(pod())
    for good in ("0", "-5", "100", "-08", "2147483647", "-2147483648"):
        assert validate(_annotated(base, **{COST: good})) == [], good
    for bad in ("+10", "008", "00", "", "-", "2147483648", "1e3", "abc"):
        assert [str(e) for e in validate(_annotated(base, **{COST: bad}))] == [
            f'metadata.annotations[{COST}]: Invalid value: "{bad}": must be a 32bit integer'], bad


def test_an_update_may_keep_a_deletion_cost_the_old_pod_had_wrong_but_not_bring_one_in():
    """AllowInvalidPodDeletionCost: set for an update whose old pod's cost is already invalid."""
    old = decode(pod())
    assert validate_update(_annotated(old, **{COST: "+1"}), _annotated(old, **{COST: "+1"})) == []
    assert validate_update(_annotated(old, **{COST: "7"}), _annotated(old, **{COST: "+1"})) == []
    errs = validate_update(_annotated(old, **{COST: "+1"}), _annotated(old, **{COST: "1"}))
    assert errs and {str(e) for e in errs} == {
        f'metadata.annotations[{COST}]: Invalid value: "+1": must be a 32bit integer'}


def test_mirror_pod_annotation_needs_a_node_and_cannot_be_added_changed_or_removed():
    from kmodel.objects import validate

    base = decode(pod())
    assert [str(e) for e in validate(_annotated(base, **{MIRROR: "h"}))] == [
        f'metadata.annotations[{MIRROR}]: Invalid value: "h": must set spec.nodeName if mirror pod annotation is set']
    bound = attrs.evolve(base, spec=attrs.evolve(base.spec, node_name="node-1"))
    assert validate(_annotated(bound, **{MIRROR: "h"})) == []
    mirror = _annotated(bound, **{MIRROR: "h"})
    assert [str(e) for e in validate_update(bound, mirror)] == [
        f"metadata.annotations[{MIRROR}]: Forbidden: may not remove or update mirror pod annotation"]
    assert [str(e) for e in validate_update(_annotated(bound, **{MIRROR: "g"}), mirror)] == [
        f"metadata.annotations[{MIRROR}]: Forbidden: may not remove or update mirror pod annotation"]
    assert [str(e) for e in validate_update(mirror, bound)] == [
        f"metadata.annotations[{MIRROR}]: Forbidden: may not add mirror pod annotation"]
