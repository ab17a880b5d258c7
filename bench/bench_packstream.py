"""PackStream speed: encode and decode 100k typical RECORD messages with our codec and with
the neo4j driver's pure-Python packstream, in the same process; time per record and ratio."""

from __future__ import annotations

import time

from neo4j._codec.hydration.v2 import HydrationHandler
from neo4j._codec.packstream.v1 import (
    PackableBuffer,
    UnpackableBuffer,
)
from neo4j._codec.packstream.v1 import (
    Packer as DriverPacker,
)
from neo4j._codec.packstream.v1 import (
    Structure as DriverStructure,
)
from neo4j._codec.packstream.v1 import (
    Unpacker as DriverUnpacker,
)

from proxy.packstream import Packer, unpack_message
from core.values import Node

RECORDS = 100_000
RECORD = 0x71


def typical_record(i: int) -> list:
    """A row like `RETURN n.id, n.score, n.name, {..} AS meta, n` on a modest node."""
    node = Node(i, ["Wellbore", "Exploration"],
                {"name": f"31/2-{i}", "depth": 2345.5 + i, "year": 1990 + i % 30, "active": i % 2 == 0},
                f"4:5f1c7e2a-0d7b-4b8e-9a55-3c2f1e0d9b71:{i}")
    return [i, i * 0.25, f"wellbore {i}", {"kind": "oil", "count": i % 100, "ok": True}, node]


def _as_driver_value(record: list) -> list:
    """The driver cannot pack proxy Nodes: hand it the equivalent raw structure."""
    *scalars, node = record
    return [*scalars, DriverStructure(b"N", node.id, node.labels, node.properties, node.element_id)]


def _timed(fn, rounds: int = 2) -> float:
    """Best of `rounds`: the machine is shared, the minimum is the least disturbed run."""
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    records = [typical_record(i) for i in range(RECORDS)]
    driver_records = [_as_driver_value(r) for r in records]

    packer = Packer((5, 0))
    ours_enc = _timed(lambda: [packer.pack_message(RECORD, [r]) for r in records])
    ours_encoded = [packer.pack_message(RECORD, [r]) for r in records]

    hooks = HydrationHandler().new_hydration_scope()
    buffer = PackableBuffer()
    driver_packer = DriverPacker(buffer)
    def driver_encode() -> list[bytes]:
        encoded = []
        for r in driver_records:
            buffer.clear()
            driver_packer.pack_struct(b"q", [r], hooks.dehydration_hooks)
            encoded.append(bytes(buffer.data))
        return encoded

    driver_enc = _timed(driver_encode)
    driver_encoded = driver_encode()
    assert ours_encoded == driver_encoded, "our bytes differ from the driver's"

    def ours_decode() -> None:
        for b in ours_encoded:  # results dropped as the server does, so GC does not skew the timing
            unpack_message(b)

    def driver_decode() -> None:
        for b in ours_encoded:
            DriverUnpacker(UnpackableBuffer(b)).unpack(hooks.hydration_hooks)

    ours_dec = _timed(ours_decode)
    driver_dec = _timed(driver_decode)

    size = sum(map(len, ours_encoded)) / RECORDS
    print(f"{RECORDS} records of [int, float, str, 3-key map, Node with 4 properties], {size:.0f} bytes each")
    for name, ours, driver in (("encode", ours_enc, driver_enc), ("decode", ours_dec, driver_dec)):
        print(f"{name}: ours {ours / RECORDS * 1e6:6.2f} µs/record   driver {driver / RECORDS * 1e6:6.2f} "
              f"µs/record   ours/driver {ours / driver:.2f}")


if __name__ == "__main__":
    main()
