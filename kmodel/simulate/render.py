"""The readable form of a simulation report: kubectl-style tables, one section per kind of thing."""

from __future__ import annotations

from typing import Sequence


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Columns padded as kubectl pads them (three spaces between columns)."""
    cells = [list(headers)] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["   ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    return "\n".join(lines)


def _node_status(conditions: dict) -> str:
    ready = conditions.get("Ready")
    return "Ready" if ready == "True" else ("NotReady" if ready else "Unknown")


def _pod_status(p: dict) -> str:
    if p["terminating"]:
        return "Terminating"
    if p["phase"] == "Pending" and p["reason"]:
        return f"Pending ({p['reason']})"
    return p["phase"] or "Pending"


def _apiserver_status(a: dict, etcd_up: bool) -> str:
    if not a["up"]:
        return "Down"
    if not a["reachable"]:
        return "Up, cut off from kubectl"
    if not a["reaches_etcd"]:
        return "Up, cannot reach etcd"
    return "Up" if etcd_up else "Up, etcd down"


def control_plane_section(plane: dict) -> str:
    """Whether kubectl could be answered, and why not: etcd, each API server, then every other component down."""
    etcd_up = plane["etcd"] == "up"
    rows = [["etcd", "Up" if etcd_up else "Down"]]
    rows += [[a["name"], _apiserver_status(a, etcd_up)] for a in plane["apiservers"]]
    text = "CONTROL PLANE\n" + table(["COMPONENT", "STATUS"], rows)
    if not plane["serving"]:
        why = "etcd is down" if not etcd_up else "no API server is up, reachable and reaching etcd"
        text += (f"\nThe control plane is down ({why}): kubectl get would fail. The tables below show the "
                 "store's last state.")
    others = [name for name in plane["down"] if name != "etcd" and not name.startswith("apiserver-")]
    if others:
        text += f"\nAlso down: {', '.join(others)}"
    return text


def render(report: dict) -> str:
    sections = [f"Simulated until {report['time']:g} s of logical time."]
    plane = report.get("control_plane")
    if plane is not None:
        sections.append(control_plane_section(plane))
    sections.append("NODES\n" + table(
        ["NAME", "STATUS", "POD-CIDR", "TAINTS"],
        [[n["name"], _node_status(n["conditions"]), n["podCIDR"] or "<none>", ",".join(n["taints"]) or "<none>"]
         for n in report["nodes"]]))
    sections.append("PODS\n" + table(
        ["NAMESPACE", "NAME", "STATUS", "NODE", "IP", "MESSAGE"],
        [[p["namespace"], p["name"], _pod_status(p), p["node"] or "<none>", p["ip"] or "<none>", p["message"]]
         for p in report["pods"]]))
    sections.append("DEPLOYMENTS\n" + table(
        ["NAMESPACE", "NAME", "READY", "UP-TO-DATE", "AVAILABLE"],
        [[d["namespace"], d["name"], f"{d['ready']}/{d['replicas']}", d["updated"], d["available"]]
         for d in report.get("deployments", [])]))
    sections.append("REPLICASETS\n" + table(
        ["NAMESPACE", "NAME", "DESIRED", "CURRENT", "READY", "CONTROLLED-BY"],
        [[r["namespace"], r["name"], r["desired"], r["current"], r["ready"], r["owner"] or "<none>"]
         for r in report.get("replicasets", [])]))
    sections.append("SERVICES\n" + table(
        ["NAMESPACE", "NAME", "CLUSTER-IP", "ENDPOINTS"],
        [[s["namespace"], s["name"], s["clusterIP"] or "None", ",".join(s["endpoints"]) or "<none>"]
         for s in report["services"]]))
    proxy_rows = [[node, service, ",".join(backends) or "<none>"]
                  for node, rules in report["proxy"].items() for service, backends in rules.items()]
    sections.append("PROXY RULES\n" + table(["NODE", "SERVICE", "BACKENDS"], proxy_rows))
    if report.get("leases"):  # only when something elects a leader
        sections.append("LEASES\n" + table(
            ["NAMESPACE", "NAME", "HOLDER", "RENEWED"],
            [[lease["namespace"], lease["name"], lease["holder"] or "<none>",
              f"{lease['renewTime']:g}s" if lease["renewTime"] is not None else "<none>"]
             for lease in report["leases"]]))
    if report.get("custom_objects"):  # only when a CRD serves objects
        sections.append("CUSTOM OBJECTS\n" + table(
            ["NAMESPACE", "KIND", "NAME"],
            [[o["namespace"] or "<none>", f"{o['kind']}.{o['apiVersion'].rpartition('/')[0]}", o["name"]]
             for o in report["custom_objects"]]))
    sections.append("EVENTS\n" + table(
        ["TIME", "TYPE", "REASON", "OBJECT", "MESSAGE"],
        [[f"{e['time']:g}s" if e["time"] is not None else "", e["type"], e["reason"], e["object"], e["message"]]
         for e in report["events"]]))
    if report["rejected"]:
        sections.append("REJECTED\n" + "\n".join(rejections(report)))
    return "\n\n".join(sections) + "\n"


def rejections(report: dict) -> list[str]:
    """What kubectl prints on stderr for each rejected request of the run, in its words."""
    return [f"error: {r['message']}\nensure CRDs are installed first" if r["reason"] == "NoKindMatch" else
            f"Error from server ({r['reason'] or r['code']}): {r['message']} [{r['object']}]"
            for r in report["rejected"]]
