"""describe()'s text: statistics -> the few hundred tokens an agent reads.

Everything is stated once: the properties every node has, one line per size band of node
types with their capability flags, connections grouped by relationship type, and the
non-standard Cypher (from the registry's signatures). A type's detail adds what its name does
not tell: properties with kinds, values and ranges, the families' lines (timeseries channels
...), connections with counts and one sample node.

Both texts are laid out within a token budget (`Budget`): what must be said first, then lists
filled in order of usefulness until the budget is spent, with "+N more" for the rest. A graph
of up to `INLINE_TYPES` types lists every type with its count, its families' lines (timeseries
channels ...) and, where they fit, its property names: often one call is all an agent needs.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable

from .stats import VALUE_LIST_MAX, GraphStats, PropertyStats, TypeStats

#: Token budgets, as `estimate_tokens` counts them (it counts inventories 4-13% above cl100k, a
#: detail -4%..+9%): the inventory, the inventory of a small graph (which inlines its types'
#: families' lines and property names), one type's detail. Targets: 400, 450, 250 cl100k tokens.
INVENTORY_TOKENS = 396
INLINE_TOKENS = 450
DETAIL_TOKENS = 240
#: Graphs with at most this many node types get their types' details inline.
INLINE_TYPES = 15
#: Size bands of the inventory: (lower bound, name).
BANDS = ((1000, "Large (>1000)"), (100, "Medium (>100)"), (0, "Small"))
HINT = "Details: CALL describe({types: ['Name', ...]})"
#: Relationships of one type per node (on a pattern's narrower side) from which describe() says
#: how to expand with a cap: a two-hop expansion around such a hub is thousands of rows.
HUB_FAN = 20
EXPAND_CAP = 20

_KIND_NAMES = {"isodate": "str"}
#: About one cl100k token each (fitted on describe() output of the demo and generated graphs):
#: a word of up to 7 letters with the space, slash, bracket or dot before it, an underscore and
#: up to 3 letters (snake_case splits), up to 3 upper-case letters, up to 3 digits, 2 punctuation
#: characters with the space before them, a line break with its indent, other spaces, any other
#: character (one per non-ASCII letter).
_PIECES = re.compile(r"[ /(.]?[A-Z]?[a-z]{1,6}|_[a-z]{1,3}|[ _|]?[A-Z]{1,3}(?![a-z])| ?\d{1,3}"
                     r"| ?[^\w\s]{1,2}|\n *|\s+|\w")


def estimate_tokens(text: str) -> int:
    """A cl100k token count estimate, within -4%..+9% on describe() text (budgets keep a margin)."""
    return len(_PIECES.findall(text))


class Budget:
    """Tokens left for a text: `take` spends them if a line fits, `spend` in any case."""

    def __init__(self, tokens: int):
        self.left = tokens

    def fits(self, text: str, newline: bool = True) -> bool:
        return estimate_tokens(text) + newline <= self.left

    def take(self, text: str, newline: bool = True) -> bool:
        """Spend the tokens of `text` (a line, unless `newline` is false) if they are left."""
        if not self.fits(text, newline):
            return False
        self.left -= estimate_tokens(text) + newline
        return True

    def spend(self, line: str) -> str:
        self.left -= estimate_tokens(line) + 1
        return line

    def split(self, share: float) -> "Budget":
        """A part of what is left, for one section; `refund` returns what it did not spend."""
        part = Budget(int(self.left * share))
        self.left -= part.left
        return part

    def refund(self, part: "Budget") -> None:
        self.left += part.left


@dataclass
class Family:
    """One extension family as the inventory shows it (from a registry `Describer`)."""

    title: str
    signatures: list[str]
    notes: tuple[str, ...] = ()


@dataclass
class TypeLines:
    """What the inventory may inline for one type of a small graph."""

    flags: list[str] = field(default_factory=list)
    family_lines: list[str] = field(default_factory=list)
    properties: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- the inventory

def inventory(stats: GraphStats, types: dict[str, TypeLines], legend: dict[str, str],
              families: list[Family]) -> str:
    """The whole-graph description: header, types, connections, extensions, within the budget."""
    head = [f"Graph: {stats.nodes:,} nodes, {stats.relationships:,} relationships"]
    if stats.conventions:
        every = not stats.sampled and all(share == 1.0 for share in stats.conventions.values())
        head.append(f"{'All' if every else 'Nearly all'} nodes have "
                    + ", ".join(f".{key}" for key in stats.conventions))
    used = sorted({flag for lines in types.values() for flag in lines.flags})
    if used:
        head.append("Flags: " + ", ".join(f"{flag} = {legend[flag]}" if flag in legend else flag
                                          for flag in used))
    tail = extensions(families)
    inline = len(stats.labels) <= INLINE_TYPES
    if not inline:
        tail.append(HINT)
    left = Budget(INLINE_TOKENS if inline else INVENTORY_TOKENS)
    for line in head + tail:
        left.take(line)
    if inline:                                     # connections before the families' lines:
        type_lines = _inline_heads(stats, types, left)          # how types link is what an
        links = connections(stats.patterns, left)               # agent cannot guess, and a
        type_lines += _inline_family_lines(stats, types, left)  # wrong channel's error lists them
        type_lines += _inline_properties(stats, types, left)
    else:
        names = left.split(2 / 3)                   # the rest is for connections
        type_lines = _banded_types(stats, types, names)
        left.refund(names)
        links = connections(stats.patterns, left)
    # the hubs' line is beyond the budget: it is what keeps an agent's expansions small
    return "\n".join(head + type_lines + links + tail + capped_expand(stats))


def _flags(label: str, types: dict[str, TypeLines]) -> str:
    flags = types[label].flags if label in types else []
    return ", ".join(flags)


def _banded_types(stats: GraphStats, types: dict[str, TypeLines], left: Budget) -> list[str]:
    """Type names by size band; when they do not all fit, the smallest are counted, not named."""
    bands: dict[str, list[str]] = {}
    for label, count in stats.labels.items():
        band = next(name for bound, name in BANDS if count > bound or bound == 0)
        flags = _flags(label, types)
        bands.setdefault(band, []).append(f"{label} ({flags})" if flags else label)
    lines = [left.spend(f"Node types ({len(stats.labels)}):")]
    return lines + [fill(f"  {band}: ", labels, left, ", ") for band, labels in bands.items()]


def _inline_heads(stats: GraphStats, types: dict[str, TypeLines], left: Budget) -> list[str]:
    """Small graphs: every type with its count and flags on one line."""
    if not stats.labels:
        return []

    def counted(label: str, count: int) -> str:
        flags = _flags(label, types)
        return f"{label} ({count:,}{'; ' + flags if flags else ''})"

    return [left.spend(f"Node types ({len(stats.labels)}): "
                       + ", ".join(counted(label, count) for label, count in stats.labels.items()))]


def _inline_family_lines(stats: GraphStats, types: dict[str, TypeLines], left: Budget) -> list[str]:
    """Small graphs: the families' lines of each type (channels, text properties), as fit."""
    lines = [f"  {label}: {line}" for label in stats.labels if label in types
             for line in types[label].family_lines]
    return [line for line in lines if left.take(line)]


def _inline_properties(stats: GraphStats, types: dict[str, TypeLines], left: Budget) -> list[str]:
    """Small graphs: a line of property names per type, for the types whose whole list fits."""
    lines = []
    for label in stats.labels:
        names = types[label].properties if label in types else []
        if names and left.take(line := f"  {label} properties: {', '.join(names)}"):
            lines.append(line)
    return lines


def connections(patterns: dict[tuple[str, str, str], int], left: Budget) -> list[str]:
    """`TYPE: A, B -> C` per relationship type and end label (`T1|T2: ...` when two types link
    the same labels), most relationships first, as many as fit.

    When not all fit, the ones kept are chosen so that every node type shows at least one of
    its connections (its most frequent) before the rest are added by frequency.
    """
    starts: dict[tuple[str, str], list[str]] = defaultdict(list)
    totals: dict[tuple[str, str], int] = defaultdict(int)
    for (start, rel_type, end), count in patterns.items():
        starts[(rel_type, end)].append(start)
        totals[(rel_type, end)] += count
    merged: dict[tuple[tuple[str, ...], str], list[str]] = defaultdict(list)
    for rel_type, end in sorted(starts, key=lambda key: -totals[key]):
        merged[(tuple(starts[(rel_type, end)]), end)].append(rel_type)
    if not merged:
        return []
    total = {key: sum(totals[(t, key[1])] for t in rel_types) for key, rel_types in merged.items()}
    by_frequency = sorted(merged, key=lambda key: -total[key])
    lines = {key: f"  {'|'.join(merged[key])}: {', '.join(key[0])} -> {key[1]}" for key in by_frequency}
    header = left.spend("Connections:")
    everything = "\n".join(lines.values())
    more = "" if left.fits(everything) else "\n  +999 more"       # room to say what is left out
    kept: set = set()
    for key in _covering(by_frequency) + by_frequency:
        if key not in kept and left.fits(lines[key] + more):
            kept.add(key)
            left.take(lines[key])
    shown = [lines[key] for key in by_frequency if key in kept]
    if len(kept) < len(merged):
        shown.append(left.spend(f"  +{len(merged) - len(kept)} more"))
    return [header, *shown]


def _covering(by_frequency: list[tuple[tuple[str, ...], str]]) -> list[tuple[tuple[str, ...], str]]:
    """The first line (in frequency order) each node type takes part in."""
    covered: set[str] = set()
    chosen = []
    for key in by_frequency:
        members = {*key[0], key[1]}
        if not members <= covered:
            chosen.append(key)
            covered |= members
    return chosen


def fill(prefix: str, items: list[str], left: Budget, separator: str) -> str:
    """`prefix` + as many `items` as fit, then `+N more` for the rest."""
    text = prefix
    for index, item in enumerate(items):
        rest = len(items) - index - 1
        candidate = text + (separator if index else "") + item
        if not left.fits(candidate + (f"{separator}+{rest} more" if rest else "")):
            return left.spend(f"{text}{separator if index else ''}+{len(items) - index} more")
        text = candidate
    return left.spend(text)


def extensions(families: list[Family]) -> list[str]:
    lines = ["Cypher: standard Cypher works. Extensions:"]
    for family in families:
        lines.append(f"  {family.title}: {'; '.join(merge_signatures(family.signatures))}")
        lines += [f"    {note}" for note in family.notes]
    return lines


def capped_expand(stats: GraphStats) -> list[str]:
    """How to expand around a hub a hop at a time with a cap per node (a LIMIT inside
    `CALL (n) { }` applies per row), when some type's relationships average `HUB_FAN` or more
    per node at one end; nothing for a graph without such hubs."""
    fan = max((count / stats.labels[end] for (start, _, stop), count in stats.patterns.items()
               for end in (start, stop) if stats.labels.get(end)), default=0)
    if fan < HUB_FAN:
        return []
    return [f"Hubs: expand a hop at a time, capped per node: CALL (n) {{ MATCH (n)-[r]-(m) RETURN r, m "
            f"LIMIT {EXPAND_CAP} }}"]


def merge_signatures(signatures: Iterable[str]) -> list[str]:
    """Consecutive signatures (after `compact`) that differ only in the name share one line,
    `a/b(x, y?)`; procedures that differ only in their last output too, `YIELD node, score|community`."""
    merged: list[tuple[str, list[str], str, list[str]]] = []
    for signature in signatures:
        prefix, name, rest = _split(compact(signature))
        comma = rest.rfind(", ")
        head, last = (rest[:comma], rest[comma + 2:]) if comma > rest.find(" YIELD ") >= 0 else (rest, "")
        if merged and merged[-1][0] == prefix and merged[-1][2] == head:
            merged[-1][1].append(name)
            if last not in merged[-1][3]:
                merged[-1][3].append(last)
        else:
            merged.append((prefix, [name], head, [last]))
    return [f"{prefix}{'/'.join(names)}{head}{', ' + '|'.join(lasts) if lasts != [''] else ''}"
            for prefix, names, head, lasts in merged]


def compact(signature: str) -> str:
    """A signature as describe() lists it: a map of parameters shown as `{...}` (errors name
    them), no explanation after `: `.

    'CALL pagerank({damping_factor: 0.85, ...}) YIELD node, score: exact ...'
    -> 'CALL pagerank({...}) YIELD node, score'
    """
    start = signature.find("(")
    if start < 0:
        return signature
    depth = 0
    for end in range(start, len(signature)):
        depth += {"(": 1, ")": -1}.get(signature[end], 0)
        if depth == 0:
            break
    inside = signature[start + 1:end]
    if inside.lstrip().startswith("{"):
        inside = "{...}"
    return signature[:start + 1] + inside + signature[end:].split(": ", 1)[0]


def _split(signature: str) -> tuple[str, str, str]:
    """'CALL pagerank({...}) YIELD node' -> ('CALL ', 'pagerank', '({...}) YIELD node')."""
    prefix = "CALL " if signature.startswith("CALL ") else ""
    body = signature[len(prefix):]
    cut = body.find("(")
    return (prefix, body, "") if cut < 0 else (prefix, body[:cut], body[cut:])


# ---------------------------------------------------------------- one type

def type_detail(stats: TypeStats, patterns: dict[tuple[str, str, str], int], flags: list[str],
                family_lines: list[str], conventions: Iterable[str], estimated: bool = False) -> str:
    """One type: the families' lines, properties, connections, a sample node, within the budget
    (`estimated`: the connection counts are estimates, shown as `~1,200`)."""
    head = [f"{stats.label} ({stats.count:,} nodes{'; ' + ', '.join(flags) if flags else ''}):",
            *(f"  {line}" for line in family_lines)]
    left = Budget(DETAIL_TOKENS)
    for line in head:
        left.take(line)
    links = left.split(1 / 2)
    connection_lines = _type_connections(stats.label, patterns, links, estimated)
    left.refund(links)
    skip = set(conventions)
    property_lines = _properties([p for p in stats.properties if p.name not in skip], stats, left)
    sample = _sample(stats.sample, left)
    return "\n".join(head + property_lines + connection_lines + sample)


def _type_connections(label: str, patterns: dict[tuple[str, str, str], int], left: Budget,
                      estimated: bool) -> list[str]:
    """`-[:T]-> A (n), B (m)` per outgoing type, `<-[:T]- A (n)` per incoming, most frequent first."""
    arrows: dict[str, list[str]] = {}
    for (start, rel_type, end), count in patterns.items():      # patterns are by frequency
        if start == label:
            arrows.setdefault(f"-[:{rel_type}]->", []).append(f"{end} ({_count(count, estimated)})")
    for (start, rel_type, end), count in patterns.items():
        if end == label:
            arrows.setdefault(f"<-[:{rel_type}]-", []).append(f"{start} ({_count(count, estimated)})")
    if not arrows:
        return []
    left.take("  Connections:")
    lines = [f"    {arrow} {', '.join(others)}" for arrow, others in arrows.items()]
    return ["  Connections:", *_lines_that_fit(lines, left, "    ")]


def _count(count: int, estimated: bool) -> str:
    """`1,234`, or an estimate to two significant digits, `~1,200`."""
    if not estimated:
        return f"{count:,}"
    return f"~{round(count, 2 - len(str(count))):,}" if count >= 100 else f"~{count}"


def _properties(props: list[PropertyStats], stats: TypeStats, left: Budget) -> list[str]:
    """A line per property while they fit (keeping room to name the rest), then the rest by name."""
    if not props:
        return []
    note = f" (from the first {stats.scanned:,})" if stats.scanned < stats.count else ""
    title = f"  Properties{note}:"
    left.take(title)
    lines: list[str] = []
    for index, prop in enumerate(props):
        line = f"    {_property(prop, stats.scanned)}"
        rest = ", ".join(p.name for p in props[index + 1:])
        reserve = min(estimate_tokens(f"    also: {rest}"), 40) if rest else 0
        if estimate_tokens(line) + 1 + reserve > left.left:
            return [title, *lines, fill("    also: ", [p.name for p in props[index:]], left, ", ")]
        lines.append(left.spend(line))
    return [title, *lines]


def _lines_that_fit(lines: list[str], left: Budget, indent: str) -> list[str]:
    """All `lines` if they fit, else as many as fit with room for `+N more`."""
    if left.fits("\n".join(lines)):
        return [left.spend(line) for line in lines]
    kept: list[str] = []
    for line in lines:
        if not left.fits(f"{line}\n{indent}+999 more"):
            break
        kept.append(left.spend(line))
    return kept + [left.spend(f"{indent}+{len(lines) - len(kept)} more")]


def _property(prop: PropertyStats, scanned: int) -> str:
    text = f"{prop.name} ({_KIND_NAMES.get(prop.kind, prop.kind)})"
    if prop.values is not None and prop.kind != "bool":
        text += ": " + "|".join(_value(v) for v in prop.values)
    elif prop.kind == "int" and prop.distinct == prop.present and prop.present > VALUE_LIST_MAX:
        text += ": unique"                              # an identifier: its range says little
    elif prop.low is not None and prop.low != prop.high:
        text += f": {_value(prop.low)}..{_value(prop.high)}"
    elif prop.distinct is not None and prop.kind in ("str", "int"):
        text += f": {prop.distinct:,} unique"
    if prop.present < 0.95 * scanned:
        text += f" [{round(100 * prop.present / scanned)}%]"
    return text


def _sample(sample: dict[str, Any], left: Budget) -> list[str]:
    """`Sample: {...}` with as many of the node's short values as fit (none: no line)."""
    items = [f"{key}: {_literal(value)}" for key, value in sample.items()]
    text = "  Sample: {"
    for item in items:
        candidate = text + (", " if text[-1] != "{" else "") + item
        if not left.fits(candidate + "}"):
            break
        text = candidate
    if text.endswith("{"):
        return []
    return [left.spend(text + "}")]


def _value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _literal(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value.replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    return _value(value)
