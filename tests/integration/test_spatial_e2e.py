"""The spatial functions through the real driver: on the Sodir demo graph against shapely and
pyproj computed here on the coordinates the driver reads back, then writes and transactions on
a graph made in the test."""

from __future__ import annotations

import neo4j
import numpy as np
import pytest
import shapely
from neo4j.spatial import CartesianPoint, WGS84Point
from pyproj import Geod, Transformer

from tests.harness import PASSWORD, USER

WGS84 = Geod(ellps="WGS84")


@pytest.fixture(scope="module")
def sodir(demo):
    with neo4j.GraphDatabase.driver(demo.uri, auth=(USER, PASSWORD)) as driver:
        yield driver


def _query(driver, text: str, **params) -> list[list]:
    return [list(r.values()) for r in driver.execute_query(text, params).records]


@pytest.fixture(scope="module")
def fields(sodir) -> dict[str, shapely.Geometry]:
    return {t: shapely.from_wkt(g) for t, g in _query(
        sodir, "MATCH (f:Field) WHERE f.geometry IS NOT NULL RETURN f.title, f.geometry")}


@pytest.fixture(scope="module")
def wellbores(sodir) -> dict[str, tuple[str, float, float]]:
    """id -> (title, longitude, latitude) as stored (FalkorDB keeps points in single precision)."""
    return {i: (t, p.longitude, p.latitude) for i, t, p in _query(
        sodir, "MATCH (w:WellBore) RETURN w.id, w.title, w.location")}


# ---------------------------------------------------------------- the demo graph

def test_wellbores_inside_the_troll_outline(sodir, fields, wellbores):
    got = _query(sodir, "MATCH (f:Field {title: 'TROLL'}), (w:WellBore) WHERE contains(f.geometry, w.location) "
                        "RETURN w.id")
    ids = np.array(list(wellbores))
    lon_lat = np.array([(lon, lat) for _, lon, lat in wellbores.values()])
    inside = shapely.contains_xy(fields["TROLL"], lon_lat[:, 0], lon_lat[:, 1])
    assert sorted(r[0] for r in got) == sorted(ids[inside].tolist())
    assert len(got) == int(inside.sum()) > 500


def test_contains_join_counts_wellbores_per_field(sodir, fields, wellbores):
    got = dict(_query(sodir, "MATCH (w:WellBore), (f:Field) WHERE contains(f.geometry, w.location) "
                             "RETURN f.title, count(w)"))
    lon_lat = np.array([(lon, lat) for _, lon, lat in wellbores.values()])
    expected = {title: int(n) for title, shape in fields.items()
                if (n := shapely.contains_xy(shape, lon_lat[:, 0], lon_lat[:, 1]).sum())}
    assert got == expected and len(expected) > 50


def test_distance_between_two_wellbores_is_the_geodesic(sodir, wellbores):
    by_title = {t: (lon, lat) for t, lon, lat in wellbores.values()}
    (got,) = _query(sodir, "MATCH (a:WellBore {title: '33/6-1'}), (b:WellBore {title: '31/2-1'}) "
                           "RETURN distance(a, b), distance(a.location, b.location), distance(a.location, b)")
    expected = WGS84.inv(*by_title["33/6-1"], *by_title["31/2-1"])[2]
    assert got == pytest.approx([expected] * 3, rel=1e-6)


def test_area_and_perimeter_of_each_field(sodir, fields):
    got = {t: (a, p) for t, a, p in _query(
        sodir, "MATCH (f:Field) RETURN f.title, area(f) / 1e6 AS km2, perimeter(f.geometry) AS m")}
    assert {t for t, (a, _) in got.items() if a is None} == set(got) - set(fields)   # no outline: null
    for title, shape in fields.items():
        centre = shape.centroid
        laea = Transformer.from_crs("EPSG:4326", f"+proj=laea +lat_0={centre.y} +lon_0={centre.x} +ellps=WGS84",
                                    always_xy=True)
        projected = shapely.transform(shapely.segmentize(shape, 0.001),
                                      lambda xy: np.column_stack(laea.transform(xy[:, 0], xy[:, 1])))
        rings = shapely.get_parts(shapely.get_rings(shapely.get_parts(shape)))
        edges = [np.array(r.coords) for r in rings]
        by_hand = sum(np.sum(WGS84.inv(e[:-1, 0], e[:-1, 1], e[1:, 0], e[1:, 1])[2]) for e in edges)
        assert got[title][0] == pytest.approx(projected.area / 1e6, rel=1e-4), title
        assert got[title][1] == pytest.approx(by_hand, rel=1e-9), title
    assert 500 < got["TROLL"][0] < 1000


def test_centroid_is_a_wgs84_point(sodir, fields):
    ((point,),) = _query(sodir, "MATCH (f:Field {title: 'TROLL'}) RETURN centroid(f)")
    assert isinstance(point, WGS84Point)
    expected = fields["TROLL"].centroid
    assert (point.longitude, point.latitude) == pytest.approx((expected.x, expected.y), abs=1e-5)


def test_the_5_facilities_nearest_to_a_wellbore(sodir, wellbores):
    got = _query(sodir, "MATCH (w:WellBore {title: '31/2-1'}), (f:Facility) "
                        "RETURN f.id, distance(w, f) AS d ORDER BY d LIMIT 5")
    origin = next((lon, lat) for t, lon, lat in wellbores.values() if t == "31/2-1")
    facilities = _query(sodir, "MATCH (f:Facility) WHERE f.location IS NOT NULL RETURN f.id, f.location")
    d = np.asarray(WGS84.inv(np.full(len(facilities), origin[0]), np.full(len(facilities), origin[1]),
                             [p.longitude for _, p in facilities], [p.latitude for _, p in facilities])[2])
    order = np.argsort(d)[:5]
    assert [r[0] for r in got] == [facilities[i][0] for i in order]
    assert [r[1] for r in got] == pytest.approx(d[order], rel=1e-9)


def test_wellbores_within_a_kilometre_of_the_troll_facilities(sodir, wellbores):
    got = _query(sodir, "MATCH (f:Facility), (w:WellBore) WHERE f.title STARTS WITH 'TROLL' "
                        "AND distance(f, w) < 1000 RETURN f.id, w.id")
    facilities = _query(sodir, "MATCH (f:Facility) WHERE f.title STARTS WITH 'TROLL' AND f.location IS NOT NULL "
                               "RETURN f.id, f.location")
    ids, lon, lat = list(wellbores), *np.array([(x, y) for _, x, y in wellbores.values()]).T
    expected = set()
    for fid, p in facilities:
        d = WGS84.inv(np.full(len(ids), p.longitude), np.full(len(ids), p.latitude), lon, lat)[2]
        expected |= {(fid, ids[i]) for i in np.flatnonzero(d < 1000)}
    assert set(map(tuple, got)) == expected and len(expected) > 20


def test_fields_each_pipeline_crosses(sodir, fields):
    got = _query(sodir, "MATCH (p:Pipeline), (f:Field) WHERE intersects(p, f) RETURN p.id, f.title")
    pipelines = _query(sodir, "MATCH (p:Pipeline) RETURN p.id, p.geometry")
    expected = {(pid, title) for pid, wkt in pipelines for title, shape in fields.items()
                if shapely.intersects(shapely.from_wkt(wkt), shape)}
    assert set(map(tuple, got)) == expected and len(expected) > 10
    one = next(pid for pid, _ in expected)
    crossed = _query(sodir, "MATCH (p:Pipeline {id: $id}), (f:Field) WHERE intersects(p.geometry, f.geometry) "
                            "RETURN f.title ORDER BY f.title", id=one)
    assert [r[0] for r in crossed] == sorted(t for pid, t in expected if pid == one)


def test_contains_the_function_and_contains_the_operator_in_one_query(sodir, fields, wellbores):
    got = _query(sodir, "MATCH (f:Field), (w:WellBore) WHERE f.title CONTAINS 'TROLL' AND w.title CONTAINS '31/2' "
                        "AND contains(f, w) RETURN f.title, count(w)")
    lon_lat = np.array([(lon, lat) for t, lon, lat in wellbores.values() if "31/2" in t])
    expected = [[t, int(n)] for t, s in fields.items() if "TROLL" in t
                and (n := shapely.contains_xy(s, lon_lat[:, 0], lon_lat[:, 1]).sum())]
    assert sorted(got) == sorted(expected) and expected


def test_missing_spatial_data_gives_null(sodir):
    assert _query(sodir, "MATCH (c:Company) WITH c LIMIT 1 MATCH (w:WellBore {title: '31/2-1'}) "
                         "RETURN area(c), centroid(c), distance(c, w), contains(c, w), distance(w, null)") == \
        [[None] * 5]


def test_point_and_text_arguments(sodir):
    ((d, inside, area),) = _query(
        sodir, "RETURN distance(point({latitude: 60, longitude: 5}), 'POINT (5 61)'), "
               "contains('POLYGON ((4 60, 6 60, 6 62, 4 62, 4 60))', $p), "
               "area('{\"type\": \"Polygon\", \"coordinates\": [[[4, 60], [5, 60], [5, 61], [4, 60]]]}')",
        p=WGS84Point((5.0, 61.0)))
    assert d == pytest.approx(WGS84.inv(5, 60, 5, 61)[2], rel=1e-6) and inside is True
    assert area == pytest.approx(abs(WGS84.polygon_area_perimeter([4, 5, 5], [60, 60, 61])[0]), rel=1e-9)


def test_explain_of_a_spatial_join(sodir):
    summary = sodir.execute_query("EXPLAIN MATCH (w:WellBore), (f:Field) WHERE contains(f.geometry, w.location) "
                                  "RETURN f.title, count(w)").summary
    assert summary.plan is not None and summary.query_type == "r"


LONG_BAD_WKT = "LINESTRING (" + ", ".join(f"{i} {i}" for i in range(40))     # no closing bracket


@pytest.mark.parametrize("query,params,message", [
    ("RETURN area('POLYGON ((4 60, 5 60, 5 61')", {},
     "area(): Invalid WKT 'POLYGON ((4 60, 5 60, 5 61': ParseException: Expected"),
    ("RETURN perimeter($g)", {"g": LONG_BAD_WKT}, f"perimeter(): Invalid WKT '{LONG_BAD_WKT[:80]}...': Parse"),
    ("MATCH (f:Field {title: 'TROLL'}) RETURN contains(f, 42)", {},
     "contains() takes nodes, points, WKT or GeoJSON text; got 42 (Integer)"),
    ("MATCH (w:WellBore {title: '31/2-1'}) RETURN distance(w)", {},
     "distance() takes 2 arguments, got 1. Usage: distance(a, b)"),
])
def test_bad_arguments_are_argument_errors_that_teach(sodir, query, params, message):
    with pytest.raises(neo4j.exceptions.ClientError) as info:
        sodir.execute_query(query, params)
    assert info.value.code == "Neo.ClientError.Statement.ArgumentError"
    assert message in info.value.message


def test_a_cartesian_point_is_refused_with_the_reason(sodir):
    with pytest.raises(neo4j.exceptions.ClientError) as info:
        sodir.execute_query("MATCH (w:WellBore {title: '31/2-1'}) RETURN distance(w, $p)", p=CartesianPoint((3, 4)))
    assert "srid 7203" in info.value.message and "WGS84" in info.value.message


# ---------------------------------------------------------------- writes and transactions

ZONE = "POLYGON ((4 60, 5 60, 5 61, 4 61, 4 60))"
COUNT = "MATCH (z:Zone), (s:Site) WHERE contains(z.geometry, s) RETURN z.name, count(s) ORDER BY z.name"


def test_a_query_right_after_a_write_sees_the_new_shapes(clean_graph):
    driver = clean_graph
    driver.execute_query("CREATE (:Zone {name: 'a', geometry: $zone}), (:Zone {name: 'b'}) "
                         "WITH 1 AS one UNWIND range(0, 9) AS i "
                         "CREATE (:Site {name: i, location: point({longitude: 4.05 + i * 0.2, latitude: 60.5})})",
                         zone=ZONE)
    assert _query(driver, COUNT) == [["a", 5]]
    driver.execute_query("MATCH (z:Zone {name: 'b'}) SET z.geometry = 'POLYGON ((4 60, 7 60, 7 61, 4 61, 4 60))'")
    assert _query(driver, COUNT) == [["a", 5], ["b", 10]]
    driver.execute_query("MATCH (s:Site {name: 0}) DELETE s")
    driver.execute_query("CREATE (:Site {name: 'lat/lon', lat: 60.1, lon: 4.1})")
    assert _query(driver, COUNT) == [["a", 5], ["b", 10]]
    driver.execute_query("MATCH (z:Zone {name: 'a'}) REMOVE z.geometry")
    assert _query(driver, COUNT) == [["b", 10]]


def test_a_transaction_sees_its_own_writes_and_a_rollback_forgets_them(clean_graph):
    driver = clean_graph
    driver.execute_query("CREATE (:Zone {name: 'a', geometry: $zone}), (:Site {name: 1, lat: 60.5, lon: 4.5})",
                         zone=ZONE)
    with driver.session() as session:
        with session.begin_transaction() as tx:
            tx.run("CREATE (:Site {name: 2, location: point({longitude: 4.6, latitude: 60.6})})").consume()
            assert [list(r.values()) for r in tx.run(COUNT)] == [["a", 2]]
            tx.rollback()
    assert _query(driver, COUNT) == [["a", 1]]


def test_nearest_over_a_label_whose_nodes_keep_their_geometry_in_different_properties(clean_graph):
    """A layer read in windows: points, lat/lon pairs and WKT on one label, and a value that is
    not a geometry, which only a query using that node hears about; nearest-k against pyproj on
    the coordinates the driver reads back."""
    driver = clean_graph
    driver.execute_query(
        "UNWIND range(0, 59) AS i CREATE (s:Spot {i: i}) WITH s, i "
        "SET s.location = CASE WHEN i % 3 = 0 THEN point({longitude: 4 + i * 0.013, latitude: 60 + i * 0.007}) END, "
        "s.lat = CASE WHEN i % 3 = 1 THEN 60 + i * 0.007 END, s.lon = CASE WHEN i % 3 = 1 THEN 4 + i * 0.013 END, "
        "s.wkt = CASE WHEN i % 3 = 2 THEN 'POINT (' + toString(4 + i * 0.0125) + ' 60.2)' END")
    driver.execute_query("CREATE (:Spot {i: 60, wkt: 'not a shape'})")
    spots = _query(driver, "MATCH (s:Spot) WHERE s.i < 60 RETURN s.i, s.location, s.lat, s.lon, s.wkt")
    lon_lat = {i: (p.longitude, p.latitude) if p else (lon, lat) if lat is not None else
               tuple(shapely.get_coordinates(shapely.from_wkt(wkt))[0]) for i, p, lat, lon, wkt in spots}
    ids = sorted(lon_lat)
    x, y = np.array([lon_lat[i] for i in ids]).T
    got = _query(driver, "MATCH (q:Spot {i: 30}), (s:Spot) WHERE s.i < 60 "
                         "RETURN s.i, distance(q, s) AS d ORDER BY d, s.i LIMIT 7")
    d = np.asarray(WGS84.inv(np.full(len(ids), lon_lat[30][0]), np.full(len(ids), lon_lat[30][1]), x, y)[2])
    order = np.lexsort((ids, d))[:7]
    assert [r[0] for r in got] == [ids[k] for k in order]
    assert [r[1] for r in got] == pytest.approx(d[order], rel=1e-9, abs=1e-6)
    with pytest.raises(neo4j.exceptions.ClientError, match="not a shape"):
        _query(driver, "MATCH (q:Spot {i: 60}), (s:Spot) RETURN distance(q, s) AS d ORDER BY d LIMIT 1")
