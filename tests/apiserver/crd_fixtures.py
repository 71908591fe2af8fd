"""The example CRD (examples/crd.yaml) and Database bodies, for the custom resource tests."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CRD = yaml.safe_load((EXAMPLES / "crd.yaml").read_text())
DATABASE = yaml.safe_load((EXAMPLES / "objects" / "database.yaml").read_text())


def crd_body(**changes) -> dict:
    body = copy.deepcopy(CRD)
    body.update(changes)
    return body


def database(name: str = "orders", namespace: str = "default", spec: dict | None = None, **top) -> dict:
    body = {"apiVersion": "example.com/v1", "kind": "Database", "metadata": {"name": name, "namespace": namespace},
            "spec": {"engine": "postgres", "replicas": 2} if spec is None else spec}
    body.update(top)
    return body
