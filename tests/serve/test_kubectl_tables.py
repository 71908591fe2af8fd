"""kubectl's tables against `kmodel serve`: `get events`, `get svc,rs,sts,ns,cm,leases,crd`, `get pods --sort-by`,
`get pods -w` and a custom resource print upstream's columns, and their cells say what the objects hold
(read back with -o json)."""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.serve.conftest import Served, serve
from tests.serve.test_kubectl import EXAMPLES, KUBECTL, kubectl, pytestmark  # noqa: F401  (skips without kubectl)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A session with the examples applied and rolled out."""
    for served in serve(tmp_path_factory.mktemp("tables"), speed=5.0):
        kubectl(served, "apply", "-f", str(EXAMPLES))
        kubectl(served, "rollout", "status", "deployment/web", "--timeout=60s")
        kubectl(served, "rollout", "status", "statefulset/web", "--timeout=60s")
        kubectl(served, "rollout", "status", "deployment/storefront", "--timeout=60s")
        kubectl(served, "rollout", "status", "deployment/cart", "-n", "shop", "--timeout=60s")
        yield served


def columns(line: str) -> list[str]:
    """The cells of a line kubectl printed (cells are two or more spaces apart)."""
    return re.split(r"\s{2,}", line.strip())


def tables(text: str) -> dict[tuple[str, ...], list[list[str]]]:
    """The tables of one kubectl get of several kinds (separated by blank lines): header -> rows, each row's cells
    cut at the header's column starts (a cluster-scoped kind's NAMESPACE cells are empty)."""
    out = {}
    for block in text.strip().split("\n\n"):
        header, *lines = block.splitlines()
        starts = [m.start() for m in re.finditer(r"\S+(?: \S+)*", header)]
        bounds = list(zip(starts, [*starts[1:], None]))
        out[tuple(columns(header))] = [[line[a:b].strip() for a, b in bounds] for line in lines]
    return out


def objects(served: Served, *args: str) -> list[dict]:
    return json.loads(kubectl(served, "get", *args, "-o", "json").stdout)["items"]


def test_get_events_prints_last_seen_type_reason_object_message(cluster: Served) -> None:
    def held() -> set[tuple]:
        return {(e["type"], e["reason"], f"{e['involvedObject']['kind'].lower()}/{e['involvedObject']['name']}",
                 e["message"]) for e in objects(cluster, "events")}

    before = held()
    lines = kubectl(cluster, "get", "events").stdout.splitlines()
    assert columns(lines[0]) == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    printed = {tuple(columns(line)[1:]) for line in lines[1:]}
    assert before <= printed <= held() and len(printed) > 3  # events are only added meanwhile
    wide = kubectl(cluster, "get", "events", "-o", "wide").stdout.splitlines()
    assert columns(wide[0]) == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "SUBOBJECT", "SOURCE", "MESSAGE",
                                "FIRST SEEN", "COUNT", "NAME"]


def test_get_pods_sorted_by_node_name(cluster: Served) -> None:
    lines = kubectl(cluster, "get", "pods", "-o", "wide", "--sort-by=.spec.nodeName").stdout.splitlines()
    assert columns(lines[0])[:7] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE"]
    rows = [columns(line) for line in lines[1:]]
    nodes = [row[6] for row in rows]
    assert nodes == sorted(nodes) and len(set(nodes)) == 3
    on = {p["metadata"]["name"]: p["spec"]["nodeName"] for p in objects(cluster, "pods")}
    assert {row[0]: row[6] for row in rows} == on


def test_get_several_kinds_prints_each_kinds_columns(cluster: Served) -> None:
    kubectl(cluster, "create", "configmap", "settings", "--from-literal=a=1", "--from-literal=b=2")
    printed = tables(kubectl(cluster, "get", "svc,rs,sts,ns,cm,leases,crd", "-A").stdout)
    svc, rs, sts, ns, cms, leases, crds = printed.values()
    assert list(printed) == [
        ("NAMESPACE", "NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"),
        ("NAMESPACE", "NAME", "DESIRED", "CURRENT", "READY", "AGE"),
        ("NAMESPACE", "NAME", "READY", "AGE"),
        ("NAMESPACE", "NAME", "STATUS", "AGE"),  # kubectl -A gives cluster-scoped kinds an empty NAMESPACE
        ("NAMESPACE", "NAME", "DATA", "AGE"),
        ("NAMESPACE", "NAME", "HOLDER", "AGE"),
        ("NAMESPACE", "NAME", "CREATED AT")]
    services = {s["metadata"]["name"]: s["spec"] for s in objects(cluster, "svc", "-A")}
    for row in svc:
        spec = services[row[1].split("/")[-1]]
        ports = ",".join(f"{p['port']}/{p['protocol']}" for p in spec["ports"])
        assert row[2:6] == [spec["type"], spec["clusterIP"], "<none>", ports]
    replicas = {r["metadata"]["name"]: r for r in objects(cluster, "rs", "-A")}
    for row in rs:
        r = replicas[row[1].split("/")[-1]]
        assert row[2:5] == [str(r["spec"]["replicas"]), str(r["status"]["replicas"]),
                            str(r["status"].get("readyReplicas", 0))]
    assert [row[1:3] for row in sts] == [["statefulset.apps/web", "3/3"]]
    assert {row[1]: row[2] for row in ns}["namespace/shop"] == "Active" and all(row[0] == "" for row in ns)
    assert [row[:3] for row in cms] == [["default", "configmap/settings", "2"]]
    node_leases = [row[:3] for row in leases if row[0] == "kube-node-lease"]  # each kubelet holds its own
    assert node_leases == [["kube-node-lease", f"lease.coordination.k8s.io/node-{i}", f"node-{i}"] for i in (1, 2, 3)]
    (crd,) = crds
    assert crd[1] == "customresourcedefinition.apiextensions.k8s.io/databases.example.com"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", crd[2])


def test_a_custom_resource_without_printer_columns_prints_name_and_age(cluster: Served, tmp_path: Path) -> None:
    db = tmp_path / "db.yaml"
    db.write_text("apiVersion: example.com/v1\nkind: Database\nmetadata:\n  name: orders\nspec:\n  engine: postgres\n")
    kubectl(cluster, "apply", "-f", str(db))
    lines = kubectl(cluster, "get", "databases").stdout.splitlines()
    assert columns(lines[0]) == ["NAME", "AGE"] and columns(lines[1])[0] == "orders"


def test_get_pods_watch_prints_new_pods_under_one_header(cluster: Served, tmp_path: Path) -> None:
    watcher = subprocess.Popen([KUBECTL, "--kubeconfig", str(cluster.kubeconfig), "get", "pods", "-w", "-l",
                                "app=watched"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(watcher.stdout), daemon=True)  # type: ignore[arg-type]
    reader.start()
    try:
        time.sleep(1.0)  # kubectl lists (no pod: it says so on stderr), then watches
        pod = tmp_path / "pod.yaml"
        pod.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: watched\n  labels: {app: watched}\n"
                       "spec:\n  containers:\n  - name: c\n    image: nginx\n")
        kubectl(cluster, "apply", "-f", str(pod))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any(columns(x)[2:3] == ["Running"] for x in list(lines)[1:]):
            time.sleep(0.2)
    finally:
        watcher.terminate()
        watcher.wait(timeout=10)
    assert columns(lines[0]) == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    rows = [columns(line) for line in lines[1:]]
    assert rows and all(row[0] == "watched" for row in rows), lines
    assert rows[-1][1:4] == ["1/1", "Running", "0"]
