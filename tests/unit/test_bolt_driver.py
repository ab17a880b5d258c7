"""The official neo4j drivers against the Bolt server (MemoryBackend behind it).

The 5.28 async driver runs in the test's event loop; neo4j 6.4.1 (from .cache/neo4j6)
runs as a subprocess so it can negotiate Bolt 6.0 through the manifest.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import ssl
import sys
import textwrap
from pathlib import Path

import neo4j
import pytest

from tests.unit.test_bolt_support import PASSWORD, USER, BoltServer

RANGE = "UNWIND range(1, $n) AS i RETURN i"
CREATE = "CREATE (:Item {v: $v})"
MATCH = "MATCH (n:Item) RETURN n.v AS v"
NEO4J6 = Path(__file__).resolve().parents[2] / ".cache" / "neo4j6"
AUTH = (USER, PASSWORD)


@pytest.fixture
async def server():
    async with BoltServer() as srv:
        yield srv


@pytest.fixture
async def driver(server):
    async with neo4j.AsyncGraphDatabase.driver(f"bolt://{server.address}", auth=AUTH) as drv:
        yield drv


async def test_negotiates_5_8_and_reports_server(driver):
    info = await driver.get_server_info()
    assert info.protocol_version == (5, 8) and info.agent.startswith("Neo4j/5.")


async def test_execute_query_and_counters(driver, server):
    records, summary, keys = await driver.execute_query(RANGE, n=3)
    assert keys == ["i"] and [r["i"] for r in records] == [1, 2, 3]
    assert summary.database == "neo4j" and summary.query_type == "r"
    _, summary, _ = await driver.execute_query(CREATE, v=7)
    assert summary.counters.nodes_created == 1 and summary.counters.contains_updates
    assert summary.query_type == "w"
    records, _, _ = await driver.execute_query(MATCH)
    assert [r["v"] for r in records] == [7]


async def test_session_run_consume_and_bookmarks(driver):
    async with driver.session() as session:
        result = await session.run(CREATE, v=1)
        summary = await result.consume()
        assert summary.counters.nodes_created == 1 and summary.counters.properties_set == 1
        assert (await session.last_bookmarks()).raw_values == frozenset({"FB:auto"})


async def test_explicit_transaction_commit_and_rollback(driver, server):
    async with driver.session() as session:
        tx = await session.begin_transaction(timeout=4, metadata={"app": "t"})
        await tx.run(CREATE, v=1)
        await tx.rollback()
        assert server.backend.items == []
        assert (server.backend.configs[-1].timeout, server.backend.configs[-1].metadata) == (4.0, {"app": "t"})
        tx = await session.begin_transaction()
        await tx.run(CREATE, v=2)
        await tx.commit()
        assert server.backend.items == [2]
        assert (await session.last_bookmarks()).raw_values == frozenset({"FB:tx1"})


async def test_two_open_results_in_one_transaction(driver):
    async with driver.session(fetch_size=2) as session:
        async with await session.begin_transaction() as tx:
            first = await tx.run(RANGE, n=5)
            second = await tx.run(RANGE, n=3)
            assert [r["i"] for r in await first.fetch(2)] == [1, 2]
            assert await second.values() == [[1], [2], [3]]
            assert await first.values() == [[3], [4], [5]]
            await tx.commit()


async def test_managed_transactions(driver, server):
    async def write(tx, v):
        await (await tx.run(CREATE, v=v)).consume()

    async def read(tx):
        return await (await tx.run(MATCH)).values()

    async with driver.session() as session:
        await session.execute_write(write, 5)
        assert await session.execute_read(read) == [[5]]


async def test_errors_surface_as_neo4j_errors_and_connection_recovers(driver):
    with pytest.raises(neo4j.exceptions.CypherSyntaxError):
        await driver.execute_query("nonsense")
    records, _, _ = await driver.execute_query(RANGE, n=1)
    assert len(records) == 1


async def test_large_result_streams_in_batches(driver, server):
    async with driver.session() as session:
        result = await session.run(RANGE, n=200_000)
        total = 0
        async for record in result:
            total += record["i"]
    assert total == 200_000 * 200_001 // 2
    assert max(server.backend.fetch_sizes) <= 1000


async def test_neo4j_routing_scheme(server):
    async with neo4j.AsyncGraphDatabase.driver(f"neo4j://{server.address}", auth=AUTH) as drv:
        await drv.verify_connectivity()
        await drv.verify_connectivity(database="system")
        records, _, _ = await drv.execute_query(RANGE, n=2, routing_=neo4j.RoutingControl.READ)
        assert len(records) == 2
        _, summary, _ = await drv.execute_query(CREATE, v=1, database_="other")
        assert summary.database == "other"


async def _self_signed_cert(directory: Path) -> tuple[Path, Path]:
    cert, key = directory / "cert.pem", directory / "key.pem"
    try:
        import datetime as dt
        import ipaddress

        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
    except ImportError:
        if not shutil.which("openssl"):
            pytest.skip("neither the cryptography package nor the openssl CLI is available")
        proc = await asyncio.create_subprocess_exec(
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-keyout", str(key), "-out", str(cert),
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
        assert await proc.wait() == 0
        return cert, key
    private = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = dt.datetime.now(dt.timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
                   .public_key(private.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - dt.timedelta(minutes=1)).not_valid_after(now + dt.timedelta(days=1))
                   .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                               x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                                  critical=False)
                   .sign(private, hashes.SHA256()))
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    return cert, key


async def test_bolt_over_tls(tmp_path):
    cert, key = await _self_signed_cert(tmp_path)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    async with BoltServer(ssl_context=context) as srv:
        async with neo4j.AsyncGraphDatabase.driver(f"bolt+ssc://{srv.address}", auth=AUTH) as drv:
            records, _, _ = await drv.execute_query(RANGE, n=2)
            assert len(records) == 2
        async with neo4j.AsyncGraphDatabase.driver(
                f"neo4j://{srv.address}", auth=AUTH, encrypted=True,
                trusted_certificates=neo4j.TrustCustomCAs(str(cert))) as drv:
            records, _, _ = await drv.execute_query(RANGE, n=3)
            assert len(records) == 3
        async with neo4j.AsyncGraphDatabase.driver(f"bolt://{srv.address}", auth=AUTH,
                                                   connection_timeout=3) as drv:
            with pytest.raises(neo4j.exceptions.ServiceUnavailable):
                await drv.verify_connectivity()                # plain text to a TLS port


NEO4J6_SCRIPT = textwrap.dedent("""
    import sys, neo4j
    assert neo4j.__version__.startswith("6."), neo4j.__version__
    with neo4j.GraphDatabase.driver(f"neo4j://{sys.argv[1]}", auth=("neo4j", "password")) as d:
        records, summary, _ = d.execute_query("UNWIND range(1, $n) AS i RETURN i", n=3)
        assert [r["i"] for r in records] == [1, 2, 3]
        with d.session() as s:
            with s.begin_transaction() as tx:
                tx.run("CREATE (:Item {v: $v})", v=1).consume()
                assert tx.run("MATCH (n:Item) RETURN n.v AS v").values() == [[1]]
        try:
            d.execute_query("nonsense")
        except neo4j.exceptions.Neo4jError as e:
            assert e.code == "Neo.ClientError.Statement.SyntaxError", e.code
        else:
            raise AssertionError("no error")
        print("protocol", *summary.server.protocol_version)
""")


@pytest.mark.skipif(not (NEO4J6 / "neo4j").is_dir(), reason="pip install --target .cache/neo4j6 neo4j==6.4.1")
async def test_neo4j_6_driver_negotiates_bolt_6_through_the_manifest(server):
    env = {**os.environ, "PYTHONPATH": str(NEO4J6)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", NEO4J6_SCRIPT, server.address, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, out.decode()
    assert out.decode().split() == ["protocol", "6", "0"]
    assert server.backend.items == [1]
