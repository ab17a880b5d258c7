"""Hypothesis strategies for hostile clients: mutated Cypher, odd parameters, Bolt byte streams."""

from __future__ import annotations

import datetime as dt
import re

from hypothesis import strategies as st
from neo4j.spatial import CartesianPoint, WGS84Point
from neo4j.time import Date, DateTime, Duration, Time

from proxy.bolt.chunking import chunk
from proxy.packstream import Packer
from tests.fuzz.corpus import seed_queries

_PIECES = re.compile(r"\w+|\s+|.", re.S)

#: Fragments that hurt parsers: nesting, long literals, quotes left open, odd characters.
HOSTILE = st.one_of(
    st.sampled_from(["(", ")", "[", "]", "{", "}", "NOT ", "-", "+", "CASE WHEN true THEN ", " END",
                     "'", '"', "`", "/*", "*/", "//", "$", "$x", "$`odd name`", ";", ",", ":", ".",
                     " UNION ", " RETURN 1 ", " WITH * ", "\x00", "\\u0000", "é", "💥", "\u202e",
                     "9223372036854775808", "-9223372036854775808", "1e309", "0x", "0o9", ".5e",
                     "range(1, 10000000000)", "range(0, $x)", "[x IN range(1, 3) | x]", "{a: 1}",
                     "count(*)", "shortestPath(", "EXISTS {", "COUNT {", "CALL {", "ts_avg(", "std("]),
    st.tuples(st.sampled_from(["(", "[", "NOT ", "-", "- ", "CASE WHEN true THEN ", "{a:", "9", "1 + ",
                               "x = 1 OR ", "MATCH (a) ", "WITH 1 AS x ", "'a' + "]),
              st.one_of(st.integers(1, 40), st.integers(1, 70_000))).map(lambda t: t[0] * t[1]),
)


@st.composite
def mutated_queries(draw) -> str:
    """A seed query (TCK, demo, built-in) with up to three mutations."""
    queries = seed_queries()
    pieces = _PIECES.findall(draw(st.sampled_from(queries)))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(pieces)))
        span = draw(st.integers(0, 6))
        action = draw(st.sampled_from(["insert", "delete", "repeat", "replace", "splice", "truncate"]))
        if action == "insert":
            pieces[at:at] = [draw(HOSTILE)]
        elif action == "delete":
            del pieces[at:at + span]
        elif action == "repeat":
            pieces[at:at] = pieces[at:at + max(span, 1)] * draw(st.integers(2, 2_000))
        elif action == "replace" and pieces:
            pieces[min(at, len(pieces) - 1)] = draw(st.sampled_from(pieces))
        elif action == "splice":
            other = _PIECES.findall(draw(st.sampled_from(queries)))
            pieces = pieces[:at] + other[draw(st.integers(0, len(other))):]
        elif action == "truncate":
            pieces = pieces[:at]
    return "".join(pieces)[:1_100_000]


_SCALARS = st.one_of(
    st.none(), st.booleans(),
    st.integers(-(2**63), 2**63 - 1), st.sampled_from([0, -1, 2**63 - 1, -(2**63)]),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([1.7976931348623157e308, 5e-324, -0.0]),
    st.text(st.characters(exclude_categories=("Cs",)), max_size=40),
    st.binary(max_size=20),
    st.dates().map(Date.from_native),
    st.datetimes(min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30)).map(DateTime.from_native),
    st.datetimes(timezones=st.just(dt.timezone.utc)),
    st.times().map(Time.from_native),
    st.builds(Duration, months=st.integers(-10**12, 10**12), days=st.integers(-10**6, 10**6),
              seconds=st.integers(-10**9, 10**9)),
    st.builds(lambda x, y: WGS84Point((x, y)), st.floats(-180, 180), st.floats(-90, 90)),
    st.builds(lambda x, y: CartesianPoint((x, y)), st.floats(-1e9, 1e9), st.floats(-1e9, 1e9)),
)
_KEYS = st.one_of(st.sampled_from(["x", "p", "id", "name", "props", "rows", "a-b", "@type", "ünï", "`"]),
                  st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=10))
VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=6), st.dictionaries(_KEYS, inner, max_size=6)), max_leaves=20)

#: Parameters for the query: the names the seed queries use, plus odd ones; sometimes huge.
PARAMETERS = st.one_of(
    st.dictionaries(_KEYS, VALUES, max_size=5),
    st.builds(lambda n: {"x": list(range(n))}, st.integers(0, 200_000)),
    st.builds(lambda n: {"m": {f"k{i}": i for i in range(n)}, "x": n}, st.integers(0, 30_000)),
    st.builds(lambda n: {"x": "s" * n}, st.integers(0, 2_000_000)),
)

# ---- Bolt

SIGNATURES = [0x01, 0x02, 0x0F, 0x10, 0x11, 0x12, 0x13, 0x2F, 0x3F, 0x54, 0x66, 0x6A, 0x6B]
AUTH = {"scheme": "basic", "principal": "neo4j", "credentials": "password"}
_FIELD = st.one_of(VALUES, st.just(AUTH), st.just({"n": -1}), st.just({"n": 1, "qid": -1}),
                   st.sampled_from(["RETURN 1", "UNWIND range(1, 5) AS i RETURN i", "CREATE (n)"]))


@st.composite
def bolt_messages(draw) -> bytes:
    """One framed message: a well-formed request, a request with odd fields, or raw bytes."""
    kind = draw(st.sampled_from(["valid", "valid", "odd", "raw", "noop", "bad-length"]))
    packer = Packer((5, 4))
    if kind == "valid":
        signature = draw(st.sampled_from(SIGNATURES))
        fields = {0x01: [{"user_agent": "fuzz/1", **AUTH}], 0x6A: [AUTH],
                  0x10: [draw(mutated_queries()), draw(PARAMETERS.filter(lambda p: len(str(p)) < 10_000)), {}],
                  0x3F: [{"n": draw(st.sampled_from([-1, 1, 1000]))}], 0x2F: [{"n": -1}],
                  0x11: [{}], 0x54: [1], 0x66: [{}, [], None]}.get(signature, [])
        return chunk(packer.pack_message(signature, fields))
    if kind == "odd":
        signature = draw(st.one_of(st.sampled_from(SIGNATURES), st.integers(0, 255)))
        try:
            return chunk(packer.pack_message(signature, draw(st.lists(_FIELD, max_size=4))))
        except Exception:            # a value the packer refuses: send garbage instead
            return chunk(b"\xb0" + bytes([signature]))
    if kind == "raw":
        return chunk(draw(st.binary(min_size=1, max_size=200)))
    if kind == "noop":
        return b"\x00\x00"
    return draw(st.sampled_from([b"\xff\xff" + b"x" * 10, b"\x00\x05ab", b"\x00"]))


HANDSHAKES = st.one_of(
    st.just(b"\x60\x60\xb0\x17" + bytes.fromhex("00080805") + bytes(12)),          # Bolt 5.x
    st.just(b"\x60\x60\xb0\x17" + bytes.fromhex("000001ff") + bytes(12)),          # manifest
    st.just(b"\x60\x60\xb0\x17" + bytes.fromhex("00000404") + bytes(12)),          # 4.4
    st.binary(min_size=0, max_size=24),
    st.builds(lambda verb, rest: verb + rest, st.sampled_from([b"GET ", b"HEAD", b"OPTI"]),
              st.binary(max_size=60)),                                        # HTTP on the Bolt port
)


#: Labels the constraint fuzz keeps a unique constraint on `k` for (test_fuzz_constraint_writes).
CONSTRAINED_LABELS = ("FuzzU0", "FuzzU1")
#: One write against them, as applications keeping unique keys send it: (form, label, key). The
#: keys are few, so most writes break the constraint; the forms cover auto-commit, managed and
#: explicit transactions that commit, roll back or are refused, and multi-row MERGEs.
CONSTRAINED_WRITES = st.tuples(
    st.sampled_from(["create", "merge set", "two-row merge", "create many", "tx refused",
                     "tx committed", "tx rolled back", "delete", "set key"]),
    st.sampled_from(CONSTRAINED_LABELS), st.integers(0, 4))
