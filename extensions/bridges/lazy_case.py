"""CASE that evaluates only the branch it takes, as Neo4j's does.

FalkorDB 4.16 (and 4.22, issue #2363) evaluates every branch of a CASE, and every WHEN
condition, before choosing: `CASE WHEN n = 0 THEN 0 ELSE 100 / n END` over n = 0 fails with
"Division by zero", `CASE WHEN d IS NULL THEN 0 ELSE duration({days: d}) END` over null fails,
where Neo4j returns 0. The body of a list comprehension is evaluated only for the elements its
WHERE keeps (measured), so each branch goes into one:

    CASE WHEN c1 THEN r1 WHEN c2 THEN r2 ELSE d END
    -> [__i IN [CASE WHEN c1 THEN 0 WHEN c2 THEN 1 ELSE 2 END] |
          ([__c IN [1] WHERE __i = 0 | r1] + [__c IN [1] WHERE __i = 1 | r2]
           + [__c IN [1] WHERE __i = 2 | d])[0]][0]

The first CASE only picks the branch (its results are integers), so it is the conditions alone
that it evaluates eagerly; when a condition after the first could fail, the conditions are
chained instead, each evaluated only if the ones before it were not true. Each `[r]` is a
one-element list, so `+` joins them without flattening a list result. A simple CASE
(`CASE x WHEN v ...`) picks its branch the same way with x evaluated once.

CASEs whose branches cannot fail (literals, variables, parameters, `n.prop`, comparisons) are left
as they are; so are those with an aggregate inside (FalkorDB cannot aggregate inside a list
comprehension). The rewrite runs on the text after every other bridge edit (a whole-CASE edit
would otherwise hide the edits inside it), parsed again; nested CASEs are rewritten inside out.
A query the lazy form would nest past FalkorDB's parse-depth guard keeps its eager CASEs.
"""

from __future__ import annotations

from itertools import count

from proxy.backends.falkordb.guards import check_query
from core.errors import CypherError

from ..cypher import ast as A
from ..cypher.parser import parse
from ..cypher.splice import outermost, splice
from .rule import Context, Edit, Rule

_COMPARISONS = {"=", "<>", "<", ">", "<=", ">="}
_AGGREGATES = {"count", "sum", "avg", "min", "max", "collect", "stdev", "stdevp", "percentilecont",
               "percentiledisc", "std"}


def safe(expr: A.Expr | None) -> bool:
    """Whether FalkorDB can evaluate `expr` without an error whatever the row holds."""
    if expr is None or isinstance(expr, (A.Literal, A.Parameter, A.Variable, A.CountStar)):
        return True
    if isinstance(expr, A.Property):
        return isinstance(expr.expr, (A.Variable, A.Parameter))
    if isinstance(expr, A.ListLiteral):
        return all(safe(item) for item in expr.items)
    if isinstance(expr, A.MapLiteral):
        return all(safe(value) for _, value in expr.items)
    if isinstance(expr, A.BinaryOp) and expr.op in _COMPARISONS:
        return safe(expr.left) and safe(expr.right)
    if isinstance(expr, A.IsNull):
        return safe(expr.expr)
    if isinstance(expr, A.UnaryOp) and expr.op in ("-", "+"):
        return isinstance(expr.operand, A.Literal)
    if isinstance(expr, A.CaseExpr):                  # one left as it is: all its parts are safe
        return not needs_rewrite(expr) and all(safe(when) for when, _ in expr.whens) and safe(expr.subject)
    return _safe_boolean(expr)


def _safe_boolean(expr: A.Expr) -> bool:
    """A boolean that cannot fail: comparisons and null tests of safe values, label tests of
    variables, and NOT/AND/OR/XOR of those (on other values they fail)."""
    if isinstance(expr, A.Literal):
        return expr.value is None or isinstance(expr.value, bool)
    if isinstance(expr, A.UnaryOp) and expr.op == "NOT":
        return _safe_boolean(expr.operand)
    if isinstance(expr, A.BinaryOp) and expr.op in ("AND", "OR", "XOR"):
        return _safe_boolean(expr.left) and _safe_boolean(expr.right)
    if isinstance(expr, A.LabelPredicate):
        return isinstance(expr.expr, A.Variable)
    if isinstance(expr, A.BinaryOp) and expr.op in _COMPARISONS:
        return safe(expr.left) and safe(expr.right)
    return isinstance(expr, A.IsNull) and safe(expr.expr)


def needs_rewrite(case: A.CaseExpr) -> bool:
    """A branch or a later condition could fail, and nothing inside aggregates."""
    later_conditions = [when for when, _ in case.whens[1:]]
    risky = not all(safe(then) for _, then in case.whens) or not safe(case.default) \
        or not all(safe(c) for c in later_conditions)
    return risky and not aggregates(case)


def aggregates(node: A.Node) -> bool:
    return any(isinstance(n, A.CountStar) or (isinstance(n, A.FunctionCall) and n.lower_name in _AGGREGATES)
               for n in node.walk())


def mark(case: A.CaseExpr, ctx: Context) -> list[Edit]:
    """The rule: no edit now; the query is rewritten after the other bridges (`rewrite`)."""
    if needs_rewrite(case):
        ctx.after.add("lazy_case")
    return []


def rewrite(text: str) -> str:
    """`text` with every CASE that needs it made lazy; unchanged if it does not parse, or if the
    lazy form would nest deeper than FalkorDB's parser is allowed to go while the query as
    written does not (each lazy CASE adds three levels; the eager one fails only on a row that
    reaches the failing branch)."""
    try:
        tree = parse(text)
    except CypherError:
        return text
    lazy = _Rewriter(text).within(tree, (tree.parts[0].span[0], len(text)), keep_head=True)
    return lazy if _parses_safely(lazy) or not _parses_safely(text) else text


def _parses_safely(text: str) -> bool:
    try:
        check_query(text)
    except CypherError:
        return False
    return True


class _Rewriter:
    def __init__(self, text: str):
        self.text = text
        self.names = count()

    def within(self, node: A.Node, span: tuple[int, int], keep_head: bool = False) -> str:
        """The text of `span` (inside `node`) with its outermost rewritable CASEs rewritten."""
        cases = [n for n in node.walk() if isinstance(n, A.CaseExpr) and n is not node
                 and span[0] <= n.span[0] and n.span[1] <= span[1] and needs_rewrite(n)]
        edits = outermost(((c.span[0] - span[0], c.span[1] - span[0]), self.case(c)) for c in cases)
        body = splice(self.text[span[0]:span[1]], edits)
        return self.text[:span[0]] + body if keep_head else body

    def sub(self, expr: A.Expr) -> str:
        return self.within(expr, expr.span) if not isinstance(expr, A.CaseExpr) or not needs_rewrite(expr) \
            else self.case(expr)

    def case(self, case: A.CaseExpr) -> str:
        subject = self.sub(case.subject) if case.subject is not None else None
        conditions = [self.sub(when) for when, _ in case.whens]
        results = [self.sub(then) for _, then in case.whens] + [
            self.sub(case.default) if case.default is not None else "null"]
        if subject is None and all(safe(when) for when, _ in case.whens[1:]) or \
                subject is not None and all(safe(when) for when, _ in case.whens):
            return self._picked(subject, conditions, results)
        return self._chained(subject, conditions, results)

    def _fresh(self, stem: str) -> str:
        return f"__{stem}{next(self.names)}"

    def _picked(self, subject: str | None, conditions: list[str], results: list[str]) -> str:
        index, item = self._fresh("case"), self._fresh("branch")
        whens = " ".join(f"WHEN {c} THEN {k}" for k, c in enumerate(conditions))
        pick = f"CASE {subject + ' ' if subject is not None else ''}{whens} ELSE {len(conditions)} END"
        branches = " + ".join(f"[{item} IN [1] WHERE {index} = {k} | {r}]" for k, r in enumerate(results))
        return f"[{index} IN [{pick}] | ({branches})[0]][0]"

    def _chained(self, subject: str | None, conditions: list[str], results: list[str]) -> str:
        value = self._fresh("subject") if subject is not None else None
        if value is not None:
            conditions = [f"{value} = ({c})" for c in conditions]
        chain = results[-1]
        for condition, result in zip(reversed(conditions), reversed(results[:-1])):
            taken, item = self._fresh("taken"), self._fresh("branch")
            chain = (f"[{taken} IN [coalesce({condition}, false)] | ([{item} IN [1] WHERE {taken} | {result}]"
                     f" + [{item} IN [1] WHERE NOT {taken} | {chain}])[0]][0]")
        return f"[{value} IN [{subject}] | {chain}][0]" if value is not None else chain


RULES = (Rule(A.CaseExpr, mark, ("case",), r"\bcase\b"),)
