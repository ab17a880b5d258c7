"""The openCypher TCK, check by check through a proxy on the embedded database, classified
against Neo4j's answers (conformance/classify.py): silent-wrong and accepts-invalid checks must
not rise above the ceilings kept in conformance/tck_ceilings.json.

The same run as `python -m conformance --only tck` without the FalkorDB-direct differential;
that command also writes the full list (conformance/tck-report.txt).
"""

from __future__ import annotations

import pytest

from conformance.classify import ACCEPTS_INVALID, SILENT_WRONG
from conformance.differential import EndpointTarget, classify_tck
from conformance.tally import over_ceilings, read_ceilings
from tests.harness import PASSWORD, TCK_DIR, TCK_MISSING, USER, ProxyProcess

pytestmark = pytest.mark.skipif(not TCK_DIR.is_dir(), reason=TCK_MISSING)

SHOWN = 25


@pytest.fixture(scope="module")
def tally():
    """The whole TCK classified through a proxy of this module's own (the run empties its
    default graph before every scenario, so it shares no proxy)."""
    with ProxyProcess() as proxy:
        endpoint = EndpointTarget(proxy.uri, (USER, PASSWORD))
        try:
            yield classify_tck(TCK_DIR, endpoint)
        finally:
            endpoint.close()


def test_every_runnable_check_is_classified(tally):
    assert not tally.unparsed
    assert len(tally.entries) > 3800       # 3,879 checks in the TCK this suite was written on


@pytest.mark.parametrize("kind", [SILENT_WRONG, ACCEPTS_INVALID])
def test_no_more_than_the_ceiling(tally, kind):
    counts, ceilings = tally.counts(), read_ceilings()
    over = over_ceilings(counts, {kind: ceilings[kind]})
    listed = [f"{e.folder}/{e.scenario.id}\n    {e.check.query!r}\n    expected: "
              f"{e.verdict.expected}\n    got:      {e.verdict.got}"
              for e in tally.entries if e.verdict.kind == kind][:SHOWN]
    assert not over, "\n".join([tally.summary(), *over, f"first {SHOWN}:", *listed])
