"""Neo4j semantics the proxy provides on the embedded database, checked through the real driver:
bookmarks, database names, lock waits, the system database, plan notifications, temporal
values, and the FalkorDB bridges (`=~`, named CREATE paths, large literals, WITH ... WHERE)."""

from __future__ import annotations

import time

import neo4j
import pytest
from neo4j.exceptions import ClientError

from tests.harness import PASSWORD, USER


# -- bookmarks -------------------------------------------------------------------------------

@pytest.mark.parametrize("bookmark", ["hi, this is an invalid bookmark", "FB:", "FB:12x", "FB:-1", ""])
def test_malformed_bookmark_is_invalid_bookmark(driver, bookmark):
    """Neo4j answers InvalidBookmark (a ClientError: never retried) for a bookmark it did not issue."""
    with driver.session(bookmarks=neo4j.Bookmarks.from_raw_values([bookmark])) as session:
        with pytest.raises(ClientError) as failure:
            session.run("RETURN 1").consume()
    assert failure.value.code == "Neo.ClientError.Transaction.InvalidBookmark"
    with driver.session(bookmarks=neo4j.Bookmarks.from_raw_values([bookmark])) as session:
        with pytest.raises(ClientError) as failure:
            session.execute_read(lambda tx: tx.run("RETURN 1").consume())
    assert failure.value.code == "Neo.ClientError.Transaction.InvalidBookmark"


def test_issued_bookmarks_chain(clean_graph):
    """A bookmark the server returned, and one edited the way testkit edits it (last character
    replaced), are told apart."""
    with clean_graph.session() as session:
        session.run("CREATE (:Marked)").consume()
        bookmarks = session.last_bookmarks()
    with clean_graph.session(bookmarks=bookmarks) as session:
        assert session.run("MATCH (n:Marked) RETURN count(n) AS c").single()["c"] == 1
    (raw,) = bookmarks.raw_values
    with clean_graph.session(bookmarks=neo4j.Bookmarks.from_raw_values([raw[:-1] + "-"])) as session:
        with pytest.raises(ClientError, match="InvalidBookmark|not issued"):
            session.begin_transaction().run("CREATE ()").consume()


# -- database names --------------------------------------------------------------------------

def test_database_names_ignore_case(proxy, driver):
    """ROUTE {db: "SYSTEM"} (what Neo4j Browser sends), and BEGIN/RUN on `NEO4J`, work as in Neo4j."""
    with neo4j.GraphDatabase.driver(proxy.uri.replace("bolt://", "neo4j://"), auth=(USER, PASSWORD)) as routed:
        routed.verify_connectivity(database="SYSTEM")
        records, summary, _ = routed.execute_query("RETURN 1 AS one", database_="NeO4j")
        assert records[0]["one"] == 1 and summary.database == "neo4j"
    with driver.session(database="NEO4J") as session:
        with session.begin_transaction() as tx:
            assert tx.run("RETURN 2 AS two").single()["two"] == 2
    with pytest.raises(ClientError) as failure:
        driver.execute_query("RETURN 1", database_="no_such_db")
    assert failure.value.code == "Neo.ClientError.Database.DatabaseNotFound"


def test_begin_on_system_runs_virtual_calls_only(driver):
    """An explicit transaction on `system` answers a lone virtual CALL; any other statement
    there gets Neo4j's "Not a recognised system command or procedure"."""
    with driver.session(database="SYSTEM") as session:
        with session.begin_transaction() as tx:
            assert tx.run("CALL db.ping()").consume().database == "system"
            tx.commit()
        tx = session.begin_transaction()
        with pytest.raises(ClientError) as failure:
            tx.run("MATCH (n) RETURN n").consume()
        tx.close()
    assert failure.value.code == "Neo.ClientError.Statement.UnsupportedAdministrationCommand"
    assert "Not a recognised system command or procedure" in failure.value.message


# -- lock waits ------------------------------------------------------------------------------

def test_transaction_timeout_while_waiting_for_the_write_lock(clean_graph):
    """A managed transaction whose timeout runs out waiting for another transaction's write lock
    fails with LockClientStopped, a ClientError: the driver does not retry it past the caller's
    timeout (a TransientError would be retried for 30 s)."""
    holder = clean_graph.session()
    tx = holder.begin_transaction()
    tx.run("CREATE (:Holder)").consume()              # holds the writer lock until it ends
    try:
        @neo4j.unit_of_work(timeout=1.0)
        def write(work):
            work.run("CREATE (:Waiter)").consume()

        started = time.monotonic()
        with clean_graph.session() as waiter:
            with pytest.raises(ClientError) as failure:
                waiter.execute_write(write)
        assert time.monotonic() - started < 10
        assert failure.value.code == "Neo.ClientError.Transaction.LockClientStopped"
        assert failure.value.gql_status == "25N14"
    finally:
        tx.rollback()
        holder.close()
    records, _, _ = clean_graph.execute_query("MATCH (n) RETURN labels(n) AS l")
    assert records == []


# -- large literals --------------------------------------------------------------------------

def test_megabyte_string_literal(clean_graph):
    """A 1 MB literal (over the embedded database's 1,000,000-character query cap) travels as a
    parameter: stored and returned intact, the column named by the literal as in Neo4j."""
    text = "".join(chr(0x41 + i % 26) for i in range(1 << 20)) + "\\'é\\n"
    query = "CREATE (n:Big {text: '" + text + "'}) RETURN size(n.text) AS size, '" + text + "'"
    records, _, _ = clean_graph.execute_query(query)
    expected = text.replace("\\'", "'").replace("\\n", "\n")
    assert records[0]["size"] == len(expected)
    assert records[0][1] == expected and records[0].keys()[1] == "'" + text + "'"
    stored, _, _ = clean_graph.execute_query("MATCH (n:Big) RETURN n.text AS t")
    assert stored[0]["t"] == expected
