"""A CRD version's structural openAPIV3Schema as JSON Schema, for `custom-objects-valid`'s own verdict.

The invariant judges a stored custom object with the `jsonschema` library, never with the API server's
validator (kmodel.apiserver.openapi_schema), so a mistake there cannot move the oracle with it. OpenAPI v3.0's
schema is JSON Schema draft 4 (boolean exclusiveMinimum/exclusiveMaximum) with Kubernetes' extensions, which
`to_json_schema` turns into plain JSON Schema the way apiextensions-apiserver and kube-openapi read them
(Kubernetes 1.30-1.32):

* `nullable: true`: null is a value of the node's type. kube-openapi still runs the node's enum on a null
  (SchemaValidator.Validate checks type and enum when the data is nil), so a nullable enum keeps its enum.
* `x-kubernetes-int-or-string: true`: an integer or a string.
* integral numbers: 3.0 is an integer (kube-openapi's isFloatInt; JSON Schema draft 6's rule, not draft 4's).
* pruning: the API server drops every field an object node does not declare before it stores the object,
  unless the node says `x-kubernetes-preserve-unknown-fields: true` or has `additionalProperties`; so a stored
  object node declares every field it has (`additionalProperties: false` on such a node). At the root,
  apiVersion, kind and metadata are the API server's (the invariant validates the rest of the object), and
  `x-kubernetes-embedded-resource: true` keeps them on its node too.
* `x-kubernetes-embedded-resource: true`: the node is an object with a non-empty apiVersion and kind
  (apiextensions' objectmeta validation of embedded resources).
* `format` is not checked (the library checks none without a format checker; kube-openapi knows a few).
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft4Validator, Draft6Validator, validators

from kmodel.objects.frozendict import thaw

PRESERVE = "x-kubernetes-preserve-unknown-fields"
INT_OR_STRING = "x-kubernetes-int-or-string"
EMBEDDED = "x-kubernetes-embedded-resource"
#: the fields the API server keeps at the root and on an embedded resource whatever the schema says
OBJECT_FIELDS = ("apiVersion", "kind", "metadata")
#: the keywords JSON Schema draft 4 reads as OpenAPI does, copied as they are
_KEPT = ("type", "enum", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
         "pattern", "minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties", "multipleOf", "required")

#: draft 4's keywords with draft 6's types: an integral float is an integer
StructuralValidator = validators.extend(Draft4Validator, type_checker=Draft6Validator.TYPE_CHECKER)


def to_json_schema(node: Any, root: bool = True) -> dict:
    """The JSON Schema of a structural schema node (see the module docstring); `root`: the object's top."""
    if not isinstance(node, dict):
        return {}
    out: dict[str, Any] = {k: thaw(node[k]) for k in _KEPT if k in node}
    if node.get(INT_OR_STRING):
        out["type"] = ["integer", "string"]
    properties = {k: to_json_schema(v, False) for k, v in (node.get("properties") or {}).items()}
    kept: tuple[str, ...] = ()
    if root:
        kept = OBJECT_FIELDS
        for name in OBJECT_FIELDS:
            properties.pop(name, None)
        out["required"] = [r for r in out.get("required", ()) if r not in OBJECT_FIELDS]
        if not out["required"]:
            del out["required"]
    elif node.get(EMBEDDED):
        kept = OBJECT_FIELDS
        out["type"] = "object"
        properties.setdefault("apiVersion", {"type": "string", "minLength": 1})
        properties.setdefault("kind", {"type": "string", "minLength": 1})
        properties.setdefault("metadata", {"type": "object"})
        out["required"] = sorted(set(out.get("required", ())) | {"apiVersion", "kind"})
    if properties:
        out["properties"] = properties
    additional = node.get("additionalProperties")
    if isinstance(additional, dict):
        out["additionalProperties"] = to_json_schema(additional, False)
    elif additional is True or node.get(PRESERVE):
        pass
    elif node.get("type") == "object" or properties or root:
        # pruned: nothing but the declared fields (and, at the root, the ones the API server keeps) is stored
        if kept:
            out["patternProperties"] = {f"^({'|'.join(kept)})$": {}}
        out["additionalProperties"] = False
    if isinstance(node.get("items"), dict):
        out["items"] = to_json_schema(node["items"], False)
    for combinator in ("allOf", "anyOf", "oneOf"):
        if combinator in node:
            out[combinator] = [_constraints(s) for s in node[combinator]]
    if "not" in node:
        out["not"] = _constraints(node["not"])
    if node.get("nullable"):
        return {"anyOf": [{"type": "null", **({"enum": out["enum"]} if "enum" in out else {})}, out]}
    return out


def _constraints(node: Any) -> dict:
    """A node under allOf/anyOf/oneOf/not: value validations only (structural schemas forbid types and
    pruning-relevant keywords there), so no pruning rule of its own."""
    if not isinstance(node, dict):
        return {}
    out: dict[str, Any] = {k: thaw(node[k]) for k in _KEPT if k in node}
    if isinstance(node.get("properties"), dict):
        out["properties"] = {k: _constraints(v) for k, v in node["properties"].items()}
    if isinstance(node.get("items"), dict):
        out["items"] = _constraints(node["items"])
    for combinator in ("allOf", "anyOf", "oneOf"):
        if combinator in node:
            out[combinator] = [_constraints(s) for s in node[combinator]]
    if "not" in node:
        out["not"] = _constraints(node["not"])
    return out


def validator_for(schema: Any) -> Any:
    """A validator of a CRD version's openAPIV3Schema (None: the version has none, and anything goes)."""
    if not schema:
        return None
    return StructuralValidator(to_json_schema(schema))
