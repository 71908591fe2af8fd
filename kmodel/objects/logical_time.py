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

_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$"
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
    """Logical milliseconds for an RFC 3339 timestamp (fractions below a millisecond are dropped)."""
    m = _RFC3339.match(text)
    if not m:
        raise TimeFormatError(f'parsing time "{text}" as "{GO_RFC3339}": cannot parse "{text}" as "2006"')
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    frac = (m.group(7) or "")[:6].ljust(6, "0")
    try:
        t = _dt.datetime(year, month, day, hour, minute, second, int(frac), tzinfo=_dt.timezone.utc)
    except ValueError as e:
        raise TimeFormatError(f'parsing time "{text}": {e}') from None
    if m.group(9):
        offset = _dt.timedelta(hours=int(m.group(10)), minutes=int(m.group(11)))
        t = t - offset if m.group(9) == "+" else t + offset
    delta = t - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000
