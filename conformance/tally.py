"""The TCK classification's counts, its report file and the ceilings it must stay under.

Counts go per class and per feature folder (`clauses/match`, `expressions/temporal`, ...). The
report file lists every silent-wrong and accepts-invalid check with its query and the TCK's
answer against the proxy's, for whoever fixes them. `CEILINGS` (kept in the repo) holds the
highest silent-wrong and accepts-invalid counts allowed: the run fails above them, and when a
fix brings a count down, lower the number in the file in the same commit (it only goes down).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from conformance.classify import ACCEPTS_INVALID, CLASSES, OTHER_ERROR, SILENT_WRONG, Verdict, error_code
from conformance.tck import Check, Scenario

CEILINGS = Path(__file__).with_name("tck_ceilings.json")
LISTED = (SILENT_WRONG, ACCEPTS_INVALID)


@dataclass
class Entry:
    folder: str
    scenario: Scenario
    check: Check
    verdict: Verdict


@dataclass
class Tally:
    """Every classified check of one run, plus the checks whose expected cells did not parse."""

    root: Path
    entries: list[Entry] = field(default_factory=list)
    unparsed: list[str] = field(default_factory=list)

    def folder(self, scenario: Scenario) -> str:
        """`clauses/match` for `.../clauses/match/Match1.feature`."""
        return "/".join(scenario.feature.parent.relative_to(self.root).parts[:2])

    def add(self, scenario: Scenario, check: Check, verdict: Verdict) -> None:
        self.entries.append(Entry(self.folder(scenario), scenario, check, verdict))

    def counts(self) -> Counter:
        return Counter(e.verdict.kind for e in self.entries)

    def by_folder(self) -> dict[str, Counter]:
        folders: dict[str, Counter] = defaultdict(Counter)
        for entry in self.entries:
            folders[entry.folder][entry.verdict.kind] += 1
        return dict(sorted(folders.items()))

    def summary(self) -> str:
        counts, total = self.counts(), len(self.entries)
        share = f" ({100 * counts[CLASSES[0]] / total:.1f}% match)" if total else ""
        return f"{total} checks{share}: " + ", ".join(f"{counts[k]} {k}" for k in CLASSES)

    def table(self) -> list[str]:
        """One line per folder: its count in each class."""
        folders = self.by_folder()
        width = max(map(len, ["folder", *folders])) + 2
        head = f"{'folder':{width}}" + "".join(f"{k:>16}" for k in CLASSES)
        rows = [f"{folder:{width}}" + "".join(f"{counts[k]:>16}" for k in CLASSES)
                for folder, counts in folders.items()]
        return [head, *rows]

    def other_errors(self) -> list[str]:
        """The other-error checks counted by the TCK's error type and the code the proxy gave."""
        pairs = Counter((e.check.expected.error, e.check.expected.phase, error_code(e.verdict.got))
                        for e in self.entries if e.verdict.kind == OTHER_ERROR)
        return [f"{n:5}  TCK {error} at {phase}, proxy {code}"
                for (error, phase, code), n in pairs.most_common()]

    def listing(self) -> str:
        """The report file's text: the summary, the folder table, then every listed check."""
        lines = [f"TCK classification: {self.summary()}", "", *self.table()]
        for kind in LISTED:
            entries = [e for e in self.entries if e.verdict.kind == kind]
            lines += ["", f"== {kind}: {len(entries)}"]
            for e in entries:
                lines += ["", f"-- {e.folder}/{e.scenario.id}",
                          *("   " + line for line in e.check.query.splitlines()),
                          f"   expected: {e.verdict.expected}", f"   got:      {e.verdict.got}"]
        lines += ["", f"== {OTHER_ERROR}, by the TCK's error and the proxy's code", *self.other_errors()]
        if self.unparsed:
            lines += ["", f"== expected cells this suite cannot parse: {len(self.unparsed)}",
                      *self.unparsed]
        return "\n".join(lines) + "\n"


def read_ceilings(path: Path = CEILINGS) -> dict[str, int]:
    return json.loads(path.read_text(encoding="utf-8"))


def over_ceilings(counts: Counter, ceilings: dict[str, int]) -> list[str]:
    """One line per class above its ceiling (empty when all are within)."""
    return [f"{kind}: {counts[kind]} > ceiling {limit} in {CEILINGS.name}"
            for kind, limit in ceilings.items() if counts[kind] > limit]


def under_ceilings(counts: Counter, ceilings: dict[str, int]) -> list[str]:
    """One line per class now below its ceiling: the number to lower the ceiling to."""
    return [f"{kind}: {counts[kind]} < ceiling {limit}: lower it in {CEILINGS.name}"
            for kind, limit in ceilings.items() if counts[kind] < limit]
