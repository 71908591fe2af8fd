"""resource.Quantity, parsed and printed exactly as k8s.io/apimachinery/pkg/api/resource does.

A Quantity is stored as an integer number of nano-units (apimachinery rounds every parsed value up, away
from zero, to a multiple of 10^-9, so nothing is lost) plus its format (DecimalSI, BinarySI,
DecimalExponent) and its canonical string. Equality and ordering compare the amount only, as
`Quantity.Cmp` does: 1Gi == 1073741824. Arithmetic helpers return new Quantities.

Parsing follows ParseQuantity: the scanner (parseQuantityString), the suffix table, the int64 fast path that
keeps the caller's string when it is already canonical, the slow path that rounds up to nano, the BinarySI
cap and the switch from BinarySI to DecimalSI for values between 0 and 1. Printing follows
CanonicalizeBytes.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import attrs

DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"

SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG = "quantities must match the regular expression '" + SPLIT_RE + "'"
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"

_NANO = 10**9
_INT64_MAX = (1 << 63) - 1
_DEC_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DEC_BY_EXP = {v: k for k, v in _DEC_SUFFIXES.items()}
_BIN_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_BIN_BY_EXP = {v: k for k, v in _BIN_SUFFIXES.items()}
_BIN_BY_EXP[0] = ""
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")


class QuantityError(ValueError):
    """A string that ParseQuantity rejects; the message is apimachinery's."""


@attrs.frozen(repr=False, order=True)
class Quantity:
    """An exact resource amount (see module docstring). Build with parse_quantity or Quantity.from_nano."""

    nano: int
    format: str = attrs.field(default=DECIMAL_SI, eq=False, order=False)
    string: str = attrs.field(default="", eq=False, order=False)

    @classmethod
    def from_nano(cls, nano: int, format: str = DECIMAL_SI) -> "Quantity":
        return cls(nano, format, _canonical(nano, format))

    @classmethod
    def from_milli(cls, milli: int, format: str = DECIMAL_SI) -> "Quantity":
        return cls.from_nano(milli * 10**6, format)

    @classmethod
    def from_int(cls, value: int, format: str = DECIMAL_SI) -> "Quantity":
        return cls.from_nano(value * _NANO, format)

    def milli_value(self) -> int:
        """MilliValue(): the amount in thousandths, rounded away from zero (cpu: millicores)."""
        return _round_away(self.nano, 10**6)

    def value(self) -> int:
        """Value(): the amount in units, rounded away from zero (memory: bytes; pods: count)."""
        return _round_away(self.nano, _NANO)

    def is_zero(self) -> bool:
        return self.nano == 0

    def sign(self) -> int:
        return (self.nano > 0) - (self.nano < 0)

    def __add__(self, other: "Quantity") -> "Quantity":
        # Add keeps the receiver's format unless the receiver is zero (then it takes the other's).
        fmt = other.format if self.nano == 0 else self.format
        return Quantity.from_nano(self.nano + other.nano, fmt)

    def __sub__(self, other: "Quantity") -> "Quantity":
        fmt = other.format if self.nano == 0 else self.format
        return Quantity.from_nano(self.nano - other.nano, fmt)

    def __neg__(self) -> "Quantity":
        return Quantity.from_nano(-self.nano, self.format)

    def __str__(self) -> str:
        return self.string

    def __repr__(self) -> str:
        return f"Quantity({self.string!r})"


def _round_away(nano: int, unit: int) -> int:
    q, r = divmod(abs(nano), unit)
    if r:
        q += 1
    return q if nano >= 0 else -q


def parse_quantity(text: str) -> Quantity:
    """ParseQuantity: the Quantity text denotes, or QuantityError with apimachinery's message."""
    if not text:
        raise QuantityError(ERR_FORMAT_WRONG)
    if text == "0":
        return Quantity(0, DECIMAL_SI, "0")
    positive, value, num, denom, suf = _scan(text)
    base, exponent, fmt = _interpret(suf)

    scale = 0
    mantissa = 1
    if fmt in (DECIMAL_EXPONENT, DECIMAL_SI):
        scale = exponent
        precision = 18 - (len(num) + len(denom))
    elif exponent >= 0 and not denom:
        mantissa = 1 << exponent
        precision = 15 - len(num) - (exponent * 3) // 10 - 1
    else:
        precision = -1

    if precision >= 0:
        scale -= len(denom)
        if scale >= -9:
            shifted = num + denom
            result = int(shifted) * mantissa
            if result <= _INT64_MAX:
                if not positive:
                    result = -result
                nano = result * 10 ** (scale + 9)
                if fmt == BINARY_SI:
                    reuse = exponent % 10 == 0 and (int(shifted) & 0x07) != 0
                else:
                    reuse = scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
                return Quantity(nano, fmt, text if reuse else _canonical(nano, fmt))

    try:
        amount = Fraction(value)
    except (ValueError, ZeroDivisionError):
        raise QuantityError(ERR_NUMERIC) from None
    amount *= Fraction(10) ** exponent if base == 10 else Fraction(2) ** exponent
    negative = amount < 0
    amount = abs(amount)
    # Round non-zero values up to the smallest representable amount (1n), as apimachinery does.
    nano = -((-amount * _NANO).__floor__())
    if fmt == BINARY_SI and nano > _INT64_MAX * _NANO:
        nano = _INT64_MAX * _NANO
    if fmt == BINARY_SI and 0 < nano < _NANO:
        fmt = DECIMAL_SI
    if negative:
        nano = -nano
    return Quantity(nano, fmt, _canonical(nano, fmt))


def quantity(value: Any) -> Quantity:
    """A Quantity from a string, int or float as it appears in JSON/YAML (UnmarshalJSON's rules)."""
    if isinstance(value, Quantity):
        return value
    if isinstance(value, bool):
        return parse_quantity("true" if value else "false")
    if isinstance(value, int):
        return parse_quantity(str(value))
    if isinstance(value, float):
        return parse_quantity(repr(value) if not value.is_integer() else str(int(value)))
    return parse_quantity(str(value).strip())


def _scan(text: str) -> tuple[bool, str, str, str, str]:
    """parseQuantityString: (positive, value, num, denom, suffix)."""
    positive = True
    pos = 0
    end = len(text)
    if text[0] == "-":
        positive = False
        pos = 1
    elif text[0] == "+":
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "0", "", ""
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos]
    if pos >= end:
        return positive, text, num, "", ""
    if not num:
        num = "0"
    denom = ""
    if text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
        if pos >= end:
            return positive, text, num, denom, ""
    value = text[:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos >= end:
        return positive, value, num, denom, text[suffix_start:]
    if text[pos] in "-+":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(ERR_FORMAT_WRONG)
    return positive, value, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, str]:
    """quantitySuffixer.interpret: (base, exponent, format)."""
    if suffix in _DEC_SUFFIXES:
        return 10, _DEC_SUFFIXES[suffix], DECIMAL_SI
    if suffix in _BIN_SUFFIXES:
        return 2, _BIN_SUFFIXES[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        rest = suffix[1:]
        digits = rest[1:] if rest[0] in "+-" else rest
        if digits and all(c in _DIGITS for c in digits):
            exp = int(rest)
            if -(1 << 63) <= exp < (1 << 63):
                # Go truncates the parsed int64 to int32.
                exp = (exp + (1 << 31)) % (1 << 32) - (1 << 31)
                return 10, exp, DECIMAL_EXPONENT
    raise QuantityError(ERR_SUFFIX)


def _canonical(nano: int, fmt: str) -> str:
    """CanonicalizeBytes: the string apimachinery prints for this amount and format."""
    if nano == 0:
        return "0"
    if fmt == BINARY_SI:
        if -1024 * _NANO < nano < 1024 * _NANO or nano % _NANO:
            fmt = DECIMAL_SI
        else:
            amount = nano // _NANO
            exp = 0
            while amount % 1024 == 0 and exp < 60:
                amount //= 1024
                exp += 10
            return f"{amount}{_BIN_BY_EXP[exp]}"
    mantissa, exponent = nano, -9
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    while exponent % 3:
        mantissa *= 10
        exponent -= 1
    if fmt == DECIMAL_EXPONENT:
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    suffix = _DEC_BY_EXP.get(exponent)
    if suffix is None:  # beyond "E": apimachinery has no SI suffix; show the exponent
        return f"{mantissa}e{exponent}"
    return f"{mantissa}{suffix}"
