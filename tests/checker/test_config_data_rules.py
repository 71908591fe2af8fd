"""The config-data rule (kmodel/checker/config_data_rules.py) and its action: ConfigMaps and Secrets applied in
the shapes users write, answered as upstream answers them."""

from __future__ import annotations

import pytest

from kmodel.checker.action_json import action_from_json
from kmodel.checker.config_data_actions import CONFIG_NAMES, SHAPES, ApplyConfigData

from tests.checker.conftest import SmallMachine
from tests.checker.test_workload_actions import run

#: (their JSON round trips: tests/checker/test_actions.py)
EXAMPLES = [ApplyConfigData("configmaps", "settings"), ApplyConfigData("secrets", "certs", "tls-without-key"),
            ApplyConfigData("secrets", "creds", "delete")]



def test_a_shape_or_name_of_another_kind_is_refused_in_one_line():
    with pytest.raises(ValueError, match="shape must be one of"):
        action_from_json({"name": "apply-config-data", "resource": "configmaps", "object": "settings", "shape": "tls"})
    with pytest.raises(ValueError, match="object must be one of"):
        action_from_json({"name": "apply-config-data", "resource": "secrets", "object": "settings"})


def _answer(cluster, action) -> tuple[int, str]:
    [r] = run(cluster, action, ms=2_000)
    return r.response.code, getattr(r.response.body, "message", "") or ""


def test_each_shape_on_a_fresh_object_is_stored_or_refused_as_its_name_says():
    cluster = SmallMachine().cluster
    answers = {}
    for resource, names in CONFIG_NAMES.items():
        for shape in SHAPES[resource]:
            if shape != "delete":
                _answer(cluster, ApplyConfigData(resource, names[0], "delete"))
                answers[resource, shape] = _answer(cluster, ApplyConfigData(resource, names[0], shape))
    refused = {key for key, (code, _) in answers.items() if code == 422}
    assert refused == {("configmaps", "key-with-slash"), ("configmaps", "dot-dot-key"),
                       ("configmaps", "hidden-dot-dot-key"), ("configmaps", "key-in-both-maps"),
                       ("secrets", "basic-auth-empty"), ("secrets", "tls-without-key"),
                       ("secrets", "dockerconfigjson-not-json"), ("secrets", "dockerconfigjson-without-key"),
                       ("secrets", "service-account-token-unannotated"), ("secrets", "bad-key")}, answers
    assert all(code == 201 for key, (code, _) in answers.items() if key not in refused), answers
    assert answers["secrets", "dockerconfigjson-not-json"][1].endswith(": unexpected end of JSON input")


def test_an_immutable_object_keeps_its_data_and_a_secret_its_type():
    cluster = SmallMachine().cluster
    _answer(cluster, ApplyConfigData("configmaps", "flags", "immutable"))
    code, message = _answer(cluster, ApplyConfigData("configmaps", "flags", "changed"))
    assert code == 422 and "data: Forbidden: field is immutable when `immutable` is set" in message
    assert _answer(cluster, ApplyConfigData("configmaps", "flags", "delete"))[0] == 200
    assert _answer(cluster, ApplyConfigData("configmaps", "flags", "changed"))[0] == 201
    _answer(cluster, ApplyConfigData("secrets", "creds"))
    code, message = _answer(cluster, ApplyConfigData("secrets", "creds", "tls"))
    assert code == 422 and 'type: Invalid value: "kubernetes.io/tls": field is immutable' in message


def test_the_rule_applies_what_it_draws():
    machine = SmallMachine()
    machine.apply_config_data(0, 0, 0)
    machine.apply_config_data(1, 1, SHAPES["secrets"].index("tls"))
    machine.advance_time(2)
    assert machine.cluster.get("configmaps", "default", "settings").data == {"mode": "a"}
    assert machine.cluster.get("secrets", "default", "certs").type == "kubernetes.io/tls"
    assert machine.stats.rules.get("apply_config_data") == 2
