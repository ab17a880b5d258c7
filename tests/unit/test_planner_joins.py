"""Index-planned joins (extensions/planner/joins.py): which queries become joins and how they are
rewritten, then, on a real embedded FalkorDB, that each join returns what the same query
evaluated pair by pair returns (the `= true` / `+ 0` forms are not joins) and what shapely and
pyproj say on the coordinates read back."""

from __future__ import annotations

import numpy as np
import pytest
import shapely
from pyproj import Geod

from extensions.planner.joins import JoinStep
from extensions.planner.planner import ExtensionPlanner
from extensions.planner.plan import ProbeStep
from extensions.registry import Registry
from extensions.spatial import GeometryStore, spatial_extensions
from core.backend import TxConfig
from core.errors import CypherError
from proxy.session import SessionRunner
from core.dialect import Dialect
from proxy.backends.falkordb.dialect import FALKORDB
from proxy.backends.neo4j.dialect import NEO4J
from tests.unit.test_planner_support import rows

AUTH = {"scheme": "basic", "principal": "neo4j", "credentials": "password"}
WGS84 = Geod(ellps="WGS84")


def _planner(dialect: Dialect = FALKORDB) -> ExtensionPlanner:
    return ExtensionPlanner(Registry(spatial_extensions(GeometryStore())), dialect=dialect)


def _joins(query: str, dialect: Dialect = FALKORDB) -> list[JoinStep]:
    plan = _planner(dialect).plan(query)
    return [] if plan is None else [s for s in plan.steps if isinstance(s, JoinStep)]


# ---------------------------------------------------------------- planning (text only)

CONTAINS = "MATCH (w:WellBore), (f:Field) WHERE contains(f.geometry, w.location) RETURN f.title, count(w)"


def test_contains_join_becomes_a_seek_per_pair_without_probes():
    plan = _planner().plan(CONTAINS)
    (join,) = plan.steps
    assert isinstance(join, JoinStep) and join.mode == "predicate" and join.ext.name == "contains"
    assert (join.left.label, join.left.key, join.left.probe) == ("Field", "geometry", None)
    assert (join.right.label, join.right.key, join.right.probe) == ("WellBore", "location", None)
    assert plan.body == ("UNWIND $__join0 AS __j0 WITH __j0[0] AS __j0a, __j0[1] AS __j0b "
                         "MATCH (w:WellBore), (f:Field) WHERE id(f) = __j0a AND id(w) = __j0b WITH w, f "
                         "WHERE true RETURN f.title, count(w)")
    assert plan.placeholders == {"__join0": []}


@pytest.mark.parametrize("query", [
    "MATCH (w:WellBore)-[:IN_FIELD]->(f:Field) WHERE contains(f.geometry, w.location) RETURN f",
    "MATCH (w:WellBore), (x)<-[:IN]-(f:Field)-[:AT]->(w) WHERE contains(f, w) RETURN f",
    "MATCH (w:WellBore) OPTIONAL MATCH (f:Field) WHERE contains(f, w) RETURN f",
    "MATCH (w:WellBore) MATCH (f:Field) WHERE contains(f, w) RETURN f",
    "CREATE (:X) WITH 1 AS one MATCH (w:WellBore), (f:Field) WHERE contains(f, w) RETURN f",
    "MATCH (w:WellBore), (f:Field) WHERE NOT contains(f, w) RETURN f",
    "MATCH (w:WellBore), (f:Field) WHERE contains(f, w) OR f.title = 'X' RETURN f",
    "MATCH (w:WellBore), (f:Field) WHERE contains(f, w) = true RETURN f",
    "MATCH (w:WellBore), (f:Field) WHERE contains(f.geometry, f.location) RETURN f",
    "MATCH (f:Field) WHERE contains(f, $point) RETURN f",
    "MATCH (w:WellBore), (f:Field) WHERE distance(w, f) < w.radius RETURN f",
    "MATCH (w:WellBore), (f:Field) WHERE centroid(w) = centroid(f) RETURN f",
    "MATCH (w:WellBore), (f:Field) WITH w, f WHERE contains(f, w) RETURN f",
])
def test_not_a_join(query):
    assert _joins(query) == []


def test_point_distance_is_not_the_distance_extension():
    plan = _planner().plan("RETURN point.distance(point({latitude: 60, longitude: 5}), $p) AS d")
    assert plan.steps == [] and "atan2(" in plan.body          # Neo4j's haversine (bridges/points.py)


@pytest.mark.parametrize("condition,inclusive", [
    ("distance(w, f) < $r", False), ("distance(w, f) <= $r", True),
    ("$r > distance(w, f)", False), ("$r >= distance(w, f)", True),
])
def test_distance_below_a_constant_is_a_within_join(condition, inclusive):
    (join,) = _joins(f"MATCH (w:WellBore), (f:Facility) WHERE {condition} RETURN w, f")
    assert join.mode == "within" and join.inclusive is inclusive
    assert [b.name for b in join.bound] == ["r"]
    plan = _planner().plan(f"MATCH (w:WellBore), (f:Facility) WHERE w.x = 1 AND {condition} RETURN w, f")
    assert plan.body.endswith("WITH w, f WHERE w.x = 1 AND true RETURN w, f")


def test_side_conditions_run_in_that_side_s_probe():
    query = ("WITH ['A', 'B'] AS kinds MATCH (w:WellBore)-[:IN_FIELD]->(x), (f:Facility {kind: 'FIXED'}) "
             "WHERE w.purpose IN kinds AND area(x) > 1 AND distance(w, f) < 500 AND w.a < f.b RETURN w, f")
    (join,) = _joins(query)
    assert join.left.probe == ("WITH ['A', 'B'] AS kinds\nMATCH (w:WellBore)-[__u0:IN_FIELD]->(x) "
                               "WHERE (w.purpose IN kinds)\n"
                               "RETURN DISTINCT id(w) AS __c0, labels(w) AS __c1, toString(id(w)) AS __c2")
    assert join.right.probe == ("MATCH (f:Facility {kind: 'FIXED'})\n"
                                "RETURN DISTINCT id(f) AS __c0, labels(f) AS __c1, toString(id(f)) AS __c2")
    assert _joins(query, NEO4J)[0].right.probe.endswith("elementId(f) AS __c2")


NEAREST = "MATCH (w:WellBore {title: '31/2-1'}), (f:Facility) RETURN f.title, distance(w, f) AS d ORDER BY d LIMIT 5"


def test_nearest_k_prunes_the_bare_side_and_keeps_the_order_by():
    plan = _planner().plan(NEAREST)
    join, probe = plan.steps
    assert isinstance(join, JoinStep) and join.mode == "nearest"
    assert (join.left.probe is not None, join.right.label) == (True, "Facility")
    assert isinstance(probe, ProbeStep) and "ORDER BY d LIMIT 5" in plan.body
    assert _joins(NEAREST.replace("distance(w, f)", "distance(f, w)"))[0].right.label == "Facility"


@pytest.mark.parametrize("query", [
    NEAREST.replace("ORDER BY d", "ORDER BY d DESC"),
    NEAREST.replace("ORDER BY d", "ORDER BY d + 0"),
    NEAREST.replace("RETURN", "RETURN DISTINCT"),
    NEAREST.replace("f.title,", "count(*) AS n,"),
    NEAREST.replace(" LIMIT 5", ""),
    NEAREST.replace("LIMIT 5", "LIMIT size($list)"),
    NEAREST.replace("(f:Facility)", "(f:Facility)-[:IN_FIELD]->(:Field)").replace("{title: '31/2-1'}", "")
    .replace("(w:WellBore", "(w:WellBore)-[:IN]->(:X").replace("X)", "X"),
    NEAREST.replace("RETURN", "WHERE f.kind = w.kind RETURN"),
    NEAREST.replace("RETURN f.title,", "RETURN f AS w,"),
    "MATCH (w:WellBore {title: 'x'}), (f:Facility) WITH w, f, distance(w, f) AS d ORDER BY d LIMIT 5 "
    "WHERE d > 3 RETURN f",
])
def test_not_a_nearest_join(query):
    assert _joins(query) == []


def test_nearest_prunes_the_side_whose_probe_is_exact():
    query = ("MATCH (w:WellBore)-[:IN_FIELD]->(:Field), (f:Facility) WHERE f.kind = 'FIXED' "
             "WITH w, f ORDER BY distance(f, w) SKIP 2 LIMIT $k RETURN w, f")
    (join,) = _joins(query)
    assert join.right.probe.startswith("MATCH (f:Facility) WHERE (f.kind = 'FIXED')")
    assert join.left.probe.startswith("MATCH (w:WellBore)-[__u0:IN_FIELD]->(:Field)")
    assert [type(b).__name__ for b in join.bound] == ["Parameter", "Literal"]


# ---------------------------------------------------------------- on a real database

def _graph() -> tuple[str, dict]:
    """Zones (WKT/GeoJSON outlines, some missing), sites (points, lat/lon pairs, some missing),
    sites owned by orgs, a route line. Around 60°N 5°E, seeded."""
    rng = np.random.default_rng(11)
    zones = []
    for i in range(30):
        x, y = rng.uniform(4, 6), rng.uniform(59.5, 60.5)
        shape = shapely.buffer(shapely.Point(x, y), rng.uniform(0.03, 0.25), quad_segs=4)
        zones.append({"name": f"z{i}", "tier": i % 3, "geometry": shapely.to_wkt(shape, rounding_precision=6)
                      if i % 7 else shapely.to_geojson(shape) if i % 14 else None})
    sites = []
    for i in range(150):
        x, y = rng.uniform(3.9, 6.1), rng.uniform(59.4, 60.6)
        site = {"name": f"s{i}", "kind": "abc"[i % 3], "org": f"o{i % 5}" if i % 4 else None}
        if i % 10 == 3:
            site.update(lat=y, lon=x)
        elif i % 23 != 5:
            site.update(lat_=y, lon_=x)
        sites.append(site)
    query = """
        UNWIND $zones AS z CREATE (n:Zone {name: z.name, tier: z.tier}) SET n.geometry = z.geometry
        WITH count(*) AS zones
        UNWIND $sites AS s CREATE (n:Site {name: s.name, kind: s.kind}) SET n.lat = s.lat, n.lon = s.lon
        FOREACH (_ IN CASE WHEN s.lat_ IS NULL THEN [] ELSE [1] END |
            SET n.location = point({latitude: s.lat_, longitude: s.lon_}))
        FOREACH (_ IN CASE WHEN s.org IS NULL THEN [] ELSE [1] END |
            MERGE (o:Org {name: s.org}) CREATE (n)-[:OWNED_BY]->(o))
        WITH count(*) AS sites
        CREATE (:Route {name: 'r1', geometry: 'LINESTRING (4 59.6, 5 60, 6 60.4)'})"""
    return query, {"zones": zones, "sites": sites}


@pytest.fixture(scope="module")
async def db(embedded):
    backend = embedded
    creds = await backend.authenticate(AUTH)
    query, params = _graph()
    await rows(await backend.run(query, params, TxConfig(), creds))
    return backend, creds


@pytest.fixture
def run(db):
    backend, creds = db
    planner = _planner()

    async def run(query: str, params: dict | None = None, runner=None) -> list[list]:
        return await rows(await planner.execute(query, params or {}, runner or SessionRunner(
            backend, TxConfig(), creds)))
    run.planner = planner
    return run


#: (query, its join condition, the same condition written so it is evaluated pair by pair)
PAIRS = [
    ("MATCH (s:Site), (z:Zone) WHERE contains(z.geometry, s.location) RETURN z.name, count(s) AS n ORDER BY z.name",
     "contains(z.geometry, s.location)", "contains(z.geometry, s.location) = true"),
    ("MATCH (s:Site), (z:Zone) WHERE contains(z, s) AND s.kind = 'a' RETURN s.name, z.name ORDER BY s.name, z.name",
     "contains(z, s)", "contains(z, s) = true"),
    ("MATCH (s:Site)-[:OWNED_BY]->(o:Org), (z:Zone {tier: 1}) WHERE intersects(z, s) "
     "RETURN o.name, z.name, count(*) ORDER BY o.name, z.name", "intersects(z, s)", "intersects(z, s) = true"),
    ("WITH ['a', 'b'] AS kinds MATCH (s:Site), (z:Zone) WHERE s.kind IN kinds AND contains(z, s) AND z.tier < 2 "
     "RETURN kinds, s.name, z.name ORDER BY s.name, z.name", "contains(z, s)", "contains(z, s) = true"),
    ("MATCH (s:Site), (t:Site) WHERE distance(s, t) < $r AND s.name < t.name "
     "RETURN s.name, t.name, distance(s, t) AS d ORDER BY s.name, t.name",
     "distance(s, t) < $r", "distance(s, t) + 0 < $r"),
    ("MATCH (s:Site), (z:Zone) WHERE 2000 >= distance(s, z) RETURN s.name, z.name ORDER BY s.name, z.name",
     "2000 >= distance(s, z)", "2000 >= distance(s, z) + 0"),
    ("MATCH (r:Route), (z:Zone) WHERE intersects(r.geometry, z) AND area(z) > 5e7 RETURN z.name ORDER BY z.name",
     "intersects(r.geometry, z)", "intersects(r.geometry, z) = true"),
    ("MATCH (s:Site {name: 's1'}), (t:Site) WHERE t.kind = 'b' RETURN t.name, distance(s, t) AS d ORDER BY d LIMIT 7",
     "ORDER BY d", "ORDER BY d + 0"),
    ("MATCH (s:Site)-[:OWNED_BY]->(:Org {name: 'o1'}), (z:Zone) WITH s, z ORDER BY distance(s, z), s.name, z.name "
     "SKIP 3 LIMIT 5 RETURN s.name, z.name", "ORDER BY distance(s, z)", "ORDER BY distance(s, z) + 0"),
    ("MATCH (s:Site {name: 's2'}), (z:Zone) RETURN z.name, distance(s, z) AS d ORDER BY d, z.name LIMIT 40",
     "ORDER BY d", "ORDER BY d + 0"),
]


@pytest.mark.parametrize("query,condition,pairwise", PAIRS, ids=[f"q{i}" for i in range(len(PAIRS))])
async def test_a_join_returns_what_pair_by_pair_evaluation_returns(run, query, condition, pairwise):
    generic = query.replace(condition, pairwise)
    assert len(_joins(query)) == 1 and _joins(generic) == []
    params = {"r": 8000.0}
    got, expected = await run(query, params), await run(generic, params)
    assert got == expected
    assert len(got) >= 3                         # the data makes the comparison meaningful


async def test_contains_join_matches_shapely_on_the_stored_coordinates(run):
    got = await run("MATCH (s:Site), (z:Zone) WHERE contains(z, s) RETURN z.name, s.name")
    zones = await run("MATCH (z:Zone) WHERE z.geometry IS NOT NULL RETURN z.name, z.geometry")
    sites = [(name, (p.longitude, p.latitude) if p is not None else (lon, lat))
             for name, p, lon, lat in await run("MATCH (s:Site) RETURN s.name, s.location, s.lon, s.lat")]
    expected = {(z, s) for z, text in zones for s, (lon, lat) in sites
                if lon is not None and shapely.contains_xy(shapely.from_geojson(text) if text.startswith("{")
                                                           else shapely.from_wkt(text), lon, lat)}
    assert set(map(tuple, got)) == expected and len(expected) > 10


async def test_joins_read_no_cartesian_product(db, run):
    backend, creds = db
    sent = []

    class Recording(SessionRunner):
        async def run(self, query, params):
            sent.append(query)
            return await super().run(query, params)

    await run(PAIRS[0][0], runner=Recording(backend, TxConfig(), creds))
    layer_reads = [q for q in sent if "typeOf(g)" in q]          # a window of each label's geometries
    assert len(layer_reads) == 2 and all("Zone" not in q or "Site" not in q for q in sent[:-1])
    assert "Zone" in sent[-1] and "Site" in sent[-1]             # then the rewritten query
    read = len(sent)
    await run(PAIRS[0][0], runner=Recording(backend, TxConfig(), creds))
    assert len(sent) == read + 1                 # layers cached: the graph has not changed


async def test_writes_are_seen_by_the_next_query_and_inside_the_transaction(db, run):
    backend, creds = db
    query = "MATCH (s:Site), (z:Zone {name: 'z1'}) WHERE contains(z, s) RETURN count(s)"
    before = (await run(query))[0][0]
    centre = (await run("MATCH (z:Zone {name: 'z1'}) RETURN centroid(z)"))[0][0]
    tx = await backend.begin(TxConfig(), creds)
    try:
        runner = SessionRunner(backend, TxConfig(), creds, tx=tx)
        await rows(await runner.run("CREATE (:Site {name: 'new', location: $p})", {"p": centre}))
        assert (await run(query, runner=runner))[0][0] == before + 1
    finally:
        await tx.rollback()
    assert (await run(query))[0][0] == before
    backend_write = SessionRunner(backend, TxConfig(), creds)
    await rows(await backend_write.run("MATCH (z:Zone {name: 'z1'}) SET z.old = z.geometry, "
                                       "z.geometry = 'POLYGON ((3 59, 7 59, 7 61, 3 61, 3 59))'", {}))
    try:
        assert (await run(query))[0][0] == (await run("MATCH (s:Site) WHERE s.location IS NOT NULL "
                                                      "OR s.lat IS NOT NULL RETURN count(s)"))[0][0]
    finally:
        await rows(await backend_write.run("MATCH (z:Zone {name: 'z1'}) SET z.geometry = z.old "
                                           "REMOVE z.old", {}))


async def test_unreadable_stored_geometry_is_an_argument_error_naming_the_node(db, run):
    backend, creds = db
    writer = SessionRunner(backend, TxConfig(), creds)
    await rows(await writer.run("CREATE (:Zone {name: 'bad', geometry: 'POLYGON ((4 60, 5 60'})", {}))
    try:
        with pytest.raises(CypherError) as info:
            await run(PAIRS[0][0])
        assert info.value.code == "Neo.ClientError.Statement.ArgumentError"
        assert "Zone.geometry: Invalid WKT 'POLYGON ((4 60, 5 60'" in info.value.message
    finally:
        await rows(await writer.run("MATCH (z:Zone {name: 'bad'}) DELETE z", {}))


async def test_explain_of_a_join_runs_nothing(run):
    plan = await run("EXPLAIN " + PAIRS[0][0])
    assert plan == []


async def test_bad_bounds_are_argument_errors(run):
    with pytest.raises(CypherError, match="distance\\(a, b\\) < r needs r in metres"):
        await run("MATCH (s:Site), (t:Site) WHERE distance(s, t) < $r RETURN count(*)", {"r": "far"})
    assert await run("MATCH (s:Site), (t:Site) WHERE distance(s, t) < $r RETURN count(*)", {"r": None}) == [[0]]
    with pytest.raises(CypherError, match="LIMIT and SKIP take non-negative integers"):
        await run("MATCH (s:Site {name: 's1'}), (t:Site) RETURN t ORDER BY distance(s, t) LIMIT $k", {"k": -1})
