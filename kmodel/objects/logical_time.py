"""Logical timestamps: integer milliseconds since a fixed epoch, printed as RFC 3339.

The model has no wall clock. Every metav1.Time / metav1.MicroTime field holds an int: milliseconds of
logical time since EPOCH, midnight UTC at the start of 2024 (chosen so dumps look like ordinary recent
timestamps), which is what logical time 0 prints as.

metav1.Time prints whole seconds in Kubernetes. To keep load -> dump -> load exact, a Time that is not a
whole second prints with milliseconds (1,250 ms after the epoch prints with ".250Z"); Kubernetes would
truncate it.
metav1.MicroTime always prints six fractional digits, as Kubernetes does.
"""

from __future__ import annotations

import datetime as _dt
import functools
import re

EPOCH = _dt.datetime(2024, 1, 1, tzinfo=_dt.timezone.utc)
#: the epoch as the API prints it (derived, so the two cannot disagree)
EPOCH_RFC3339 = EPOCH.strftime("%Y-%m-%dT%H:%M:%SZ")
#: Go writes a layout as its reference moment (Mon Jan 2 15:04:05 2006, zone -07:00) in the wanted format
_GO_REFERENCE = _dt.datetime(2006, 1, 2, 15, 4, 5)
#: Go's time.RFC3339 layout string, quoted in time.Parse-shaped error messages
GO_RFC3339 = _GO_REFERENCE.strftime("%Y-%m-%dT%H:%M:%S") + "Z07:00"

#: what Go's parseRFC3339 fast path takes (a subset of what time.Parse takes, with the same value): four-digit
#: year, two-digit fields, upper-case T and Z; anything else goes through `_go_parse`, which also words the error
_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:(Z)|([+-])(\d{2}):(\d{2}))$"
)


class TimeFormatError(ValueError):
    """Text that is not an RFC 3339 timestamp (message shaped like Go's time.Parse error)."""


#: how many of the times formatted and parsed lately are kept (a patch dumps and decodes an object's timestamps,
#: which repeat from version to version): both are pure functions of their argument
_TEXT_CACHE_SIZE = 4096


@functools.lru_cache(maxsize=_TEXT_CACHE_SIZE)
def format_time(ms: int) -> str:
    """metav1.Time as JSON text for logical milliseconds ms."""
    t = EPOCH + _dt.timedelta(milliseconds=ms)
    base = t.strftime("%Y-%m-%dT%H:%M:%S")
    frac = ms % 1000
    return f"{base}.{frac:03d}Z" if frac else f"{base}Z"


def format_micro_time(ms: int) -> str:
    """metav1.MicroTime as JSON text (always microseconds)."""
    t = EPOCH + _dt.timedelta(milliseconds=ms)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond:06d}Z"


@functools.lru_cache(maxsize=_TEXT_CACHE_SIZE)  # bad text raises every time (lru_cache keeps no exception)
def parse_time(text: str) -> int:
    """Logical milliseconds for an RFC 3339 timestamp (fractions below a millisecond are dropped), or
    TimeFormatError worded as Go's time.Parse(time.RFC3339, text) words it (what metav1.Time's UnmarshalJSON
    returns)."""
    m = _RFC3339.match(text)
    if m is not None:
        year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
        zone_hours, zone_minutes = (int(m.group(10)), int(m.group(11))) if m.group(9) else (0, 0)
        if 1 <= month <= 12 and 1 <= day <= _days_in(month, year) and hour < 24 and minute < 60 and second < 60 \
                and zone_hours < 24 and zone_minutes < 60:
            offset = (zone_hours * 60 + zone_minutes) * 60 * (-1 if m.group(9) == "-" else 1)
            nsec = int((m.group(7) or "")[:9].ljust(9, "0"))
            return _logical_ms(year, month, day, hour, minute, second, nsec, offset)
    return _logical_ms(*_go_parse(text))


def _days_in(month: int, year: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since the Unix epoch of a proleptic Gregorian date (any year Go accepts, 0 included)."""
    year -= month <= 2
    era = (year if year >= 0 else year - 399) // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


_EPOCH_DAYS = _days_from_civil(EPOCH.year, EPOCH.month, EPOCH.day)


def _logical_ms(year: int, month: int, day: int, hour: int, minute: int, second: int, nsec: int,
                offset: int) -> int:
    seconds = ((_days_from_civil(year, month, day) - _EPOCH_DAYS) * 86_400 + hour * 3600 + minute * 60 + second
               - offset)
    return seconds * 1000 + nsec // 1_000_000


def _go_quote(s: str) -> str:
    """The time package's quote: ASCII below space and non-ASCII bytes as \\x escapes, " and \\ escaped."""
    out = ['"']
    for ch in s:
        if ch < " " or ord(ch) >= 0x80:
            out.extend(f"\\x{b:02x}" for b in ch.encode("utf-8", "surrogatepass"))
        else:
            out.append("\\" + ch if ch in '"\\' else ch)
    out.append('"')
    return "".join(out)


def _getnum(s: str, fixed: bool) -> tuple[int, str]:
    """time.getnum: one or two digits (two when `fixed`); ValueError when there are none."""
    if not s[:1].isdigit() or not s[:1].isascii():
        raise ValueError
    if not s[1:2].isdigit() or not s[1:2].isascii():
        if fixed:
            raise ValueError
        return int(s[0]), s[1:]
    return int(s[:2]), s[2:]


def _go_parse(text: str) -> tuple[int, int, int, int, int, int, int, int]:
    """time.Parse(time.RFC3339, text) past its fast path, element by element as Go's parse walks the layout
    (GO_RFC3339): (year, month, day, hour, minute, second, nanoseconds, zone offset in seconds), or
    TimeFormatError with Go's message: `cannot parse "<rest>" as "<element>"`, `<field> out of range`, `extra
    text`. Like Go it takes a one-digit hour, a comma before the fraction, and a zone offset of 24:00."""
    def cannot(value: str, element: str) -> TimeFormatError:
        return TimeFormatError(f"parsing time {_go_quote(text)} as {_go_quote(GO_RFC3339)}: cannot parse "
                               f"{_go_quote(value)} as {_go_quote(element)}")

    def out_of_range(what: str) -> TimeFormatError:
        return TimeFormatError(f"parsing time {_go_quote(text)}: {what} out of range")

    def skip(value: str, literal: str) -> str:
        if not value.startswith(literal):
            raise cannot(value, literal)
        return value[len(literal):]

    value = text
    if len(value) < 4 or not value[:4].isdigit() or not value[:4].isascii():
        raise cannot(value, "2006")
    year, value = int(value[:4]), value[4:]
    fields = []
    for literal, element, fixed, limit, name in (("-", "01", True, 13, "month"), ("-", "02", True, 0, ""),
                                                 ("T", "15", False, 24, "hour"), (":", "04", True, 60, "minute"),
                                                 (":", "05", True, 60, "second")):
        value = skip(value, literal)
        try:
            number, value = _getnum(value, fixed)
        except ValueError:
            raise cannot(value, element) from None
        if limit and (number >= limit or (name == "month" and number == 0)):
            raise out_of_range(name)
        fields.append(number)
    month, day, hour, minute, second = fields
    nsec = 0
    if len(value) >= 2 and value[0] in ".," and value[1].isdigit() and value[1].isascii():
        n = 2
        while n < len(value) and value[n].isdigit() and value[n].isascii():
            n += 1
        digits = value[1:min(n, 10)]
        nsec = int(digits) * 10 ** (9 - len(digits))
        value = value[n:]
    hold = value
    if value[:1] == "Z":
        offset, value = 0, value[1:]
    else:
        if len(value) < 6 or value[3] != ":":
            raise cannot(hold, "Z07:00")
        sign, hh, mm, value = value[0], value[1:3], value[4:6], value[6:]
        try:
            hours, _ = _getnum(hh, True)
            minutes, _ = _getnum(mm, True)
        except ValueError:
            raise cannot(hold, "Z07:00") from None
        if minutes > 60:
            raise out_of_range("time zone offset minute")
        if hours > 24:
            raise out_of_range("time zone offset hour")
        if sign not in "+-":
            raise cannot(hold, "Z07:00")
        offset = (hours * 60 + minutes) * 60 * (1 if sign == "+" else -1)
    if value:
        raise TimeFormatError(f"parsing time {_go_quote(text)}: extra text: {_go_quote(value)}")
    if day < 1 or day > _days_in(month, year):
        raise out_of_range("day")
    return year, month, day, hour, minute, second, nsec, offset
