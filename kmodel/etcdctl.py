"""etcdctl: an operator who fixes the cluster straight in etcd (the `bypass-apiserver` variant's one place).

Theory of operation
-------------------
The anti-pattern, as it happens in real clusters: a pod will not land where the operator wants it (the
scheduler says no, an admission webhook is down, the API server is slow), so the operator writes it into
etcd by hand, already bound to a node:

    etcdctl get /registry/pods/default/etcdctl-fix
    etcdctl put /registry/pods/default/etcdctl-fix "$(cat pod.json)"      # only if the get found nothing

`Etcdctl` is that operator's cron job, a sans-IO component named "etcdctl" that exists only under the
variant (kmodel.cluster.components.VARIANT_COMPONENTS). When it starts (the cron job is installed with the
cluster) and every `PERIOD_MS` of logical time after, it sends an `EtcdCall` range of the pod's key to the
"etcd" endpoint, as a message over the network like any other client's (so partitions, drops and delays
apply). When etcd answers
that the key is absent, it sends a put of `hand_written_pod(node)`: the manifest as the operator typed it,
decoded without defaulting. Nothing an API server would have added is there: no uid, no creationTimestamp,
no resourceVersion, none of admission's defaults (DefaultTolerationSeconds' not-ready and unreachable
tolerations), no validation, no authorization, no audit record. etcd serves it as real etcd would (it has no
idea who is calling: kmodel.apiserver.etcd_endpoint), the API servers' watches pick the new key up, and the
node's kubelet runs the pod like any pod bound to it.

What the invariants see: `api-single-contract` (a message etcdctl -> etcd: only API servers talk to etcd;
and a store revision no API server's etcd handle wrote) and `admission-enforced` (a stored pod without uid
or creationTimestamp, without the default tolerations). The anti-pattern is structural, so the checker
finds it in the first step of any trace (the warm-up): there is nothing to search for.

Crash: the job's memory is only the calls it is waiting for; its request counter is kept (ids never repeat
within a run). A reply that comes after a crash is ignored.
"""

from __future__ import annotations

from typing import Any

from kmodel.component.registry import component
from kmodel.apiserver.etcd_endpoint import ETCD, EtcdCall, EtcdReply
from kmodel.component import Component, Out
from kmodel.network import Message
from kmodel.objects import Pod, load

ETCDCTL = "etcdctl"
TICK_TIMER = "tick"
#: how often the operator's job runs (logical ms)
PERIOD_MS = 30_000
POD_NAMESPACE = "default"
POD_NAME = "etcdctl-fix"


def pod_key(namespace: str = POD_NAMESPACE, name: str = POD_NAME) -> str:
    """The etcd key kube-apiserver stores a pod under (kmodel.apiserver.resources)."""
    return f"/registry/pods/{namespace}/{name}"


def hand_written_pod(node: str) -> Pod:
    """The pod as the operator types it: name, namespace, a label, one container, and the node it must run on.
    Decoded as written, without the API server's defaulting."""
    return load({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": POD_NAME, "namespace": POD_NAMESPACE, "labels": {"fixed-by": "etcdctl"}},
        "spec": {"nodeName": node, "containers": [{"name": "app", "image": "nginx:1.25"}]},
    })


class Etcdctl(Component):
    """The operator's job (see the module docstring)."""

    def __init__(self, node: str, *, name: str = ETCDCTL, period_ms: int = PERIOD_MS) -> None:
        super().__init__(name)
        self.node = node
        self.period_ms = period_ms
        self.next_id = 1  # kept across a crash: a reply to an old call is never taken for a new one
        self.puts = 0  # puts sent (for tests and reports)
        self._forget()

    def _forget(self) -> None:
        self.waiting: dict[int, str] = {}  # call id -> method

    def _call(self, out: Out, method: str, *args: Any) -> None:
        call = EtcdCall(self.next_id, method, args)
        self.next_id += 1
        self.waiting[call.id] = method
        out.send(ETCD, call)

    def start(self, now: int, out: Out) -> None:
        self._run(out)  # the job runs when it is installed (and when its host restarts), then every period

    def on_timer(self, now: int, name: str, out: Out) -> None:
        if name == TICK_TIMER:
            self._run(out)

    def _run(self, out: Out) -> None:
        out.set_timer(TICK_TIMER, self.period_ms)
        self._call(out, "range", pod_key())  # etcdctl get

    def on_message(self, now: int, msg: Message, out: Out) -> None:
        reply = msg.payload
        if type(reply) is not EtcdReply:
            return
        method = self.waiting.pop(reply.id, None)
        if method != "range" or reply.error is not None:
            return
        if not reply.response.kvs:
            self.puts += 1
            self._call(out, "put", pod_key(), hand_written_pod(self.node))  # etcdctl put

    def crash(self) -> None:
        self._forget()


@component("etcdctl")  # only as the bypass-apiserver variant's extra component (VARIANT_COMPONENTS)
def make(ctx: Any) -> list[Component]:
    """The cluster's factory (the variant's extra component): one operator, pinning its pod to the first node."""
    return [Etcdctl(ctx.config.node_names()[0])]
