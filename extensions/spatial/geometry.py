"""Spatial values and geodesic measures: what the spatial functions compute, vectorised.

Geometries are shapely objects in longitude/latitude degrees (WGS84). `to_geometry` turns one
argument value into one: a Cypher point (the driver's `WGS84Point`), WKT or GeoJSON text, a
GeoJSON map, or a `[longitude, latitude]` pair (how the store reads lat/lon properties).
`parse_column` does the same for a whole column of stored values, collecting errors per row.

Predicates (contains, intersects) are shapely's on those coordinates, as PostGIS does for
`geometry`. Measures are geodesic on the WGS84 ellipsoid (pyproj `Geod`): point to point
exactly; between shapes, the nearest points are found in a local frame (longitude scaled by the
cosine of the pair's mean latitude) and their geodesic distance is returned, so a distance is
0 only when the shapes touch and is never measured between centroids.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import shapely
from neo4j.spatial import Point, WGS84Point
from pyproj import Geod

from core.errors import CypherError, argument_error

GEOD = Geod(ellps="WGS84")
#: Point SRIDs with longitude/latitude coordinates (WGS-84 2D and 3D; a height is ignored).
GEOGRAPHIC_SRIDS = frozenset({4326, 4979})
_CARTESIAN_SRIDS = {7203: "Cartesian", 9157: "Cartesian 3D"}
#: Metres per radian along the tightest-curved direction on the ellipsoid (the meridian at the
#: equator): dividing a distance by it over-estimates the angle it spans, as a search box must.
_MIN_RADIUS = 6_335_439.0
_QUOTE = 80
_CYPHER_TYPES = {bool: "Boolean", int: "Integer", float: "Float", list: "List", bytes: "ByteArray"}


# ---------------------------------------------------------------- values -> geometries

def to_geometry(value: Any, function: str):
    """One argument of `function` as a shapely geometry (None stays None)."""
    if value is None or isinstance(value, shapely.Geometry):
        return value
    if isinstance(value, Point):
        return shapely.Point(point_lon_lat(value, function))
    if isinstance(value, str):
        return parse_text(value, function)
    if isinstance(value, dict):
        return _parse_geojson_map(value, function)
    if _is_lon_lat(value):
        return shapely.Point(float(value[0]), float(value[1]))
    kind = _CYPHER_TYPES.get(type(value), type(value).__name__)
    raise argument_error(
        f"{function} takes nodes, points, WKT or GeoJSON text; got {value!r} ({kind}). "
        f"Pass a node with a location/geometry, a point({{latitude: .., longitude: ..}}) or text "
        f"such as 'POINT (10.7 59.9)'.")


def point_lon_lat(point: Point, function: str) -> tuple[float, float]:
    """(longitude, latitude) of a geographic Cypher point; a Cartesian one is refused."""
    srid = getattr(point, "srid", None)
    if srid in GEOGRAPHIC_SRIDS:
        return float(point[0]), float(point[1])
    kind = _CARTESIAN_SRIDS.get(srid, f"srid {srid}")
    raise argument_error(
        f"{function} measures on the WGS84 ellipsoid, but got a {kind} point (srid {srid}) "
        f"{tuple(point)}, whose coordinates are not longitude/latitude. Use a geographic point: "
        f"point({{longitude: x, latitude: y}}) (srid 4326).")


@lru_cache(maxsize=4096)
def parse_text(text: str, function: str = "A spatial function"):
    """WKT or GeoJSON text (GeoJSON when it starts with '{') as a geometry; cached by text."""
    stripped = text.lstrip()
    kind, parse = ("GeoJSON", shapely.from_geojson) if stripped.startswith("{") else ("WKT", shapely.from_wkt)
    try:
        return parse(stripped)
    except shapely.errors.ShapelyError as exc:
        raise argument_error(f"{function}: {invalid_text_message(kind, text, exc)}") from None


def invalid_text_message(kind: str, text: str, error: Exception) -> str:
    """'Invalid WKT '<first 80 characters>...': <parser message>'."""
    quoted = text[:_QUOTE] + ("..." if len(text) > _QUOTE else "")
    return f"Invalid {kind} '{quoted}': {error}"


def _parse_geojson_map(value: dict, function: str):
    try:
        return shapely.geometry.shape(value)
    except (KeyError, TypeError, ValueError, AttributeError, shapely.errors.ShapelyError) as exc:
        raise argument_error(f"{function}: invalid GeoJSON map {str(value)[:_QUOTE]}: {exc!r}") from None


def _is_lon_lat(value: Any) -> bool:
    return (isinstance(value, (list, tuple)) and len(value) == 2
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value))


def parse_column(values: list, where: str) -> tuple[np.ndarray, dict[int, str]]:
    """Stored values -> (geometries, {row: error message}); points and texts are parsed in bulk.

    A value that is missing or cannot be read gives None at its row; the error is kept so a
    query that uses that node can say what is wrong with it (`where` names the property).
    """
    out = np.empty(len(values), dtype=object)
    errors: dict[int, str] = {}
    points, texts, other = [], [], []
    for i, value in enumerate(values):
        if isinstance(value, Point) or _is_lon_lat(value):
            points.append(i)
        elif isinstance(value, str):
            texts.append(i)
        elif value is not None:
            other.append(i)
    if points:
        _parse_points(values, points, out, errors, where)
    if texts:
        _parse_texts(values, texts, out, errors, where)
    for i in other:
        try:
            out[i] = to_geometry(values[i], where)
        except CypherError as exc:     # stored data: the error is reported when a query uses it
            errors[i] = exc.message
    return out, errors


def _parse_points(values: list, rows: list[int], out: np.ndarray, errors: dict[int, str], where: str) -> None:
    lon_lat = np.full((len(rows), 2), np.nan)
    for j, i in enumerate(rows):
        value = values[i]
        if isinstance(value, Point) and getattr(value, "srid", None) not in GEOGRAPHIC_SRIDS:
            try:
                point_lon_lat(value, where)
            except CypherError as exc:
                errors[i] = exc.message
            continue
        lon_lat[j] = float(value[0]), float(value[1])
    ok = np.isfinite(lon_lat).all(axis=1)
    out[np.asarray(rows)[ok]] = shapely.points(lon_lat[ok])


def _parse_texts(values: list, rows: list[int], out: np.ndarray, errors: dict[int, str], where: str) -> None:
    texts = np.array([values[i].lstrip() for i in rows], dtype=object)
    is_json = np.array([t.startswith("{") for t in texts], dtype=bool)
    parsed = np.empty(len(rows), dtype=object)
    if (~is_json).any():
        parsed[~is_json] = shapely.from_wkt(texts[~is_json], on_invalid="ignore")
    if is_json.any():
        parsed[is_json] = shapely.from_geojson(texts[is_json], on_invalid="ignore")
    for j, i in enumerate(rows):
        if parsed[j] is None:
            try:
                parse_text(values[i], where)
            except CypherError as exc:
                errors[i] = exc.message
    out[rows] = parsed


# ---------------------------------------------------------------- measures

def distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Geodesic distances in metres between geometries a[i] and b[i] (NaN where one is empty)."""
    out = np.full(len(a), np.nan)
    if not len(a):
        return out
    empty = shapely.is_empty(a) | shapely.is_empty(b)
    points = (shapely.get_type_id(a) == 0) & (shapely.get_type_id(b) == 0) & ~empty
    if points.any():
        out[points] = geodesic(shapely.get_x(a[points]), shapely.get_y(a[points]),
                               shapely.get_x(b[points]), shapely.get_y(b[points]))
    shapes = ~points & ~empty
    if shapes.any():
        out[shapes] = _shape_distances(a[shapes], b[shapes])
    return out


def geodesic(lon1, lat1, lon2, lat2) -> np.ndarray:
    """Geodesic distances in metres between coordinate arrays (WGS84)."""
    return np.asarray(GEOD.inv(lon1, lat1, lon2, lat2)[2], dtype=float)


def _shape_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.zeros(len(a))
    apart = ~shapely.intersects(a, b)
    if not apart.any():
        return out
    a, b = a[apart], b[apart]
    lat0 = (_centre_lat(a) + _centre_lat(b)) / 2
    scale = np.cos(np.radians(lat0))
    line = shapely.shortest_line(_scale_lon(a, scale), _scale_lon(b, scale))
    ends = shapely.get_coordinates(line).reshape(-1, 2, 2)
    lon = ends[:, :, 0] / scale[:, None]
    out[apart] = geodesic(lon[:, 0], ends[:, 0, 1], lon[:, 1], ends[:, 1, 1])
    return out


def _centre_lat(geoms: np.ndarray) -> np.ndarray:
    bounds = shapely.bounds(geoms)
    return (bounds[:, 1] + bounds[:, 3]) / 2


def _scale_lon(geoms: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Copies of `geoms` with longitudes multiplied by scale[i] (one factor per geometry)."""
    factor = np.repeat(scale, shapely.get_num_coordinates(geoms))
    return shapely.transform(geoms, lambda xy: np.column_stack([xy[:, 0] * factor, xy[:, 1]]))


def area_perimeter(geom) -> tuple[float, float]:
    """Geodesic area (m²) and boundary length (m, holes included, as PostGIS ST_Perimeter). A
    line has no area and its length as perimeter; a point has neither. Collections add up."""
    if shapely.get_type_id(geom) == 7:             # GeometryCollection
        parts = [area_perimeter(part) for part in geom.geoms]
        return sum(a for a, _ in parts), sum(p for _, p in parts)
    dimension = shapely.get_dimensions(geom)
    if dimension == 2:                             # exteriors counter-clockwise: holes subtract
        area, _ = GEOD.geometry_area_perimeter(shapely.orient_polygons(geom))
        return abs(area), GEOD.geometry_length(geom.boundary)
    if dimension == 1:
        return 0.0, GEOD.geometry_length(geom)
    return 0.0, 0.0


def centroid_points(geoms: np.ndarray) -> list:
    """The centroid of each geometry (of its longitude/latitude shape) as a WGS84 point."""
    centres = shapely.centroid(geoms)
    out: list = [None] * len(centres)
    for i, centre in enumerate(centres):
        if not centre.is_empty:
            out[i] = WGS84Point((centre.x, centre.y))
    return out


def search_boxes(geoms: np.ndarray, metres: np.ndarray) -> np.ndarray:
    """Longitude/latitude boxes holding every point within `metres` (geodesic) of each geometry.

    The angle a distance spans is over-estimated (smallest radius of curvature, 1% margin) and the
    longitude reach is that of a spherical cap at the geometry's most poleward latitude; a box
    that would reach a pole or cross the antimeridian covers every longitude instead.
    """
    bounds = shapely.bounds(geoms)
    delta = np.degrees(np.asarray(metres, dtype=float) / _MIN_RADIUS) * 1.01
    south, north = bounds[:, 1] - delta, bounds[:, 3] + delta
    poleward = np.radians(np.maximum(np.abs(bounds[:, 1]), np.abs(bounds[:, 3])))
    with np.errstate(divide="ignore", invalid="ignore"):
        reach = np.sin(np.radians(np.minimum(delta, 90.0))) / np.cos(poleward)
        dlon = np.degrees(np.arcsin(np.clip(reach, 0.0, 1.0))) * 1.01
    west, east = bounds[:, 0] - dlon, bounds[:, 2] + dlon
    every_lon = (reach >= 1) | (south <= -90) | (north >= 90) | (west < -180) | (east > 180)
    west, east = np.where(every_lon, -180.0, west), np.where(every_lon, 180.0, east)
    return shapely.box(west, np.maximum(south, -90.0), east, np.minimum(north, 90.0))
