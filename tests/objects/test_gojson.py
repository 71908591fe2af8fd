"""kmodel.objects.gojson: Go's json.Unmarshal errors for a document unmarshalled into a map."""

from __future__ import annotations

import pytest

from kmodel.objects.gojson import unmarshal_error


@pytest.mark.parametrize("data, error", [
    (b'{"auths": {}}', None),
    (b"null", None),  # a null leaves the map as it is
    (b"", "unexpected end of JSON input"),
    (b"{", "unexpected end of JSON input"),
    (b'{"a": "x', "unexpected end of JSON input"),
    (b"x", "invalid character 'x' looking for beginning of value"),
    (b"NaN", "invalid character 'N' looking for beginning of value"),
    (b"{a: 1}", "invalid character 'a' looking for beginning of object key string"),
    (b"{'a': 1}", "invalid character '\\'' looking for beginning of object key string"),
    (b'{"a" 1}', "invalid character '1' after object key"),
    (b'{"a": 1 "b": 2}', "invalid character '\"' after object key:value pair"),
    (b'{"a": [1 2]}', "invalid character '2' after array element"),
    (b"{} x", "invalid character 'x' after top-level value"),
    (b'{"a": "\n"}', "invalid character '\\n' in string literal"),
    (b'{"a": "\\q"}', "invalid character 'q' in string escape code"),
    (b"[1]", "json: cannot unmarshal array into Go value of type map[string]interface {}"),
    (b"3", "json: cannot unmarshal number into Go value of type map[string]interface {}"),
    (b'"s"', "json: cannot unmarshal string into Go value of type map[string]interface {}"),
    (b"true", "json: cannot unmarshal bool into Go value of type map[string]interface {}"),
])
def test_the_error_is_gos(data, error):
    assert unmarshal_error(data) == error
