"""Whole-graph kernels on a `Projection`: one array of values per algorithm, row i = node i.

Each kernel takes `(projection, options, cancel)` and runs in a worker thread; `cancel` is a
`threading.Event` the event loop sets when the client goes away or sends RESET, and kernels check
it between iterations (`checkpoint`), so an abandoned computation stops instead of running on.

PageRank is a power iteration written here rather than scikit-network's: its solvers either
treat dangling nodes differently from networkx and Neo4j GDS (measured 3e-3 apart on a 300-node
graph) or run a fixed number of terms without a tolerance or a place to stop. Louvain, label
propagation and connected components are scikit-network's.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import scipy.sparse as sp
from sknetwork.clustering import Louvain, PropagationClustering
from sknetwork.topology import get_connected_components

from .projection import Projection


class Cancelled(Exception):
    """The client stopped waiting for the result (RESET or disconnect)."""


def checkpoint(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise Cancelled()


def pagerank(projection: Projection, options: dict[str, Any], cancel=None) -> np.ndarray:
    """networkx's PageRank: rank flows along `direction`, dangling nodes spread theirs uniformly,
    stop when the L1 change is below n * tolerance (or after max_iterations)."""
    n = projection.n
    if n == 0:
        return np.zeros(0)
    matrix = projection.matrix(options["direction"])
    out_weight = np.asarray(matrix.sum(axis=1)).ravel()
    dangling = out_weight == 0
    inverse = np.divide(1.0, out_weight, out=np.zeros(n), where=~dangling)
    transition = (sp.diags(inverse) @ matrix).T.tocsr()          # column-stochastic, transposed
    alpha, tolerance = options["damping_factor"], options["tolerance"]
    scores = np.full(n, 1.0 / n)
    for _ in range(options["max_iterations"]):
        checkpoint(cancel)
        previous = scores
        scores = alpha * (transition @ previous + previous[dangling].sum() / n) + (1.0 - alpha) / n
        if np.abs(scores - previous).sum() < n * tolerance:
            break
    return scores


def degree(projection: Projection, options: dict[str, Any], cancel=None) -> np.ndarray:
    """Relationships (or their weights) per node: leaving ('out'), arriving ('in') or both."""
    leaving = np.asarray(projection.out.sum(axis=1)).ravel()
    arriving = np.asarray(projection.out.sum(axis=0)).ravel()
    return {"out": leaving, "in": arriving, "both": leaving + arriving}[options["direction"]]


def louvain(projection: Projection, options: dict[str, Any], cancel=None) -> np.ndarray:
    model = Louvain(resolution=options["resolution"], tol_optimization=options["tolerance"],
                    tol_aggregation=options["tolerance"], shuffle_nodes=options["seed"] is not None,
                    random_state=options["seed"], return_probs=False, return_aggregate=False)
    return _clusters(model.fit_predict, projection.matrix(options["direction"]), cancel)


def label_propagation(projection: Projection, options: dict[str, Any], cancel=None) -> np.ndarray:
    model = PropagationClustering(n_iter=options["max_iterations"], return_probs=False, return_aggregate=False)
    return _clusters(model.fit_predict, projection.matrix(options["direction"]), cancel)


def connected_components(projection: Projection, options: dict[str, Any], cancel=None) -> np.ndarray:
    """Weakly connected components ('both'); strongly connected ones for 'out' / 'in'."""
    connection = "weak" if options["direction"] == "both" else "strong"
    return _clusters(lambda m: get_connected_components(m, connection=connection), projection.out, cancel)


def _clusters(fit, matrix: sp.csr_matrix, cancel) -> np.ndarray:
    """Cluster labels numbered by size (largest 0, ties by first node); scikit-network refuses a
    graph without relationships, where every node is a cluster of its own."""
    checkpoint(cancel)
    labels = fit(matrix) if matrix.nnz else np.arange(matrix.shape[0])
    _, first, inverse, sizes = np.unique(labels, return_index=True, return_inverse=True, return_counts=True)
    order = np.lexsort((first, -sizes))
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[inverse]
