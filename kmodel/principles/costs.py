"""What watching saves: API traffic and reaction delays of the model as built (watch) and of `polling`.

Theory of operation
-------------------
`measure(nodes, seconds)` runs, for each cluster size, the same experiment twice: once with the default
model (informers list, then watch) and once with the `polling` variant (informers list every
`kmodel.client.informer.POLL_PERIOD_MS`, 10 s, and never watch). Each run:

1. builds a cluster of `n` nodes (every default component, one API server replica, a cluster CIDR of
   10.244.0.0/14 so that up to 1,024 nodes get a /24 podCIDR) and runs it fairly until every node is Ready
   and has its podCIDR (checked each logical second), then `SETTLE_MS` more (one poll period, so that what
   the boot set off under polling is done too); none of this is measured;
2. puts a tap on the loop's deliveries (`Loop.set_delivery_tap`) and measures a window of `seconds` logical
   seconds: at its start `max(1, n // 10)` Deployments of 2 replicas are applied, a quarter into it each is
   scaled to 4 (so the window holds pod creations at two moments, and both modes see the same commands;
   under polling a pod takes up to four polls, deployment → replicaset → scheduler → kubelet, so with a
   window of 60 s or more every pod of both waves gets through inside it);
3. returns one `CostRow` per (size, mode).

What the tap counts (only messages between a client and an API server replica; nothing between the
replicas and etcd):

* requests: each `Request` delivered to a replica, by verb (list, watch, get, create, update, patch, delete;
  a read the client resent after a timeout counts again, as it crossed the wire again);
* watch events: each `WatchEvent` a replica delivered on a watch stream (bookmarks included);
* bytes, a deterministic estimate of what HTTP would carry, headers not counted:
  - to the replicas: the request line ("GET /api/v1/namespaces/default/pods?fieldSelector=...") plus the
    body's compact JSON (`kmodel.objects.dump`, separators "," and ":"; a patch's dict as it is);
  - from the replicas: the response body's compact JSON (an object; a list as
    ``{"apiVersion":..,"kind":"<Kind>List","metadata":{"resourceVersion":".."},"items":[..]}``; a Status
    as metav1.Status), and for each watch event its JSON line ``{"type":"..","object":{..}}``.
  Objects are frozen and shared, so each one's size is computed once, and without building its JSON
  (`Sizer`, memoised on the object and on each of its parts).
* delays, from what the replicas were asked to do (the time a request is delivered is the time the replica
  writes, since the model has no processing latency):
  - schedule delay: from a pod's successful create (by its ReplicaSet controller) to its successful
    binding (by the scheduler);
  - start delay: from the binding to the first successful pods/status update by a kubelet (the node's
    kubelet has seen the pod and acted on it).
  Median and p99 (nearest rank) over the pods of the window that got that far; `scheduled` and `started`
  say how many. The model has no network or processing latency, so under watch the delays come only from
  queueing in the model (0 ms in these runs); under polling they are the time until the next poll of the
  component on the way (each informer polls at a phase of its own, so a delay is a fixed fraction of the
  period per pair of components: one scheduler gives one create→bind delay, many kubelets a spread).

`node_status_ms` (default: upstream's 300 s, nodeStatusReportFrequency) sets how often each kubelet writes an
unchanged Node status; a changed one is written at the next 10-s sync, as upstream does (the Lease is the
heartbeat). The choice matters to the comparison: an object that changes once per poll period costs a
watcher one event and a poller one copy in each list, so Node writes every 10 s (set it to 10) make watching
look as expensive as polling.

The counts are deterministic (same inputs, same numbers); `wall_s` and `cpu_s` are the measuring machine's.
"""

from __future__ import annotations

import json
import math
import sys
import time
from typing import Any, Optional, Sequence

import attrs

from kmodel.apiserver.resources import RESOURCES
from kmodel.apiserver.wire import VERBS, ListResult, Request, Response, Status, WatchEvent
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Scale
from kmodel.network import Message
from kmodel.objects import (
    Container, Deployment, DeploymentSpec, LabelSelector, ObjectMeta, PodSpec, PodTemplateSpec, frozen_map,
    parse_quantity,
)
from kmodel.objects.frozendict import thaw
from kmodel.objects.logical_time import format_micro_time, format_time
from kmodel.objects.schema import fields_of
from kmodel.objects.core import ResourceRequirements
from kmodel.objects.registry import kind_info
from kmodel.variants import DEFAULT, POLLING

#: the two modes compared, as (row label, variant)
MODES: tuple[tuple[str, str], ...] = (("watch", DEFAULT), ("polling", POLLING))
#: the cluster CIDR of the measured clusters: /14 gives 1,024 node /24s (the default /16 only 256)
CLUSTER_CIDR = "10.244.0.0/14"
BOOT_LIMIT_MS = 300_000
SETTLE_MS = 10_000
_METHOD = {"get": "GET", "list": "GET", "watch": "GET", "create": "POST", "update": "PUT", "patch": "PATCH",
           "delete": "DELETE"}
_COMPACT = (",", ":")


@attrs.frozen
class CostRow:
    """One measured run: one cluster size, one mode."""

    mode: str  # "watch" or "polling"
    variant: str
    nodes: int
    seconds: int  # the logical length of the measured window
    deployments: int
    requests: tuple[tuple[str, int], ...]  # (verb, count), in kube-apiserver's verb order
    watch_events: int
    bytes_to: int  # to the API server replicas
    bytes_from: int  # from them
    schedule_ms: tuple[int, int]  # (median, p99) from a pod's create to its binding
    start_ms: tuple[int, int]  # (median, p99) from the binding to the kubelet's first status write
    pods: int  # pods created in the window
    scheduled: int  # of them, bound in the window
    started: int  # of them, acted on by their kubelet in the window
    boot_ms: int  # logical time until every node was Ready with a podCIDR (not measured)
    loop_events: int  # loop events applied in the window
    wall_s: float  # wall time of the whole run, boot included
    cpu_s: float  # CPU time of this process for the whole run (less noisy than wall on a shared machine)
    node_status_ms: int = ClusterConfig().node_status_report_period_ms  # how often an unchanged Node status is written

    @property
    def requests_total(self) -> int:
        return sum(n for _, n in self.requests)

    @property
    def requests_per_s(self) -> float:
        return self.requests_total / self.seconds

    @property
    def bytes_per_s(self) -> float:
        return (self.bytes_to + self.bytes_from) / self.seconds

    def count(self, verb: str) -> int:
        return dict(self.requests).get(verb, 0)


# -- sizes -------------------------------------------------------------------------------------------------

def json_size(value: Any) -> int:
    """len() of `value` as compact JSON (json.dumps with separators "," and ":")."""
    t = type(value)
    if t is str:
        if value.isascii() and value.isprintable() and '"' not in value and "\\" not in value:
            return len(value) + 2  # nothing to escape
    elif t is bool:
        return 4 if value else 5
    elif t is int:
        return len(str(value))
    return len(json.dumps(value, separators=_COMPACT, default=str))


class Sizer:
    """Compact-JSON sizes of wire payloads (see the module docstring).

    A typed object's size is `len(json_size(dump(obj)))`, computed without building the JSON: `_struct`
    walks the same fields with the same omission rules as `kmodel.objects.codec.dump_struct` and memoises
    each struct it sizes on the struct itself, so the parts a new version shares with the old one (attrs
    `evolve` keeps unchanged fields) are not sized again. tests/variants/test_polling.py checks the sizes
    against json.dumps of `dump`."""

    def __init__(self) -> None:
        # id(obj) -> (obj, size): the entry keeps the object alive, so its id is never reused meanwhile
        self._memo: dict[int, tuple[Any, int]] = {}
        self._keys: dict[str, int] = {}  # '"key":' sizes
        self._times: dict[tuple[str, Any], int] = {}  # formatted timestamps' sizes

    def obj(self, obj: Any) -> int:
        """The size of an API object, a patch dict or a Status (0 for None)."""
        if obj is None:
            return 0
        hit = self._memo.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        if isinstance(obj, Status):
            size = json_size({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": obj.status,
                              "message": obj.message, "reason": obj.reason, "code": obj.code})
        elif isinstance(obj, dict) or not attrs.has(type(obj)):
            size = json_size(obj)
        else:
            try:
                info = kind_info(obj)
            except KeyError:
                return self._struct(obj)
            # dump(): {"apiVersion":..,"kind":..,"metadata":{..} (always), then the other fields}
            entries = self._entries(obj)
            meta = entries.pop("metadata", 2)
            size = (2 + self._key("apiVersion") + json_size(info.api_version) + 1 + self._key("kind")
                    + json_size(info.kind) + 1 + self._key("metadata") + meta
                    + sum(1 + self._key(k) + n for k, n in entries.items()))
        self._memo[id(obj)] = (obj, size)
        return size

    def _key(self, key: str) -> int:
        n = self._keys.get(key)
        if n is None:
            n = self._keys[key] = json_size(key) + 1
        return n

    def _struct(self, obj: Any) -> int:
        hit = self._memo.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        entries = self._entries(obj)
        size = 2 + sum(self._key(k) + n for k, n in entries.items()) + max(len(entries) - 1, 0)
        self._memo[id(obj)] = (obj, size)
        return size

    def _entries(self, obj: Any) -> dict[str, int]:
        """json key -> size of its value, for the fields dump_struct would write (same rules)."""
        out: dict[str, int] = {}
        for f in fields_of(type(obj)):
            v = getattr(obj, f.name)
            if v is None:
                continue
            tag = f.type.tag
            if tag == "struct":
                n = self._struct(v)
                if n > 2 or f.ptr or f.keep:
                    out[f.json] = n
            elif tag == "list":
                if v or f.keep:
                    out[f.json] = self._value(f.type, v)
            elif tag == "map":
                if v:
                    out[f.json] = self._value(f.type, v)
            elif f.ptr or f.keep or v or tag in ("intstr", "quantity", "time", "microtime", "raw"):
                out[f.json] = self._value(f.type, v)
        return out

    def _value(self, t: Any, v: Any) -> int:
        tag = t.tag
        if tag == "struct":
            return self._struct(v)
        if tag == "list":
            item = t.item
            return 2 + sum(self._value(item, x) for x in v) + max(len(v) - 1, 0)
        if tag == "map":
            item = t.item
            return 2 + sum(self._key(k) + self._value(item, v[k]) for k in v) + max(len(v) - 1, 0)
        if tag == "quantity":
            return json_size(str(v))
        if tag == "time" or tag == "microtime":
            times = self._times
            n = times.get((tag, v))
            if n is None:
                n = times[(tag, v)] = json_size(format_time(v) if tag == "time" else format_micro_time(v))
            return n
        if tag == "raw":
            return json_size(thaw(v))
        return json_size(v)

    def body(self, body: Any) -> int:
        """A response body: an object, a list or a Status."""
        if isinstance(body, ListResult):
            items = body.items
            kind = f"{kind_info(items[0]).kind}List" if items else "List"
            envelope = len(json.dumps({"apiVersion": "v1", "kind": kind,
                                       "metadata": {"resourceVersion": body.resource_version}, "items": []},
                                      separators=_COMPACT))
            return envelope + sum(self.obj(o) for o in items) + max(len(items) - 1, 0)
        return self.obj(body)

    def event(self, event: WatchEvent) -> int:
        """One watch event's JSON line: {"type":"<type>","object":<object>}."""
        return len('{"type":"","object":}') + len(event.type) + self.obj(event.object)

    def request(self, req: Request) -> int:
        """The request line plus the body."""
        return len(_METHOD.get(req.verb, req.verb.upper())) + 1 + len(request_path(req)) + self.obj(req.body)


def request_path(req: Request) -> str:
    """The URL path and query kube-apiserver would be asked (watch as ?watch=1)."""
    res = RESOURCES.get(req.resource)
    root = "/api/v1" if res is None or not res.group else f"/apis/{res.api_version}"
    parts = [root]
    if req.namespace:
        parts.append(f"namespaces/{req.namespace}")
    parts.append(req.resource)
    if req.name:
        parts.append(req.name)
    if req.subresource:
        parts.append(req.subresource)
    query = []
    if req.verb == "watch":
        query.append("watch=1")
        if req.allow_watch_bookmarks:
            query.append("allowWatchBookmarks=true")
    for key, value in (("labelSelector", req.label_selector), ("fieldSelector", req.field_selector),
                       ("resourceVersion", req.resource_version)):
        if value:
            query.append(f"{key}={value}")
    return "/".join(parts) + ("?" + "&".join(query) if query else "")


# -- the tap -----------------------------------------------------------------------------------------------

class Meter:
    """Counts what crosses between clients and the API server replicas (a `Loop.set_delivery_tap` tap)."""

    def __init__(self, loop: Any, apiservers: Sequence[str]) -> None:
        self.loop = loop
        self.apiservers = frozenset(apiservers)
        self.sizer = Sizer()
        self.requests: dict[str, int] = {}
        self.watch_events = 0
        self.bytes_to = 0
        self.bytes_from = 0
        self._asked: dict[tuple[str, int], tuple[int, Request]] = {}  # (client, id) -> (time, pod request)
        self.created: dict[str, int] = {}  # "ns/name" -> time of its create
        self.bound: dict[str, int] = {}
        self.started: dict[str, int] = {}

    def tap(self, msg: Message) -> None:
        payload = msg.payload
        if msg.dst in self.apiservers:
            if type(payload) is not Request:
                return
            self.requests[payload.verb] = self.requests.get(payload.verb, 0) + 1
            self.bytes_to += self.sizer.request(payload)
            if payload.resource == "pods" and payload.verb in ("create", "update"):
                self._asked[(msg.src, payload.id)] = (self.loop.now, payload)
            return
        if msg.src not in self.apiservers:
            return
        if type(payload) is WatchEvent:
            self.watch_events += 1
            self.bytes_from += self.sizer.event(payload)
            return
        if type(payload) is not Response:
            return
        self.bytes_from += self.sizer.body(payload.body)
        if msg.stream is None:
            asked = self._asked.pop((msg.dst, payload.id), None)
            if asked is not None and payload.ok:
                self._pod_write(msg.dst, asked[0], asked[1], payload)

    def _pod_write(self, client: str, at: int, req: Request, response: Response) -> None:
        if req.verb == "create" and not req.subresource:
            meta = response.body.metadata
            self.created.setdefault(f"{meta.namespace}/{meta.name}", at)
        elif req.verb == "create" and req.subresource == "binding":
            self.bound.setdefault(f"{req.namespace}/{req.name}", at)
        elif req.verb == "update" and req.subresource == "status" and client.startswith("kubelet/"):
            self.started.setdefault(f"{req.namespace}/{req.name}", at)

    def delays(self) -> tuple[list[int], list[int]]:
        """(schedule delays, start delays) in ms, over the pods created while the tap was on."""
        schedule = [self.bound[k] - t for k, t in self.created.items() if k in self.bound]
        start = [self.started[k] - self.bound[k] for k in self.created if k in self.bound and k in self.started]
        return schedule, start


def percentile(values: Sequence[int], p: float) -> int:
    """Nearest-rank percentile (0 for no values)."""
    if not values:
        return 0
    ordered = sorted(values)
    return ordered[max(math.ceil(p / 100 * len(ordered)) - 1, 0)]


# -- the experiment ----------------------------------------------------------------------------------------

def deployment(name: str, replicas: int) -> Deployment:
    labels = frozen_map({"app": name})
    container = Container(name="app", image="registry.example/app:1",
                          resources=ResourceRequirements(requests=frozen_map(
                              {"cpu": parse_quantity("10m"), "memory": parse_quantity("16Mi")})))
    return Deployment(metadata=ObjectMeta(name=name, namespace="default"),
                      spec=DeploymentSpec(replicas=replicas, selector=LabelSelector(match_labels=labels),
                                          template=PodTemplateSpec(metadata=ObjectMeta(labels=labels),
                                                                   spec=PodSpec(containers=(container,)))))


def _all_ready(cluster: Cluster, nodes: int) -> bool:
    ready = 0
    for node in cluster.objects("nodes"):
        if node.spec.pod_cidr and any(c.type == "Ready" and c.status == "True" for c in node.status.conditions):
            ready += 1
    return ready >= nodes


def measure_one(nodes: int, seconds: int, variant: str, *, seed: int = 0,
                node_status_ms: Optional[int] = None) -> CostRow:
    """One run (see the module docstring). `node_status_ms` overrides how often each kubelet writes an unchanged
    Node status (nodeStatusReportFrequency, upstream's 5 min; a changed one is written at the next 10-s sync)."""
    started, cpu = time.perf_counter(), time.process_time()
    config = ClusterConfig(nodes=nodes, apiservers=1, seed=seed, variant=variant, cluster_cidr=CLUSTER_CIDR)
    if node_status_ms is not None:
        config = attrs.evolve(config, node_status_report_period_ms=node_status_ms)
    cluster = Cluster(config)
    while not _all_ready(cluster, nodes):
        if cluster.now >= BOOT_LIMIT_MS:
            raise RuntimeError(f"{nodes} nodes under {variant} were not all Ready after {BOOT_LIMIT_MS} ms")
        cluster.run_for(1_000)
    boot_ms = cluster.now
    cluster.run_for(SETTLE_MS)
    meter = Meter(cluster.loop, cluster.config.apiserver_names())
    cluster.loop.set_delivery_tap(meter.tap)
    events_before = cluster.loop.events_applied
    count = max(1, nodes // 10)
    names = [f"app-{i}" for i in range(count)]
    start = cluster.now
    cluster.apply([deployment(name, 2) for name in names])
    cluster.run(start + seconds * 250)
    for name in names:
        cluster.submit(Scale("deployments", "default", name, 4))
    cluster.run(start + seconds * 1000)
    cluster.loop.set_delivery_tap(None)
    schedule, start_delays = meter.delays()
    mode = {v: label for label, v in MODES}.get(variant, variant)
    verbs = [v for v in VERBS if v in meter.requests] + sorted(v for v in meter.requests if v not in VERBS)
    return CostRow(
        mode=mode, variant=variant, nodes=nodes, seconds=seconds, deployments=count,
        requests=tuple((v, meter.requests[v]) for v in verbs), watch_events=meter.watch_events,
        bytes_to=meter.bytes_to, bytes_from=meter.bytes_from,
        schedule_ms=(percentile(schedule, 50), percentile(schedule, 99)),
        start_ms=(percentile(start_delays, 50), percentile(start_delays, 99)),
        pods=len(meter.created), scheduled=len(schedule), started=len(start_delays), boot_ms=boot_ms,
        loop_events=cluster.loop.events_applied - events_before, wall_s=time.perf_counter() - started,
        cpu_s=time.process_time() - cpu, node_status_ms=config.node_status_report_period_ms)


def measure(nodes: Sequence[int], seconds: int = 60, *, seed: int = 0,
            node_status_ms: Optional[int] = None) -> list[CostRow]:
    """Watch and polling for each cluster size, `seconds` of logical time each (see the module docstring)."""
    return [measure_one(n, seconds, variant, seed=seed, node_status_ms=node_status_ms)
            for n in nodes for _, variant in MODES]


# -- presenting --------------------------------------------------------------------------------------------

def _kib(n: float) -> str:
    return f"{n / 1024:,.1f}"


def table_markdown(rows: Sequence[CostRow]) -> str:
    """A Markdown table: one line per row, and for polling its ratio to watch at the same size."""
    verbs = [v for v in VERBS if any(r.count(v) for r in rows)]
    head = (["nodes", "mode", "requests/s", *verbs, "watch events", "KiB/s to", "KiB/s from",
             "× watch (req, bytes)", "schedule ms (p50/p99)", "start ms (p50/p99)", "pods (bound/started)",
             "wall s (cpu)"])
    align = ["---:" if i != 1 else "---" for i in range(len(head))]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    watch = {r.nodes: r for r in rows if r.mode == "watch"}
    for r in rows:
        base = watch.get(r.nodes)
        ratio = "1" if r.mode == "watch" or base is None else (
            f"{r.requests_total / max(base.requests_total, 1):,.1f}, {r.bytes_per_s / max(base.bytes_per_s, 1):,.1f}")
        cells = [f"{r.nodes:,}", r.mode, f"{r.requests_per_s:,.1f}", *(f"{r.count(v):,}" for v in verbs),
                 f"{r.watch_events:,}", _kib(r.bytes_to / r.seconds), _kib(r.bytes_from / r.seconds), ratio,
                 f"{r.schedule_ms[0]:,} / {r.schedule_ms[1]:,}", f"{r.start_ms[0]:,} / {r.start_ms[1]:,}",
                 f"{r.pods:,} ({r.scheduled:,}/{r.started:,})", f"{r.wall_s:,.1f} ({r.cpu_s:,.1f})"]
        lines.append("| " + " | ".join(cells) + " |")
    seconds = sorted({r.seconds for r in rows})
    periods = sorted({r.node_status_ms for r in rows})
    lines.append("")
    lines.append(f"Counts over {', '.join(map(str, seconds))} s of logical time after boot; verbs are request "
                 "counts in the window; bytes are compact-JSON estimates (kmodel/principles/costs.py); "
                 f"kubelets write an unchanged Node status every {', '.join(f'{p / 1000:g}' for p in periods)} s.")
    return "\n".join(lines)


def plot_unavailable() -> Optional[str]:
    """Why `plot_png` cannot draw (one line), or None when it can."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return "matplotlib is not installed (pip install 'kmodel[plot]' or python3 -m pip install matplotlib)"
    return None


def plot_png(rows: Sequence[CostRow], path: str) -> bool:
    """Draw requests/s and bytes/s against nodes (log scales) and the delays, watch beside polling, into one
    PNG at `path`. False (and the reason on stderr, one line) when matplotlib is missing."""
    reason = plot_unavailable()
    if reason is not None:
        print(f"no plot: {reason}", file=sys.stderr)
        return False
    from matplotlib.figure import Figure

    fig = Figure(figsize=(17, 4.8), layout="constrained")
    axes = fig.subplots(1, 3)
    styles = {"watch": dict(color="tab:blue", marker="o"), "polling": dict(color="tab:red", marker="s")}
    modes = [m for m, _ in MODES if any(r.mode == m for r in rows)]
    for mode in modes:
        mine = sorted((r for r in rows if r.mode == mode), key=lambda r: r.nodes)
        xs = [r.nodes for r in mine]
        axes[0].plot(xs, [r.requests_per_s for r in mine], label=mode, **styles.get(mode, {}))
        axes[1].plot(xs, [r.bytes_per_s / 1024 for r in mine], label=mode, **styles.get(mode, {}))
        style = styles.get(mode, {})
        axes[2].plot(xs, [r.schedule_ms[0] / 1000 for r in mine], label=f"{mode}: create→bind p50",
                     linestyle="-", **style)
        axes[2].plot(xs, [r.schedule_ms[1] / 1000 for r in mine], label=f"{mode}: create→bind p99",
                     linestyle=":", **style)
        axes[2].plot(xs, [r.start_ms[0] / 1000 for r in mine], label=f"{mode}: bind→kubelet p50",
                     linestyle="--", color=style.get("color"), marker="^")
        axes[2].plot(xs, [r.start_ms[1] / 1000 for r in mine], label=f"{mode}: bind→kubelet p99",
                     linestyle="-.", color=style.get("color"), marker="v")
    seconds = rows[0].seconds if rows else 0
    for ax, title, ylabel in ((axes[0], "API requests", "requests / s"),
                              (axes[1], "API traffic (compact-JSON estimate)", "KiB / s, both directions"),
                              (axes[2], "Reaction delay", "logical seconds")):
        ax.set_xscale("log")
        ax.set_xlabel("nodes")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_yscale("log")
    axes[1].set_yscale("log")
    axes[0].legend()
    axes[1].legend()
    axes[2].legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    periods = ", ".join(f"{p / 1000:g}" for p in sorted({r.node_status_ms for r in rows}))
    fig.suptitle(f"watch vs polling (10 s period): {seconds} s of logical time after boot; kubelets write an "
                 f"unchanged Node status every {periods} s")
    fig.savefig(path, dpi=110)
    return True
