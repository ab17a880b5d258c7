"""A planned query's probes and statement see one state while other clients write.

The planner reads an extension's arguments with a probe, then runs the statement that reads the
values bound from them. A node another client creates between the two used to reach the
statement with no value bound: `area(p.g)` came back null for it, and a SET wrote null
(extensions/planner/runners.py, `consistently`). Each test writes from another thread
throughout and checks every row the statement saw got its value.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import pytest

TRIANGLE = "POLYGON ((0 0, 1 0, 1 1, 0 0))"
ROUNDS = 12


@contextmanager
def writing(driver):
    """Another client creates :P nodes in small batches until the block ends."""
    stop, errors = threading.Event(), []

    def write() -> None:
        batch = 0
        while not stop.is_set():
            try:
                driver.execute_query("UNWIND range(1, 10) AS j CREATE (:P {i: $i + j, g: $g})",
                                     i=batch * 100, g=TRIANGLE)
            except Exception as exc:          # noqa: BLE001 - reported by the test
                errors.append(exc)
                return
            batch += 1
    thread = threading.Thread(target=write)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
    assert not errors


@pytest.fixture
def polygons(clean_graph):
    clean_graph.execute_query("UNWIND range(1, 500) AS i CREATE (:P {i: i, g: $g})", g=TRIANGLE)
    return clean_graph


COUNT = "MATCH (p:P) RETURN count(*) AS rows, count(area(p.g)) AS computed"


def test_an_auto_commit_read_computes_every_row_it_returns(polygons):
    with writing(polygons), polygons.session() as session:
        for _ in range(ROUNDS):
            record = session.run(COUNT).single()
            assert record["rows"] == record["computed"] > 0


def test_a_read_transaction_computes_every_row_it_returns(polygons):
    with writing(polygons):
        for _ in range(ROUNDS):
            record = polygons.execute_query(COUNT, routing_="r").records[0]
            assert record["rows"] == record["computed"] > 0


def test_a_write_sets_the_value_of_every_node_it_matched(polygons):
    with writing(polygons):
        for _ in range(ROUNDS):
            record = polygons.execute_query(
                "MATCH (p:P) SET p.a = area(p.g) RETURN count(*) AS rows, count(p.a) AS computed").records[0]
            assert record["rows"] == record["computed"] > 0
    assert polygons.execute_query("MATCH (p:P) RETURN count(DISTINCT p.a) AS areas").records[0]["areas"] == 1


def test_a_transaction_that_wrote_reads_its_own_state_while_others_wait(polygons):
    with writing(polygons), polygons.session() as session, session.begin_transaction() as tx:
        tx.run("MATCH (p:P) SET p.mine = true").consume()       # holds the writer lock from here
        for _ in range(3):
            record = tx.run("MATCH (p:P) RETURN count(*) AS rows, count(area(p.g)) AS computed, "
                            "count(p.mine) AS mine").single()
            assert record["rows"] == record["computed"] == record["mine"]
        tx.rollback()

