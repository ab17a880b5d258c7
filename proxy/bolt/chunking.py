"""Bolt message framing: u16 length-prefixed chunks, `00 00` ends a message.

A lone `00 00` between messages is a NOOP keep-alive and is skipped. One message
may not grow past the size the caller allows, so a peer cannot make us buffer without bound;
`skip_message` reads past the rest of one that did, so it can be answered with a FAILURE.
"""

from __future__ import annotations

import asyncio

MAX_CHUNK = 0xFFFF
MAX_MESSAGE_SIZE = 64 * 1024 * 1024
END = b"\x00\x00"


class MessageTooLarge(Exception):
    """A message grew past the size allowed; nothing past the limit has been read.

    `size` counts the bytes up to the end of the chunk that crossed the limit, `pending` the
    bytes of that chunk still unread (`skip_message` reads past the rest).
    """

    def __init__(self, max_size: int, size: int, pending: int):
        super().__init__(f"message larger than {max_size} bytes")
        self.size, self.pending = size, pending


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
            raise MessageTooLarge(max_size, size, length)
        parts.append(await reader.readexactly(length))


async def skip_message(reader: asyncio.StreamReader, too_large: MessageTooLarge) -> int:
    """Read past the rest of an oversized message, a chunk at a time; returns its total size."""
    await reader.readexactly(too_large.pending)
    size = too_large.size
    while length := int.from_bytes(await reader.readexactly(2), "big"):
        await reader.readexactly(length)
        size += length
    return size
