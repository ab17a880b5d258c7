"""Properties of the temporal library (extensions/temporal): Neo4j's text reads back as the same
value, and `duration.between` agrees with adding the duration back."""

from __future__ import annotations

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from extensions.temporal import build, calc
from extensions.temporal.parse import read, read_duration
from extensions.temporal.values import NANOS, UTC, Duration, Zone, make, text

DAYS = st.dates(min_value=dt.date(1, 3, 1), max_value=dt.date(9999, 10, 1))
CLOCKS = st.integers(0, 86_400 * NANOS - 1)
OFFSETS = st.integers(-18 * 60, 18 * 60).map(lambda minutes: Zone(minutes * 60))
ZONES = OFFSETS | st.sampled_from(["Europe/Stockholm", "America/New_York", "Asia/Kolkata"]).map(lambda n: Zone(0, n))
KINDS = st.sampled_from(["date", "localtime", "time", "localdatetime", "datetime"])
DURATIONS = st.builds(Duration, st.integers(-2000, 2000), st.integers(-500, 500), st.integers(-10**7, 10**7),
                      st.integers(0, NANOS - 1))
MANY = settings(max_examples=120, deadline=None)


@MANY
@given(KINDS, DAYS, CLOCKS, ZONES)
def test_text_reads_back_as_the_same_value(kind, day, clock, zone):
    value = make(kind, day, clock, zone if kind == "datetime" or zone.name is None else UTC)
    assert read(text(value), kind, UTC) == value


@MANY
@given(DURATIONS)
def test_duration_text_reads_back_as_the_same_duration(duration):
    assert read_duration(text(duration)) == duration


@MANY
@given(DAYS, CLOCKS, DAYS, CLOCKS)
def test_between_then_plus_gives_the_end(day_a, clock_a, day_b, clock_b):
    a, b = make("localdatetime", day_a, clock_a), make("localdatetime", day_b, clock_b)
    assert calc.add(a, calc.between(a, b)) == b
    assert calc.add(a, calc.between(a, b, "seconds")) == b


@MANY
@given(DAYS, CLOCKS, OFFSETS, OFFSETS)
def test_a_zoned_date_time_keeps_its_instant_in_another_zone(day, clock, zone, other):
    value = make("datetime", day, clock, zone)
    moved = build.construct("datetime", {"datetime": value, "timezone": text(make("time", None, 0, other))[-6:]
                                         if other.offset else "Z"})
    assert moved.epoch_nanos() == value.epoch_nanos() and calc.compare(moved, value) == 0
