"""BM25 over stemmed words: the lexical half of text_score's hybrid score.

The static model alone separates close topics only barely (the distilled vectors know that
"crude" is oil, but not that a query naming "Kvitebjørn" wants the one text that says
Kvitebjørn); BM25 rewards exactly those rare shared words. On the labelled FieldDescription
set (tests/data/text_score_relevance.csv) the mix lifts recall@5 from 0.60 to 0.86 (README).

Terms are whole words (Unicode word characters, lower-cased) stemmed by Snowball's English stemmer
(PyStemmer), not the model's word pieces: pieces matched fragments ("cat", "##zing") of
unrelated words, and "injection" did not meet "injected". On both labelled sets stemmed words
raise MRR over word pieces (bench/text_quality.py, README). A term is a stable 62-bit id (a
hash of the stem), so term lists can be kept on disk next to the vectors.

The index is an inverted list sorted by term (postings: term, document, term frequency), so
scoring a query is a `searchsorted` and one vectorised add per distinct query term: no loop
over documents. Scores are divided by their upper bound (every query term with infinite
frequency), so they lie in [0, 1) and do not depend on which other documents a query happens
to touch.
"""

from __future__ import annotations

import hashlib
import re
import threading
from typing import Sequence

import numpy as np
import Stemmer

K1, B = 1.2, 0.75
#: Names the terms' definition in cache paths (a change of tokenisation must change it).
TERMS = "stem1"
_WORD = re.compile(r"\w+")
_local = threading.local()          # a PyStemmer stemmer must not be shared between threads


def terms(texts: Sequence[str]) -> list[np.ndarray]:
    """Each text's terms, in order: its stemmed words as int64 ids."""
    words = [_WORD.findall(text.lower()) for text in texts]
    stemmer = getattr(_local, "stemmer", None) or _new_stemmer()
    stems = stemmer.stemWords([word for text_words in words for word in text_words])
    ids = {stem: _term_id(stem) for stem in set(stems)}
    flat = np.fromiter((ids[stem] for stem in stems), dtype=np.int64, count=len(stems))
    return np.split(flat, np.cumsum([len(text_words) for text_words in words])[:-1]) if texts else []


def _new_stemmer() -> Stemmer.Stemmer:
    _local.stemmer = Stemmer.Stemmer("english")
    return _local.stemmer


def _term_id(stem: str) -> int:
    # 62 bits: `id + 1` (a searchsorted bound) stays inside int64
    return int.from_bytes(hashlib.blake2b(stem.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little") >> 2


class BM25:
    """Postings and statistics of one set of documents (term-id lists)."""

    def __init__(self, documents: Sequence[np.ndarray]):
        self.size = len(documents)
        lengths = np.fromiter(map(len, documents), dtype=np.int64, count=self.size)
        doc_of = np.repeat(np.arange(self.size, dtype=np.int64), lengths)
        tokens = np.concatenate(documents).astype(np.int64) if self.size else np.empty(0, np.int64)
        # one int64 key per (term's rank, document), so the postings come from a 1-D sort
        distinct, rank = np.unique(tokens, return_inverse=True)
        pairs, tf = np.unique(rank.reshape(-1) * max(self.size, 1) + doc_of, return_counts=True)
        post_rank, self.post_doc = np.divmod(pairs, max(self.size, 1))
        self.post_token = distinct[post_rank]
        self.post_tf = tf.astype(np.float32)
        vocab, df = np.unique(self.post_token, return_counts=True)
        self._vocab = vocab
        self._idf = np.log1p((self.size - df + 0.5) / (df + 0.5)).astype(np.float32)
        mean = lengths.mean() if self.size else 1.0
        self._norm = (K1 * (1 - B + B * lengths / max(mean, 1e-9))).astype(np.float32)

    def scores(self, query: np.ndarray) -> np.ndarray:
        """Normalised BM25 of every document for one query's token ids, in [0, 1)."""
        out = np.zeros(self.size, dtype=np.float32)
        terms = np.unique(query)
        at = np.searchsorted(self._vocab, terms)
        known = at < len(self._vocab)
        known[known] = self._vocab[at[known]] == terms[known]
        if not known.any():
            return out
        idf = self._idf[at[known]]
        for token, weight in zip(terms[known].tolist(), idf.tolist()):
            lo, hi = np.searchsorted(self.post_token, [token, token + 1])
            docs, tf = self.post_doc[lo:hi], self.post_tf[lo:hi]
            out[docs] += weight * tf * (K1 + 1) / (tf + self._norm[docs])     # docs are distinct
        # The bound counts query tokens unknown here too: a query sharing half its tokens
        # with the corpus cannot reach more than about half.
        bound = (K1 + 1) * (idf.sum() + (~known).sum() * float(self._idf.max(initial=0.0)))
        return out / bound

    def own_corpus_scores(self, query: np.ndarray) -> np.ndarray:
        """Normalised BM25 of each document as its own corpus, for texts a query computes.

        Such texts have no corpus whose statistics would not change with the rows a query
        happens to see, so each is scored alone: one document has one IDF for every token and
        its own length as the mean, and the normalised score reduces to the mean over distinct
        query tokens of `tf / (tf + K1)` (0 for a token the text lacks). It is what
        `BM25([document]).scores(query)` gives, for all documents at once.
        """
        out = np.zeros(self.size, dtype=np.float32)
        terms = np.unique(query)
        for token in terms.tolist():
            lo, hi = np.searchsorted(self.post_token, [token, token + 1])
            tf = self.post_tf[lo:hi]
            out[self.post_doc[lo:hi]] += tf / (tf + K1)
        return out / max(len(terms), 1)
