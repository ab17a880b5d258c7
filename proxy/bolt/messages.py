"""Bolt message signatures and the metadata the server reads from and writes into them.

Requests are decoded into `(signature, fields)` by PackStream; this module checks
their shape and turns their `extra` dictionaries into `TxConfig`s, and builds the
SUCCESS metadata each negotiated version expects (what the drivers actually read).
"""

from __future__ import annotations

from typing import Any

from core.backend import Summary, TxConfig
from core.errors import protocol_error
from proxy.bolt.capabilities import Capabilities

# Requests
HELLO, GOODBYE, RESET = 0x01, 0x02, 0x0F
RUN, BEGIN, COMMIT, ROLLBACK = 0x10, 0x11, 0x12, 0x13
DISCARD, PULL = 0x2F, 0x3F
TELEMETRY, ROUTE, LOGON, LOGOFF = 0x54, 0x66, 0x6A, 0x6B
# Responses
SUCCESS, RECORD, IGNORED, FAILURE = 0x70, 0x71, 0x7E, 0x7F

NAMES = {
    HELLO: "HELLO", GOODBYE: "GOODBYE", RESET: "RESET", RUN: "RUN", BEGIN: "BEGIN",
    COMMIT: "COMMIT", ROLLBACK: "ROLLBACK", DISCARD: "DISCARD", PULL: "PULL",
    TELEMETRY: "TELEMETRY", ROUTE: "ROUTE", LOGON: "LOGON", LOGOFF: "LOGOFF",
}

#: Field types per request, checked before the state machine acts on them.
_SHAPES: dict[int, tuple[type | tuple[type, ...], ...]] = {
    HELLO: (dict,), GOODBYE: (), RESET: (), RUN: (str, dict, dict), BEGIN: (dict,),
    COMMIT: (), ROLLBACK: (), DISCARD: (dict,), PULL: (dict,), TELEMETRY: (int,),
    ROUTE: (dict, list, (dict, str, type(None))), LOGON: (dict,), LOGOFF: (),
}

AUTH_KEYS = ("scheme", "principal", "credentials", "realm", "parameters")
SERVER_AGENT = "Neo4j/5.26.0"


def name(signature: int) -> str:
    return NAMES.get(signature, f"0x{signature:02X}")


def check_fields(signature: int, fields: list[Any]) -> None:
    """Raise Request.Invalid if a request's fields do not have the documented types."""
    shape = _SHAPES[signature]
    if len(fields) != len(shape) or not all(isinstance(f, t) for f, t in zip(fields, shape)):
        raise protocol_error(f"{name(signature)} expects fields "
                             f"({', '.join(_type_name(t) for t in shape)}), got {fields!r:.200}")


def _type_name(t: type | tuple[type, ...]) -> str:
    return "|".join(x.__name__ for x in t) if isinstance(t, tuple) else t.__name__


def auth_token(extra: dict[str, Any]) -> dict[str, Any]:
    """The authentication part of a HELLO (≤ 5.0) or LOGON dictionary."""
    token = {k: extra[k] for k in AUTH_KEYS if k in extra}
    token.setdefault("scheme", "none")
    return token


#: Notification filter keys of HELLO, BEGIN and RUN (5.2+; `categories` became `classifications` in 5.5).
NOTIFICATION_KEYS = ("notifications_minimum_severity", "notifications_disabled_categories",
                     "notifications_disabled_classifications")


def notification_filters(extra: dict[str, Any]) -> dict[str, Any] | None:
    """The notification filters a HELLO, BEGIN or RUN asks for, if any."""
    return {key: extra[key] for key in NOTIFICATION_KEYS if key in extra} or None


def tx_config(extra: dict[str, Any], *, notifications: dict[str, Any] | None = None,
              encoding: str | None = None) -> TxConfig:
    """RUN/BEGIN `extra` -> TxConfig (tx_timeout is milliseconds on the wire); `notifications`:
    the connection's filters (HELLO's), used unless the transaction asks for its own."""
    timeout = extra.get("tx_timeout")
    metadata = extra.get("tx_metadata")
    mode = extra.get("mode") or "w"
    if mode not in ("r", "w"):
        raise protocol_error(f"mode must be 'r' or 'w', got {mode!r}")
    if timeout is not None and not isinstance(timeout, int):
        raise protocol_error(f"tx_timeout must be an integer of milliseconds, got {timeout!r}")
    return TxConfig(
        database=extra.get("db") or None,
        bookmarks=tuple(extra.get("bookmarks") or ()),
        mode=mode,
        timeout=None if timeout is None else timeout / 1000,
        metadata=dict(metadata) if metadata else None,
        imp_user=extra.get("imp_user") or None,
        notifications=notification_filters(extra) or notifications,
        encoding=encoding,
    )


def pull_args(extra: dict[str, Any]) -> tuple[int, int]:
    """PULL/DISCARD `{n, qid}`: n = -1 means all, qid = -1 (or absent) the last query."""
    n, qid = extra.get("n"), extra.get("qid", -1)
    if not isinstance(n, int) or not (n > 0 or n == -1):
        raise protocol_error(f"n must be a positive integer or -1, got {n!r}")
    if not isinstance(qid, int):
        raise protocol_error(f"qid must be an integer, got {qid!r}")
    return n, qid


def route_database(extra: dict | str | None) -> tuple[str | None, str | None]:
    """ROUTE's third field: `{db, imp_user}` from 4.4 on (a plain db name before)."""
    if isinstance(extra, dict):
        return extra.get("db") or None, extra.get("imp_user") or None
    return extra or None, None


def routing_table(database: str, address: str, ttl: int = 300) -> dict[str, Any]:
    """A one-server routing table: this proxy routes, reads and writes."""
    return {"rt": {"ttl": ttl, "db": database, "servers": [
        {"addresses": [address], "role": role} for role in ("ROUTE", "READ", "WRITE")]}}


def hello_metadata(capabilities: Capabilities, connection_id: str, *, manifest: bool,
                   patches: list[str]) -> dict[str, Any]:
    """HELLO SUCCESS. No `recv_timeout` hint: it would oblige us to send NOOPs."""
    meta: dict[str, Any] = {"server": SERVER_AGENT, "connection_id": connection_id, "hints": {}}
    if patches:
        meta["patch_bolt"] = patches
    if manifest and capabilities.protocol_version:
        major, minor = capabilities.version
        meta["protocol_version"] = f"{major}.{minor}"
    return meta


_COMPLETION = {
    "00000": "note: successful completion",
    "00001": "note: successful completion - omitted result",
    "02000": "note: no data",
}


def _completion_status(has_fields: bool, had_records: bool) -> dict[str, Any]:
    code = "00001" if not has_fields else "00000" if had_records else "02000"
    return {"gql_status": code, "status_description": _COMPLETION[code],
            "diagnostic_record": {"OPERATION": "", "OPERATION_CODE": "0", "CURRENT_SCHEMA": "/"}}


#: What a notification carries up to Bolt 5.4 (5.6+ carries it inside a GQL status).
_NOTIFICATION_KEYS = ("code", "title", "description", "severity", "category", "position")


def _notification_status(note: dict[str, Any]) -> dict[str, Any]:
    """A notification as a 5.6+ GQL status object (drivers rebuild `notifications` from these)."""
    severity = str(note.get("severity", "INFORMATION")).upper()
    status = {
        "gql_status": note.get("gql_status") or ("01N00" if severity == "WARNING" else "03N00"),
        "status_description": note.get("status_description") or note.get("description", ""),
        "neo4j_code": note.get("code", ""),
        "title": note.get("title", ""),
        "description": note.get("description", ""),
        "diagnostic_record": {"OPERATION": "", "OPERATION_CODE": "0", "CURRENT_SCHEMA": "/",
                              "_severity": severity,
                              "_classification": note.get("category", "GENERIC")},
    }
    if "position" in note:
        status["diagnostic_record"]["_position"] = note["position"]
    return status


def stream_end_metadata(capabilities: Capabilities, summary: Summary, *, in_tx: bool,
                        has_fields: bool, had_records: bool, t_last: int) -> dict[str, Any]:
    """The final PULL/DISCARD SUCCESS of a result."""
    meta: dict[str, Any] = {"type": summary.query_type, "t_last": t_last, "db": summary.database}
    if summary.bookmark and not in_tx:
        meta["bookmark"] = summary.bookmark
    stats = {k: v for k, v in summary.stats.items() if v}
    if stats:
        if summary.contains_updates:
            stats["contains-updates"] = True
        if stats.get("system-updates"):
            stats["contains-system-updates"] = True
        meta["stats"] = stats
    if summary.plan is not None:
        meta["plan"] = summary.plan
    if summary.profile is not None:
        meta["profile"] = summary.profile
    if capabilities.gql_statuses:
        meta["statuses"] = [_completion_status(has_fields, had_records),
                            *map(_notification_status, summary.notifications)]
    elif summary.notifications:
        meta["notifications"] = [{k: note[k] for k in _NOTIFICATION_KEYS if k in note}
                                 for note in summary.notifications]
    return meta
