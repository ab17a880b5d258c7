"""The text store: embeddings of node and relationship texts per (label or type, property),
on disk and in memory, and of free texts (expressions) in memory.

On disk, under `<data-dir>/text/<database>/<model>-<terms>/<label>/<property>.npz` (relationships:
`.../<model>-<terms>/[relationship]/<type>/<property>.npz`; no quoted label contains a bracket): one row per
distinct text, keyed by a hash of the text (vector, lexical terms). A restart or a changed text
costs only the texts whose hash is new; the file is rewritten atomically (temp file, then
rename) with exactly the texts present, so it never grows with history.

In memory, a `TextIndex` per (database, label, property): the node (relationship) ids that have a string,
their unit vectors as one matrix, and the BM25 postings. It is keyed by the graph state
(`GraphContext.state`), which changes on every write through the proxy: the next query then
re-reads the label's texts (one query) and embeds only what changed. Inside a transaction
that wrote (state None) the index is built from what that transaction sees and not kept.
Reading happens on the event loop (it is a database query), in batches that leave it free
between them; hashing and embedding run in a worker thread, one build per key at a time.

Free texts (`text_score(n.description + ' ' + n.name, $q)`) and query texts are embedded per
distinct text and kept in LRU caches (free texts keyed by their hash). The free texts of one
evaluation are also kept together as a `FreeCorpus` (matrix and postings, keyed by the list of
texts): a repeat over the same rows with a new question, the usual case, then costs one
hash and one product, not a cache look-up and a vector copy per text.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence
from urllib.parse import quote

import numpy as np

from extensions.cypher.render import name as quote_name
from extensions.registry import GraphContext

from .encoders import Encoder, load_encoder
from .lexical import BM25, TERMS

#: Weight of the cosine in text_score; the rest is normalised BM25 (see lexical.py).
COSINE_WEIGHT = 0.5
_QUERY_CACHE = 1024
_FREE_TEXT_CACHE = 100_000
#: Free-text corpora kept (each is its texts' vectors and postings), at most; together they
#: hold at most _FREE_TEXT_CACHE texts besides the newest.
_FREE_CORPORA = 8
#: The path part under which relationship types' texts are kept (quote() escapes brackets).
_RELATIONSHIPS = "[relationship]"


def default_root(data_dir: str | Path) -> Path:
    """Where the proxy keeps text embeddings under its data directory."""
    return Path(data_dir) / "text"


def text_hash(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


@dataclass
class TextIndex:
    """The texts of one property on the nodes of one label, ready to score."""

    label: str                            # the label, or the relationship type
    key: str
    ids: np.ndarray                       # sorted node (relationship) ids whose value is a string
    vectors: np.ndarray                   # (len(ids), dim) unit rows, aligned with ids
    lexical: BM25
    #: node id -> the value's type, for nodes whose value is not a string
    others: dict[int, Any] = field(default_factory=dict)
    relationship: bool = False

    @property
    def entity(self) -> str:
        return "relationship" if self.relationship else "node"

    def positions(self, node_ids: np.ndarray) -> np.ndarray:
        """Row of each node id in `vectors`, -1 where the node has no string value."""
        if not len(self.ids):
            return np.full(len(node_ids), -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.ids, node_ids), len(self.ids) - 1)
        return np.where(self.ids[at] == node_ids, at, -1)

    def scores(self, vector: np.ndarray, tokens: np.ndarray) -> np.ndarray:
        """text_score of every text for one query: one matrix-vector product plus BM25."""
        return COSINE_WEIGHT * (self.vectors @ vector) + (1 - COSINE_WEIGHT) * self.lexical.scores(tokens)


@dataclass
class FreeCorpus:
    """Texts a query computed, embedded and indexed together; each is scored as its own corpus."""

    texts: list[str]
    rows: dict[str, int]                  # text -> its row in `vectors`
    vectors: np.ndarray
    lexical: BM25

    def scores(self, vector: np.ndarray, tokens: np.ndarray) -> np.ndarray:
        """text_score of every text for one query (BM25 of each text alone: lexical.py)."""
        return COSINE_WEIGHT * (self.vectors @ vector) + (1 - COSINE_WEIGHT) * self.lexical.own_corpus_scores(tokens)


class _DiskCache:
    """The embedded texts of one (database, model, label, property), keyed by text hash."""

    def __init__(self, path: Path):
        self.path = path

    def load(self) -> tuple[dict[bytes, int], np.ndarray, list[np.ndarray]]:
        """{hash: row}, vectors, token ids (empty when there is no usable file)."""
        try:
            with np.load(self.path) as data:
                hashes, vectors = data["hashes"], data["vectors"]
                offsets, tokens = data["offsets"], data["tokens"]
        except (OSError, KeyError, ValueError):
            return {}, np.empty((0, 0), np.float32), []
        rows = {h.tobytes(): i for i, h in enumerate(hashes)}
        return rows, vectors, [tokens[a:b] for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist())]

    def save(self, hashes: list[bytes], vectors: np.ndarray, tokens: Sequence[np.ndarray]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
        offsets = np.concatenate(([0], np.cumsum(lengths)))
        flat = np.concatenate(tokens).astype(np.int64) if tokens else np.empty(0, np.int64)
        # uint8 rows, not "S16": numpy strips trailing zero bytes from fixed-width bytes
        hash_rows = np.frombuffer(b"".join(hashes), dtype=np.uint8).reshape(len(hashes), 16)
        handle, tmp = tempfile.mkstemp(dir=self.path.parent, suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as out:
                np.savez(out, hashes=hash_rows, vectors=vectors, offsets=offsets, tokens=flat)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


class _EmbeddingCache:
    """An LRU of (unit vector, token ids) per text, under `key(text)`; thread-safe."""

    def __init__(self, capacity: int, key: Callable[[str], Hashable]):
        self.capacity = capacity
        self.key = key
        self._entries: OrderedDict[Hashable, tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._lock = threading.Lock()

    def embed(self, encoder: Callable[[], Encoder], texts: Sequence[str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """{text: (unit vector, token ids)}, each distinct text not cached embedded once."""
        found: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        with self._lock:
            for text in texts:
                entry = self._entries.get(self.key(text))
                if entry is not None:
                    self._entries.move_to_end(self.key(text))
                    found[text] = entry
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            vectors, tokens = encoder().encode(missing)
            with self._lock:
                for text, vector, ids in zip(missing, vectors, tokens):
                    found[text] = self._entries[self.key(text)] = (vector, ids)
                while len(self._entries) > self.capacity:
                    self._entries.popitem(last=False)
        return found


class TextStore:
    """Embeddings for text_score, shared by all sessions of one server."""

    def __init__(self, root: Path, model: str | Path | None = None):
        self.root = Path(root)
        self.model_spec = model
        self._encoder: Encoder | None = None
        self._encoder_lock = threading.Lock()
        self._indexes: dict[tuple[str, str, str], tuple[Hashable, TextIndex]] = {}
        self._builds: dict[tuple[str, str, str], asyncio.Lock] = {}
        self._queries = _EmbeddingCache(_QUERY_CACHE, lambda text: text)
        self._free_texts = _EmbeddingCache(_FREE_TEXT_CACHE, text_hash)
        self._corpora: OrderedDict[int, FreeCorpus] = OrderedDict()
        self._corpora_lock = threading.Lock()

    @property
    def encoder(self) -> Encoder:
        """The model, loaded on first use (call from a worker thread: loading takes ~0.5 s)."""
        with self._encoder_lock:
            if self._encoder is None:
                self._encoder = load_encoder(self.model_spec)
            return self._encoder

    # -- node texts

    async def index(self, graph: GraphContext, label: str, key: str, relationship: bool = False) -> TextIndex:
        """The index of `label`.`key` (of a relationship type when `relationship`) as `graph`
        sees it now (built or refreshed if needed)."""
        cache_key = (graph.database, label, key, relationship)
        state = graph.state
        known = self._indexes.get(cache_key)
        if state is not None and known is not None and known[0] == state:
            return known[1]
        async with self._builds.setdefault(cache_key, asyncio.Lock()):
            known = self._indexes.get(cache_key)
            if state is not None and known is not None and known[0] == state:
                return known[1]
            pattern = f"()-[n:{quote_name(label)}]->()" if relationship else f"(n:{quote_name(label)})"
            rows = await graph.read_all(
                f"MATCH {pattern} WHERE n.{quote_name(key)} IS NOT NULL RETURN id(n), n.{quote_name(key)}", {})
            keep = state is not None
            index = await asyncio.to_thread(self._build, graph.database, label, key, relationship, rows, keep)
            if keep:
                self._indexes[cache_key] = (state, index)
            return index

    def _build(self, database: str, label: str, key: str, relationship: bool, rows: list[list[Any]],
               keep: bool) -> TextIndex:
        """Index the (node id, value) rows, embedding only texts the disk cache lacks."""
        strings = sorted((node_id, value) for node_id, value in rows if isinstance(value, str))
        others = {node_id: value for node_id, value in rows if not isinstance(value, str)}
        ids = np.array([node_id for node_id, _ in strings], dtype=np.int64)
        texts = [value for _, value in strings]
        hashes = [text_hash(t) for t in texts]
        disk = _DiskCache(self._path(database, label, key, relationship))
        encoder = self.encoder
        cached, cached_vectors, cached_tokens = disk.load()
        if cached_vectors.ndim != 2 or cached_vectors.shape[1] != encoder.dim:     # none, or unusable
            cached, cached_vectors, cached_tokens = {}, np.empty((0, encoder.dim), np.float32), []
        distinct = list(dict.fromkeys(hashes))
        new = [h for h in distinct if h not in cached]
        if new:
            text_of = dict(zip(hashes, texts))
            new_vectors, new_tokens = encoder.encode([text_of[h] for h in new])
        else:
            new_tokens, new_vectors = [], np.empty((0, encoder.dim), np.float32)
        row_of = {**cached, **{h: len(cached_vectors) + i for i, h in enumerate(new)}}
        all_vectors = np.concatenate([cached_vectors, new_vectors])
        all_tokens = [*cached_tokens, *new_tokens]
        keep_rows = np.array([row_of[h] for h in distinct], dtype=np.int64)
        if keep and (new or len(cached) != len(distinct)):
            disk.save(distinct, all_vectors[keep_rows], [all_tokens[i] for i in keep_rows])
        rows_per_text = np.array([row_of[h] for h in hashes], dtype=np.int64)
        return TextIndex(label, key, ids, all_vectors[rows_per_text],
                         BM25([all_tokens[i] for i in rows_per_text]), others, relationship)

    def _path(self, database: str, label: str, key: str, relationship: bool) -> Path:
        parts = [quote(part, safe="") or "%" for part in (database, f"{self.encoder.name}-{TERMS}", label)]
        if relationship:
            parts.insert(2, _RELATIONSHIPS)
        return self.root.joinpath(*parts, quote(key, safe="") + ".npz")

    # -- query and free texts

    def queries(self, texts: Sequence[str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """{query text: (unit vector, token ids)}, each distinct text embedded once (LRU-cached)."""
        return self._queries.embed(lambda: self.encoder, texts)

    def free_corpus(self, texts: Sequence[str]) -> FreeCorpus:
        """The distinct `texts` (computed by a query) ready to score; each text is embedded once
        (cached by its hash), the corpus kept while the same texts come again."""
        # Python's own hash: a string caches it, and the probe cache hands back the same strings
        key = hash(tuple(texts))
        with self._corpora_lock:
            corpus = self._corpora.get(key)
            if corpus is not None and corpus.texts == texts:
                self._corpora.move_to_end(key)
                return corpus
        embedded = self._free_texts.embed(lambda: self.encoder, texts)
        corpus = FreeCorpus(list(texts), {text: row for row, text in enumerate(texts)},
                            np.stack([embedded[t][0] for t in texts]) if texts else np.empty((0, 0), np.float32),
                            BM25([embedded[t][1] for t in texts]))
        with self._corpora_lock:
            self._corpora[key] = corpus
            while len(self._corpora) > 1 and (len(self._corpora) > _FREE_CORPORA or sum(
                    len(kept.texts) for kept in self._corpora.values()) > _FREE_TEXT_CACHE + len(texts)):
                self._corpora.popitem(last=False)
        return corpus
