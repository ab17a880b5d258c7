"""Lucene's query syntax (what `db.index.fulltext.queryNodes` takes) -> RediSearch's (FalkorDB's
fulltext engine).

The two differ where it matters: Lucene joins bare terms with OR (`Lovelace London` finds either),
RediSearch with AND; Lucene writes `name:London`, `ada AND lovelace`, `NOT x`, `+must`,
`roam~` (edit distance 2), `term^2`; RediSearch `@name:London`, `ada lovelace`, `-x`, `%%roam%%`.
One level of a Lucene query is a boolean query: required clauses (`+x`, either side of AND) must
match, prohibited ones (`-x`, `NOT x`) must not, and the rest (should) need to match only when
nothing is required - which is how Lucene's classic parser (default operator OR) reads it.
Boosts only weigh scores and are dropped (RediSearch's scores are not Lucene's anyway).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from proxy.errors import argument_error

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<phrase>"(?:[^"\\]|\\.)*")
  | (?P<open>\() | (?P<close>\))
  | (?P<and>&&) | (?P<or>\|\|)
  | (?P<sign>[+\-!](?=\S))
  | (?P<word>(?:[^\s()"\\^~:]|\\.)+)
  | (?P<colon>:)
  | (?P<fuzzy>~\d*(?:\.\d+)?)
  | (?P<boost>\^\d+(?:\.\d+)?)
""", re.X)
#: Characters RediSearch reads as syntax inside a term: escaped with a backslash.
_SPECIAL = re.compile(r"([,.<>{}\[\]\"':;!@#$%^&()\-+=~|/\\])")


@dataclass
class _Clause:
    text: str
    occur: str = "should"           # "must", "should" or "not"


class _Parser:
    def __init__(self, query: str):
        found = list(_TOKEN.finditer(query))
        if "".join(m.group() for m in found) != query:
            raise argument_error(f"Cannot parse the fulltext query {query!r} (Lucene query syntax).")
        self.tokens = [(m.lastgroup, m.group()) for m in found if m.lastgroup != "space"]
        self.at = 0

    def peek(self, offset: int = 0) -> tuple[str, str] | None:
        index = self.at + offset
        return self.tokens[index] if index < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.tokens[self.at]
        self.at += 1
        return token

    def query(self) -> str:
        """A boolean query up to `)` or the end, in RediSearch's syntax."""
        clauses: list[_Clause] = []
        conjunction = False
        while (token := self.peek()) is not None and token[0] != "close":
            kind, text = token
            if kind == "and" or (kind == "word" and text == "AND"):
                self.take()
                conjunction = True
                if clauses and clauses[-1].occur == "should":
                    clauses[-1].occur = "must"
                continue
            if kind == "or" or (kind == "word" and text == "OR"):
                self.take()
                continue
            clause = self.clause()
            if conjunction and clause.occur == "should":
                clause.occur = "must"
            conjunction = False
            clauses.append(clause)
        return _combine(clauses)

    def clause(self) -> _Clause:
        occur = "should"
        kind, text = self.peek()
        if kind == "sign" or (kind == "word" and text == "NOT"):
            self.take()
            occur = "must" if text == "+" else "not"
        field = ""
        if self.peek() and self.peek()[0] == "word" and self.peek(1) and self.peek(1)[0] == "colon":
            field = "@" + self.take()[1] + ":"
            self.take()
        body = self.operand()
        while self.peek() and self.peek()[0] == "boost":
            self.take()
        return _Clause(field + body, occur)

    def operand(self) -> str:
        token = self.peek()
        if token is None:
            raise argument_error("The fulltext query ends where a term was expected.")
        kind, text = self.take()
        if kind == "open":
            inner = self.query()
            if not self.peek() or self.take()[0] != "close":
                raise argument_error("The fulltext query has an unclosed '('.")
            return f"({inner})"
        if kind == "phrase":
            words = re.findall(r"(?:[^\s\\]|\\.)+", text[1:-1])
            return '"' + " ".join(_escape(w) for w in words) + '"'
        if kind != "word":
            raise argument_error(f"Unexpected {text!r} in the fulltext query.")
        fuzzy = self.take()[1] if self.peek() and self.peek()[0] == "fuzzy" else None
        return _term(text, fuzzy)


def _term(word: str, fuzzy: str | None) -> str:
    if fuzzy is not None:
        distance = 2 if fuzzy == "~" else max(0, min(2, round(float(fuzzy[1:]))))
        return "%" * distance + _escape(word) + "%" * distance if distance else _escape(word)
    if "?" in word or "*" in word[:-1]:
        raise argument_error(f"The wildcard in {word!r} is not available on the embedded database's "
                             "fulltext index: only a trailing * (a prefix, like lov*) is.")
    if word.endswith("*"):
        return _escape(word[:-1]) + "*"
    return _escape(word)


def _escape(word: str) -> str:
    return _SPECIAL.sub(r"\\\1", re.sub(r"\\(.)", r"\1", word))


def _combine(clauses: list[_Clause]) -> str:
    must = [c.text for c in clauses if c.occur == "must"]
    should = [c.text for c in clauses if c.occur == "should"]
    excluded = [c.text for c in clauses if c.occur == "not"]
    if not must and not should:
        raise argument_error("A fulltext query of only excluded terms matches nothing (Lucene); "
                             "add a term to search for.")
    positive = " ".join(f"({t})" for t in must) if must else "(" + " | ".join(f"({t})" for t in should) + ")"
    return " ".join([positive] + [f"-({t})" for t in excluded])


def translate(query: str) -> str:
    """A Lucene query string as RediSearch's query."""
    if query.strip() in ("*", "*:*"):              # every document (mcp-neo4j-memory's read_graph)
        return "*"
    parser = _Parser(query)
    if not parser.tokens:
        raise argument_error("The fulltext query is empty.")
    text = parser.query()
    if parser.peek() is not None:
        raise argument_error("The fulltext query has an unmatched ')'.")
    return text
