"""FalkorDB error messages -> the Neo4j status code Neo4j reports for the same mistake.

Drivers and tools branch on the code's classification (a ClientError is the caller's to fix
and never retried; a TransientError is retried; a DatabaseError is the server's fault), so
every family of FalkorDB message (its `error_msgs.h`, plus the parser's `errMsg:` form) gets
the code Neo4j 5 uses. Rules are tried in order; the first whose pattern matches the start of
the message wins, and its `message` (given the match) is what the client reads. An unknown
message stays a `Neo.DatabaseError.General.UnknownError` carrying FalkorDB's text, which the
fuzz suite counts as a gap in this table.

Each family is exercised by one real query in tests/integration/test_falkordb_errors.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from core.errors import CypherError, database_error

SYNTAX = "Neo.ClientError.Statement.SyntaxError"
SEMANTIC = "Neo.ClientError.Statement.SemanticError"
TYPE = "Neo.ClientError.Statement.TypeError"
ARGUMENT = "Neo.ClientError.Statement.ArgumentError"
ARITHMETIC = "Neo.ClientError.Statement.ArithmeticError"
ENTITY_NOT_FOUND = "Neo.ClientError.Statement.EntityNotFound"
EXTERNAL = "Neo.ClientError.Statement.ExternalResourceFailed"
UNSUPPORTED = "Neo.ClientError.Statement.UnsupportedOperationError"
PARAMETER_MISSING = "Neo.ClientError.Statement.ParameterMissing"
#: Errors a statement gets before it runs (so before it can have written anything).
COMPILE_TIME = frozenset((SYNTAX, SEMANTIC, PARAMETER_MISSING))
ACCESS_MODE = "Neo.ClientError.Statement.AccessMode"
PROCEDURE_NOT_FOUND = "Neo.ClientError.Procedure.ProcedureNotFound"
PROCEDURE_FAILED = "Neo.ClientError.Procedure.ProcedureCallFailed"
CONSTRAINT_FAILED = "Neo.ClientError.Schema.ConstraintValidationFailed"
SCHEMA_EXISTS = "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists"
INDEX_NOT_FOUND = "Neo.ClientError.Schema.IndexNotFound"
CONSTRAINT_INDEX = "Neo.ClientError.Schema.ForbiddenOnConstraintIndex"
TIMED_OUT = "Neo.ClientError.Transaction.TransactionTimedOut"
OUT_OF_MEMORY = "Neo.ClientError.General.TransactionOutOfMemoryError"
BUSY = "Neo.TransientError.Request.NoThreadsAvailable"

#: Longest literal quoted back (FalkorDB's messages echo whole literals, e.g. 100,000 digits).
MAX_QUOTED = 200
#: Longest FalkorDB message passed on whole.
MAX_MESSAGE = 4_000


@dataclass(frozen=True, slots=True)
class Rule:
    pattern: re.Pattern
    code: str
    message: Callable[[re.Match], str] | None = None     # None: FalkorDB's own text


def _rule(pattern: str, code: str, message: Callable[[re.Match], str] | None = None) -> Rule:
    return Rule(re.compile(pattern, re.S), code, message)


def _quoted(text: str, limit: int = MAX_QUOTED) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text):,} characters)"


def _tidy_syntax(match: re.Match) -> str:
    """`errMsg: X line: 1, column: 9, offset: 8 errCtx: Q errCtxOffset: 8` -> Neo4j's layout:
    the message with its position, then the offending line and a caret under the column."""
    msg, line, column, offset, ctx, ctx_offset = match.groups()
    if len(ctx) > MAX_QUOTED:                # keep the caret's neighbourhood only
        start = max(0, int(ctx_offset) - MAX_QUOTED // 2)
        ctx, ctx_offset = ctx[start:start + MAX_QUOTED], str(int(ctx_offset) - start)
    return (f"{msg} (line {line}, column {column} (offset: {offset}))\n"
            f"\"{ctx}\"\n{' ' * (int(ctx_offset) + 1)}^")


#: FalkorDB message families, most specific first. Messages follow Neo4j's wording where Neo4j
#: has one for the same mistake.
RULES: tuple[Rule, ...] = (
    # -- the parser and the AST checks: SyntaxError, as Neo4j reports them at compile time
    _rule(r"errMsg: (.*?) line: (\d+), column: (\d+), offset: (\d+) errCtx: (.*) errCtxOffset: (\d+)$",
          SYNTAX, _tidy_syntax),
    _rule(r"Invalid input - '(.*)' is not a valid argument(.*)", ARGUMENT,
          lambda m: f"Invalid input '{m[1]}' is not a valid argument{m[2]}"),
    _rule(r"Invalid input", SYNTAX),
    _rule(r"'(.*)' not defined$", SYNTAX, lambda m: f"Variable `{m[1]}` not defined"),
    _rule(r"_AR_EXP_UpdateEntityIdx: .* alias (\S+)", SYNTAX,
          lambda m: f"Variable `{m[1]}` not defined here (it is used in its own definition, or "
                    "outside the scope that defines it)"),
    _rule(r"Attempted to access variable before it has been defined", SYNTAX,
          lambda m: "A variable is used before it is defined"),
    _rule(r"undefined function: '(.*)'", SYNTAX,
          lambda m: f"Unknown function '{m[1]}' (this function is not available in FalkorDB)"),
    _rule(r"Unknown function '(.*)'", SYNTAX,
          lambda m: f"Unknown function '{m[1]}' (this function is not available in FalkorDB)"),
    _rule(r"Integer overflow '(.*)'", SYNTAX, lambda m: f"integer is too large: {_quoted(m[1])}"),
    _rule(r"Float overflow '(.*)'", SYNTAX,
          lambda m: f"floating point number is too large: {_quoted(m[1])}"),
    _rule(r"Invalid numeric value '(.*)'", SYNTAX, lambda m: f"invalid literal number: {_quoted(m[1])}"),
    _rule(r"Unexpected clause following RETURN", SYNTAX,
          lambda m: "RETURN can only be used at the end of the query (FalkorDB: Unexpected clause "
                    "following RETURN)"),
    _rule(r"Error: query with more than one statement", SYNTAX,
          lambda m: "Expected exactly one statement per query but got more: send the statements "
                    "one at a time (in one transaction if they belong together)."),
    _rule(r"Error: (?:empty query|could not parse query)", SYNTAX),
    _rule(r"Error: (?:Only updating clauses may reside in FOREACH|Multiple result columns with the "
          r"same name)", SYNTAX, lambda m: m.string[len("Error: "):]),
    _rule(r"(?:Query cannot (?:conclude|begin) with|A WITH clause is required|Variable `.*` already "
          r"declared|The bound .* can't be redeclared|WITH clause projections must be aliased|"
          r"Expression in CALL must be aliased|Alias for RETURN|RETURN \* is not allowed|"
          r"All sub queries in a UNION|Invalid combination of UNION|Found \d+ UNION clauses|"
          r"Can't use aggregate functions inside|Invalid use of aggregating function|"
          r"COUNT is the only function|Cannot specify both DISTINCT|Received \d+ arguments|"
          r"Procedure `.*` (?:requires|does not yield)|Variable length relationships cannot|"
          r"Variable length path|Only directed relationships|Exactly one relationship type|"
          r"The alias '.*' was specified for both|Cannot use the same relationship variable|"
          r"WITH imports in CALL|'.*' function requires a WHERE predicate|Invalid usage of 'NOT'|"
          r"shortestPath (?:requires|does not support)|allShortestPaths\(\.\.\.\) does not|"
          r"A shortestPath requires|Node filters may not|No eval expression given|"
          r"Invalid constraint command|Expected boolean predicate|Filter predicate did not|"
          r"Empty filter condition|ORDER BY cannot reference variables|failed to map aggregation "
          r"expression within ORDER BY)", SYNTAX),
    # -- valid Cypher FalkorDB does not implement
    _rule(r"(?:FalkorDB (?:does not currently support|currently only supports|support )|"
          r"Unable to resolve filtered alias|Encountered unsupported query type|Source and "
          r"destination must already be resolved|"
          r"Please use GRAPH\.|.* is not supported$)", UNSUPPORTED,
          lambda m: f"{m.string} (a limit of the embedded FalkorDB; Neo4j accepts this query)"),
    _rule(r"Cannot merge node using null property value", SEMANTIC,
          lambda m: "Cannot merge the node because of a null property value (MERGE needs every "
                    "property in its pattern to have a value)"),
    # -- values of the wrong type or out of range
    _rule(r"Type mismatch: expected .* but was Vectorf32", UNSUPPORTED,
          lambda m: f"{m.string}: a vector stored by db.create.setNodeVectorProperty (FalkorDB's vecf32) has "
                    "no size() or elements on the embedded database; compare it with "
                    "vector.similarity.cosine/euclidean, or keep its length in a property of its own "
                    "(a limit of the embedded FalkorDB; Neo4j accepts this query)"),
    _rule(r"(?:Type mismatch|Failed to parse|Property values can only be of primitive types|"
          r"Delete type mismatch|DELETE can only be called on|REMOVE operates on|"
          r"Cannot merge a map with a non-map value|vectorf\d+ expects|Encountered unhandled type|"
          r"Update error: alias '.*' did not resolve to a graph entity)", TYPE),
    _rule(r"encountered unexpected type (?:in Record; expected (\w+)|when trying to retrieve graph "
          r"entity)", TYPE, lambda m: f"Type mismatch: expected {m[1] or 'a node or relationship'} "
                                      f"(FalkorDB: {m.string})"),
    _rule(r"ArgumentError: (.*)", ARGUMENT, lambda m: m[1]),
    _rule(r"(?:.* must be a non-negative integer|"
          r"(?:LIMIT|SKIP) specified value of invalid type|.* operates only on non-negative|"
          r"Invalid regex|Vector dimension mismatch|Did not find '.*' value in point map|"
          r"Maximum number of hops must be|sourceNode|relDirection values|Invalid arguments for "
          r"function|Invalid value|Invalid Date|Invalid UTF-?8 string|String overflow|"
          r"datetime components map contains|unknown (?:date|datetime|duration|time) component|"
          r"[\w/]+ cannot be specified with|(?:year|hour) must be specified|(?:latitude|longitude) "
          r"should be within|'latitude' and 'longitude' values|A point map should have|"
          r"map expects even number|Invalid vector index configuration|Index configuration error|"
          r"invlaid index configuration|Can not override index configuration|"
          r".* must be .*|.* is missing$)", ARGUMENT),
    _rule(r"(?:BigInt )?[Dd]ivision by zero", ARITHMETIC, lambda m: "/ by zero"),
    _rule(r"Missing parameters|Duplicated parameter", PARAMETER_MISSING,
          lambda m: f"Expected parameter(s) that were not supplied (FalkorDB: {m.string})"),
    _rule(r".*executed only on read-only queries", ACCESS_MODE,
          lambda m: "Writing in read access mode not allowed."),
    # -- procedures
    _rule(r"Procedure `(.*)` is not registered", PROCEDURE_NOT_FOUND,
          lambda m: f"There is no procedure with the name `{m[1]}` registered for this database "
                    "instance. Please ensure you've spelled the procedure name correctly and that "
                    "the procedure is properly deployed."),
    _rule(r"Invalid arguments for procedure|Invalid number of arguments for|Minimum number of "
          r"arguments is|Label argument can be|Field argument must be|RediSearch: |"
          r"(?:betweenness|labelPropagation|msf|wcc) configuration|invalid (?:argument to algo|"
          r"(?:betweenness|labelPropagation|msf|wcc) configuration)|algo\.\w+ expects",
          PROCEDURE_FAILED),
    # -- LOAD CSV
    _rule(r"(?:CSV |csv reader error|Error opening CSV URI|URI to CSV must be|Unsupported URI|"
          r"Failed reading CSV header|Error downloading file)", EXTERNAL),
    _rule(r"Failed to create relationship; endpoint was not found", ENTITY_NOT_FOUND,
          lambda m: "Failed to create the relationship: one of its nodes was deleted in this query."),
    # -- schema
    # Neo4j's "Node(<id>) already exists with label `X` and property `p` = <value>" is what
    # OGMs (neomodel's UniqueProperty) recognise; FalkorDB names neither the node nor the value.
    _rule(r"unique constraint violation on node of type (.*)", CONSTRAINT_FAILED,
          lambda m: f"Node already exists with label `{m[1].strip()}` and the same value of a property "
                    "its unique constraint covers (the embedded FalkorDB does not say which node or value)."),
    _rule(r"(?:mandatory|unique) constraint violation", CONSTRAINT_FAILED,
          lambda m: f"{m.string[0].upper()}{m.string[1:]} (a constraint of this database refuses "
                    "the write)."),
    _rule(r"(?:Attribute '.*' is already indexed|Index already exists|Constraint already exists)",
          SCHEMA_EXISTS),
    _rule(r"(?:ERR )?Unable to drop index(.*)", INDEX_NOT_FOUND,
          lambda m: f"Unable to drop index{m[1]}"),
    _rule(r"Index supports constraint", CONSTRAINT_INDEX,
          lambda m: "Unable to drop the index: a constraint uses it (drop the constraint first)."),
    # -- resources
    _rule(r"Query timed out", TIMED_OUT,
          lambda m: f"The transaction has been terminated: the query exceeded its timeout ({m.string})."),
    _rule(r"Query's mem consumption exceeded capacity", OUT_OF_MEMORY,
          lambda m: "The query used more memory than the embedded FalkorDB allows one query "
                    "(QUERY_MEM_CAPACITY, 1 GiB). Add a LIMIT, or aggregate in the query."),
    _rule(r"Max pending queries exceeded|Write queue is full", BUSY,
          lambda m: "The embedded FalkorDB is busy (too many queries waiting); retry shortly."),
)


def error_from_reply(message: str) -> CypherError:
    """A FalkorDB error message -> the `CypherError` Neo4j would report for the same problem."""
    text = message.strip()
    for rule in RULES:
        match = rule.pattern.match(text)
        if match:
            return CypherError(rule.code, rule.message(match) if rule.message else _quoted(text, MAX_MESSAGE))
    return database_error(_quoted(text, MAX_MESSAGE))
