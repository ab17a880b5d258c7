"""The Sodir demo graph tables, built from the real CSVs in examples/sodir."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
import shapely
from pyproj import Geod

from proxy.demo.loader import _node_statements, _rel_statements
from proxy.demo.sodir import (
    DEFAULT_SOURCE,
    PRODUCTION_UNITS,
    build_graph,
    production_frame,
)

ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
NORWAY_OFFSHORE = shapely.box(-3.0, 55.5, 38.0, 75.0)   # lon/lat: North, Norwegian and Barents Seas


@pytest.fixture(scope="module")
def graph():
    return build_graph(DEFAULT_SOURCE)


@pytest.fixture(scope="module")
def production():
    return production_frame(DEFAULT_SOURCE)


def _node(graph, label, title):
    frame = graph.nodes[label]
    rows = frame[frame.title == title]
    assert len(rows) == 1, f"{label} {title!r}: {len(rows)} rows"
    return rows.iloc[0]


def test_node_counts(graph):
    counts = {label: len(frame) for label, frame in graph.nodes.items()}
    assert counts == {"Field": 142, "Company": 541, "Licence": 910, "Discovery": 429, "WellBore": 7545,
                      "Facility": 647, "Pipeline": 59, "ProductionProfile": 124, "FieldDescription": 710}


def test_ids_are_unique_strings_and_titles_present(graph):
    for label, frame in graph.nodes.items():
        assert frame.id.map(type).eq(str).all(), label
        assert frame.id.is_unique, label
        assert frame.title.notna().all(), label


def test_every_relationship_endpoint_exists(graph):
    ids = {label: set(frame.id) for label, frame in graph.nodes.items()}
    assert len(graph.relationships) >= 20
    for rel in graph.relationships:
        name = f"({rel.start_label})-[:{rel.type}]->({rel.end_label})"
        assert len(rel.frame) > 0, name
        assert set(rel.frame.start) <= ids[rel.start_label], name
        assert set(rel.frame.end) <= ids[rel.end_label], name
        assert not rel.frame.duplicated(["start", "end"]).any(), name


def test_unlinked_references_are_counted(graph):
    assert graph.unlinked["production carriers that are not fields"] == 3   # DELTA, Troldhaugen, Alta
    assert 0 < graph.unlinked["(WellBore)-[:DRILLED_IN]->(Licence)"] < 0.05 * len(graph.nodes["WellBore"])


def test_troll_field(graph):
    troll = _node(graph, "Field", "TROLL")
    assert troll.id == "46437" and troll.status == "Producing" and troll.main_area == "North sea"
    outline = shapely.from_wkt(troll.geometry)
    assert outline.is_valid and outline.geom_type in ("Polygon", "MultiPolygon")
    lon0, lat0, lon1, lat1 = outline.bounds
    assert 3.3 < lon0 < lon1 < 4.1 and 60.4 < lat0 < lat1 < 61.0
    area_km2 = abs(Geod(ellps="WGS84").geometry_area_perimeter(outline)[0]) / 1e6
    assert 500 < area_km2 < 1500


def test_troll_has_one_production_profile_and_descriptions(graph):
    rels = {(r.type, r.start_label): r.frame for r in graph.relationships}
    profiles = rels[("OF_FIELD", "ProductionProfile")]
    assert list(profiles[profiles.end == "46437"].start) == ["prf-46437"]
    assert profiles.end.is_unique
    assert _node(graph, "ProductionProfile", "TROLL").id == "prf-46437"
    described = rels[("DESCRIBES", "FieldDescription")]
    assert len(described[described.end == "46437"]) == 5
    licensees = rels[("HAS_LICENSEE", "Field")]
    assert licensees[licensees.start == "46437"].share.sum() == pytest.approx(100, abs=0.01)


def test_wellbore_locations_are_wgs84_offshore_norway(graph):
    wells = graph.nodes["WellBore"]
    assert wells[["lat", "lon"]].notna().all().all()
    assert shapely.contains_xy(NORWAY_OFFSHORE, wells.lon, wells.lat).all()
    # Troll's discovery well lies inside Troll's outline
    well = _node(graph, "WellBore", "31/2-1")
    outline = shapely.from_wkt(_node(graph, "Field", "TROLL").geometry)
    assert outline.buffer(0.01).contains(shapely.Point(well.lon, well.lat))


def test_ed50_to_wgs84_shift_is_applied(graph):
    """ED50 coordinates in the North Sea sit roughly 100 m from WGS84: the datum shift must show."""
    well = _node(graph, "WellBore", "1/3-A-1 H")   # ED50 in the export: 56.931961 N, 2.671294 E
    _, _, metres = Geod(ellps="WGS84").inv(2.671294, 56.931961, well.lon, well.lat)
    assert 50 < metres < 250


def test_facilities_have_locations_and_fields(graph):
    facility = _node(graph, "Facility", "OSEBERG A")
    assert shapely.contains_xy(NORWAY_OFFSHORE, facility.lon, facility.lat)
    assert abs(facility.lat - 60.4919) < 0.002 and abs(facility.lon - 2.8273) < 0.003
    in_field = next(r.frame for r in graph.relationships if (r.type, r.start_label) == ("IN_FIELD", "Facility"))
    oseberg = _node(graph, "Field", "OSEBERG").id
    assert (facility.id, oseberg) in set(zip(in_field.start, in_field.end))


def test_pipelines_have_lines_and_both_ends(graph):
    lines = shapely.from_wkt(graph.nodes["Pipeline"].geometry.to_numpy())
    assert set(shapely.get_type_id(lines)) <= {1, 5}      # LineString, MultiLineString
    ends = {r.type: r.frame for r in graph.relationships if r.start_label == "Pipeline"}
    assert len(ends["FROM_FACILITY"]) == len(ends["TO_FACILITY"]) == len(graph.nodes["Pipeline"])


def test_property_values_are_clean(graph):
    for label, frame in graph.nodes.items():
        for column in frame.columns:
            if column.startswith("date_") or column.endswith(("_date", "_from", "updated", "completed")) or column == "as_of":
                values = frame[column].dropna()
                assert values.map(lambda v: bool(ISO_DATE.match(v))).all(), f"{label}.{column}"


def test_loader_rows_hold_plain_values_without_nulls(graph):
    for query, rows in _node_statements("WellBore", graph.nodes["WellBore"]):
        assert "MERGE (n:`WellBore` {id: r.id})" in query and "point({latitude" in query
        for row in rows:
            for value in row["props"].values():
                assert type(value) in (str, int, float, bool), (row["id"], value)
                assert not (isinstance(value, float) and math.isnan(value))
            assert "lat" not in row["props"] and "id" not in row["props"]
    licensees = next(r for r in graph.relationships if (r.type, r.start_label) == ("HAS_LICENSEE", "Field"))
    rows = [row for _, batch in _rel_statements(licensees) for row in batch]
    assert len(rows) == len(licensees.frame) and all(type(r["props"]["share"]) is float for r in rows)


def test_production_frame(production, graph):
    assert list(production.columns) == ["key", "time", *PRODUCTION_UNITS]
    assert set(PRODUCTION_UNITS) == {"prd_oil_net", "prd_gas_net", "prd_ngl_net", "prd_condensate_net",
                                     "prd_oe_net", "prd_water"}
    assert production.time.dt.day.eq(1).all() and np.issubdtype(production.time.dtype, np.datetime64)
    assert set(production.key) == set(graph.nodes["ProductionProfile"].id)
    assert not production.duplicated(["key", "time"]).any()
    troll = production[(production.key == "prf-46437") & production.time.dt.year.between(2015, 2024)]
    assert len(troll) == 120
    assert troll.prd_gas_net.sum() == pytest.approx(
        _raw_troll_gas_2015_2024(), rel=1e-9)


def _raw_troll_gas_2015_2024() -> float:
    raw = pd.read_csv(DEFAULT_SOURCE / "sodir_current" / "field_production_monthly.csv.gz")
    raw.columns = [c.lstrip("\ufeff") for c in raw.columns]
    rows = raw[(raw.prfNpdidInformationCarrier == 46437) & raw.prfYear.between(2015, 2024)]
    return float(rows.prfPrdGasNetBillSm3.sum())
