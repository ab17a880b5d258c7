"""Regenerate the expected results in tests/data/java_regex_cases.json from a real JVM.

    python scripts/java_regex_table.py [--java /path/to/java]   (Java 21 or newer)

Each case is [pattern, input, expected]: what `Pattern.compile(pattern).matcher(input).matches()`
gives in Java ("true", "false" or "error"), which is what Neo4j's `=~` answers. The proxy's
translation for FalkorDB is checked against this table by tests/unit/test_java_regex.py.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TABLE = HERE.parent / "tests" / "data" / "java_regex_cases.json"


def java_major(java: str) -> int:
    """The feature release of the `java` executable (17, 21, 25, ...)."""
    out = subprocess.run([java, "-XshowSettings:properties", "-version"], capture_output=True, text=True).stderr
    for line in out.splitlines():
        if "java.specification.version" in line:
            return int(line.split("=")[1].strip().split(".")[-1] if "1." in line else line.split("=")[1].strip())
    return 0


def find_java(minimum: int = 21) -> str | None:
    """A `java` of at least `minimum`: on PATH or under /usr/lib/jvm."""
    candidates = [shutil.which("java")] + sorted(str(p) for p in Path("/usr/lib/jvm").glob("*/bin/java"))
    for java in filter(None, candidates):
        if java_major(java) >= minimum:
            return java
    return None


def run_java(java: str, pairs: list[tuple[str, str]]) -> list[str]:
    """Java's answer for each (pattern, input): "true", "false" or "error <description>"."""
    with tempfile.TemporaryDirectory() as classes:
        javac = str(Path(java).with_name("javac"))
        subprocess.run([javac, "-d", classes, str(HERE / "JavaRegex.java")], check=True)
        data = "".join(f"{p.encode().hex()}\t{s.encode().hex()}\n" for p, s in pairs)
        out = subprocess.run([java, "-cp", classes, "JavaRegex"], input=data, capture_output=True,
                             text=True, check=True).stdout
    return out.splitlines()


def dump(table: dict) -> str:
    """The table as JSON with one case per line (ASCII: the cases hold line separators)."""
    cases = ",\n".join("  " + json.dumps(case) for case in table["cases"])
    head = {k: v for k, v in table.items() if k != "cases"}
    return json.dumps(head, indent=1)[:-2] + ',\n "cases": [\n' + cases + "\n ]\n}\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--java", default=find_java())
    java = parser.parse_args().java
    if not java:
        raise SystemExit("no Java 21 or newer found (pass --java)")
    table = json.loads(TABLE.read_text())
    answers = run_java(java, [(p, s) for p, s, _ in table["cases"]])
    table["java"] = f"Java {java_major(java)}"
    table["cases"] = [[p, s, a.split(" ")[0]] for (p, s, _), a in zip(table["cases"], answers)]
    TABLE.write_text(dump(table))
    print(f"{len(answers)} cases from {java}")


if __name__ == "__main__":
    main()
