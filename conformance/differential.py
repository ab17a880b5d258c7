"""The TCK section: each runnable TCK scenario through the endpoint, and (when the suite owns the
FalkorDB behind the proxy) the same scenario on FalkorDB directly; outcomes are compared.

The regression signal is the differential: the proxy must add no difference of its own, so any
scenario whose outcome through the proxy differs from FalkorDB's own answer fails the suite unless
it is in `ALLOWED_DIFFERENCES` with a reason. Matching the TCK's expected results is reported for
information only (FalkorDB is not Neo4j).
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import falkordb
import neo4j
import redis

from conformance.literals import LiteralError, parse_literal
from conformance.report import Section
from conformance.tck import Check, Scenario, read_tck
from conformance.values import normalise_rows, rows_equal
from proxy.backends.falkordb import _check_query as check_query
from proxy.backends.falkordb import _code_only as code_only
from proxy.errors import CypherError

QUERY_TIMEOUT_S = 10.0
SHOWN_DIFFERENCES = 20


@dataclass(frozen=True)
class Allowed:
    """A known, intended way the proxy differs from FalkorDB direct: the proxy answers a query
    FalkorDB refuses, because the proxy bridges Neo4j syntax FalkorDB lacks."""

    name: str
    reason: str
    query: str                 # regex the scenario's queries must match
    falkor_error: str          # regex FalkorDB's own error must match

    def covers(self, scenario: Scenario, proxied: list[Outcome], direct: list[Outcome]) -> bool:
        text = "\n".join([*scenario.setup, *(c.query for c in scenario.checks),
                          *(f"${name}" for name in scenario.parameters)])
        return bool(re.search(self.query, text, re.IGNORECASE)) and all(
            p.error == d.error or (p.error is None and d.error and re.search(self.falkor_error, d.error))
            for p, d in zip(proxied, direct)) and len(proxied) == len(direct)


#: The allow-list: every entry is a dialect bridge of `extensions/dialect.py` or of the FalkorDB
#: backend; anything else that differs is a regression.
ALLOWED_DIFFERENCES = [
    Allowed("datetime() bridge",
            "FalkorDB has no datetime(); extensions/dialect.py rewrites it to localdatetime(), so "
            "the proxy answers (with FalkorDB's zone-less value) where FalkorDB fails",
            r"\bdatetime\s*\(", r"Unknown function 'datetime'"),
    Allowed("EXISTS { pattern } bridge",
            "FalkorDB cannot parse EXISTS subqueries; extensions/dialect.py rewrites them to a "
            "pattern predicate",
            r"\bexists\s*\{", r"Invalid input"),
    Allowed("$1-style parameter names",
            "FalkorDB's $ syntax refuses parameter names that are not identifiers; the proxy "
            "backtick-quotes them (proxy/backends/falkordb_params.py)",
            r"\$\d", r"expected a parameter"),
]


class Unreachable(Exception):
    """A target stopped answering; the rest of the TCK run is abandoned."""


@dataclass(frozen=True)
class Outcome:
    """What one query produced: an error, or column names + rows (raw values)."""

    error: str | None = None
    keys: tuple = ()
    rows: tuple = ()
    setup_step: int | None = None     # set when a setup query failed (then `error` is set)


class EndpointTarget:
    """Any Bolt endpoint through the neo4j Python driver (one session, reused)."""

    def __init__(self, uri: str, auth: tuple[str, str]):
        self.driver = neo4j.GraphDatabase.driver(uri, auth=auth)
        self.session = self.driver.session()

    def clear(self) -> None:
        self.run("MATCH (n) DETACH DELETE n", {})

    def run(self, query: str, params: dict) -> Outcome:
        try:
            result = self.session.run(neo4j.Query(query, timeout=QUERY_TIMEOUT_S), params)
            rows = tuple(tuple(record.values()) for record in result)
            return Outcome(keys=tuple(result.keys()), rows=rows)
        except neo4j.exceptions.Neo4jError as exc:
            return Outcome(error=f"{exc.code}: {exc.message}")
        except (neo4j.exceptions.ServiceUnavailable, neo4j.exceptions.SessionExpired) as exc:
            raise Unreachable(f"endpoint: {exc}") from exc
        except neo4j.exceptions.DriverError as exc:
            self.session.close()
            self.session = self.driver.session()
            return Outcome(error=f"driver: {type(exc).__name__}: {exc}")

    def close(self) -> None:
        self.session.close()
        self.driver.close()


class FalkorTarget:
    """FalkorDB itself over its Unix socket with the `falkordb` client, graph `neo4j`."""

    def __init__(self, socket_path: Path, password: str | None = None, graph: str = "neo4j"):
        self.db = falkordb.FalkorDB(unix_socket_path=str(socket_path), password=password)
        self.graph = self.db.select_graph(graph)

    def clear(self) -> None:
        self.run("MATCH (n) DETACH DELETE n", {})

    @staticmethod
    def would_stall(scenario: Scenario) -> bool:
        """True if a query trips the proxy's guard against queries that stall FalkorDB's parser
        (it ignores timeouts: 40 nested brackets block the server for hours), so it must not be
        sent to FalkorDB directly."""
        for query in [*scenario.setup, *(check.query for check in scenario.checks)]:
            try:
                check_query(query, code_only(query))
            except CypherError:
                return True
        return False

    def run(self, query: str, params: dict) -> Outcome:
        try:
            result = self.graph.query(query, params or None, timeout=int(QUERY_TIMEOUT_S * 1000))
            keys = tuple(h[1] if isinstance(h, (list, tuple)) else h for h in result.header)
            return Outcome(keys=keys, rows=tuple(tuple(row) for row in result.result_set))
        except redis.exceptions.ResponseError as exc:
            return Outcome(error=str(exc))
        except redis.exceptions.ConnectionError as exc:
            raise Unreachable(f"FalkorDB: {exc}") from exc
        except Exception as exc:          # the client's own decoding failures are outcomes too
            return Outcome(error=f"client: {type(exc).__name__}: {exc}")

    def close(self) -> None:
        self.db.connection.close()


def skip_reason(scenario: Scenario) -> str | None:
    """Why a scenario cannot run from an empty graph through a plain Bolt endpoint, or None."""
    if "@ignore" in scenario.tags:
        return "tagged @ignore by the TCK"
    if scenario.graph not in ("empty", "any"):
        return "needs a named graph"
    if scenario.procedures:
        return "declares a test procedure"
    if any(check.expected is None for check in scenario.checks):
        return "no expected outcome"
    return None


def parameters(scenario: Scenario) -> dict:
    """The scenario's parameters as Python values (LiteralError if one cannot be parsed)."""
    return {name: parse_literal(text) for name, text in scenario.parameters.items()}


def play(target, scenario: Scenario, params: dict) -> list[Outcome]:
    """Clear, run the setup, then every check query; stops at a failing setup query."""
    target.clear()
    for step, query in enumerate(scenario.setup):
        outcome = target.run(query, {})
        if outcome.error:
            return [Outcome(error=outcome.error, setup_step=step)]
    return [target.run(check.query, params) for check in scenario.checks]


def difference(a: list[Outcome], b: list[Outcome]) -> str | None:
    """A one-line reason why two runs differ, or None when they are the same."""
    for n, (x, y) in enumerate(zip(a, b)):
        where = f"query {n + 1}" if x.setup_step is None else f"setup {x.setup_step + 1}"
        if (x.setup_step, bool(x.error)) != (y.setup_step, bool(y.error)):
            first, second = (x.error or "rows"), (y.error or "rows")
            return f"{where}: proxy {first[:90]!r} vs FalkorDB {second[:90]!r}"
        if x.error:
            continue
        if x.keys != y.keys:
            return f"{where}: columns {list(x.keys)} vs {list(y.keys)}"
        px, py = normalise_rows(x.rows), normalise_rows(y.rows)
        if not rows_equal(px, py):
            extra = (Counter(px) - Counter(py)) or (Counter(py) - Counter(px))
            return f"{where}: {len(px)} vs {len(py)} rows, e.g. {next(iter(extra))!r}"[:200]
    return None if len(a) == len(b) else "different number of queries ran"


def matches_expected(check: Check, outcome: Outcome) -> bool:
    """Whether one outcome is what the TCK expects (LiteralError for an unparsable cell)."""
    expected = check.expected
    if expected.kind == "error":
        return outcome.error is not None
    if outcome.error:
        return False
    if expected.kind == "empty":
        return not outcome.rows
    options = {"temporal_as_string": True, "unordered_lists": expected.ignore_list_order}
    want = normalise_rows([[parse_literal(c) for c in row] for row in expected.rows], **options)
    got = normalise_rows(outcome.rows, **options)
    return list(outcome.keys) == expected.header and rows_equal(want, got, expected.ordered)


def run_tck(section: Section, tck_root: Path, endpoint: EndpointTarget, falkor: FalkorTarget | None,
            limit: int | None) -> None:
    """Run the TCK section and fill `section` (its pass/fail is the differential)."""
    started = time.monotonic()
    skipped: Counter = Counter()
    differing: list[str] = []
    allowed: Counter = Counter()
    unstable: list[str] = []
    ran = identical = expected_ok = expected_bad = unparsed = 0
    for scenario in read_tck(tck_root):
        reason = skip_reason(scenario)
        if reason is None and falkor and falkor.would_stall(scenario):
            reason = "would stall FalkorDB direct (the proxy refuses it: nesting/size guard)"
        if reason is None and limit is not None and ran >= limit:
            reason = "beyond --tck-limit"
        if reason is None:
            try:
                params = parameters(scenario)
            except LiteralError:
                reason = "unparsable parameter"
        if reason:
            skipped[reason] += 1
            continue
        try:
            proxied = play(endpoint, scenario, params)
            direct = play(falkor, scenario, params) if falkor else None
        except Unreachable as exc:
            section.check("TCK run completed", False, f"{exc} (at {scenario.id})")
            break
        ran += 1
        for check, outcome in zip(scenario.checks, proxied):
            try:
                if outcome.setup_step is None and matches_expected(check, outcome):
                    expected_ok += 1
                else:
                    expected_bad += 1
            except LiteralError:
                unparsed += 1
        if direct is None:
            continue
        why = difference(proxied, direct)
        if why is not None:
            rule = next((a for a in ALLOWED_DIFFERENCES if a.covers(scenario, proxied, direct)), None)
            if rule:
                allowed[rule.name] += 1
                continue
            try:       # FalkorDB is not always deterministic (seen on MERGE): one replay decides
                if difference(play(endpoint, scenario, params), play(falkor, scenario, params)) is None:
                    unstable.append(scenario.id)
                    continue
            except Unreachable as exc:
                section.check("TCK run completed", False, f"{exc} (at {scenario.id})")
                break
            differing.append(f"{scenario.id} -- {why}")
        else:
            identical += 1
    endpoint.clear()

    section.note(f"scenarios run: {ran} in {time.monotonic() - started:.0f} s; "
                 f"skipped: {sum(skipped.values())} ({', '.join(f'{r}: {n}' for r, n in skipped.most_common())})")
    if falkor is None:
        section.skip("differential proxy vs FalkorDB direct",
                     "--uri given, so the backend behind the endpoint is unknown")
    else:
        section.note(f"differential: {identical} identical, {len(differing)} differing, "
                     f"{sum(allowed.values())} allowed differences, {len(unstable)} identical "
                     "only on replay (FalkorDB non-deterministic)")
        for rule in ALLOWED_DIFFERENCES:
            section.note(f"  allowed: {rule.name} ({allowed[rule.name]}): {rule.reason}")
        for scenario_id in unstable:
            section.note(f"  unstable: {scenario_id}")
        for line in differing[:SHOWN_DIFFERENCES]:
            section.note(f"  differs: {line}")
        if len(differing) > SHOWN_DIFFERENCES:
            section.note(f"  ... and {len(differing) - SHOWN_DIFFERENCES} more")
        section.check("no scenario where the proxy differs from FalkorDB direct", not differing,
                      f"{len(differing)} differing" if differing else "")
    section.note(f"TCK expected results (informative, FalkorDB is not Neo4j): {expected_ok} match, "
                 f"{expected_bad} do not, {unparsed} unparsed")
