"""Failed logins: logged (never the password) and rate limited per source address.

Neo4j's brute-force protection (which counts per user), counted per user *and* client address:
after `max_failed_attempts` failed logins in a row for a user from an address, every login for
that user from it fails with `Neo.ClientError.Security.AuthenticationRateLimit` for `lock_time`
seconds without the credentials being checked, while the same user elsewhere (or another user
behind the same NAT) is not locked out. Neo4j's defaults: `dbms.security.auth_max_failed_attempts=3`,
`dbms.security.auth_lock_time=5s`; 0 attempts turns the lockout off (failures are still logged).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from core.errors import CypherError

log = logging.getLogger("proxy.logins")

#: (source, user) pairs remembered at most; past it, those not locked any more are forgotten.
_MAX_SOURCES = 10_000


@dataclass(slots=True)
class _Failures:
    count: int = 0
    last: float = 0.0


class LoginGuard:
    """Counts failed logins per (source, user) and refuses them while that pair is locked."""

    def __init__(self, max_failed_attempts: int = 3, lock_time: float = 5.0):
        self.max_failed_attempts = max_failed_attempts
        self.lock_time = lock_time
        self._failures: dict[tuple[str | None, str], _Failures] = {}

    def check(self, source: str | None, user: str) -> None:
        """Raise AuthenticationRateLimit if `user` from `source` is locked out right now."""
        failures = self._failures.get((source, user))
        if (failures and self.max_failed_attempts and failures.count >= self.max_failed_attempts
                and time.monotonic() - failures.last < self.lock_time):
            log.warning("login for user %r from %s refused: locked for %g s after %d failed attempts",
                        user, source, self.lock_time, failures.count)
            raise CypherError("Neo.ClientError.Security.AuthenticationRateLimit",
                              "The client has provided incorrect authentication details too many "
                              f"times in a row; wait {self.lock_time:g} s before trying again.")

    def failed(self, source: str | None, user: str) -> None:
        failures = self._failures.setdefault((source, user), _Failures())
        failures.count += 1
        failures.last = time.monotonic()
        log.warning("login failed for user %r from %s (%d in a row)", user, source, failures.count)
        if len(self._failures) > _MAX_SOURCES:
            self._forget_unlocked()

    def succeeded(self, source: str | None, user: str) -> None:
        self._failures.pop((source, user), None)

    def _forget_unlocked(self) -> None:
        now = time.monotonic()
        self._failures = {key: f for key, f in self._failures.items() if now - f.last < self.lock_time}
