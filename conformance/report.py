"""The suite's report: one section per part, each a list of named checks plus free lines."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Section:
    title: str
    lines: list[str] = field(default_factory=list)
    passed: int = 0
    failed: int = 0
    skipped: int = 0

    def check(self, name: str, ok: bool, detail: str = "") -> bool:
        """Record one pass/fail check (a failure makes the suite exit non-zero)."""
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        self.lines.append(f"  {'PASS' if ok else 'FAIL'}  {name}" + (f": {detail}" if detail else ""))
        return ok

    def skip(self, name: str, reason: str) -> None:
        self.skipped += 1
        self.lines.append(f"  SKIP  {name}: {reason}")

    def note(self, line: str) -> None:
        self.lines.append(f"  {line}")

    def render(self) -> str:
        head = f"== {self.title}: {self.passed} passed, {self.failed} failed, {self.skipped} skipped"
        return "\n".join([head, *self.lines])
