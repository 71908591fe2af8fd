"""An episode's actions, as data: what the checker does to the served cluster and to the operator, each with a
readable text and a JSON form (an episode's actions are kept with its report and run again by `--reproduce`).

User actions on the operator's custom objects go through the model's own kubectl, as the admin (the operator's
connection, faults and all, is not theirs); faults on the operator act on its process or on its requests.
Every fault heals within its action (a cut is healed, a paused process continued, a killed one restarted), so
once the actions are done nothing is left broken.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs


@attrs.frozen
class Action:
    kind: ClassVar[str] = ""

    def to_json(self) -> dict:
        return {"kind": self.kind, **attrs.asdict(self)}

    @property
    def text(self) -> str:
        """What the action does, in a line of the report."""
        raise NotImplementedError


@attrs.frozen
class ApplyObject(Action):
    """kubectl apply of the custom object `name` of `resource` with `spec` (a create, or an update of its spec);
    `broken`: the spec breaks the schema on purpose (the API server refuses it with 422)."""

    kind: ClassVar[str] = "apply"
    resource: str
    name: str
    spec: Any
    broken: bool = False

    @property
    def text(self) -> str:
        return f"apply {self.resource}/{self.name} {'(breaks the schema) ' if self.broken else ''}spec {self.spec}"


@attrs.frozen
class ScaleObject(Action):
    """kubectl scale of the custom object: its spec.replicas set to `replicas` (a merge patch)."""

    kind: ClassVar[str] = "scale"
    resource: str
    name: str
    replicas: int

    @property
    def text(self) -> str:
        return f"scale {self.resource}/{self.name} to {self.replicas}"


@attrs.frozen
class DeleteObject(Action):
    kind: ClassVar[str] = "delete"
    resource: str
    name: str

    @property
    def text(self) -> str:
        return f"delete {self.resource}/{self.name}"


@attrs.frozen
class ConflictingWrite(Action):
    """Another client writes the object (an annotation), so the operator's next update from what it read is
    answered 409 Conflict: the way kube-apiserver comes to answer 409."""

    kind: ClassVar[str] = "conflict"
    resource: str
    name: str

    @property
    def text(self) -> str:
        return f"another client writes {self.resource}/{self.name} (the operator's next update of it: 409)"


@attrs.frozen
class KillOperator(Action):
    """SIGKILL the operator now, or with `at_write` N as its N-th write from now (1: the next) enters the cluster
    during the next step, so that write is applied and its answer never read (a crash between two writes); it is
    started again after the next step (as its Deployment's kubelet restarts it), so that step happens while it
    is down."""

    kind: ClassVar[str] = "kill"
    at_write: int = 0

    @property
    def text(self) -> str:
        when = f" as its write #{self.at_write} from now enters the cluster" if self.at_write else ""
        return f"SIGKILL the operator{when}; restart it after the next step"


@attrs.frozen
class PauseOperator(Action):
    """SIGSTOP the operator for `seconds` of wall time, then SIGCONT (a long GC pause, a throttled container)."""

    kind: ClassVar[str] = "pause"
    seconds: float

    @property
    def text(self) -> str:
        return f"SIGSTOP the operator for {self.seconds:g} s, then SIGCONT"


@attrs.frozen
class CutConnection(Action):
    """Partition http-clients (every outside client, the operator) for `seconds` of wall time, then heal: its
    requests in flight are lost (504 after a logical minute), its watches see nothing meanwhile."""

    kind: ClassVar[str] = "cut"
    seconds: float

    @property
    def text(self) -> str:
        return f"cut the operator's connection for {self.seconds:g} s, then heal it"


@attrs.frozen
class FailRequest(Action):
    """The operator's next request (outside a watch) is answered `code`: 429 (Retry-After 1 s), 500, 503, or 504,
    the write applied first when `applied` (kube-apiserver's timeout filter: the client cannot tell)."""

    kind: ClassVar[str] = "fail"
    code: int
    applied: bool = False

    @property
    def text(self) -> str:
        extra = (", its write applied" if self.applied else ", its write not applied") if self.code == 504 else ""
        return f"answer the operator's next request {self.code}{extra}"


@attrs.frozen
class BreakWatches(Action):
    """Break the operator's watch streams (a reset connection): it must watch again from where it was."""

    kind: ClassVar[str] = "break-watches"

    @property
    def text(self) -> str:
        return "break the operator's watches"


@attrs.frozen
class ExpireWatches(Action):
    """Restart every API server replica: the operator's watches end, and its watch cache's window starts anew, so
    a watch resumed from an older resourceVersion is answered 410 Expired (it must list again)."""

    kind: ClassVar[str] = "expire-watches"

    @property
    def text(self) -> str:
        return "restart the API servers (the operator's watches end; resuming them: 410 Expired)"


@attrs.frozen
class RestartComponent(Action):
    """Crash a part of the cluster (kube-controller-manager: the garbage collector among its controllers) and
    restart it `seconds` of wall time later."""

    kind: ClassVar[str] = "restart"
    target: str
    seconds: float

    @property
    def text(self) -> str:
        return f"crash {self.target}, restart it {self.seconds:g} s later"


@attrs.frozen
class Wait(Action):
    """Let `seconds` of wall time pass (the cluster's logical time runs at --speed meanwhile)."""

    kind: ClassVar[str] = "wait"
    seconds: float

    @property
    def text(self) -> str:
        return f"wait {self.seconds:g} s"


KINDS = {cls.kind: cls for cls in (ApplyObject, ScaleObject, DeleteObject, ConflictingWrite, KillOperator,
                                   PauseOperator, CutConnection, FailRequest, BreakWatches, ExpireWatches,
                                   RestartComponent, Wait)}


def action_from_json(data: Any) -> Action:
    """An action from its JSON form; ValueError saying what is wrong."""
    if not isinstance(data, dict) or data.get("kind") not in KINDS:
        raise ValueError(f"not an episode action: {data!r} (kinds: {', '.join(KINDS)})")
    fields = {k: v for k, v in data.items() if k != "kind"}
    try:
        return KINDS[data["kind"]](**fields)
    except TypeError as exc:
        raise ValueError(f"episode action {data['kind']}: {exc}") from None


def actions_from_json(data: Any) -> list[Action]:
    if not isinstance(data, list):
        raise ValueError("episode actions: expected a list")
    return [action_from_json(item) for item in data]
