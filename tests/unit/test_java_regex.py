"""The Java -> Oniguruma translation behind `=~` on the embedded database, run on a real FalkorDB
and compared with Java's own answers: the table tests/data/java_regex_cases.json (made by
scripts/java_regex_table.py on a JVM), and, where a Java 21+ is installed, random patterns sent
to the JVM directly."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extensions.bridges.java_regex import InvalidRegex, Untranslatable, translate
from core.backend import TxConfig
from proxy.backends.falkordb.backend import FalkorDBBackend

REPO = Path(__file__).resolve().parents[2]
TABLE = json.loads((REPO / "tests" / "data" / "java_regex_cases.json").read_text())["cases"]
#: Patterns Java compiles that have no faithful Oniguruma form: refused, never matched differently.
UNTRANSLATABLE = {r"\p{InGreek}", r"(?U)\w", r"\X", r"\b{g}", r"(a)(?i)\1", "a{100001}", r"(a|\1b)*"}

_spec = importlib.util.spec_from_file_location("java_regex_table", REPO / "scripts" / "java_regex_table.py")
java_table = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(java_table)
JAVA = java_table.find_java(21)
needs_java = pytest.mark.skipif(JAVA is None, reason="no Java 21 or newer installed")


@pytest.fixture(scope="module")
async def falkordb(embedded):
    return embedded


async def oniguruma(backend: FalkorDBBackend, pairs: list[tuple[str, str]]) -> list[bool]:
    """Whether FalkorDB's string.matchRegEx finds the translated pattern in each input."""
    result = await backend.run("UNWIND $cases AS c RETURN size(string.matchRegEx(c[1], c[0])) > 0",
                               {"cases": [[translate(p), s] for p, s in pairs]}, TxConfig(), None)
    return [row[0] for row in await result.fetch(-1)]


async def test_translation_matches_java_on_every_case_of_the_table(falkordb):
    runnable = []
    for pattern, text, java in TABLE:
        if pattern in UNTRANSLATABLE:
            with pytest.raises(Untranslatable):
                translate(pattern)
        elif java == "error":
            with pytest.raises(InvalidRegex):
                translate(pattern)
        else:
            runnable.append((pattern, text, java == "true"))
    got = await oniguruma(falkordb, [(p, s) for p, s, _ in runnable])
    wrong = [(p, s, want) for (p, s, want), have in zip(runnable, got) if have != want]
    assert not wrong and len(runnable) > 200


def test_table_cases_cover_the_tricky_parts():
    patterns = {p for p, _, _ in TABLE}
    for construct in (r"\b", r"(?i)", r"(?iu)", r"\w", ".", "$", r"\p{", "&&", r"\Q", r"(?x)", r"\k<", r"\R", "(?m)"):
        assert any(construct in p for p in patterns), construct


@needs_java
def test_table_is_what_the_jvm_answers():
    answers = java_table.run_java(JAVA, [(p, s) for p, s, _ in TABLE])
    assert [a.split(" ")[0] for a in answers] == [java for _, _, java in TABLE]


_ATOMS = ["a", "b", "A", "é", "É", "1", " ", "_", ".", r"\w", r"\W", r"\d", r"\s", r"\b", r"\B", "[ab]", "[^a]",
          "[a-cé]", "[A-Z]", r"\p{L}", r"\p{Lower}", "^", "$", r"\n", "(?i)", "(?-i)", "(?m)", "(?s)", "(?iu)",
          "(?d)", r"\R", r"\h", r"\v", "(?<=a)", "(?!b)", r"(?=\w)", r"\Qa.\E", r"\p{IsLatin}", r"[^\s\d]",
          r"[\w&&[^\d]]", r"\u00e9", "(?i)[a-c]", "(?iu)[é-ê]", r"\1", "(?<g>a)", r"\k<g>", r"\Z", r"\z", "(?>a|ab)"]
_pattern = st.recursive(
    st.sampled_from(_ATOMS),
    lambda inner: st.one_of(
        st.lists(inner, min_size=2, max_size=4).map("".join),
        inner.map(lambda p: f"({p})"), inner.map(lambda p: f"(?:{p})"),
        st.tuples(inner, inner).map(lambda t: f"{t[0]}|{t[1]}"),
        st.tuples(inner, st.sampled_from(["*", "+", "?", "{2}", "*?", "++", "{1,2}"])).map(
            lambda t: f"(?:{t[0]}){t[1]}")),
    max_leaves=6)
_inputs = st.text(alphabet="aAbé1 _\nÉ\r", max_size=6)


def _translatable(pattern: str) -> bool:
    try:
        translate(pattern)
    except Untranslatable:
        return False
    return True


@needs_java
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(_pattern, _inputs), min_size=40, max_size=40))
async def test_random_patterns_match_as_in_java(falkordb, pairs):
    answers = await asyncio.to_thread(java_table.run_java, JAVA, pairs)    # the loop keeps serving
    runnable = [(p, s, a == "true") for (p, s), a in zip(pairs, answers) if not a.startswith("error")
                and _translatable(p)]
    got = await oniguruma(falkordb, [(p, s) for p, s, _ in runnable])
    assert [(p, s, have) for (p, s, _), have in zip(runnable, got)] == runnable
