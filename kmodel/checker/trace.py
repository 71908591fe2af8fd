"""The trace file: a run's configuration and its actions, as JSON a person can read and `kmodel replay` runs.

    {"format": "kmodel-trace/2", "kmodel": "0.1.0",
     "config": {ClusterConfig's fields}, "variant": "default",
     "actions": [{"name": "run", "ms": 15000, "say": "run fairly for 15 s"}, ...],
     "expect": "pass" | {"fail": "<invariant>"},
     "violation": {"invariant": ..., "message": ..., "step": ...} | null,
     "boot_revision": 29}

Each action is its `to_json()` (every field, defaults included) plus a "say" key holding its readable line
(ignored when read back); a field left out when read back takes the action's default, which is what the
checker does today. `expect` says what a replay must show: a regression seed under tests/regressions either
must pass, or must fail with the named invariant. Files are written to a temporary name and renamed, so a
reader never sees half a trace; `read_trace` raises `TraceError` with one line for anything unreadable,
truncated or of a format version it does not know.

`config` holds the topology the run had: how many API servers (`apiservers`), kube-controller-managers and
kube-schedulers (`controller_managers`, `schedulers`: left out when one, as every trace recorded before they
existed ran one of each), and whether they elected (`leader_elect`: see `config_from_json`). A campaign that
draws its topology per example (kmodel.checker.topology) records each example's counts there, so a replay
builds the cluster that example ran on. `static_pods`, written only when a kubelet's manifest folder holds one
(kmodel.checker.staticpods draws one per example), lists each node's manifests as [node, [pod manifest, ...]].

`boot_revision` is the store's revision once the cluster had booted (its bootstrap objects created) on the model
that recorded the trace. A `compact` action names an absolute store revision, so when a later model boots
with more or fewer objects, `fitted` moves each compaction by the difference, and the trace compacts at the
same point of its story. A trace without the key is taken as recorded on this model (nothing moves).

Versions: this kmodel writes FORMAT (kmodel-trace/2) and reads it and kmodel-trace/1. A version 1 file is
turned into version 2 by one function, `upgrade_v1`, before anything else reads it; every allowance for old
traces lives there, so the actions' defaults mean what the checker does now.
"""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path
from typing import Any, Optional, Union

import attrs

from kmodel import __version__
from kmodel.checker.actions import Action, Compact
from kmodel.checker.action_json import action_from_json
from kmodel.loop.events import check_json_fields
from kmodel.cluster import ClusterConfig
from kmodel.objects import DecodeError, Pod, dump, load
from kmodel.report import atomic_write_texts

FORMAT = "kmodel-trace/2"
FORMAT_V1 = "kmodel-trace/1"
#: the boot revision of every model before version 1 traces recorded theirs (15 bootstrap objects)
LEGACY_BOOT_REVISION = 15
#: the settle's switches whose default changed in version 2 (False before: what a version 1 trace without them
#: meant; True now: what the checker's settles do)
V1_SETTLE_SWITCHES: tuple[str, ...] = ("check_at_once", "release_holds", "finish_removals")
PASS = "pass"
Expect = Union[str, dict]


class TraceError(ValueError):
    """A trace file that cannot be used (one line: what is wrong)."""


#: what the garbage collector monitors (ClusterConfig), each written only when true: a trace without one was
#: recorded before the model's GC did so (before the model served CRDs; before the GC monitored every resource),
#: and replays with it off
GC_FLAGS = ("gc_monitors_custom_resources", "gc_monitors_every_resource")


def config_to_json(config: ClusterConfig) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field in attrs.fields(ClusterConfig):
        value = getattr(config, field.name)
        out[field.name] = list(value) if isinstance(value, tuple) else value
    # each node's manifest folder as [node, [pod manifest, ...]]; written only when some folder holds one (a trace
    # without it ran none, as traces before the checker drew static pods)
    out.pop("static_pods")
    if config.static_pods:
        out["static_pods"] = [[node, [dump(pod) for pod in pods]] for node, pods in config.static_pods]
    out.pop("variant")  # the trace's own "variant" field says it
    for name in ("controller_managers", "schedulers"):  # a trace without them ran one of each, as traces before
        if out[name] == 1:
            out.pop(name)
    if not out["leader_elect"] or "controller_managers" in out or "schedulers" in out:
        out.pop("leader_elect")  # a trace without it elected only with several copies (see config_from_json)
    for flag in GC_FLAGS:
        if not out[flag]:
            out.pop(flag)  # a trace without it ran a GC that did not (see config_from_json)
    if out["cni_ipam"] == attrs.fields(ClusterConfig).cni_ipam.default:
        out.pop("cni_ipam")  # a trace without it ran kindnet's CNI range layout, as traces before
    return out


def config_from_json(data: Any) -> ClusterConfig:
    if not isinstance(data, dict):
        raise TraceError("'config' must be an object of ClusterConfig fields")
    names = {f.name: f for f in attrs.fields(ClusterConfig)}
    unknown = sorted(set(data) - set(names) | ({"variant"} & set(data)))
    if unknown:
        raise TraceError(f"'config' has unknown fields {unknown}")
    _check_config(data)
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k != "static_pods"}
    if "static_pods" in data:
        kwargs["static_pods"] = _static_pods_from_json(data["static_pods"])
    for flag in GC_FLAGS:  # a trace recorded before the flag existed ran a garbage collector without it
        kwargs.setdefault(flag, False)
    # a trace without leader_elect elected only where it ran several copies (traces recorded before a lone
    # kube-controller-manager and kube-scheduler elected, and any trace of several copies)
    kwargs.setdefault("leader_elect", kwargs.get("controller_managers", 1) > 1 or kwargs.get("schedulers", 1) > 1)
    try:
        return ClusterConfig(**kwargs)
    except (TypeError, ValueError) as exc:
        raise TraceError(f"'config' is not a cluster configuration: {exc}") from None


def _static_pods_from_json(value: Any) -> tuple[tuple[str, tuple], ...]:
    """ClusterConfig.static_pods from a trace's [[node, [pod manifest, ...]], ...]; TraceError (one line) else."""
    shape = "config: static_pods must be a list of [node, [pod manifest, ...]] pairs"
    if not isinstance(value, list):
        raise TraceError(f"{shape}, not {value!r}")
    out = []
    for entry in value:
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)
                and isinstance(entry[1], list)):
            raise TraceError(f"{shape}, not {entry!r}")
        try:
            pods = tuple(load(m) for m in entry[1])
        except (DecodeError, TypeError, AttributeError) as exc:
            raise TraceError(f"config: static_pods of {entry[0]}: not a pod manifest ({exc})") from None
        if not all(isinstance(p, Pod) for p in pods):
            raise TraceError(f"config: static_pods of {entry[0]}: every manifest must be a Pod")
        out.append((entry[0], pods))
    return tuple(out)


#: the least value of each whole-number field of a trace's configuration
CONFIG_MINIMUMS: dict[str, int] = {
    "nodes": 0, "apiservers": 1, "max_pods": 0, "node_cidr_mask_size": 1, "node_status_update_period_ms": 1,
    "node_status_report_period_ms": 1, "lease_duration_seconds": 1, "lease_renew_interval_ms": 1,
    "node_monitor_period_ms": 1, "node_monitor_grace_period_ms": 1, "node_startup_grace_period_ms": 1,
    "controller_managers": 1, "schedulers": 1,
}


def _check_config(data: dict[str, Any]) -> None:
    """TraceError (one line) for a configuration field of the wrong type or out of range."""
    try:
        # every field has a default, and the tuple fields are not scalars: those are checked below
        check_json_fields(ClusterConfig, "config", data, CONFIG_MINIMUMS)
    except ValueError as exc:
        raise TraceError(str(exc)) from None
    for name in ("components", "users", "fixes"):
        value = data.get(name, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise TraceError(f"config: {name} must be a list of strings, not {value!r}")
    for name in ("cluster_cidr", "service_cidr"):
        if name in data:
            try:
                ipaddress.ip_network(data[name])
            except (TypeError, ValueError):
                raise TraceError(f"config: {name} must be a network such as 10.244.0.0/16, not {data[name]!r}") from None


@attrs.frozen
class Violation:
    invariant: str
    message: str
    step: int


@attrs.frozen
class Trace:
    config: ClusterConfig
    actions: tuple[Action, ...]
    variant: str = "default"
    expect: Expect = PASS
    violation: Optional[Violation] = None
    kmodel: str = __version__
    #: the recording model's boot revision (see the module docstring); None: this model's (never moved)
    boot_revision: Optional[int] = None

    @property
    def expected_invariant(self) -> Optional[str]:
        """The invariant this trace must fail with, or None if it must pass."""
        return self.expect["fail"] if isinstance(self.expect, dict) else None

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "kmodel": self.kmodel,
            "config": config_to_json(self.config),
            "variant": self.variant,
            "actions": [{**a.to_json(), "say": a.name} for a in self.actions],
            "expect": self.expect,
            "violation": attrs.asdict(self.violation) if self.violation is not None else None,
            **({"boot_revision": self.boot_revision} if self.boot_revision is not None else {}),
        }


def fitted(trace: Trace, boot_revision: int) -> Trace:
    """`trace` for a model that boots at `boot_revision`: its compactions moved by the difference between that
    and the trace's own boot revision (see the module docstring)."""
    if trace.boot_revision is None or trace.boot_revision == boot_revision:
        return attrs.evolve(trace, boot_revision=boot_revision)
    shift = boot_revision - trace.boot_revision
    actions = tuple(attrs.evolve(a, revision=a.revision + shift) if isinstance(a, Compact) else a
                    for a in trace.actions)
    return attrs.evolve(trace, actions=actions, boot_revision=boot_revision)


def write_trace(trace: Trace, path: Path) -> Path:
    """Write atomically (temporary file in the same folder, then rename), with a new file's mode."""
    path = Path(path)
    text = json.dumps(trace.to_json(), indent=1, sort_keys=False) + "\n"
    return atomic_write_texts(path.parent, {path.name: text})[0]


def upgrade_v1(data: dict[str, Any]) -> dict[str, Any]:
    """A kmodel-trace/1 object as the kmodel-trace/2 object of the same run (a new dict; `data` is untouched).

    * `boot_revision` missing: the trace was recorded before the key existed, on a model that booted at
      LEGACY_BOOT_REVISION;
    * a `settle` without `check_at_once`, `release_holds` or `finish_removals`: each False, their meaning in
      version 1 (version 2's defaults are True);
    * a `crash-mid-reconcile` with `process` and no `component`: the field's name before it was renamed.

    Anything else is left for the version 2 reader to check."""
    out = {**data, "format": FORMAT}
    out.setdefault("boot_revision", LEGACY_BOOT_REVISION)
    actions = data.get("actions")
    if isinstance(actions, list):
        out["actions"] = [_upgrade_action_v1(a) if isinstance(a, dict) else a for a in actions]
    return out


def _upgrade_action_v1(action: dict[str, Any]) -> dict[str, Any]:
    name = action.get("name")
    if name == "settle":
        return {**{k: False for k in V1_SETTLE_SWITCHES}, **action}
    if name == "crash-mid-reconcile" and "process" in action and "component" not in action:
        renamed = {k: v for k, v in action.items() if k != "process"}
        renamed["component"] = action["process"]
        return renamed
    return action


def trace_from_json(data: Any) -> Trace:
    if not isinstance(data, dict):
        raise TraceError("not a kmodel trace: the file holds no JSON object")
    fmt = data.get("format")
    if fmt == FORMAT_V1:
        data = upgrade_v1(data)
    elif fmt != FORMAT:
        raise TraceError(f"unsupported trace format {fmt!r}: this kmodel reads {FORMAT!r} and {FORMAT_V1!r}")
    for key in ("config", "actions", "expect"):
        if key not in data:
            raise TraceError(f"the trace has no {key!r}")
    if not isinstance(data["actions"], list):
        raise TraceError("'actions' must be a list")
    actions = []
    for i, item in enumerate(data["actions"]):
        try:
            actions.append(action_from_json(item))
        except ValueError as exc:
            raise TraceError(f"action {i}: {exc}") from None
    expect = data["expect"]
    if not (expect == PASS or (isinstance(expect, dict) and set(expect) == {"fail"}
                               and isinstance(expect["fail"], str))):
        raise TraceError('\'expect\' must be "pass" or {"fail": "<invariant>"}')
    raw = data.get("violation")
    violation = None
    if raw is not None:
        try:
            violation = Violation(str(raw["invariant"]), str(raw["message"]), int(raw["step"]))
        except (KeyError, TypeError, ValueError):
            raise TraceError("'violation' must be null or {invariant, message, step}") from None
    variant = str(data.get("variant", "default"))
    config = attrs.evolve(config_from_json(data["config"]), variant=variant)
    boot = data.get("boot_revision")
    if boot is not None and (type(boot) is not int or boot < 0):
        raise TraceError(f"'boot_revision' must be a whole number of at least 0, not {boot!r}")
    return Trace(config, tuple(actions), variant, expect, violation, str(data.get("kmodel", "")), boot)


def read_trace(path: Path) -> Trace:
    """Read a trace file; TraceError (one line) if it is missing, not JSON, truncated or another format."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TraceError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        what = "truncated" if exc.pos >= len(text.rstrip()) else "not valid JSON"
        raise TraceError(f"{path} is {what} (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    try:
        return trace_from_json(data)
    except TraceError as exc:
        raise TraceError(f"{path}: {exc}") from None


@attrs.frozen
class ShrinkRecord:
    """How a campaign's failure came down to its trace: found in example `found_in`; Hypothesis' shrink ran
    `examples` more examples and `events` model events (its final replay included; the budget:
    `events_budget`, and `budget_reached` if that is what stopped it) and left `shrunk_actions` actions;
    minimization's replays (`replays` of at most `replays_budget`) left `actions`, of which `simplified` says
    each argument simplified (kmodel.checker.minimize: ``scale-deployment: replicas 3 -> 1``). Counts only, so
    the record is a function of the seed like the trace."""

    found_in: int
    examples: int
    events: int
    events_budget: int
    budget_reached: bool
    shrunk_actions: int
    replays: int
    replays_budget: int
    actions: int
    simplified: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {**attrs.asdict(self), "simplified": list(self.simplified)}
