"""Bolt version negotiation: the legacy four-slot handshake and manifest v1.

The client sends the magic `60 60 B0 17` and four big-endian slots
`[reserved, range, minor, major]` in order of preference. A slot `00 00 01 FF`
asks for a manifest handshake: the server lists everything it speaks and the
client picks one (this is the only way Bolt 6.x is negotiated).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

MAGIC = b"\x60\x60\xb0\x17"
MANIFEST_V1 = (0xFF, 1)                  # (major, minor) of the manifest sentinel slot
NO_VERSION = b"\x00\x00\x00\x00"

#: Versions agreed through the legacy handshake, best first (never 5.5: no server speaks it).
LEGACY_VERSIONS: tuple[tuple[int, int], ...] = (
    (5, 8), (5, 7), (5, 6), (5, 4), (5, 3), (5, 2), (5, 1), (5, 0), (4, 4),
)
#: Versions a client may pick from the manifest (Bolt 6 exists only there).
MANIFEST_VERSIONS: tuple[tuple[int, int], ...] = ((6, 0), *LEGACY_VERSIONS)


class HandshakeError(Exception):
    """The peer is not a Bolt client we can serve; the connection is closed."""


@dataclass(frozen=True, slots=True)
class Negotiated:
    version: tuple[int, int]
    manifest: bool


def parse_slots(data: bytes) -> list[tuple[int, int, int]]:
    """The 16 bytes after the magic as `(major, minor, range)` slots."""
    return [(data[i + 3], data[i + 2], data[i + 1]) for i in range(0, 16, 4)]


def choose(slots: list[tuple[int, int, int]]) -> tuple[int, int] | None:
    """The first slot we can serve decides: the manifest sentinel, or the best version in range.

    Returns `MANIFEST_V1` for a manifest handshake, a version, or None.
    """
    for major, minor, span in slots:
        if (major, minor) == MANIFEST_V1:
            return MANIFEST_V1
        for version in LEGACY_VERSIONS:
            if version[0] == major and minor - span <= version[1] <= minor:
                return version
    return None


def encode_varint(n: int) -> bytes:
    """Base-128 varint, least significant group first (the manifest's counts and capabilities)."""
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


async def read_varint(reader: asyncio.StreamReader, max_bytes: int = 5) -> int:
    value = 0
    for i in range(max_bytes):
        byte = (await reader.readexactly(1))[0]
        value |= (byte & 0x7F) << (7 * i)
        if not byte & 0x80:
            return value
    raise HandshakeError("varint too long")


def _ranges(versions: tuple[tuple[int, int], ...]) -> list[tuple[int, int, int]]:
    """Group consecutive minors of one major into `(major, minor, range)` offers."""
    ranges: list[tuple[int, int, int]] = []
    for major, minor in versions:
        if ranges:
            top_major, top_minor, span = ranges[-1]
            if top_major == major and top_minor - span - 1 == minor:
                ranges[-1] = (major, top_minor, span + 1)
                continue
        ranges.append((major, minor, 0))
    return ranges


def manifest_reply(versions: tuple[tuple[int, int], ...] = MANIFEST_VERSIONS) -> bytes:
    """`00 00 01 FF`, the offer count, the offers `00 range minor major`, capabilities 0."""
    offers = _ranges(versions)
    body = b"".join(bytes((0, span, minor, major)) for major, minor, span in offers)
    return b"\x00\x00\x01\xff" + encode_varint(len(offers)) + body + encode_varint(0)


async def negotiate(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> Negotiated:
    """Run the server side of the handshake; raises HandshakeError (caller closes) on failure."""
    if await reader.readexactly(4) != MAGIC:
        raise HandshakeError("wrong magic preamble")
    chosen = choose(parse_slots(await reader.readexactly(16)))
    if chosen is None:
        writer.write(NO_VERSION)
        await writer.drain()
        raise HandshakeError("no common Bolt version")
    if chosen != MANIFEST_V1:
        writer.write(bytes((0, 0, chosen[1], chosen[0])))
        await writer.drain()
        return Negotiated(chosen, manifest=False)
    writer.write(manifest_reply())        # one write: the JS driver parses it from one buffer
    await writer.drain()
    reply = await reader.readexactly(4)
    await read_varint(reader)             # the client's capabilities; we offered none
    version = (reply[3], reply[2])
    if version not in MANIFEST_VERSIONS:
        raise HandshakeError(f"client chose Bolt {version[0]}.{version[1]}, which was not offered")
    return Negotiated(version, manifest=True)
