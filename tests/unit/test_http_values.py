"""The HTTP APIs' value codecs: typed JSON round trips (hypothesis), ISO-8601 text checked
against Python's own parser and Neo4j's documented examples, Authorization headers."""

from __future__ import annotations

import base64
import datetime as dt
import json
import math

import pytest
import pytz
from hypothesis import given, settings
from hypothesis import strategies as st
from neo4j.spatial import CartesianPoint, WGS84Point
from neo4j.time import Date, DateTime, Duration, Time

from core.errors import CypherError
from proxy import iso
from proxy.http.auth import auth_token
from proxy.json_values import meta, plain_value, row_value, typed_parameter, typed_value
from core.values import Node, Path, Relationship

ZONES = ["Europe/Oslo", "America/Sao_Paulo", "Asia/Kolkata", "Pacific/Chatham", "UTC"]

nanos = st.integers(0, 999_999_999)
local_times = st.builds(Time, st.integers(0, 23), st.integers(0, 59), st.integers(0, 59), nanos)
offsets = st.integers(-18 * 60, 18 * 60).map(lambda minutes: dt.timezone(dt.timedelta(minutes=minutes)))
dates = st.dates(dt.date(1, 1, 1), dt.date(9999, 12, 31)).map(lambda d: Date(d.year, d.month, d.day))
local_datetimes = st.builds(
    lambda d, t: DateTime(d.year, d.month, d.day, t.hour, t.minute, t.second, t.nanosecond),
    st.dates(dt.date(1900, 1, 1), dt.date(2200, 12, 31)), local_times)
zoned_datetimes = st.builds(lambda local, zone: pytz.timezone(zone).localize(local),
                            local_datetimes, st.sampled_from(ZONES))
offset_datetimes = st.builds(lambda local, tz: local.replace(tzinfo=tz), local_datetimes, offsets)
durations = st.builds(Duration, months=st.integers(-10**6, 10**6), days=st.integers(-10**6, 10**6),
                      seconds=st.integers(-10**9, 10**9), nanoseconds=st.integers(-10**9, 10**9))
coordinates = st.floats(-1e6, 1e6, allow_nan=False)
points = st.one_of(st.builds(lambda x, y: WGS84Point((x, y)), coordinates, coordinates),
                   st.builds(lambda x, y, z: WGS84Point((x, y, z)), coordinates, coordinates, coordinates),
                   st.builds(lambda x, y: CartesianPoint((x, y)), coordinates, coordinates),
                   st.builds(lambda x, y, z: CartesianPoint((x, y, z)), coordinates, coordinates, coordinates))
scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**63 - 1), st.floats(), st.text(),
                    st.binary(), dates, local_times,
                    st.builds(lambda t, tz: t.replace(tzinfo=tz), local_times, offsets),
                    local_datetimes, zoned_datetimes, offset_datetimes, durations, points)
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(), inner, max_size=4)), max_leaves=12)


def _same(a, b) -> bool:
    """Equal, NaN equal to NaN, zones and nanoseconds compared through their text."""
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, DateTime):
        return type(b) is DateTime and iso.format_datetime(a) == iso.format_datetime(b)
    if isinstance(a, Time):
        return type(b) is Time and iso.format_time(a) == iso.format_time(b)
    return type(a) is type(b) and a == b


@settings(max_examples=300, deadline=None)
@given(values)
def test_typed_json_round_trip(value):
    wire = json.loads(json.dumps(typed_value(value)))           # through real JSON text
    assert _same(typed_parameter(wire), value)


@given(st.datetimes(dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31),
                    timezones=st.just(dt.timezone.utc) | offsets))
def test_datetime_text_reads_back_in_python(value):
    """Python's own ISO parser is the independent reader (microsecond values)."""
    assert dt.datetime.fromisoformat(iso.format_datetime(value)) == value


@given(st.dates())
def test_date_text_is_python_isoformat(value):
    assert iso.format_date(value) == value.isoformat()


@given(st.times())
def test_local_time_text_reads_back_in_python(value):
    assert dt.time.fromisoformat(iso.format_time(value)) == value


@pytest.mark.parametrize("value,text", [              # Neo4j Cypher manual, "Temporal values"
    (Duration(days=14, hours=16, minutes=12), "P14DT16H12M"),
    (Duration(months=5, days=1, hours=12), "P5M1DT12H"),
    (Duration(minutes=1, seconds=31), "PT1M31S"),
    (Duration(days=22, seconds=71509, nanoseconds=500_000_000), "P22DT19H51M49.5S"),
    (Duration(months=14, days=16, hours=12), "P1Y2M16DT12H"),
    (Duration(), "PT0S"),
    (Duration(seconds=-1, nanoseconds=500), "PT-0.9999995S"),
    (Duration(months=-14, seconds=-3700), "P-1Y-2MT-1H-1M-40S"),
])
def test_duration_text_as_neo4j_prints_it(value, text):
    assert iso.format_duration(value) == text
    assert iso.parse_duration(text) == value


@pytest.mark.parametrize("value,text,kind", [       # Query API docs, "Result formats"
    (iso.parse_datetime("2015-11-21T21:40:32.142Z[Antarctica/Troll]"),
     "2015-11-21T21:40:32.142Z[Antarctica/Troll]", "ZonedDateTime"),
    (DateTime(2024, 1, 1, 21, 40, 32, tzinfo=dt.timezone(dt.timedelta(hours=-1))), "2024-01-01T21:40:32-01:00",
     "OffsetDateTime"),
    (DateTime(2015, 7, 4, 19, 32, 24), "2015-07-04T19:32:24", "LocalDateTime"),
])
def test_datetime_kinds(value, text, kind):
    assert (iso.format_datetime(value), iso.datetime_kind(value)) == (text, kind)
    assert typed_value(value) == {"$type": kind, "_value": text}


def test_time_texts():
    plus_one = dt.timezone(dt.timedelta(hours=1))
    assert iso.format_time(Time(12, 50, 35, 556_000_000, tzinfo=plus_one)) == "12:50:35.556+01:00"
    assert iso.format_time(Time(12, 50, 35, 556_000_000)) == "12:50:35.556"
    assert iso.format_time(iso.parse_time("12:00Z")) == "12:00:00Z"


@given(points)
def test_point_text_round_trip(point):
    text = iso.format_point(point)
    assert text.startswith(f"SRID={point.srid};POINT{' Z' if len(point) == 3 else ''} (")
    back = iso.parse_point(text)
    assert type(back) is type(point) and tuple(back) == tuple(point)


@pytest.mark.parametrize("raw", [{"$type": "Point", "_value": "SRID=1234;POINT (1 2)"},
                                 {"$type": "Point", "_value": "SRID=4326;POINT Z (1 2)"},
                                 {"$type": "Date", "_value": "2023-02-29"},
                                 {"$type": "Float", "_value": 1.5},
                                 {"$type": "Base64", "_value": "***"},
                                 {"$type": "List", "_value": {"not": "a list"}},
                                 {"$type": None, "_value": 1}])
def test_bad_typed_values_are_invalid_format(raw):
    with pytest.raises(CypherError) as info:
        typed_parameter(raw)
    assert info.value.code == "Neo.ClientError.Request.InvalidFormat"


def _graph():
    a = Node(1, ["P"], {"name": "Ann", "at": WGS84Point((5.5, 60.25))}, "4:x:1")
    b = Node(2, ["P"], {"name": "Bob"}, "4:x:2")
    r = Relationship(7, 2, 1, "KNOWS", {"since": 2020}, "5:x:7", "4:x:2", "4:x:1")
    return a, b, r, Path([a, b], [r])


def test_entity_shapes():
    a, b, r, p = _graph()
    assert plain_value(a) == {"elementId": "4:x:1", "labels": ["P"],
                              "properties": {"name": "Ann", "at": "SRID=4326;POINT (5.5 60.25)"}}
    assert plain_value(r)["startNodeElementId"] == "4:x:2"     # direction kept in a path walked backwards
    assert [x["elementId"] for x in plain_value(p)] == ["4:x:1", "5:x:7", "4:x:2"]
    assert row_value(p) == [{"name": "Ann", "at": row_value(WGS84Point((5.5, 60.25)))}, {"since": 2020},
                            {"name": "Bob"}]
    assert meta([a, 1, Date(2020, 1, 1)]) == [{"id": 1, "elementId": "4:x:1", "type": "node", "deleted": False},
                                              None, {"type": "date"}]
    assert typed_value(p)["_value"][1]["_value"]["_end_node_element_id"] == "4:x:1"


@pytest.mark.parametrize("header,token", [
    ("Basic " + base64.b64encode(b"neo4j:pa:ss").decode(),
     {"scheme": "basic", "principal": "neo4j", "credentials": "pa:ss"}),
    ("basic " + base64.b64encode("øyvind:ü".encode()).decode(),
     {"scheme": "basic", "principal": "øyvind", "credentials": "ü"}),
    ("Bearer abc.def", {"scheme": "bearer", "credentials": "abc.def"}),
])
def test_authorization_headers(header, token):
    assert auth_token(header) == token


@pytest.mark.parametrize("header,code", [
    (None, "Neo.ClientError.Security.Unauthorized"), ("", "Neo.ClientError.Security.Unauthorized"),
    ("Basic not-base64!", "Neo.ClientError.Request.InvalidFormat"),
    ("Basic " + base64.b64encode(b"no-colon").decode(), "Neo.ClientError.Request.InvalidFormat"),
    ("Digest abc", "Neo.ClientError.Request.InvalidFormat"),
])
def test_bad_authorization_headers(header, code):
    with pytest.raises(CypherError) as info:
        auth_token(header)
    assert info.value.code == code
