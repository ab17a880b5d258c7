"""Neo4j semantics the proxy provides on the embedded database, checked through the real driver:
bookmarks, database names, lock waits, the system database, plan notifications, temporal
values, and the FalkorDB bridges (`=~`, named CREATE paths, large literals, WITH ... WHERE)."""

from __future__ import annotations

import time

import neo4j
import pytest
from neo4j.exceptions import ClientError

from tests.harness import PASSWORD, USER
from tests.unit.test_bolt_support import RawClient


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
    """An explicit transaction on `system` answers a lone virtual CALL; a write there gets Neo4j's
    "Not a recognised system command or procedure"."""
    with driver.session(database="SYSTEM") as session:
        with session.begin_transaction() as tx:
            assert tx.run("CALL db.ping()").consume().database == "system"
            tx.commit()
        tx = session.begin_transaction()
        with pytest.raises(ClientError) as failure:
            tx.run("CREATE (n:Oops)").consume()
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


# -- =~ ----------------------------------------------------------------------------------------

def test_regex_match_as_neo4j(clean_graph):
    """`=~` is Java's full match: literal, parameter and concatenated patterns; `\\b` and `(?i)`
    as Java 21 reads them; null for a non-string."""
    clean_graph.execute_query("UNWIND ['Anna', 'anneli', 'Bob', 'Ann Lee'] AS name CREATE (:Person {name: name})")
    names = lambda query, **params: sorted(r["name"] for r in clean_graph.execute_query(query, params)[0])  # noqa: E731
    assert names("MATCH (p:Person) WHERE p.name =~ 'Ann.*' RETURN p.name AS name") == ["Ann Lee", "Anna"]
    assert names("MATCH (p:Person) WHERE p.name =~ $re RETURN p.name AS name", re="(?i)ann.*") == \
        ["Ann Lee", "Anna", "anneli"]
    assert names("MATCH (p:Person) WHERE p.name =~ '(?i).*' + $part + '\\\\b.*' RETURN p.name AS name",
                 part="ann") == ["Ann Lee"]
    records, _, _ = clean_graph.execute_query("RETURN 'a' =~ 'A' AS a, null =~ 'a' AS b, 12 =~ '12' AS c, "
                                              "'é' =~ '\\\\w' AS d, 'x\\ny' =~ 'x.y' AS e")
    assert records[0].data() == {"a": False, "b": None, "c": None, "d": False, "e": False}


@pytest.mark.parametrize("query, params, code", [
    ("RETURN 'a' =~ '[a-' AS m", {}, "Neo.ClientError.Statement.SemanticError"),
    ("RETURN 'a' =~ $re AS m", {"re": "(?<x>a"}, "Neo.ClientError.Statement.SemanticError"),
    ("MATCH (p:Person) RETURN p.name =~ p.pattern AS m", {}, "Neo.ClientError.Statement.UnsupportedOperationError"),
    ("RETURN 'e\\u0301' =~ '\\\\X' AS m", {}, "Neo.ClientError.Statement.UnsupportedOperationError"),
])
def test_regex_errors_say_why(driver, query, params, code):
    with pytest.raises(ClientError) as failure:
        driver.execute_query(query, params)
    assert failure.value.code == code
    assert "Invalid Regex" in failure.value.message or "FalkorDB" in failure.value.message


# -- paths, writes, OPTIONAL MATCH ---------------------------------------------------------------

def test_named_path_in_create(clean_graph):
    """`CREATE p = (...) RETURN p` returns the created path (testkit's test_can_return_path)."""
    records, summary, _ = clean_graph.execute_query(
        "CREATE p = (a:Start {n: 1})-[:LINK {w: 2}]->(:End)<-[:BACK]-(c:Other) RETURN p, a")
    path = records[0]["p"]
    assert isinstance(path, neo4j.graph.Path) and len(path) == 2
    assert [set(n.labels) for n in path.nodes] == [{"Start"}, {"End"}, {"Other"}]
    assert [r.type for r in path.relationships] == ["LINK", "BACK"]
    assert path.start_node == records[0]["a"] and path.relationships[0]["w"] == 2
    assert summary.counters.nodes_created == 3 and summary.counters.relationships_created == 2


LANGCHAIN = ("MERGE (s:Session {id: $session_id}) WITH s OPTIONAL MATCH (s)-[lm:LAST_MESSAGE]->(last_message) "
             "CREATE (s)-[:LAST_MESSAGE]->(new:Message) SET new += {type: $type, content: $content} "
             "WITH new, lm, last_message WHERE last_message IS NOT NULL CREATE (last_message)-[:NEXT]->(new) "
             "DELETE lm")


def test_langchain_chat_history_statement_keeps_the_first_message(clean_graph):
    """langchain's Neo4jChatMessageHistory.add_message, verbatim: FalkorDB alone stores the first
    message without its type and content."""
    for kind, content in (("human", "hi"), ("ai", "hello, how can I help?"), ("human", "thanks")):
        clean_graph.execute_query(LANGCHAIN, {"session_id": "s-1", "type": kind, "content": content})
    records, _, _ = clean_graph.execute_query(
        "MATCH (s:Session {id: $id})-[:LAST_MESSAGE]->(last:Message) "
        "MATCH p = (first:Message)-[:NEXT*0..]->(last) WHERE NOT ()-[:NEXT]->(first) "
        "RETURN [m IN nodes(p) | [m.type, m.content]] AS history", {"id": "s-1"})
    assert records[0]["history"] == [["human", "hi"], ["ai", "hello, how can I help?"], ["human", "thanks"]]


def test_optional_match_filtered_by_a_later_where_returns_no_row(driver):
    records, _, _ = driver.execute_query("OPTIONAL MATCH (q:NoSuchLabel) WITH q WHERE q IS NOT NULL RETURN q")
    assert records == []


# -- temporal values ----------------------------------------------------------------------------

def test_zoned_datetime_is_refused_with_the_utc_instant(clean_graph):
    with pytest.raises(ClientError) as failure:
        clean_graph.execute_query("CREATE (:Event {at: datetime('2024-03-01T10:00:00+01:00[Europe/Oslo]')})")
    assert failure.value.code == "Neo.ClientError.Statement.UnsupportedOperationError"
    assert "Europe/Oslo" in failure.value.message and "datetime('2024-03-01T09:00:00Z')" in failure.value.message
    records, _, _ = clean_graph.execute_query("MATCH (e:Event) RETURN count(e) AS n")
    assert records[0]["n"] == 0                                     # nothing half-written
    records, _, _ = clean_graph.execute_query("RETURN datetime('2024-03-01T09:00:00Z').hour AS h")
    assert records[0]["h"] == 9


# -- notifications ------------------------------------------------------------------------------

def test_explain_warns_about_a_cartesian_product(driver):
    """Bolt 5.6+: a GQL status 03N90 (the driver rebuilds `notifications` from it)."""
    with driver.session() as session:
        summary = session.run("EXPLAIN MATCH (n), (m) RETURN n, m").consume()
        assert summary.server.protocol_version >= (5, 6)
        (note,) = summary.notifications
        assert note["code"] == "Neo.ClientNotification.Statement.CartesianProduct"
        assert note["position"] == {"offset": 8, "line": 1, "column": 9} and "(m)" in note["description"]
        assert [s.gql_status for s in summary.gql_status_objects if s.gql_status == "03N90"] == ["03N90"]
        assert session.run("EXPLAIN MATCH (n)-->(m) RETURN n, m").consume().notifications is None


async def test_explain_notification_shape_for_bolt_5_4(proxy):
    """Bolt <= 5.4 carries `notifications` (Neo4j's own keys only), not statuses."""
    port = int(proxy.uri.rsplit(":", 1)[1])
    client = await RawClient.connect(port, (5, 4))
    client.send(0x10, "EXPLAIN MATCH (a:X), (b:Y) RETURN a, b", {}, {})
    client.send(0x3F, {"n": -1})
    await client.recv()
    summary = (await client.recv_until_summary())[-1][1][0]
    client.close()
    assert "statuses" not in summary
    (note,) = summary["notifications"]
    assert set(note) == {"code", "title", "description", "severity", "category", "position"}
    assert note["code"] == "Neo.ClientNotification.Statement.CartesianProduct" and note["severity"] == "INFORMATION"
