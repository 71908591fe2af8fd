"""The pod-deletion-cost annotation: parsed as upstream's GetDeletionCostFromPodAnnotations, refused by pod
validation when it is no 32-bit integer (ValidatePodSpecificAnnotations), and tolerated on an update of a pod
whose value was already invalid."""

import attrs
import pytest

from kmodel.objects import decode, frozen_map, validate, validate_update
from kmodel.objects.deletion_cost import POD_DELETION_COST, deletion_cost, parse_deletion_cost

from .test_invalid_objects import deployment, pod


@pytest.mark.parametrize("text, value", [
    ("0", 0), ("100", 100), ("-100", -100), ("-007", -7), ("2147483647", 2147483647), ("-2147483648", -2147483648),
    ("+10", None), ("008", None), ("00", None), ("", None), ("-", None), ("--1", None), ("-+1", None), ("1e3", None),
    ("abc", None), (" 1", None), ("2147483648", None), ("-2147483649", None), ("١٢", None),
])
def test_the_cost_is_parsed_as_upstreams_helper_does(text, value):
    assert parse_deletion_cost(text) == value


def test_a_pod_without_the_annotation_costs_zero():
    assert deletion_cost({}) == 0 and deletion_cost({POD_DELETION_COST: "5"}) == 5


def _annotated(cost):
    obj = decode(pod())
    return attrs.evolve(obj, metadata=attrs.evolve(obj.metadata, annotations=frozen_map(**{POD_DELETION_COST: cost})))


def test_a_pod_whose_cost_is_no_32bit_integer_is_refused():
    assert validate(_annotated("-100")) == []
    assert [str(e) for e in validate(_annotated("+10"))] == [
        'metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: "+10": '
        'must be a 32bit integer']


def test_an_update_may_keep_an_invalid_cost_only_when_it_was_invalid_already():
    valid, invalid = _annotated("5"), _annotated("008")
    # ValidatePodUpdate runs ValidatePodSpecificAnnotations twice (validatePodMetadataAndSpec, then
    # ValidatePodSpecificAnnotationUpdates): the cause is listed twice, the message once (Aggregate drops repeats)
    assert [e.field for e in validate_update(invalid, valid)] == [
        "metadata.annotations[controller.kubernetes.io/pod-deletion-cost]"] * 2
    assert validate_update(_annotated("abc"), invalid) == []  # AllowInvalidPodDeletionCost


def test_a_template_whose_cost_is_no_32bit_integer_is_refused():
    obj = decode(deployment())
    template = obj.spec.template
    annotated = attrs.evolve(template, metadata=attrs.evolve(
        template.metadata, annotations=frozen_map(**{POD_DELETION_COST: "1.5"})))
    assert [str(e) for e in validate(attrs.evolve(obj, spec=attrs.evolve(obj.spec, template=annotated)))] == [
        'spec.template.metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: "1.5": '
        'must be a 32bit integer']
