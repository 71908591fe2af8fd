"""resource.Quantity parsing and printing, against apimachinery's behaviour."""

import pytest

from kmodel.objects import Quantity, QuantityError, parse_quantity
from kmodel.objects.quantity import ERR_FORMAT_WRONG, ERR_SUFFIX

# (text, canonical string, milli value, value)
TABLE = [
    ("100m", "100m", 100, 1),
    ("64Mi", "64Mi", 64 * 2**20 * 1000, 64 * 2**20),
    ("1Gi", "1Gi", 2**30 * 1000, 2**30),
    ("15800m", "15800m", 15800, 16),
    ("16", "16", 16000, 16),
    ("1e3", "1e3", 1_000_000, 1000),
    ("0.5", "500m", 500, 1),
    ("1.5", "1500m", 1500, 2),
    ("1000m", "1", 1000, 1),
    ("2000", "2k", 2_000_000, 2000),
    ("1024Mi", "1Gi", 2**30 * 1000, 2**30),
    ("1.5Gi", "1536Mi", 1536 * 2**20 * 1000, 1536 * 2**20),
    ("0.5Gi", "512Mi", 512 * 2**20 * 1000, 512 * 2**20),
    ("100Ki", "100Ki", 102400 * 1000, 102400),
    ("0.1n", "1n", 1, 1),  # rounded up to the smallest amount
    ("0", "0", 0, 0),
    ("-1", "-1", -1000, -1),
    ("12e6", "12e6", 12_000_000_000, 12_000_000),
    ("1k", "1k", 1_000_000, 1000),
    ("0.0001", "100u", 1, 1),
]


@pytest.mark.parametrize("text,canonical,milli,value", TABLE)
def test_parse(text, canonical, milli, value):
    q = parse_quantity(text)
    assert str(q) == canonical
    assert q.milli_value() == milli
    assert q.value() == value
    assert parse_quantity(canonical) == q


@pytest.mark.parametrize("text,error", [
    ("", ERR_FORMAT_WRONG), ("abc", ERR_FORMAT_WRONG), ("1.2.3", ERR_FORMAT_WRONG), ("1Zi", ERR_FORMAT_WRONG),
    ("1K", ERR_SUFFIX), ("1ei", ERR_SUFFIX),
])
def test_rejects(text, error):
    with pytest.raises(QuantityError) as e:
        parse_quantity(text)
    assert str(e.value) == error


def test_equality_is_numeric_and_arithmetic_is_exact():
    assert parse_quantity("1Gi") == parse_quantity("1073741824")
    assert parse_quantity("100m") < parse_quantity("1")
    total = parse_quantity("100m") + parse_quantity("250m")
    assert str(total) == "350m" and total.milli_value() == 350
    assert str(parse_quantity("1Gi") - parse_quantity("512Mi")) == "512Mi"
    assert Quantity.from_milli(1500).string == "1500m"
