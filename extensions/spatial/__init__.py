"""Spatial extension: distance, contains, intersects, centroid, area, perimeter over a geometry
store built from the graph itself (see store.py), with index answers for joins (index.py)."""

from .functions import spatial_extensions
from .store import GeometryStore, SpatialConfig

__all__ = ["GeometryStore", "SpatialConfig", "spatial_extensions"]
