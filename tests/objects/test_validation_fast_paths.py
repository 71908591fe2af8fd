"""The metadata checks decide the common, valid case without building errors: whatever they decide that way
must be what the full checks say."""

from __future__ import annotations

import itertools

import pytest

from kmodel.objects import ObjectMeta, OwnerReference
from kmodel.objects.validation import common
from kmodel.objects.validation.names import is_dns1123_label, is_dns1123_subdomain

NAMES = ["web-1", "Web", "", "a" * 254, "a.b", "-x"]
NAMESPACES = ["default", "", "Bad_NS", "a.b"]
LABELS = [{}, {"app": "web"}, {"app": "-bad"}, {"example.com/tier": "front"}, {"bad key!": "v"}, {"a" * 64: "v"}]
ANNOTATIONS = [{}, {"note": "x"}, {"Bad Key": "x"}, {"big": "x" * (256 * 1024)}]
REFS = [(), (OwnerReference(api_version="apps/v1", kind="ReplicaSet", name="rs", uid="u", controller=True),),
        (OwnerReference(api_version="apps/v1", kind="ReplicaSet", name="", uid="u"),),
        (OwnerReference(api_version="v1", kind="A", name="a", uid="1", controller=True),
         OwnerReference(api_version="v1", kind="B", name="b", uid="2", controller=True))]
FINALIZERS = [(), ("kubernetes.io/pv-protection",), ("bad finalizer",)]


def _full(fn, *args):
    """fn with the fast decisions switched off: the checks alone."""
    saved = common._meta_valid, common._labels_valid, common._annotations_valid
    common._meta_valid = lambda *a: False
    common._labels_valid = common._annotations_valid = lambda *a: False
    try:
        return fn(*args)
    finally:
        common._meta_valid, common._labels_valid, common._annotations_valid = saved


@pytest.mark.parametrize("namespaced,check", [(True, is_dns1123_subdomain), (False, is_dns1123_label)])
def test_object_meta_checks_agree_with_the_full_checks(namespaced, check):
    cases = itertools.product(NAMES, NAMESPACES, LABELS[:4], ANNOTATIONS[:3], REFS, FINALIZERS, ["", "gen-"], [0, -1])
    for i, (name, ns, labels, annotations, refs, fins, gen_name, generation) in enumerate(cases):
        if i % 5:
            continue  # a spread of the combinations is enough
        meta = ObjectMeta(name=name, namespace=ns, labels=labels, annotations=annotations, owner_references=refs,
                          finalizers=fins, generate_name=gen_name, generation=generation)
        for _ in range(2):  # the second time the name and label checks answer from their memos
            assert common.validate_object_meta(meta, namespaced, check) == \
                _full(common.validate_object_meta, meta, namespaced, check)


def test_label_and_annotation_checks_agree_with_the_full_checks():
    for labels in LABELS:
        assert common.validate_labels(labels, "l") == _full(common.validate_labels, labels, "l")
    for annotations in ANNOTATIONS:
        assert common.validate_annotations(annotations, "a") == _full(common.validate_annotations, annotations, "a")


def test_object_meta_update_checks_agree_with_the_full_checks():
    old = ObjectMeta(name="a", namespace="n", uid="u", creation_timestamp=1, labels={"app": "web"})
    variants = [old, ObjectMeta(name="a", namespace="n", uid="u", creation_timestamp=1, labels={"app": "-x"}),
                ObjectMeta(name="b", namespace="n", uid="u", creation_timestamp=1),
                ObjectMeta(name="a", namespace="n", uid="v", creation_timestamp=2, generation=-1),
                ObjectMeta(name="a", namespace="n", uid="u", creation_timestamp=1, annotations={"Bad Key": "x"})]
    for new in variants:
        assert common.validate_object_meta_update(new, old) == _full(common.validate_object_meta_update, new, old)
