"""Values computed from probe rows, kept by the rows' content.

Behind an upstream Neo4j the probe cache is off (the proxy cannot see other clients' writes), so
a repeated query probes every time. But an extension without `prepare` is a function of its
arguments, its data's version and the cut, so probe rows equal to earlier ones give the values
they gave before, whatever the graph did meanwhile: the probes still run, only the evaluation is
skipped when they find what they found before (the seed query behind a Neo4j: the front's CPU
365 -> 217-240 µs per query). Extensions that read the graph themselves (`prepare`: spatial,
text) compute again every time.

The key is the rows pickled (equal bytes are equal rows, types included), so only probes of a
few thousand cells are kept; 16 MiB in all, least recently used first.
"""

from __future__ import annotations

import pickle
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

from .plan import ProbeStep
from .probe_cache import ProbeCache, estimate_value_bytes

MAX_BYTES = 16 * 2**20
#: Rows with more cells than this (the items of a list cell counted: the node probe's collected
#: nodes), or taking more bytes pickled, are not keyed on.
MAX_INPUT_CELLS = 8192
MAX_INPUTS_KEY_BYTES = 128 * 1024


def data_key(step: ProbeStep, params: dict[str, Any]) -> tuple[tuple, tuple]:
    """What a step's values depend on besides its arguments: the versions of the data its
    extensions read, and the cuts of the rows its projections need."""
    versions = dict.fromkeys(site.ext.data_version for site in step.sites if site.ext.data_version is not None)
    cuts = tuple(site.reduction.resolved(params) for site in step.sites if site.reduction is not None)
    return tuple(version() for version in versions), cuts


class ComputedValues:
    """A step's values by the content of the probe rows they were computed from."""

    def __init__(self, max_bytes: int = MAX_BYTES):
        self._cache = ProbeCache(max_bytes=max_bytes)

    async def get(self, step: ProbeStep, params: dict[str, Any], probed: tuple,
                  compute: Callable[[], Awaitable[dict[str, Any] | None]]) -> dict[str, Any] | None:
        """`compute()`'s values of `step`, or those it gave before for probe rows `probed` of the
        same content."""
        key = _inputs_key(step, params, probed)
        if key is not None and (values := self._cache.get(key)) is not None:
            return values
        values = await compute()
        if key is not None and values is not None:
            self._cache.put(key, values, estimate_value_bytes(values) + len(key[1]))
        return values


def _inputs_key(step: ProbeStep, params: dict[str, Any], probed: tuple) -> Hashable | None:
    """The rows' content, the step and its data key; None when an extension reads the graph
    itself (`prepare`) or the rows are too large to key on."""
    if any(site.ext.prepare is not None for site in step.sites) or not few_cells(probed, MAX_INPUT_CELLS):
        return None
    try:
        content = pickle.dumps(probed, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:                           # a value pickle cannot take: computed every time
        return None
    if len(content) > MAX_INPUTS_KEY_BYTES:
        return None
    return "computed", content, step.token, *data_key(step, params)


def few_cells(probed: tuple, limit: int) -> bool:
    """Whether the probe rows `probed` have at most `limit` cells, the items of list cells
    counted; it stops counting past the limit (a big probe is not walked to its end)."""
    cells = 0
    for rows in probed:
        cells += len(rows)
        for row in rows:
            if cells > limit:
                return False
            cells += len(row) + sum(len(cell) for cell in row if type(cell) is list)
    return cells <= limit

