"""kmodel.serve.containers on its own: upstream's checks of the pod before the kubelet (the container named, the
node assigned), then the model's answer that it runs no containers."""

from __future__ import annotations

import attrs
import pytest

from kmodel.objects import Container, ObjectMeta, Pod, PodSpec
from kmodel.serve.containers import SUBRESOURCES, no_containers


def pod(*names: str, init: tuple[str, ...] = (), node: str = "node-1") -> Pod:
    return Pod(metadata=ObjectMeta(name="p", namespace="default"),
               spec=PodSpec(containers=tuple(Container(name=n, image="busybox") for n in names),
                            init_containers=tuple(Container(name=n, image="busybox") for n in init), node_name=node))


@pytest.mark.parametrize("subresource", SUBRESOURCES)
def test_a_scheduled_pod_s_answer_is_a_500_saying_why(subresource: str) -> None:
    status = no_containers(subresource, pod("web"), {})
    assert (status.code, status.reason) == (500, "")
    assert status.message.startswith("kmodel serve: the model's kubelet on node node-1 runs no containers, so pod p")


def test_an_unscheduled_pod_has_an_empty_log_and_nothing_to_exec_in() -> None:
    unscheduled = pod("web", node="")
    assert no_containers("log", unscheduled, {}) is None
    for subresource in ("exec", "attach", "portforward"):
        status = no_containers(subresource, unscheduled, {})
        assert (status.code, status.reason, status.message) == (400, "BadRequest", "pod p does not have a host assigned")


def test_the_container_must_be_the_pod_s() -> None:
    two = pod("web", "sidecar", init=("setup",))
    assert no_containers("log", two, {"container": "sidecar"}).code == 500
    assert no_containers("exec", two, {"container": "setup"}).code == 500  # init containers count
    wrong = no_containers("log", two, {"container": "other"})
    assert (wrong.code, wrong.message) == (400, "container other is not valid for pod p")
    unnamed = no_containers("attach", two, {})
    assert unnamed.message == ("a container name must be specified for pod p, choose one of: [web sidecar] or one of "
                               "the init containers: [setup]")
    assert no_containers("log", attrs.evolve(two, spec=attrs.evolve(two.spec, init_containers=())), {}).message \
        == "a container name must be specified for pod p, choose one of: [web sidecar]"
    # port-forward names no container
    assert no_containers("portforward", two, {"container": "other"}).code == 500
