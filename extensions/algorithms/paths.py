"""Shortest-path centralities: betweenness and closeness, exact on small graphs, sampled on big ones.

Both sum a per-source quantity over source nodes, so both run in batches of sources (checking
for cancellation between batches) and both have the same two modes:

- exact: every node is a source. The default up to `EXACT_MAX_NODES` nodes; the values are
  networkx's (`betweenness_centrality`, `closeness_centrality` with `wf_improved`).
- sampled: `sample_size` distinct source nodes drawn at random (`seed`), the per-source sums
  scaled by n / k. Unbiased; by Hoeffding's inequality (which holds for sampling without
  replacement), with probability 95% each node's value is within a stated margin of the exact one:
  betweenness normalized to [0, 1] within `margin(n, k)`; closeness's mean distance (on a
  connected graph) within `margin(n, k)` x the largest distance. A sample as big as the graph is exact.

Betweenness is Brandes' algorithm written as sparse-matrix products over a batch of sources (the
path counts and dependencies of all sources of a batch move one BFS level per product), so it is
unweighted. Closeness takes its distances from `scipy.sparse.csgraph` (BFS, or Dijkstra on a
weighted projection).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import shortest_path

from .kernels import checkpoint
from .projection import Projection

#: Up to this many nodes every node is a source (exact values) unless `sample_size` is given.
EXACT_MAX_NODES = 5_000
#: Sources per batch when sampling a graph larger than EXACT_MAX_NODES.
DEFAULT_SAMPLE_SIZE = 256
#: The margins hold with probability 1 - CONFIDENCE_FAILURE.
CONFIDENCE_FAILURE = 0.05
_BATCH_CELLS = 2_000_000          # nodes x sources held per batch (a few dense n-by-b arrays)


def margin(n: int, k: int) -> float:
    """Hoeffding margin of a mean of k sampled values in [0, 1], scaled like the estimates (n / (n-1))."""
    if k >= n or n < 2:
        return 0.0
    return n / (n - 1) * math.sqrt(math.log(2 / CONFIDENCE_FAILURE) / (2 * k))


def sources(n: int, options: dict[str, Any]) -> np.ndarray:
    """Every node (exact), or `sample_size` distinct random ones."""
    k = options.get("sample_size")
    if k is None and n <= EXACT_MAX_NODES:
        return np.arange(n)
    k = min(n, k or DEFAULT_SAMPLE_SIZE)
    return np.sort(np.random.default_rng(options.get("seed")).choice(n, size=k, replace=False))


def _batches(chosen: np.ndarray, n: int):
    size = max(1, min(256, _BATCH_CELLS // max(n, 1)))
    for start in range(0, len(chosen), size):
        yield chosen[start:start + size]


# ------------------------------------------------------------------ betweenness

def betweenness(projection: Projection, options: dict[str, Any], cancel=None) -> np.ndarray:
    """networkx's betweenness_centrality (unweighted): pairs counted once on 'both', normalized
    by (n-1)(n-2) when `normalized` (by 2/((n-1)(n-2)) on 'both', the same scale)."""
    n = projection.n
    if n == 0:
        return np.zeros(0)
    forward = projection.matrix(options["direction"], "pattern")
    backward = forward.T.tocsr()
    chosen = sources(n, options)
    total = np.zeros(n)
    for batch in _batches(chosen, n):
        checkpoint(cancel)
        total += _dependencies(forward, backward, batch, cancel)
    total *= n / len(chosen)
    if options["direction"] == "both":
        total /= 2
    if options["normalized"] and n > 2:
        scale = (n - 1) * (n - 2)
        total *= (2 if options["direction"] == "both" else 1) / scale
    return total


def _dependencies(forward: sp.csr_matrix, backward: sp.csr_matrix, batch: np.ndarray, cancel) -> np.ndarray:
    """Sum over the sources in `batch` of Brandes' dependency of each node (sources excluded)."""
    n, b = forward.shape[0], len(batch)
    columns = np.arange(b)
    sigma = np.zeros((n, b))
    sigma[batch, columns] = 1.0
    level_of = np.full((n, b), -1, dtype=np.int32)
    level_of[batch, columns] = 0
    frontier = sigma.copy()
    depth = 0
    while True:
        checkpoint(cancel)
        reached = backward @ frontier                  # paths into each node from the frontier
        new = (reached > 0) & (level_of < 0)
        if not new.any():
            break
        depth += 1
        level_of[new] = depth
        frontier = np.where(new, reached, 0.0)
        sigma += frontier
    delta = np.zeros((n, b))
    with np.errstate(divide="ignore", invalid="ignore"):
        for level in range(depth, 0, -1):
            checkpoint(cancel)
            coefficient = np.where(level_of == level, (1.0 + delta) / sigma, 0.0)
            pulled = forward @ coefficient             # sum over successors one level further
            parents = level_of == level - 1
            delta[parents] += sigma[parents] * pulled[parents]
    delta[batch, columns] = 0.0
    return delta.sum(axis=1)


# ------------------------------------------------------------------ closeness

def closeness(projection: Projection, options: dict[str, Any], cancel=None) -> np.ndarray:
    """networkx's closeness_centrality (wf_improved): (r-1)/(n-1) * (r-1)/sum of distances from
    the r nodes that reach the node (itself included); on a weighted projection weights are lengths."""
    n = projection.n
    if n < 2:
        return np.zeros(n)
    weighted = options["weighted"]
    matrix = projection.matrix(options["direction"], "shortest" if weighted else "pattern")
    chosen = sources(n, options)
    distance_sum = np.zeros(n)
    reached_by = np.zeros(n)
    for batch in _batches(chosen, n):
        checkpoint(cancel)
        distances = shortest_path(matrix, method="D", directed=True, unweighted=not weighted, indices=batch)
        finite = np.isfinite(distances)
        distance_sum += np.where(finite, distances, 0.0).sum(axis=0)
        reached_by += finite.sum(axis=0)
    scale = n / len(chosen)
    distance_sum *= scale
    others = reached_by * scale - 1.0               # nodes other than itself that reach it
    with np.errstate(divide="ignore", invalid="ignore"):
        scores = np.where(distance_sum > 0, others / distance_sum * others / (n - 1), 0.0)
    return np.maximum(scores, 0.0)
