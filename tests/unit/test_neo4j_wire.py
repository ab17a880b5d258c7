"""The Neo4j backend's own pieces that need no server: finding messages in framed bytes (what the
relay forwards unread), summaries and failures as the upstream sends them, record encodings."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from proxy.backends.neo4j.client import message_end, payload
from proxy.backends.neo4j.errors import from_failure
from proxy.backends.neo4j.relay import to_summary
from proxy.bolt import messages as m
from proxy.bolt.capabilities import Capabilities
from proxy.bolt.failures import failure_metadata
from core.errors import CypherError
from proxy.packstream import Packer, record_encoding

PACKER = Packer((5, 8))
values = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**63 - 1), st.text(),
                                st.floats(allow_nan=False), st.binary()),
                      lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner,
                                                                                  max_size=4), max_leaves=30)


def _split_chunks(message: bytes, sizes: list[int]) -> bytes:
    """`message` framed in chunks of the given sizes (any split is valid Bolt), then `00 00`."""
    out, p = [], 0
    for size in sizes:
        if p >= len(message):
            break
        piece = message[p:p + size]
        out.append(len(piece).to_bytes(2, "big") + piece)
        p += size
    out.append(len(message[p:]).to_bytes(2, "big") + message[p:] if p < len(message) else b"")
    return b"".join(out) + b"\x00\x00"


@given(st.lists(st.tuples(values, st.lists(st.integers(1, 40), max_size=5), st.booleans()), min_size=1, max_size=6))
def test_messages_are_found_in_framed_bytes_however_they_are_chunked(records):
    framed, expected = b"", []
    for row, sizes, noop_before in records:
        last_start = len(framed)
        message = PACKER.pack_message(m.RECORD, [[row]])
        framed += (b"\x00\x00" if noop_before else b"") + _split_chunks(message, sizes)
        expected.append(message)
    p, found = 0, []
    while p < len(framed):
        end, signature = message_end(framed, p)
        assert signature == m.RECORD
        found.append(payload(framed, p + 2 * _noops(framed, p), end))
        p = end
    assert found == expected
    assert message_end(framed, last_start) == (len(framed), m.RECORD)
    assert message_end(framed[:-1], last_start) is None          # not all here yet


def _noops(framed: bytes, p: int) -> int:
    count = 0
    while framed[p:p + 2] == b"\x00\x00":
        p, count = p + 2, count + 1
    return count


def test_summary_keeps_the_upstreams_counters_bookmark_and_statuses():
    meta = {"type": "w", "db": "movies", "bookmark": "FB:1", "t_last": 3,
            "stats": {"nodes-created": 2, "labels-added": 0, "contains-updates": True},
            "statuses": [{"gql_status": "00000", "status_description": "note: successful completion"},
                         {"gql_status": "03N90", "status_description": "info: cartesian product",
                          "neo4j_code": "Neo.ClientNotification.Statement.CartesianProduct", "title": "t",
                          "description": "d", "diagnostic_record": {"_severity": "INFORMATION",
                                                                    "_classification": "PERFORMANCE",
                                                                    "_position": {"offset": 0}}}]}
    summary = to_summary(meta, "neo4j")
    assert (summary.database, summary.query_type, summary.bookmark) == ("movies", "w", "FB:1")
    assert summary.stats == {"nodes-created": 2}
    (note,) = summary.notifications
    assert note["code"] == "Neo.ClientNotification.Statement.CartesianProduct"
    assert (note["gql_status"], note["category"], note["position"]) == ("03N90", "PERFORMANCE", {"offset": 0})
    # Re-encoded for a 5.6+ client, the notification keeps its GQL status.
    statuses = m.stream_end_metadata(Capabilities.of((5, 8)), summary, in_tx=False, has_fields=True, had_records=True,
                                     t_last=0)["statuses"]
    assert [s["gql_status"] for s in statuses] == ["00000", "03N90"]
    assert to_summary({"notifications": [{"code": "X"}]}, "neo4j").notifications == [{"code": "X"}]
    assert to_summary({}, "fallback").database == "fallback"


def test_failures_keep_the_upstreams_code_message_and_gql_status():
    old = from_failure({"code": "Neo.ClientError.Statement.SyntaxError", "message": "Invalid input 'X'"})
    assert (old.code, old.message, old.gql_status) == ("Neo.ClientError.Statement.SyntaxError", "Invalid input 'X'",
                                                       "42001")
    new = from_failure({"neo4j_code": "Neo.ClientError.Statement.SyntaxError", "message": "Invalid input 'X'",
                        "gql_status": "42I06",
                        "description": "error: syntax error or access rule violation - invalid input. "
                                       "Invalid input 'X'"})
    assert new.gql_status == "42I06"
    bolt_5_7 = Capabilities.of((5, 7))
    assert failure_metadata(new, bolt_5_7)["description"] == failure_metadata(CypherError(
        new.code, new.message, gql_status="42I06",
        description="error: syntax error or access rule violation - invalid input"), bolt_5_7)["description"]
    assert from_failure({}).code == "Neo.DatabaseError.General.UnknownError"


def test_record_encodings_differ_exactly_where_values_are_encoded_differently():
    assert record_encoding((5, 0)) == record_encoding((5, 8)) == record_encoding((5, 4), True)
    assert len({record_encoding((4, 4)), record_encoding((4, 4), True), record_encoding((5, 0)),
                record_encoding((6, 0))}) == 4
