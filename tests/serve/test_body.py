"""kmodel.serve.body on its own: framing (Content-Length, chunked), the 3 MiB limit, and decoding with its depth
and alias limits."""

from __future__ import annotations

import io

import pytest

from kmodel.serve import body
from kmodel.serve.body import BodyError, MAX_BODY_BYTES, MAX_DEPTH, decode, read_body


def refused(transfer_encoding: str, lengths: list[str], data: bytes) -> BodyError:
    with pytest.raises(BodyError) as caught:
        read_body(transfer_encoding, lengths, io.BytesIO(data))
    return caught.value


def test_content_length_reads_exactly_its_bytes() -> None:
    stream = io.BytesIO(b'{"a": 1}GET / HTTP/1.1\r\n')
    assert read_body("", ["8"], stream) == b'{"a": 1}'
    assert stream.read() == b"GET / HTTP/1.1\r\n"  # the next request, untouched
    assert read_body("", [], io.BytesIO(b"x")) == b""
    assert read_body("", ["3", "3"], io.BytesIO(b"abc")) == b"abc"  # repeated, but the same: one length


@pytest.mark.parametrize("lengths", [["abc"], ["-1"], ["+3"], ["3", "4"], ["3, 4"], ["٣"]])
def test_a_bad_content_length_is_400_and_closes(lengths: list[str]) -> None:
    error = refused("", lengths, b"abcd")
    assert (error.status.code, error.status.reason, error.close) == (400, "BadRequest", True)


def test_a_body_over_the_limit_is_413_drained_when_short_enough() -> None:
    stream = io.BytesIO(b"x" * (MAX_BODY_BYTES + 1) + b"NEXT")
    with pytest.raises(BodyError) as caught:
        read_body("", [str(MAX_BODY_BYTES + 1)], stream)
    assert caught.value.status.message == "Request entity too large: limit is 3145728"
    assert not caught.value.close and stream.read() == b"NEXT"
    error = refused("", [str(body.DRAIN_BYTES + 1)], b"")
    assert (error.status.code, error.close) == (413, True)


def test_a_closed_connection_inside_a_body_is_a_reset() -> None:
    with pytest.raises(ConnectionResetError):
        read_body("", ["10"], io.BytesIO(b"short"))
    with pytest.raises(ConnectionResetError):
        read_body("chunked", [], io.BytesIO(b"5\r\nab"))


def test_chunked_bodies() -> None:
    stream = io.BytesIO(b"3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: x\r\n\r\nNEXT")
    assert read_body("chunked", ["999"], stream) == b"abcde"  # Transfer-Encoding wins over Content-Length
    assert stream.read() == b"NEXT"
    for broken in (b"zz\r\nabc\r\n0\r\n\r\n", b"-3\r\nabc\r\n0\r\n\r\n", b"2\r\nabc\r\n0\r\n\r\n"):
        error = refused("chunked", [], broken)
        assert (error.status.code, error.close) == (400, True), broken
    error = refused("gzip", [], b"")
    assert (error.status.code, error.status.reason, error.close) == (501, "NotImplemented", True)


def test_a_chunked_body_over_the_limit_is_read_to_its_end_then_refused() -> None:
    chunk = b"x" * (1024 * 1024)
    data = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(4)) + b"0\r\n\r\nNEXT"
    stream = io.BytesIO(data)
    with pytest.raises(BodyError) as caught:
        read_body("chunked", [], stream)
    assert (caught.value.status.code, caught.value.close) == (413, False) and stream.read() == b"NEXT"


def test_decode_limits_the_depth_of_json_and_yaml() -> None:
    assert decode(b"", "application/json") is None
    at_limit = b"[" * MAX_DEPTH + b"]" * MAX_DEPTH
    assert body.depth(decode(at_limit, "application/json")) == MAX_DEPTH
    for deep in (b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), b"[" * 100_000):
        with pytest.raises(BodyError) as caught:
            decode(deep, "application/json")
        assert caught.value.status.code == 400
    yaml_deep = "".join(f"{'  ' * i}k:\n" for i in range(MAX_DEPTH + 1)).encode() + b"  " * (MAX_DEPTH + 1) + b"v\n"
    with pytest.raises(BodyError, match="nested more than"):
        decode(yaml_deep, "application/yaml")
    assert decode(b"a: 1\n", "application/yaml") == {"a": 1}
    with pytest.raises(BodyError, match="could not be decoded as JSON"):
        decode(b"a: 1\n", "application/json")


def test_yaml_aliases_cannot_blow_a_body_up() -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        lines.append(f"{'abcdefghi'[i]}: &{'abcdefghi'[i]} [" + ", ".join(f"*{'abcdefghi'[i - 1]}" * 1
                                                                           for _ in range(10)) + "]")
    with pytest.raises(BodyError, match="aliases"):
        decode("\n".join(lines).encode(), "application/yaml")
