"""`python -m conformance`: protocol, driver and TCK checks against any Bolt endpoint.

The TCK section classifies every runnable TCK check against Neo4j's answer (conformance/classify.py)
and writes the silent-wrong and accepts-invalid ones to conformance/tck-report.txt. Without --uri
it starts its own proxy (FalkorDB backend, throwaway data dir) and, knowing the FalkorDB behind
it, also runs the TCK differential (proxy vs FalkorDB's primary direct). WARNING: the TCK section
empties the endpoint's default database before every scenario.

Exit status 0 when every protocol and driver check passes, the silent-wrong and accepts-invalid
counts are within conformance/tck_ceilings.json, and no TCK scenario differs between the proxy
and FalkorDB direct (beyond the documented allow-list); 1 otherwise.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

from conformance.differential import EndpointTarget, FalkorTarget, run_tck
from conformance.drivers import run_drivers
from conformance.protocol import run_protocol
from conformance.report import Section
from proxy.backends.falkordb.roles import primary_address
from tests.harness import PASSWORD, TCK_DIR, USER, ProxyProcess

SECTIONS = ("protocol", "drivers", "tck")
REPORT = Path(__file__).with_name("last-report.txt")


def _args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m conformance", description=__doc__.splitlines()[0])
    parser.add_argument("--uri", help="bolt://host:port of the endpoint (default: start a proxy)")
    parser.add_argument("--user", default=USER)
    parser.add_argument("--password", default=PASSWORD)
    parser.add_argument("--tck", type=Path, default=TCK_DIR, metavar="DIR",
                        help=f"the openCypher TCK's feature directory (default $TCK_DIR or {TCK_DIR})")
    parser.add_argument("--tck-limit", type=int, default=None, help="run at most N TCK scenarios")
    parser.add_argument("--only", default=",".join(SECTIONS),
                        help="comma-separated sections: " + ",".join(SECTIONS))
    args = parser.parse_args(argv)
    args.only = [s.strip() for s in args.only.split(",") if s.strip()]
    if unknown := set(args.only) - set(SECTIONS):
        parser.error(f"unknown section(s) {sorted(unknown)}; choose from {','.join(SECTIONS)}")
    return args


def run(args: argparse.Namespace, uri: str, data_dir: Path | None) -> list[Section]:
    """The chosen sections; `data_dir`: the proxy's own, when this suite started it."""
    sections = []
    if "protocol" in args.only:
        section = Section("protocol (raw Bolt bytes)")
        address = urlparse(uri)
        run_protocol(section, address.hostname, address.port or 7687, args.user, args.password)
        sections.append(section)
    if "drivers" in args.only:
        section = Section("drivers")
        run_drivers(section, uri, args.user, args.password)
        sections.append(section)
    if "tck" in args.only:
        section = Section(f"tck (openCypher TCK, {args.tck})")
        if not args.tck.is_dir():
            section.skip("TCK", f"{args.tck} not found: pass --tck DIR (make conformance TCK=DIR)")
        else:
            endpoint = EndpointTarget(uri, (args.user, args.password))
            falkor = FalkorTarget(lambda: primary_address(data_dir / "falkordb")) if data_dir else None
            try:
                run_tck(section, args.tck, endpoint, falkor, args.tck_limit)
            finally:
                endpoint.close()
                if falkor:
                    falkor.close()
        sections.append(section)
    return sections


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    started = time.monotonic()
    proxy = None
    if args.uri:
        uri, direct, target = args.uri, None, args.uri
    else:
        proxy = ProxyProcess().start()
        uri, direct = proxy.uri, proxy.data_dir
        target = f"{uri} (own proxy, FalkorDB backend)"
    try:
        sections = run(args, uri, direct)
    finally:
        if proxy:
            proxy.stop()
    failed = sum(s.failed for s in sections)
    verdict = "PASS" if not failed else f"FAIL ({failed} failed checks)"
    summary = f"RESULT: {verdict} in {time.monotonic() - started:.0f} s"
    text = "\n\n".join([f"conformance report for {target}", *(s.render() for s in sections), summary]) + "\n"
    print(text, end="")
    REPORT.write_text(text, encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
