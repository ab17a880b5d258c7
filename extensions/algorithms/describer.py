"""The algorithm procedures in describe(): listed under one heading, with the parameters every
one of them takes (the others are named by the errors that a wrong name gets)."""

from __future__ import annotations

from extensions.registry import Describer

from .parameters import SUBGRAPH


def algorithms_describer(names: list[str]) -> Describer:
    subgraph = ", ".join(param.name for param in SUBGRAPH if param.name != "refresh")
    return Describer(family="Algorithms", extensions=tuple(names),
                     notes=(f"{{...}}: optional {subgraph}, direction, and the algorithm's own "
                            "(damping_factor, resolution, ...)",))
