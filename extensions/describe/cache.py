"""Statistics cached by graph state: computed at most once per state, however many ask.

The state (`GraphContext.state`) changes on every write that passes through the proxy and, for
an upstream Neo4j, on a TTL. A burst of writes therefore costs one refresh, made when describe()
is next asked for; callers that ask while it runs wait for the same computation. A state of None
(inside a transaction that wrote) is computed for that caller alone and never cached.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any, Awaitable, Callable


class StateCache:
    """The newest value per key, valid for one graph state; at most `size` keys."""

    def __init__(self, size: int = 256):
        self._size = size
        self._entries: OrderedDict[Hashable, tuple[Hashable, asyncio.Future]] = OrderedDict()

    async def get(self, key: Hashable, state: Hashable | None, compute: Callable[[], Awaitable[Any]]) -> Any:
        if state is None:
            return await compute()
        entry = self._entries.get(key)
        if entry is None or entry[0] != state or (entry[1].done() and entry[1].exception() is not None):
            entry = (state, asyncio.ensure_future(compute()))
            self._entries[key] = entry
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
        self._entries.move_to_end(key)
        # shielded: a caller that goes away does not cancel the computation others wait for
        return await asyncio.shield(entry[1])
