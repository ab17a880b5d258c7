"""The spatial functions in describe(): `location` (points) and `geometry` (shapes) flags on node
types whose configured spatial properties hold such values, and which property that is."""

from __future__ import annotations

from typing import Any, Sequence

from extensions.describe.stats import kind_of
from extensions.registry import Describer, GraphContext

from .store import SpatialConfig


def spatial_properties(config: SpatialConfig, label: str, sample: Sequence[dict[str, Any]]) -> dict[str, str]:
    """{'location' | 'geometry': property} for the label's configured sources present in `sample`."""
    found: dict[str, str] = {}
    for source in config.sources(label):
        if isinstance(source, str):
            values = [props[source] for props in sample if props.get(source) is not None]
            if values:
                found.setdefault("location" if kind_of(values) == "point" else "geometry", source)
        elif any(props.get(source[0]) is not None and props.get(source[1]) is not None for props in sample):
            found.setdefault("location", "/".join(source))
    return found


def spatial_describer(config: SpatialConfig, names: list[str]) -> Describer:
    async def detail(graph: GraphContext, label: str, sample: Sequence[dict[str, Any]]) -> list[str]:
        """Only where the flag does not say it already (the property is not named like the flag)."""
        found = spatial_properties(config, label, sample)
        return [f"Spatial: {flag} in .{prop}" for flag, prop in found.items() if prop != flag]

    return Describer(family="Spatial", extensions=tuple(names),
                     legend={"location": "point", "geometry": "shape"},
                     flags=lambda label, sample: tuple(spatial_properties(config, label, sample)),
                     detail=detail)
