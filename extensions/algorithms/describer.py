"""The algorithm procedures in describe(): listed under one heading. Their parameters are left to
the errors, which name the closest accepted one (an agent's `labels` or `nodeLabels` work too)."""

from __future__ import annotations

from extensions.registry import Describer


def algorithms_describer(names: list[str]) -> Describer:
    return Describer(family="Algorithms", extensions=tuple(names))
