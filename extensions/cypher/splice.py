"""Rewrite a query by replacing spans of its original text.

The rewriter changes only what it must (an extension call becomes a parameter lookup) and keeps
everything else byte-for-byte, comments and formatting included, so the database sees the
user's query with the smallest possible edit.
"""

from __future__ import annotations

from typing import Iterable

Span = tuple[int, int]


def splice(text: str, replacements: Iterable[tuple[Span, str]]) -> str:
    """`text` with each (start, end) span replaced by its new text.

    Spans may come in any order; they must lie within the text and must not overlap (an empty
    span (i, i) inserts at i; insertions at one position keep their given order). Raises ValueError otherwise, since overlapping edits have no
    single meaning.
    """
    edits = sorted(replacements, key=lambda r: (r[0][0], r[0][1]))
    out, pos = [], 0
    for (start, end), new in edits:
        if not 0 <= start <= end <= len(text):
            raise ValueError(f"span {(start, end)} is outside the text (length {len(text)})")
        if start < pos:
            raise ValueError(f"span {(start, end)} overlaps the previous replacement ending at {pos}")
        out.append(text[pos:start])
        out.append(new)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def outermost(replacements: Iterable[tuple[Span, str]]) -> list[tuple[Span, str]]:
    """The replacements not nested inside another one: of nested edits the outer one wins
    (an edit of a whole comparison replaces the edit of a call inside it). An insertion at
    either end of a replaced span is not inside it, so both are kept."""
    kept: list[tuple[Span, str]] = []
    reach = -1
    for (start, end), new in sorted(replacements, key=lambda r: (r[0][0], r[0][0] != r[0][1], -r[0][1])):
        if start < reach:
            continue
        kept.append(((start, end), new))
        reach = max(reach, end)
    return kept
