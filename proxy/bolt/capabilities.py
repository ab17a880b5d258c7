"""What the negotiated Bolt version can say, named once per connection instead of comparing
version tuples where the difference shows (the neo4j driver's `supports_*` attributes are the
model). Each capability is the version that brought it; `Capabilities.of(version)` derives them.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Capability -> the Bolt version that introduced it.
SINCE = {
    "logon": (5, 1),             # auth travels in LOGON/LOGOFF, not HELLO (AUTHENTICATION state)
    "telemetry": (5, 4),         # the TELEMETRY message
    "gql_statuses": (5, 6),      # a stream's end carries GQL `statuses`, not `notifications`
    "gql_errors": (5, 7),        # FAILURE carries GQLSTATUS, its description and a diagnostic record
    "protocol_version": (5, 7),  # HELLO SUCCESS names the version (the manifest handshake)
    "db_in_success": (5, 8),     # RUN and BEGIN SUCCESS name the database they ran on
}


@dataclass(frozen=True, slots=True)
class Capabilities:
    version: tuple[int, int]
    logon: bool
    telemetry: bool
    gql_statuses: bool
    gql_errors: bool
    protocol_version: bool
    db_in_success: bool
    #: Bolt 4.4 only: a client may ask for the `utc` patch (5.0+ always sends UTC datetimes).
    utc_patch: bool

    @classmethod
    def of(cls, version: tuple[int, int]) -> Capabilities:
        return cls(version, **{name: version >= since for name, since in SINCE.items()},
                   utc_patch=version == (4, 4))
