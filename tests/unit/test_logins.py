"""Failed-login lockout per (address, user): `proxy.logins.LoginGuard`."""

from __future__ import annotations

import logging
import time


from core.errors import CypherError
from proxy.logins import LoginGuard

RATE_LIMIT = "Neo.ClientError.Security.AuthenticationRateLimit"


def _locked(guard: LoginGuard, source: str, user: str = "neo4j") -> bool:
    try:
        guard.check(source, user)
    except CypherError as exc:
        assert exc.code == RATE_LIMIT
        return True
    return False


def test_locked_after_the_failures_then_free_after_the_lock_time():
    guard = LoginGuard(max_failed_attempts=3, lock_time=0.2)
    for _ in range(2):
        guard.failed("10.0.0.1", "neo4j")
    assert not _locked(guard, "10.0.0.1")
    guard.failed("10.0.0.1", "neo4j")
    assert _locked(guard, "10.0.0.1")
    assert not _locked(guard, "10.0.0.2") and not _locked(guard, "10.0.0.1", "alice")
    time.sleep(0.25)
    assert not _locked(guard, "10.0.0.1")
    guard.failed("10.0.0.1", "neo4j")                 # still failing in a row: locked again
    assert _locked(guard, "10.0.0.1")


def test_a_success_resets_and_zero_attempts_turns_the_lock_off():
    guard = LoginGuard(max_failed_attempts=2, lock_time=60)
    guard.failed("a", "neo4j")
    guard.succeeded("a", "neo4j")
    guard.failed("a", "neo4j")
    assert not _locked(guard, "a")
    off = LoginGuard(max_failed_attempts=0)
    for _ in range(10):
        off.failed("a", "neo4j")
    assert not _locked(off, "a")


def test_failures_are_logged_with_user_and_address(caplog):
    with caplog.at_level(logging.WARNING, logger="proxy.logins"):
        LoginGuard().failed("192.0.2.7", "mallory")
    assert "'mallory' from 192.0.2.7 (1 in a row)" in caplog.text
