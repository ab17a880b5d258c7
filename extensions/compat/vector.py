"""Neo4j's vector and fulltext search procedures onto FalkorDB's native indexes.

`db.index.vector.queryNodes(name, k, vector)` (`queryRelationships` for an index on a
relationship type) and `db.index.fulltext.queryNodes(name, text)` name an index; FalkorDB's `db.idx.vector.queryNodes(label, property, k, vecf32(v))` and
`db.idx.fulltext.queryNodes(label, text)` take its label and property. The CALL is rewritten
to FalkorDB's, and a step looks the index up by name (`schema_catalog`) and binds its label,
property and similarity function as a parameter, so the rest of the query runs in the database.
The fulltext query string is Lucene's syntax, translated to RediSearch's (`lucene.py`) when it is a
literal or a parameter. Scores are Neo4j's: FalkorDB reports distances, Neo4j similarities in [0, 1] - cosine
(1 + cos) / 2 = 1 - d / 2, euclidean 1 / (1 + d^2).
"""

from __future__ import annotations

from typing import Any

from extensions.cypher import ast as A
from extensions.cypher.render import name as quote
from extensions.plan_builder import PlanBuilder, call_tail, carried, yielded
from extensions.registry import CallContext, ProcedureRewrite, VirtualProcedure
from core.dialect import Capability
from core.errors import CypherError, argument_error

from .lucene import matches, parse, translate
from .schema_commands import build_pending
from .schema_catalog import NameStore, pending_vector_index, read_catalog

#: The lookup's second argument when a SEARCH with a WHERE needs the number of indexed vectors.
_COUNT = "\x00count"
_SCORE = "CASE ${p}[0][2] WHEN 'euclidean' THEN 1.0 / (1.0 + {d} * {d}) ELSE 1.0 - {d} / 2.0 END"


def _lookup(names: NameStore, kind: str, procedure: str, entity: str = "NODE") -> VirtualProcedure:
    """A (not listed) virtual procedure: index name -> [[label, property, similarity]], for an
    index on nodes or (`entity` "RELATIONSHIP") on a relationship type."""

    async def answer(ctx: CallContext, args: list) -> list[list[Any]]:
        name, query = (args + [None])[:2]
        catalog = await read_catalog(ctx.graph, names)
        entry = next((e for e in catalog.indexes if e.name == name and e.definition.kind == kind
                      and e.definition.entity == entity), None)
        if entry is None:
            raise CypherError("Neo.ClientError.Procedure.ProcedureCallFailed",
                              f"Failed to invoke procedure `{procedure}`: Caused by: "
                              f"java.lang.IllegalArgumentException: There is no such {kind.lower()} schema "
                              f"index{' on relationships' if entity != 'NODE' else ''}: {name}")
        d = entry.definition
        if pending_vector_index(d) and await build_pending(ctx, names, name, d):
            return await answer(ctx, args)
        if pending_vector_index(d):
            raise CypherError("Neo.ClientError.Procedure.ProcedureCallFailed",
                              f"Failed to invoke procedure `{procedure}`: the vector index {name} was created "
                              "without `vector.dimensions` and no vector is stored yet (or this read-only "
                              "transaction cannot build it): the embedded database builds it from the first "
                              "vector stored; give `vector.dimensions` to build it at once.")
        if kind == "FULLTEXT" and isinstance(query, str):
            listed, hits = await _list_hits(ctx, d, parse(query))
            return [[d.labels[0], d.properties[0], translate(query), listed, hits]]
        if kind == "FULLTEXT":
            return [[d.labels[0], d.properties[0], query, [], []]]
        similarity = entry.options.get("indexConfig", {}).get("vector.similarity_function", "COSINE")
        row = [d.labels[0], d.properties[0], str(similarity).lower()]
        if query == _COUNT:                 # SEARCH with a WHERE: how many vectors the index holds
            [[size]] = await ctx.graph.read(f"MATCH (n:{quote(d.labels[0])}) WHERE n.{quote(d.properties[0])} "
                                            "IS NOT NULL RETURN count(n)", {})
            row.append(size)
        return [row]

    on = "" if entity == "NODE" else " RELATIONSHIP"
    return VirtualProcedure(f"SHOW {kind}{on} INDEX LOOKUP", ("label", "property", "similarity"), answer,
                            stands_in_for=Capability.PROCEDURES)


def _search(names: NameStore, name: str, native: str, kind: str, signature: str,
            arity: tuple[int, int], entity: str = "NODE") -> ProcedureRewrite:
    """The rewrite of one search procedure onto FalkorDB's `native` one; it yields `node` (or
    `relationship`, for an `entity` "RELATIONSHIP" index) and `score`."""
    lookup = _lookup(names, kind, name, entity)
    vector = kind == "VECTOR"
    found = "node" if entity == "NODE" else "relationship"

    def plan(planner: PlanBuilder, clause_index: int, clause: A.CallProcedure | A.Match) -> None:
        if isinstance(clause, A.Match):
            return _plan_search(planner, clause_index, clause, lookup, native)
        args = clause.args or ()
        if not arity[0] <= len(args) <= arity[1]:
            raise argument_error(f"{name}() takes {arity[0]} to {arity[1]} arguments. Usage: {signature}")
        fields, names_ = yielded(rewrite, clause)
        translated = not vector and isinstance(args[1], (A.Literal, A.Parameter))
        param = planner.add_virtual(lookup, (args[0], args[1]) if translated else (args[0],),
                                    [["", "", "cosine"] if vector else ["", "", "", [], []]])
        distance = f"__d{param[3:]}"
        node = quote(names_.get(found, found)) if found in fields else f"__n{param[3:]}"
        score = quote(names_.get("score", "score"))
        yield_node = found if node == found else f"{found} AS {node}"      # FalkorDB: no `node AS node`
        if vector:
            call = (f"CALL {native}(${param}[0][0], ${param}[0][1], toInteger({planner.render(args[1])}), "
                    f"vecf32({planner.render(args[2])})) YIELD {yield_node}, score AS {distance}")
            value = _SCORE.format(p=param, d=distance)
        else:                 # the query string, constant, is translated from Lucene's syntax by the lookup
            constant = isinstance(args[1], (A.Literal, A.Parameter))
            text_query = f"${param}[0][2]" if constant else planner.render(args[1])
            call = f"CALL {native}(${param}[0][0], {text_query}) YIELD {yield_node}, score AS {distance}"
            if constant and clause_index == 0:
                call += _with_list_hits(param, node, distance)
            value = distance
        text = f"{call} WITH {', '.join(carried(planner, clause_index) + [node, f'{value} AS {score}'])}"
        limit = args[2].get("limit") if not vector and len(args) == 3 and isinstance(args[2], A.MapLiteral) else None
        if limit is not None and clause_index == 0:                  # options {limit: n}
            text += f" ORDER BY {score} DESC LIMIT {planner.render(limit)}"
        planner.add_edit((*clause.span, text + call_tail(planner, clause, fields, names_)))

    rewrite = ProcedureRewrite(name, (found, "score"), plan, signature,
                               f"Query the {kind.lower()} index by name (on FalkorDB's {native}).")
    return rewrite


async def _list_hits(ctx: CallContext, d, tree) -> tuple[list[int], list[list]]:
    """FalkorDB's fulltext index skips list properties; Neo4j indexes each string of a list. The
    nodes of the index's label with a list in an indexed property are matched here, on all their
    indexed values: (their ids, [id, score] of those that match)."""
    keys = list(d.properties)
    rows = await ctx.graph.read(f"MATCH (n:{quote(d.labels[0])}) WHERE any(__k IN $keys WHERE typeOf(n[__k]) = "
                                "'List') RETURN id(n), [__k IN $keys | n[__k]]", {"keys": keys})
    hits = []
    for node_id, values in rows:
        strings = {k: [v] if isinstance(v, str) else [x for x in v if isinstance(x, str)] if isinstance(v, list)
                   else [] for k, v in zip(keys, values)}
        if score := matches(tree, strings):
            hits.append([node_id, float(score)])
    return [node_id for node_id, _ in rows], hits


def _with_list_hits(param: str, node: str, distance: str) -> str:
    """After FalkorDB's fulltext CALL: its hits among nodes without list values, then the lookup's
    hits among nodes with them (`_list_hits`), as one stream of (node, score) rows."""
    n = param[3:]
    return (f" WHERE NOT id({node}) IN ${param}[0][3] WITH collect([{node}, {distance}]) AS __a{n} "
            f"UNWIND CASE WHEN size(${param}[0][4]) = 0 THEN [null] ELSE ${param}[0][4] END AS __h{n} "
            f"OPTIONAL MATCH (__m{n}) WHERE id(__m{n}) = __h{n}[0] "
            f"WITH __a{n}, collect([__m{n}, __h{n}[1]]) AS __b{n} "
            f"UNWIND [__x IN __a{n} + __b{n} WHERE __x[0] IS NOT NULL] AS __x{n} "
            f"WITH __x{n}[0] AS {node}, __x{n}[1] AS {distance} ORDER BY {distance} DESC")


def _plan_search(planner: PlanBuilder, clause_index: int, clause: A.Match, lookup: VirtualProcedure, native: str) -> None:
    """Cypher 25's `MATCH pattern SEARCH v IN (VECTOR INDEX idx FOR q [WHERE w] LIMIT k) SCORE AS s`:
    the index's k nearest, `CALL <native>(...) YIELD node AS v`, then the MATCH with `v` bound
    (which keeps the pattern rows whose `v` is one of them). A WHERE inside SEARCH filters before
    the LIMIT, as Neo4j's in-index filtering does: every vector is ranked, filtered, then cut."""
    search = clause.search
    if clause.optional:
        raise argument_error("OPTIONAL MATCH ... SEARCH is not available on the embedded database; use MATCH "
                             "... SEARCH, or CALL db.index.vector.queryNodes() in an OPTIONAL CALL.")
    count = (A.Literal(_COUNT),) if search.where is not None else ()
    param = planner.add_virtual(lookup, (A.Literal(search.index), *count), [["", "", "cosine", 0]])
    distance, var, ranked, pair = (f"__d{param[3:]}", quote(search.var.name), f"__r{param[3:]}",
                                   f"__p{param[3:]}")
    yield_node = "node" if var == "node" else f"node AS {var}"
    kept = [n for n in carried(planner, clause_index) if n != var]
    score = [f"{_SCORE.format(p=param, d=distance)} AS {quote(search.score.name)}"] if search.score else []
    query, limit = planner.render(search.query), planner.render(search.limit)
    if search.where is None:
        head = (f"CALL {native}(${param}[0][0], ${param}[0][1], toInteger({limit}), vecf32({query})) "
                f"YIELD {yield_node}, score AS {distance} WITH {', '.join(kept + [var] + score)} ")
    else:
        if kept:
            raise argument_error("SEARCH ... WHERE (in-index filtering) is available on the embedded database "
                                 "only in the query's first MATCH; filter after the SEARCH instead.")
        head = (f"CALL {native}(${param}[0][0], ${param}[0][1], toInteger(${param}[0][3]), vecf32({query})) "
                f"YIELD {yield_node}, score AS {distance} WHERE {planner.render(search.where)} "
                f"WITH {var}, {distance} ORDER BY {distance} WITH collect([{var}, {distance}]) AS {ranked} "
                f"UNWIND {ranked}[0..toInteger({limit})] AS {pair} "          # LIMIT takes no expression here
                f"WITH {', '.join([f'{pair}[0] AS {var}'] + score).replace(distance, f'{pair}[1]')} ")
    planner.add_edit((clause.span[0], clause.span[0], head))
    planner.add_edit((*search.span, ""))


def search_rewrites(names: NameStore) -> list[ProcedureRewrite]:
    """db.index.vector.queryNodes, queryRelationships and db.index.fulltext.queryNodes on FalkorDB."""
    return [
        _search(names, "db.index.vector.queryNodes", "db.idx.vector.queryNodes", "VECTOR",
                "db.index.vector.queryNodes(indexName :: STRING, numberOfNearestNeighbours :: INTEGER, "
                "query :: LIST<FLOAT>) :: (node :: NODE, score :: FLOAT)", (3, 3)),
        _search(names, "db.index.vector.queryRelationships", "db.idx.vector.queryRelationships", "VECTOR",
                "db.index.vector.queryRelationships(indexName :: STRING, numberOfNearestNeighbours :: INTEGER, "
                "query :: LIST<FLOAT>) :: (relationship :: RELATIONSHIP, score :: FLOAT)", (3, 3), "RELATIONSHIP"),
        _search(names, "db.index.fulltext.queryNodes", "db.idx.fulltext.queryNodes", "FULLTEXT",
                "db.index.fulltext.queryNodes(indexName :: STRING, queryString :: STRING, options = {} :: MAP) "
                ":: (node :: NODE, score :: FLOAT)", (2, 3)),
    ]


#: (words, regex) that make the planner parse a query holding a SEARCH, which the planner rewrites
#: with the index lookup (`_plan_search`; `planner/triggers.py`).
TRIGGERS = ((("search",), r"\bsearch\s+[\w`]+\s+in\s*\("),)
