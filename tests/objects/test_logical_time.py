"""Logical timestamps print and parse as RFC 3339; the texts kept from earlier calls are the texts computed anew."""

from __future__ import annotations

import pytest

from kmodel.objects import logical_time as lt


@pytest.mark.parametrize("ms", [0, 1, 999, 1_000, 1_250, 86_400_000, 31_622_400_123])
def test_a_time_prints_and_parses_back_the_same_from_the_cache_and_without(ms):
    text = lt.format_time(ms)
    assert text == lt.format_time.__wrapped__(ms) == lt.format_time(ms)
    assert lt.parse_time(text) == lt.parse_time.__wrapped__(text) == lt.parse_time(text) == ms


def test_known_texts_and_a_bad_one_refused_every_time():
    assert lt.format_time(0) == lt.EPOCH_RFC3339 and lt.format_time(1_250) == "2024-01-01T00:00:01.250Z"
    assert lt.parse_time("2024-01-01T01:00:00+01:00") == 0
    misses = lt.parse_time.cache_info().misses
    for _ in range(2):
        with pytest.raises(lt.TimeFormatError):
            lt.parse_time("yesterday")
    assert lt.parse_time.cache_info().misses == misses + 2  # worked out (and refused) anew each time


@pytest.mark.parametrize("text, message", [
    ("2024-01-01", 'parsing time "2024-01-01" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "T"'),
    ("2024-01-01T00:00:00", 'parsing time "2024-01-01T00:00:00" as "2006-01-02T15:04:05Z07:00": cannot parse "" as '
                            '"Z07:00"'),
    ("2024-01-01t00:00:00Z", 'parsing time "2024-01-01t00:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse '
                             '"t00:00:00Z" as "T"'),
    ("2024-01-01T00:00:00z", 'parsing time "2024-01-01T00:00:00z" as "2006-01-02T15:04:05Z07:00": cannot parse "z" as '
                             '"Z07:00"'),
    ("2024-1-01T00:00:00Z", 'parsing time "2024-1-01T00:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse '
                            '"1-01T00:00:00Z" as "01"'),
    ("2024-13-01T00:00:00Z", 'parsing time "2024-13-01T00:00:00Z": month out of range'),
    ("2024-02-30T00:00:00Z", 'parsing time "2024-02-30T00:00:00Z": day out of range'),
    ("2024-01-01T24:00:00Z", 'parsing time "2024-01-01T24:00:00Z": hour out of range'),
    ("2024-01-01T00:00:60Z", 'parsing time "2024-01-01T00:00:60Z": second out of range'),
    ("2024-01-01T00:00:00+25:00", 'parsing time "2024-01-01T00:00:00+25:00": time zone offset hour out of range'),
    ("2024-01-01T00:00:00Z!", 'parsing time "2024-01-01T00:00:00Z!": extra text: "!"'),
    ("é", 'parsing time "\\xc3\\xa9" as "2006-01-02T15:04:05Z07:00": cannot parse "\\xc3\\xa9" as "2006"'),
])
def test_a_bad_timestamp_is_refused_with_gos_time_parse_message(text, message):
    """time.Parse(time.RFC3339, ...) past its fast path: the element it stopped at, with what was left of the
    text, or the field out of range (Go 1.22, which builds Kubernetes 1.31)."""
    with pytest.raises(lt.TimeFormatError) as refused:
        lt.parse_time(text)
    assert str(refused.value) == message


@pytest.mark.parametrize("text, ms", [
    ("2024-01-01T5:00:00Z", 5 * 3_600_000),  # a one-digit hour: Go's layout element 15 takes it
    ("2024-01-01T00:00:00,250Z", 250),  # a comma before the fraction
    ("2024-01-01T00:00:00.123456789999Z", 123),  # digits past nanoseconds are dropped
    ("2024-01-01T00:00:00+24:00", -86_400_000),  # an offset of 24 hours
    ("2023-12-31T23:00:00-01:00", 0),
])
def test_what_go_parses_past_the_fast_path_gets_its_value(text, ms):
    assert lt.parse_time(text) == ms
