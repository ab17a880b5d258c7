"""The windowed read's number parsing: FalkorDB's toJSON text back to the exact values."""

from __future__ import annotations

import asyncio

import numpy as np
from hypothesis import given, strategies as st

from extensions.windows import in_windows, json_numbers

FINITE = st.floats(allow_nan=False, allow_infinity=False)


@given(st.lists(FINITE, max_size=30))
def test_floats_come_back_as_the_compact_reply_gives_them(values):
    """toJSON prints %.15g, as the compact reply does: the parse equals float() of each number."""
    text = "[" + ", ".join("%.15g" % v for v in values) + "]"
    assert json_numbers(text).tolist() == [float("%.15g" % v) for v in values]


@given(st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), max_size=30))
def test_single_precision_coordinates_are_exact(values):
    """FalkorDB keeps point coordinates in single precision: %.15g carries each one exactly."""
    text = "[" + ", ".join("%.15g" % v for v in values) + "]"
    assert json_numbers(text).astype(np.float32).tolist() == values


@given(st.lists(st.integers(-2**62, 2**62), max_size=30))
def test_integers_are_exact(values):
    assert json_numbers(str(values), np.int64).tolist() == values


def test_an_empty_list_is_an_empty_array():
    assert json_numbers("[]", np.int64).dtype == np.int64 and len(json_numbers(" [ ] ")) == 0


def test_windows_come_back_in_order_whatever_finishes_first():
    async def read(low: int) -> int:
        await asyncio.sleep(0.001 * (10 - low))
        return low

    assert asyncio.run(in_windows(read, range(10))) == list(range(10))
