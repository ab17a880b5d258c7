"""langchain-neo4j against the proxy: schema (plain and enhanced), add_graph_documents (with and
without baseEntityLabel), Neo4jVector.from_texts + similarity_search, Neo4jChatMessageHistory.
Usage: python langchain_client.py BOLT_URI TEXTS_JSON QUERY; prints one JSON object."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from embedding import embed  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.embeddings import Embeddings  # noqa: E402
from langchain_neo4j import Neo4jChatMessageHistory, Neo4jGraph, Neo4jVector  # noqa: E402
from langchain_neo4j.graphs.graph_document import GraphDocument, Node, Relationship  # noqa: E402


class LetterEmbeddings(Embeddings):
    def embed_documents(self, texts):
        return [embed(t) for t in texts]

    def embed_query(self, text):
        return embed(text)


def graph_document(source_type: str, target_type: str, rel_type: str, suffix: str) -> GraphDocument:
    a, b = Node(id=f"Equinor{suffix}", type=source_type, properties={"country": "NO"}), Node(id=f"Troll{suffix}", type=target_type)
    return GraphDocument(nodes=[a, b], relationships=[Relationship(source=a, target=b, type=rel_type,
                                                                   properties={"since": 1995})],
                         source=Document(page_content=f"Equinor operates Troll {suffix}"))


def main() -> None:
    uri, texts, query = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
    auth = {"url": uri, "username": "neo4j", "password": "password"}
    out = {}
    graph = Neo4jGraph(**auth, refresh_schema=True)
    out["structured"] = graph.get_structured_schema
    out["schema"] = graph.get_schema
    out["enhanced"] = Neo4jGraph(**auth, enhanced_schema=True).get_schema

    graph.add_graph_documents([graph_document("StockOperator", "StockField", "STOCK_OPERATES", "A")])
    out["plain_import"] = graph.query(
        "MATCH (a:StockOperator)-[r:STOCK_OPERATES]->(b:StockField) RETURN a.id AS a, a.country AS country, "
        "r.since AS since, b.id AS b")
    graph.add_graph_documents([graph_document("StockOperator", "StockField", "STOCK_OPERATES", "B")],
                              baseEntityLabel=True)
    out["base_import"] = graph.query(
        "MATCH (a:__Entity__)-[r]->(b:__Entity__) RETURN a.id AS a, labels(a) AS a_labels, type(r) AS type, "
        "b.id AS b, labels(b) AS b_labels")
    out["constraints"] = graph.query("SHOW CONSTRAINTS YIELD name, type, labelsOrTypes, properties "
                                     "RETURN name, type, labelsOrTypes, properties")
    try:
        graph.query("CREATE (:__Entity__ {id: 'EquinorB'})")
        out["duplicate"] = "created"
    except Exception as exc:                       # the uniqueness constraint must refuse it
        out["duplicate"] = getattr(exc, "code", repr(exc))

    store = Neo4jVector.from_texts(texts, LetterEmbeddings(), **auth, index_name="stock_chunks",
                                   node_label="StockChunk")
    out["similar"] = [(doc.page_content, score) for doc, score in store.similarity_search_with_score(query, k=3)]
    out["indexes"] = graph.query("SHOW INDEXES YIELD name, type, labelsOrTypes, properties "
                                 "WHERE name = 'stock_chunks' RETURN name, type, labelsOrTypes, properties")

    history = Neo4jChatMessageHistory(session_id="stock-session", **auth)
    history.add_user_message("How much gas does Troll produce?")
    history.add_ai_message("About 30 billion cubic metres a year.")
    history.add_user_message("And oil?")
    try:
        out["chat"] = [[m.type, m.content] for m in history.messages]
    except ValueError as exc:                   # a message stored without its type and content
        out["chat"] = repr(exc)
    out["chat_stored"] = graph.query("MATCH (s:Session {id: 'stock-session'})-[:LAST_MESSAGE]->(m) "
                                     "MATCH p = (m)<-[:NEXT*0..]-(first) WITH first, length(p) AS n "
                                     "ORDER BY n DESC LIMIT 1 "
                                     "RETURN first.type AS type, first.content AS content")
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
