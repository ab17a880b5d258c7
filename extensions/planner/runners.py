"""What a plan's steps and its statement run through: the graph context an evaluator sees (the
queries it may run in the client's transaction), and a runner that writes into every later query
the forms the values were bound in and the texts late steps rendered at their markers.

Apart from `planner.py` because these are the seam between the steps and the database: a step
never rewrites the text it is given, it returns its edits (`bound_edits`), and `Rewriting`
applies them to the probes after it and to the statement. Probes that do not depend on each
other (a separated probe's two sides) are asked for together (`read_together`), so a runner
that can send them in one write does: behind a Neo4j that is one round trip instead of two.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from core.backend import Result, WriteInOptimisticRead, optimistic_read, read_rows

from . import bind
from .plan import AlgorithmStep, ProbeStep
from ..registry import GraphContext


def graph_context(runner, typed: Callable[..., Result] | None = None) -> GraphContext:
    """What an evaluator may know of the graph `runner`'s queries see; `typed(result, text=,
    params=)` gives the stored date-times they read their kinds (`kinds.typed`, for describe())."""

    async def run(query: str, params: dict[str, Any]) -> Result:
        result = await runner.run(query, params)
        return result if typed is None else typed(result, text=query, params=params)

    async def read(query: str, params: dict[str, Any]) -> list[list[Any]]:
        return await read_rows(await run(query, params))

    async def stream(query: str, params: dict[str, Any], batch: int = 10_000):
        result = await run(query, params)
        while rows := await result.fetch(batch):
            yield rows
        await result.consume()
    return GraphContext(runner.database, runner.graph_state(), read, stream, runner.backend.dialect)


#: Runs of a read whose probes and statement saw different states before it runs excluding writes.
READ_ATTEMPTS = 3


async def consistently(runner, execute: Callable[[Any], Awaitable[Result]], *, writes: bool) -> Result:
    """`execute(runner)`, whose probes and statement read one state of the graph.

    A planned query reads the graph more than once: its probes, then the statement that reads
    the values bound from them. Another client's write between the two would leave the statement
    reading nodes no probe saw (their values null) or values of a state that is gone: a wrong
    answer without an error. Where the backend can tell (`Backend.versioned_reads`), a statement
    that writes runs with other writes excluded from its first probe on, as Neo4j's statement
    holds the locks of what it writes; a read runs again if a write came between its reads
    (`read_version`), the last time with writes excluded. `writes` says the statement is known
    to write; one that turns out to (a procedure, a late step's clause) is stopped before it
    writes (`optimistic_read`) and run excluding writes."""
    if not runner.backend.versioned_reads:
        return await execute(runner)
    if not writes:
        try:
            for _ in range(READ_ATTEMPTS - 1):
                version = runner.read_version()
                with optimistic_read():
                    result = await execute(runner)
                if version is not None and runner.read_version() == version:
                    return result
                await result.abandon()
        except WriteInOptimisticRead:
            writes = True
    async with runner.excluding_writes(writes):
        return await execute(runner)


def bound_edits(step, bound: dict[str, Any]) -> list[tuple[str, str]]:
    """(text, replacement) for the forms `bound` takes that the planned text does not read:
    grid calls bound sparse, calls bound for the rows the query needs, algorithm rows bound to
    be sought."""
    if isinstance(step, ProbeStep):
        return (bind.sparse_edits((site.lookup for site in step.sites), bound)
                + [edit for site in step.sites for edit in site.edits(bound)])
    if isinstance(step, AlgorithmStep):
        return step.edits(bound)
    return []


class Rewriting:
    """A runner whose queries read values in the form they were bound in (`bound_edits`), and the
    late edits' texts where their markers are."""

    def __init__(self, runner, edits: list[tuple[str, str]]):
        if isinstance(runner, Rewriting):
            runner, edits = runner._runner, runner._edits + edits
        self._runner, self._edits = runner, edits

    def __getattr__(self, name: str) -> Any:
        return getattr(self._runner, name)

    def rewrite(self, text: str) -> str:
        for old, new in self._edits:
            text = text.replace(old, new)
        return text

    async def run(self, query: str, params: dict[str, Any]) -> Result:
        return await self._runner.run(self.rewrite(query), params)

    async def read_together(self, queries: list[tuple[str, dict[str, Any]]]) -> list[list[list[Any]]]:
        return await read_together(self._runner, [(self.rewrite(query), params) for query, params in queries])


async def read_together(runner, queries: list[tuple[str, dict[str, Any]]]) -> list[list[list[Any]]]:
    """The rows of independent read-only queries, in order; the first that fails raises. Sent
    together where the runner can (`Backend.read_together`: one round trip to an upstream Neo4j),
    else run one after the other."""
    if not queries:
        return []
    together = getattr(runner, "read_together", None)
    if together is not None:
        return await together(queries)
    return [await read_rows(await runner.run(query, params)) for query, params in queries]
