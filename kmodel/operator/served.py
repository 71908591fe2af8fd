"""One episode's served cluster and the checker's hands on it: a `kmodel serve` session in this process (HTTPS,
the operator's manifests applied at boot), the operator's kubeconfig (its user only), and every change the
checker makes to the model done on the model's thread and recorded in the served trace, so that `kmodel replay`
of the trace makes the same calls (kmodel.serve.recording)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from kmodel.apiserver.customresources import established
from kmodel.loop.events import LoopEvent
from kmodel.operator.process import wait_until
from kmodel.operator.spec import OperatorSpec
from kmodel.serve.control import ControlError
from kmodel.serve.http import REQUEST_TIMEOUT_S
from kmodel.serve.kubeconfig import write_kubeconfig
from kmodel.serve.session import ADMIN, ServeSession

#: how long the operator's CRDs may take to be Established after boot
CRDS_TIMEOUT_S = 20.0


class ServedCluster:
    """See the module docstring. `now` and `steps` are read from the checker's thread."""

    def __init__(self, spec: OperatorSpec, folder: Path, *, nodes: int, seed: int, speed: float) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.session = ServeSession(nodes=nodes, manifests=spec.manifests, seed=seed, speed=speed,
                                    tls_dir=folder)
        # a request lost in a partition is a 504 after kube-apiserver's minute of logical time
        self.session.server.RequestHandlerClass.client.request_timeout_s = REQUEST_TIMEOUT_S / speed
        self.kubeconfig = folder / "kubeconfig"
        user = [u for u in self.session.users if u[0] == spec.user]
        write_kubeconfig(self.kubeconfig, self.session.url, user, self.session.certificate)
        self.plurals = tuple(r.plural for r in spec.resources)
        self.crd_names = tuple(sorted(d["metadata"]["name"] for d in spec.manifests
                                      if d.get("kind") == "CustomResourceDefinition"))

    @property
    def gateway(self) -> Any:
        return self.session.gateway

    @property
    def cluster(self) -> Any:
        return self.session.cluster

    @property
    def model(self) -> Any:
        return self.session.model

    def start(self) -> bool:
        """Serve, and wait until the operator's CRDs are Established; False if they were not in time."""
        self.session.start()
        return wait_until(lambda: all(n in self.call(self._established) for n in self.crd_names), CRDS_TIMEOUT_S)

    def _established(self) -> set:
        return {c.metadata.name for c in self.cluster.objects("customresourcedefinitions") if established(c)}

    def call(self, fn: Callable[[], Any]) -> Any:
        return self.session.model.call(fn)

    def now(self) -> int:
        return self.call(lambda: self.cluster.now)

    def kubectl(self, command: Any) -> None:
        """Give the model's own kubectl (the admin) `command`, recorded."""
        def run() -> None:
            self.session.recorder.kubectl(command)
            self.cluster.submit(command)

        self.call(run)

    def step(self, event: LoopEvent) -> bool:
        """Apply a loop event now when it is enabled, recorded; whether it was."""
        def run() -> bool:
            loop = self.cluster.loop
            if not loop.is_enabled(event):
                return False
            self.session.recorder.event(event)
            loop.step(event)
            return True

        return self.call(run)

    def control(self, action: str, target: str) -> None:
        """partition, heal, crash or restart `target`, as `kmodel ctl` does (recorded)."""
        code, answer = self.session.control(ADMIN[1], {"action": action, "target": target})
        if code != 200:
            raise ControlError(f"{action} {target}: {answer.get('error')}", code)

    def stop(self) -> dict:
        """Stop serving; the session's report, its trace written beside it (trace.json)."""
        report = self.session.stop()
        self.session.recorder.write(self.folder / "trace.json", report["digest"])
        return report
