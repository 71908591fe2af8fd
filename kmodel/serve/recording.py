"""What a `kmodel serve` run did to the model, recorded so that it can be run again without the clients.

Theory of operation
-------------------
The model is deterministic: given the same calls in the same order it applies the same events (the loop's digest
says so). Everything a serving run does to it happens on the model's thread, so the order of those calls is one
list, recorded as it happens:

    ["run", until_ms, max_events, busy_instant]   Loop.run_fair that applied events (one that applied none
                                                  changed nothing and is left out)
    ["advance", to_ms]                            the clock moved on to the wall clock's time (AdvanceTime)
    ["submit", request]                           an HTTP request handed to the gateway (its Request as JSON)
    ["cancel", n]                                 the watch of the n-th submitted request ended by its client
    ["act", action, target, seconds]              a --fault or a control action (kmodel.serve.control)
    ["kubectl", command]                          a command given to the model's own kubectl (kmodel check
                                                  --operator's user actions; `kubectl_to_json`)
    ["event", event]                              a loop event applied (a fault of kmodel check --operator: a
                                                  request fault, a watch broken; the event's JSON)

`replay_cluster(data)` builds the same cluster (nodes, seed, users, the manifests applied at the start) with a
gateway whose answers go nowhere, makes the same calls in the same order, and returns the cluster as they left it;
`replay(data)` returns its loop's digest, which equals the recorded one when the model did the same
(`kmodel serve --replay PATH`, and `kmodel replay PATH`, which tells such a file from a checker's trace by
`is_recording`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import attrs

from kmodel.apiserver.wire import PatchBody, Preconditions, Request
from kmodel.cluster.cluster import Cluster
from kmodel.cluster.config import ClusterConfig
from kmodel.cluster.kubectl import Apply, Delete, Patch, Scale
from kmodel.loop.events import AdvanceTime, LoopEvent, event_from_json
from kmodel.serve.control import act
from kmodel.serve.gateway import Gateway, Ticket

FORMAT = "kmodel-serve-recording"
VERSION = 1


class RecordingError(ValueError):
    """A file that is not a recording this version reads (one line, for the CLI)."""


def request_to_json(request: Request) -> dict:
    fields = attrs.asdict(request, recurse=False)
    body = fields.pop("body")
    if isinstance(body, PatchBody):
        fields["patch"] = [body.type, body.patch]
    elif isinstance(body, Preconditions):
        fields["preconditions"] = [body.uid, body.resource_version]
    elif body is not None:
        fields["body"] = body
    return fields


#: the model's kubectl commands a recording holds, by the name it gives them
KUBECTL_COMMANDS = {"apply": Apply, "delete": Delete, "patch": Patch, "scale": Scale}


def kubectl_to_json(command: Any) -> dict:
    """A command of KUBECTL_COMMANDS as JSON: its name and its fields."""
    name = next(n for n, cls in KUBECTL_COMMANDS.items() if type(command) is cls)
    return {"command": name, **attrs.asdict(command, recurse=False)}


def kubectl_from_json(data: dict) -> Any:
    fields = dict(data)
    cls = KUBECTL_COMMANDS.get(fields.pop("command", None))
    if cls is None:
        raise RecordingError(f"unknown kubectl command {data.get('command')!r} in the recording")
    return cls(**fields)


def request_from_json(data: dict) -> Request:
    fields = dict(data)
    if "patch" in fields:
        kind, patch = fields.pop("patch")
        fields["body"] = PatchBody(kind, patch)
    elif "preconditions" in fields:
        uid, rv = fields.pop("preconditions")
        fields["body"] = Preconditions(uid, rv)
    return Request(**fields)


class Recorder:
    """Collects the operations (see the module docstring); every method runs on the model's thread."""

    def __init__(self, nodes: int, seed: int, users: Sequence[str], manifests: Sequence[dict], *,
                 leader_elect: bool = True) -> None:
        self.header = {"format": FORMAT, "version": VERSION, "nodes": nodes, "seed": seed, "users": list(users),
                       "leader_elect": leader_elect, "manifests": list(manifests)}
        self.ops: list[list] = []
        self._submitted = 0

    def run(self, until_ms: int, max_events: int, busy_instant: int, applied: int) -> None:
        if applied:
            self.ops.append(["run", until_ms, max_events, busy_instant])

    def advance(self, to_ms: int) -> None:
        self.ops.append(["advance", to_ms])

    def submit(self, request: Request) -> int:
        """Record a submitted request; its number (for `cancel`)."""
        self.ops.append(["submit", request_to_json(request)])
        self._submitted += 1
        return self._submitted - 1

    def cancel(self, number: int) -> None:
        self.ops.append(["cancel", number])

    def act(self, action: str, target: str, seconds: float) -> None:
        self.ops.append(["act", action, target, seconds])

    def kubectl(self, command: Any) -> None:
        self.ops.append(["kubectl", kubectl_to_json(command)])

    def event(self, event: LoopEvent) -> None:
        self.ops.append(["event", event.to_json()])

    def write(self, path: Path, digest: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({**self.header, "digest": digest, "ops": self.ops}) + "\n", encoding="utf-8")


def read_recording(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RecordingError(f"cannot read the recording {path}: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != VERSION:
        raise RecordingError(f"{path} is not a kmodel serve recording (version {VERSION}): give the trace.json a "
                             "kmodel serve run wrote")
    return data


def is_recording(path: Path) -> bool:
    """Whether `path` holds a serve recording (any version; False for anything else, unreadable files included,
    whose errors the reader of the other kind reports)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("format") == FORMAT


def replay(data: dict) -> str:
    """Run the recorded operations again on a fresh cluster; the loop's digest at the end."""
    return replay_cluster(data).loop.digest()


def replay_cluster(data: dict) -> Cluster:
    """Run the recorded operations again on a fresh cluster; the cluster as they left it."""
    # a recording without "leader_elect" was made before the model elected a lone copy (as --leader-elect=false)
    config = ClusterConfig(nodes=data["nodes"], seed=data["seed"], users=tuple(data["users"]),
                           leader_elect=bool(data.get("leader_elect", False)))
    gateway = Gateway(config.apiserver_names())
    cluster = Cluster(config, extra=[gateway])
    if data["manifests"]:
        cluster.apply(data["manifests"])
    loop = cluster.loop
    tickets: list[Ticket] = []

    def ignore(_: Any) -> None:
        pass

    for op in data["ops"]:
        kind = op[0]
        if kind == "run":
            loop.run_fair(op[1], max_events=op[2], busy_instant=op[3])
        elif kind == "advance":
            loop.step(AdvanceTime(op[1]))
        elif kind == "submit":
            ticket = Ticket(request_from_json(op[1]), on_answer=ignore, on_event=ignore, on_end=ignore)
            tickets.append(ticket)
            gateway.submit(ticket)
            loop.notify_work(gateway.name)
        elif kind == "cancel":
            gateway.cancel(tickets[op[1]])
            loop.notify_work(gateway.name)
        elif kind == "act":
            act(cluster, op[1], op[2], op[3])
        elif kind == "kubectl":
            cluster.submit(kubectl_from_json(op[1]))
        elif kind == "event":
            loop.step(event_from_json(op[1]))
        else:
            raise RecordingError(f"unknown operation {kind!r} in the recording")
    return cluster
