"""YAML files of API objects: multi-document load and dump (keys sorted, as kubectl prints them)."""

from __future__ import annotations

from typing import Any, Iterable

import yaml

from .codec import dump, load

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TIMESTAMP = "tag:yaml.org,2002:timestamp"


class _Loader(_BaseLoader):  # type: ignore[misc, valid-type]
    """SafeLoader without the timestamp resolver: sigs.k8s.io/yaml hands timestamps to JSON as strings."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}

_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def parse_yaml(text: str) -> list[Any]:
    """The plain documents of a (multi-document) YAML text, empty documents skipped."""
    return [doc for doc in yaml.load_all(text, Loader=_Loader) if doc is not None]


def load_yaml(text: str, *, strict: bool = True) -> list[Any]:
    """Every object in a YAML text; a `kind: List` document contributes its items."""
    out = []
    for doc in parse_yaml(text):
        if isinstance(doc, dict) and doc.get("kind") == "List" and isinstance(doc.get("items"), list):
            out.extend(load(item, strict=strict) for item in doc["items"])
        else:
            out.append(load(doc, strict=strict))
    return out


def dump_yaml(objs: Any | Iterable[Any]) -> str:
    """YAML for one object or several (separated by `---`)."""
    if isinstance(objs, (list, tuple)):
        docs = [dump(o) for o in objs]
    else:
        docs = [dump(objs)]
    return yaml.dump_all(docs, Dumper=_Dumper, sort_keys=True, default_flow_style=False, explicit_start=len(docs) > 1)
