"""`point.distance(a, b)`, which FalkorDB does not have, computed as Neo4j computes it.

Neo4j measures the distance between two WGS-84 points with the haversine formula on a sphere of
radius 6,378,140 m (its documented example, Copenhagen's station to an office 27,842 m away,
comes out to the metre). FalkorDB has only WGS-84 2D points (no cartesian or 3D ones), so the
call becomes that formula over the points' latitude and longitude, both arguments evaluated
once: `[__pd IN [[a, b]] | <haversine of __pd[0], __pd[1]>][0]`; a null point gives null, as in
Neo4j. (FalkorDB's own `distance()` answers in single precision; the proxy's `distance()`
extension is the geodesic on the ellipsoid, a different number.)
"""

from __future__ import annotations

from ..cypher import ast as A
from .rule import Context, Edit, Rule

EARTH_RADIUS_METERS = 6378140.0


def haversine(a: str, b: str) -> str:
    """Neo4j's haversine distance in metres between the points `a` and `b` (Cypher text)."""
    half = (f"sin(radians({b}.latitude - {a}.latitude) / 2) ^ 2 + cos(radians({a}.latitude)) * "
            f"cos(radians({b}.latitude)) * sin(radians({b}.longitude - {a}.longitude) / 2) ^ 2")
    return f"{EARTH_RADIUS_METERS} * 2 * atan2(sqrt({half}), sqrt(1 - ({half})))"


def point_distance(call: A.FunctionCall, ctx: Context) -> list[Edit]:
    if call.lower_name != "point.distance" or len(call.args) != 2:
        return []
    pair = ctx.fresh("pd")
    formula = haversine(f"{pair}[0]", f"{pair}[1]")
    return [(call.span[0], call.args[0].span[0], f"[{pair} IN [["),
            (call.args[1].span[1], call.span[1], f"]] | {formula}][0]")]


RULES = (Rule(A.FunctionCall, point_distance, ("point.distance",), r"point\.distance\s*\("),)
