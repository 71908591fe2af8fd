"""The CRI-shaped runtime: state transitions, idempotence, ids, faults, networking through CNI, restarts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kmodel.kubelet import (
    BridgeCNI, ContainerConfig, ContainerMetadata, ContainerRuntime, ContainerState, CRIError, PodSandboxConfig,
    PodSandboxMetadata, PodSandboxState,
)

CREATED, RUNNING, EXITED = (
    ContainerState.CONTAINER_CREATED, ContainerState.CONTAINER_RUNNING, ContainerState.CONTAINER_EXITED)


def sandbox_config(name: str = "web-1", uid: str = "uid-1", host_network: bool = False) -> PodSandboxConfig:
    return PodSandboxConfig(
        PodSandboxMetadata(name, uid, "default"),
        labels={"io.kubernetes.pod.uid": uid, "io.kubernetes.pod.name": name},
        host_network=host_network,
    )


def container_config(name: str = "app", attempt: int = 0) -> ContainerConfig:
    return ContainerConfig(ContainerMetadata(name, attempt), image="nginx",
                           labels={"io.kubernetes.container.name": name})


def runtime(cidr: str = "10.244.1.0/24", disk: dict | None = None) -> ContainerRuntime:
    return ContainerRuntime(BridgeCNI(cidr, {} if disk is None else disk))


def test_lifecycle_states_and_times():
    rt = runtime()
    sid = rt.run_pod_sandbox(sandbox_config(), now=1000)
    sb = rt.pod_sandbox_status(sid)
    assert sb.state == PodSandboxState.SANDBOX_READY and sb.ip == "10.244.1.2" and sb.created_at == 1000
    cid = rt.create_container(sid, container_config(), now=1100)
    assert rt.container_status(cid).state == CREATED
    rt.start_container(cid, now=1200)
    st = rt.container_status(cid)
    assert st.state == RUNNING and st.started_at == 1200 and st.created_at == 1100
    rt.stop_container(cid, exit_code=0, now=2000)
    st = rt.container_status(cid)
    assert (st.state, st.exit_code, st.reason, st.finished_at) == (EXITED, 0, "Completed", 2000)
    rt.stop_container(cid, now=2100)  # idempotent
    assert rt.container_status(cid).finished_at == 2000
    rt.remove_container(cid)
    rt.remove_container(cid)  # idempotent
    with pytest.raises(CRIError) as e:
        rt.container_status(cid)
    assert e.value.code == "NotFound"
    assert str(e.value) == f'rpc error: code = NotFound desc = an error occurred when try to find container "{cid}": not found'


def test_ids_come_from_a_counter():
    rt = runtime()
    s1 = rt.run_pod_sandbox(sandbox_config("a", "ua"))
    c1 = rt.create_container(s1, container_config())
    s2 = rt.run_pod_sandbox(sandbox_config("b", "ub"))
    assert (s1, c1, s2) == ("s1", "c2", "s3")


def test_start_requires_created():
    rt = runtime()
    sid = rt.run_pod_sandbox(sandbox_config())
    cid = rt.create_container(sid, container_config())
    rt.start_container(cid)
    with pytest.raises(CRIError, match="CONTAINER_RUNNING state"):
        rt.start_container(cid)
    rt.exit_container(cid, 0)
    with pytest.raises(CRIError, match="CONTAINER_EXITED state"):
        rt.start_container(cid)


def test_same_name_and_attempt_is_reserved_and_restart_count_is_the_attempt():
    rt = runtime()
    sid = rt.run_pod_sandbox(sandbox_config())
    c0 = rt.create_container(sid, container_config("app", 0))
    with pytest.raises(CRIError, match="is reserved for"):
        rt.create_container(sid, container_config("app", 0))
    rt.start_container(c0)
    rt.fail_container(c0, 137, "OOMKilled")
    st = rt.container_status(c0)
    assert (st.state, st.exit_code, st.reason) == (EXITED, 137, "OOMKilled")
    c1 = rt.create_container(sid, container_config("app", 1))
    rt.start_container(c1)
    assert rt.restart_count("uid-1", "app") == 1
    assert rt.restart_count("uid-1", "other") == 0
    with pytest.raises(CRIError) as e:
        rt.fail_container(c0, 1)
    assert e.value.code == "FailedPrecondition"


def test_list_filters_in_creation_order():
    rt = runtime()
    sa = rt.run_pod_sandbox(sandbox_config("a", "ua"))
    sb = rt.run_pod_sandbox(sandbox_config("b", "ub"))
    ca = rt.create_container(sa, container_config("x"))
    cb = rt.create_container(sb, container_config("y"))
    rt.start_container(cb)
    assert [c.id for c in rt.list_containers()] == [ca, cb]
    assert [c.id for c in rt.list_containers(state=RUNNING)] == [cb]
    assert [c.id for c in rt.list_containers(pod_sandbox_id=sa)] == [ca]
    assert [c.id for c in rt.list_containers(label_selector={"io.kubernetes.container.name": "y"})] == [cb]
    assert [s.id for s in rt.list_pod_sandbox(label_selector={"io.kubernetes.pod.uid": "ub"})] == [sb]
    assert [s.id for s in rt.list_pod_sandbox(id=sa)] == [sa]


def test_stop_sandbox_kills_containers_releases_ip_once_and_remove_is_idempotent():
    disk: dict[str, str] = {}
    rt = runtime(disk=disk)
    sid = rt.run_pod_sandbox(sandbox_config())
    cid = rt.create_container(sid, container_config())
    rt.start_container(cid)
    assert "10.244.1.2" in disk
    rt.stop_pod_sandbox(sid, now=5)
    assert rt.pod_sandbox_status(sid).state == PodSandboxState.SANDBOX_NOTREADY
    assert rt.container_status(cid).state == EXITED and rt.container_status(cid).exit_code == 137
    assert "10.244.1.2" not in disk
    rt.stop_pod_sandbox(sid)  # idempotent
    with pytest.raises(CRIError, match="is not running"):
        rt.create_container(sid, container_config("late"))
    rt.remove_pod_sandbox(sid)
    rt.remove_pod_sandbox(sid)  # idempotent
    assert rt.list_pod_sandbox() == [] and rt.list_containers() == []
    with pytest.raises(CRIError) as e:
        rt.stop_pod_sandbox(sid)
    assert e.value.code == "NotFound"


def test_remove_running_sandbox_stops_it_first():
    disk: dict[str, str] = {}
    rt = runtime(disk=disk)
    sid = rt.run_pod_sandbox(sandbox_config())
    rt.start_container(rt.create_container(sid, container_config()))
    rt.remove_pod_sandbox(sid)
    assert rt.list_containers() == [] and BridgeCNI("10.244.1.0/24", disk).reserved() == {}


def test_host_network_sandbox_does_not_call_cni():
    disk: dict[str, str] = {}
    rt = runtime(disk=disk)
    sid = rt.run_pod_sandbox(sandbox_config(host_network=True))
    assert rt.pod_sandbox_status(sid).ips == () and disk == {}


def test_cni_failure_fails_the_sandbox_with_containerd_wrapping():
    rt = runtime("10.0.0.0/30")  # a /30 has exactly one usable address (.2)
    rt.run_pod_sandbox(sandbox_config("a", "ua"))
    with pytest.raises(CRIError) as e:
        rt.run_pod_sandbox(sandbox_config("b", "ub"))
    assert e.value.message == (
        'failed to setup network for sandbox "s2": plugin type="bridge" name="cbr0" failed (add): '
        "failed to allocate for range 0: no IP addresses available in range set: 10.0.0.1-10.0.0.2")
    assert [s.id for s in rt.list_pod_sandbox()] == ["s1"]


def test_runtime_outlives_the_kubelet_and_a_reboot_keeps_ips_until_the_sandbox_is_stopped():
    """The kubelet's memory is not here: after a kubelet restart it lists the same sandboxes and containers.
    A reboot ends every process but keeps the records and the CNI disk; the old sandbox's address stays reserved
    until the sandbox is stopped, when containerd calls CNI DEL with an empty netns path."""
    disk: dict[str, str] = {}
    rt = runtime(disk=disk)
    sid = rt.run_pod_sandbox(sandbox_config())
    cid = rt.create_container(sid, container_config())
    rt.start_container(cid)
    # "kubelet restart": nothing happens to the runtime; a fresh kubelet sees the same state.
    assert [c.id for c in rt.list_containers(state=RUNNING)] == [cid]
    rt.reboot(now=9)
    st = rt.container_status(cid)
    assert (st.state, st.exit_code, st.reason) == (EXITED, 255, "Unknown")
    assert rt.pod_sandbox_status(sid).state == PodSandboxState.SANDBOX_NOTREADY
    assert "10.244.1.2" in disk
    # A new sandbox continues the round robin after the still-reserved address.
    new = rt.run_pod_sandbox(sandbox_config("n", "un"))
    assert rt.pod_sandbox_status(new).ip == "10.244.1.3"
    rt.remove_pod_sandbox(sid)
    assert "10.244.1.2" not in disk and "10.244.1.3" in disk


def _scan(records, selector):
    return [r for r in records if all(r.labels.get(k) == v for k, v in selector.items())]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["run", "create", "start", "stop", "remove_sandbox", "remove_container",
                                           "reboot"]),
                          st.integers(0, 5), st.integers(0, 2)), max_size=40))
def test_lists_by_pod_uid_and_a_sandboxs_containers_match_a_scan_of_every_record(ops):
    # The runtime finds one pod's records through indexes; whatever the history, a list by the pod's uid (with
    # or without more labels) returns what a scan of every record would, in the same (creation) order.
    rt = runtime()
    for op, i, attempt in ops:
        sandboxes, containers = list(rt.sandboxes), list(rt.containers)
        uid = f"uid-{i % 3}"
        if op == "run":
            rt.run_pod_sandbox(sandbox_config(f"p-{i}", uid))
        elif op == "create" and sandboxes:
            sid = sandboxes[i % len(sandboxes)]
            config = ContainerConfig(ContainerMetadata("app", attempt), image="nginx",
                                     labels={"io.kubernetes.pod.uid": rt.sandboxes[sid].labels["io.kubernetes.pod.uid"],
                                             "io.kubernetes.container.name": "app"})
            try:
                rt.create_container(sid, config)
            except CRIError:
                pass  # not ready, or the name is reserved
        elif op == "start" and containers:
            try:
                rt.start_container(containers[i % len(containers)])
            except CRIError:
                pass
        elif op == "stop" and sandboxes:
            rt.stop_pod_sandbox(sandboxes[i % len(sandboxes)])
        elif op == "remove_sandbox" and sandboxes:
            rt.remove_pod_sandbox(sandboxes[i % len(sandboxes)])
        elif op == "remove_container" and containers:
            rt.remove_container(containers[i % len(containers)])
        elif op == "reboot":
            rt.reboot()
        for u in ("uid-0", "uid-1", "uid-2", "uid-none"):
            for selector in ({"io.kubernetes.pod.uid": u},
                             {"io.kubernetes.pod.uid": u, "io.kubernetes.container.name": "app"}):
                assert rt.list_pod_sandbox(label_selector=selector) == _scan(rt.sandboxes.values(), selector)
                assert rt.list_containers(label_selector=selector) == _scan(rt.containers.values(), selector)
        for sid in rt.sandboxes:
            assert rt.sandbox_containers(sid) == [c for c in rt.containers.values() if c.pod_sandbox_id == sid]
    assert all(rt.sandboxes[rt.containers[c].pod_sandbox_id] for c in rt.containers)
