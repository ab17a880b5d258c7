"""Compatibility shims: what Neo4j tools call at start-up, served where the backend lacks it.

One module per family (`dbms`, `show`, `db_schema`, `apoc_meta`); each builds
`VirtualProcedure` rows that `catalog.build_registry` registers, so SHOW PROCEDURES and
`dbms.procedures()` list exactly what is served. Each names the capability it stands in for
(`stands_in_for`, `core/dialect.py`) and is served where the backend's dialect lacks it (on the
embedded FalkorDB): a real Neo4j behind the proxy answers its own.

Rewrites rather than answers: `apoc_merge`/`apoc_refactor` (APOC writes with labels and types
from the data), `vector` (Neo4j's vector and fulltext procedures, Cypher 25 SEARCH; fulltext
queries in Lucene's syntax via `lucene`), `apoc_maps` (APOC functions whose map keys come from
the data; the others are a bridge rule, `bridges/apoc_functions.py`), `schema_commands` (named
CREATE/DROP INDEX and CONSTRAINT).
"""

from __future__ import annotations

from pathlib import Path

from extensions.registry import VirtualProcedure

from .apoc_meta import apoc_meta_procedures
from .db_schema import db_schema_procedures
from .dbms import dbms_procedures
from .schema_catalog import NameStore
from .show import show_procedures


def compat_procedures(names: NameStore) -> list[VirtualProcedure]:
    """Every shim; index and constraint names are read from (and written to) `names`."""
    return [*dbms_procedures(), *show_procedures(names), *db_schema_procedures(),
            *apoc_meta_procedures(names)]


def name_store(data_dir: Path) -> NameStore:
    """Where index and constraint names live: `<data_dir>/schema-names.json`."""
    return NameStore(Path(data_dir) / "schema-names.json")
