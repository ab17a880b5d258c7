"""A `CypherError` as Bolt FAILURE metadata: the wire's shape of the error, per Bolt version.

Bolt before 5.7 sends only the Neo4j code and message; 5.7 added the GQL fields (GQLSTATUS,
its description, the diagnostic record). The error itself (`core/errors.py`) knows nothing
of either shape.
"""

from __future__ import annotations

from core.errors import CypherError
from proxy.bolt.capabilities import Capabilities

_GQL_CLASSIFICATION = {"ClientError": "CLIENT_ERROR", "TransientError": "TRANSIENT_ERROR",
                       "DatabaseError": "DATABASE_ERROR"}


def failure_metadata(error: CypherError, capabilities: Capabilities) -> dict:
    """FAILURE metadata in the shape the negotiated Bolt version expects."""
    if not capabilities.gql_errors:
        return {"code": error.code, "message": error.message}
    return {
        "neo4j_code": error.code,
        "message": error.message,
        "gql_status": error.gql_status,
        "description": f"{error.description}. {error.message}",
        "diagnostic_record": {
            "OPERATION": "", "OPERATION_CODE": "0", "CURRENT_SCHEMA": "/",
            "_classification": _GQL_CLASSIFICATION.get(error.classification, "CLIENT_ERROR"),
        },
    }
