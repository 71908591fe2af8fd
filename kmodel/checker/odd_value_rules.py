"""The odd-value rules: objects a user creates with values that are odd but plausible, as kubectl sends them (a
mixin of `KmodelMachine`).

    create_odd_pod       POST a bare pod whose container requests (and perhaps limits) a resource, the amount
                         drawn from `QUANTITIES`: suffixes binary and decimal, fractions, exponents, a sign,
                         amounts past int64, and what the parser or validation refuses (a negative amount, an
                         unknown suffix, two dots, a fraction of an integer resource)
    create_odd_named     POST a ConfigMap or a Service named from `NAMES` (at the 63 and 253 character limits and one
                         past, uppercase, dots, an underscore, a leading digit or hyphen), with a label from `LABELS`
                         and an annotation from `ANNOTATIONS` (keys with and without a prefix, at their limits and
                         past, values past 63 characters)
    create_odd_selector  POST a Deployment of one of the apps whose selector comes from `SELECTORS` (matchLabels,
                         each matchExpressions operator, values where none may be, none where some must be, an
                         operator that does not exist, one that misses the template's labels, an empty one)

The API server answers each as upstream (release-1.31): 201 when the object is valid, 400 when its body cannot be
decoded (a quantity that does not parse: "quantities must match the regular expression ..."), 422 with
validation's field errors, 409 when the name is taken. Each value is a small index into its pool, simplest (and
valid) first, so a failing example shrinks toward an ordinary object; the pools are shared by the draws, so two
draws meet: the same name twice (409), a label the apps' selectors match. The rule sends one `SendRequest`
(kmodel.checker.collide_actions) that carries the body it sends, so a trace replays without the pools.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from kmodel.checker.actions import APPS, BARE_PODS, IMAGE
from kmodel.checker.collide_actions import SendRequest
from kmodel.checker.rulebook import RuleFamily, rule

#: amounts a container asks for, as a user writes them: ordinary ones first, then exponents, fractions below one
#: unit and one nano-unit, a sign, an int64 at its limit and past it (parsed on the slow path), and what the API
#: server refuses: a negative amount (422), an unknown suffix, a bare suffix, two dots (400: the body does not
#: decode); then zero (parsed apart) and an exponent that is no number (400)
QUANTITIES: tuple[str, ...] = (
    "100m", "1.5Gi", "1e3", "0.1", "+1", "1E-3", "128974848", "129e6", "123Mi", "0.5Mi", "1n", "1.0000000001",
    "9223372036854775807", "9223372036854775808", "99999999999999999999Ei", "12.5e-2", "-1", "-0.5Gi", "1Zi",
    "1.5.5", "Mi", "1e", "", "0", "5eM",
)
#: what the pod asks for: the two resources the scheduler counts, an extended resource (requests must equal
#: limits), one a container may not ask for (pods: an integer resource, not a standard one for containers), and a
#: name that is not a resource name at all
RESOURCES: tuple[str, ...] = ("cpu", "memory", "ephemeral-storage", "example.com/dongle", "pods", "Cpu")
#: its limit: none, the same amount, one "1" (below most requests: 422 when the request exceeds it)
LIMITS: tuple[str, ...] = ("none", "same", "1")
#: object names: ordinary, at the 63-character DNS label limit and one past, at the 253-character subdomain limit
#: and one past, with dots (a subdomain, not a label), uppercase, an underscore, a leading digit, a leading hyphen
NAMES: tuple[str, ...] = (
    "odd", "a" * 63, "a" * 64, ".".join(["b" * 63] * 4)[:253], "c" * 254, "odd.v1", "Odd", "odd_1", "1odd", "-odd",
)
#: labels (key, value): none, the apps' own, a prefixed key, at the 63-character limits of a name and a value and
#: one past, a prefix that is not a subdomain, an empty prefix, two slashes, a value with a leading hyphen
LABELS: tuple[tuple[str, str], ...] = (
    ("", ""), ("app", "web"), ("example.com/tier", "front"), ("k" * 63, "v" * 63), ("k" * 64, "v"),
    ("app", "v" * 64), ("Example_Com/tier", "x"), ("/tier", "x"), ("a/b/c", "x"), ("tier", "-front"),
)
#: annotations (key, value): none, an ordinary one, a value of any length (annotations' values are free), keys as
#: LABELS' (a key is a qualified name)
ANNOTATIONS: tuple[tuple[str, str], ...] = (
    ("", ""), ("example.com/owner", "team-a"), ("note", "x" * 1000), ("k" * 64, "x"), ("a/b/c", "x"),
)
#: Deployment selectors: matchLabels of the app's own label, each operator, then what validation refuses (In
#: without values, Exists with values, an operator that does not exist, a key that is not a qualified name), one
#: that does not match the template's labels, and an empty one
SELECTORS: tuple[dict, ...] = (
    {"matchLabels": {"app": "{app}"}},
    {"matchExpressions": [{"key": "app", "operator": "In", "values": ["{app}"]}]},
    {"matchLabels": {"app": "{app}"}, "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["x"]}]},
    {"matchLabels": {"app": "{app}"}, "matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]},
    {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
    {"matchExpressions": [{"key": "app", "operator": "In"}]},
    {"matchExpressions": [{"key": "app", "operator": "Exists", "values": ["{app}"]}]},
    {"matchExpressions": [{"key": "app", "operator": "Equals", "values": ["{app}"]}]},
    {"matchExpressions": [{"key": "a/b/c", "operator": "Exists"}]},
    {"matchLabels": {"app": "other"}},
    {},
)
#: the kinds create_odd_named makes: a ConfigMap (its name a DNS subdomain), a Service (a DNS-1035 label)
NAMED_KINDS: tuple[str, ...] = ("configmaps", "services")


def _index(pool: tuple) -> st.SearchStrategy[int]:
    return st.integers(0, len(pool) - 1)


def _meta(name: str, label: tuple[str, str], annotation: tuple[str, str]) -> dict:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if label[0]:
        meta["labels"] = {label[0]: label[1]}
    if annotation[0]:
        meta["annotations"] = {annotation[0]: annotation[1]}
    return meta


def odd_pod(pod: str, resource: str, amount: str, limit: str) -> dict:
    """A bare pod of the apps' image whose one container requests `amount` of `resource`, limited as LIMITS names."""
    resources: dict[str, Any] = {"requests": {resource: amount}}
    if limit != "none":
        resources["limits"] = {resource: amount if limit == "same" else limit}
    container = {"name": "app", "image": IMAGE, "resources": resources}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": pod, "namespace": "default", "labels": {"run": pod}},
            "spec": {"containers": [container]}}


def odd_named(resource: str, name: str, label: tuple[str, str], annotation: tuple[str, str]) -> dict:
    """A ConfigMap or a Service (of the web pods) named `name`, with `label` and `annotation` ("" keys: none)."""
    meta = _meta(name, label, annotation)
    if resource == "configmaps":
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"key": "value"}}
    return {"apiVersion": "v1", "kind": "Service", "metadata": meta,
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 80}]}}


def _with_app(value: Any, app: str) -> Any:
    """`value` (a SELECTORS entry) with "{app}" replaced by the app's name."""
    if isinstance(value, dict):
        return {k: _with_app(v, app) for k, v in value.items()}
    if isinstance(value, list):
        return [_with_app(v, app) for v in value]
    return value.replace("{app}", app) if isinstance(value, str) else value


def odd_deployment(app: str, selector: dict) -> dict:
    """The app's Deployment of one replica (the template labelled app=<app>), with `selector` (a SELECTORS entry)."""
    labels = {"app": app}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": app, "namespace": "default"},
            "spec": {"replicas": 1, "selector": _with_app(selector, app),
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "app", "image": IMAGE}]}}}}


class OddValueRules(RuleFamily):
    """The odd-value rules (see the module docstring). Mixed into KmodelMachine, which provides `_do`."""

    _do: Any

    @rule(pod=st.sampled_from(BARE_PODS), resource=_index(RESOURCES), amount=_index(QUANTITIES),
          limit=_index(LIMITS))
    def create_odd_pod(self, pod: str, resource: int, amount: int, limit: int) -> None:
        body = odd_pod(pod, RESOURCES[resource], QUANTITIES[amount], LIMITS[limit])
        self._do(SendRequest("create", "pods", "default", body=body))

    @rule(kind=_index(NAMED_KINDS), name=_index(NAMES), label=_index(LABELS), annotation=_index(ANNOTATIONS))
    def create_odd_named(self, kind: int, name: int, label: int, annotation: int) -> None:
        resource = NAMED_KINDS[kind]
        body = odd_named(resource, NAMES[name], LABELS[label], ANNOTATIONS[annotation])
        self._do(SendRequest("create", resource, "default", body=body))

    @rule(app=st.sampled_from(APPS), selector=_index(SELECTORS))
    def create_odd_selector(self, app: str, selector: int) -> None:
        body = odd_deployment(app, SELECTORS[selector])
        self._do(SendRequest("create", "deployments", "default", body=body))
