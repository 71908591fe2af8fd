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
