"""Bolt handshake and chunking: pure functions, then byte-level checks over real sockets."""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st
from neo4j.time import DateTime

from proxy.bolt import handshake as hs
from proxy.bolt.chunking import MAX_CHUNK, chunk, read_message
from proxy.packstream import Packer
from tests.unit.test_bolt_support import (
    MAGIC,
    PASSWORD,
    USER,
    BoltServer,
    RawClient,
    slots,
)

MANIFEST = (0xFF, 1, 0)

# Slot lists of real clients (bolt-and-http-notes.md §1 table) -> what the server must answer.
CLIENT_SLOTS = {
    "python 5.28 / 6.4 / js 5.28 / 6.3": ([MANIFEST, (5, 8, 8), (4, 4, 2), (3, 0, 0)], hs.MANIFEST_V1),
    "legacy part of the same": ([(5, 8, 8), (4, 4, 2), (3, 0, 0)], (5, 8)),
    "js 5.26 (Neo4j Browser)": ([(5, 7, 7), (4, 4, 2), (4, 1, 0), (3, 0, 0)], (5, 7)),
    "5.5 only": ([(5, 5, 0)], None),
    "5.5 down to 5.4": ([(5, 5, 1)], (5, 4)),
    "4.4 only": ([(4, 4, 0)], (4, 4)),
    "4.3 and 3.0": ([(4, 3, 0), (3, 0, 0)], None),
    "6.0 is manifest-only": ([(6, 0, 0), (5, 0, 0)], (5, 0)),
    "first servable slot wins": ([(5, 2, 0), (5, 8, 0)], (5, 2)),
}


@pytest.mark.parametrize("client", CLIENT_SLOTS)
def test_choose_for_real_client_slot_lists(client):
    client_slots, expected = CLIENT_SLOTS[client]
    assert hs.choose(hs.parse_slots(slots(*client_slots))) == expected


def test_manifest_reply_lists_every_version_as_ranges():
    assert hs.manifest_reply() == bytes.fromhex(
        "000001FF" "04" "00000006" "00020805" "00040405" "00000404" "00")


@given(st.integers(min_value=0, max_value=2**32))
async def test_varint_roundtrip(n):
    reader = asyncio.StreamReader()
    reader.feed_data(hs.encode_varint(n))
    assert await hs.read_varint(reader, max_bytes=5) == n


@given(st.lists(st.binary(min_size=1, max_size=3 * MAX_CHUNK), max_size=4), st.data())
async def test_chunking_roundtrip_with_noops(messages, data):
    stream = b""
    for message in messages:
        stream += b"\x00\x00" * data.draw(st.integers(0, 2)) + chunk(message)
    reader = asyncio.StreamReader()
    reader.feed_data(stream)
    reader.feed_eof()
    assert [await read_message(reader) for _ in messages] == messages


def test_chunk_splits_at_65535_bytes():
    framed = chunk(b"x" * (MAX_CHUNK + 1))
    assert framed[:2] == b"\xff\xff"
    assert framed[2 + MAX_CHUNK:2 + MAX_CHUNK + 3] == b"\x00\x01x"
    assert framed.endswith(b"x\x00\x00")


# ---- over a socket -----------------------------------------------------------------------

async def _open(port):
    return await asyncio.open_connection("127.0.0.1", port)


@pytest.mark.parametrize("client", CLIENT_SLOTS)
async def test_handshake_reply_bytes(client):
    client_slots, expected = CLIENT_SLOTS[client]
    async with BoltServer() as srv:
        reader, writer = await _open(srv.port)
        writer.write(MAGIC + slots(*client_slots))
        reply = await asyncio.wait_for(reader.read(100), 5)
        if expected is None:
            assert reply == b"\x00\x00\x00\x00"
            assert await asyncio.wait_for(reader.read(1), 5) == b""      # closed
        elif expected == hs.MANIFEST_V1:
            assert reply == hs.manifest_reply()                        # all of it in one read
        else:
            assert reply == bytes((0, 0, expected[1], expected[0]))
        writer.close()


@pytest.mark.parametrize("choice,protocol_version", [((5, 8), "5.8"), ((6, 0), "6.0"), ((5, 4), None)])
async def test_manifest_negotiation_then_hello(choice, protocol_version):
    async with BoltServer() as srv:
        reader, writer = await _open(srv.port)
        writer.write(MAGIC + slots(MANIFEST, (5, 8, 8)))
        assert await reader.readexactly(len(hs.manifest_reply())) == hs.manifest_reply()
        writer.write(bytes((0, 0, choice[1], choice[0])) + b"\x00")
        client = RawClient(reader, writer, choice)
        client.send(0x01, {"user_agent": "raw/1"})
        signature, (meta,) = await client.recv()
        assert signature == 0x70
        assert meta["server"].startswith("Neo4j/5.") and meta["connection_id"].startswith("bolt-")
        assert meta["hints"] == {}
        assert meta.get("protocol_version") == protocol_version
        client.close()


async def test_manifest_choice_not_offered_closes():
    async with BoltServer() as srv:
        reader, writer = await _open(srv.port)
        writer.write(MAGIC + slots(MANIFEST))
        await reader.readexactly(len(hs.manifest_reply()))
        writer.write(b"\x00\x00\x05\x05\x00")                     # 5.5: never offered
        assert await asyncio.wait_for(reader.read(1), 5) == b""
        writer.close()


async def test_legacy_handshake_has_no_protocol_version():
    async with BoltServer() as srv:
        client = await RawClient.connect(srv.port, (5, 8), hello=False)
        client.send(0x01, {"user_agent": "raw/1"})
        _, (meta,) = await client.recv()
        assert "protocol_version" not in meta
        client.close()


@pytest.mark.parametrize("opening", [b"GET / HTTP/1.1\r\n\r\n", b"\x60\x60\xb0\x18" + bytes(16), b"\xff" * 20])
async def test_wrong_magic_closes_and_server_keeps_serving(opening):
    async with BoltServer() as srv:
        reader, writer = await _open(srv.port)
        writer.write(opening)
        assert await asyncio.wait_for(reader.read(100), 5) == b""
        writer.close()
        client = await RawClient.connect(srv.port)                 # the next client is served
        client.close()


async def test_bolt_4_4_echoes_utc_patch_and_uses_utc_datetimes():
    value = DateTime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    for patch, tag in ((["utc"], 0x49), ([], 0x46)):
        async with BoltServer() as srv:
            client = await RawClient.connect(srv.port, (4, 4), hello=False)
            client.send(0x01, {"user_agent": "raw/1", "patch_bolt": patch, "scheme": "basic",
                               "principal": USER, "credentials": PASSWORD})
            _, (meta,) = await client.recv()
            assert meta.get("patch_bolt", []) == patch
            if patch:
                client.packer = Packer((4, 4), utc_patch=True)
            client.send(0x10, "RETURN $x AS x", {"x": value}, {})
            client.send(0x3F, {"n": -1})
            assert (await client.recv())[0] == 0x70
            record = await read_message(client.reader)
            assert record[:2] == b"\xb1\x71" and record[3:5] == bytes((0xB3, tag))
            client.close()
