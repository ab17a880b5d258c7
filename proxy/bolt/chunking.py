"""Bolt message framing: u16 length-prefixed chunks, `00 00` ends a message.

A lone `00 00` between messages is a NOOP keep-alive and is skipped. One message
may not grow past `MAX_MESSAGE_SIZE`, so a peer cannot make us buffer without bound.
"""

from __future__ import annotations

import asyncio

MAX_CHUNK = 0xFFFF
MAX_MESSAGE_SIZE = 64 * 1024 * 1024
END = b"\x00\x00"


class MessageTooLarge(Exception):
    """A message exceeded MAX_MESSAGE_SIZE; the connection is closed."""


def chunk(message: bytes) -> bytes:
    """Frame one message: as many 65535-byte chunks as it takes, then `00 00`."""
    if len(message) <= MAX_CHUNK:
        return len(message).to_bytes(2, "big") + message + END
    view = memoryview(message)
    parts = []
    for start in range(0, len(view), MAX_CHUNK):
        piece = view[start:start + MAX_CHUNK]
        parts.append(len(piece).to_bytes(2, "big"))
        parts.append(piece)
    parts.append(END)
    return b"".join(parts)


async def read_message(reader: asyncio.StreamReader, max_size: int = MAX_MESSAGE_SIZE) -> bytes:
    """The next whole message, NOOPs skipped.

    Raises `asyncio.IncompleteReadError` at end of stream and `MessageTooLarge`.
    """
    parts: list[bytes] = []
    size = 0
    while True:
        length = int.from_bytes(await reader.readexactly(2), "big")
        if length == 0:
            if parts:
                return b"".join(parts)
            continue                      # NOOP
        size += length
        if size > max_size:
            raise MessageTooLarge(f"message larger than {max_size} bytes")
        parts.append(await reader.readexactly(length))
