"""neo4j-graphrag against the proxy: a vector index created and filled through the package, a
VectorRetriever on it, and a Text2CypherRetriever with a stub LLM (schema read from the graph).
Usage: python graphrag_client.py BOLT_URI QUERY_TEXT CYPHER; prints one JSON object."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import neo4j  # noqa: E402
from embedding import DIMENSIONS, embed  # noqa: E402
from neo4j_graphrag.embeddings.base import Embedder  # noqa: E402
from neo4j_graphrag.indexes import create_vector_index, upsert_vectors  # noqa: E402
from neo4j_graphrag.llm import LLMInterface, LLMResponse  # noqa: E402
from neo4j_graphrag.retrievers import Text2CypherRetriever, VectorRetriever  # noqa: E402
from neo4j_graphrag.types import EntityType  # noqa: E402


class LetterEmbedder(Embedder):
    def embed_query(self, text: str) -> list[float]:
        return embed(text)


class StubLLM(LLMInterface):
    """Answers every prompt with the same Cypher and remembers the prompts."""

    def __init__(self, cypher: str):
        super().__init__(model_name="stub")
        self.cypher, self.prompts = cypher, []

    def invoke(self, input, message_history=None, system_instruction=None) -> LLMResponse:
        self.prompts.append(input)
        return LLMResponse(content=self.cypher)

    async def ainvoke(self, input, message_history=None, system_instruction=None) -> LLMResponse:
        return self.invoke(input, message_history, system_instruction)


def main() -> None:
    uri, query_text, cypher = sys.argv[1:4]
    out = {}
    with neo4j.GraphDatabase.driver(uri, auth=("neo4j", "password")) as driver:
        fields = driver.execute_query("MATCH (f:Field) RETURN elementId(f) AS id, f.title AS title "
                                      "ORDER BY title").records
        create_vector_index(driver, "field_titles", label="Field", embedding_property="title_embedding",
                            dimensions=DIMENSIONS, similarity_fn="cosine")
        upsert_vectors(driver, ids=[r["id"] for r in fields], embedding_property="title_embedding",
                       embeddings=[embed(r["title"]) for r in fields], entity_type=EntityType.NODE)
        retriever = VectorRetriever(driver, "field_titles", embedder=LetterEmbedder(),
                                    return_properties=["title"])
        found = retriever.search(query_text=query_text, top_k=3)
        out["vector"] = [[item.content, item.metadata.get("score")] for item in found.items]

        llm = StubLLM(cypher)
        text2cypher = Text2CypherRetriever(driver, llm)
        answer = text2cypher.search(query_text="How much oil did TROLL produce in 2020?")
        out["text2cypher"] = [item.content for item in answer.items]
        out["cypher"] = answer.metadata.get("cypher")
        out["prompt"] = llm.prompts[0]
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
