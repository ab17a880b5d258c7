"""Which of the pair's two servers is the primary, and where tools find it.

The roles journal (`roles`) is the one file that decides, after any crash, which server holds
the committed state (falkordb/recovery.py has the rule). It lives apart from the pair because
tools that talk to the embedded database directly (benchmarks, tests, the conformance suite's
differential checks) need it and the servers' password without starting a pair.
"""

from __future__ import annotations

import logging
import os
import secrets
import shutil
from pathlib import Path

log = logging.getLogger("proxy.falkordb")

NAMES = ("a", "b")


class RolesJournal:
    """`roles`: which server is the primary and whether the replica is held, as one fixed-size
    line (`a free`, `b held`, ...) overwritten in place with a single write, which a crash of
    the proxy cannot tear (the file is one page; no fsync: unlike the append-only files, it
    survives a crash of the proxy, not necessarily one of the OS)."""

    def __init__(self, path: Path):
        self.path = path
        self._fd: int | None = None

    def load(self) -> tuple[str, bool]:
        try:
            primary, state = self.path.read_text().split()
            if primary in NAMES and state in ("free", "held"):
                return primary, state == "held"
        except (OSError, ValueError):
            pass
        return NAMES[0], False

    def save(self, primary: str, held: bool) -> None:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600)
        os.pwrite(self._fd, f"{primary} {'held' if held else 'free'}\n".encode(), 0)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def other_name(name: str) -> str:
    return NAMES[1] if name == NAMES[0] else NAMES[0]


def shared_password(root: Path) -> str:
    """The servers' shared password (requirepass + masterauth), kept in `<root>/auth` (0600)."""
    path = root / "auth"
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        secret = secrets.token_urlsafe(24)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(secret)
        return secret


def primary_address(root: Path) -> tuple[Path, str]:
    """The running primary's socket and the password, for tools that talk to the embedded
    database directly (benchmarks, the conformance suite's differential checks)."""
    root = Path(root).absolute()
    primary, _ = RolesJournal(root / "roles").load()
    return root / primary / "falkordb.sock", shared_password(root)


def migrate_single_server_layout(root: Path) -> None:
    """Data directories from before the pair kept one server's files in `root` itself."""
    old = root / "appendonlydir"
    if old.exists() and not (root / NAMES[0]).exists():
        (root / NAMES[0]).mkdir(mode=0o700)
        shutil.move(str(old), root / NAMES[0] / "appendonlydir")
        log.info("moved the embedded database's files into %s", root / NAMES[0])

