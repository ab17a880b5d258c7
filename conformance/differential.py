"""The TCK section: each runnable TCK scenario through the endpoint, classified check by check
against the TCK's expected result (Neo4j's answer, see conformance/classify.py), and (when the
suite owns the FalkorDB behind the proxy) the same scenario on FalkorDB's primary directly, the
outcomes compared.

Two signals fail the suite. The classification: more silent-wrong or accepts-invalid checks than
the ceilings kept in conformance/tck_ceilings.json. The differential: the proxy must add no
difference of its own, so any scenario whose outcome through the proxy differs from FalkorDB's
own answer fails unless it is in `ALLOWED_DIFFERENCES` with a reason.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import falkordb
import neo4j
import redis

from conformance.classify import MATCH, GraphState, Outcome, Verdict, classify, side_effects
from conformance.literals import LiteralError, parse_literal
from conformance.report import Section
from conformance.tally import Tally, over_ceilings, read_ceilings, under_ceilings
from conformance.tck import Scenario, read_tck
from conformance.values import normalise, normalise_rows, rows_equal
from proxy.backends.falkordb.guards import check_query
from core.errors import CypherError

QUERY_TIMEOUT_S = 10.0
SHOWN_DIFFERENCES = 60
REPORT = Path(__file__).with_name("tck-report.txt")
NODES = "MATCH (n) RETURN id(n), labels(n), properties(n)"
RELATIONSHIPS = "MATCH (a)-[r]->(b) RETURN id(r), properties(r), type(r), id(a), id(b)"


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


#: The allow-list: every entry is a dialect bridge of `extensions/bridges/` or of the FalkorDB
#: backend; anything else that differs is a regression.
ALLOWED_DIFFERENCES = [
    Allowed("datetime() bridge",
            "FalkorDB has no datetime(); extensions/bridges/spelling.py rewrites it to localdatetime(), so "
            "the proxy answers (with FalkorDB's zone-less value) where FalkorDB fails",
            r"\bdatetime\s*\(", r"Unknown function 'datetime'"),
    Allowed("EXISTS { pattern } bridge",
            "FalkorDB cannot parse EXISTS subqueries; extensions/bridges/spelling.py rewrites them to a "
            "pattern predicate",
            r"\bexists\s*\{", r"Invalid input"),
    Allowed("$1-style parameter names",
            "FalkorDB's $ syntax refuses parameter names that are not identifiers; the proxy "
            "backtick-quotes them (proxy/backends/falkordb/params.py)",
            r"\$\d", r"expected a parameter"),
]


class Unreachable(Exception):
    """A target stopped answering; the rest of the TCK run is abandoned."""


class EndpointTarget:
    """Any Bolt endpoint through the neo4j Python driver (one session, reused)."""

    def __init__(self, uri: str, auth: tuple[str, str]):
        self.driver = neo4j.GraphDatabase.driver(uri, auth=auth)
        self.session = self.driver.session()

    def clear(self) -> None:
        self.run("MATCH (n) DETACH DELETE n", {})

    def state(self) -> GraphState | None:
        """The graph as the TCK's side effects count it, read through the endpoint (None if
        it cannot be read)."""
        nodes, relationships = self.run(NODES, {}), self.run(RELATIONSHIPS, {})
        if nodes.error or relationships.error:
            return None
        properties = {("n", id_, key, normalise(value))
                      for id_, _, props in nodes.rows for key, value in props.items()}
        properties |= {("r", id_, key, normalise(value))
                       for id_, props, *_ in relationships.rows for key, value in props.items()}
        shapes = {("n", id_, tuple(sorted(labels))) for id_, labels, _ in nodes.rows}
        shapes |= {("r", id_, *shape) for id_, _, *shape in relationships.rows}
        return GraphState(nodes=frozenset(row[0] for row in nodes.rows),
                          relationships=frozenset(row[0] for row in relationships.rows),
                          labels=frozenset(label for row in nodes.rows for label in row[1]),
                          properties=frozenset(properties), shapes=frozenset(shapes))

    def run(self, query: str, params: dict) -> Outcome:
        try:
            result = self.session.run(neo4j.Query(query, timeout=QUERY_TIMEOUT_S), params)
            rows = tuple(tuple(record.values()) for record in result)
            counters = result.consume().counters
            return Outcome(keys=tuple(result.keys()), rows=rows, counters={
                "nodes": (counters.nodes_created, counters.nodes_deleted),
                "relationships": (counters.relationships_created, counters.relationships_deleted)})
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
    """FalkorDB's primary itself over its Unix socket with the `falkordb` client, graph `neo4j`.

    `locate()` gives the primary's (socket, password). It is asked again before every scenario:
    the embedded database is a primary + replica pair whose roles swap when the proxy undoes a
    write by promoting the replica, and a client left on the old primary would be writing to
    a read-only replica."""

    def __init__(self, locate: Callable[[], tuple[Path, str | None]], graph: str = "neo4j"):
        self.locate, self.graph_name = locate, graph
        self.address: tuple[Path, str | None] | None = None
        self.db = self.graph = None

    def _follow_primary(self) -> None:
        address = self.locate()
        if address != self.address:
            self.close()
            self.db = falkordb.FalkorDB(unix_socket_path=str(address[0]), password=address[1])
            self.graph, self.address = self.db.select_graph(self.graph_name), address

    def clear(self) -> None:
        self._follow_primary()
        self.run("MATCH (n) DETACH DELETE n", {})

    @staticmethod
    def would_stall(scenario: Scenario) -> bool:
        """True if a query trips the proxy's guard against queries that stall FalkorDB's parser
        (it ignores timeouts: 40 nested brackets block the server for hours), so it must not be
        sent to FalkorDB directly."""
        for query in [*scenario.setup, *(check.query for check in scenario.checks)]:
            try:
                check_query(query)
            except CypherError:
                return True
        return False

    def run(self, query: str, params: dict) -> Outcome:
        try:
            result = self.graph.query(query, params or None, timeout=int(QUERY_TIMEOUT_S * 1000))
            keys = tuple(h[1] if isinstance(h, (list, tuple)) else h for h in result.header)
            return Outcome(keys=keys, rows=tuple(tuple(row) for row in result.result_set))
        except redis.exceptions.ReadOnlyError as exc:
            raise Unreachable(f"FalkorDB direct is not the primary: {exc}") from exc
        except redis.exceptions.ResponseError as exc:
            return Outcome(error=str(exc))
        except redis.exceptions.ConnectionError as exc:
            raise Unreachable(f"FalkorDB: {exc}") from exc
        except Exception as exc:          # the client's own decoding failures are outcomes too
            return Outcome(error=f"client: {type(exc).__name__}: {exc}")

    def close(self) -> None:
        if self.db is not None:
            self.db.connection.close()


def graph_script(tck_root: Path, name: str) -> Path:
    """The Cypher that creates one of the TCK's named graphs (`Given the binary-tree-1 graph`)."""
    return tck_root / "graphs" / name / f"{name}.cypher"


def skip_reason(scenario: Scenario, tck_root: Path) -> str | None:
    """Why a scenario cannot run through a plain Bolt endpoint, or None."""
    if "@ignore" in scenario.tags:
        return "tagged @ignore by the TCK"
    if scenario.graph not in ("empty", "any") and not graph_script(tck_root, scenario.graph).is_file():
        return "needs a named graph the TCK does not ship"
    if scenario.procedures:
        return "declares a test procedure"
    if any(check.expected is None for check in scenario.checks):
        return "no expected outcome"
    return None


def parameters(scenario: Scenario) -> dict:
    """The scenario's parameters as Python values (LiteralError if one cannot be parsed)."""
    return {name: parse_literal(text) for name, text in scenario.parameters.items()}


def setup_queries(scenario: Scenario, tck_root: Path) -> list[str]:
    """The named graph's statements (`;` at a line's end separates them), then the setup."""
    if scenario.graph in ("empty", "any"):
        return scenario.setup
    script = graph_script(tck_root, scenario.graph).read_text(encoding="utf-8")
    return [q for q in re.split(r";\s*$", script, flags=re.MULTILINE) if q.strip()] + scenario.setup


def runnable(tck_root: Path, limit: int | None, skipped: Counter):
    """(scenario, parameters) for every scenario that can run, the others counted in `skipped`
    by reason."""
    ran = 0
    for scenario in read_tck(tck_root):
        reason = skip_reason(scenario, tck_root)
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
        ran += 1
        yield scenario, params


def play(target, scenario: Scenario, params: dict, tck_root: Path) -> list[Outcome]:
    """Clear, run the setup, then every check query; stops at a failing setup query, and at a
    check query that fails where the TCK expects it to succeed (the later checks, such as a
    control query reading what a CREATE stored, carry that error: loud, not a wrong answer). A
    target that can read the graph (`state()`) also reports the side effects of each check whose
    expected outcome states them."""
    target.clear()
    for step, query in enumerate(setup_queries(scenario, tck_root)):
        outcome = target.run(query, {})
        if outcome.error:
            return [Outcome(error=outcome.error, setup_step=step)] * len(scenario.checks)
    read_state = getattr(target, "state", None)
    before = None
    outcomes = []
    for check in scenario.checks:
        stated = read_state is not None and check.expected.side_effects is not None
        if stated and before is None:
            before = read_state()
        outcome = target.run(check.query, params)
        after = read_state() if stated else None
        if before is not None and after is not None:
            effects = side_effects(before, after, outcome.counters)
            outcome = Outcome(outcome.error, outcome.keys, outcome.rows, effects=effects)
        outcomes.append(outcome)
        if outcome.error and check.expected.kind != "error":
            failed = Outcome(error=outcome.error, failed_check=len(outcomes) - 1)
            return outcomes + [failed] * (len(scenario.checks) - len(outcomes))
        before = after
    return outcomes


def classify_scenario(tally: Tally, scenario: Scenario, outcomes: list[Outcome]) -> list[Verdict]:
    """Classify and count each check of one scenario; its verdicts (unparsable ones left out)."""
    verdicts = []
    for check, outcome in zip(scenario.checks, outcomes):
        try:
            verdicts.append(classify(check, outcome))
            tally.add(scenario, check, verdicts[-1])
        except LiteralError as exc:
            tally.unparsed.append(f"{scenario.id}: {exc}")
    return verdicts


def classify_tck(tck_root: Path, endpoint: EndpointTarget, limit: int | None = None,
                 skipped: Counter | None = None) -> Tally:
    """Every runnable TCK check through the endpoint, classified (Unreachable if it stops
    answering)."""
    tally = Tally(tck_root)
    for scenario, params in runnable(tck_root, limit, Counter() if skipped is None else skipped):
        classify_scenario(tally, scenario, play(endpoint, scenario, params, tck_root))
    endpoint.clear()
    return tally


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


def refuses_only_wrong_answers(scenario: Scenario, proxied: list[Outcome], direct: list[Outcome]) -> bool:
    """Whether every check on which the proxy and FalkorDB differ is one the proxy answers as
    the TCK does, refuses where FalkorDB's own answer is not the TCK's, or refuses as a value the
    backend cannot hold exactly (`_refusal`): a silent wrong answer, or one FalkorDB would store
    wrong, turned into an error, which is the proxy's job (DESIGN.md), not a regression."""
    if len(proxied) != len(direct):
        return False
    if any(p.setup_step is not None for p in proxied):        # a setup value FalkorDB cannot hold
        return all(_refusal(p) for p in proxied if p.setup_step is not None)
    for check, p, d in zip(scenario.checks, proxied, direct):
        if difference([p], [d]) is None or _refusal(p):
            continue
        try:
            if classify(check, p).kind != MATCH and not (p.error and classify(check, d).kind != MATCH):
                return False
        except LiteralError:
            return False
    return True


def _refusal(outcome: Outcome) -> bool:
    """The proxy's own refusal of what the backend would answer inexactly (a fraction of a
    second, a zone, a duration it would change): loud by design, counted as loud by the
    classification."""
    return bool(outcome.error) and outcome.error.startswith("Neo.ClientError.Statement.UnsupportedOperationError")


@dataclass
class Differential:
    """Scenarios compared between the proxy and FalkorDB direct."""

    identical: int = 0
    differing: list[str] = field(default_factory=list)
    allowed: Counter = field(default_factory=Counter)
    unstable: list[str] = field(default_factory=list)
    fixed: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    not_sent: int = 0

    def compare(self, falkor: FalkorTarget, endpoint: EndpointTarget, scenario: Scenario,
                params: dict, proxied: list[Outcome], tck_root: Path, tck_answer: bool) -> None:
        """Compare one scenario; `tck_answer`: every check through the proxy matched the TCK
        (then a difference is the proxy correcting FalkorDB, not a regression)."""
        if falkor.would_stall(scenario):
            self.not_sent += 1
            return
        direct = play(falkor, scenario, params, tck_root)
        why = difference(proxied, direct)
        if why is None:
            self.identical += 1
            return
        rule = next((a for a in ALLOWED_DIFFERENCES if a.covers(scenario, proxied, direct)), None)
        if rule:
            self.allowed[rule.name] += 1
        elif tck_answer:
            self.fixed.append(scenario.id)
        elif refuses_only_wrong_answers(scenario, proxied, direct):
            self.refused.append(scenario.id)
        elif difference(play(endpoint, scenario, params, tck_root),      # FalkorDB is not always
                        play(falkor, scenario, params, tck_root)) is None:   # deterministic (MERGE)
            self.unstable.append(scenario.id)
        else:
            self.differing.append(f"{scenario.id} -- {why}")

    def report(self, section: Section) -> None:
        section.note(f"differential: {self.identical} identical, {len(self.differing)} differing, "
                     f"{sum(self.allowed.values())} allowed differences, {len(self.fixed)} where "
                     f"only the proxy gives the TCK's answer, {len(self.refused)} where the proxy "
                     f"refuses what FalkorDB answers wrongly, {len(self.unstable)} "
                     f"identical only on replay (FalkorDB non-deterministic), {self.not_sent} not "
                     "sent to FalkorDB direct (they would stall it; the proxy refuses them)")
        for rule in ALLOWED_DIFFERENCES:
            section.note(f"  allowed: {rule.name} ({self.allowed[rule.name]}): {rule.reason}")
        for scenario_id in self.unstable:
            section.note(f"  unstable: {scenario_id}")
        for scenario_id in self.fixed:
            section.note(f"  proxy corrects FalkorDB: {scenario_id}")
        for line in self.differing[:SHOWN_DIFFERENCES]:
            section.note(f"  differs: {line}")
        if len(self.differing) > SHOWN_DIFFERENCES:
            section.note(f"  ... and {len(self.differing) - SHOWN_DIFFERENCES} more")
        section.check("no scenario where the proxy differs from FalkorDB direct", not self.differing,
                      f"{len(self.differing)} differing" if self.differing else "")


def report_classes(section: Section, tally: Tally, limited: bool) -> None:
    """The classification's counts and, on a whole run, the ceilings check; writes REPORT."""
    section.note(f"classification against the TCK (Neo4j's answers): {tally.summary()}")
    for line in tally.table():
        section.note(f"  {line}")
    REPORT.write_text(tally.listing(), encoding="utf-8")
    section.note(f"silent-wrong and accepts-invalid checks listed in {REPORT}")
    if tally.unparsed:
        section.note(f"{len(tally.unparsed)} checks not classified: expected cells not parsed")
    if limited:
        section.skip("TCK classes within the ceilings", "--tck-limit ran only part of the TCK")
        return
    ceilings = read_ceilings()
    over = over_ceilings(tally.counts(), ceilings)
    for line in under_ceilings(tally.counts(), ceilings):
        section.note(f"ratchet: {line}")
    section.check(f"TCK classes within the ceilings {ceilings}", not over, "; ".join(over))


def run_tck(section: Section, tck_root: Path, endpoint: EndpointTarget, falkor: FalkorTarget | None,
            limit: int | None) -> None:
    """Run the TCK section and fill `section`: the classification, and the differential when
    the FalkorDB behind the endpoint is known."""
    started = time.monotonic()
    skipped: Counter = Counter()
    tally, differential = Tally(tck_root), Differential()
    ran = 0
    try:
        for scenario, params in runnable(tck_root, limit, skipped):
            ran += 1
            proxied = play(endpoint, scenario, params, tck_root)
            verdicts = classify_scenario(tally, scenario, proxied)
            if falkor:
                differential.compare(falkor, endpoint, scenario, params, proxied, tck_root,
                                     all(v.kind == MATCH for v in verdicts))
    except Unreachable as exc:
        section.check("TCK run completed", False, str(exc))
    endpoint.clear()
    section.note(f"scenarios run: {ran} in {time.monotonic() - started:.0f} s; skipped: "
                 f"{sum(skipped.values())} ({', '.join(f'{r}: {n}' for r, n in skipped.most_common())})")
    report_classes(section, tally, limit is not None)
    if falkor is None:
        section.skip("differential proxy vs FalkorDB direct",
                     "--uri given, so the backend behind the endpoint is unknown")
    else:
        differential.report(section)
