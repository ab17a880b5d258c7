"""Build the Sodir (Norwegian Offshore Directorate) demo knowledge graph as tables, with pandas only.

`build_graph` turns the FactPages CSVs in `examples/sodir/` (see its README for origins, NLOD
attribution, encodings and NULL markers) into one node table per label and one table per
relationship type; `production_frame` turns monthly field production into timeseries rows. The
loader (`proxy.demo.loader`) pushes both into a graph database and the timeseries store.

Sources: the current exports (fields, operators, status, reserves, descriptions, production) win;
the 2013 snapshot supplies what only it has (companies, licences, discoveries, facilities,
pipelines, field licensees); wellbores come from the 2022 exports. Everything links by NPDID
(company names where no NPDID is given); what fails to link is counted in `GraphTables.unlinked`
and logged. Coordinates are ED50 (EPSG:4230) in the sources and WGS84 (EPSG:4326) in the graph.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import shapely
from pyproj import Transformer

log = logging.getLogger(__name__)

DEFAULT_SOURCE = Path(__file__).resolve().parents[2] / "examples" / "sodir"

#: Node-table columns that the loader turns into the `location` point instead of properties.
POINT_COLUMNS = ("lat", "lon")

#: Timeseries channels: Sodir's monthly production columns -> channel name and unit.
PRODUCTION_CHANNELS = {
    "prfPrdOilNetMillSm3": ("prd_oil_net", "MSm3"),
    "prfPrdGasNetBillSm3": ("prd_gas_net", "GSm3"),
    "prfPrdNGLNetMillSm3": ("prd_ngl_net", "MSm3"),
    "prfPrdCondensateNetMillSm3": ("prd_condensate_net", "MSm3"),
    "prfPrdOeNetMillSm3": ("prd_oe_net", "MSm3 o.e."),
    "prfPrdProducedWaterInFieldMillSm3": ("prd_water", "MSm3"),
}
PRODUCTION_UNITS = dict(PRODUCTION_CHANNELS.values())

SNAPSHOT_DATE = "2013-05-08"        # sync date of the 2013 snapshot, recorded on what comes from it
_SIMPLIFY_DEGREES = 0.0005          # ~50 m: keeps outlines small without visibly changing them
_WKT_DECIMALS = 6                   # ~0.1 m


@dataclass
class RelTable:
    """Relationships of one type between two labels: `frame` has 'start', 'end' (node ids) + props."""
    type: str
    start_label: str
    end_label: str
    frame: pd.DataFrame


@dataclass
class GraphTables:
    """Node tables by label (columns 'id', 'title', properties; `POINT_COLUMNS` = location) and
    relationship tables; `unlinked` counts references that matched no node, by description."""
    nodes: dict[str, pd.DataFrame]
    relationships: list[RelTable]
    unlinked: dict[str, int] = field(default_factory=dict)


# ---------------------------------------------------------------- reading and cleaning

def _read(source_dir: Path, name: str, **kwargs) -> pd.DataFrame:
    """Read `name` (or `name.gz`) from `source_dir`; 'NULL' and blanks are missing; text stripped."""
    path = Path(source_dir) / name
    if not path.exists():
        path = path.with_name(path.name + ".gz")
    frame = pd.read_csv(path, na_values=["NULL", ""], keep_default_na=False, low_memory=False, **kwargs)
    frame.columns = [c.lstrip("\ufeff") for c in frame.columns]
    for column in frame.columns:
        if pd.api.types.is_string_dtype(frame[column]):
            frame[column] = frame[column].str.strip().replace("", np.nan)
    return frame


def _iso_date(values: pd.Series, dayfirst_format: bool = False) -> pd.Series:
    """Dates as ISO strings; Sodir's open-end marker 9999-12-31 and unparsable values become missing."""
    dates = pd.to_datetime(values, format="%d.%m.%Y" if dayfirst_format else "%Y-%m-%d", errors="coerce")
    dates = dates.where(dates.dt.year < 9999)
    return dates.dt.strftime("%Y-%m-%d").astype(object).where(dates.notna(), None)


def _id(values: pd.Series) -> pd.Series:
    """NPDIDs (ints, sometimes read as floats) as id strings; missing stays missing."""
    return values.astype("Int64").astype("string").astype(object).where(values.notna(), None)


def _yes(values: pd.Series) -> pd.Series:
    """Sodir's YES/NO and Y/N flags as booleans."""
    return values.map({"YES": True, "Y": True, "NO": False, "N": False})


def _table(frame: pd.DataFrame, columns: dict[str, object]) -> pd.DataFrame:
    """A node/relationship table: `columns` maps output names to a source column name or a Series."""
    out = pd.DataFrame({name: frame[src] if isinstance(src, str) else src for name, src in columns.items()},
                       index=frame.index)
    return out.reset_index(drop=True)


# ---------------------------------------------------------------- geometry

_ED50_TO_WGS84 = Transformer.from_crs("EPSG:4230", "EPSG:4326", always_xy=True)


def _to_wgs84(lon: np.ndarray, lat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return _ED50_TO_WGS84.transform(np.asarray(lon, float), np.asarray(lat, float))


def _transform_geometries(geometries: np.ndarray) -> np.ndarray:
    """Shapely geometries from ED50 to WGS84 (all coordinates in one vectorised pyproj call)."""
    return shapely.transform(geometries, lambda xy: np.column_stack(_to_wgs84(xy[:, 0], xy[:, 1])))


def _wkt(geometries) -> np.ndarray:
    simplified = shapely.simplify(geometries, _SIMPLIFY_DEGREES, preserve_topology=True)
    return shapely.to_wkt(simplified, rounding_precision=_WKT_DECIMALS, trim=True)


def _dms(frame: pd.DataFrame, prefix: str, axis: str, negative: str) -> pd.Series:
    """Degrees/minutes/seconds columns (e.g. fclNsDeg, fclNsMin, fclNsSec, fclNsCode) as decimal degrees."""
    value = (frame[f"{prefix}{axis}Deg"] + frame[f"{prefix}{axis}Min"] / 60 + frame[f"{prefix}{axis}Sec"] / 3600)
    return value.where(frame[f"{prefix}{axis}Code"] != negative, -value)


def _add_location(table: pd.DataFrame, lon_ed50: pd.Series, lat_ed50: pd.Series) -> pd.DataFrame:
    lon, lat = _to_wgs84(lon_ed50.to_numpy(), lat_ed50.to_numpy())
    table["lat"], table["lon"] = lat, lon
    return table


# ---------------------------------------------------------------- linking

class _Linker:
    """Keeps relationship tables to existing nodes and counts the references that miss."""

    def __init__(self, nodes: dict[str, pd.DataFrame]):
        self.ids = {label: set(frame["id"]) for label, frame in nodes.items()}
        self.relationships: list[RelTable] = []
        self.unlinked: dict[str, int] = {}

    def add(self, rel_type: str, start_label: str, end_label: str, frame: pd.DataFrame) -> None:
        """Add rows whose 'start' and 'end' exist; rows with a missing 'end' are not references."""
        frame = frame[frame["start"].notna() & frame["end"].notna()]
        ok = frame["start"].isin(self.ids[start_label]) & frame["end"].isin(self.ids[end_label])
        missed = int((~ok).sum())
        if missed:
            self.unlinked[f"({start_label})-[:{rel_type}]->({end_label})"] = missed
        frame = frame[ok].drop_duplicates(["start", "end"]).reset_index(drop=True)
        self.relationships.append(RelTable(rel_type, start_label, end_label, frame))


def _name_key(names: pd.Series) -> pd.Series:
    return names.str.casefold().str.replace(r"\s+", " ", regex=True)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.casefold()).strip("-")


# ---------------------------------------------------------------- node tables

def _fields(src: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Field nodes from the current overview + latest reserves + outline; returns (fields, overview)."""
    ov = _read(src, "sodir_current/subcset_field_overview.csv")
    fields = _table(ov, {
        "id": _id(ov.fldNpdidField), "title": "fldName", "npdid": "fldNpdidField",
        "status": "fldCurrentActivitySatus", "main_area": "fldMainArea", "hc_type": "fldHcType",
        "owner_kind": "fldOwnerKind", "owner_name": "fldOwnerName", "main_supply_base": "fldMainSupplyBase",
        "discovery_wellbore": "wlbName",
        "discovery_wellbore_completed": _iso_date(ov.wlbCompletionDate, dayfirst_format=True),
        "factpage_url": "fldFactPageUrl",
    })
    res = _read(src, "sodir_current/subcset_reserves.csv", index_col=0)
    res = res.sort_values("fldVersion").drop_duplicates("fldNpdidField", keep="last")
    reserves = _table(res, {
        "id": _id(res.fldNpdidField), "reserves_version": "fldVersion",
        **{f"{kind.lower()}_{what.lower()}_{unit}": f"fld{kind}{what}"
           for kind in ("Recoverable", "Remaining")
           for what, unit in (("Oil", "msm3"), ("Gas", "gsm3"), ("NGL", "mtonn"),
                              ("Condensate", "msm3"), ("OE", "msm3_oe"))},
    })
    return fields.merge(reserves, on="id", how="left"), ov


def _outlines(src: Path) -> pd.DataFrame:
    """Discovery outlines within fields (2015 fldArea, ED50), as WGS84 shapely geometries."""
    area = _read(src, "sodir_misc/fldArea_2015_latin1.csv", encoding="latin-1")
    geoms = shapely.make_valid(shapely.from_wkt(area.flddscAreaGeometryWKT_ED50.to_numpy()))
    return pd.DataFrame({"field": _id(area.fldNpdidField), "discovery": _id(area.dscNpdidDiscovery),
                         "geometry": _transform_geometries(geoms)})


def _field_geometry(outlines: pd.DataFrame) -> pd.Series:
    """Per field id: the WKT of the union of its discovery outlines."""
    unions = outlines.groupby("field")["geometry"].agg(lambda g: shapely.union_all(g.to_numpy()))
    return pd.Series(_wkt(unions.to_numpy()), index=unions.index)


def _companies(src: Path, overview: pd.DataFrame, field_licensees: pd.DataFrame,
               licence_licensees: pd.DataFrame) -> pd.DataFrame:
    """Companies from the 2013 register, plus companies only named (with NPDID) by other files."""
    cmp = _read(src, "sodir_2013_snapshot/company.csv")
    companies = _table(cmp, {
        "id": _id(cmp.cmpNpdidCompany), "title": "cmpLongName", "npdid": "cmpNpdidCompany",
        "short_name": "cmpShortName", "org_number": cmp.cmpOrgNumberBrReg.astype("Int64"),
        "group": "cmpGroup",
    })
    named = pd.concat([
        pd.DataFrame({"id": _id(f.cmpNpdidCompany), "title": f.cmpLongName,
                      "npdid": f.cmpNpdidCompany.astype("Int64")})
        for f in (overview, field_licensees, licence_licensees)])
    extra = named[named.id.notna() & ~named.id.isin(companies.id)].drop_duplicates("id")
    return pd.concat([companies, extra], ignore_index=True)


def _licences(src: Path) -> pd.DataFrame:
    lic = _read(src, "sodir_2013_snapshot/licence.csv")
    return _table(lic, {
        "id": _id(lic.prlNpdidLicence), "title": "prlName", "npdid": "prlNpdidLicence",
        "licensing_activity": "prlLicensingActivityName", "main_area": "prlMainArea",
        "status": "prlStatus", "phase": "prlPhaseCurrent",
        "date_granted": _iso_date(lic.prlDateGranted), "date_valid_to": _iso_date(lic.prlDateValidTo),
        "original_area_km2": "prlOriginalArea", "current_area_km2": "prlCurrentArea",
        "factpage_url": "prlFactPageUrl",
    }).assign(as_of=SNAPSHOT_DATE)


def _discoveries(src: Path, outlines: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    dsc = _read(src, "sodir_2013_snapshot/discovery.csv")
    table = _table(dsc, {
        "id": _id(dsc.dscNpdidDiscovery), "title": "dscName", "npdid": "dscNpdidDiscovery",
        "status": "dscCurrentActivityStatus", "hc_type": "dscHcType", "main_area": "nmaName",
        "discovery_year": dsc.dscDiscoveryYear.astype("Int64"),
        "included_in_field_from": _iso_date(dsc.dscDateFromInclInField),
        "owner_kind": "dscOwnerKind", "owner_name": "dscOwnerName",
        "factpage_url": "dscFactPageUrl",
    }).assign(as_of=SNAPSHOT_DATE)
    shapes = outlines.dropna(subset=["discovery"]).groupby("discovery")["geometry"].agg(
        lambda g: shapely.union_all(g.to_numpy()))
    table["geometry"] = table.id.map(pd.Series(_wkt(shapes.to_numpy()), index=shapes.index))
    return table, dsc


def _wellbores(src: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    wlb = pd.concat([_read(src, "sodir_misc/wellbore_development_all_2022.csv"),
                     _read(src, "sodir_misc/wellbore_exploration_all_2022.csv")], ignore_index=True)
    wlb = wlb.drop_duplicates("wlbNpdidWellbore").reset_index(drop=True)
    datum = wlb.wlbGeodeticDatum.fillna("ED50")
    if not datum.str.endswith("ED50").all():
        raise ValueError(f"unexpected wellbore datums: {sorted(set(datum) - {'ED50'})}")
    table = _table(wlb, {
        "id": _id(wlb.wlbNpdidWellbore), "title": "wlbWellboreName", "npdid": "wlbNpdidWellbore",
        "well": "wlbWell", "well_type": "wlbWellType", "purpose": "wlbPurpose", "status": "wlbStatus",
        "content": "wlbContent", "main_area": "wlbMainArea", "sub_sea": _yes(wlb.wlbSubSea),
        "discovery_wellbore": _yes(wlb.wlbDiscoveryWellbore), "multilateral": _yes(wlb.wlbMultilateral),
        "entry_date": _iso_date(wlb.wlbEntryDate, dayfirst_format=True),
        "completion_date": _iso_date(wlb.wlbCompletionDate, dayfirst_format=True),
        "total_depth_m": "wlbTotalDepth", "final_vertical_depth_m": "wlbFinalVerticalDepth",
        "water_depth_m": "wlbWaterDepth", "kelly_bushing_elevation_m": "wlbKellyBushElevation",
        "bottom_hole_temperature_c": "wlbBottomHoleTemperature", "drilling_days": wlb.wlbDrillingDays.astype("Int64"),
        "age_at_td": "wlbAgeAtTd", "formation_at_td": "wlbFormationAtTd",
        "drilling_facility": "wlbDrillingFacility", "drilling_operator": "wlbDrillingOperator",
        "factpage_url": "wlbFactPageUrl",
    })
    return _add_location(table, wlb.wlbEwDesDeg, wlb.wlbNsDecDeg), wlb


def _facilities(src: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    fcl = _read(src, "sodir_2013_snapshot/facility_fixed.csv")
    table = _table(fcl, {
        "id": _id(fcl.fclNpdidFacility), "title": "fclName", "npdid": "fclNpdidFacility",
        "kind": "fclKind", "phase": "fclPhase", "surface": _yes(fcl.fclSurface), "functions": "fclFunctions",
        "belongs_to_name": "fclBelongsToName", "belongs_to_kind": "fclBelongsToKind",
        "startup_date": _iso_date(fcl.fclStartupDate), "water_depth_m": "fclWaterDepth",
        "design_lifetime_years": fcl.fclDesignLifetime.astype("Int64"),
        "factpage_url": "fclFactPageUrl",
    }).assign(as_of=SNAPSHOT_DATE)
    return _add_location(table, _dms(fcl, "fcl", "Ew", "W"), _dms(fcl, "fcl", "Ns", "S")), fcl


def _pipelines(src: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    pip = _read(src, "sodir_2013_snapshot/pipLine.csv")
    lines = _transform_geometries(shapely.from_wkt(pip.pipLineGeometryWKT.to_numpy()))
    return _table(pip, {
        "id": _id(pip.pipNpdidPipe), "title": "pipName", "npdid": "pipNpdidPipe",
        "phase": "pipCurrentPhase", "medium": "pipMedium", "main_grouping": "pipMainGrouping",
        "dimension_inch": "pipDimension", "from_facility": "pipNameFromFacility",
        "to_facility": "pipNameToFacility", "geometry": pd.Series(_wkt(lines), index=pip.index),
    }).assign(as_of=SNAPSHOT_DATE), pip


def _descriptions(src: Path) -> pd.DataFrame:
    desc = _read(src, "sodir_current/subcset_field_description.csv", index_col=0)
    return _table(desc, {
        "id": _id(desc.fldNpdidField) + "-" + desc.fldDescriptionHeading.map(_slug),
        "title": desc.fldName + " – " + desc.fldDescriptionHeading,
        "field": _id(desc.fldNpdidField), "heading": "fldDescriptionHeading", "text": "fldDescriptionText",
        "updated": _iso_date(desc.fldDescriptionDateUpdated, dayfirst_format=True),
    })


def _read_production(src: Path) -> pd.DataFrame:
    return _read(src, "sodir_current/field_production_monthly.csv")


def _profile_id(field_ids: pd.Series) -> pd.Series:
    return "prf-" + field_ids


def _profiles(production: pd.DataFrame, fields: pd.DataFrame) -> pd.DataFrame:
    """One ProductionProfile per field with production (carriers that are not fields are skipped)."""
    months = production.prfYear * 100 + production.prfMonth
    per = production.assign(month=months).groupby("prfNpdidInformationCarrier")["month"].agg(["min", "max", "size"])
    per.index = _id(per.index.to_series())
    per = per[per.index.isin(fields.id)]
    first, last = per["min"], per["max"]
    return pd.DataFrame({
        "id": _profile_id(per.index.to_series()).to_numpy(),
        "title": per.index.map(fields.set_index("id").title).to_numpy(),
        "field": per.index.to_numpy(),
        "first_month": (first // 100).astype(str) + "-" + (first % 100).map("{:02d}".format),
        "last_month": (last // 100).astype(str) + "-" + (last % 100).map("{:02d}".format),
        "months": per["size"].to_numpy(),
    }).reset_index(drop=True)


# ---------------------------------------------------------------- public API

def build_graph(source_dir: Path = DEFAULT_SOURCE) -> GraphTables:
    """All node and relationship tables of the Sodir demo graph (ids link; misses are counted)."""
    src = Path(source_dir)
    fields, overview = _fields(src)
    outlines = _outlines(src)
    fields["geometry"] = fields.id.map(_field_geometry(outlines))
    field_lic = _read(src, "sodir_2013_snapshot/field_licensee_hst.csv")
    licence_lic = _read(src, "sodir_2013_snapshot/licence_licensee_hst.csv")
    companies = _companies(src, overview, field_lic, licence_lic)
    discoveries, dsc = _discoveries(src, outlines)
    wellbores, wlb = _wellbores(src)
    facilities, fcl = _facilities(src)
    pipelines, pip = _pipelines(src)
    descriptions = _descriptions(src)
    production = _read_production(src)
    profiles = _profiles(production, fields)
    nodes = {
        "Field": fields, "Company": companies, "Licence": _licences(src), "Discovery": discoveries,
        "WellBore": wellbores, "Facility": facilities, "Pipeline": pipelines,
        "ProductionProfile": profiles.drop(columns="field"), "FieldDescription": descriptions.drop(columns="field"),
    }
    link = _Linker(nodes)
    company_by_name = pd.Series(companies.id.to_numpy(), index=_name_key(companies.title)).groupby(level=0).first()

    def by_name(names: pd.Series) -> pd.Series:
        return _name_key(names).map(company_by_name).where(names.notna(), None)

    link.add("OF_FIELD", "ProductionProfile", "Field", pd.DataFrame({"start": profiles.id, "end": profiles.field}))
    link.add("DESCRIBES", "FieldDescription", "Field",
             pd.DataFrame({"start": descriptions.id, "end": descriptions.field}))
    link.add("OPERATED_BY", "Field", "Company",
             pd.DataFrame({"start": fields.id, "end": _id(overview.cmpNpdidCompany)}))
    current = field_lic[field_lic.fldLicenseeTo == "9999-12-31"]
    link.add("HAS_LICENSEE", "Field", "Company", _table(current, {
        "start": _id(current.fldNpdidField), "end": _id(current.cmpNpdidCompany),
        "share": "fldCompanyShare", "sdfi_share": "fldSdfiShare",
        "since": _iso_date(current.fldLicenseeFrom)}).assign(as_of=SNAPSHOT_DATE))
    licence_owned = overview[overview.fldOwnerKind == "PRODUCTION LICENCE"]
    link.add("OWNED_BY", "Field", "Licence",
             pd.DataFrame({"start": _id(licence_owned.fldNpdidField), "end": _id(licence_owned.fldNpdidOwner)}))
    current = licence_lic[licence_lic.prlLicenseeDateValidTo == "9999-12-31"]
    link.add("HAS_LICENSEE", "Licence", "Company", _table(current, {
        "start": _id(current.prlNpdidLicence), "end": _id(current.cmpNpdidCompany),
        "share": "prlLicenseeInterest", "sdfi_share": "prlLicenseeSdfi",
        "since": _iso_date(current.prlLicenseeDateValidFrom)}).assign(as_of=SNAPSHOT_DATE))
    operator = current[(current.prlOperDateValidTo == "9999-12-31") & (current.prlOperDateValidFrom != "9999-12-31")]
    link.add("OPERATED_BY", "Licence", "Company",
             pd.DataFrame({"start": _id(operator.prlNpdidLicence), "end": _id(operator.cmpNpdidCompany)}))
    link.add("IN_FIELD", "Discovery", "Field", pd.DataFrame({"start": discoveries.id, "end": _id(dsc.fldNpdidField)}))
    link.add("OPERATED_BY", "Discovery", "Company", pd.DataFrame({"start": discoveries.id, "end": by_name(dsc.cmpLongName)}))
    link.add("DISCOVERED_BY", "Discovery", "WellBore",
             pd.DataFrame({"start": discoveries.id, "end": _id(dsc.wlbNpdidWellbore)}))
    link.add("IN_FIELD", "WellBore", "Field", pd.DataFrame({"start": wellbores.id, "end": _id(wlb.fldNpdidField)}))
    link.add("DRILLED_IN", "WellBore", "Licence",
             pd.DataFrame({"start": wellbores.id, "end": _id(wlb.prlNpdidProductionLicence)}))
    link.add("DRILLED_BY", "WellBore", "Company", pd.DataFrame({"start": wellbores.id, "end": by_name(wlb.wlbDrillingOperator)}))
    link.add("IN_DISCOVERY", "WellBore", "Discovery", pd.DataFrame({"start": wellbores.id, "end": _id(wlb.dscNpdidDiscovery)}))
    link.add("DRILLED_FROM", "WellBore", "Facility",
             pd.DataFrame({"start": wellbores.id, "end": _id(wlb.fclNpdidFacilityDrilling)})
             [wlb.wlbDrillingFacilityFixedOrMoveable == "FIXED"])
    link.add("PRODUCES_TO", "WellBore", "Facility",
             pd.DataFrame({"start": wellbores.id, "end": _id(wlb.fclNpdidFacilityProducing)}))
    in_field = fcl.fclBelongsToKind == "FIELD"
    link.add("IN_FIELD", "Facility", "Field",
             pd.DataFrame({"start": facilities.id, "end": _id(fcl.fclBelongsToS)})[in_field])
    link.add("OPERATED_BY", "Facility", "Company",
             pd.DataFrame({"start": facilities.id, "end": by_name(fcl.fclCurrentOperatorName)}))
    link.add("FROM_FACILITY", "Pipeline", "Facility", pd.DataFrame({"start": pipelines.id, "end": _id(pip.pipNpdidFromFacility)}))
    link.add("TO_FACILITY", "Pipeline", "Facility", pd.DataFrame({"start": pipelines.id, "end": _id(pip.pipNpdidToFacility)}))
    link.add("OPERATED_BY", "Pipeline", "Company", pd.DataFrame({"start": pipelines.id, "end": _id(pip.pipNpdidOperator)}))

    unlinked = dict(link.unlinked)
    unlinked["production carriers that are not fields"] = int(
        (~_id(production.prfNpdidInformationCarrier.drop_duplicates()).isin(fields.id)).sum())
    unlinked["fields without outline"] = int(fields.geometry.isna().sum())
    unlinked["discovery outlines of unknown discoveries"] = int(
        (~outlines.discovery.dropna().drop_duplicates().isin(discoveries.id)).sum())
    log.info("sodir graph: unlinked references %s", unlinked)
    return GraphTables(nodes, link.relationships, unlinked)


def production_frame(source_dir: Path = DEFAULT_SOURCE) -> pd.DataFrame:
    """Monthly production rows for the timeseries store: key (ProductionProfile id), time (first of
    month), one float column per channel of `PRODUCTION_CHANNELS`; only carriers that are fields."""
    src = Path(source_dir)
    prod = _read_production(src)
    fields = set(_id(_read(src, "sodir_current/subcset_field_overview.csv").fldNpdidField))
    carrier = _id(prod.prfNpdidInformationCarrier)
    prod = prod[carrier.isin(fields)]
    frame = pd.DataFrame({
        "key": _profile_id(carrier[prod.index]).to_numpy(),
        "time": pd.to_datetime(pd.DataFrame({"year": prod.prfYear, "month": prod.prfMonth, "day": 1})).to_numpy(),
        **{name: prod[column].astype("float64").to_numpy() for column, (name, _) in PRODUCTION_CHANNELS.items()},
    })
    return frame.sort_values(["key", "time"], ignore_index=True)
