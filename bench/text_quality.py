"""text_score's ranking quality on two labelled sets, in process (no server, no database).

Run: python -m bench.text_quality [--text-model DIR]

- *Sodir*: the demo graph's 710 FieldDescription texts (a few paragraphs each) and 50 queries
  each about one of them (tests/data/text_score_relevance.csv).
- *Short*: 160 one-sentence node descriptions in four domains (psychology, software, geology,
  finance) and 68 queries a person would type, with 1-3 relevant items each
  (tests/data/text_short/, see its NOTE.md). The text scored is `description + ' ' + name`,
  as the attention-score application writes it; ranked both as a stored property (BM25 over
  the set) and as an expression (each text its own BM25 corpus).

For each, cosine only, BM25 only and the hybrid text_score uses: P@1 (the first result is
relevant), recall@5 (share of the relevant items in the top 5) and MRR (1 / rank of the first
relevant item).
"""

from __future__ import annotations

import argparse
import csv
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from extensions.text import TextStore
from extensions.text.store import COSINE_WEIGHT

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
SODIR_TEXTS = DATA.parent.parent / "examples" / "sodir" / "sodir_current" / "subcset_field_description.csv.gz"
SODIR_LABELS = DATA / "text_score_relevance.csv"
SHORT = DATA / "text_short"


@dataclass(frozen=True)
class LabelledSet:
    name: str
    texts: list[str]
    queries: list[tuple[str, frozenset[int]]]        # (query, positions of its relevant texts)


def sodir_set() -> LabelledSet:
    frame = pd.read_csv(SODIR_TEXTS, encoding="utf-8-sig")
    titles = (frame.fldName + " – " + frame.fldDescriptionHeading).tolist()
    with SODIR_LABELS.open(encoding="utf-8") as handle:
        queries = [(row["query"], frozenset([titles.index(row["relevant"])])) for row in csv.DictReader(handle)]
    return LabelledSet("Sodir FieldDescription", frame.fldDescriptionText.tolist(), queries)


def short_set() -> LabelledSet:
    items = pd.read_csv(SHORT / "items.csv", encoding="utf-8")
    position = {item: i for i, item in enumerate(items.id)}
    with (SHORT / "queries.csv").open(encoding="utf-8") as handle:
        queries = [(row["query"], frozenset(position[r] for r in row["relevant"].split(";")))
                   for row in csv.DictReader(handle)]
    return LabelledSet("short descriptions", (items.description + " " + items.name).tolist(), queries)


def metrics(scores: np.ndarray, relevant: frozenset[int]) -> tuple[float, float, float]:
    """(P@1, recall@5, reciprocal rank) of one query's scores (ties count against it)."""
    ranks = sorted(int((scores > scores[i]).sum() + (scores == scores[i]).sum()) for i in relevant)
    return float(ranks[0] == 1), sum(rank <= 5 for rank in ranks) / len(relevant), 1.0 / ranks[0]


def quality(store: TextStore, labelled: LabelledSet, expression: bool = False) -> dict[str, tuple[float, ...]]:
    """{scoring: (P@1, recall@5, MRR)}: texts as a stored property, or as an expression."""
    if expression:
        corpus = store.free_corpus(labelled.texts)
        vectors, lexical = corpus.vectors, corpus.lexical.own_corpus_scores
    else:
        index = store._build("bench", "Quality", "text", False, list(enumerate(labelled.texts)), keep=False)
        vectors, lexical = index.vectors, index.lexical.scores
    queries = store.queries([query for query, _ in labelled.queries])
    table = {}
    for name, weight in (("cosine only", 1.0), ("BM25 only", 0.0), (f"hybrid ({COSINE_WEIGHT:g})", COSINE_WEIGHT)):
        rows = []
        for query, relevant in labelled.queries:
            vector, tokens = queries[query]
            rows.append(metrics(weight * (vectors @ vector) + (1 - weight) * lexical(tokens), relevant))
        table[name] = tuple(np.mean(rows, axis=0).tolist())
    return table


def report(store: TextStore) -> dict[str, dict[str, tuple[float, ...]]]:
    """Prints and returns the tables of both sets."""
    tables = {}
    short = short_set()
    for title, labelled, expression in ((None, sodir_set(), False), ("as a property", short, False),
                                        ("as an expression", short, True)):
        heading = f"{labelled.name}{f' ({title})' if title else ''}"
        print(f"{heading}: {len(labelled.texts)} texts, {len(labelled.queries)} queries; P@1 / recall@5 / MRR")
        tables[heading] = quality(store, labelled, expression)
        for name, (p1, r5, mrr) in tables[heading].items():
            print(f"  {name:<14} {p1:.2f} / {r5:.2f} / {mrr:.2f}")
    return tables


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--text-model", default=None, metavar="DIR", help="a model directory (default: shipped)")
    args = parser.parse_args(argv or [])
    store = TextStore(Path("/nonexistent"), args.text_model)
    print(f"model: {store.encoder.name}")
    return report(store)


if __name__ == "__main__":
    main(sys.argv[1:])
