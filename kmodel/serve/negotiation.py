"""Content negotiation of an answer's shape: what the ``Accept`` header asks a read (get, list, watch) to be.

kube-apiserver serves an object as itself or converted to one of the meta.k8s.io kinds a media type parameter
names (k8s.io/apiserver/pkg/endpoints/handlers/negotiation, and RequestScope.AllowsConversion):
``application/json;as=Table;g=meta.k8s.io;v=v1`` (kubectl get's server-side printing),
``...;as=PartialObjectMetadataList`` and ``...;as=PartialObjectMetadata`` (the metadata-only reads of
controller-runtime's metadata informers and of the garbage collector). A client lists its choices in order of
preference, e.g. client-go's metadata client sends a protobuf choice first, then the JSON one, then plain JSON;
the first choice the server can serve wins. This server encodes JSON only: a protobuf choice is passed over (as a
server without protobuf does), and a header with no choice the server serves, where one of the choices asked for a
conversion or every choice is protobuf, is 406 NotAcceptable. A header that asks for no conversion at all (plain
JSON, YAML, ``*/*``, or no header) is answered with the object as JSON, as before.
"""

from __future__ import annotations

from typing import Optional

from kmodel.apiserver.wire import Status

TABLE = "Table"
PARTIAL = "PartialObjectMetadata"
PARTIAL_LIST = "PartialObjectMetadataList"
#: the kinds of meta.k8s.io/v1 an answer may be converted to
CONVERSIONS = (TABLE, PARTIAL, PARTIAL_LIST)
#: the media types whose choices this server can answer (as JSON)
JSON_TYPES = ("application/json", "application/*", "*/*")
#: what the 406 answer names, as upstream's NotAcceptable lists the media types it encodes
SERVED_MEDIA_TYPES = ("application/json",)
PROTOBUF = "application/vnd.kubernetes.protobuf"


def conversion(accept: str) -> str:
    """The meta.k8s.io/v1 kind the answer is to be converted to ("" for the object itself). Raises NotAcceptable
    when every choice that asks for a conversion names one the server does not serve and no plain choice remains."""
    if "as=" not in accept:  # the hot path: plain JSON
        if PROTOBUF in accept and all(_parse(choice)[0] == PROTOBUF for choice in accept.split(",")):
            raise _not_acceptable()
        return ""
    wanted_some = False
    for choice in accept.split(","):
        media_type, params = _parse(choice)
        if "as" in params:
            wanted_some = True
        if media_type not in JSON_TYPES:
            continue
        kind = params.get("as", "")
        if not kind:
            return ""
        if kind in CONVERSIONS and params.get("g") == "meta.k8s.io" and params.get("v") == "v1":
            return kind
    if wanted_some:
        raise _not_acceptable()
    return ""


def _not_acceptable() -> NotAcceptable:
    return NotAcceptable(Status(406, "NotAcceptable", f"only the following media types are accepted: "
                                                      f"{', '.join(SERVED_MEDIA_TYPES)}"))


def _parse(choice: str) -> tuple[str, dict[str, str]]:
    """(media type, parameters) of one choice of an Accept header."""
    parts = choice.split(";")
    params: dict[str, str] = {}
    for part in parts[1:]:
        key, _, value = part.partition("=")
        params[key.strip()] = value.strip()
    return parts[0].strip().lower(), params


def mismatch(kind: str, is_list: bool, type_name: str) -> Optional[Status]:
    """upstream's 406 for a conversion that does not fit the answer (asPartialObjectMetadata and
    asPartialObjectMetadataList in k8s.io/apiserver/pkg/endpoints/handlers/response.go), None when it fits."""
    if kind == PARTIAL and is_list:
        return Status(406, "NotAcceptable", f"you requested PartialObjectMetadata, but the requested object is a "
                                            f"list ({type_name})")
    if kind == PARTIAL_LIST and not is_list:
        return Status(406, "NotAcceptable", f"you requested PartialObjectMetadataList, but the requested object is "
                                            f"not a list ({type_name})")
    return None


class NotAcceptable(Exception):
    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status
