"""Semantic extension: `text_score(n, 'property', 'query text')` over per-label embeddings (see store.py)."""

from .functions import text_extensions
from .store import TextStore, default_root

__all__ = ["TextStore", "default_root", "text_extensions"]
