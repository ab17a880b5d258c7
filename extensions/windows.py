"""Reading a big part of the embedded database fast: windows of node ids, numbers as JSON text.

FalkorDB answers a query with one reply. Read as rows, a million values are a million cells
that hiredis turns into Python objects and the proxy decodes one by one: for a million points
~2.5 s to send and parse and ~1.8 s to decode, after FalkorDB's own 0.8 s. The families that
read whole labels or subgraphs (the algorithms' projection, the spatial layers) instead ask
once per window of node ids (`id(n)` ranges are seeks) and get a window's numbers as a few
columns of `toJSON(collect(...))` text, which numpy parses in C (`json_numbers`). `toJSON`
prints numbers as FalkorDB's compact reply does (integers exactly, floats as `%.15g`, which
carries its single-precision point coordinates exactly), so the values are the ones a row read
gives; `toString` would keep 6 decimals. `in_windows`
keeps IN_FLIGHT windows asked at once, so FalkorDB computes one while the proxy parses another,
and no window's text is big (200k relationships: ~3 MB).
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, Iterable

import numpy as np

#: Windows asked at once (FalkorDB computes one while the proxy parses the one before).
IN_FLIGHT = 2


async def in_windows(read: Callable[[int], Awaitable[Any]], lows: Iterable[int]) -> list:
    """`read(low)` for each window start, IN_FLIGHT at a time; the answers in window order."""
    lows = list(lows)
    results: list = [None] * len(lows)
    todo = iter(enumerate(lows))

    async def worker() -> None:
        for at, low in todo:
            results[at] = await read(low)
    await asyncio.gather(*(worker() for _ in range(IN_FLIGHT)))
    return results


def json_numbers(text: str, dtype: type = np.float64) -> np.ndarray:
    """A JSON list of numbers (`toJSON(collect(...))`, nulls left out by collect) -> array."""
    inner = text.strip()[1:-1]
    return np.fromstring(inner, dtype=dtype, sep=",") if inner.strip() else np.empty(0, dtype=dtype)


def joined(chunks: list[np.ndarray], dtype: type = np.int64) -> np.ndarray:
    """The windows' arrays end to end."""
    return np.concatenate(chunks) if chunks else np.empty(0, dtype=dtype)
