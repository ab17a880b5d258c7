"""Probe results cached by graph version: an agent that asks the same thing twice probes once.

A probe is a read-only query; when its text, the parameters it mentions and the graph's state
(`Backend.graph_state`: every write through the proxy changes it) are unchanged, its rows are
too. On the embedded database every write passes through the proxy, so the state is exact and
the cache is on. An upstream Neo4j has writers the proxy never sees: there the cache is off
unless configured with a TTL, after which entries are not used. Probes that read the clock or
draw random numbers (`rand()`, `timestamp()`, `datetime()` ...) are never cached, nor are
probes inside a transaction that has written (their rows are private to it).

Memory is bounded: least recently used entries go first once `max_bytes` (an estimate of the
rows' size) is reached.
"""

from __future__ import annotations

import re
import sys
import time
from collections import OrderedDict
from collections.abc import Hashable
from functools import lru_cache
from typing import Any

DEFAULT_MAX_BYTES = 64 * 2**20
#: Parameter values longer than this (as text) make a probe uncacheable: keying on them costs too much.
MAX_KEY_CHARS = 64 * 1024

_VOLATILE = re.compile(r"\b(?:rand|randomUUID|timestamp)\s*\(|"
                       r"\b(?:date|datetime|localdatetime|time|localtime)(?:\.\w+)?\s*\(\s*[){]", re.I)
_PARAMETER = re.compile(r"\$\s*(?:`([^`]*)`|(\w+))")


@lru_cache(maxsize=4096)
def _analysis(text: str) -> tuple[str, ...] | None:
    """The parameter names a probe mentions, or None when it is not deterministic."""
    if _VOLATILE.search(text):
        return None
    return tuple(sorted({m.group(1) if m.group(1) is not None else m.group(2) for m in _PARAMETER.finditer(text)}))


class ProbeCache:
    """Probe rows by (database, text, parameters, graph state), LRU by estimated bytes."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES, ttl: float | None = None):
        self.max_bytes = max_bytes
        self.ttl = ttl
        self.nbytes = 0
        self._entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()

    def key(self, text: str, params: dict[str, Any], runner) -> Hashable | None:
        """The cache key of running probe `text` with `params` through `runner`, or None."""
        names = _analysis(text)
        if names is None:
            return None
        state = runner.graph_state()
        if state is None:
            return None
        values = repr([params.get(name, _ABSENT) for name in names])
        if len(values) > MAX_KEY_CHARS:
            return None
        bucket = int(time.monotonic() // self.ttl) if self.ttl else None
        return runner.database, text, values, state, bucket

    def get(self, key: Hashable) -> Any:
        entry = self._entries.get(key)
        if entry is None:
            return None
        self._entries.move_to_end(key)
        return entry[0]

    def put(self, key: Hashable, rows: Any, nbytes: int | None = None) -> None:
        """Keep `rows` (or what was derived from them, `nbytes` large) under `key`."""
        size = estimate_bytes(rows) if nbytes is None else nbytes
        if size > self.max_bytes // 4:
            return
        old = self._entries.pop(key, None)
        if old is not None:
            self.nbytes -= old[1]
        self._entries[key] = (rows, size)
        self.nbytes += size
        while self.nbytes > self.max_bytes:
            _, (_, dropped) = self._entries.popitem(last=False)
            self.nbytes -= dropped

    def __len__(self) -> int:
        return len(self._entries)


class _Absent:
    def __repr__(self) -> str:
        return "<absent>"


_ABSENT = _Absent()


def estimate_bytes(rows: list[list[Any]], sample: int = 16) -> int:
    """Rows' memory, estimated from up to `sample` of them (cells and their shallow sizes)."""
    if not rows:
        return 64
    step = max(1, len(rows) // sample)
    picked = rows[::step][:sample]
    per_row = sum(sys.getsizeof(row) + sum(_cell_bytes(cell) for cell in row) for row in picked) / len(picked)
    return int(per_row * len(rows)) + 64


def _cell_bytes(cell: Any) -> int:
    if isinstance(cell, (list, tuple)):
        return sys.getsizeof(cell) + sum(sys.getsizeof(item) for item in cell)
    return sys.getsizeof(cell)


def estimate_value_bytes(value: Any, sample: int = 16) -> int:
    """A nested value's memory (computed parameters: lists and maps of lists ...), estimated
    from up to `sample` items of each list or map."""
    if isinstance(value, dict):
        items = list(value.items())
        size = sys.getsizeof(value)
        if items:
            picked = items[::max(1, len(items) // sample)][:sample]
            size += int(sum(sys.getsizeof(k) + estimate_value_bytes(v, sample) for k, v in picked)
                        * len(items) / len(picked))
        return size
    if isinstance(value, (list, tuple)):
        size = sys.getsizeof(value)
        if value:
            picked = value[::max(1, len(value) // sample)][:sample]
            size += int(sum(estimate_value_bytes(v, sample) for v in picked) * len(value) / len(picked))
        return size
    return sys.getsizeof(value)
