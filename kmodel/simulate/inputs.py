"""What `kmodel simulate` reads: manifest files, later applies and fault specs, checked before anything runs.

Every problem here is the user's input, reported as one `InputError` line naming what is wrong and what to do
(the CLI prints it and exits 2): an unreadable path, a file that is not YAML, a document without apiVersion or
kind, a malformed fault or later-apply spec.

Manifests are read as kubectl reads `-f`: a file, or a directory's *.yaml, *.yml and *.json files in lexical
order (not recursive); documents in file order; `kind: List` expands to its items. The documents stay plain
dicts: the API server decodes them, so a misspelt field is the server's 400, not an input error, exactly as
with kubectl.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

import attrs
import yaml

from kmodel.cluster.kubectl import resource_of_manifest, unmapped_message

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
FAULT_ACTIONS = ("partition", "heal", "crash", "restart", "lose", "remove")
#: what each fault action does, for `kmodel simulate --help`
FAULT_HELP = {
    "partition": "cut the target's endpoints off the network (messages to and from them wait)",
    "heal": "join them again (what waited is delivered)",
    "crash": "crash the target's processes (their state is lost; what they sent is still delivered)",
    "restart": "start crashed processes again",
    "lose": "the node's machine fails for good; its Node is left for the control plane (TARGET: a node name)",
    "remove": "switch the node's machine off, then kubectl delete node (TARGET: a node name)",
}
#: the faults that take a whole machine out for good, and so need a node name as their target
MACHINE_ACTIONS = ("lose", "remove")


class InputError(ValueError):
    """Input `kmodel simulate` cannot use (one line; exit code 2)."""


@attrs.frozen
class Manifest:
    source: str  # the file it came from
    document: dict

    @property
    def mapped(self) -> bool:
        """Is this object's kind a built-in one the model serves? kubectl refuses one it cannot map (see
        `mapping_error`); a custom kind maps once its CRD is Established (kmodel.simulate.run.kubectl_apply)."""
        return resource_of_manifest(self.document) is not None

    def mapping_error(self) -> str:
        """kubectl apply's message for an object whose kind the server does not serve when the invocation runs
        (the others are applied): a custom kind too, even when its CRD is among the manifests of the same
        invocation, because kubectl maps every document of an invocation before it applies any."""
        return unmapped_message(self.document, self.source)


@attrs.frozen
class FaultSpec:
    action: str
    target: str
    at_ms: int

    @property
    def text(self) -> str:
        seconds = self.at_ms / 1000
        return f"{self.action}:{self.target}@{seconds:g}"


def manifest_files(path: str) -> list[Path]:
    p = Path(path)
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if f.is_file() and f.suffix in MANIFEST_SUFFIXES)
        if not files:
            raise InputError(f"no manifests in directory {path} (looked for *.yaml, *.yml, *.json files)")
        return files
    if not p.exists():
        raise InputError(f"the path {path!r} does not exist: give a manifest file or a directory of them")
    return [p]


def read_manifests(paths: Iterable[str]) -> list[Manifest]:
    manifests: list[Manifest] = []
    for path in paths:
        for file in manifest_files(path):
            manifests.extend(_read_file(file))
    if not manifests:
        raise InputError("no objects passed to apply: the manifests hold no documents")
    return manifests


def _read_file(file: Path) -> list[Manifest]:
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {file}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        documents = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"error parsing {file}{where}: {problem}; fix the YAML and try again") from None
    found: list[Manifest] = []
    for i, doc in enumerate(documents, 1):
        for item in _expand(doc, file, i):
            found.append(Manifest(str(file), item))
    return found


def _expand(doc: Any, file: Path, index: int) -> list[dict]:
    where = f"{file} (document {index})"
    if not isinstance(doc, dict):
        raise InputError(f"{where} is a {type(doc).__name__}, not an object: every document needs apiVersion and kind")
    missing = [k for k in ("apiVersion", "kind") if not doc.get(k)]
    if missing:
        raise InputError(f"{where} has no {' and no '.join(missing)}: every object needs apiVersion and kind")
    if doc["kind"] == "List" and doc["apiVersion"] == "v1":
        items = doc.get("items") or []
        return [d for j, item in enumerate(items, 1) for d in _expand(item, file, index)]
    return [doc]


@attrs.frozen
class ApplySpec:
    """`--apply FILE_OR_DIR@SECONDS`: one more `kubectl apply -f FILE_OR_DIR` at that logical time."""

    path: str
    at_ms: int
    manifests: tuple[Manifest, ...]

    @property
    def text(self) -> str:
        return f"{self.path}@{self.at_ms / 1000:g}"


def _seconds(spec: str, what: str, seconds: str, example: str) -> int:
    """The logical time `seconds` names, in ms (finite, >= 0), or the one-line InputError of a bad `what`."""
    try:
        at = float(seconds)
    except ValueError:
        raise InputError(f"bad {what} {spec!r}: {seconds!r} is not a number of seconds (e.g. {example})") from None
    if at < 0 or at != at or at == float("inf"):
        raise InputError(f"bad {what} {spec!r}: the time must be a finite number of seconds >= 0")
    return round(at * 1000)


def parse_apply(spec: str) -> ApplySpec:
    """`FILE_OR_DIR@SECONDS`, e.g. `examples/objects/database.yaml@5`: its manifests are read at once, so a
    missing file is an input error before anything runs."""
    path, at_sep, seconds = spec.rpartition("@")
    if not at_sep or not path:
        raise InputError(f"bad --apply {spec!r}: use FILE_OR_DIR@SECONDS (e.g. examples/objects/database.yaml@5)")
    at_ms = _seconds(spec, "--apply", seconds, "examples/objects/database.yaml@5")
    try:
        return ApplySpec(path, at_ms, tuple(read_manifests([path])))
    except InputError as exc:
        raise InputError(f"--apply {spec}: {exc}") from None


def parse_fault(spec: str) -> FaultSpec:
    """`ACTION:TARGET@SECONDS`, e.g. `partition:node-2@60`."""
    action, sep, rest = spec.partition(":")
    target, at_sep, seconds = rest.rpartition("@")
    if not sep or not at_sep or action not in FAULT_ACTIONS or not target:
        raise InputError(f"bad fault {spec!r}: use ACTION:TARGET@SECONDS with ACTION one of "
                         f"{', '.join(FAULT_ACTIONS)} (e.g. partition:node-2@60)")
    return FaultSpec(action, target, _seconds(spec, "fault", seconds, "partition:node-2@60"))
