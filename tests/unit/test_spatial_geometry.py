"""Spatial values and measures (extensions/spatial/geometry.py) against independent computations:
pyproj geodesics by hand, equal-area projections, densified boundaries."""

from __future__ import annotations

import numpy as np
import pytest
import shapely
from hypothesis import given, settings
from hypothesis import strategies as st
from neo4j.spatial import CartesianPoint, WGS84Point
from pyproj import Geod, Transformer

from extensions.spatial.geometry import (
    area_perimeter,
    centroid_points,
    distances,
    parse_column,
    search_boxes,
    to_geometry,
)
from core.errors import CypherError

WGS84 = Geod(ellps="WGS84")


def _densified_distance(point: shapely.Point, shape, step_deg: float = 0.0005) -> float:
    """Brute force: the smallest geodesic distance from `point` to the densified boundary."""
    boundary = shapely.segmentize(shape.boundary if shape.geom_type.endswith("Polygon") else shape, step_deg)
    xy = shapely.get_coordinates(boundary)
    n = len(xy)
    return float(np.min(WGS84.inv(np.full(n, point.x), np.full(n, point.y), xy[:, 0], xy[:, 1])[2]))


def _laea_area(shape) -> float:
    """Area in m² in a Lambert azimuthal equal-area projection centred on the shape."""
    c = shape.centroid
    to_laea = Transformer.from_crs("EPSG:4326", f"+proj=laea +lat_0={c.y} +lon_0={c.x} +ellps=WGS84",
                                   always_xy=True)
    return shapely.transform(shapely.segmentize(shape, 0.001), lambda xy: np.column_stack(
        to_laea.transform(xy[:, 0], xy[:, 1]))).area


# ---------------------------------------------------------------- values

def test_values_become_geometries():
    assert to_geometry(WGS84Point((5.3, 60.4)), "f()").equals(shapely.Point(5.3, 60.4))
    assert to_geometry([5.3, 60.4], "f()").equals(shapely.Point(5.3, 60.4))
    assert to_geometry("POINT (5.3 60.4)", "f()").equals(shapely.Point(5.3, 60.4))
    geojson = '{"type": "LineString", "coordinates": [[0, 0], [1, 1]]}'
    assert to_geometry(geojson, "f()").equals(shapely.LineString([(0, 0), (1, 1)]))
    assert to_geometry({"type": "Point", "coordinates": [1, 2]}, "f()").equals(shapely.Point(1, 2))
    assert to_geometry(None, "f()") is None


def test_invalid_wkt_quotes_the_first_80_characters_and_the_parse_error():
    text = "POLYGON ((" + ", ".join(f"{i} {i}" for i in range(60))     # no closing brackets
    with pytest.raises(CypherError) as info:
        to_geometry(text, "area()")
    assert info.value.code == "Neo.ClientError.Statement.ArgumentError"
    assert f"Invalid WKT '{text[:80]}...'" in info.value.message
    assert "ParseException" in info.value.message and text[:81] not in info.value.message


def test_invalid_geojson_says_geojson():
    with pytest.raises(CypherError, match="Invalid GeoJSON '{\"type\": \"Poin'"):
        to_geometry('{"type": "Poin', "area()")


@pytest.mark.parametrize("srid,point", [(7203, CartesianPoint((1.0, 2.0))), (9157, CartesianPoint((1.0, 2.0, 3.0)))])
def test_cartesian_points_are_refused_with_the_reason(srid, point):
    with pytest.raises(CypherError) as info:
        to_geometry(point, "distance()")
    assert info.value.code == "Neo.ClientError.Statement.ArgumentError"
    assert f"srid {srid}" in info.value.message and "WGS84" in info.value.message
    assert "Cartesian" in info.value.message


@pytest.mark.parametrize("value,kind", [(42, "Integer"), (1.5, "Float"), (True, "Boolean"), ([1, 2, 3], "List")])
def test_other_values_are_refused_with_their_cypher_type(value, kind):
    with pytest.raises(CypherError, match=f"area\\(\\) takes nodes, points, WKT or GeoJSON text; got .* \\({kind}\\)"):
        to_geometry(value, "area()")


def test_parse_column_keeps_errors_per_row():
    values = [WGS84Point((1.0, 2.0)), "POINT (3 4)", "nonsense", CartesianPoint((1.0, 1.0)), [5.0, 6.0],
              '{"type": "Point", "coordinates": [7, 8]}', 17]
    geoms, errors = parse_column(values, "Site.location")
    assert [g.wkt if g is not None else None for g in geoms] == [
        "POINT (1 2)", "POINT (3 4)", None, None, "POINT (5 6)", "POINT (7 8)", None]
    assert sorted(errors) == [2, 3, 6]
    assert "Invalid WKT 'nonsense'" in errors[2] and "srid 7203" in errors[3] and "Integer" in errors[6]


# ---------------------------------------------------------------- measures

def test_point_distances_are_pyproj_geodesics():
    rng = np.random.default_rng(1)
    lon, lat = rng.uniform(-10, 30, (2, 50)), rng.uniform(50, 75, (2, 50))
    a, b = shapely.points(lon[0], lat[0]), shapely.points(lon[1], lat[1])
    expected = [WGS84.inv(lon[0][i], lat[0][i], lon[1][i], lat[1][i])[2] for i in range(50)]
    assert distances(a, b) == pytest.approx(expected, rel=1e-12)


def test_shape_distances_are_the_nearest_geodesic_not_centroids():
    field = shapely.Polygon([(3.0, 60.5), (3.6, 60.5), (3.6, 60.9), (3.2, 61.0), (3.0, 60.5)])
    points = [shapely.Point(4.1, 60.7), shapely.Point(3.3, 61.4), shapely.Point(2.0, 60.0)]
    got = distances(np.array(points, dtype=object), np.array([field] * 3, dtype=object))
    for point, value in zip(points, got):
        expected = _densified_distance(point, field)
        assert value == pytest.approx(expected, rel=2e-4)
        assert value < WGS84.inv(point.x, point.y, field.centroid.x, field.centroid.y)[2]


def test_touching_and_overlapping_shapes_are_0_apart():
    a = shapely.box(5, 60, 6, 61)
    got = distances(np.array([a, a, a], dtype=object),
                    np.array([shapely.box(6, 60.5, 7, 61), shapely.box(5.5, 60.5, 5.6, 60.6), shapely.Point(5.5, 60.5)],
                             dtype=object))
    assert got.tolist() == [0.0, 0.0, 0.0]


def test_line_to_line_distance():
    a = shapely.LineString([(2.0, 60.0), (2.0, 61.0)])
    b = shapely.LineString([(2.3, 60.2), (2.5, 60.8)])
    got = distances(np.array([a], dtype=object), np.array([b], dtype=object))[0]
    assert got == pytest.approx(_densified_distance(shapely.Point(2.3, 60.2), a), rel=1e-3)


def test_area_and_perimeter_of_polygons_match_an_equal_area_projection():
    shapes = [shapely.box(4, 60, 5, 61),
              shapely.Polygon([(5, 60), (5, 61), (6, 61), (6, 60)],                     # clockwise, with a hole
                              [[(5.2, 60.2), (5.4, 60.2), (5.4, 60.4), (5.2, 60.2)]]),
              shapely.MultiPolygon([shapely.box(0, 0, 0.5, 0.5), shapely.box(1, 1, 1.2, 1.2)])]
    for shape in shapes:
        area, perimeter = area_perimeter(shape)
        assert area == pytest.approx(_laea_area(shape), rel=1e-4)
        rings = [shape.exterior, *shape.interiors] if shape.geom_type == "Polygon" else \
            [p.exterior for p in shape.geoms]
        by_hand = sum(np.sum(WGS84.inv(*np.array(r.coords[:-1]).T, *np.array(r.coords[1:]).T)[2]) for r in rings)
        assert perimeter == pytest.approx(by_hand, rel=1e-9)


def test_a_line_has_its_length_as_perimeter_and_no_area():
    line = shapely.LineString([(4, 60), (5, 60), (5, 61)])
    legs = WGS84.inv([4, 5], [60, 60], [5, 5], [60, 61])[2]
    assert area_perimeter(line) == (0.0, pytest.approx(sum(legs), rel=1e-9))
    assert area_perimeter(shapely.Point(4, 60)) == (0.0, 0.0)


def test_centroids_are_wgs84_points():
    got = centroid_points(np.array([shapely.box(4, 60, 6, 62), shapely.Polygon()], dtype=object))
    assert got[0] == WGS84Point((5.0, 61.0)) and got[0].srid == 4326
    assert got[1] is None


@settings(max_examples=300, deadline=None)
@given(lon=st.floats(-179.0, 179.0), lat=st.floats(-88.0, 88.0), azimuth=st.floats(-180.0, 180.0),
       metres=st.floats(1.0, 3_000_000.0), fraction=st.floats(0.0, 1.0))
def test_search_boxes_hold_every_point_within_the_distance(lon, lat, azimuth, metres, fraction):
    end_lon, end_lat, _ = WGS84.fwd(lon, lat, azimuth, metres * fraction)
    box = search_boxes(np.array([shapely.Point(lon, lat)], dtype=object), np.array([metres]))[0]
    assert shapely.covers(box, shapely.Point(end_lon, end_lat)), (box, end_lon, end_lat)
