"""The FalkorDB message -> Neo4j code table (`proxy.backends.falkordb.errors`), message by message.

The same families are produced by real queries in tests/integration/test_falkordb_errors.py.
"""

import re
from pathlib import Path

import pytest

from proxy.backends.falkordb.errors import MAX_MESSAGE, MAX_QUOTED, RULES, error_from_reply


@pytest.mark.parametrize("message, code", [
    ("errMsg: Invalid input at end of input: expected NOT line: 1, column: 11, offset: 10 "
     "errCtx: RETURN 1 + errCtxOffset: 10", "Neo.ClientError.Statement.SyntaxError"),
    ("Unknown function 'foo'", "Neo.ClientError.Statement.SyntaxError"),
    ("Integer overflow '99999999999999999999'", "Neo.ClientError.Statement.SyntaxError"),
    ("Unexpected clause following RETURN", "Neo.ClientError.Statement.SyntaxError"),
    ("Error: query with more than one statement is not supported.", "Neo.ClientError.Statement.SyntaxError"),
    ("Missing parameters", "Neo.ClientError.Statement.ParameterMissing"),
    ("Type mismatch: expected Integer, Float, or Null but was String", "Neo.ClientError.Statement.TypeError"),
    ("Type mismatch: expected List, String, or Null but was Vectorf32",
     "Neo.ClientError.Statement.UnsupportedOperationError"),
    ("ArgumentError: step argument to range() can't be 0", "Neo.ClientError.Statement.ArgumentError"),
    ("Division by zero", "Neo.ClientError.Statement.ArithmeticError"),
    ("Procedure `foo.bar` is not registered", "Neo.ClientError.Procedure.ProcedureNotFound"),
    ("FalkorDB does not currently support =~", "Neo.ClientError.Statement.UnsupportedOperationError"),
    ("unique constraint violation on node of type Person", "Neo.ClientError.Schema.ConstraintValidationFailed"),
    ("mandatory constraint violation: node with label P missing property a",
     "Neo.ClientError.Schema.ConstraintValidationFailed"),
    ("Query timed out", "Neo.ClientError.Transaction.TransactionTimedOut"),
    ("graph.RO_QUERY is to be executed only on read-only queries", "Neo.ClientError.Statement.AccessMode"),
    ("Query's mem consumption exceeded capacity", "Neo.ClientError.General.TransactionOutOfMemoryError"),
    ("Something FalkorDB never said before", "Neo.DatabaseError.General.UnknownError"),
])
def test_error_codes(message, code):
    assert error_from_reply(message).code == code


def test_syntax_error_keeps_position_and_points_at_it():
    error = error_from_reply("errMsg: Invalid input 'x': expected a clause line: 1, column: 8, offset: 7 "
                             "errCtx: RETURN x( errCtxOffset: 7")
    assert "line 1, column 8 (offset: 7)" in error.message
    assert error.message.endswith('"RETURN x("\n' + " " * 8 + "^")
    assert "foo" in error_from_reply("Unknown function 'foo'").message
    assert "with the name `apoc.x` registered" in error_from_reply("Procedure `apoc.x` is not registered").message


def test_a_long_context_keeps_the_caret_under_the_offending_character():
    line = "RETURN " + "1 + " * 5_000 + "x("
    offset = len(line) - 1
    error = error_from_reply(f"errMsg: Invalid input '(' line: 1, column: {offset + 1}, offset: {offset} "
                             f"errCtx: {line} errCtxOffset: {offset}")
    shown, caret = error.message.split("\n")[1:]
    assert len(shown) <= MAX_QUOTED + 2
    assert shown[caret.index("^")] == "("


def test_echoed_literals_and_unknown_messages_are_cut_short():
    digits = "9" * 100_000
    error = error_from_reply(f"Integer overflow '{digits}'")
    assert error.message.startswith("integer is too large: 999") and len(error.message) < MAX_QUOTED + 100
    assert len(error_from_reply("x" * 100_000).message) < MAX_MESSAGE + 100


def test_every_rule_is_a_client_or_transient_error():
    assert all(rule.code.startswith(("Neo.ClientError.", "Neo.TransientError.")) for rule in RULES)


FALKORDB_MESSAGES = Path(__file__).with_name("data") / "falkordb_client_errors.txt"


def _filled(template: str) -> str:
    """A FalkorDB format string with sample values in its placeholders."""
    return re.sub(r"%(?:\.\*s|zu|u|d|f|s)", lambda m: {"%f": "2.000000", "%d": "1", "%u": "1", "%zu": "1"}
                  .get(m.group(), "x"), template).replace("\\n", "")


def test_every_client_mistake_falkordb_reports_gets_a_neo4j_client_code():
    templates = [line for line in FALKORDB_MESSAGES.read_text().splitlines() if line and not line.startswith("#")]
    assert len(templates) > 150
    unmapped = [t for t in templates if error_from_reply(_filled(t)).code.startswith("Neo.DatabaseError")]
    assert not unmapped
