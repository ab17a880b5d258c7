"""Neo4j-style errors: one exception type carrying a status code and its GQLSTATUS.

Every error a client sees goes through `CypherError`, so the Bolt and HTTP front ends
report the same code and message for the same problem; each wire shapes it
(`proxy/bolt/failures.py`: FAILURE metadata per Bolt version).
"""

from __future__ import annotations

# Neo4j status code -> (GQLSTATUS, GQL status description), for Bolt 5.7+ FAILUREs.
_GQL_STATUS = {
    "Neo.ClientError.Statement.SyntaxError": ("42001", "error: syntax error or access rule violation - invalid syntax"),
    "Neo.ClientError.Statement.ArgumentError": ("22N00", "error: data exception - invalid argument"),
    "Neo.ClientError.Statement.TypeError": ("22G03", "error: data exception - invalid value type"),
    "Neo.ClientError.Statement.SemanticError": ("42N00", "error: syntax error or access rule violation - semantic error"),
    "Neo.ClientError.Statement.ParameterMissing": ("42N51", "error: syntax error or access rule violation - invalid parameter"),
    "Neo.ClientError.Statement.EntityNotFound": ("22N00", "error: data exception - invalid argument"),
    "Neo.ClientError.Statement.ArithmeticError": ("22012", "error: data exception - division by zero"),
    "Neo.ClientError.Statement.UnsupportedOperationError": ("0A000", "error: feature not supported"),
    "Neo.ClientError.General.TransactionOutOfMemoryError": ("51N73", "error: system configuration or operation exception - transaction memory limit reached"),
    "Neo.ClientError.Procedure.ProcedureNotFound": ("42N08", "error: syntax error or access rule violation - no such procedure"),
    "Neo.ClientError.Security.Unauthorized": ("42NFF", "error: syntax error or access rule violation - permission/access denied"),
    "Neo.ClientError.Security.AuthenticationRateLimit": ("42NFF", "error: syntax error or access rule violation - permission/access denied"),
    "Neo.ClientError.Database.DatabaseNotFound": ("22N51", "error: data exception - graph reference not found"),
    "Neo.ClientError.Request.Invalid": ("08N06", "error: connection exception - protocol error"),
    "Neo.ClientError.Transaction.TransactionTimedOut": ("25N05", "error: invalid transaction state - transaction timed out"),
    "Neo.ClientError.Transaction.TransactionNotFound": ("25N04", "error: invalid transaction state - transaction not found"),
    "Neo.ClientError.Transaction.LockClientStopped": ("25N14", "error: invalid transaction state - transaction termination client error"),
    "Neo.ClientError.Transaction.InvalidBookmark": ("08N12", "error: connection exception - failed to parse bookmark"),
}
_GENERAL = ("50N42", "error: general processing exception - unexpected error")


class CypherError(Exception):
    """An error reported to the client as a Neo4j FAILURE (Bolt) or an `errors` entry (HTTP)."""

    def __init__(self, code: str, message: str, *, gql_status: str | None = None,
                 description: str | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        default_status, default_description = _GQL_STATUS.get(code, _GENERAL)
        self.gql_status = gql_status or default_status
        self.description = description or default_description

    @property
    def classification(self) -> str:
        """`ClientError`, `TransientError` or `DatabaseError`: the second part of the code."""
        parts = self.code.split(".")
        return parts[1] if len(parts) > 1 else "DatabaseError"

    def __repr__(self) -> str:
        return f"CypherError({self.code!r}, {self.message!r})"


class DatabaseLost(CypherError):
    """The connection to the database broke while a client's work was on it (mid-stream,
    mid-transaction). The Bolt front end closes the client's connection without an answer, so
    its driver raises ServiceUnavailable / SessionExpired as it would if Neo4j itself went away;
    the HTTP API reports it as the transient error it carries."""


def syntax_error(message: str) -> CypherError:
    return CypherError("Neo.ClientError.Statement.SyntaxError", message)


def argument_error(message: str) -> CypherError:
    return CypherError("Neo.ClientError.Statement.ArgumentError", message)


def unauthorized(message: str = "The client is unauthorized due to authentication failure.") -> CypherError:
    return CypherError("Neo.ClientError.Security.Unauthorized", message)


def protocol_error(message: str) -> CypherError:
    return CypherError("Neo.ClientError.Request.Invalid", message)


def unavailable(message: str) -> CypherError:
    """The database cannot serve right now (restarting, lost): a TransientError, so drivers retry."""
    return CypherError("Neo.TransientError.General.DatabaseUnavailable", message)


def database_error(message: str) -> CypherError:
    return CypherError("Neo.DatabaseError.General.UnknownError", message)
