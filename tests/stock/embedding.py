"""A deterministic text embedding for the vector tests: letter-bigram counts, L2-normalised.

Pure Python, shared by the client scripts (stock environment) and the tests (which compute the
expected nearest texts with it independently of the database).
"""

from __future__ import annotations

import math

DIMENSIONS = 32


def embed(text: str) -> list[float]:
    vector = [0.0] * DIMENSIONS
    letters = "".join(c for c in text.lower() if c.isalnum())
    for a, b in zip(letters, letters[1:]):
        vector[(ord(a) * 31 + ord(b)) % DIMENSIONS] += 1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b))
