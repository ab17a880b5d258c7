"""neomodel (the Neo4j OGM) as its users run it: install the schema twice, save and query
models, a unique violation, and `neomodel_inspect_database` generating model classes from the
graph. Usage: python neomodel_client.py BOLT_URI [MODELS_FILE]; prints one JSON object."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

from neomodel import (IntegerProperty, RelationshipTo, StringProperty, StructuredNode, UniqueIdProperty, db,
                      get_config)
from neomodel.exceptions import UniqueProperty


class OgmCountry(StructuredNode):
    code = StringProperty(unique_index=True, required=True)
    name = StringProperty(index=True)


class OgmPerson(StructuredNode):
    uid = UniqueIdProperty()
    name = StringProperty(unique_index=True)
    age = IntegerProperty(index=True, default=0)
    country = RelationshipTo(OgmCountry, "OGM_IS_FROM")


class OgmUser(StructuredNode):
    """A user store keyed twice, as applications keep them (issue 24's sequence)."""
    uid = StringProperty(unique_index=True, required=True)
    email = StringProperty(unique_index=True)


def main() -> None:
    address = urlparse(sys.argv[1])
    url = f"bolt://neo4j:password@{address.hostname}:{address.port}"
    get_config().database_url = url
    out: dict = {}
    for attempt in ("first", "second"):
        log = io.StringIO()
        db.install_all_labels(stdout=log)
        out[f"install_{attempt}"] = log.getvalue()
    norway = OgmCountry(code="NO", name="Norway").save()
    for name, age in (("Ada", 36), ("Grace", 85), ("Alan", 41)):
        OgmPerson(name=name, age=age).save().country.connect(norway)
    try:
        OgmPerson(name="Ada", age=1).save()
        out["duplicate"] = "saved"
    except UniqueProperty as error:
        out["duplicate"] = "UniqueProperty: " + error.message
    except Exception as error:  # noqa: BLE001 - the test reports which error it was
        out["duplicate"] = f"{type(error).__name__}: {error}"
    # get_or_create with a second row that breaks the email constraint (one UNWIND ... MERGE),
    # then create_or_update: FalkorDB 4.16 crashed its replica on exactly this
    OgmUser.get_or_create({"uid": "a", "email": "a@x"})
    try:
        OgmUser.get_or_create({"uid": "b", "email": "b@x"}, {"uid": "c", "email": "a@x"})
        out["user_batch"] = "saved"
    except UniqueProperty:
        out["user_batch"] = "UniqueProperty"
    except Exception as error:  # noqa: BLE001 - the test reports which error it was
        out["user_batch"] = f"{type(error).__name__}: {error}"
    OgmUser.create_or_update({"uid": "d", "email": "d@x"}, {"uid": "a", "email": "a@x"})
    out["users"] = sorted((u.uid, u.email) for u in OgmUser.nodes.all())
    out["older_than_40"] = sorted(p.name for p in OgmPerson.nodes.filter(age__gt=40))
    out["from_norway"] = sorted(p.name for p in OgmPerson.nodes.all() if p.country.is_connected(norway))
    generated = Path(sys.argv[2]) if len(sys.argv) > 2 else None
    if generated is not None:
        done = subprocess.run([str(Path(sys.executable).parent / "neomodel_inspect_database"), "--db", url,
                               "--write-to", generated.name], capture_output=True, text=True, timeout=120,
                              cwd=generated.parent)       # it writes only under its working directory
        out["inspect"] = {"returncode": done.returncode, "stderr": done.stderr[-2000:],
                          "models": generated.read_text() if generated.exists() else ""}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
