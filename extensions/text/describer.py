"""text_score in describe(): the `text` flag on node types with long texts, and their names."""

from __future__ import annotations

from typing import Any, Sequence

from extensions.describe.stats import kind_of
from extensions.registry import Describer, GraphContext


def text_properties(sample: Sequence[dict[str, Any]]) -> list[str]:
    """Properties whose sampled values are long texts (sentences, not codes or names)."""
    keys = dict.fromkeys(key for props in sample for key in props)
    return [key for key in keys if kind_of([props[key] for props in sample if key in props]) == "text"]


def text_describer(names: list[str]) -> Describer:
    async def detail(graph: GraphContext, label: str, sample: Sequence[dict[str, Any]]) -> list[str]:
        found = text_properties(sample)
        return [f"Text for text_score: {', '.join(found)} (or any text: text_score(n.a + n.b, 'query'))"] \
            if found else []

    return Describer(family="Semantic", extensions=tuple(names), legend={"text": "long text for text_score"},
                     flags=lambda label, sample: ("text",) if text_properties(sample) else (), detail=detail)
