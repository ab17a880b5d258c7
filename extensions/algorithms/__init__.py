"""Graph algorithms as procedures: `CALL pagerank({...}) YIELD node, score` and six more, computed
on a cached sparse projection of the subgraph (see projection.py and procedures.py)."""

from .procedures import SPECS, algorithm_procedures
from .projection import Projection, ProjectionStore, Subgraph

__all__ = ["SPECS", "Projection", "ProjectionStore", "Subgraph", "algorithm_procedures"]
