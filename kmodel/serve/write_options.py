"""A write's options from its query string and headers: dryRun, fieldManager, force (CreateOptions, UpdateOptions,
PatchOptions, DeleteOptions as kube-apiserver's handlers read and validate them, Kubernetes 1.31).

* dryRun: "All" or absent, in the query (or a delete's DeleteOptions body); any other value is 422 (`dryRun:
  Unsupported value: []string{"x"}: supported values: "All"`).
* fieldManager: the query parameter; when a create, update or non-apply patch has none, the User-Agent up to its
  first "/" (handlers' managerOrUserAgent: kubectl/v1.32.0 ... -> "kubectl"). An apply gets no default: the
  pipeline answers one without a field manager 422.
* force: "true" or "false"; only an apply may set it.

Reads (get, list, watch) take none of them.
"""

from __future__ import annotations

from typing import Any, Mapping

from kmodel.apiserver.wire import Status

APPLY_MEDIA_TYPE = "application/apply-patch+yaml"
DRY_RUN_ALL = "All"
_OPTIONS_KIND = {"create": "CreateOptions", "update": "UpdateOptions", "patch": "PatchOptions",
                 "delete": "DeleteOptions"}


class OptionsRefused(Exception):
    """Options upstream's validation refuses: `status` is the answer."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


def _invalid(verb: str, field: str, detail: str) -> OptionsRefused:
    kind = _OPTIONS_KIND[verb]
    return OptionsRefused(Status(422, "Invalid", f'{kind}.meta.k8s.io "" is invalid: {field}: {detail}'))


def dry_run_of_body(values: Any) -> bool:
    """DeleteOptions.dryRun from a delete's body (a list: [] or ["All"]); OptionsRefused for any other value."""
    if not values:
        return False
    if values != [DRY_RUN_ALL]:
        shown = ", ".join(f'"{v}"' for v in values) if isinstance(values, list) else f'"{values}"'
        raise _invalid("delete", "dryRun", f'Unsupported value: []string{{{shown}}}: supported values: "All"')
    return True


def manager_from_user_agent(user_agent: str) -> str:
    """prefixFromUserAgent: the User-Agent up to its first "/"."""
    return user_agent.split("/", 1)[0]


def of(verb: str, query: Mapping[str, str], user_agent: str, apply: bool) -> dict[str, Any]:
    """The model Request's fields for a write's options (none for a read); OptionsRefused when invalid."""
    if verb not in _OPTIONS_KIND:
        return {}
    dry_run = query.get("dryRun", "")
    if dry_run and dry_run != DRY_RUN_ALL:
        raise _invalid(verb, "dryRun", f'Unsupported value: []string{{"{dry_run}"}}: supported values: "All"')
    out: dict[str, Any] = {"dry_run": dry_run == DRY_RUN_ALL}
    if verb == "delete":
        return out
    manager = query.get("fieldManager", "")
    out["field_manager"] = manager if manager or apply else manager_from_user_agent(user_agent)
    force = query.get("force", "")
    if force:
        if verb != "patch" or not apply:
            raise _invalid(verb, "force", "Forbidden: may not be specified for non-apply patch")
        if force not in ("true", "false"):
            raise OptionsRefused(Status(400, "BadRequest", f'invalid value for force: "{force}" is not a boolean'))
        out["force"] = force == "true"
    return out
