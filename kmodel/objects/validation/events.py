"""Validation of Events written through events.k8s.io/v1 (pkg/apis/core/validation/events.go, release-1.31).

One Event kind is stored for core/v1 and events.k8s.io/v1 (kmodel.objects.events_v1); what differs is the
validation: a create or update through events.k8s.io/v1 is held to ValidateEventCreate's and
ValidateEventUpdate's strict rules (eventTime, reportingController, reportingInstance, action and reason
required, the deprecated fields unset, note at most 1 KiB, most fields immutable), a core/v1 one only to the
legacy rules (`validate_event` in cluster.py; its eventTime branch is `validate_new_style`). The field paths are
upstream's, which name the core fields (`message`, `involvedObject`) even for an events.k8s.io/v1 request.
"""

from __future__ import annotations

from ..core import Event
from ..field_errors import FieldError, GoValue, invalid, required
from .common import IMMUTABLE
from .names import is_qualified_name

REPORTING_INSTANCE_LENGTH_LIMIT = 128
ACTION_LENGTH_LIMIT = 128
REASON_LENGTH_LIMIT = 128
NOTE_LENGTH_LIMIT = 1024


def validate_new_style(ev: Event) -> list[FieldError]:
    """legacyValidateEvent's rules for an Event with eventTime set (a "new" Event, whatever the group version)."""
    errs: list[FieldError] = []
    if not ev.involved_object.namespace and ev.metadata.namespace not in ("default", "kube-system"):
        errs.append(invalid("involvedObject.namespace", ev.involved_object.namespace, "does not match event.namespace"))
    if not ev.reporting_component:
        errs.append(required("reportingController"))
    controller = ev.reporting_component
    errs += [invalid("reportingController", controller, m) for m in is_qualified_name(controller)]
    if not ev.reporting_instance:
        errs.append(required("reportingInstance"))
    if len(ev.reporting_instance) > REPORTING_INSTANCE_LENGTH_LIMIT:
        errs.append(invalid("reportingInstance", "", f"can have at most {REPORTING_INSTANCE_LENGTH_LIMIT} characters"))
    if not ev.action:
        errs.append(required("action"))
    if len(ev.action) > ACTION_LENGTH_LIMIT:
        errs.append(invalid("action", "", f"can have at most {ACTION_LENGTH_LIMIT} characters"))
    if not ev.reason:
        errs.append(required("reason"))
    if len(ev.reason) > REASON_LENGTH_LIMIT:
        errs.append(invalid("reason", "", f"can have at most {REASON_LENGTH_LIMIT} characters"))
    if len(ev.message) > NOTE_LENGTH_LIMIT:
        errs.append(invalid("message", "", f"can have at most {NOTE_LENGTH_LIMIT} characters"))
    return errs


def _series(ev: Event) -> list[FieldError]:
    """validateV1EventSeries."""
    errs: list[FieldError] = []
    if ev.series is not None:
        if ev.series.count < 2:
            errs.append(invalid("series.count", "", "should be at least 2"))
        if ev.series.last_observed_time is None:
            errs.append(required("series.lastObservedTime"))
    return errs


def validate_event_v1_create(ev: Event) -> list[FieldError]:
    """ValidateEventCreate's strict rules for an events.k8s.io/v1 create (beyond the legacy ones and the metadata's,
    which `validate_event` checks)."""
    errs = _series(ev)
    if ev.event_time is None:
        errs.append(required("eventTime"))
    if ev.type not in ("Normal", "Warning"):
        errs.append(invalid("type", "", f"has invalid value: {ev.type}"))
    if ev.first_timestamp is not None:
        errs.append(invalid("firstTimestamp", "", "needs to be unset"))
    if ev.last_timestamp is not None:
        errs.append(invalid("lastTimestamp", "", "needs to be unset"))
    if ev.count:
        errs.append(invalid("count", "", "needs to be unset"))
    if ev.source.component or ev.source.host:
        errs.append(invalid("source", "", "needs to be unset"))
    return errs


#: the fields ValidateEventUpdate keeps immutable for an events.k8s.io/v1 update: (attribute, path)
_IMMUTABLE = (
    ("involved_object", "involvedObject"), ("reason", "reason"), ("message", "message"), ("source", "source"),
    ("first_timestamp", "firstTimestamp"), ("last_timestamp", "lastTimestamp"), ("count", "count"),
    ("reason", "reason"),  # listed twice upstream: a changed reason is reported twice
    ("type", "type"), ("event_time", "eventTime"), ("action", "action"), ("related", "related"),
    ("reporting_component", "reportingController"), ("reporting_instance", "reportingInstance"),
)


def validate_event_v1_update(new: Event, old: Event) -> list[FieldError]:
    """ValidateEventUpdate's strict rules for an events.k8s.io/v1 update (beyond the legacy ones and the metadata
    update rules, which `validate_update` checks): the series when it changed, and every other field immutable."""
    errs: list[FieldError] = []
    if new.series != old.series:
        errs += _series(new)
    for attr, path in _IMMUTABLE:
        value = getattr(new, attr)
        if value != getattr(old, attr):
            shown = value if isinstance(value, (str, int)) else GoValue(f"{type(value).__name__}{{...}}")
            errs.append(invalid(path, shown, IMMUTABLE))
    return errs


__all__ = ["validate_new_style", "validate_event_v1_create", "validate_event_v1_update"]
