"""Where a query goes in a `neo4j://` upstream (a cluster, Aura): routing tables, as the drivers keep them.

A table per database (and impersonated user; the home database per credentials too) comes from
a ROUTE request to one of its routers: writers take write transactions, readers reads, and
servers are taken in turn. A table is fetched again when its TTL runs out or when it has no
server left for a role; a server that cannot be reached is dropped from every table, a writer
that answers `NotALeader` / `ForbiddenOnReadOnlyDatabase` from its database's table (the
client's driver retries, and the next attempt asks the new leader).
"""

from __future__ import annotations

import itertools
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from proxy.backends.neo4j.client import Address
from proxy.backends.neo4j.errors import UpstreamLost, unreachable
from proxy.backends.neo4j.pool import Credentials, Pool
from proxy.bolt import messages as m
from core.errors import CypherError

log = logging.getLogger(__name__)


@dataclass(slots=True)
class RoutingTable:
    routers: list[Address]
    readers: list[Address]
    writers: list[Address]
    expires: float
    database: str | None = None
    _turn: itertools.count = field(default_factory=itertools.count)

    @classmethod
    def from_route(cls, rt: dict[str, Any]) -> "RoutingTable":
        roles: dict[str, list[Address]] = {"ROUTE": [], "READ": [], "WRITE": []}
        for server in rt.get("servers") or ():
            roles.setdefault(server.get("role"), []).extend(Address.parse(a) for a in server.get("addresses") or ())
        return cls(roles["ROUTE"], roles["READ"], roles["WRITE"],
                   time.monotonic() + float(rt.get("ttl") or 0), rt.get("db"))

    def fresh(self, mode: str) -> bool:
        return time.monotonic() < self.expires and bool(self.routers) and bool(self._servers(mode))

    def pick(self, mode: str) -> Address:
        servers = self._servers(mode)
        return servers[next(self._turn) % len(servers)]

    def drop(self, address: Address) -> None:
        for servers in (self.routers, self.readers, self.writers):
            if address in servers:
                servers.remove(address)

    def _servers(self, mode: str) -> list[Address]:
        return self.readers if mode == "r" else self.writers


class Router:
    """Routing tables of one `neo4j://` upstream."""

    def __init__(self, pool: Pool, seed: Address, context: dict[str, Any]):
        self._pool = pool
        self._seed = seed
        self._context = context
        self._tables: dict[tuple, RoutingTable] = {}
        pool.on_write_refused = self.forget_writer

    async def address(self, database: str | None, imp_user: str | None, mode: str, credentials: Credentials,
                      bookmarks: tuple[str, ...], encoding: str) -> Address:
        key = (database, imp_user, None if database else credentials.key)
        table = self._tables.get(key)
        if table is None or not table.fresh(mode):
            table = self._tables[key] = await self._fetch(table, database, imp_user, credentials, bookmarks, encoding)
        if not table._servers(mode):
            raise CypherError("Neo.TransientError.General.DatabaseUnavailable",
                              f"The upstream cluster has no {'reader' if mode == 'r' else 'writer'} "
                              f"for database {table.database or database or '(home)'}.")
        return table.pick(mode)

    def forget(self, address: Address) -> None:
        """A server could not be reached: out of every table (and its idle connections closed)."""
        for table in self._tables.values():
            table.drop(address)
        self._pool.forget(address)

    def forget_writer(self, address: Address, database: str | None) -> None:
        """`address` answered NotALeader / ForbiddenOnReadOnlyDatabase for `database`: out of its
        writers, so the next write asks the router again (as the drivers' `on_write_failure`)."""
        for (name, _, _), table in self._tables.items():
            if name == database and address in table.writers:
                table.writers.remove(address)

    async def _fetch(self, old: RoutingTable | None, database: str | None, imp_user: str | None,
                     credentials: Credentials, bookmarks: tuple[str, ...], encoding: str) -> RoutingTable:
        routers = list(dict.fromkeys([*(old.routers if old else ()), self._seed]))
        failures = []
        for router in routers:
            try:
                rt = await self._route(router, database, imp_user, credentials, bookmarks, encoding)
            except CypherError as error:
                if not isinstance(error, UpstreamLost) and not error.code.endswith("DatabaseUnavailable"):
                    raise                           # the router answered: e.g. no such database
                log.info("router %s did not answer ROUTE: %s", router, error.message)
                failures.append(error.message)
                self.forget(router)
                continue
            return RoutingTable.from_route(rt)
        raise unreachable(str(self._seed), "no router answered: " + "; ".join(failures))

    async def _route(self, router: Address, database: str | None, imp_user: str | None,
                     credentials: Credentials, bookmarks: tuple[str, ...], encoding: str) -> dict[str, Any]:
        connection = await self._pool.acquire(router, credentials, encoding)
        try:
            extra = {key: value for key, value in (("db", database), ("imp_user", imp_user)) if value}
            connection.send(m.ROUTE, self._context, list(bookmarks), extra)
            await connection.flush()
            return (await connection.response())["rt"]
        finally:
            await self._pool.release(connection)
