"""Render an AST back to Cypher text.

The output re-parses to an equal AST (spans aside): parentheses are added exactly where operator
precedence needs them, names that are not plain identifiers (or are keywords) get backticks, and
strings are re-escaped. It is used by tests and by the rewriter to print generated fragments.
"""

from __future__ import annotations

import re
from functools import singledispatch

from . import ast as A

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Words that would be read as something else if printed bare as a name.
_KEYWORDS = frozenset("""
    ALL AND ANY AS ASC ASCENDING BY CALL CASE COLLECT CONTAINS COUNT CREATE DELETE DESC DESCENDING
    DETACH DISTINCT ELSE END ENDS EXISTS FALSE FOREACH IN IS LIMIT MATCH MERGE NONE NOT NULL ON
    OPTIONAL OR ORDER REDUCE REMOVE RETURN SET SINGLE SKIP STARTS THEN TRUE UNION UNWIND WHEN
    WHERE WITH XOR YIELD SHORTESTPATH ALLSHORTESTPATHS SHORTEST USE LOAD FINISH OFFSET
""".split())

# Words that start another construct even when followed by '(' (NOT(x) is negation).
_NOT_FUNCTIONS = frozenset({"NOT", "CASE", "TRUE", "FALSE", "NULL"})
_BINARY_PREC = {"OR": 1, "XOR": 2, "AND": 3, "=": 5, "<>": 5, "<": 5, ">": 5, "<=": 5, ">=": 5,
                "=~": 6, "IN": 6, "STARTS WITH": 6, "ENDS WITH": 6, "CONTAINS": 6,
                "+": 7, "-": 7, "||": 7, "*": 8, "/": 8, "%": 8, "^": 9}
_ATOM = 12
_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def name(text: str) -> str:
    """An identifier, backticked when needed."""
    if _PLAIN.match(text) and text.upper() not in _KEYWORDS:
        return text
    return "`" + text.replace("`", "``") + "`"


def string(value: str) -> str:
    """A single-quoted Cypher string literal."""
    return "'" + "".join(_ESCAPES.get(c, c) for c in value) + "'"


def precedence(node: A.Expr) -> int:
    if isinstance(node, A.BinaryOp):
        return _BINARY_PREC[node.op]
    if isinstance(node, A.ComparisonChain):
        return 5
    if isinstance(node, A.UnaryOp):
        return 4 if node.op == "NOT" else 10
    if isinstance(node, (A.IsNull, A.IsType)):
        return 6
    if isinstance(node, (A.Property, A.Index, A.Slice, A.LabelPredicate)):
        return 11
    if isinstance(node, A.Literal) and isinstance(node.value, (int, float)) \
            and not isinstance(node.value, bool):
        return 10   # '1.x' and '-1' need parentheses where a postfix or unary operator applies
    return _ATOM


def _wrap(node: A.Expr, min_prec: int) -> str:
    """Render `node`, parenthesised unless it binds at least as tightly as `min_prec`."""
    text = render(node)
    return text if precedence(node) >= min_prec else f"({text})"


def _join(items) -> str:
    return ", ".join(render(i) for i in items)


@singledispatch
def render(node) -> str:
    """Cypher text for any AST node."""
    raise TypeError(f"cannot render {type(node).__name__}")


# ---------------------------------------------------------------- expressions

@render.register
def _(node: A.Literal) -> str:
    v = node.value
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return string(v)
    return repr(v)


@render.register
def _(node: A.Variable) -> str:
    return name(node.name)


@render.register
def _(node: A.Parameter) -> str:
    return "$" + (node.name if re.match(r"\w+\Z", node.name) else name(node.name))


@render.register
def _(node: A.ListLiteral) -> str:
    return f"[{_join(node.items)}]"


@render.register
def _(node: A.MapLiteral) -> str:
    return "{" + ", ".join(f"{name(k)}: {render(v)}" for k, v in node.items) + "}"


@render.register
def _(node: A.Property) -> str:
    return f"{_wrap(node.expr, 11)}.{name(node.key)}"


@render.register
def _(node: A.Index) -> str:
    return f"{_wrap(node.expr, 11)}[{render(node.index)}]"


@render.register
def _(node: A.Slice) -> str:
    lo = render(node.start) if node.start is not None else ""
    hi = render(node.end) if node.end is not None else ""
    return f"{_wrap(node.expr, 11)}[{lo}..{hi}]"


@render.register
def _(node: A.BinaryOp) -> str:
    prec = _BINARY_PREC[node.op]
    left_min = prec + 1 if prec == 5 else prec   # (a < b) < c is not the chain a < b < c
    return f"{_wrap(node.left, left_min)} {node.op} {_wrap(node.right, prec + 1)}"


@render.register
def _(node: A.ComparisonChain) -> str:
    parts = [_wrap(node.operands[0], 6)]
    for op, operand in zip(node.ops, node.operands[1:]):
        parts += [op, _wrap(operand, 6)]
    return " ".join(parts)


@render.register
def _(node: A.UnaryOp) -> str:
    if node.op == "NOT":
        return f"NOT {_wrap(node.operand, 4)}"
    operand = node.operand
    if isinstance(operand, A.Literal) and isinstance(operand.value, (int, float)) \
            and not isinstance(operand.value, bool):
        return f"{node.op}({render(operand)})"   # '-1' would re-parse as the literal -1
    return f"{node.op}{_wrap(operand, 10)}"


@render.register
def _(node: A.IsNull) -> str:
    return f"{_wrap(node.expr, 6)} IS {'NOT ' if node.negated else ''}NULL"


@render.register
def _(node: A.IsType) -> str:
    return f"{_wrap(node.expr, 6)} IS {'NOT ' if node.negated else ''}:: {node.type_name}"


@render.register
def _(node: A.LabelPredicate) -> str:
    return f"{_wrap(node.expr, 11)}:{_label(node.labels)}"


@render.register
def _(node: A.FunctionCall) -> str:
    fname = ".".join(p if _PLAIN.match(p) and p.upper() not in _NOT_FUNCTIONS else name(p)
                     for p in node.name.split("."))
    return f"{fname}({'DISTINCT ' if node.distinct else ''}{_join(node.args)})"


@render.register
def _(node: A.CountStar) -> str:
    return "count(*)"


@render.register
def _(node: A.CaseExpr) -> str:
    parts = ["CASE"]
    if node.subject is not None:
        parts.append(render(node.subject))
    for cond, result in node.whens:
        parts += ["WHEN", render(cond), "THEN", render(result)]
    if node.default is not None:
        parts += ["ELSE", render(node.default)]
    parts.append("END")
    return " ".join(parts)


def _where(expr) -> str:
    return f" WHERE {render(expr)}" if expr is not None else ""


@render.register
def _(node: A.ListComprehension) -> str:
    where = f" WHERE ({render(node.where)})" if node.where is not None else ""
    proj = f" | {render(node.projection)}" if node.projection is not None else ""
    return f"[{name(node.var.name)} IN {render(node.source)}{where}{proj}]"


@render.register
def _(node: A.PatternComprehension) -> str:
    where = f" WHERE ({render(node.where)})" if node.where is not None else ""
    return f"[{render(node.path)}{where} | {render(node.projection)}]"


@render.register
def _(node: A.Quantifier) -> str:
    return f"{node.kind}({name(node.var.name)} IN {render(node.source)}{_where(node.where)})"


@render.register
def _(node: A.Reduce) -> str:
    return (f"reduce({name(node.acc.name)} = {render(node.init)}, {name(node.var.name)} IN "
            f"{render(node.source)} | {render(node.expr)})")


@render.register
def _(node: A.MapProjection) -> str:
    items = []
    for item in node.items:
        if item.kind == "all":
            items.append(".*")
        elif item.kind == "property":
            items.append("." + name(item.key))
        elif item.kind == "variable":
            items.append(name(item.key))
        else:
            items.append(f"{name(item.key)}: {render(item.expr)}")
    return f"{name(node.var.name)} {{{', '.join(items)}}}"


@render.register
def _(node: A.PatternExpr) -> str:
    return render(node.path)


def _subquery(keyword: str, node) -> str:
    if node.query is not None:
        return f"{keyword} {{ {render(node.query)} }}"
    return f"{keyword} {{ {render(node.pattern)}{_where(node.where)} }}"


@render.register
def _(node: A.ExistsSubquery) -> str:
    return _subquery("EXISTS", node)


@render.register
def _(node: A.CountSubquery) -> str:
    return _subquery("COUNT", node)


@render.register
def _(node: A.CollectSubquery) -> str:
    return _subquery("COLLECT", node)


# ---------------------------------------------------------------- labels and patterns

def _label(node: A.LabelExpr, parent_prec: int = 0) -> str:
    if isinstance(node, A.LabelName):
        return name(node.name)
    if isinstance(node, A.LabelWildcard):
        return "%"
    if isinstance(node, A.DynamicLabel):
        return f"${'' if node.mode == 'all' else node.mode}({render(node.expr)})"
    if isinstance(node, A.LabelNot):
        return "!" + _label(node.operand, 3)
    if isinstance(node, A.LabelAnd):
        text = f"{_label(node.left, 2)}{node.op}{_label(node.right, 3)}"
        return f"({text})" if parent_prec > 2 else text
    text = f"{_label(node.left, 1)}|{_label(node.right, 2)}"
    return f"({text})" if parent_prec > 1 else text


def _props(node) -> str:
    return f" {render(node)}" if node is not None else ""


@render.register
def _(node: A.NodePattern) -> str:
    var = name(node.var.name) if node.var is not None else ""
    labels = ":" + _label(node.labels) if node.labels is not None else ""
    return f"({var}{labels}{_props(node.properties)}{_where(node.where)})"


def _bounds(low, high) -> str:
    return f"{'' if low is None else low}..{'' if high is None else high}"


@render.register
def _(node: A.RelPattern) -> str:
    inner = name(node.var.name) if node.var is not None else ""
    if node.types is not None:
        inner += ":" + _label(node.types)
    if node.length is not None:
        low, high = node.length
        inner += "*" + ("" if low is None and high is None else str(low) if low == high else _bounds(low, high))
    inner += _props(node.properties) + _where(node.where)
    body = f"-[{inner}]-" if inner else "--"
    return ("<" if node.direction in ("left", "both") else "") + body + \
        (">" if node.direction in ("right", "both") else "")


def _quantifier(q) -> str:
    if q is None:
        return ""
    low, high = q
    return "{" + (str(low) if low == high else f"{'' if low is None else low},{'' if high is None else high}") + "}"


def _elements(elements) -> str:
    return "".join(render(e) for e in elements)


@render.register
def _(node: A.QuantifiedPath) -> str:
    if len(node.elements) == 1 and isinstance(node.elements[0], A.RelPattern):
        return render(node.elements[0]) + _quantifier(node.quantifier)
    return f"({_elements(node.elements)}{_where(node.where)}){_quantifier(node.quantifier)}"


@render.register
def _(node: A.PathPattern) -> str:
    body = _elements(node.elements)
    if node.shortest in ("shortestpath", "allshortestpaths"):
        body = f"{'shortestPath' if node.shortest == 'shortestpath' else 'allShortestPaths'}({body})"
    elif node.shortest:
        body = f"{node.shortest.upper()} {body}"
    return f"{name(node.var.name)} = {body}" if node.var is not None else body


@render.register
def _(node: A.Pattern) -> str:
    return _join(node.paths)


# ---------------------------------------------------------------- clauses and queries

@render.register
def _(node: A.Match) -> str:
    hints = "".join(" " + h for h in node.hints)
    return f"{'OPTIONAL ' if node.optional else ''}MATCH {render(node.pattern)}{hints}{_where(node.where)}"


@render.register
def _(node: A.Unwind) -> str:
    return f"UNWIND {render(node.expr)} AS {name(node.var.name)}"


@render.register
def _(node: A.ReturnItem) -> str:
    return render(node.expr) + (f" AS {name(node.alias)}" if node.alias is not None else "")


@render.register
def _(node: A.SortItem) -> str:
    return render(node.expr) + (" DESC" if node.descending else "")


def _projection(keyword: str, node: A._Projection) -> str:
    items = (["*"] if node.star else []) + [render(i) for i in node.items]
    text = f"{keyword} {'DISTINCT ' if node.distinct else ''}{', '.join(items)}"
    if node.order_by:
        text += f" ORDER BY {_join(node.order_by)}"
    if node.skip is not None:
        text += f" SKIP {render(node.skip)}"
    if node.limit is not None:
        text += f" LIMIT {render(node.limit)}"
    return text


@render.register
def _(node: A.With) -> str:
    return _projection("WITH", node) + _where(node.where)


@render.register
def _(node: A.Return) -> str:
    return _projection("RETURN", node)


@render.register
def _(node: A.YieldItem) -> str:
    return name(node.field) + (f" AS {name(node.alias)}" if node.alias else "")


@render.register
def _(node: A.CallProcedure) -> str:
    text = ("OPTIONAL " if node.optional else "") + "CALL " + ".".join(name(p) for p in node.name.split("."))
    if node.args is not None:
        text += f"({_join(node.args)})"
    if node.yields is not None:
        text += " YIELD " + ("*" if node.yield_star else _join(node.yields)) + _where(node.where)
    return text


@render.register
def _(node: A.InTransactions) -> str:
    text = " IN"
    if node.concurrency is not None:
        text += f" {render(node.concurrency)}"
    text += " CONCURRENT TRANSACTIONS" if node.concurrent else " TRANSACTIONS"
    if node.batch is not None:
        text += f" OF {render(node.batch)} ROWS"
    if node.on_error:
        text += f" ON ERROR {node.on_error}"
    if node.report is not None:
        text += f" REPORT STATUS AS {name(node.report.name)}"
    return text


@render.register
def _(node: A.CallSubquery) -> str:
    text = ("OPTIONAL " if node.optional else "") + "CALL "
    if node.scope is not None:
        text += "(" + ", ".join("*" if v == "*" else name(v.name) for v in node.scope) + ") "
    text += f"{{ {render(node.query)} }}"
    return text + (render(node.in_transactions) if node.in_transactions is not None else "")


@render.register
def _(node: A.Create) -> str:
    return f"CREATE {render(node.pattern)}"


@render.register
def _(node: A.SetItem) -> str:
    if node.kind == "labels":
        return f"{render(node.target)}:{_label(node.labels)}"
    return f"{render(node.target)} {node.op} {render(node.value)}"


@render.register
def _(node: A.SetClause) -> str:
    return f"SET {_join(node.items)}"


@render.register
def _(node: A.MergeAction) -> str:
    return f"ON {node.on} SET {_join(node.items)}"


@render.register
def _(node: A.Merge) -> str:
    return " ".join([f"MERGE {render(node.path)}"] + [render(a) for a in node.actions])


@render.register
def _(node: A.RemoveItem) -> str:
    if node.kind == "labels":
        return f"{render(node.target)}:{_label(node.labels)}"
    return render(node.target)


@render.register
def _(node: A.Remove) -> str:
    return f"REMOVE {_join(node.items)}"


@render.register
def _(node: A.Delete) -> str:
    return f"{'DETACH ' if node.detach else ''}DELETE {_join(node.exprs)}"


@render.register
def _(node: A.Foreach) -> str:
    body = " ".join(render(c) for c in node.clauses)
    return f"FOREACH ({name(node.var.name)} IN {render(node.source)} | {body})"


@render.register
def _(node: A.Use) -> str:
    return f"USE {node.graph}"


@render.register
def _(node: A.LoadCSV) -> str:
    text = f"LOAD CSV {'WITH HEADERS ' if node.with_headers else ''}FROM {render(node.source)} AS {name(node.var.name)}"
    if node.field_terminator is not None:
        text += f" FIELDTERMINATOR {string(node.field_terminator)}"
    return text


@render.register
def _(node: A.Finish) -> str:
    return "FINISH"


@render.register
def _(node: A.Command) -> str:
    return node.text


@render.register
def _(node: A.SingleQuery) -> str:
    return " ".join(render(c) for c in node.clauses)


@render.register
def _(node: A.Query) -> str:
    text = render(node.parts[0])
    for union_all, part in zip(node.union_all, node.parts[1:]):
        text += f" UNION {'ALL ' if union_all else ''}{render(part)}"
    text = f"{node.prefix} {text}" if node.prefix else text
    return f"{node.options} {text}" if node.options else text
