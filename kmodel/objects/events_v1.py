"""events.k8s.io/v1 Events on the wire, stored as core/v1 Events.

kube-apiserver serves one Event storage under two group versions (pkg/registry/events/rest uses core's event
store): an events.k8s.io/v1 Event is converted to the internal core Event on the way in and back on the way out
(pkg/apis/events/v1/conversion.go, release-1.31). The fields whose names differ:

    events.k8s.io/v1            core/v1
    note                        message
    regarding                   involvedObject
    reportingController         reportingComponent
    deprecatedSource            source
    deprecatedFirstTimestamp    firstTimestamp
    deprecatedLastTimestamp     lastTimestamp
    deprecatedCount             count

Every other field (metadata, eventTime, series, reason, action, related, reportingInstance, type) has one name
in both. These functions convert the JSON documents, so that the model keeps one Event class.

Field selectors name the events.k8s.io fields too (`regarding.name=web`, `reportingController=...`):
`core_field_selector` renames them to the core labels the store's selectable fields carry.
"""

from __future__ import annotations

from typing import Any

API_VERSION = "events.k8s.io/v1"

#: events.k8s.io/v1 field name -> core/v1 field name (pkg/apis/events/v1/conversion.go)
_TO_CORE = {
    "note": "message",
    "regarding": "involvedObject",
    "reportingController": "reportingComponent",
    "deprecatedSource": "source",
    "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
    "deprecatedCount": "count",
}
_FROM_CORE = {core: v1 for v1, core in _TO_CORE.items()}
#: the core fields events.k8s.io/v1 has no name for: a v1 body that carries one under its core name is refused by
#: the strict decoder as an unknown field, as upstream's
_CORE_ONLY = frozenset(_FROM_CORE)
#: the times upstream writes as null when unset (metav1.Time and MicroTime are structs: omitempty never drops
#: them), which clients read: the official Python client refuses an events.k8s.io/v1 Event without eventTime
_NULL_WHEN_UNSET = ("eventTime", "deprecatedFirstTimestamp", "deprecatedLastTimestamp")


def to_core(doc: dict) -> dict:
    """The core/v1 JSON of an events.k8s.io/v1 Event's JSON (an unknown field is kept under its own name, so that
    the decoder names it). A core-only field name in the v1 document is kept prefixed, so that strict decoding
    refuses it as unknown instead of reading it as the core field."""
    out: dict[str, Any] = {}
    for key, value in doc.items():
        if key in _CORE_ONLY:
            out[f"{API_VERSION}:{key}"] = value  # an unknown field of events.k8s.io/v1
        else:
            out[_TO_CORE.get(key, key)] = value
    if doc.get("apiVersion") == API_VERSION:
        out["apiVersion"] = "v1"
    return out


def from_core(doc: dict, nulls: bool = True) -> dict:
    """The events.k8s.io/v1 JSON of a core/v1 Event's JSON (as `kmodel.objects.dump` writes it); `nulls`: with
    the unset times written as null, as upstream answers (not for computing field sets)."""
    out = {_FROM_CORE.get(key, key): value for key, value in doc.items()}
    if "apiVersion" in out:
        out["apiVersion"] = API_VERSION
    if nulls:
        for key in _NULL_WHEN_UNSET:
            out.setdefault(key, None)
    return out


def v1_message(text: str) -> str:
    """A decoding error's message with the fields `to_core` kept prefixed named as the client sent them."""
    return text.replace(f"{API_VERSION}:", "")


#: events.k8s.io/v1 selectable field -> the core one (the events registry's EventToSelectableFields)
_SELECTOR_FIELDS = {
    "reportingController": "reportingComponent",
    **{f"regarding.{f}": f"involvedObject.{f}" for f in ("kind", "namespace", "name", "uid", "apiVersion",
                                                          "resourceVersion", "fieldPath")},
}


def core_field_selector(selector: str) -> str:
    """A field selector over events.k8s.io/v1 Events with each field renamed to its core/v1 label."""
    if not selector:
        return selector
    out = []
    for term in selector.split(","):
        for op in ("!=", "==", "="):
            field, sep, value = term.partition(op)
            if sep:
                out.append(f"{_SELECTOR_FIELDS.get(field.strip(), field.strip())}{op}{value}")
                break
        else:
            out.append(term)
    return ",".join(out)
