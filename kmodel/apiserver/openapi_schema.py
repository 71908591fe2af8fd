"""A custom resource's structural openAPIV3Schema: pruning, defaulting and validation, with kube-apiserver's
messages.

Theory of operation
-------------------
The schema is the frozen JSON of a CRD version's `schema.openAPIV3Schema`. The three passes follow
apiextensions-apiserver (Kubernetes 1.30-1.32) in the order a request body meets them:

* `prune(schema, value)` (pkg/apiserver/schema/pruning): every field a `properties` does not declare is
  dropped, unless the node says `x-kubernetes-preserve-unknown-fields: true` (or has `additionalProperties`,
  whose schema then covers every key). At the root, apiVersion, kind and metadata are always kept, and so
  are they on an `x-kubernetes-embedded-resource` node, whose metadata loses the fields ObjectMeta lacks
  (embedded_resources.py validates such nodes). Returns
  the pruned value and the paths dropped (`spec.foo`), which fieldValidation=Strict turns into 400 BadRequest
  `strict decoding error: unknown field "spec.foo"` and Warn into warnings.
* `apply_defaults(schema, value)` (pkg/apiserver/schema/defaulting): a declared property with a `default`
  that is absent (or null where the schema is not nullable) gets a copy of the default, deepest first;
  other nulls where null is not allowed are dropped (PruneNonNullableNullsWithoutDefaults).
* `validate(schema, value)` (k8s.io/kube-openapi/pkg/validation/validate, turned into field errors by
  apiextensions' kubeOpenAPIResultToFieldErrors): type, nullable, x-kubernetes-int-or-string, enum,
  minimum/maximum (and exclusive), minLength/maxLength, pattern, minItems/maxItems, required, properties,
  additionalProperties and items. Messages are kube-openapi's `<path> in body ...` wrapped into field
  errors the way apiextensions does:

      spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0
      spec.size: Unsupported value: "huge": supported values: "small", "large"
      spec.name: Required value
      spec.count: Invalid value: "string": spec.count in body must be of type integer: "string"
      spec.name: Too long: may not be longer than 5      (1.30-1.31; 1.32: may not be more than 5 bytes)
      spec.tags: Too many: 4: must have at most 3 items

  A node whose type is wrong gets that one error and nothing else checked beneath it. Properties are
  checked in sorted order (Go ranges over a map: its order is random; the model's is stable).

The walk is the model's own rather than the `jsonschema` library's: every message, its field path, the order
of the errors and the rule that a wrong type stops the checks beneath it are kube-openapi's, and OpenAPI's
`nullable`, `x-kubernetes-int-or-string` and integral floats (3.0 is an integer) are not JSON Schema's, so the
library's verdicts would all have to be re-derived to produce upstream's answers; pruning and defaulting are
not validation at all.

Not done: formats (`format` is accepted and not checked), allOf/anyOf/oneOf/not, CEL
(x-kubernetes-validations), x-kubernetes-list-type uniqueness, maxProperties/minProperties, multipleOf.
`pattern` runs on Python's `re` (RE2 and Python agree on the patterns CRDs use: anchors, classes, repeats).
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any, Optional

from kmodel.apiserver.ratcheting import Node
from kmodel.objects.field_errors import ErrorType, FieldError, GoValue, invalid, not_supported, required
from kmodel.objects.meta import ObjectMeta
from kmodel.objects.schema import fields_by_json

PRESERVE = "x-kubernetes-preserve-unknown-fields"
INT_OR_STRING = "x-kubernetes-int-or-string"
EMBEDDED = "x-kubernetes-embedded-resource"
ROOT_KEPT = ("apiVersion", "kind", "metadata")


# --- pruning ---------------------------------------------------------------------------------------------

def prune(schema: Optional[dict], value: Any, *, root: bool = True) -> tuple[Any, list[str]]:
    """`value` without the fields the schema does not declare, and the paths of those fields."""
    dropped: list[str] = []
    out = _prune(schema or {}, value, "", dropped, root)
    return out, dropped


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _prune(schema: dict, value: Any, path: str, dropped: list[str], root: bool) -> Any:
    if isinstance(value, dict):
        props = schema.get("properties")
        additional = schema.get("additionalProperties")
        preserve = bool(schema.get(PRESERVE))
        embedded = bool(schema.get(EMBEDDED))
        out = {}
        for key in value:
            if root and key in ROOT_KEPT:
                out[key] = value[key]
                continue
            if embedded and key in ROOT_KEPT:
                # an embedded resource keeps its TypeMeta, and of its metadata what ObjectMeta has
                out[key] = _embedded_metadata(value[key], _join(path, key), dropped) if key == "metadata" \
                    else value[key]
                continue
            if props is not None and key in props:
                out[key] = _prune(props[key], value[key], _join(path, key), dropped, False)
            elif isinstance(additional, dict):
                out[key] = _prune(additional, value[key], _join(path, key), dropped, False)
            elif preserve or additional is True:
                out[key] = value[key]
            else:
                dropped.append(_join(path, key))
        return out
    if isinstance(value, (list, tuple)):
        items = schema.get("items")
        if isinstance(items, dict):
            return [_prune(items, x, f"{path}[{i}]", dropped, False) for i, x in enumerate(value)]
        return list(value)
    return value


def _embedded_metadata(metadata: Any, path: str, dropped: list[str]) -> Any:
    """An embedded resource's metadata without the keys ObjectMeta lacks (upstream decodes it into a
    metav1.ObjectMeta and writes that back: objectmeta.GetObjectMeta / SetObjectMeta)."""
    if not isinstance(metadata, dict):
        return metadata
    known = fields_by_json(ObjectMeta)
    for key in metadata:
        if key not in known:
            dropped.append(_join(path, key))
    return {k: v for k, v in metadata.items() if k in known}


# --- defaulting ------------------------------------------------------------------------------------------

def apply_defaults(schema: Optional[dict], value: Any) -> Any:
    """`value` with the schema's defaults filled in (a new value; the argument is not changed)."""
    if not schema:
        return value
    return _default(schema, value)


def _plain(value: Any) -> Any:
    """A mutable copy of frozen JSON."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _default(schema: dict, value: Any) -> Any:
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        out = {}
        for key, v in value.items():
            sub = props.get(key) if key in props else (additional if isinstance(additional, dict) else None)
            if v is None and sub is not None and not sub.get("nullable"):
                if "default" in sub:
                    out[key] = _default(sub, _plain(sub["default"]))
                continue  # a null where null is not allowed and no default: dropped
            out[key] = _default(sub, v) if sub is not None else v
        for key in sorted(props):
            sub = props[key]
            if key not in out and key not in value and "default" in sub:
                out[key] = _default(sub, _plain(sub["default"]))
        return out
    if isinstance(value, (list, tuple)):
        items = schema.get("items")
        if isinstance(items, dict):
            return [_default(items, x) for x in value]
    return value


# --- validation ------------------------------------------------------------------------------------------

def json_type(value: Any) -> str:
    """The JSON type name kube-openapi reports for a value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    return "object"


def go_float(x: float) -> str:
    """fmt's %v of a float64, as kube-openapi prints a schema's bounds: strconv's shortest 'g', which switches
    to an exponent when it is below -4 or at least 6 (1e+06, 1.5e-05), else plain digits (100000, 0.25)."""
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    if x == 0:
        return "0"
    sign, digits, exponent = Decimal(repr(float(x))).normalize().as_tuple()
    text = "".join(str(d) for d in digits)
    exp = len(digits) + int(exponent) - 1
    minus = "-" if sign else ""
    if exp < -4 or exp >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{minus}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    return minus + format(Decimal(text).scaleb(exp - len(text) + 1), "f")


def go_bad_value(value: Any) -> Any:
    """A data value as field.Error prints it (simple types by %v, strings by %q, anything else by %#v)."""
    if value is None:
        return "null"  # a nil BadValue prints as the string "null"
    if isinstance(value, float):
        return GoValue(go_float(value))
    if isinstance(value, (dict, list, tuple)):
        return GoValue(_go_sharp(value))
    return value


def _go_sharp(value: Any) -> str:
    if isinstance(value, dict):
        inner = ", ".join(f'"{k}":{_go_sharp(value[k])}' for k in sorted(value))
        return "map[string]interface {}{" + inner + "}"
    if isinstance(value, (list, tuple)):
        return "[]interface {}{" + ", ".join(_go_sharp(x) for x in value) + "}"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "interface {}(nil)"
    if isinstance(value, float):
        return go_float(value)
    return str(value)


def validate(schema: Optional[dict], value: Any, path: str = "") -> list[FieldError]:
    """Every field error of `value` against `schema` (see the module docstring for the messages)."""
    errors: list[FieldError] = []
    if schema:
        _validate(schema, value, path, errors, None, root=True)
    return errors


def validate_update(schema: Optional[dict], value: Any, old: Any, *, metadata_unchanged: bool) -> list[FieldError]:
    """The field errors of an update from `old` to `value`, ratcheted (ratcheting.py): the errors at a value the
    update left as it was are dropped. `metadata_unchanged`: the object's metadata, which the schema walk does not
    see, is as it was (else the root counts as changed)."""
    errors: list[FieldError] = []
    if schema:
        root = Node(old, value)
        _validate(schema, value, "", errors, root, root=True)
        if errors and metadata_unchanged and root.unchanged():
            errors.clear()
    return errors


def _type_ok(schema: dict, value: Any) -> Optional[str]:
    """None when `value` has the schema's type, else the JSON type name of the value."""
    if value is None:
        return None if schema.get("nullable") else "null"
    if schema.get(INT_OR_STRING):
        return None if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)) \
            else json_type(value)
    want = schema.get("type")
    if not want:
        return None
    got = json_type(value)
    if got == want:
        return None
    if want == "number" and got == "integer":
        return None
    if want == "integer" and got == "number" and float(value).is_integer():
        return None  # isFloatInt: 3.0 is an integer
    return got


def _validate(schema: dict, value: Any, path: str, errors: list[FieldError], node: Optional[Node],
              root: bool = False) -> None:
    """Check one node and beneath. `node`: its correlated old value on an update (None: validated as new); the
    errors found here and beneath are dropped when the node is unchanged (validation ratcheting), except at the
    root, whose metadata the walk does not see (validate_update decides it)."""
    start = len(errors)
    _check_node(schema, value, path, errors, node, root)
    if node is not None and not root and len(errors) > start and node.unchanged():
        del errors[start:]


def _check_node(schema: dict, value: Any, path: str, errors: list[FieldError], node: Optional[Node],
                root: bool) -> None:
    bad_type = _type_ok(schema, value)
    if bad_type is not None:
        want = "integer,string" if schema.get(INT_OR_STRING) else schema.get("type", "")
        errors.append(FieldError(ErrorType.TYPE_INVALID, path, bad_type,
                                 f'{path or "."} in body must be of type {want}: "{bad_type}"'))
        return
    if value is None:
        return
    where = path or "."
    if isinstance(value, str):
        _validate_string(schema, value, path, where, errors)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        _validate_number(schema, value, path, where, errors)
    elif isinstance(value, (list, tuple)):
        _validate_array(schema, value, path, where, errors, node)
    if "enum" in schema and not any(_same(value, e) for e in schema["enum"]):
        errors.append(not_supported(path, go_bad_value(value), [e if isinstance(e, str) else _json_text(e)
                                                                 for e in schema["enum"]]))
    if isinstance(value, dict):
        _validate_object(schema, value, path, errors, root, node)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or (isinstance(a, bool) and isinstance(b, bool) and a == b)
    return _plain(a) == _plain(b)


def _json_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return json.dumps(_plain(value), separators=(",", ":"), sort_keys=True)


def _validate_string(schema: dict, value: str, path: str, where: str, errors: list[FieldError]) -> None:
    max_length = schema.get("maxLength")
    if max_length is not None and len(value) > max_length:
        errors.append(FieldError(ErrorType.TOO_LONG, path, value, f"may not be longer than {int(max_length)}"))
    min_length = schema.get("minLength")
    if min_length is not None and len(value) < min_length:
        errors.append(invalid(path, value, f"{where} in body should be at least {int(min_length)} chars long"))
    pattern = schema.get("pattern")
    if pattern is not None and re.search(pattern, value) is None:
        errors.append(invalid(path, value, f"{where} in body should match '{pattern}'"))


def _validate_number(schema: dict, value: float, path: str, where: str, errors: list[FieldError]) -> None:
    bad = go_bad_value(value)
    maximum = schema.get("maximum")
    if maximum is not None:
        if schema.get("exclusiveMaximum") and value >= maximum:
            errors.append(invalid(path, bad, f"{where} in body should be less than {go_float(float(maximum))}"))
        elif value > maximum:
            errors.append(invalid(path, bad, f"{where} in body should be less than or equal to "
                                             f"{go_float(float(maximum))}"))
    minimum = schema.get("minimum")
    if minimum is not None:
        if schema.get("exclusiveMinimum") and value <= minimum:
            errors.append(invalid(path, bad, f"{where} in body should be greater than {go_float(float(minimum))}"))
        elif value < minimum:
            errors.append(invalid(path, bad, f"{where} in body should be greater than or equal to "
                                             f"{go_float(float(minimum))}"))


def _validate_array(schema: dict, value: Any, path: str, where: str, errors: list[FieldError],
                    node: Optional[Node]) -> None:
    min_items = schema.get("minItems")
    if min_items is not None and len(value) < min_items:
        errors.append(invalid(path, len(value), f"{where} in body should have at least {int(min_items)} items"))
    max_items = schema.get("maxItems")
    if max_items is not None and len(value) > max_items:
        errors.append(FieldError(ErrorType.TOO_MANY, path, len(value), f"must have at most {int(max_items)} items"))
    items = schema.get("items")
    if isinstance(items, dict):
        for i, x in enumerate(value):
            _validate(items, x, f"{path}[{i}]", errors, node.item(schema, i, x) if node is not None else None)


def _validate_object(schema: dict, value: dict, path: str, errors: list[FieldError], root: bool,
                     node: Optional[Node]) -> None:
    for key in schema.get("required") or ():
        if key not in value:
            errors.append(required(_join(path, key)))
    props = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    for key in sorted(value):
        if root and key in ROOT_KEPT:
            continue  # apiVersion, kind and metadata are the API server's, not the schema's
        sub = props.get(key) if key in props else (additional if isinstance(additional, dict) else None)
        if sub is not None:
            _validate(sub, value[key], _join(path, key), errors,
                      node.property(key, value[key]) if node is not None else None)
