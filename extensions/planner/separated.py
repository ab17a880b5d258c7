"""Separated probes (`split.py`) at run time: the node probe and the value probe, fetched together,
and the values of their product.

A mixin of `ExtensionPlanner` (planner.py), whose probe cache, computed values (`computed.py`),
dialect and `_prepared` it uses. Both probes go to the database in one request where the runner
can send them so (`runners.read_together`: an upstream Neo4j answers both in one round trip);
each side comes from the probe cache while the graph is unchanged. The product is evaluated when
it is small or its sides are lopsided; otherwise the combined probe runs (`SMALL_PRODUCT`,
`PRODUCT_RATIO`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from core.errors import CypherError

from . import kernels
from .plan import ProbeStep, Site
from .probe_cache import estimate_bytes
from .runners import graph_context, read_together
from .split import SplitProbe, node_rows

#: A separated probe's product is evaluated when it has at most SMALL_PRODUCT tuples or at most
#: PRODUCT_RATIO times as many as its two sides have rows (one side small); else the combined probe runs.
SMALL_PRODUCT = 10_000
PRODUCT_RATIO = 100


class SeparatedProbes:
    """The separated-probe steps of `ExtensionPlanner`."""

    async def _run_split(self, step: ProbeStep, params: dict[str, Any], runner) -> dict[str, Any] | None:
        """The step's parameters from the node probe x the value probe; None: run the combined probe
        (the product is too large for its sides, or an evaluator refused a combination)."""
        split: SplitProbe = step.split
        if (cut := await self._scored_cut(step, params, runner)) is not None:
            return cut
        node_sides, values_rows, probed_nodes = await self._probe_sides(split, params, runner, self._node_sides(split))
        n_nodes, n_values = max(map(len, node_sides), default=0), len(values_rows)
        if n_nodes * n_values > SMALL_PRODUCT and n_nodes * n_values > PRODUCT_RATIO * (n_nodes + n_values):
            return None

        async def product() -> dict[str, Any] | None:
            values: dict[str, Any] = {}
            try:
                for site, plan, node_side in zip(step.sites, split.sites, node_sides):
                    values.update(await self._compute_product(site, plan, node_side, values_rows, runner, params))
            except CypherError:
                return None
            return values
        if probed_nodes is None:                   # the node side came from the probe cache
            return await product()
        return await self.computed.get(step, params, (probed_nodes, values_rows), product)

    async def _scored_cut(self, step: ProbeStep, params: dict[str, Any], runner) -> dict[str, Any] | None:
        """The parameters of a step whose one call binds only the rows its projection needs and
        scores nodes in bulk (`Extension.score_nodes`): node ids as arrays, one score per node,
        the cut; None when that does not apply (then the nodes are bound one by one)."""
        site, split = step.sites[0], step.split
        if len(step.sites) != 1 or site.reduction is None or site.ext.score_nodes is None \
                or site.args[site.index_arg].kind != "node":
            return None
        groups, values_rows, _ = await self._probe_sides(split, params, runner, ("ids", self._node_ids))
        value_side = kernels.value_side(split.sites[0], values_rows, self.dialect)
        if len(value_side) != 1:
            return None
        scored = await site.ext.score_nodes(graph_context(runner), [(labels, ids) for labels, ids, _ in groups],
                                            *next(iter(value_side.values())))
        values = np.concatenate([np.zeros(0), *scored])
        keys = [key for _, ids, keys in groups for key in (ids.tolist() if keys is None else keys)]
        return kernels.bind_cut(site, keys, values, params)

    async def _probe_sides(self, split: SplitProbe, params: dict[str, Any], runner,
                           node_form: tuple[Hashable, Callable]) -> tuple[Any, list[list[Any]], list | None]:
        """The node side, in `node_form` (its cache tag, and what makes it of the node probe's rows,
        with a function of its size in bytes), the value probe's rows, and the node probe's rows
        (None when the node side was cached): each from the probe cache while the graph is
        unchanged, the probes not cached sent together (an upstream Neo4j answers both in one
        round trip). The node probe goes first: its error is the one raised."""
        cache = self.probe_cache
        node_key = value_key = node = None
        values = None if split.value_text else [[]]
        if cache is not None and (node_key := cache.key(split.node_text, params, runner)) is not None:
            node_key = (node_key, node_form[0])
            node = cache.get(node_key)
        if values is None and cache is not None and (value_key := cache.key(split.value_text, params, runner)):
            values = cache.get(value_key)
        wanted = [text for text, known in ((split.node_text, node), (split.value_text, values)) if known is None]
        fetched = iter(await read_together(runner, [(text, params) for text in wanted]))
        probed_nodes = None
        if node is None:
            probed_nodes = next(fetched)
            node, nbytes = node_form[1](probed_nodes)
            if node_key is not None:
                cache.put(node_key, node, nbytes())
        if values is None:
            values = next(fetched)
            if value_key is not None:
                cache.put(value_key, values)
        return node, values, probed_nodes

    def _node_ids(self, found: list[list[Any]]) -> tuple[list[tuple], Callable[[], int]]:
        """The node probe's nodes as (labels, internal ids array, lookup keys) per label set, and
        their size. With integer ids the keys are the ids (None: 8 bytes a node in the cache)."""
        integer_ids = self.dialect.integer_ids
        id_at = -1 if integer_ids else -2                              # Neo4j: [..., id, element id]
        groups = [(labels, np.array([item[id_at] for item in items if item[-1] is not None], dtype=np.int64),
                   None if integer_ids else [item[-1] for item in items if item[-1] is not None])
                  for labels, items in found]
        return groups, lambda: sum(ids.nbytes * (1 if keys is None else 10) for _, ids, keys in groups)

    def _node_sides(self, split: SplitProbe) -> tuple[Hashable, Callable]:
        """The node form of per call {node index: node-side arguments}, kept with the nodes'
        NodeRefs. Calls of other queries share the node probe's text, not the argument objects
        (`n.temp` vs `n.power`: PropertyRefs of another key), so those are in the cache tag."""
        def sides(groups: list[list[Any]]) -> tuple[list[dict[Any, tuple]], Callable[[], int]]:
            nodes = node_rows(groups)
            made = [kernels.node_side(plan, nodes, self.dialect) for plan in split.sites]
            return made, lambda: estimate_bytes(nodes) * (1 + len(made))
        return tuple((arg.kind, arg.key) for plan in split.sites for arg in plan.node_args), sides

    async def _compute_product(self, site: Site, plan, node_side: dict, values_rows, runner,
                               params: dict[str, Any]) -> dict[str, Any]:
        offload = site.ext.offload(len(node_side) * len(values_rows), node_side.values())
        value_side = kernels.value_side(plan, values_rows, self.dialect)
        prepared = await self._prepared(
            site, lambda: [a + b for a in node_side.values() for b in value_side.values()], runner)
        if offload:
            return await asyncio.to_thread(kernels.bind_product, site, node_side, value_side, prepared, params)
        return kernels.bind_product(site, node_side, value_side, prepared, params)
