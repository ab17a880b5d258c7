"""Bad bytes from one client close only that client's connection; the server keeps serving."""

from __future__ import annotations

import socket
import struct

import pytest

MAGIC = b"\x60\x60\xb0\x17"
SLOTS_5X = bytes.fromhex("00080805") + bytes.fromhex("00020404") + bytes(8)


def _address(proxy):
    host, port = proxy.uri.removeprefix("bolt://").rsplit(":", 1)
    return host, int(port)


def _connect(proxy) -> socket.socket:
    sock = socket.create_connection(_address(proxy), timeout=10)
    return sock


def _closed(sock: socket.socket) -> bool:
    """True once the server has closed the connection (reads EOF or reset)."""
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def _message(signature: int, *fields: bytes) -> bytes:
    body = bytes([0xB0 | len(fields), signature]) + b"".join(fields)
    return struct.pack(">H", len(body)) + body + b"\x00\x00"


def _tiny_map() -> bytes:
    return b"\xa0"


def _still_serving(driver) -> None:
    records, _, _ = driver.execute_query("RETURN 42 AS answer")
    assert records[0]["answer"] == 42


def test_wrong_magic_closes(proxy, driver):
    with _connect(proxy) as sock:
        sock.sendall(b"GARBAGE!" + bytes(12))
        assert _closed(sock)
    _still_serving(driver)


def test_no_common_version_gets_zero_reply(proxy, driver):
    with _connect(proxy) as sock:
        sock.sendall(MAGIC + bytes.fromhex("00000001") + bytes(12))   # only Bolt 1.0
        assert sock.recv(4) == bytes(4)
        assert _closed(sock)
    _still_serving(driver)


@pytest.mark.parametrize("payload", [
    struct.pack(">H", 8) + b"\xff" * 8 + b"\x00\x00",     # a whole chunk of garbage
    struct.pack(">H", 3) + b"\xb1\x01\xc9" + b"\x00\x00",   # HELLO with truncated int16
    struct.pack(">H", 2) + b"\xb0\xee" + b"\x00\x00",       # unknown message signature
])
def test_garbage_after_handshake_closes(proxy, driver, payload):
    with _connect(proxy) as sock:
        sock.sendall(MAGIC + SLOTS_5X)
        assert sock.recv(4) == bytes.fromhex("00000805")
        sock.sendall(payload)
        assert _closed(sock)
    _still_serving(driver)


def test_message_in_wrong_state_closes(proxy, driver):
    with _connect(proxy) as sock:
        sock.sendall(MAGIC + SLOTS_5X)
        assert sock.recv(4) == bytes.fromhex("00000805")
        run = _message(0x10, b"\x88RETURN 1", _tiny_map(), _tiny_map())   # RUN before HELLO
        sock.sendall(run)
        data = sock.recv(65536)
        assert data[2:4] == b"\xb1\x7f"          # FAILURE
        assert _closed(sock)
    _still_serving(driver)


def test_oversized_message_closes(proxy, driver):
    chunk = struct.pack(">H", 65535) + b"\x00" * 65535
    with _connect(proxy) as sock:
        sock.sendall(MAGIC + SLOTS_5X)
        assert sock.recv(4) == bytes.fromhex("00000805")
        try:
            for _ in range(1200):                # ~78 MB without an end-of-message marker
                sock.sendall(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass
        assert _closed(sock)
    _still_serving(driver)


def test_disconnect_mid_handshake_and_mid_message(proxy, driver):
    for payload in (MAGIC[:2], MAGIC + SLOTS_5X[:5]):
        sock = _connect(proxy)
        sock.sendall(payload)
        sock.close()
    _still_serving(driver)
