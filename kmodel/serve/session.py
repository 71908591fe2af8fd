"""One `kmodel serve` session: a model cluster, its gateway, the model's thread and the HTTP server, started and
stopped together, with the faults it schedules (`--fault`), the control endpoint's actions
(`kmodel.serve.control`) and the live invariant checks (`kmodel.serve.live`).

`ServeSession(...)` builds the cluster with the gateway (`kmodel.serve.gateway`) as one more component, queues
the manifests for the model's kubectl (applied as `kmodel simulate` applies them, through the API), and binds the
HTTP server (port 0: a free one). `start()` starts the model's thread and the server; `stop()` stops the server,
then the model, and returns the session's report: what `kmodel simulate` shows of the cluster at that moment, and
the session's own figures (requests that came in, logical time reached, events applied, the loop's digest), the
actions done to the model and the invariant violations seen.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from kmodel.simulate.run import BUILT_IN_USERS
from kmodel.cluster.cluster import Cluster, ClusterError, user_token
from kmodel.cluster.config import ClusterConfig
from kmodel.serve.control import ACTIONS, ControlError, act, authorize
from kmodel.serve.credentials import Credentials
from kmodel.serve.gateway import Gateway
from kmodel.serve.http import APIHTTPServer, make_server, serve_in_thread
from kmodel.serve.live import LiveChecker
from kmodel.serve.recording import Recorder
from kmodel.serve.runner import ModelThread
from kmodel.serve.tls import make_certificate, server_context
from kmodel.simulate.observe import snapshot

#: the admin: its name and the model's token for it
ADMIN = ("admin", "admin-token")


def rbac_users(manifests: Sequence[dict]) -> list[str]:
    """The users (subjects of kind User) the manifests' RoleBindings and ClusterRoleBindings name, sorted."""
    names = {s.get("name") for m in manifests if m.get("kind") in ("RoleBinding", "ClusterRoleBinding")
             for s in (m.get("subjects") or []) if isinstance(s, dict) and s.get("kind") == "User"}
    return sorted(n for n in names if isinstance(n, str) and n)


class ServeSession:
    """See the module docstring."""

    def __init__(self, *, nodes: int = 3, manifests: Sequence[dict] = (), seed: int = 0, speed: float = 1.0,
                 host: str = "127.0.0.1", port: int = 0, tls_dir: Optional[Path] = None,
                 faults: Sequence[Any] = (), check_invariants: bool = True, leader_elect: bool = True,
                 echo: Callable[[str], None] = lambda line: None) -> None:
        """`tls_dir`: serve HTTPS with a self-signed certificate made there (kmodel.serve.tls); None: plain HTTP.
        `faults`: `kmodel simulate`'s FaultSpecs (partition, heal, crash, restart at a logical time). `echo` gets
        one line per fault done and per invariant violation (the command prints them). `leader_elect`: the
        kube-controller-manager and kube-scheduler elect (ClusterConfig.leader_elect)."""
        users = tuple(u for u in rbac_users(manifests) if u not in BUILT_IN_USERS and u != "admin")
        config = ClusterConfig(nodes=nodes, seed=seed, users=users, leader_elect=leader_elect)
        self.gateway = Gateway(config.apiserver_names())
        self.cluster = Cluster(config, extra=[self.gateway])
        if manifests:
            self.cluster.apply(manifests)
        self.echo = echo
        #: what was done to the model while serving: (logical time, action, target, endpoints)
        self.actions: list[tuple[int, str, str, list[str]]] = []
        self.live = LiveChecker(self.cluster) if check_invariants else None
        self.recorder = Recorder(nodes, seed, users, manifests, leader_elect=leader_elect)
        self.gateway.recorder = self.recorder
        self.model = ModelThread(self.cluster, speed=speed, on_progress=self._check if check_invariants else None)
        self.model.recorder = self.recorder
        for fault in sorted(faults, key=lambda f: f.at_ms):
            if fault.action not in ACTIONS:
                raise ControlError(f"fault {fault.text}: serve takes {', '.join(a for a in ACTIONS if a != 'pause')}")
            try:
                self.cluster.endpoints_of(fault.target)
            except ClusterError as exc:
                raise ControlError(f"fault {fault.text}: {exc}") from None
            self.model.schedule(fault.at_ms, lambda f=fault: self._act(f.action, f.target))
        self.certificate: Optional[Path] = None
        context = None
        if tls_dir is not None:
            self.certificate, key = make_certificate(tls_dir)
            context = server_context(self.certificate, key)
        #: the people's tokens of this run (kmodel.serve.credentials): what the kubeconfig holds
        self.credentials = Credentials([ADMIN] + [(u, user_token(u)) for u in ("alice", "bob", *users)])
        self.server: APIHTTPServer = make_server(self.model, self.gateway, self.credentials, host, port, context)
        self.server.control = self.control
        #: (name, client token) of each person, the admin first: the kubeconfig's users
        self.users = self.credentials.users
        self._started = False

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        scheme = "https" if self.certificate is not None else "http"
        return f"{scheme}://{host}:{port}"

    def start(self) -> None:
        self.model.start()
        serve_in_thread(self.server)
        self._started = True

    def _act(self, action: str, target: str, seconds: float = 0.0) -> list[str]:
        endpoints = act(self.cluster, action, target, seconds)
        self.recorder.act(action, target, seconds)
        self.actions.append((self.cluster.now, action, target, endpoints))
        self.echo(f"kmodel serve: {action} {target} at logical time {self.cluster.now / 1000:g} s "
                  f"({', '.join(endpoints)})")
        return endpoints

    def _check(self) -> None:
        assert self.live is not None
        for violation in self.live.check():
            self.echo(violation.line())

    def control(self, token: str, body: Any) -> tuple[int, dict]:
        """The control endpoint (from an HTTP thread) for the holder of the model's `token`: (code, JSON
        answer)."""
        if not isinstance(body, dict) or not isinstance(body.get("action"), str) \
                or not isinstance(body.get("target"), str):
            return 400, {"error": 'the body must be {"action": ..., "target": ...}'}

        def run() -> list[str]:
            authorize(self.cluster, token)
            return self._act(body["action"], body["target"], float(body.get("seconds") or 0))

        try:
            endpoints = self.model.call(run)
        except ControlError as exc:
            return exc.code, {"error": str(exc)}
        except (TypeError, ValueError) as exc:
            return 400, {"error": str(exc)}
        return 200, {"action": body["action"], "target": body["target"], "endpoints": endpoints}

    def stop(self) -> dict:
        """Stop serving and the model; the session's report."""
        if self._started:
            self.server.shutdown()
        self.server.server_close()
        self.model.stop()
        return self.report()

    def report(self) -> dict:
        cluster = self.cluster
        error: Optional[BaseException] = self.model.error
        out: dict[str, Any] = {
            "url": self.url,
            "logical_ms": cluster.now,
            "events_applied": cluster.loop.events_applied,
            "digest": cluster.loop.digest(),
            "requests": len(self.gateway.received),
            "model_error": f"{type(error).__name__}: {error}" if error is not None else None,
            "actions": [{"at_ms": t, "action": a, "target": tg, "endpoints": e} for t, a, tg, e in self.actions],
            "invariant_checks": self.live.checks if self.live is not None else 0,
            "violations": [{"invariant": v.invariant, "message": v.message, "at_ms": v.at_ms}
                           for v in (self.live.violations if self.live is not None else [])],
        }
        out.update(snapshot(cluster))
        return out
