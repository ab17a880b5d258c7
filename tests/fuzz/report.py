"""Counting what hostile inputs did: crashes, hangs (> 10 s), unexpected errors, and the rest."""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from dataclasses import dataclass, field

#: `FUZZ_LONG=1` runs the long form (tens of thousands of inputs); CI runs a bounded sample.
LONG = bool(os.environ.get("FUZZ_LONG"))
#: The timeout the fuzzer asks for (and the fuzz proxy's default): answers come well inside HANG_SECONDS.
QUERY_TIMEOUT = 5.0
HANG_SECONDS = 10.0
BAD = ("crash", "hang", "unexpected")
#: `FUZZ_LOG=path` appends every input and its outcome there (JSON lines, with the wall time, to
#: read beside the proxy's log): the summary shows only five examples of each bad outcome.
LOG = os.environ.get("FUZZ_LOG")

REPORTS: list["Report"] = []


@dataclass
class Report:
    name: str
    outcomes: Counter = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        REPORTS.append(self)

    def record(self, outcome: str, detail: str = "", shown: str = "") -> None:
        """`outcome`: crash, hang, unexpected, or any other label (an error code, ok, closed)."""
        self.outcomes[outcome] += 1
        if LOG:
            with open(LOG, "a") as log:
                log.write(json.dumps({"at": time.strftime("%H:%M:%S"), "report": self.name,
                                      "outcome": outcome, "detail": detail, "input": shown}) + "\n")
        if outcome in BAD and len(self.examples.setdefault(outcome, [])) < 5:
            self.examples[outcome].append(f"{detail} <- {shown[:300]!r}")

    def bad(self) -> int:
        return sum(self.outcomes[o] for o in BAD)

    def summary(self) -> str:
        total = sum(self.outcomes.values())
        others = ", ".join(f"{k} {v}" for k, v in self.outcomes.most_common() if k not in BAD)
        line = (f"fuzz {self.name}: {total} inputs; crashes {self.outcomes['crash']}, hangs (> "
                f"{HANG_SECONDS:g} s) {self.outcomes['hang']}, unexpected errors "
                f"{self.outcomes['unexpected']}; {others}")
        for outcome, shown in self.examples.items():
            line += "\n  " + outcome + ":\n    " + "\n    ".join(shown)
        return line
