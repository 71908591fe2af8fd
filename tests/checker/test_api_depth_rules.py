"""The API-depth family (kmodel/checker/api_depth_rules.py, api_depth_actions.py): its actions read back from a
trace, its tables draw what upstream accepts and refuses, and its rules do what they draw on a machine."""

from __future__ import annotations

import json

import pytest

from kmodel.checker.action_json import action_from_json
from kmodel.checker.api_depth_actions import (
    ACCESS_REVIEWS, CRD_VARIANTS, DECODE_BODIES, DIRECTORY, DOCKER_CONFIGS, DOCKER_SECRETS, GADGET_PATCHES, GADGET_SPECS,
    ODD_BODIES, ODD_OBJECTS, ODD_PATCHES, SHAPES, TIGHTENED_PATCHES, VALID_SHAPES, ApplyGadget, ApplyGadgetCRD,
    DeleteGadgetCRD, PatchGadget,
)
from kmodel.checker.actions import ApplyDeployment
from kmodel.cluster import Delete

from tests.checker.conftest import SmallMachine
from tests.checker.test_workload_actions import run

#: (their JSON round trips: tests/checker/test_actions.py)
EXAMPLES = [ApplyGadgetCRD(), ApplyGadgetCRD("strict"), DeleteGadgetCRD("rival"), ApplyGadget("g1"), ApplyGadget("g2", "huge", True),
            PatchGadget("g1", "json", '[{"op":"add","path":"/spec/tags/-","value":"z"}]')]



def test_a_bad_gadget_action_reads_back_as_a_one_line_error():
    with pytest.raises(ValueError, match="shape must be one of"):
        action_from_json({"name": "apply-gadget", "gadget": "g1", "shape": "tiny"})
    with pytest.raises(ValueError, match="gadget must be one of"):
        action_from_json({"name": "patch-gadget", "gadget": "g9", "type": "merge", "patch": "{}"})


def _answers(cluster, since: int) -> list[tuple[int, str]]:
    return [(r.response.code, getattr(r.response.body, "message", "") or "") for r in cluster.kubectl.results[since:]]


@pytest.fixture
def gadgets():
    """A machine with the loose Gadget CRD stored."""
    machine = SmallMachine()
    machine.apply_gadget_crd(0)
    machine.advance_time(2)
    return machine


def test_each_gadget_shape_is_stored_or_refused_as_its_name_says(gadgets):
    cluster = gadgets.cluster
    answers = {}
    for shape in SHAPES:  # each a create: an apply to a stored Gadget merges the manifest into it
        cluster.submit(Delete("gadgets", "default", "g1"))
        cluster.run_for(1_000)
        [r] = run(cluster, ApplyGadget("g1", shape), ms=2_000)
        answers[shape] = (r.response.code, getattr(r.response.body, "message", "") or "")
    assert all(answers[s][0] == 201 for s in VALID_SHAPES), answers
    assert all(answers[s][0] in (400, 422) for s in SHAPES if s not in VALID_SHAPES), answers
    assert answers["unknown-field"] == (400, 'Gadget in version "v1" cannot be handled as a Gadget: strict decoding '
                                             'error: unknown field "spec.colour"')
    assert 'spec.ratio in body should be less than 1' in answers["ratio-at-bounds"][1]
    assert 'spec.port in body must be of type integer,string: "boolean"' in answers["bool-port"][1]
    assert "spec.ports[0].port: Required value" in answers["port-without-port"][1]
    assert "spec.template.kind: Required value" in answers["embedded-without-kind"][1]


def test_a_tightened_schema_ratchets_what_an_update_leaves_as_it_was(gadgets):
    cluster = gadgets.cluster
    run(cluster, ApplyGadget("g1", "loose-only"))
    run(cluster, ApplyGadgetCRD("strict"))
    # count changes; the name and the tags (a set list) are as stored, and too long for the new bounds
    [r] = run(cluster, PatchGadget("g1", "merge", {"spec": {"count": 4}}))
    assert r.response.code == 200, r.response.body
    [r] = run(cluster, PatchGadget("g1", "json", [{"op": "replace", "path": "/spec/tags/0", "value": "y"}]))
    assert r.response.code == 422 and "spec.tags: Too many: 3: must have at most 2 items" in r.response.body.message
    [r] = run(cluster, PatchGadget("g1", "strategic", {"spec": {"count": 5}}))
    assert r.response.code == 415


def test_tighten_gadget_schema_ratchets_what_its_patch_leaves_as_stored():
    codes = []
    for row in range(len(TIGHTENED_PATCHES)):
        machine = SmallMachine()
        since = len(machine.cluster.kubectl.results)
        machine.tighten_gadget_schema(row)
        machine.advance_time(1)
        answers = _answers(machine.cluster, since)
        assert [code for code, _ in answers[:-1]] == [201, 201, 200], answers  # the CRD, g2, the strict CRD
        codes.append(answers[-1][0])
        stored = machine.cluster.get("customresourcedefinitions", "", "gadgets.example.com")
        assert stored.spec.versions[0].open_api_schema()["properties"]["spec"]["properties"]["name"]["maxLength"] == 3
    assert codes == [200, 200, 422, 422, 200, 200]


def test_every_rule_of_the_family_does_what_it_draws(gadgets):
    machine, cluster = gadgets, gadgets.cluster
    assert cluster.get("customresourcedefinitions", "", "gadgets.example.com") is not None
    machine.apply_gadget(0, SHAPES.index("full"), False)
    machine.advance_time(2)
    stored = cluster.get("gadgets", "default", "g1")
    assert stored.content["spec"]["template"]["kind"] == "ConfigMap" and stored.content["spec"]["count"] == 2
    machine.patch_gadget(0, 0)  # a merge patch of spec.count
    machine.advance_time(2)
    assert cluster.get("gadgets", "default", "g1").content["spec"]["count"] == GADGET_PATCHES[0][1]["spec"]["count"]
    since = len(cluster.kubectl.results)
    machine.patch_odd(0, 0)  # the first object (a node) gets an annotation under an escaped key
    machine.create_odd_body(0)  # a ConfigMap with nulls: the null value is the empty string
    machine.advance_time(2)
    node = cluster.objects("nodes")[0]
    assert node.metadata.annotations["example.com/note"] == "x", _answers(cluster, since)
    assert cluster.get("configmaps", "default", "odd-null").data == {"a": "b", "c": ""}
    for rule in ("apply_gadget_crd", "apply_gadget", "patch_gadget", "patch_odd", "create_odd_body"):
        assert machine.stats.rules.get(rule), rule


def test_odd_patches_take_both_sides_of_their_guards():
    machine = SmallMachine()
    run(machine.cluster, ApplyDeployment("web", 1))
    codes = set()
    for row in range(len(ODD_PATCHES)):
        for i in range(3):
            since = len(machine.cluster.kubectl.results)
            machine.patch_odd(i, row)
            machine.advance_time(1)
            codes |= {code for code, _ in _answers(machine.cluster, since)}
    assert {200, 400, 422} <= codes


def test_odd_bodies_decode_or_are_refused_with_gos_message():
    machine = SmallMachine()
    answers = {}
    rows = [row for row, (resource, body) in enumerate(ODD_BODIES)
            if resource != DIRECTORY or body in (DECODE_BODIES, ACCESS_REVIEWS)]
    assert len(rows) == len(ODD_BODIES) - 2  # the directories of odd objects and Secrets: the next test's
    for row in rows:
        since = len(machine.cluster.kubectl.results)
        machine.create_odd_body(row)
        machine.advance_time(1)
        for n, r in enumerate(machine.cluster.kubectl.results[since:]):
            body = r.command.body or {}
            answers[body.get("metadata", {}).get("name") or (row, n)] = (
                r.response.code, getattr(r.response.body, "message", "") or "")
    assert len(answers) == len(rows) - 2 + len(DECODE_BODIES) + len(ACCESS_REVIEWS)
    assert answers["odd-float"][0] == 201  # an integral float is an int, as YAML's conversion leaves it
    assert answers["odd-fraction"] == (400, 'Deployment in version "v1" cannot be handled as a Deployment: json: '
                                            'cannot unmarshal number 2.5 into Go struct field '
                                            'DeploymentSpec.spec.replicas of type int32')
    assert answers["odd-types"] == (400, 'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal '
                                         'number into Go struct field ObjectMeta.metadata.annotations of type string')
    assert answers["odd-kind"][1].startswith("couldn't get version/kind; json parse error")
    assert answers["odd-elsewhere"] == (400, "the namespace of the provided object does not match the namespace "
                                             "sent on the request")
    reviews = [code for key, (code, _) in answers.items()
               if isinstance(key, tuple) and ODD_BODIES[key[0]][1] is ACCESS_REVIEWS]
    assert reviews == [201, 201, 422, 201]  # can-i of a resource, of a URL, of neither; whoami
    assert sum(code == 400 for code, _ in answers.values()) == len(answers) - 2 - len(reviews)  # all but two 201s


def test_odd_objects_are_refused_with_every_mistake_listed():
    machine = SmallMachine()
    answers = {}
    directories = [row for row, (resource, body) in enumerate(ODD_BODIES)
                   if resource == DIRECTORY and body not in (DECODE_BODIES, ACCESS_REVIEWS)]
    assert [ODD_BODIES[row][1] for row in directories] == [ODD_OBJECTS, DOCKER_SECRETS]
    for row in directories:  # kubectl create -f <dir>/: one request per manifest
        since = len(machine.cluster.kubectl.results)
        machine.create_odd_body(row)
        machine.advance_time(1)
        for r in machine.cluster.kubectl.results[since:]:
            name = r.command.body["metadata"].get("name", "")
            answers[name] = (r.response.code, getattr(r.response.body, "message", ""))
    assert len(answers) == len(ODD_OBJECTS) + len(DOCKER_SECRETS)
    assert answers.pop("odd-docker-11") == (201, "")  # a null .dockerconfigjson unmarshals into a map
    assert answers.pop("restricted") == (201, "")
    assert answers.pop("odd-host") == (403, 'pods "odd-host" is forbidden: violates PodSecurity "baseline:latest": '
                                            'host namespaces (hostNetwork=true), hostPort (container "app" uses hostPort '
                                            '80), privileged (container "app" must not set '
                                            'securityContext.privileged=true)')
    assert answers.pop("odd-default") == (201, "")  # the first global default; the second is refused
    assert answers.pop("odd-rival") == (403, 'priorityclasses.scheduling.k8s.io "odd-rival" is forbidden: '
                                             'PriorityClass odd-default is already marked as default. Only one '
                                             'default can exist')
    assert answers.pop("odd-class") == (403, 'pods "odd-class" is forbidden: no PriorityClass with name gold was '
                                             'found')
    assert answers.pop("odd-priority") == (
        403, 'pods "odd-priority" is forbidden: the integer value of priority (7) must not be provided in pod spec; '
             'priority admission controller computed 100 from the given PriorityClass name')
    assert {code for code, _ in answers.values()} == {422}
    assert answers["system-odd"][1] == (
        'PriorityClass.scheduling.k8s.io "system-odd" is invalid: metadata.name: Forbidden: priority class names '
        "with 'system-' prefix are reserved for system use only. error: system-odd is not a known system priority "
        "class")
    assert answers["odd-huge"][1] == (
        'PriorityClass.scheduling.k8s.io "odd-huge" is invalid: [value: Forbidden: maximum allowed value of a user '
        'defined priority is 1000000000, preemptionPolicy: Unsupported value: "Sometimes": supported values: '
        '"PreemptLowerPriority", "Never"]')
    assert answers[""][1] == 'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required'
    pod = answers["odd-spec"][1]
    assert pod.count(", spec.") == 13, pod  # fourteen field errors, in upstream's order
    assert pod.index("resources.requests") < pod.index("containers[0].livenessProbe") < pod.index(
        "containers[1].image") < pod.index('containers[1].name: Duplicate value: "app"')
    assert answers["odd-lease"][1] == (
        'Lease.coordination.k8s.io "odd-lease" is invalid: [spec.leaseDurationSeconds: Invalid value: 0: must be '
        'greater than 0, spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0]')
    assert 'Found "true" in references for Deployment/web and Deployment/api' in answers["odd-owners"][1]
    assert "must have exactly one version marked as storage version" in answers["widgets.example.com"][1]
    gos = [answers[f"odd-docker-{n}"][1].rpartition(": ")[2] for n in range(len(DOCKER_CONFIGS)) if n != 11]
    assert gos[:3] == ["invalid character '\\'' looking for beginning of object key string",
                       "invalid character '{' after object key", "invalid character '\"' after object key:value pair"]
    assert len(set(gos)) == len(gos)  # each pasted config meets another of Go's messages


def test_alice_asks_what_she_may_do_and_may_not_create():
    machine = SmallMachine()
    since = len(machine.cluster.kubectl.results)
    machine.create_odd_body(0, 1)  # a ConfigMap, as alice
    machine.create_odd_body(next(r for r, (_, body) in enumerate(ODD_BODIES) if body is ACCESS_REVIEWS), 1)
    machine.advance_time(1)
    (denied, _), *reviews, (whoami, _) = _answers(machine.cluster, since)
    assert (denied, whoami) == (403, 201) and [code for code, _ in reviews] == [201, 201, 422]
    review = machine.cluster.kubectl.results[-1].response.body
    assert review.status.user_info.username == "alice"


def test_a_directory_of_manifests_goes_as_the_admin_whoever_is_drawn():
    machine = SmallMachine()
    since = len(machine.cluster.kubectl.results)
    machine.create_odd_body(next(r for r, (_, body) in enumerate(ODD_BODIES) if body is DECODE_BODIES), 1)
    machine.advance_time(1)
    results = machine.cluster.kubectl.results[since:]
    assert len(results) == len(DECODE_BODIES) and {r.response.code for r in results} == {201, 400}


def test_the_tables_are_json():
    for spec in GADGET_SPECS.values():
        json.dumps(spec)
    for _, doc in GADGET_PATCHES:
        json.dumps(doc)


def test_a_rival_crd_gets_the_names_once_the_gadget_crd_and_its_held_gadget_are_gone(gadgets):
    machine, cluster = gadgets, gadgets.cluster
    machine.apply_gadget(0, 0, False)
    machine.apply_gadget_crd(CRD_VARIANTS.index("rival"))
    machine.apply_gadget_crd(CRD_VARIANTS.index("kind-rival"))
    machine.advance_time(2)

    def accepted(name):
        crd = cluster.get("customresourcedefinitions", "", name)
        return {c.type: (c.status, c.reason) for c in crd.status.conditions}["NamesAccepted"]

    assert accepted("gadgets.example.org") == ("False", "PluralConflict")
    assert accepted("gizmos.example.com") == ("False", "KindConflict")
    machine.patch_gadget(0, next(n for n, (_, doc) in enumerate(GADGET_PATCHES)
                                 if doc == {"metadata": {"finalizers": ["example.com/hold"]}}))
    machine.delete_gadget_crd(0)
    machine.advance_time(10)
    assert cluster.get("customresourcedefinitions", "", "gadgets.example.com") is not None  # held by g1
    machine.patch_gadget(0, next(n for n, (_, doc) in enumerate(GADGET_PATCHES)
                                 if doc == {"metadata": {"finalizers": None}}))
    machine.advance_time(10)
    assert cluster.get("customresourcedefinitions", "", "gadgets.example.com") is None
    assert accepted("gadgets.example.org") == ("True", "NoConflicts")
    assert accepted("gizmos.example.com") == ("True", "NoConflicts")


def test_half_the_shape_draws_name_a_valid_gadget():
    from kmodel.checker.api_depth_rules import gadget_shape

    drawn = [gadget_shape(i) for i in range(2 * len(SHAPES))]
    assert drawn[:len(SHAPES)] == list(SHAPES) and set(drawn[len(SHAPES):]) == set(VALID_SHAPES)
