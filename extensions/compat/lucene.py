"""Lucene's query syntax (what `db.index.fulltext.queryNodes` takes) -> RediSearch's (FalkorDB's
fulltext engine), and the same query evaluated on property values FalkorDB does not index.

The two differ where it matters: Lucene joins bare terms with OR (`Lovelace London` finds either),
RediSearch with AND; Lucene writes `name:London`, `ada AND lovelace`, `NOT x`, `+must`,
`roam~` (edit distance 2), `term^2`; RediSearch `@name:London`, `ada lovelace`, `-x`, `%%roam%%`.
One level of a Lucene query is a boolean query: required clauses (`+x`, either side of AND) must
match, prohibited ones (`-x`, `NOT x`) must not, and the rest (should) need to match only when
nothing is required - which is how Lucene's classic parser (default operator OR) reads it.
Boosts only weigh scores and are dropped (RediSearch's scores are not Lucene's anyway).

FalkorDB's fulltext index skips list properties, where Neo4j indexes each string of the list
(mcp-neo4j-memory keeps `observations` so); `matches` evaluates a parsed query on such a node's
values: words are lower-cased runs of letters and digits, as Lucene's standard analyzer splits them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from core.errors import argument_error

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
_WORDS = re.compile(r"\w+")


@dataclass
class Term:
    """One word: `kind` is "word", "prefix" (`lov*`) or "fuzzy" (`roam~`, within `distance` edits)."""

    field: str | None
    word: str
    kind: str = "word"
    distance: int = 0


@dataclass
class Phrase:
    field: str | None
    words: list[str]


@dataclass
class Bool:
    """A boolean query: (occur, clause) pairs, occur "must", "should" or "not"."""

    clauses: list[tuple[str, Term | Phrase | Bool]] = field(default_factory=list)


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

    def query(self, field_name: str | None = None) -> Bool:
        """A boolean query up to `)` or the end."""
        clauses: list[list] = []
        conjunction = False
        while (token := self.peek()) is not None and token[0] != "close":
            kind, text = token
            if kind == "and" or (kind == "word" and text == "AND"):
                self.take()
                conjunction = True
                if clauses and clauses[-1][0] == "should":
                    clauses[-1][0] = "must"
                continue
            if kind == "or" or (kind == "word" and text == "OR"):
                self.take()
                continue
            occur, clause = self.clause(field_name)
            if conjunction and occur == "should":
                occur = "must"
            conjunction = False
            clauses.append([occur, clause])
        return Bool([(occur, clause) for occur, clause in clauses])

    def clause(self, field_name: str | None) -> tuple[str, Term | Phrase | Bool]:
        occur = "should"
        kind, text = self.peek()
        if kind == "sign" or (kind == "word" and text == "NOT"):
            self.take()
            occur = "must" if text == "+" else "not"
        if self.peek() and self.peek()[0] == "word" and self.peek(1) and self.peek(1)[0] == "colon":
            field_name = _unescape(self.take()[1])
            self.take()
        body = self.operand(field_name)
        while self.peek() and self.peek()[0] == "boost":
            self.take()
        return occur, body

    def operand(self, field_name: str | None) -> Term | Phrase | Bool:
        if self.peek() is None:
            raise argument_error("The fulltext query ends where a term was expected.")
        kind, text = self.take()
        if kind == "open":
            inner = self.query(field_name)
            if not self.peek() or self.take()[0] != "close":
                raise argument_error("The fulltext query has an unclosed '('.")
            return inner
        if kind == "phrase":
            return Phrase(field_name, re.findall(r"(?:[^\s\\]|\\.)+", text[1:-1]))
        if kind != "word":
            raise argument_error(f"Unexpected {text!r} in the fulltext query.")
        fuzzy = self.take()[1] if self.peek() and self.peek()[0] == "fuzzy" else None
        return _term(field_name, text, fuzzy)


def _term(field_name: str | None, word: str, fuzzy: str | None) -> Term:
    if fuzzy is not None:
        distance = 2 if fuzzy == "~" else max(0, min(2, round(float(fuzzy[1:]))))
        return Term(field_name, word, "fuzzy" if distance else "word", distance)
    if "?" in word or "*" in word[:-1]:
        raise argument_error(f"The wildcard in {word!r} is not available on the embedded database's "
                             "fulltext index: only a trailing * (a prefix, like lov*) is.")
    if word.endswith("*"):
        return Term(field_name, word[:-1], "prefix")
    return Term(field_name, word)


def _unescape(word: str) -> str:
    return re.sub(r"\\(.)", r"\1", word)


def _escape(word: str) -> str:
    return _SPECIAL.sub(r"\\\1", _unescape(word))


def parse(query: str) -> Bool | None:
    """A Lucene query string's tree; None for `*` (every document)."""
    if query.strip() in ("*", "*:*"):              # mcp-neo4j-memory's read_graph
        return None
    parser = _Parser(query)
    if not parser.tokens:
        raise argument_error("The fulltext query is empty.")
    tree = parser.query()
    if parser.peek() is not None:
        raise argument_error("The fulltext query has an unmatched ')'.")
    _check(tree)
    return tree


def _check(tree: Bool) -> None:
    if not any(occur != "not" for occur, _ in tree.clauses):
        raise argument_error("A fulltext query of only excluded terms matches nothing (Lucene); "
                             "add a term to search for.")
    for _, clause in tree.clauses:
        if isinstance(clause, Bool):
            _check(clause)

# ------------------------------------------------------------------ RediSearch


def translate(query: str) -> str:
    """A Lucene query string as RediSearch's query."""
    tree = parse(query)
    return "*" if tree is None else _redisearch(tree)


def _redisearch(tree: Bool) -> str:
    def text(clause) -> str:
        if isinstance(clause, Bool):
            return f"({_redisearch(clause)})"
        prefix = f"@{_escape(clause.field)}:" if clause.field else ""
        if isinstance(clause, Phrase):
            return prefix + '"' + " ".join(_escape(w) for w in clause.words) + '"'
        word = _escape(clause.word)
        return prefix + {"prefix": f"{word}*", "fuzzy": "%" * clause.distance + word + "%" * clause.distance,
                         "word": word}[clause.kind]

    must = [text(c) for occur, c in tree.clauses if occur == "must"]
    should = [text(c) for occur, c in tree.clauses if occur == "should"]
    excluded = [text(c) for occur, c in tree.clauses if occur == "not"]
    positive = " ".join(f"({t})" for t in must) if must else "(" + " | ".join(f"({t})" for t in should) + ")"
    return " ".join([positive] + [f"-({t})" for t in excluded])

# ------------------------------------------------------------------ evaluation on unindexed values


def matches(tree: Bool | None, values: dict[str, list[str]]) -> int:
    """How many clauses of `tree` a document matches (0: it does not match); `values` are its
    strings per property, each string of a list on its own."""
    if tree is None:
        return 1
    documents = {key: [_WORDS.findall(text.lower()) for text in texts] for key, texts in values.items()}
    return _score(tree, documents)


def _score(tree: Bool, documents: dict[str, list[list[str]]]) -> int:
    scores = {id(c): _clause_score(c, documents) for _, c in tree.clauses}
    if any(scores[id(c)] for occur, c in tree.clauses if occur == "not"):
        return 0
    if not all(scores[id(c)] for occur, c in tree.clauses if occur == "must"):
        return 0
    positive = [scores[id(c)] for occur, c in tree.clauses if occur != "not"]
    musts = any(occur == "must" for occur, _ in tree.clauses)
    return sum(positive) if musts or any(positive) else 0


def _clause_score(clause, documents: dict[str, list[list[str]]]) -> int:
    if isinstance(clause, Bool):
        return _score(clause, documents)
    fields = [documents.get(clause.field, [])] if clause.field else list(documents.values())
    strings = [words for texts in fields for words in texts]
    if isinstance(clause, Phrase):
        wanted = [w for word in clause.words for w in _WORDS.findall(_unescape(word).lower())]
        return int(any(words[i:i + len(wanted)] == wanted for words in strings for i in range(len(words))))
    wanted = _WORDS.findall(_unescape(clause.word).lower())
    if len(wanted) != 1:                # `a-b`: the words in a row, as the analyzer splits them
        return _clause_score(Phrase(clause.field, wanted), documents)
    return int(any(_word_matches(clause, wanted[0], w) for words in strings for w in words))


def _word_matches(term: Term, wanted: str, word: str) -> bool:
    if term.kind == "prefix":
        return word.startswith(wanted)
    if term.kind == "fuzzy":
        return _edits(wanted, word, term.distance) <= term.distance
    return word == wanted


def _edits(a: str, b: str, limit: int) -> int:
    """Levenshtein distance of a and b (anything past `limit` reported as limit + 1)."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]
