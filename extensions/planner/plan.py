"""What the planner builds once per query text and then runs: the `Plan` (steps in order, then
the rewritten text) and its parts. Building it is `probe.py`'s job, running it `planner.py`'s."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Any

from . import bind
from ..registry import Extension, Procedure, VirtualProcedure

_STEP_TOKENS = itertools.count()


@dataclass
class ArgPlan:
    """How one argument of a bound call reaches Python: columns of the probe's result."""

    kind: str                      # "node", "relationship", "property" or "value"
    text: str                      # rewritten text of the node (node/property) or value expression
    key: str | None = None         # property name (kind "property")
    id_col: int = -1               # node id column (node/property)
    eid_col: int = -1              # element id column (Neo4j only)
    labels_col: int = -1           # labels (node/property), the type (relationship)
    prop_cols: tuple = ()          # (property name, column) pairs
    value_col: int = -1            # kind "value"
    key_col: int = -1              # the column keying the bound value by this argument, if it varies
    uses: frozenset = frozenset()  # the variables the argument reads
    #: kind "value": the node variable it is computed from alone, which then indexes the bound
    #: values (`probe._one_entity`), if any
    entity: str | None = None

    @property
    def indexed_by(self) -> str:
        """The node or relationship expression whose id indexes the call's values."""
        return self.entity or self.text


@dataclass
class Site:
    """One extension call, read by the rewritten query as `lookup` says."""

    ext: Extension
    lookup: bind.Lookup
    args: list[ArgPlan]
    index_arg: int | None          # the argument whose node indexes the parameter
    key_cols: list[int] = field(default_factory=list)
    #: The rows of its WITH/RETURN the query needs (`reduce.plan_projection`), None: all of them;
    #: `marker` stands before that clause, where `cut` goes when only those rows are bound.
    reduction: Any = None
    marker: str = ""

    @property
    def nulls(self) -> bind.Lookup:
        """Where the cut reads the nodes kept with a null value (true for each): in `lookup` a
        null reads the same as a node left out."""
        return replace(self.lookup, param=nulls_param(self.lookup.param))

    @property
    def cut(self) -> str:
        """The clause that drops the rows whose value was not bound (outside the top k); rows
        without the node (OPTIONAL MATCH) read null either way and are kept, as are the nodes
        kept with a null value."""
        entity = self.args[self.index_arg].text
        return f"WITH * WHERE ({entity}) IS NULL OR {self.lookup.text} IS NOT NULL OR {self.nulls.text} IS NOT NULL "

    def edits(self, bound: dict[str, Any]) -> list[tuple[str, str]]:
        """(marker, cut) when `bound` holds only the rows the query needs, else (marker, "")."""
        if not self.marker:
            return []
        return [(self.marker, self.cut if bound.get(cut_param(self.lookup.param)) else "")]


def cut_param(param: str) -> str:
    """The flag bound with a call's values when they are only the rows its projection needs."""
    return f"{param}_cut"


def nulls_param(param: str) -> str:
    """The parameter of the nodes a cut keeps with a null value (`Site.nulls`)."""
    return f"{param}_nulls"


@dataclass
class ProbeStep:
    text: str
    sites: list[Site]
    split: Any = None              # a `split.SplitProbe` when the calls' nodes and values vary independently
    #: Names this step's calls in the probe cache, which keeps their computed values too.
    token: int = field(default_factory=lambda: next(_STEP_TOKENS))


@dataclass
class AlgorithmStep:
    procedure: Procedure
    lookup: bind.Lookup            # how the rewritten CALL reads the values, per node
    arguments: Any                 # MapLiteral / Parameter / None, resolved at run time
    #: The rows the query needs (`reduce.Reduction`: top k, thresholds), None: all of them.
    reduction: Any = None
    #: The rewritten CALL's head as planned, a scan of every node reading `lookup`; and the
    #: head that seeks the few bound rows instead (`$<param>_rows`: [identity, value] pairs).
    scan: str = ""
    seek: str = ""

    def edits(self, bound: dict[str, Any]) -> list[tuple[str, str]]:
        """(scan, seek) when `bound` holds the rows to seek."""
        return [(self.scan, self.seek)] if seek_param(self.lookup.param) in bound else []


def seek_param(param: str) -> str:
    """The parameter of an algorithm CALL's rows when they are bound to be sought by identity."""
    return f"{param}_rows"


@dataclass
class VirtualStep:
    procedure: VirtualProcedure
    param: str
    arguments: tuple               # argument expressions, resolved at run time


@dataclass
class LocalCall:
    """A query that is only a virtual procedure's CALL: answered without the database."""

    procedure: VirtualProcedure
    arguments: tuple
    fields: list[str]              # yielded fields, in column order
    columns: list[str]             # their names as the client sees them


@dataclass
class Plan:
    """What the planner runs: steps in order, then `body` (with `prefix` EXPLAIN/PROFILE if any),
    or, for a lone virtual procedure CALL, `local`."""

    body: str
    prefix: str | None
    steps: list
    placeholders: dict[str, Any]
    local: LocalCall | None = None
    #: `CYPHER ...` options kept for the backend (Neo4j; FalkorDB has none and reads them as
    #: its parameter header).
    options: str | None = None
    #: A schema command the proxy runs itself: (CommandHandler, typed command node).
    command: tuple | None = None
    #: parameters computed from the client's before running (FalkorDB bridges, bridges.derive)
    derived: dict[str, Any] = field(default_factory=dict)
    #: notifications for an EXPLAIN whose plan shows a cartesian product (FalkorDB)
    cartesian: list = field(default_factory=list)
    #: bridge edits that depend on a parameter's type (FalkorDB, bridges.variant_edits): the
    #: query, where its body starts, the edits always made, and the conditional ones
    variants: tuple | None = None
    #: returned columns that are zoned date-times (FalkorDB, bridges.zoned)
    zoned: dict = field(default_factory=dict)
    #: why the query may be refused while it runs (FalkorDB, bridges.rule.Context.refuse_when)
    refusals: list = field(default_factory=list)
    #: variable-length ranges the graph must allow, checked before the query runs (FalkorDB,
    #: bridges.ranges, cycles.py)
    ranges: list = field(default_factory=list)
    #: the text planned, from which the planner writes the ranges one length per UNION ALL branch
    #: when the graph refuses `ranges` (bridges.range_unions)
    source: str | None = None
    #: a query on no graph answered in Python (FalkorDB, temporal/query.py): (ConstantQuery,
    #: the plan to run when it cannot be computed there: a Plan, None to pass the text through,
    #: or the CypherError that planning it raised)
    constant: tuple | None = None

    @property
    def text(self) -> str:
        return " ".join(part for part in (self.options, self.prefix, self.body) if part)
