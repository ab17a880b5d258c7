"""APOC behind a Neo4j that lacks it: the census served in Neo4j's own Cypher.

A Neo4j with APOC answers its own: the proxy passes APOC calls through, as it always has. Many
Neo4j servers (Aura Free's early tiers, fresh Docker images, locked-down installs) have none,
and stock tools then fail at start-up (`apoc.meta.data`, llama-index's `apoc.map.clean`). So
the proxy asks each upstream database once, at the first query that names APOC, whether APOC is
installed (`APOC_INSTALLED`: its procedures are listed by SHOW PROCEDURES; the answer is kept
per database, so APOC installed later is seen after a restart) and, when it is not, plans the
queries naming APOC with `served`, a planner for the dialect `lacking_apoc`, whose registry
serves the census's procedures and which rewrites the APOC functions into Neo4j's Cypher
(`bridges/apoc_functions.NEO4J_FORMS`, `apoc_maps`' Neo4j texts); the schema shims read with Neo4j's
Cypher (`graph_schema.NEO4J_READS`, `schema_catalog`'s SHOW INDEXES / SHOW CONSTRAINTS).
APOC's writes with labels and types from the data (`apoc.merge.node`, `apoc.merge.relationship`,
`apoc.create.addLabels`, `apoc.refactor.mergeNodes`) are rewritten as on the embedded database,
into conditional MERGEs and SETs per label a probe finds: plain Cypher Neo4j runs too. Not
served there: `apoc.coll.sort` (Neo4j 5 has no list sort without APOC).

`WithoutApoc` is the test stand-in: the embedded database presented as a Neo4j without APOC
(`serve --without-apoc`, hidden): it lists no APOC procedure and refuses APOC calls with Neo4j's
errors, so a proxy in front of it (proxy -> proxy) is tested as in front of such a Neo4j.
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from itertools import count
from typing import Any

from core.backend import Result, TxConfig
from core.dialect import Capability, Dialect
from core.errors import CypherError

from ..bridges.apoc_functions import NEO4J_RULES
from ..bridges.rule import Context, Edit
from ..cypher import ast as A
from ..registry import ProcedureRewrite, Registry, VirtualProcedure

log = logging.getLogger("cypher_proxy")

#: Whether the database has APOC: one row, a count of its procedures.
APOC_INSTALLED = "SHOW PROCEDURES YIELD name WHERE name STARTS WITH 'apoc.' RETURN count(name) AS n"
#: The trigger of the Neo4j function rewrite (`planner/triggers.py`'s shape): an APOC function call.
TRIGGER = ("apoc.", re.compile(r"apoc\.[\w.]+\s*\("))
_CALL = re.compile(r"\bcall\s+`?(apoc\.[\w.]+)", re.I)
_FUNCTION = re.compile(r"(apoc\.[\w.]+)\s*\(", re.I)


def lacking_apoc(dialect: Dialect) -> Dialect:
    """`dialect` without APOC: the registry then serves the census's procedures (the schema
    shims, and APOC's writes with labels from the data as on the embedded database: conditional
    MERGEs per label the probe finds, plain Cypher), and the planner rewrites APOC's functions."""
    return replace(dialect, name=f"{dialect.name} without APOC", native=dialect.native - {Capability.APOC})


def with_apoc(dialect: Dialect) -> Dialect:
    """`dialect` with APOC: the bridge rules a Neo4j without APOC needs besides the APOC rewrite
    into its own Cypher (`function_edits`), which the embedded database's APOC rules are not."""
    return replace(dialect, native=dialect.native | {Capability.APOC})


def without_apoc(registry: Registry) -> Registry:
    """`registry` without the APOC procedures (for `WithoutApoc`)."""
    return registry.derived(lambda e: None if isinstance(e, (VirtualProcedure, ProcedureRewrite))
                            and e.name.lower().startswith("apoc.") else e)


def function_edits(tree: A.Query, text: str, dialect: Dialect) -> list[Edit]:
    """Every APOC function call of `tree` as Neo4j's Cypher (`apoc_functions.NEO4J_FORMS`)."""
    ctx = Context(text, tree, (str(i) for i in count()), dialect)
    edits = [edit for node in tree.walk() for cls, apply in NEO4J_RULES if isinstance(node, cls)
             for edit in apply(node, ctx)]
    return sorted(edits, key=lambda e: (e[0], e[1]))


class ApocDetectingPlanner:
    """Behind a Neo4j: `native` (APOC passed through) where the database has APOC, else `served`."""

    def __init__(self, native, served):
        self.native, self.served = native, served
        self._installed: dict[str, bool] = {}

    async def execute(self, query: str, params: dict[str, Any], runner) -> Result:
        """A query that names nothing of APOC goes to `native` without asking anything."""
        needs = "apoc." in query.lower() and not await self.has_apoc(runner)
        return await (self.served if needs else self.native).execute(query, params, runner)

    async def has_apoc(self, runner) -> bool:
        """Asked once per database, on the first query that names APOC, in a transaction of its
        own (never the client's); an upstream that cannot answer (permissions, the system
        database) is taken to have APOC, as before."""
        database = runner.database
        if database not in self._installed:
            try:
                result = await runner.backend.run(APOC_INSTALLED, {}, TxConfig(database=database, mode="r"),
                                                  runner.credentials)
                rows = await result.fetch(-1)
                await result.consume()
            except CypherError as exc:
                log.info("could not tell whether database %s has APOC (%s): passing APOC calls through",
                         database, exc.message)
                return True
            self._installed[database] = bool(rows and rows[0][0])
            if not self._installed[database]:
                log.info("database %s has no APOC: the proxy serves the APOC census there", database)
        return self._installed[database]


class WithoutApoc:
    """Test stand-in for a Neo4j without APOC: `planner`'s queries, with APOC calls refused as
    Neo4j refuses unknown procedures and functions (its registry lists no APOC procedure)."""

    def __init__(self, planner):
        self.planner = planner

    async def execute(self, query: str, params: dict[str, Any], runner) -> Result:
        if call := _CALL.search(query):
            raise CypherError("Neo.ClientError.Procedure.ProcedureNotFound",
                              f"There is no procedure with the name `{call[1]}` registered for this database "
                              "instance. Please ensure you've spelled the procedure name correctly and that the "
                              "procedure is properly deployed.")
        if function := _FUNCTION.search(query):
            raise CypherError("Neo.ClientError.Statement.SyntaxError", f"Unknown function '{function[1]}'")
        return await self.planner.execute(query, params, runner)

