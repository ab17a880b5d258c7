"""The epoch-microsecond codec for date-times with a fraction of a second (temporal/fraction.py)."""

from __future__ import annotations

import datetime as dt

from hypothesis import given
from hypothesis import strategies as st
from neo4j.time import DateTime

from extensions.temporal import fraction

UTC = dt.timezone.utc
MOMENTS = st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31, 23, 59, 59, 999999))


@given(MOMENTS, st.booleans())
def test_a_fraction_round_trips_through_its_epoch_microseconds(moment, zoned):
    value = moment.replace(tzinfo=UTC) if zoned else moment
    stored = fraction.micros(value)
    if not moment.microsecond:
        assert stored is None                       # whole seconds stay FalkorDB's own date-time
        return
    assert stored == (moment - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1)
    back = fraction.decoded(stored, zoned)
    assert back.to_native() == value and (back.tzinfo is not None) == zoned
    assert fraction.micros(DateTime.from_native(value)) == stored         # the driver's own type too


@given(MOMENTS.filter(lambda m: m.microsecond), st.integers(-14, 14).filter(bool))
def test_other_zones_and_nanoseconds_are_left_to_the_refusal(moment, hours):
    assert fraction.micros(moment.replace(tzinfo=dt.timezone(dt.timedelta(hours=hours)))) is None
    assert fraction.micros(DateTime(2024, 1, 1, 0, 0, 0, 123456789)) is None


def test_parameters_are_encoded_inside_lists_and_maps():
    at = dt.datetime(2024, 1, 1, 0, 0, 0, 5, tzinfo=UTC)
    value = {"rows": [{"at": at, "id": 1}, [at, "x"]], "whole": at.replace(microsecond=0)}
    assert fraction.has_fraction(value) and not fraction.has_fraction(value["whole"])
    assert fraction.encoded(value) == {"rows": [{"at": 1704067200000005, "id": 1}, [1704067200000005, "x"]],
                                       "whole": at.replace(microsecond=0)}
