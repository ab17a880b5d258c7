"""text_score's parts against independent implementations: the encoder against model2vec, BM25
against bm25s, and the store's disk cache and refresh rules on a stand-in graph."""

from __future__ import annotations

import asyncio
from pathlib import Path

import bm25s
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from model2vec import StaticModel

from extensions.registry import GraphContext
from extensions.text.encoders import DEFAULT_MODEL, load_encoder
from extensions.text.lexical import BM25, K1, terms
from extensions.text.store import COSINE_WEIGHT, TextStore, _DiskCache

TEXTS = ["The field is produced by pressure depletion.",
         "Oil is exported by shuttle tankers from the FPSO.",
         "Gas is piped to Kårstø; condensate goes to Sture.",
         "falling crude output", "football match", "", "Ünïcödé ✓ and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢"]


@pytest.fixture(scope="module")
def encoder():
    return load_encoder()


def test_static_encoder_matches_model2vec(encoder):
    vectors, _ = encoder.encode(TEXTS)
    reference = StaticModel.from_pretrained(str(DEFAULT_MODEL)).encode(TEXTS).astype(np.float32)
    norms = np.linalg.norm(reference, axis=1, keepdims=True)
    reference = np.divide(reference, norms, out=np.zeros_like(reference), where=norms > 0)
    assert np.allclose(vectors, reference, atol=2e-3)          # model2vec returns float16
    assert np.allclose(np.linalg.norm(vectors[:5], axis=1), 1.0, atol=1e-5)
    assert not vectors[5].any()                               # no tokens: the zero vector


def test_semantic_separation(encoder):
    (query, crude, football), _ = encoder.encode(["oil production decline", "falling crude output",
                                                  "football match"])
    assert query @ crude > query @ football + 0.15


def test_bm25_matches_bm25s(encoder):
    _, tokens = encoder.encode(TEXTS[:5])
    ours = BM25(tokens)
    reference = bm25s.BM25(method="lucene", k1=K1, b=0.75)
    reference.index([[str(t) for t in doc] for doc in tokens], show_progress=False)
    for query in ("crude oil exported by tankers", "pressure depletion", "gas to Kårstø"):
        (q,) = encoder.encode([query])[1]
        expected = reference.get_scores([str(t) for t in q])
        got = ours.scores(q)
        # ours is normalised by its upper bound: the ratios between documents are BM25's
        nonzero = expected > 0
        assert (got[~nonzero] == 0).all()
        assert np.allclose(got[nonzero] / got[nonzero].max(), expected[nonzero] / expected[nonzero].max(),
                           rtol=1e-5)
        assert 0 <= got.max() < 1


def test_terms_are_stemmed_words():
    injection, injected, kvitebjorn, empty = terms(["Water injection", "water was INJECTED", "Kvitebjørn", ""])
    assert injection.tolist() == [injected[0], injected[2]]          # water, inject; "was" is its own
    assert len(set(injected.tolist())) == 3 and len(empty) == 0
    assert terms(["kvitebjørn's"])[0][0] == kvitebjorn[0]            # case folded, the same id each call
    assert terms(["cat"])[0][0] not in terms(["catastrophizing"])[0]  # no word pieces
    assert all(0 <= t < 2**62 for t in (*injection.tolist(), *kvitebjorn.tolist()))


@given(st.lists(st.tuples(st.binary(min_size=16, max_size=16),
                          st.lists(st.integers(0, 2**62 - 1), max_size=20)), max_size=30, unique_by=lambda t: t[0]))
@settings(max_examples=40, deadline=None)
def test_disk_cache_round_trip(tmp_path_factory, entries):
    path = tmp_path_factory.mktemp("cache") / "Label" / "text.npz"
    hashes = [h for h, _ in entries]
    tokens = [np.array(t, dtype=np.int64) for _, t in entries]
    vectors = np.random.default_rng(len(entries)).random((len(entries), 4), dtype=np.float32)
    _DiskCache(path).save(hashes, vectors, tokens)
    rows, got_vectors, got_tokens = _DiskCache(path).load()
    assert rows == {h: i for i, h in enumerate(hashes)}
    assert np.array_equal(got_vectors, vectors)
    assert [t.tolist() for t in got_tokens] == [t.tolist() for t in tokens]
    assert list(path.parent.iterdir()) == [path]               # the temp file was renamed away


class _Graph:
    """A stand-in for the database: nodes of one label with a `text` property."""

    def __init__(self, texts: dict[int, object]):
        self.texts = texts
        self.reads = 0

    def context(self, state) -> GraphContext:
        async def read(query: str, params: dict):
            self.reads += 1
            return [[node_id, value] for node_id, value in self.texts.items() if value is not None]
        return GraphContext("neo4j", state, read)


class _CountingEncoder:
    def __init__(self, inner):
        self.inner, self.name, self.dim, self.encoded = inner, inner.name, inner.dim, []

    def encode(self, texts):
        self.encoded += list(texts)
        return self.inner.encode(texts)


def _store(tmp_path: Path, encoder) -> TextStore:
    store = TextStore(tmp_path)
    store._encoder = _CountingEncoder(encoder)
    return store


def test_store_embeds_each_text_once_and_refreshes_on_a_new_state(tmp_path, encoder):
    graph = _Graph({1: "gas export", 2: "oil export", 3: "gas export", 4: 42, 5: None})
    store = _store(tmp_path, encoder)
    index = asyncio.run(store.index(graph.context(1), "Doc", "text"))
    assert index.ids.tolist() == [1, 2, 3] and index.others == {4: 42}
    assert sorted(store._encoder.encoded) == ["gas export", "oil export"]     # duplicates once
    assert asyncio.run(store.index(graph.context(1), "Doc", "text")) is index  # same state: no read
    assert graph.reads == 1

    graph.texts[2] = "water injection"
    refreshed = asyncio.run(store.index(graph.context(2), "Doc", "text"))
    assert store._encoder.encoded[2:] == ["water injection"]                   # only the new text
    query_vector, query_tokens = store.queries(["water injection"])["water injection"]
    scores = refreshed.scores(query_vector, query_tokens)
    lexical = refreshed.lexical.scores(query_tokens)
    assert scores[1] == pytest.approx(COSINE_WEIGHT * 1.0 + (1 - COSINE_WEIGHT) * lexical[1], rel=1e-5)
    assert scores[1] > scores[0] and lexical[0] == 0

    # a restart: a new store on the same directory embeds nothing
    again = _store(tmp_path, encoder)
    restored = asyncio.run(again.index(graph.context(3), "Doc", "text"))
    assert again._encoder.encoded == []
    assert np.array_equal(restored.vectors, refreshed.vectors)


def test_store_keeps_nothing_for_a_transaction_that_wrote(tmp_path, encoder):
    graph = _Graph({1: "uncommitted text"})
    store = _store(tmp_path, encoder)
    asyncio.run(store.index(graph.context(None), "Doc", "text"))
    asyncio.run(store.index(graph.context(None), "Doc", "text"))
    assert graph.reads == 2                                  # read again each time
    assert not any(tmp_path.rglob("*.npz"))                  # and nothing written to disk


def test_free_corpus_is_kept_for_the_same_texts(tmp_path, encoder):
    store = _store(tmp_path, encoder)
    texts = ["gas export", "oil export", "water injection"]
    corpus = store.free_corpus(texts)
    assert store.free_corpus(list(texts)) is corpus                      # equal texts: the same corpus
    vector, query_terms = store.queries(["gas"])["gas"]
    alone = [BM25([text_terms]).scores(query_terms)[0] for text_terms in terms(texts)]   # each its own corpus
    assert corpus.scores(vector, query_terms) == pytest.approx(
        COSINE_WEIGHT * (corpus.vectors @ vector) + (1 - COSINE_WEIGHT) * np.array(alone))
    for i in range(8):                                                  # eight newer corpora evict it
        store.free_corpus([f"text {i}"])
    assert store.free_corpus(texts) is not corpus
    assert all(store._encoder.encoded.count(text) == 1 for text in texts)    # but its texts stay embedded
