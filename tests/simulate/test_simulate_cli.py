"""`kmodel simulate` end to end: exit codes, the JSON report's shape, the readable tables, faults."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kmodel.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run_json(capsys, *argv: str) -> tuple[int, dict]:
    code = main(["simulate", *argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_accepted_manifests_exit_0_and_report_every_section(capsys):
    code, report = run_json(capsys, "-f", str(EXAMPLES / "web-service.yaml"), "--nodes", "3", "--until", "60")
    assert code == 0
    assert set(report) == {"time", "nodes", "pods", "deployments", "replicasets", "services", "proxy", "events",
                           "leases", "custom_objects", "rejected", "control_plane"}
    # the lone kube-controller-manager and kube-scheduler each hold their leader-election Lease
    assert [(lease["name"], lease["holder"].startswith("control-plane-1_")) for lease in report["leases"]] == [
        ("kube-controller-manager", True), ("kube-scheduler", True)]
    assert report["time"] == 60
    assert [n["name"] for n in report["nodes"]] == ["node-1", "node-2", "node-3"]
    assert all(n["conditions"]["Ready"] == "True" and n["podCIDR"] for n in report["nodes"])
    pods = report["pods"]
    assert len(pods) == 3
    assert set(pods[0]) == {"namespace", "name", "phase", "node", "ip", "terminating", "conditions", "reason",
                            "message"}
    assert {p["phase"] for p in pods} == {"Running"}
    [svc] = [s for s in report["services"] if s["name"] == "storefront"]
    assert sorted(svc["endpoints"]) == sorted(f"{p['ip']}:80" for p in pods)
    assert set(report["proxy"]) == {"node-1", "node-2", "node-3"}
    assert all(sorted(rules[f"{svc['clusterIP']}:80"]) == sorted(svc["endpoints"])
               for rules in report["proxy"].values())
    assert {"time", "type", "reason", "object", "message"} == set(report["events"][0])
    assert report["rejected"] == []


def test_the_top_level_of_examples_is_one_application_that_applies_cleanly(capsys):
    """`-f examples/` reads the folder's top level only, as `kubectl apply -f` does: every object is accepted and
    every pod runs; the manifests refused on purpose live in subfolders."""
    code, report = run_json(capsys, "-f", str(EXAMPLES), "--nodes", "3", "--until", "60")
    assert code == 0 and report["rejected"] == []
    assert {p["phase"] for p in report["pods"]} == {"Running"} and len(report["pods"]) == 13
    assert sorted(d["name"] for d in report["deployments"]) == ["cart", "storefront", "web"]


def test_events_of_two_objects_of_one_name_both_survive(capsys):
    """The Deployment `web` and the StatefulSet `web` get their first events in the same millisecond from two
    recorders: their names (`web.<UnixNano hex>`) differ, as upstream's do, so neither create meets a 409."""
    code, report = run_json(capsys, "-f", str(EXAMPLES), "--nodes", "3", "--until", "60")
    assert code == 0
    messages = {(e["object"], e["message"]) for e in report["events"]}
    assert ("statefulset/web", "create Pod web-0 in StatefulSet web successful") in messages
    assert any(obj == "deployment/web" and m.startswith("Scaled up replica set web-") for obj, m in messages)


def test_rejected_requests_exit_1_and_the_rest_still_runs(capsys):
    code, report = run_json(capsys, "-f", str(EXAMPLES / "refused" / "restricted-namespace.yaml"), "-f",
                            str(EXAMPLES / "anti-patterns" / "web-hostport.yaml"), "--nodes", "2", "--until", "30")
    assert code == 1
    [rejected] = report["rejected"]
    assert rejected["code"] == 403 and rejected["reason"] == "Forbidden"
    assert rejected["object"] == "pod/ledger-hostnet"
    phases = sorted(p["phase"] for p in report["pods"])
    assert phases == ["Pending", "Running", "Running"]
    [pending] = [p for p in report["pods"] if p["phase"] == "Pending"]
    assert pending["reason"] == "Unschedulable"
    assert "didn't have free ports for the requested pod ports" in pending["message"]


def test_rbac_decides_for_the_user_given_with_as(capsys, tmp_path):
    code, report = run_json(capsys, "-f", str(EXAMPLES / "00-namespace-shop.yaml"), "--as", "alice")
    assert code == 1
    [rejected] = report["rejected"]
    assert rejected["code"] == 403
    assert 'User "alice" cannot' in rejected["message"]


def test_a_partitioned_node_is_reported_unknown_with_its_taints(capsys):
    code, report = run_json(capsys, "-f", str(EXAMPLES / "web-service.yaml"), "--until", "200",
                            "--fault", "partition:node-2@60")
    assert code == 0
    node2 = next(n for n in report["nodes"] if n["name"] == "node-2")
    assert node2["conditions"]["Ready"] == "Unknown"
    assert "node.kubernetes.io/unreachable:NoExecute" in node2["taints"]
    assert any(e["reason"] == "NodeNotReady" and e["object"] == "node/node-2" for e in report["events"])


def test_a_lost_machines_pods_are_evicted_and_replaced_and_its_node_stays(capsys):
    code, report = run_json(capsys, "-f", str(EXAMPLES / "web-service.yaml"), "--until", "420",
                            "--fault", "lose:node-2@30")
    assert code == 0
    node2 = next(n for n in report["nodes"] if n["name"] == "node-2")  # no one deleted it
    assert node2["conditions"]["Ready"] == "Unknown"
    assert "node.kubernetes.io/unreachable:NoExecute" in node2["taints"]
    on_node2 = [p for p in report["pods"] if p["node"] == "node-2"]
    assert on_node2 and all(p["terminating"] for p in on_node2)  # evicted; no kubelet left to finish them
    running = [p for p in report["pods"] if p["phase"] == "Running" and not p["terminating"]]
    assert len(running) == 3 and {p["node"] for p in running} <= {"node-1", "node-3"}
    assert any(e["reason"] == "TaintManagerEviction" for e in report["events"])


def test_a_removed_machine_is_gone_with_its_node(capsys):
    code, report = run_json(capsys, "-f", str(EXAMPLES / "web-service.yaml"), "--until", "150",
                            "--fault", "remove:node-2@30")
    assert code == 0
    assert [n["name"] for n in report["nodes"]] == ["node-1", "node-3"]
    assert {p["node"] for p in report["pods"]} <= {"node-1", "node-3"}  # PodGC took node-2's


def test_tables_without_json(capsys):
    code = main(["simulate", "-f", str(EXAMPLES / "web-service.yaml"), "--until", "30"])
    out = capsys.readouterr().out
    assert code == 0
    for heading in ("NODES", "PODS", "SERVICES", "PROXY RULES", "EVENTS"):
        assert f"\n{heading}\n" in out
    assert "storefront" in out and "Running" in out


def test_the_installed_command_runs_and_the_same_seed_prints_the_same_report(tmp_path):
    argv = [sys.executable, "-m", "kmodel", "simulate", "-f", str(EXAMPLES / "web-service.yaml"), "--json",
            "--until", "20"]
    first = subprocess.run(argv, capture_output=True, text=True, env={"PYTHONHASHSEED": "1", "PATH": "/usr/bin"})
    second = subprocess.run(argv, capture_output=True, text=True, env={"PYTHONHASHSEED": "2", "PATH": "/usr/bin"})
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout


def test_deployments_and_replicasets_are_shown(capsys):
    code, report = run_json(capsys, "-f", str(EXAMPLES / "web-service.yaml"), "--until", "60")
    assert code == 0
    [deployment] = report["deployments"]
    assert (deployment["name"], deployment["replicas"], deployment["ready"], deployment["available"]) == (
        "storefront", 3, 3, 3)
    [rs] = report["replicasets"]
    assert rs["owner"] == "deployment/storefront" and (rs["desired"], rs["current"], rs["ready"]) == (3, 3, 3)
    assert main(["simulate", "-f", str(EXAMPLES / "web-service.yaml"), "--until", "60"]) == 0
    text = capsys.readouterr().out
    assert "DEPLOYMENTS\nNAMESPACE   NAME         READY   UP-TO-DATE   AVAILABLE\ndefault     storefront   3/3" in text
    assert f"REPLICASETS\n" in text and f"{rs['name']}   3         3         3       deployment/storefront" in text


def test_a_control_plane_that_is_up_says_so(capsys):
    code, report = run_json(capsys, "-f", str(EXAMPLES / "web-service.yaml"), "--until", "30")
    plane = report["control_plane"]
    assert plane["etcd"] == "up" and plane["serving"] and plane["down"] == []
    assert all(a["up"] and a["reachable"] and a["reaches_etcd"] for a in plane["apiservers"])


def test_a_crashed_etcd_is_a_control_plane_that_is_down(capsys):
    argv = ["-f", str(EXAMPLES / "web-service.yaml"), "--until", "120", "--fault", "crash:etcd@60"]
    code, report = run_json(capsys, *argv)
    plane = report["control_plane"]
    assert plane["etcd"] == "down" and not plane["serving"] and "etcd" in plane["down"]
    main(["simulate", *argv])
    text = capsys.readouterr().out
    assert "CONTROL PLANE\nCOMPONENT     STATUS\netcd          Down\napiserver-0   Up, etcd down" in text
    assert "The control plane is down (etcd is down): kubectl get would fail." in text


def test_no_api_server_reachable_is_a_control_plane_that_is_down(capsys):
    argv = ["-f", str(EXAMPLES / "web-service.yaml"), "--until", "90", "--fault", "partition:apiserver-0@60"]
    code, report = run_json(capsys, *argv)
    plane = report["control_plane"]
    assert plane["etcd"] == "up" and not plane["serving"]
    assert [a["reachable"] for a in plane["apiservers"]] == [False]
    main(["simulate", *argv])
    text = capsys.readouterr().out
    assert "apiserver-0   Up, cut off from kubectl" in text
    assert "no API server is up, reachable and reaching etcd" in text


def test_help_lists_every_fault_action(capsys):
    from kmodel.simulate.inputs import FAULT_ACTIONS

    try:
        main(["simulate", "--help"])
    except SystemExit as exc:
        assert exc.code == 0
    text = capsys.readouterr().out
    for action in FAULT_ACTIONS:
        assert f"\n  {action} " in text, action


def test_a_configmap_a_statefulset_and_an_unknown_kind_apply_what_can_be_applied_and_exit_1(capsys, tmp_path):
    (tmp_path / "a-config.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-config, namespace: default}\ndata: {mode: fast}\n")
    (tmp_path / "b-statefulset.yaml").write_text((EXAMPLES / "statefulset.yaml").read_text())
    (tmp_path / "c-widget.yaml").write_text(
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1, namespace: default}\n")
    code, report = run_json(capsys, "-f", str(tmp_path), "--nodes", "2", "--until", "60")
    assert code == 1
    [rejected] = report["rejected"]
    assert rejected["reason"] == "NoKindMatch" and 'no matches for kind "Widget"' in rejected["message"]
    assert [(p["name"], p["phase"]) for p in report["pods"]] == [("web-0", "Running"), ("web-1", "Running"),
                                                                  ("web-2", "Running")]
    assert [s["name"] for s in report["services"] if s["name"] == "web"] == ["web"]


def test_a_rejected_manifest_is_told_on_stderr_as_kubectl_tells_it(capsys):
    for fmt in ([], ["--json"]):
        code = main(["simulate", "-f", str(EXAMPLES / "refused" / "restricted-namespace.yaml"), "--nodes", "1",
                     "--until", "5", *fmt])
        assert code == 1
        out, err = capsys.readouterr()
        [line] = err.splitlines()
        assert line.startswith("Error from server (Forbidden): ") and line.endswith(" [pod/ledger-hostnet]")
        if not fmt:
            assert out.rstrip().endswith("REJECTED\n" + line)  # and under REJECTED, as before
    main(["simulate", "-f", str(EXAMPLES / "web-service.yaml"), "--nodes", "1", "--until", "5"])
    assert capsys.readouterr().err == ""
