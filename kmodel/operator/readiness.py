"""When the operator is ready (`--operator-ready`), checked after each start:

    watch           (the default) it has opened a watch on every custom resource of its manifests
    log:REGEX       a line of its output since this start matches REGEX
    lease:NS/NAME   the Lease (spec.holderIdentity) or ConfigMap lock (client-go's and the Python client's
                    control-plane.alpha.kubernetes.io/leader annotation) NS/NAME names a holder other than the one
                    it named when the process started: this process won the election
    cmd:COMMAND     COMMAND (run by the shell, with the operator's KUBECONFIG) exits 0
"""

from __future__ import annotations

import json
import re
import subprocess
from typing import Any, Callable

from kmodel.errors import KmodelUsageError

LEADER_ANNOTATION = "control-plane.alpha.kubernetes.io/leader"
#: how long a readiness command may run
COMMAND_TIMEOUT_S = 10.0


def check_ready_spec(spec: str) -> None:
    kind, _, arg = spec.partition(":")
    if spec == "watch":
        return
    if kind == "log" and arg:
        try:
            re.compile(arg)
        except re.error as exc:
            raise KmodelUsageError(f"--operator-ready {spec}: not a regular expression ({exc})") from None
        return
    if kind == "lease" and arg.count("/") == 1 and all(arg.split("/")):
        return
    if kind == "cmd" and arg.strip():
        return
    raise KmodelUsageError(f"--operator-ready {spec}: write watch, log:REGEX, lease:NAMESPACE/NAME or cmd:COMMAND")


def holder(cluster: Any, namespace: str, name: str) -> str:
    """The holder a Lease or a ConfigMap lock of that name names ("" for none); on the model's thread."""
    for lease in cluster.objects("leases", namespace):
        if lease.metadata.name == name:
            return lease.spec.holder_identity or ""
    for cm in cluster.objects("configmaps", namespace):
        if cm.metadata.name == name:
            record = dict(cm.metadata.annotations or {}).get(LEADER_ANNOTATION, "")
            try:
                return str(json.loads(record).get("holderIdentity") or "") if record else ""
            except (ValueError, AttributeError):
                return ""
    return ""


def readiness(spec: str, session: Any, process: Any, plurals: tuple[str, ...]) -> Callable[[], bool]:
    """A check of readiness for the process just started (call it until it says True)."""
    kind, _, arg = spec.partition(":")
    if spec == "watch":
        since = len(session.gateway.received)

        def watching() -> bool:
            seen = {r.resource for _, r in session.gateway.received[since:] if r.verb == "watch"}
            return all(p in seen for p in plurals)

        return watching
    if kind == "log":
        pattern = re.compile(arg)
        offset = process.log.stat().st_size if process.log.exists() else 0

        def logged() -> bool:
            with process.log.open("rb") as f:
                f.seek(offset)
                return pattern.search(f.read().decode("utf-8", "replace")) is not None

        return logged
    if kind == "lease":
        namespace, name = arg.split("/")
        before = session.model.call(lambda: holder(session.cluster, namespace, name))

        def elected() -> bool:
            now = session.model.call(lambda: holder(session.cluster, namespace, name))
            return bool(now) and now != before

        return elected

    def probed() -> bool:
        try:
            return subprocess.run(arg, shell=True, env=process.env, timeout=COMMAND_TIMEOUT_S,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
        except subprocess.TimeoutExpired:
            return False

    return probed
