"""What `kmodel check --operator` is told: the operator's command, its manifests (CRDs, RBAC, config), the user it
runs as, how to know it is ready, and its own invariants; each option checked with a one-line error."""

from __future__ import annotations

import importlib
import shlex
import sys
from pathlib import Path
from typing import Any, Optional, Sequence

import attrs
import yaml

from kmodel.errors import KmodelUsageError
from kmodel.invariants.registry import LIVENESS, SAFETY, Invariant, first_sentence
from kmodel.operator.readiness import check_ready_spec
from kmodel.serve.session import rbac_users
from kmodel.simulate.run import BUILT_IN_USERS


@attrs.frozen
class CustomResource:
    """One resource of the operator's CRDs: what the checker's user actions need."""

    plural: str
    group: str
    version: str
    kind: str
    namespaced: bool
    #: the storage version's openAPIV3Schema of `spec` ({} when it declares none)
    spec_schema: dict = attrs.field(eq=False)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"


@attrs.frozen
class OperatorSpec:
    command: tuple[str, ...]
    manifests: tuple[dict, ...] = attrs.field(eq=False)
    user: str
    resources: tuple[CustomResource, ...]
    ready: str = "watch"
    invariants: tuple[Invariant, ...] = ()


def read_manifests(paths: Sequence[str]) -> list[dict]:
    docs: list[dict] = []
    for path in paths:
        files = sorted(Path(path).glob("*.y*ml")) if Path(path).is_dir() else [Path(path)]
        for file in files:
            try:
                loaded = [d for d in yaml.safe_load_all(file.read_text(encoding="utf-8")) if d]
            except (OSError, yaml.YAMLError) as exc:
                raise KmodelUsageError(f"--operator-manifests {file}: cannot read it ({exc}); name YAML files "
                                       f"or folders of them") from None
            if not all(isinstance(d, dict) for d in loaded):
                raise KmodelUsageError(f"--operator-manifests {file}: a document is not a mapping (an object)")
            docs.extend(loaded)
    return docs


def custom_resources(manifests: Sequence[dict]) -> tuple[CustomResource, ...]:
    """The resources the manifests' CustomResourceDefinitions define (the storage version of each)."""
    found = []
    for doc in manifests:
        if doc.get("kind") != "CustomResourceDefinition":
            continue
        spec = doc.get("spec") or {}
        versions = spec.get("versions") or []
        version = next((v for v in versions if v.get("storage")), versions[0] if versions else {})
        schema = ((version.get("schema") or {}).get("openAPIV3Schema") or {})
        found.append(CustomResource(plural=spec.get("names", {}).get("plural", ""), group=spec.get("group", ""),
                                    version=version.get("name", ""), kind=spec.get("names", {}).get("kind", ""),
                                    namespaced=spec.get("scope") == "Namespaced",
                                    spec_schema=(schema.get("properties") or {}).get("spec") or {}))
    return tuple(found)


def operator_user(manifests: Sequence[dict], named: Optional[str]) -> str:
    """The user the operator runs as: `named` (--operator-user), else the one user of kind User the manifests'
    RoleBindings and ClusterRoleBindings name (the operator gets the RBAC they grant, nothing more)."""
    users = [u for u in rbac_users(manifests) if u not in BUILT_IN_USERS and u != "admin"]
    if named is not None:
        if named not in users:
            raise KmodelUsageError(f"--operator-user {named}: no RoleBinding or ClusterRoleBinding of "
                                   f"--operator-manifests names this User; bind its role to it there")
        return named
    if len(users) != 1:
        which = f"they name {', '.join(users)}" if users else "they name none"
        raise KmodelUsageError(f"--operator-manifests must bind the operator's role to one subject of kind User "
                               f"({which}); or choose one with --operator-user")
    return users[0]


def load_invariants(values: Sequence[str]) -> tuple[Invariant, ...]:
    """--invariants module:NAME: an Invariant, a sequence of them, or a function (a safety invariant named after it,
    its docstring's first sentence its guarantee)."""
    found: list[Invariant] = []
    for value in values:
        module_name, _, attr = value.partition(":")
        if not module_name or not attr:
            raise KmodelUsageError(f"--invariants {value}: write module:NAME (e.g. examples.operators.websites:"
                                   f"INVARIANTS)")
        if "" not in sys.path and "." not in sys.path:
            sys.path.append("")  # the working folder, last, as --component imports from it
        try:
            obj = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise KmodelUsageError(f"--invariants {value}: cannot import it ({exc}); run from the folder the "
                                   f"module is imported from") from None
        for item in (obj if isinstance(obj, (list, tuple)) else [obj]):
            found.append(_as_invariant(value, item))
    return tuple(found)


def _as_invariant(value: str, item: Any) -> Invariant:
    if isinstance(item, Invariant):
        if item.kind not in (SAFETY, LIVENESS):
            raise KmodelUsageError(f"--invariants {value}: {item.name}'s kind must be safety or liveness")
        return item
    if callable(item) and first_sentence(getattr(item, "__doc__", None)):
        name = getattr(item, "__name__", "invariant").replace("_", "-")
        return Invariant(name, SAFETY, "operator", first_sentence(item.__doc__), item)
    raise KmodelUsageError(f"--invariants {value}: not an Invariant, a list of them, or a function with a docstring")


#: a CRD annotation naming the operator's invariants (MODULE:NAME, comma-separated), read as --invariants values:
#: an operator's manifests can carry its guarantees with them
INVARIANTS_ANNOTATION = "kmodel.dev/invariants"


def annotated_invariants(manifests: Sequence[dict]) -> list[str]:
    """The MODULE:NAME values the manifests' CRDs name in their INVARIANTS_ANNOTATION, in order."""
    values = []
    for doc in manifests:
        if doc.get("kind") == "CustomResourceDefinition":
            annotation = ((doc.get("metadata") or {}).get("annotations") or {}).get(INVARIANTS_ANNOTATION, "")
            values.extend(v.strip() for v in str(annotation).split(",") if v.strip())
    return values


def operator_spec(command: str, manifests: Sequence[str], user: Optional[str], ready: str,
                  invariants: Sequence[str]) -> OperatorSpec:
    words = tuple(shlex.split(command))
    if not words:
        raise KmodelUsageError("--operator: give the command that starts the operator, e.g. "
                               "\"kopf run --standalone op.py\"")
    docs = read_manifests(manifests)
    resources = custom_resources(docs)
    if not resources:
        raise KmodelUsageError("--operator-manifests: no CustomResourceDefinition among them; name the file with "
                               "the operator's CRDs")
    check_ready_spec(ready)
    return OperatorSpec(command=words, manifests=tuple(docs), user=operator_user(docs, user), resources=resources,
                        ready=ready,
                        invariants=load_invariants(list(dict.fromkeys([*annotated_invariants(docs), *invariants]))))
