"""The per-key record of date-time kinds (extensions/temporal/kinds.py): what each write form
records, that the record survives a restart, and that a clear of the whole graph forgets it."""

from __future__ import annotations

import datetime as dt

import pytest

import extensions.planner.planner  # noqa: F401  (the package's import order)
from extensions.temporal.kinds import FINE, LOCAL, UNKNOWN, ZONED, KindStore, record_writes

UTC, NAIVE = dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc), dt.datetime(2020, 1, 1)
NOW = dt.datetime(2020, 1, 1, 0, 0, 0, 5, tzinfo=dt.timezone.utc)          # with a fraction of a second


@pytest.fixture
def store(tmp_path):
    return KindStore(tmp_path / "kinds.json")


@pytest.mark.parametrize("query, params, key, kinds", [
    ("CREATE ({at: datetime()})", {}, "at", {ZONED}),
    ("CREATE ({at: [localdatetime({year: 2000})]})", {}, "at", {LOCAL}),
    ("MERGE (n:N {id: 1}) ON CREATE SET n.at = $at", {"at": UTC}, "at", {ZONED}),
    ("MATCH (n) SET n.at = $at", {"at": NAIVE}, "at", {LOCAL}),
    ("MATCH (n) SET n += $props", {"props": {"at": UTC, "name": "x"}}, "at", {ZONED}),
    ("CREATE (n $props)", {"props": {"at": NAIVE}}, "at", {LOCAL}),
    ("UNWIND $rows AS row CREATE (:E {at: row.at})", {"rows": [{"at": UTC}, {"at": UTC}]}, "at", {ZONED}),
    ("UNWIND $rows AS row CREATE (e:E) SET e = row", {"rows": [{"at": NAIVE}]}, "at", {LOCAL}),
    ("WITH datetime() AS now MATCH (n) SET n.at = now + duration('P1D')", {}, "at", {ZONED}),
    ("MATCH (n) SET n.at = n.seen", {}, "at", {ZONED}),                     # `seen` holds zoned
    ("CALL db.info() YIELD creationDate AS c CREATE ({at: c})", {}, "at", {UNKNOWN}),
    ("FOREACH (t IN $times | CREATE ({at: t}))", {"times": [NAIVE]}, "at", {LOCAL}),
    ("WITH {at: localdatetime()} AS m CREATE ({created: m.at})", {}, "created", {LOCAL}),
    ("WITH {at: localdatetime()} AS m CREATE (n) SET n = m", {}, "at", {LOCAL}),
    ("WITH $m AS m CREATE ({created: m.at})", {"m": {"at": UTC}}, "created", {ZONED}),
    ("MATCH (a), (b) SET a.at = properties(b).seen", {}, "at", {ZONED}),
    ("CALL apoc.merge.node(['E'], {id: 1}, {at: datetime()}) YIELD node RETURN node", {}, "at", {ZONED}),
    ("CREATE ({name: $name, n: 1})", {"name": "x"}, "name", set()),        # no date-time: nothing
    ("MATCH (n) SET n.at = $now", {"now": NOW}, "at", {ZONED, FINE}),       # stored as epoch microseconds
    ("MATCH (n) SET n.at = $now", {"now": NOW.replace(tzinfo=None)}, "at", {LOCAL, FINE}),
    ("UNWIND $rows AS r CREATE ({id: r[0], at: r[1]})", {"rows": [["a", NOW]]}, "at", {ZONED, FINE}),
    ("UNWIND $rows AS r CREATE ({id: r[0], at: r[1]})", {"rows": [["a", NOW]]}, "id", set()),
])
def test_each_write_form_records_the_kind_it_stores(store, query, params, key, kinds):
    store.record("db", [("seen", frozenset({ZONED}))])
    record_writes(store, "db", query, params)
    assert store.of("db", key) == kinds


def test_the_record_survives_a_restart_and_a_whole_graph_clear_forgets_it(store, tmp_path):
    record_writes(store, "db", "CREATE ({at: datetime()})", {})
    record_writes(store, "other", "CREATE ({at: $t})", {"t": NAIVE})
    reopened = KindStore(tmp_path / "kinds.json")
    assert reopened.of("db", "at") == {ZONED} and reopened.holds_zoned("db")
    record_writes(reopened, "db", "MATCH (n) DETACH DELETE n", {})
    assert not reopened.holds_zoned("db") and reopened.of("other", "at") == {LOCAL}
    assert KindStore(tmp_path / "kinds.json").of("db", "at") == frozenset()
