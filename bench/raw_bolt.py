"""A minimal blocking Bolt client for benchmarks: no driver cost between the clock and the wire.

It pre-encodes each query's RUN + PULL (or BEGIN + RUN + PULL) once and then only sends those
bytes and reads the reply messages until the PULL's final SUCCESS, counting RECORDs without
decoding them.
"""

from __future__ import annotations

import socket
from urllib.parse import urlparse

from proxy.bolt.chunking import chunk
from proxy.bolt.handshake import MAGIC
from proxy.packstream import Packer

HELLO, LOGON, RUN, BEGIN, COMMIT, PULL = 0x01, 0x6A, 0x10, 0x11, 0x12, 0x3F
SUCCESS, RECORD, FAILURE = 0x70, 0x71, 0x7F


class RawBolt:
    """One Bolt 5 connection; `run(query)` returns the number of records."""

    def __init__(self, uri: str, user: str, password: str):
        address = urlparse(uri)
        self._sock = socket.create_connection((address.hostname, address.port))
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._buffer = bytearray()
        # 5.8 down to 5.0 in one slot; then nothing.
        self._sock.sendall(MAGIC + bytes([0, 8, 8, 5]) + bytes(12))
        version = self._exactly(4)
        self.version = (version[3], version[2])
        self._packer = Packer(self.version)
        auth = {"scheme": "basic", "principal": user, "credentials": password}
        hello = {"user_agent": "bench-raw-bolt/1.0"}
        if self.version < (5, 1):
            hello.update(auth)
        self._request([(HELLO, [hello])])
        if self.version >= (5, 1):
            self._request([(LOGON, [auth])])
        self._prepared: dict[tuple[str, frozenset], bytes] = {}

    def run(self, query: str, params: dict | None = None) -> int:
        """Send RUN + PULL(all) in one write; read up to the final SUCCESS."""
        key = (query, frozenset((params or {}).items()))
        data = self._prepared.get(key)
        if data is None:
            data = self._prepared[key] = self._encode([(RUN, [query, params or {}, {}]), (PULL, [{"n": -1}])])
        self._sock.sendall(data)
        return self._responses(2)

    def transaction(self, query: str) -> int:
        """BEGIN + RUN + PULL(all) in one write, as drivers pipeline them; then COMMIT."""
        data = self._prepared.get((query, None))
        if data is None:
            data = self._prepared[(query, None)] = self._encode(
                [(BEGIN, [{}]), (RUN, [query, {}, {}]), (PULL, [{"n": -1}])])
        self._sock.sendall(data)
        records = self._responses(3)
        self._request([(COMMIT, [])])
        return records

    def close(self) -> None:
        self._sock.close()

    def __enter__(self) -> "RawBolt":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- wire

    def _encode(self, messages: list[tuple[int, list]]) -> bytes:
        return b"".join(chunk(self._packer.pack_message(sig, fields)) for sig, fields in messages)

    def _request(self, messages: list[tuple[int, list]]) -> int:
        self._sock.sendall(self._encode(messages))
        return self._responses(len(messages))

    def _responses(self, summaries: int) -> int:
        """Read messages until `summaries` non-RECORD ones arrived; returns the RECORD count."""
        records = 0
        buffer = self._buffer
        pos = 0
        start = 0                       # where the current message's first chunk begins
        signature = None
        while True:
            if len(buffer) - pos < 2:
                del buffer[:start]
                pos -= start
                start = 0
                self._fill()
                continue
            size = (buffer[pos] << 8) | buffer[pos + 1]
            if size == 0:
                pos += 2
                if signature is None:   # a NOOP
                    start = pos
                    continue
                if signature == RECORD:
                    records += 1
                elif signature == FAILURE:
                    raise RuntimeError(f"FAILURE: {bytes(buffer[start:pos])!r:.300}")
                else:
                    summaries -= 1
                    if summaries == 0:
                        del buffer[:pos]
                        return records
                signature, start = None, pos
                continue
            if len(buffer) - pos < 2 + size:
                del buffer[:start]
                pos -= start
                start = 0
                self._fill()
                continue
            if signature is None:
                signature = buffer[pos + 3]
            pos += 2 + size

    def _fill(self) -> None:
        data = self._sock.recv(1 << 16)
        if not data:
            raise ConnectionError("server closed the connection")
        self._buffer += data

    def _exactly(self, n: int) -> bytes:
        while len(self._buffer) < n:
            self._fill()
        data = bytes(self._buffer[:n])
        del self._buffer[:n]
        return data
