"""What both operators do with custom objects: read their CRD's manifest file, and write a status."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import yaml

from kmodel.objects.frozendict import freeze, thaw


def manifests(name: str) -> tuple[dict, ...]:
    """The documents of a YAML file beside this module (a CRD, then objects of its kind)."""
    return tuple(yaml.safe_load_all(Path(__file__).with_name(name).read_text()))


def with_status(obj: Any, **status: Any) -> Any:
    """A custom object with these status fields set (the body of an update of its status subresource)."""
    content = thaw(obj.content)
    content["status"] = {**(content.get("status") or {}), **status}
    return attrs.evolve(obj, content=freeze(content))
