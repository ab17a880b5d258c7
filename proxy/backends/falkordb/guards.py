"""Refuse what would crash or wedge the embedded FalkorDB, before it costs anything.

FalkorDB's parser and planner have costs that its query timeout does not cover (measured on
4.16, 2 cores; tests/integration/test_hostile_queries.py sends each shape through the proxy):

| what | cost |
|---|---|
| nesting: brackets, unary `NOT`/`-`/`+`, `CASE` | parse time doubles per level: 15 ~ 60 ms, 23 ~ 10 s, 30 never ends |
| a chain of binary operators (`1 + 1 + ...`) | 45,000 fine, 60,000 segfaults the server |
| clauses (`WITH x WITH x ...`) | 120,000 segfault it |
| MATCH / OPTIONAL MATCH / UNWIND and comma-separated patterns | planning grows cubically: 600 OPTIONAL MATCH ~ 1.1 s, 3,000 MATCH ~ 18 s |
| entries of one map (literal or parameter) | building a map is quadratic: 20,000 ~ 0.7 s, 100,000 ~ 26 s |
| `range(a, b)` | the list is built whole first: 30 M elements ~ 2.5 s and 0.5 GB |
| a syntax error inside nested `[x IN ...]`, `any(x IN ...)`, `reduce(..., x IN ...)` | ~3.7x per level: 11 levels ~ 10 s (so these count as two levels) |
| a `CASE` without `END` (a syntax error) | reporting it costs ~3x per open CASE: 5 inside 9 brackets ~ 2 s |
| an arrow of many dashes, `(a)-----...->(b)` | parsed as a chain of signs: 1,000 dashes kept both worker threads busy for over 10 minutes, past any timeout (found by the fuzz suite) |
| a string, quoted name or comment left open | it hides the rest from a scan, not from FalkorDB: after an earlier syntax error, 20 open brackets behind it take ~4.7 s, 30 more than any timeout (found by the fuzz suite) |
| an aggregate in a list comprehension (`[x IN l WHERE count(*) > 0]`) | crashes the server (Neo4j refuses it) |
| one relationship variable twice in a path, `()-[r]->()-[r]->()`, once `r` is bound (`WITH r`, `UNWIND ... AS r`) | crashes the planner (unbound, FalkorDB refuses it itself; Neo4j always does; found by the fuzz suite) |

Each check here is one pass over the text (or the parameters) and stops at the first limit
crossed, so refusing a query never costs more than reading it. The limits sit well inside what
was measured safe and far above what real queries use.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from extensions.cypher.tokens import code_only, position
from core.errors import CypherError, syntax_error

MAX_QUERY_CHARS = 1_000_000
#: Nesting levels: brackets, CASE and unary operators together, a bracket that iterates
#: (`[x IN ...]`, `any(x IN ...)`) counting two (15 parse in ~60 ms, or fail in ~0.1 s).
MAX_NESTING = 15
#: Binary operators in one query (60,000 in one chain crash the server).
MAX_OPERATORS = 20_000
#: Clauses in one query (120,000 crash the server).
MAX_CLAUSES = 10_000
#: MATCH / UNWIND clauses plus comma-separated MATCH patterns (300 plan in ~0.25 s).
MAX_READING_PARTS = 300
#: Undirected relationships matched in one query part, `()-[]-()-[]-...`: FalkorDB's time to
#: match them grows ~6x per relationship and ignores the timeout (12 in one pattern, or 6 + 6 in
#: two, held a worker for minutes on a 3-node graph); directed and variable-length ones are fine.
MAX_UNDIRECTED_HOPS = 10
#: Entries of one map literal or map parameter (10,000 build in ~0.2 s).
MAX_MAP_ENTRIES = 10_000
#: Elements of one `range()` with literal or parameter bounds (10 M ~ 1.3 s, 160 MB).
MAX_RANGE = 10_000_000
INT64_MAX = 2**63 - 1
#: Longer query texts are scanned without caching (their analysis is cached, `falkordb.statement`).
_LONG_QUERY_CHARS = 65_536

#: One lexeme per match (None for trailing whitespace), for every scan of a query's text here and
#: in falkordb/upkeep.py.
TOKENS = re.compile(r"""           # possessive whitespace and an optional token: never backtracks
    \s*+(?:
      (?P<string>'[^'\\]*+(?:\\.[^'\\]*+)*+'?|"[^"\\]*+(?:\\.[^"\\]*+)*+"?|`[^`]*+`?)
    | (?P<comment>//[^\n]*+|/\*[^*]*+(?:\*(?!/)[^*]*+)*+(?:\*/)?)
    | (?P<param>\$\s*+(?:\w++|`[^`]*+`?))
    | (?P<word>[^\W\d]\w*)
    | (?P<number>\d[\w.]*)
    | (?P<open>[(\[{])
    | (?P<close>[)\]}])
    | (?P<arrow><-+>?|-+>)
    | (?P<sign>-+|\+(?!=))
    | (?P<comma>,)
    | (?P<op>=~|<>|!=|<=|>=|\+=|\.\.|[*/%^=<>])
    | (?P<other>.)
    )?""", re.VERBOSE | re.DOTALL)

#: Words that end the operands of pending unary operators (they separate expressions).
_SEPARATORS = frozenset("""WHEN THEN ELSE AS WHERE RETURN WITH MATCH OPTIONAL UNWIND
    CREATE MERGE SET DELETE DETACH REMOVE CALL YIELD UNION FOREACH ORDER SKIP LIMIT ON LOAD
    USE DISTINCT BY""".split())
_BINARY_WORDS = frozenset("AND OR XOR IN CONTAINS STARTS ENDS IS".split())
_CLAUSES = frozenset("""MATCH UNWIND WITH RETURN CREATE MERGE SET DELETE REMOVE CALL FOREACH UNION
    LOAD""".split())
#: Functions whose `x IN list` iterates the list (an aggregate inside crashes FalkorDB).
_LIST_ITERATORS = frozenset({"ANY", "ALL", "NONE", "SINGLE", "REDUCE"})
_AGGREGATES = frozenset("""COUNT COLLECT SUM AVG MIN MAX STDEV STDEVP STD PERCENTILECONT
    PERCENTILEDISC""".split())
#: Words after which `-`/`+` is a sign, not a subtraction.
_OPERAND_EXPECTED = _SEPARATORS | _BINARY_WORDS | {"NOT", "CASE"}
_ARGUMENT = r"\s*+(-?\s*+\d++|\$\w++)\s*+"
_RANGE = re.compile(rf"range\s*+\({_ARGUMENT},{_ARGUMENT}(?:,{_ARGUMENT})?\)", re.IGNORECASE)


#: How FalkorDB's refusal of an aggregate inside a list iteration begins.
AGGREGATE_IN_ITERATION = "Can't use aggregating expressions inside of expressions executing over lists"


def check_query(query: str, params: dict[str, Any] | None = None) -> None:
    """Raise a SyntaxError (`CypherError`) if FalkorDB could not parse or plan `query` safely.

    Linear in the query and its parameters. (A client's query is checked through its cached
    analysis instead, `falkordb.statement.analysed`, which defers one problem to after planning:
    an aggregate in a list iteration, which bridges/apoc_functions.py splits.)
    """
    found = problem(query)
    if found:
        raise syntax_error(found)
    check_ranges(query, params)


def problem(query: str) -> str | None:
    """What FalkorDB could not parse or plan safely in `query`'s text, or None (parameters aside:
    `check_ranges`). Cached by text when short."""
    if len(query) > MAX_QUERY_CHARS:
        return (f"The query is {len(query):,} characters long; the embedded FalkorDB "
                f"accepts at most {MAX_QUERY_CHARS:,}. Pass large values as parameters.")
    return _scan(query) if len(query) <= _LONG_QUERY_CHARS else _scan.__wrapped__(query)


def check_ranges(query: str, params: dict[str, Any] | None) -> None:
    """`range()` calls whose bounds are literals or parameters stay within MAX_RANGE elements."""
    if "range" in query.lower():
        _check_ranges(code_only(query), params or {})


def check_map_size(value: dict, name: str) -> None:
    """Refuse a map parameter with more entries than FalkorDB can build (the parameter encoder
    calls this for every map it writes, so no separate walk is needed)."""
    if len(value) > MAX_MAP_ENTRIES:
        raise CypherError(
            "Neo.ClientError.Statement.ArgumentError",
            f"Parameter ${name} holds a map with {len(value):,} entries; the embedded FalkorDB "
            f"accepts at most {MAX_MAP_ENTRIES:,} per map (it builds maps in quadratic time). "
            "Send a list of {key, value} maps instead and UNWIND it.")


@dataclass(slots=True)
class _Frame:
    """One open bracket or CASE, and the unary operators waiting inside it for their operand."""

    kind: str
    start: int = 0          # where it opened in the query
    levels: int = 1         # 2 once an IN shows it iterates (`[x IN l | ...]`, `all(x IN l ...)`)
    signs: int = 0          # `-`/`+`: their operand ends at the next binary operator
    nots: int = 0           # NOT: its operand (a comparison) ends at AND/OR/XOR or a separator
    commas: int = 0
    path: set[str] | None = None    # the relationship variables of the path pattern going on here
    lists: bool = False     # `[` or the `(` of any/all/none/single/reduce: an IN here iterates a list


class _Scan:
    """The counters of one pass over a query's tokens; each method returns a problem or None.

    `depth` is what FalkorDB's parse time doubles with: open brackets and CASEs, plus the
    unary operators whose operand has not ended yet.
    """

    def __init__(self) -> None:
        self.stack = [_Frame("")]
        self.depth = self.operators = self.clauses = self.parts = 0
        self.match_height = -1                # stack height of the MATCH whose commas are patterns
        self.undirected = 0                   # undirected relationships matched in this query part
        self.left_arrow = False               # the current relationship began with `<-`
        self.operand_expected = True          # a `-`/`+` here is a sign
        self.relationship_in: _Frame | None = None   # just after `)-[`: the frame of its path

    def open(self, kind: str, start: int, *, lists: bool = False) -> str | None:
        self.stack.append(_Frame(kind, start, lists=lists))
        self.depth += 1
        return self._nesting()

    def close(self, kind: str) -> None:
        """A closing bracket (it also closes a CASE left open inside), or END."""
        while len(self.stack) > 1:
            frame = self.stack.pop()
            self.depth -= frame.levels + frame.signs + frame.nots
            if frame.kind != "CASE" or kind == "END":
                return

    def unary(self, count: int, *, sign: bool) -> str | None:
        frame = self.stack[-1]
        if sign:
            frame.signs += count
        else:
            frame.nots += count
        self.depth += count
        return self._nesting()

    def iterates(self) -> str | None:
        """An IN directly inside a bracket: FalkorDB fails to parse such levels ~3.7x slower."""
        frame = self.stack[-1]
        if len(self.stack) == 1 or frame.levels == 2 or frame.kind == "CASE":
            return None
        frame.levels = 2
        self.depth += 1
        return self._nesting()

    def iterating(self) -> bool:
        """Inside `[x IN ...]`, `any(x IN ...)` or `reduce(..., x IN ...)` (not a `{ }` or `( )`
        that merely holds an `x IN list` predicate)."""
        return any(frame.levels == 2 and frame.lists for frame in self.stack)

    def binary(self, *, ends_not: bool = False) -> str | None:
        """A binary operator: the operands of pending signs (and of NOTs, for AND/OR/XOR) end."""
        self.end_operands(ends_not=ends_not)
        self.operators += 1
        if self.operators > MAX_OPERATORS:
            return (f"The query has more than {MAX_OPERATORS:,} operators; the embedded FalkorDB "
                    "cannot parse that many. Pass long lists as parameters (x IN $values) "
                    "instead of chains like x = 1 OR x = 2 OR ...")
        return None

    def end_operands(self, *, ends_not: bool = True) -> None:
        frame = self.stack[-1]
        self.depth -= frame.signs + (frame.nots if ends_not else 0)
        frame.signs = 0
        if ends_not:
            frame.nots = 0

    def comma(self) -> str | None:
        self.end_operands()
        frame = self.stack[-1]
        frame.commas += 1
        if frame.kind == "{" and frame.commas >= MAX_MAP_ENTRIES:
            return (f"A map in the query has more than {MAX_MAP_ENTRIES:,} entries; the embedded "
                    "FalkorDB builds maps in quadratic time. Pass it as a list parameter and "
                    "UNWIND it.")
        if len(self.stack) == self.match_height:
            return self._part()
        return None

    def clause(self, word: str) -> str | None:
        self.end_operands()
        if word in ("WITH", "RETURN", "UNION"):      # the MATCHes before are matched together
            self.undirected = 0
        self.clauses += 1
        self.match_height = len(self.stack) if word == "MATCH" else -1
        if self.clauses > MAX_CLAUSES:
            return (f"The query has more than {MAX_CLAUSES:,} clauses; the embedded FalkorDB "
                    "cannot plan that many. Split it into several queries.")
        return self._part() if word in ("MATCH", "UNWIND") else None

    def relationship_end(self, prev_kind: str, prev_text: str) -> str | None:
        """A `(` at the MATCH's level: after a plain `-` (`)-[]-(`, `)--(`), the relationship
        before it has no direction unless it began with `<-`."""
        if len(self.stack) != self.match_height:
            return None
        directed, self.left_arrow = self.left_arrow, False
        if prev_kind != "sign" or prev_text.startswith("+") or directed:
            return None
        self.undirected += 1
        if self.undirected > MAX_UNDIRECTED_HOPS:
            return (f"The query matches more than {MAX_UNDIRECTED_HOPS} relationships without a direction "
                    "before a WITH or RETURN, ()-[]-()-[]-...; the embedded FalkorDB's time to match "
                    "them grows about 6x per relationship, past any timeout. Give the relationships "
                    "a direction, or use one variable-length relationship such as -[*12]-.")
        return None

    def relationship_start(self, before: tuple[str, str]) -> None:
        """A `[` (not yet open): after `)-` or `)<-` it holds a relationship of the path going
        on at this level, whose variable comes next; anything else here ends that path."""
        frame = self.stack[-1]
        if before[0] == ")" and before[1] in ("-", "<-"):
            self.relationship_in = frame
        else:
            frame.path = None

    def relationship_variable(self, name: str, query: str, start: int) -> str | None:
        """The variable of the relationship just opened: once per path."""
        frame, self.relationship_in = self.relationship_in, None
        if frame is None or not name:
            return None
        if frame.path is None:
            frame.path = set()
        elif name in frame.path:
            return (f"Cannot use the same relationship variable '{name}' for multiple relationships "
                    f"{position(query, start)}")
        frame.path.add(name)
        return None

    def _part(self) -> str | None:
        self.parts += 1
        if self.parts > MAX_READING_PARTS:
            return (f"The query has more than {MAX_READING_PARTS} MATCH, OPTIONAL MATCH or UNWIND "
                    "clauses and comma-separated patterns; the embedded FalkorDB's planning time "
                    "grows with their cube. Split the query, or UNWIND a list parameter.")
        return None

    def _nesting(self) -> str | None:
        if self.depth > MAX_NESTING:
            return (f"The query nests expressions more than {MAX_NESTING} levels deep (brackets, "
                    f"CASE and unary NOT/-/+ each count); the embedded FalkorDB accepts at most "
                    f"{MAX_NESTING}: its parse time doubles with every level. Pass deeply nested "
                    "values as parameters, or compute them with fewer levels.")
        return None


@lru_cache(maxsize=256)
def _scan(query: str) -> str | None:
    """What is wrong with `query` for FalkorDB, or None: one pass over its tokens."""
    scan = _Scan()
    name_next = False               # after `.` or a label's `:` a word is a name, not a keyword
    prev_word = prev_kind = prev_text = before_prev = ""
    for token in TOKENS.finditer(query):
        kind = token.lastgroup
        if kind is None:
            continue
        text = token.group(kind)
        if kind in ("string", "comment"):
            if not _closed(text):
                return _unclosed(query, text, token.start(kind))
            if kind == "comment":
                continue
        word = text.upper() if kind == "word" and not name_next else ""
        problem = None
        if scan.relationship_in is not None:
            named = kind == "word" or kind == "string" and text.startswith("`")
            problem = scan.relationship_variable(text.strip("`") if named else "", query, token.start(kind))
        if kind not in ("open", "close", "sign", "arrow"):
            scan.stack[-1].path = None
        if problem:
            return problem
        if word:
            problem = _word(scan, word, prev_word, token.start(kind))
            scan.operand_expected = word in _OPERAND_EXPECTED
        elif kind == "open":
            if text == "(" and prev_word in _AGGREGATES and scan.iterating():
                return (f"{AGGREGATE_IN_ITERATION} ({prev_word.lower()}() inside a list comprehension, "
                        "list predicate or reduce); aggregate first, then iterate over the result")
            if text == "[":
                scan.relationship_start((before_prev, prev_text))
            problem = (text == "(" and scan.relationship_end(prev_kind, prev_text)) or \
                scan.open(text, token.start(kind), lists=text == "[" or prev_word in _LIST_ITERATORS)
            scan.operand_expected = True
        elif kind == "close":
            scan.close(text)
            scan.operand_expected = False
        elif kind == "sign" and scan.operand_expected:          # `- - x`, `--x`: a level each
            problem = scan.unary(len(text), sign=True)
        elif kind in ("sign", "op", "arrow"):
            problem = scan.binary()
            if kind == "sign" and len(text) > 1:                # `a --b`: a minus, then a sign
                problem = problem or scan.unary(len(text) - 1, sign=True)
            elif kind == "arrow" and text.count("-") > 2:       # `(a)----->(b)`: signs to FalkorDB
                problem = problem or scan.unary(text.count("-") - 2, sign=True)
            scan.left_arrow = scan.left_arrow or kind == "arrow" and text.startswith("<")
            scan.operand_expected = True
        elif kind == "comma" or text in ("|", ";"):
            problem = scan.comma() if kind == "comma" else scan.end_operands()
            scan.operand_expected = True
        else:
            scan.operand_expected = kind == "other"
        if problem:
            return problem
        name_next = text == "." or text == ":" and scan.stack[-1].kind != "{"   # `{a: NOT x}`
        prev_word, prev_kind, prev_text, before_prev = word, kind, text, prev_text
    return _unclosed_case(query, scan)


def _unclosed_case(query: str, scan: _Scan) -> str | None:
    """A CASE without END is a syntax error FalkorDB takes seconds to report when nested (its
    parser retries every alternative, about 3x per open CASE): answer it here."""
    case = next((frame for frame in scan.stack if frame.kind == "CASE"), None)
    if case is None:
        return None
    return f"Invalid input: this CASE has no END {position(query, case.start)}"


def _closed(lexeme: str) -> bool:
    """Whether a string, quoted name or comment token ends with its closing delimiter."""
    if lexeme.startswith("//"):
        return True
    if lexeme.startswith("/*"):
        return len(lexeme) >= 4 and lexeme.endswith("*/")
    quote = lexeme[0]
    if len(lexeme) < 2 or lexeme[-1] != quote:
        return False
    backslashes = len(lexeme) - 1 - len(lexeme[:-1].rstrip("\\"))
    return quote == "`" or backslashes % 2 == 0


def _unclosed(query: str, lexeme: str, start: int) -> str:
    """A string, quoted name or comment left open hides the rest of the query from this scan,
    but not from FalkorDB, whose error recovery then parses the rest at exponential cost (a
    syntax error before it and 30 brackets after it: longer than any timeout). Neo4j's words."""
    where = position(query, start)
    if lexeme.startswith("/*"):
        return f"Failed to parse comment. A comment starting on `/*` must have a closing `*/`. {where}"
    if lexeme.startswith("`"):
        return f"Failed to parse quoted name. A name starting with ` must have a closing `. {where}"
    return ("Failed to parse string literal. The query must contain an even number of non-escaped "
            f"quotes. {where}")



def _word(scan: _Scan, word: str, prev_word: str, start: int) -> str | None:
    if word == "NOT" and prev_word == "IS" or word == "WITH" and prev_word in ("STARTS", "ENDS"):
        return None                                   # IS NOT NULL, STARTS WITH: one operator
    if word == "NOT":
        return scan.unary(1, sign=False)
    if word == "CASE":
        return scan.open("CASE", start)
    if word == "END" and scan.stack[-1].kind == "CASE":
        scan.close("END")
        return None
    if word == "IN":
        return scan.iterates() or scan.binary()
    if word in _BINARY_WORDS:
        return scan.binary(ends_not=word in ("AND", "OR", "XOR"))
    if word in _CLAUSES:
        return scan.clause(word)
    if word in _SEPARATORS:
        scan.end_operands()
    return None


def _check_ranges(query: str, params: dict[str, Any]) -> None:
    for call in _RANGE.finditer(query):
        bounds = [_integer(arg, params) for arg in call.groups()]
        start, end, step = bounds[0], bounds[1], bounds[2] if call.group(3) else 1
        if start is None or end is None or not step:
            continue
        size = (end - start) // step + 1
        if size > MAX_RANGE:
            raise CypherError(
                "Neo.ClientError.Statement.ArgumentError",
                f"{call.group()} would build a list of {size:,} elements; the embedded FalkorDB "
                f"accepts at most {MAX_RANGE:,} (it builds the whole list before its timeout "
                "can act). Page through the range in several queries.")


def _integer(arg: str | None, params: dict[str, Any]) -> int | None:
    if arg is None:
        return None
    if arg.startswith("$"):
        value = params.get(arg[1:])
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    literal = arg.replace(" ", "")
    if len(literal.lstrip("-")) > 19:           # past 64 bits: FalkorDB clamps, as strtoll does
        return -INT64_MAX if literal.startswith("-") else INT64_MAX
    return int(literal)
