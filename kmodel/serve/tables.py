"""Server-side printing: the meta.k8s.io/v1 Table kubectl asks for (``Accept: application/json;as=Table;...``).

Which columns (Kubernetes 1.32):

    a built-in kind with a printer        its columns and cells (kmodel.serve.printers, from printers.go)
    Roles, ClusterRoles, CRDs             the generic registry's default: NAME, CREATED AT (RFC 3339)
    a custom resource                     NAME, then its CRD's additionalPrinterColumns for the version served, or
                                          AGE (``.metadata.creationTimestamp``) when it has none, as
                                          apiextensions-apiserver's table convertor prints them

Each row carries its object as ``includeObject`` asks (``Metadata``, the default: a PartialObjectMetadata;
``Object``: the whole object, which ``kubectl get --sort-by`` sorts on; ``None``: nothing). A watch of Tables
sends, for each event, a Table of that event's object's one row; only the first event's Table carries the column
definitions, as kube-apiserver's (kubectl prints the header once).
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Optional, Sequence

from kmodel.apiserver.events import human_duration
from kmodel.apiserver.resources import Resource
from kmodel.apiserver.wire import Status
from kmodel.objects import dump
from kmodel.objects.logical_time import format_time, parse_time
from kmodel.serve import jsonpath
from kmodel.serve.partial import partial_object
from kmodel.serve.printers import NAME, PRINTERS, SCALE_PRINTER, Row, column

#: the generic registry's default table (rest.NewDefaultTableConvertor)
DEFAULT_COLUMNS = [NAME, column("Created At", "date")]
INCLUDE_OBJECT = ("Metadata", "Object", "None")


def _default_row(obj: Any, now: int) -> list:
    """NAME and CREATED AT: Go's time.RFC3339, whole seconds (the model's timestamps count milliseconds)."""
    created = obj.metadata.creation_timestamp or 0
    return [obj.metadata.name, format_time(created - created % 1000)]


def include_object(query: Mapping[str, str]) -> str:
    """The includeObject query parameter (Metadata when absent); TableRefused for a value upstream refuses."""
    value = query.get("includeObject", "") or "Metadata"
    if value not in INCLUDE_OBJECT:
        raise TableRefused(Status(400, "BadRequest", f'unrecognized includeObject value: "{value}"'))
    return value


class TableRefused(Exception):
    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


# -- custom resources: a CRD's additionalPrinterColumns ---------------------------------------------------------

def _printer_columns(res: Resource) -> list[dict]:
    """The additionalPrinterColumns of the version served, or upstream's default AGE column."""
    version = res.api_version.rpartition("/")[2]
    served = next((v for v in res.crd.spec.versions if v.name == version), None)
    columns = list(served.additional_printer_columns or ()) if served is not None else []
    return columns or [{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]


def _cell(kind: str, value: Any, now: int) -> Any:
    """cellForJSONValue (and the string case's jsonpath printing): None where the value does not fit."""
    if value is jsonpath.MISSING or value is None:
        return None
    if kind == "string":
        return _text(value)
    if kind == "integer" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    if kind == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind == "date" and isinstance(value, str):
        try:
            return human_duration(now - parse_time(value))
        except ValueError:
            return "<invalid>"
    return None


def _text(value: Any) -> str:
    """How client-go's jsonpath prints a value: strings as they are, other scalars as Go's fmt, the rest as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(int(value)) if float(value).is_integer() else repr(value)
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _custom_printer(res: Resource) -> tuple[list, Row]:
    specs = _printer_columns(res)
    columns = [NAME, *(column(str(c.get("name", "")), str(c.get("type", "string")), int(c.get("priority", 0) or 0),
                              str(c.get("format", "") or "")) for c in specs)]

    def row(obj: Any, now: int) -> list:
        doc = dump(obj)
        return [obj.metadata.name,
                *(_cell(str(c.get("type", "string")), jsonpath.first(doc, str(c.get("jsonPath", ""))), now)
                  for c in specs)]

    return columns, row


def printer(res: Resource, subresource: str = "") -> tuple[list, Row]:
    """The columns of `res` (of its `subresource`, for a Scale) and its row function."""
    if subresource == "scale":
        return SCALE_PRINTER
    if res.crd is not None:
        return _custom_printer(res)
    return PRINTERS.get(res.name, (DEFAULT_COLUMNS, _default_row))


# -- Tables ---------------------------------------------------------------------------------------------------

def _row_object(res: Resource, obj: Any, include: str) -> Optional[dict]:
    if include == "None":
        return None
    doc = dump(obj) if res.wire is None else res.wire.from_core(dump(obj))
    if include == "Object":
        return doc
    return partial_object(doc)


def table(res: Resource, objects: Sequence[Any], now: int, include: str = "Metadata",
          list_metadata: Optional[Mapping[str, Any]] = None, with_columns: bool = True,
          subresource: str = "") -> dict:
    """A meta.k8s.io/v1 Table of `objects`. `list_metadata`: the list's resourceVersion, continue and
    remainingItemCount (a single object's Table carries that object's resourceVersion). `subresource`: the one the
    objects were asked of (a Scale has its own columns)."""
    columns, row = printer(res, subresource)
    rows = [{"cells": row(obj, now), "object": _row_object(res, obj, include)} for obj in objects]
    if list_metadata is not None:
        metadata = dict(list_metadata)
    else:
        metadata = {"resourceVersion": objects[0].metadata.resource_version if objects else ""}
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": metadata,
            "columnDefinitions": columns if with_columns else None, "rows": rows}
