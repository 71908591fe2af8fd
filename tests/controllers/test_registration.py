"""One registration joins a component to the model (kmodel.component.registry): its name, process, service
account, RBAC rules, invariants and boot objects; the built-in components use the same registration."""

from __future__ import annotations

import pytest

from kmodel.apiserver.bootstrap_policy import CONTROLLER_ROLE_PREFIX, bootstrap_policy
from kmodel.component.registry import builtin_controller_roles
from kmodel.checker.session import Session
from kmodel.cli import main
from kmodel.cluster import DEFAULT_COMPONENTS, Cluster, ClusterConfig
from kmodel.component import registry
from kmodel.component.registry import ComponentError, resolve

LABELER = "tests.controllers.registered_labeler:PodLabeler"


def test_the_built_in_components_are_registered_with_their_process_account_and_role():
    assert DEFAULT_COMPONENTS == ("deployment", "endpoints", "endpointslice", "garbagecollector", "job", "kubelet",
                                  "namespace", "nodeipam", "nodelifecycle", "podgc", "proxy", "replicaset",
                                  "scheduler", "serviceaccount", "statefulset", "traffic", "ttlafterfinished")
    by_name = {r.name: r for r in registry.builtin_registrations()}
    assert "etcdctl" in by_name and not by_name["etcdctl"].default  # a variant's extra component
    kcm = sorted(n for n, r in by_name.items() if r.process == registry.KUBE_CONTROLLER_MANAGER)
    assert kcm == ["deployment", "endpoints", "endpointslice", "garbagecollector", "job", "namespace", "nodeipam",
                   "nodelifecycle", "podgc", "replicaset", "serviceaccount", "statefulset", "ttlafterfinished"]
    assert by_name["scheduler"].process == registry.KUBE_SCHEDULER
    assert registry.controller_service_accounts() == (
        "deployment-controller", "endpoint-controller", "endpointslice-controller", "generic-garbage-collector",
        "job-controller", "namespace-controller", "node-controller", "pod-garbage-collector", "replicaset-controller",
        "service-account-controller", "statefulset-controller", "ttl-after-finished-controller")
    roles = [o.metadata.name for o in bootstrap_policy(builtin_controller_roles()) if type(o).__name__ == "ClusterRole"]
    assert [r for r in roles if r.startswith(CONTROLLER_ROLE_PREFIX)] == [
        CONTROLLER_ROLE_PREFIX + a for a in registry.controller_service_accounts()]


def test_a_registered_controller_named_by_its_path_joins_the_controller_manager_with_its_role_and_boot_objects():
    config = ClusterConfig(nodes=1, apiservers=1, controller_managers=2,
                           components=("replicaset", "deployment", "scheduler", "kubelet", LABELER))
    cluster = Cluster(config)
    # one copy per controller manager, each a member of its process
    assert "controller/pod-labeler" in cluster.processes["kube-controller-manager"]
    assert "controller-2/pod-labeler" in cluster.processes["kube-controller-manager-2"]
    assert cluster.get("clusterroles", "", CONTROLLER_ROLE_PREFIX + "pod-labeler") is not None
    assert cluster.get("namespaces", "", "labeled") is not None  # its boot object


def test_a_registered_controllers_invariant_is_checked_wherever_its_cluster_runs_it():
    config = ClusterConfig(nodes=1, apiservers=1, components=(*DEFAULT_COMPONENTS, LABELER))
    session = Session(config, [])
    assert [inv.name for inv in session.safety] == ["labeled-pods-seen"]
    assert [inv.name for inv in Session(ClusterConfig(nodes=1, apiservers=1), []).safety] == []


def test_a_registered_controllers_sometimes_property_is_counted_by_a_machine_whose_cluster_runs_it():
    from kmodel.checker.machine import KmodelMachine

    class Labeling(KmodelMachine):
        config = ClusterConfig(nodes=1, apiservers=1, components=(*DEFAULT_COMPONENTS, LABELER))

    assert [s.name for s in Labeling.sometimes_list()][-1] == "pod-labeled"
    assert "pod-labeled" not in [s.name for s in KmodelMachine.sometimes_list()]


def test_what_a_process_imported_does_not_change_a_cluster_that_does_not_name_it():
    import tests.controllers.registered_labeler  # noqa: F401 - registered, but not named by the config

    cluster = Cluster(ClusterConfig(nodes=1, apiservers=1))
    assert cluster.get("clusterroles", "", CONTROLLER_ROLE_PREFIX + "pod-labeler") is None
    assert "pod-labeler" not in DEFAULT_COMPONENTS


@pytest.mark.parametrize("spec, message", [
    ("nosuch", "unknown component 'nosuch'"),
    ("tests.controllers.nosuch:make", "cannot import tests.controllers.nosuch"),
    ("tests.controllers.registered_labeler:missing", "registered_labeler has no missing"),
    ("tests.controllers.registered_labeler:not_registered", "not_registered is not a registered component"),
    (":make", "write a component of your own as package.module:factory"),
])
def test_a_spec_that_names_no_registered_component_is_one_line(spec, message):
    with pytest.raises(ComponentError, match=message):
        resolve(spec)


def test_an_entry_point_names_a_component(monkeypatch):
    from importlib import metadata

    point = metadata.EntryPoint("lonely-one", "tests.controllers.registered_labeler:make_nothing",
                                registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(metadata, "entry_points", lambda group: [point] if group == registry.ENTRY_POINT_GROUP else [])
    assert resolve("lonely-one").name == "lonely"


def test_two_registrations_that_give_one_account_different_rules_are_refused():
    a = registry.Registration("a", list, service_account="x", rbac_rules=("r1",), path="m:a")
    b = registry.Registration("b", list, service_account="x", rbac_rules=("r2",), path="m:b")
    with pytest.raises(ValueError, match="given different rbac_rules by m:a and m:b"):
        registry.roles_by_account([a, b])
    assert registry.roles_by_account([a, registry.Registration("c", list, service_account="x", path="m:c")]) == [
        ("x", ("r1",))]


@pytest.mark.parametrize("command", [["check", "--examples", "1"], ["simulate", "-f", "examples/web-service.yaml"]])
def test_a_bad_component_option_is_a_usage_error(command, capsys):
    assert main([*command, "--component", "tests.controllers.registered_labeler:not_registered"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--component" in err and "not a registered component" in err


def test_simulate_runs_a_component_named_on_the_command_line(monkeypatch):
    from kmodel.simulate import command

    ran = {}

    def simulate(manifests, **options):
        ran.update(options)
        cluster, report = real(manifests, **options)
        ran["labels"] = [p.metadata.labels.get("seen") for p in cluster.objects("pods", "default")]
        return cluster, report

    real = command.simulate
    monkeypatch.setattr(command, "simulate", simulate)
    assert main(["simulate", "-f", "examples/web-service.yaml", "--until", "40", "--component", LABELER]) == 0
    assert ran["components"] == (*DEFAULT_COMPONENTS, LABELER)
    assert ran["labels"] and set(ran["labels"]) == {"yes"}


def test_replaying_a_trace_whose_component_cannot_be_imported_here_is_a_usage_error(tmp_path, capsys):
    from kmodel.checker.actions import RunFair
    from kmodel.checker.trace import Trace, write_trace

    config = ClusterConfig(nodes=1, apiservers=1, components=(*DEFAULT_COMPONENTS, "nosuch.operator:make"))
    path = write_trace(Trace(config, (RunFair(1_000),)), tmp_path / "trace.json")
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "names the component 'nosuch.operator:make': cannot import" in err
