"""`kmodel replay` given the trace of a `kmodel serve` session: a session driven by the official Python client,
stopped, and its trace run again without the client ends on the session's digest and in the session's state."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from kmodel.cli import main
from kmodel.serve.kubeconfig import write_kubeconfig
from kmodel.serve.recording import read_recording, replay_cluster
from kmodel.serve.session import ServeSession
from kmodel.simulate.observe import snapshot

kubernetes = pytest.importorskip("kubernetes")
from kubernetes import client  # noqa: E402

from .kube_client import api_client  # noqa: E402

#: the report's keys that say what the cluster held (the others say how the session was served)
STATE = ("time", "nodes", "pods", "deployments", "replicasets", "services", "proxy", "events", "leases",
         "control_plane")


def deployment(replicas: int) -> client.V1Deployment:
    labels = {"app": "api"}
    container = client.V1Container(name="api", image="registry.example/api:1.0")
    return client.V1Deployment(
        metadata=client.V1ObjectMeta(name="api"),
        spec=client.V1DeploymentSpec(replicas=replicas, selector=client.V1LabelSelector(match_labels=labels),
                                     template=client.V1PodTemplateSpec(metadata=client.V1ObjectMeta(labels=labels),
                                                                       spec=client.V1PodSpec(containers=[container]))))


def ready(apps: client.AppsV1Api, replicas: int) -> None:
    deadline = time.monotonic() + 30
    while (apps.read_namespaced_deployment("api", "default").status.ready_replicas or 0) != replicas:
        assert time.monotonic() < deadline, "the deployment did not become ready"
        time.sleep(0.1)


@pytest.fixture(scope="module")
def session_trace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """A short session: a Deployment created, rolled out, scaled down, one of its pods deleted, a ConfigMap
    created; then stopped, its report and trace written as `kmodel serve` writes them."""
    folder = tmp_path_factory.mktemp("serve-replay")
    session = ServeSession(nodes=2, tls_dir=folder, speed=10.0)
    write_kubeconfig(folder / "kubeconfig", session.url, session.users, session.certificate)
    session.start()
    try:
        api = api_client(folder / "kubeconfig")
        apps, core = client.AppsV1Api(api), client.CoreV1Api(api)
        apps.create_namespaced_deployment("default", deployment(3))
        ready(apps, 3)
        apps.patch_namespaced_deployment_scale("api", "default", {"spec": {"replicas": 2}})
        ready(apps, 2)
        victim = core.list_namespaced_pod("default", label_selector="app=api").items[0].metadata.name
        core.delete_namespaced_pod(victim, "default", grace_period_seconds=0)
        core.create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="c"),
                                                                         data={"k": "v"}))
        time.sleep(0.5)
    finally:
        report = session.stop()
    assert report["model_error"] is None and report["requests"] >= 6
    trace = folder / "trace.json"
    session.recorder.write(trace, report["digest"])
    return trace, report


def test_kmodel_replay_runs_a_serve_session_again_to_its_digest(session_trace, capsys) -> None:
    trace, report = session_trace
    assert main(["replay", str(trace)]) == 0
    out = capsys.readouterr().out
    assert f"digest {report['digest']} (the same as recorded)" in out
    assert f"to logical time {report['logical_ms'] / 1000:g} s" in out


def test_the_replayed_cluster_is_the_session_s_cluster(session_trace) -> None:
    trace, report = session_trace
    cluster = replay_cluster(read_recording(trace))
    assert cluster.now == report["logical_ms"] and cluster.loop.events_applied == report["events_applied"]
    replayed = snapshot(cluster)
    assert {key: replayed[key] for key in STATE} == {key: report[key] for key in STATE}
    assert len([p for p in replayed["pods"] if p["name"].startswith("api-")]) >= 2
    assert cluster.get("configmaps", "default", "c").data == {"k": "v"}


def test_a_changed_session_trace_replays_elsewhere_and_exits_1(session_trace, tmp_path, capsys) -> None:
    trace, report = session_trace
    data = json.loads(trace.read_text())
    create = next(op for op in data["ops"] if op[0] == "submit" and op[1]["resource"] == "configmaps")
    create[1]["body"]["data"] = {"k": "changed"}
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(data))
    assert main(["replay", str(changed)]) == 1
    assert f"(recorded: {report['digest']})" in capsys.readouterr().out


def test_checker_options_on_a_serve_trace_exit_2_with_one_line(session_trace, capsys) -> None:
    trace, _ = session_trace
    assert main(["replay", str(trace), "--lenient"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line == (f"kmodel replay: error: {trace} is the trace of a kmodel serve run, which --lenient cannot "
                    "steer (only the checker's traces): replay it without it")


def test_a_session_trace_records_leader_election_and_one_without_it_replays_without_election(session_trace) -> None:
    trace, _ = session_trace
    data = read_recording(trace)
    assert data["leader_elect"] is True and replay_cluster(data).config.leader_elect is True
    older = {key: value for key, value in data.items() if key != "leader_elect"}  # recorded before the default
    assert replay_cluster(older).config.leader_elect is False
