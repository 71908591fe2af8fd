"""Run-to-completion pods (kmodel.kubelet.completion): a container of a Never or OnFailure pod ends by itself after
its run time with its exit code; an Always pod's containers serve until stopped."""

from __future__ import annotations

from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Apply
from kmodel.kubelet.runtime import POD_UID_LABEL


def pod(name: str, policy: str, **annotations: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "annotations": annotations},
            "spec": {"restartPolicy": policy, "containers": [{"name": "c", "image": "busybox"}]}}


def statuses(c: Cluster) -> dict:
    return {p.metadata.name: (p.status.phase, p.status.container_statuses[0]) for p in c.objects("pods", "default")}


def test_pods_end_by_their_run_time_and_exit_code_and_servers_keep_running():
    c = Cluster(ClusterConfig(nodes=1))
    c.submit(Apply(pod("done", "Never")))
    c.submit(Apply(pod("broken", "Never", **{"kmodel.io/exit-code": "3", "kmodel.io/run-seconds": "2"})))
    c.submit(Apply(pod("retried", "OnFailure", **{"kmodel.io/exit-code": "1", "kmodel.io/run-seconds": "1"})))
    c.submit(Apply(pod("server", "Always")))
    c.run_for(30_000)
    late = statuses(c)
    phase, done = late["done"]
    assert phase == "Succeeded" and done.state.terminated.exit_code == 0
    assert done.state.terminated.reason == "Completed"
    # the default run time; started at 0, reported as None (the CRI's unset time), as the broken pod's
    assert done.state.terminated.finished_at - (done.state.terminated.started_at or 0) == 5_000
    phase, broken = late["broken"]
    assert phase == "Failed" and broken.state.terminated.exit_code == 3 and broken.restart_count == 0
    assert broken.state.terminated.finished_at - (broken.state.terminated.started_at or 0) == 2_000  # None: at 0
    phase, retried = late["retried"]
    assert phase == "Running" and retried.restart_count >= 2  # OnFailure: restarted, with back-off
    phase, server = late["server"]
    assert phase == "Running" and server.state.running is not None


def test_an_annotation_that_is_not_a_whole_number_counts_as_absent():
    c = Cluster(ClusterConfig(nodes=1))
    c.submit(Apply(pod("odd", "Never", **{"kmodel.io/exit-code": "-1", "kmodel.io/run-seconds": "soon"})))
    c.run_for(20_000)
    phase, status = statuses(c)["odd"]
    assert phase == "Succeeded" and status.state.terminated.exit_code == 0


def test_an_on_failure_pod_whose_containers_succeeded_gets_no_new_sandbox():
    # computePodActions (1.31): under OnFailure a container that exited 0 is not started again, and with none to
    # start no sandbox is made: the pod stays Succeeded, its one sandbox stopped, its writes done
    c = Cluster(ClusterConfig(nodes=1))
    c.submit(Apply(pod("job-like", "OnFailure", **{"kmodel.io/run-seconds": "1"})))
    c.run_for(30_000)
    [p] = c.objects("pods", "default")
    assert p.status.phase == "Succeeded"
    c.run_for(30_000)
    [later] = c.objects("pods", "default")
    assert later.metadata.resource_version == p.metadata.resource_version
    kubelet = next(x for x in c.components if x.name == "kubelet/node-1")
    assert len(kubelet.runtime.list_pod_sandbox(label_selector={POD_UID_LABEL: p.metadata.uid})) == 1
