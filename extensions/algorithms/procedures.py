"""The algorithm procedures: `CALL pagerank({...}) YIELD node, score` and six more, from one table.

Each call resolves its parameters, gets the projection of its subgraph from the store (cached
per graph state, shared by every algorithm on that subgraph), and runs its kernel in a worker
thread; the values are kept with the projection, so a repeated call computes nothing. If the query is cancelled (the client
sent RESET or went away) the kernel's cancel flag is set, so the thread stops at its next check
instead of computing for nobody. The result is a `ValueColumn` ({node identity: (value,)}); the
planner binds the rows the query needs (`extensions/planner/reduce.py`).
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable

import numpy as np

from extensions.registry import GraphContext, Procedure, ValueColumn
from core.errors import argument_error

from . import kernels, paths
from .parameters import (DAMPING, MAX_ITERATIONS, NORMALIZED, RESOLUTION, SAMPLE_SIZE, SEED, SUBGRAPH,
                         TOLERANCE, Param, defaults, direction_param, resolve)
from .projection import ProjectionStore

#: Projections with fewer nodes + relationships are computed on the event loop (a thread costs more).
_INLINE_BELOW = 2_000

_SUBGRAPH_DOC = ("node_type|labels, relationship|connection_types, direction, weight_property, "
                 "where (a predicate on n), refresh")
_SAMPLED = (f"exact (every node a source) up to {paths.EXACT_MAX_NODES:,} nodes; above that, or with "
            f"sample_size, estimated from sample_size (default {paths.DEFAULT_SAMPLE_SIZE}) random sources "
            f"(seed): unbiased, and with 95% probability within sqrt(ln(40) / (2 sample_size)) x n/(n-1)")


@dataclass(frozen=True)
class Spec:
    name: str
    output: str                      # the yield column after `node`
    kernel: Callable
    params: tuple[Param, ...]
    signature: str


SPECS = (
    Spec("pagerank", "score", kernels.pagerank,
         (direction_param("out"), DAMPING, MAX_ITERATIONS, TOLERANCE),
         "CALL pagerank({damping_factor: 0.85, max_iterations: 100, tolerance: 1e-6, direction: 'out', "
         "<subgraph>}) YIELD node, score: exact (power iteration until the L1 change < n x tolerance; "
         "networkx's definition, dangling nodes spread their rank evenly); weights sum"),
    Spec("degree", "score", kernels.degree, (direction_param("both"),),
         "CALL degree({direction: 'both'|'out'|'in', <subgraph>}) YIELD node, score: exact "
         "(relationships per node, or the sum of their weight_property)"),
    Spec("betweenness", "score", paths.betweenness,
         (direction_param("both"), NORMALIZED, SAMPLE_SIZE, SEED),
         "CALL betweenness({normalized: false, sample_size, seed, direction: 'both', <subgraph>}) "
         f"YIELD node, score: unweighted shortest paths (Brandes, networkx's scale); {_SAMPLED} of the "
         "exact score normalized to [0, 1]"),
    Spec("closeness", "score", paths.closeness, (direction_param("both"), SAMPLE_SIZE, SEED),
         "CALL closeness({sample_size, seed, direction: 'both', <subgraph>}) YIELD node, score: "
         "networkx's closeness (Wasserman-Faust for unreachable nodes; weight_property = length); "
         f"{_SAMPLED} x the largest distance of each node's exact mean distance (connected graphs)"),
    Spec("louvain", "community", kernels.louvain,
         (direction_param("both"), RESOLUTION, Param("tolerance", 1e-3, TOLERANCE.check), SEED),
         "CALL louvain({resolution: 1.0, tolerance: 1e-3, seed, direction: 'both', <subgraph>}) "
         "YIELD node, community: scikit-network's Louvain (heuristic: maximises modularity, "
         "communities numbered by size, largest 0)"),
    Spec("label_propagation", "community", kernels.label_propagation,
         (direction_param("both"), Param("max_iterations", 10, MAX_ITERATIONS.check, ("maxIterations",))),
         "CALL label_propagation({max_iterations: 10, direction: 'both', <subgraph>}) YIELD node, "
         "community: scikit-network's label propagation (deterministic node order)"),
    Spec("connected_components", "component", kernels.connected_components, (direction_param("both"),),
         "CALL connected_components({direction: 'both', <subgraph>}) YIELD node, component: exact; "
         "weakly connected components ('both'), strongly connected ones ('out' or 'in'); "
         "numbered by size, largest 0"),
)


async def _run(spec: Spec, store: ProjectionStore, graph: GraphContext, given: dict[str, Any],
               node_id: str) -> ValueColumn:
    params = (*SUBGRAPH, *spec.params)
    subgraph, options = resolve(spec.name, params, given)
    if spec.kernel is paths.betweenness and options["weighted"]:
        raise argument_error("betweenness() uses unweighted shortest paths; remove weight_property "
                             "(closeness() takes it as a length).")
    projection = await store.get(graph, subgraph, node_id, refresh=options.pop("refresh"))
    key = (spec.name, repr(sorted(options.items())))
    values = projection.results.get(key)
    if values is None:
        if projection.n + len(projection.sources) < _INLINE_BELOW:
            values = spec.kernel(projection, options)
        else:
            values = await _in_thread(spec.kernel, projection, options)
        projection.results[key] = values = np.asarray(values)
    return ValueColumn(projection.ids, values)


async def _in_thread(kernel: Callable, projection, options: dict[str, Any]):
    """`kernel` in a worker thread; cancelling the awaiting task stops the kernel at its next check."""
    cancel = threading.Event()
    try:
        return await asyncio.to_thread(kernel, projection, options, cancel)
    except asyncio.CancelledError:
        cancel.set()                         # the thread raises `Cancelled` into the abandoned future
        raise


def algorithm_procedures(store: ProjectionStore) -> list[Procedure]:
    """The seven algorithm procedures over one projection cache."""
    return [Procedure(name=spec.name, parameters=defaults((*SUBGRAPH, *spec.params)),
                      yields=("node", spec.output), run=partial(_run, spec, store),
                      signature=spec.signature.replace("<subgraph>", _SUBGRAPH_DOC))
            for spec in SPECS]
