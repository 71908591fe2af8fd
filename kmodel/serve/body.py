"""Request bodies: how many bytes belong to a request (its framing), kube-apiserver's size limit, and decoding.

Theory of operation
-------------------
A keep-alive connection carries one request after another, so a body left unread is parsed as the next request
(the client then sees an answer to a request it never sent). The handler therefore reads every request's body
with `read_body` before it answers anything, on every path, as Go's net/http server does for kube-apiserver:

    Transfer-Encoding: chunked          the chunks, up to the last one and its trailers
    Content-Length: N                   N bytes (a non-numeric, negative or repeated different value: 400, and
                                        the connection is closed, since where the next request starts is unknown)
    neither                             no body

A body over `MAX_BODY_BYTES` (kube-apiserver's 3 MiB, --max-request-body-bytes) is refused with upstream's 413
RequestEntityTooLarge. Its bytes are read and dropped when there are at most `DRAIN_BYTES` of them, so that the
connection stays usable; a longer one (or one whose length is not known) closes the connection instead.

`decode(raw, media_type)` parses a JSON (or, for YAML media types, YAML) body. A document nested deeper than
`MAX_DEPTH` is refused with 400 before the model sees it: the model's recursive code (merge patches, validation,
dump) would otherwise meet Python's recursion limit on the model's own thread.
"""

from __future__ import annotations

import json
from typing import Any, BinaryIO, Optional

from kmodel.apiserver.wire import Status

#: kube-apiserver's limit on a request body (k8s.io/apiserver/pkg/server/config.go: MaxRequestBodyBytes, 3 MiB)
MAX_BODY_BYTES = 3 * 1024 * 1024
#: how many bytes of a refused body the server still reads to keep the connection (more: it closes it)
DRAIN_BYTES = 32 * 1024 * 1024
#: the deepest JSON or YAML document a body may be (objects and arrays nested in each other). Go's encoding/json
#: allows 10,000 levels; Python's recursion limit is 1,000 frames, and the model's code recurses per level, so
#: the server keeps well below it (real objects nest a few tens of levels at most)
MAX_DEPTH = 100
#: the most values a decoded body may hold (a JSON body of MAX_BODY_BYTES holds fewer)
MAX_NODES = MAX_BODY_BYTES
#: the largest chunk-size line of a chunked body, and of a trailer line
MAX_LINE = 4096


class BodyError(Exception):
    """A body the server refuses: `status` is the answer; `close` says the connection cannot carry another
    request (the rest of the body was not read)."""

    def __init__(self, status: Status, close: bool = False) -> None:
        super().__init__(status.message)
        self.status, self.close = status, close


def bad_request(message: str, close: bool = False) -> BodyError:
    return BodyError(Status(400, "BadRequest", message), close)


def too_large(close: bool) -> BodyError:
    """upstream's NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", limit))"""
    return BodyError(Status(413, "RequestEntityTooLarge", f"Request entity too large: limit is {MAX_BODY_BYTES}"),
                     close)


def content_length(values: list[str]) -> Optional[int]:
    """The body's length from the Content-Length header's values; None when there is none. BodyError (closing)
    when a value is not a non-negative decimal number or two values differ (RFC 9112 section 6.3)."""
    if not values:
        return None
    lengths = set()
    for value in values:
        for part in value.split(","):
            text = part.strip()
            if not text.isdigit() or not text.isascii():
                raise bad_request(f'invalid Content-Length "{value.strip()}": it must be a non-negative decimal '
                                  f'number of bytes', close=True)
            lengths.add(int(text))
    if len(lengths) > 1:
        raise bad_request(f"conflicting Content-Length values {sorted(lengths)}: send one", close=True)
    return lengths.pop()


def read_body(transfer_encoding: str, lengths: list[str], rfile: BinaryIO) -> bytes:
    """The request's body read from `rfile` (see the module docstring); BodyError for one the server refuses.
    ConnectionResetError when the client closed the connection before the whole body came."""
    encoding = transfer_encoding.strip().lower()
    if encoding:
        if encoding != "chunked":
            raise BodyError(Status(501, "NotImplemented", f'unsupported Transfer-Encoding "{transfer_encoding}": '
                                                          f'send the body chunked or with a Content-Length'),
                            close=True)
        return _read_chunked(rfile)
    length = content_length(lengths)
    if not length:
        return b""
    if length > MAX_BODY_BYTES:
        if length > DRAIN_BYTES:
            raise too_large(close=True)
        _read_exactly(rfile, length)
        raise too_large(close=False)
    return _read_exactly(rfile, length)


def _read_exactly(rfile: BinaryIO, n: int) -> bytes:
    data = rfile.read(n)
    if len(data) < n:
        raise ConnectionResetError("the client closed the connection inside a request body")
    return data


def _line(rfile: BinaryIO) -> bytes:
    line = rfile.readline(MAX_LINE + 1)
    if not line:
        raise ConnectionResetError("the client closed the connection inside a chunked body")
    if len(line) > MAX_LINE or not line.endswith(b"\n"):
        raise bad_request("a line of the chunked body is too long", close=True)
    return line.rstrip(b"\r\n")


def _read_chunked(rfile: BinaryIO) -> bytes:
    parts: list[bytes] = []
    size = 0
    read = 0  # every byte read, the refused ones too
    while True:
        text = _line(rfile).split(b";", 1)[0].strip()
        try:
            n = int(text, 16)
        except ValueError:
            n = -1
        if n < 0 or not text.isalnum():
            raise bad_request(f"invalid chunk size {text[:20]!r} in the chunked body", close=True)
        if n == 0:
            break
        read += n
        if read > DRAIN_BYTES:
            raise too_large(close=True)
        chunk = _read_exactly(rfile, n)
        if _line(rfile):
            raise bad_request("a chunk of the chunked body is longer than its size says", close=True)
        size += n
        if size <= MAX_BODY_BYTES:
            parts.append(chunk)
    while _line(rfile):  # trailers, up to the empty line
        pass
    if size > MAX_BODY_BYTES:
        raise too_large(close=False)
    return b"".join(parts)


def decode(raw: bytes, media_type: str) -> Any:
    """The body as JSON (YAML too for a YAML media type); None for an empty one. BodyError 400 when it is neither,
    or nested deeper than MAX_DEPTH."""
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except RecursionError:
        raise too_deep() from None
    except ValueError:
        if "yaml" not in media_type:
            raise bad_request("the body of the request could not be decoded as JSON") from None
        value = _yaml(raw)  # YAML nests by indentation too: always walked
    else:
        # a JSON document of at most MAX_DEPTH brackets cannot nest deeper: only then is it walked
        if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
            return value
    if depth(value) > MAX_DEPTH:
        raise too_deep()
    return value


def _yaml(raw: bytes) -> Any:
    import yaml

    try:
        return yaml.safe_load(raw)
    except RecursionError:
        raise too_deep() from None
    except yaml.YAMLError:
        raise bad_request("the body of the request could not be decoded as JSON or YAML") from None


def too_deep() -> BodyError:
    return bad_request(f"the body of the request is nested more than {MAX_DEPTH} levels deep "
                       f"(kmodel serve's limit)")


def depth(value: Any) -> int:
    """How deeply objects and arrays nest in `value` (a scalar: 0), without recursion. BodyError 400 for a value
    of more than MAX_NODES values (only YAML's aliases, which repeat one value by reference, can make one from a
    body of MAX_BODY_BYTES: the "billion laughs")."""
    deepest = 0
    stack = [(value, 1)]
    visited = 0
    while stack:
        node, level = stack.pop()
        visited += 1
        if visited > MAX_NODES:
            raise bad_request("the body of the request repeats its YAML aliases too often")
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, level)
        if deepest > MAX_DEPTH:
            return deepest
        stack.extend((child, level + 1) for child in children)
    return deepest
