"""describe(): the graph explained to an LLM agent in a few hundred tokens.

`describe_text(graph, registry, types)` is the one entry point, shared by
`CALL describe()` / `CALL describe({types: [...]})` (`describe_procedure`) and HTTP.
Statistics come from `stats.py` and are cached by graph state (`cache.py`); the families'
flags, detail lines and extension headings come from the registry's `Describer`s, so a new
family appears here without this module being edited. See docs/describe-design.md.
"""

from __future__ import annotations

import asyncio
import difflib
import weakref
from collections import Counter
from typing import Any

from extensions.registry import CallContext, Describer, GraphContext, Registry, VirtualProcedure
from core.errors import argument_error

from . import render
from .cache import StateCache
from .stats import GraphStats, TypeStats, first_seen, graph_stats, type_stats

SIGNATURE = "describe(options = {} :: MAP) :: (description :: STRING)"
DESCRIPTION = ("The graph described for an LLM agent: node types, connections, conventions and Cypher "
               "extensions; {types: ['Name']} for a type's properties, values and connections.")

_caches: weakref.WeakKeyDictionary[Registry, StateCache] = weakref.WeakKeyDictionary()


def describe_procedure() -> VirtualProcedure:
    """`CALL describe([{types: [...]}]) YIELD description`, answered by the proxy on every backend."""

    async def answer(ctx: CallContext, args: list[Any]) -> list[list[Any]]:
        return [[await describe_text(ctx.graph, ctx.registry, _types_argument(args), user=ctx.user)]]

    return VirtualProcedure("describe", ("description",), answer, signature=SIGNATURE,
                            description=DESCRIPTION)


async def describe_text(graph: GraphContext, registry: Registry, types: list[str] | None = None, *,
                        user: str | None = None) -> str:
    """The inventory of the whole graph, or (with `types`) those node types in detail.

    `user` keys the cache, so on Neo4j one user never sees what another may read.
    Unknown type names raise an ArgumentError that names the closest types.
    """
    cache = _caches.setdefault(registry, StateCache())
    key = (graph.database, user)
    stats: GraphStats = await cache.get(("stats", *key), graph.state, lambda: graph_stats(graph.read, graph.integer_ids))
    describers = registry.describers()
    if types:
        _check_types(types, stats)
        details = [await cache.get(("detail", *key, label), graph.state,
                                   lambda label=label: type_stats(graph.read, label, stats.labels[label]))
                   for label in dict.fromkeys(types)]
        texts = await asyncio.gather(*(_detail(graph, stats, detail, describers) for detail in details))
        return "\n\n".join(texts)
    # the families' part changes with the graph too: computed once per state, like the statistics
    types_lines = await cache.get(("types", *key), graph.state, lambda: _types_lines(graph, stats, describers))
    legend = {flag: meaning for d in describers for flag, meaning in d.legend.items()}
    return render.inventory(stats, types_lines, legend, _families(registry, describers))


async def _types_lines(graph: GraphContext, stats: GraphStats, describers: list[Describer]) -> dict[str, render.TypeLines]:
    """Each type's flags; for a small graph also its families' lines and property names."""
    inline = len(stats.labels) <= render.INLINE_TYPES
    types_lines = {}
    for label in stats.labels:
        lines = render.TypeLines(flags=_flags(label, stats, describers))
        if inline:
            lines.family_lines = await _family_lines(graph, stats, label, describers)
            lines.properties = _sampled_properties(stats, label)
        types_lines[label] = lines
    return types_lines


def _sampled_properties(stats: GraphStats, label: str) -> list[str]:
    """The label's property names in its sample, most common first (conventions left out)."""
    sample = stats.samples.get(label, [])
    counts = Counter(key for props in sample for key in props)
    order = first_seen(sample)
    return [key for key in sorted(counts, key=lambda key: (-counts[key], order[key]))
            if key not in stats.conventions]


async def _detail(graph: GraphContext, stats: GraphStats, detail: TypeStats, describers: list[Describer]) -> str:
    return render.type_detail(detail, stats.patterns, _flags(detail.label, stats, describers),
                              await _family_lines(graph, stats, detail.label, describers), stats.conventions,
                              estimated=stats.sampled)


def _flags(label: str, stats: GraphStats, describers: list[Describer]) -> list[str]:
    sample = stats.samples.get(label, [])
    return [flag for d in describers for flag in d.flags(label, sample)]


async def _family_lines(graph: GraphContext, stats: GraphStats, label: str, describers: list[Describer]) -> list[str]:
    sample = stats.samples.get(label, [])
    return [line for d in describers if d.detail is not None for line in await d.detail(graph, label, sample)]


def _families(registry: Registry, describers: list[Describer]) -> list[render.Family]:
    """Extension signatures under their family's heading; unclaimed ones under "Other"."""
    signatures = {e.name: e.signature or f"{e.name}(...)" for e in [*registry, *registry.procedures()]}
    families = []
    for d in describers:
        claimed = [signatures.pop(name) for name in d.extensions if name in signatures]
        if claimed:
            families.append(render.Family(d.family, claimed, d.notes))
    if signatures:
        families.append(render.Family("Other", list(signatures.values())))
    return families


def _types_argument(args: list[Any]) -> list[str] | None:
    """describe(), describe({types: [...]}), and the shorthands describe(['A']) / describe('A')."""
    if not args or args[0] is None:
        return None
    if len(args) > 1:
        raise argument_error(f"describe() takes one map argument, got {len(args)}. Usage: {SIGNATURE}")
    value = args[0]
    if isinstance(value, dict):
        unknown = [key for key in value if key != "types"]
        if unknown:
            raise argument_error(f"describe() has no option '{unknown[0]}'; it takes {{types: ['Name', ...]}}")
        value = value.get("types")
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise argument_error(f"describe() takes {{types: ['Name', ...]}}, a list of node type names; got {value!r}")
    return value


def _check_types(types: list[str], stats: GraphStats) -> None:
    for name in types:
        if name in stats.labels:
            continue
        labels = list(stats.labels)
        close = [label for label in labels if label.lower() == name.lower()]
        close += [label for label in difflib.get_close_matches(name, labels, n=3, cutoff=0.5) if label not in close]
        hint = f"Did you mean {', '.join(close)}?" if close else f"Node types: {', '.join(labels[:20])}" + (
            ", ..." if len(labels) > 20 else "")
        raise argument_error(f"Unknown node type '{name}'. {hint}")
