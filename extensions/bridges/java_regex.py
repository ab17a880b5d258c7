"""Java regular expressions (what Neo4j's `=~` uses) translated for FalkorDB's Oniguruma.

Neo4j evaluates `s =~ p` as `Pattern.compile(p).matcher(s).matches()`. FalkorDB's
`string.matchRegEx` runs Oniguruma with its Java syntax, which parses most of Java's notation
but matches differently in places (all measured on FalkorDB 4.16 against Java 21+):
`\\w \\d \\s \\b` and POSIX classes are Unicode there and ASCII in Java; `.` excludes only `\\n`
(Java: every line terminator); `(?i)` folds all of Unicode, `ß` to `ss` included (Java: ASCII
unless `(?u)`, and one character to one); `\\h`, `\\R`, `\\0101`, `(?x)`, named groups and most
`\\p{Is...}`/`\\p{java...}` properties are missing or mean something else.

So the translator parses the Java pattern itself and writes an Oniguruma pattern in which every
construct says exactly what Java means: explicit ASCII classes, explicit line terminators in
`.`, `^` and `$`, case variants spelled out as classes (Oniguruma's own `(?i)` is never used),
named groups numbered, comments and `\\Q...\\E` resolved, anchored to the whole string.
A pattern Java rejects raises `InvalidRegex` (Neo4j: "Invalid Regex: ..."); a construct with no
faithful translation raises `Untranslatable` naming it. Checked case by case against a real JVM
(tests/unit/test_java_regex.py). `\\b` follows Java 21+ (Neo4j 2025.x and 5.26 on Java 21),
where it agrees with `\\w`; Java 17's `\\b` also counts non-ASCII letters as word characters.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from .java_classes import (CLASSES, TERMINATORS, WORD, NoEquivalent, UnknownProperty, escaped, property_class,
                           ranges, unicode_case_class)

#: Java's inline flags: CASE_INSENSITIVE, MULTILINE, DOTALL, UNICODE_CASE, COMMENTS, UNIX_LINES,
#: UNICODE_CHARACTER_CLASS.
_FLAGS = set("imsuxdU")
_MAX_REPEAT = 100_000          # Oniguruma's limit on {n,m}
#: Put before every assertion: Oniguruma refuses to repeat one, or an alternation with one in a
#: branch of its own ("target of repeat operator is invalid"), unless something precedes it; Java
#: allows both (`(?:^|,)*`), and the empty group changes nothing else.
_ASSERT = "(?:)"


class InvalidRegex(ValueError):
    """Java would not compile the pattern."""


class Untranslatable(ValueError):
    """Java compiles the pattern, but Oniguruma cannot be made to match it the same way."""


@lru_cache(maxsize=1024)
def translate(pattern: str) -> str:
    """The Oniguruma pattern (Java syntax) that fully matches exactly what `pattern` matches in
    Java's `Pattern.matches`."""
    return _Translator(pattern).run()


class _Translator:
    def __init__(self, pattern: str):
        self.p = pattern
        self.i = 0
        self.flags = ""
        self.groups = 0               # capturing groups opened so far (Java numbers them in order)
        self.names: dict[str, int] = {}
        self.open: list[int] = []     # capturing groups not yet closed

    def run(self) -> str:
        body = self.alternation()
        if self.i < len(self.p):
            raise self.invalid("Unmatched closing ')'")
        return f"\\A(?:{body})\\z"

    # -- errors and reading

    def invalid(self, what: str, at: int | None = None) -> InvalidRegex:
        return InvalidRegex(f"{what} near index {self.i if at is None else at}\n{self.p}")

    def untranslatable(self, what: str) -> Untranslatable:
        return Untranslatable(f"{what} (in the regular expression {self.p!r})")

    def peek(self, ahead: int = 0) -> str:
        j = self.i + ahead
        return self.p[j] if j < len(self.p) else ""

    def take(self) -> str:
        if self.i >= len(self.p):
            raise self.invalid("Unexpected end of pattern")
        c = self.p[self.i]
        self.i += 1
        return c

    def skip_comments(self) -> None:
        """In (?x) mode whitespace and `# ...` to the end of the line are not part of the pattern."""
        while "x" in self.flags and self.i < len(self.p):
            c = self.p[self.i]
            if c in " \t\n\x0b\f\r":
                self.i += 1
            elif c == "#":
                while self.i < len(self.p) and self.p[self.i] not in "\n\r\u0085\u2028\u2029":
                    self.i += 1
            else:
                return

    # -- structure

    def alternation(self) -> str:
        branches = [self.sequence()]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.sequence())
        return "|".join(branches)

    def sequence(self) -> str:
        parts: list[str] = []
        while True:
            self.skip_comments()
            c = self.peek()
            if c in ("", "|", ")"):
                return "".join(parts)
            atom = self.atom()
            if atom is None:
                continue
            parts.append(atom + self.quantifier())

    def atom(self) -> str | None:
        c = self.take()
        if c == "(":
            return self.group()
        if c == "[":
            return "[" + self.class_body() + "]"
        if c == ".":
            return "[\\s\\S]" if "s" in self.flags else (
                "[^\\n]" if "d" in self.flags else f"[^{TERMINATORS}]")
        if c in "^$":
            return _ASSERT + (self.caret() if c == "^" else self.dollar())
        if c == "\\":
            return self.escape()
        if c in "*+?":
            raise self.invalid(f"Dangling meta character '{c}'", self.i - 1)
        if c == "{":
            raise self.invalid("Illegal repetition", self.i - 1)
        return self.literal(ord(c))

    def quantifier(self) -> str:
        self.skip_comments()
        c = self.peek()
        if c in ("*", "+", "?"):
            self.i += 1
            q = c
        elif c == "{":
            start = self.i
            self.i += 1
            low = self.number()
            if low is None:
                raise self.invalid("Illegal repetition", start)
            high = low
            if self.peek() == ",":
                self.i += 1
                high = self.number()
            if self.peek() != "}":
                raise self.invalid("Unclosed counted closure", self.i)
            self.i += 1
            if high is not None and high < low:
                raise self.invalid("Illegal repetition range", start)
            if max(low, high or 0) > _MAX_REPEAT:
                raise self.untranslatable(f"a repetition count above {_MAX_REPEAT:,}")
            q = f"{{{low},{'' if high is None else high}}}" if high != low else f"{{{low}}}"
        else:
            return ""
        if self.peek() in ("?", "+"):
            q += self.take()
        return q

    def number(self) -> int | None:
        start = self.i
        while self.peek().isdigit() and self.peek().isascii():
            self.i += 1
        return int(self.p[start:self.i]) if self.i > start else None

    def group(self) -> str | None:
        saved = self.flags
        number = None
        if self.peek() != "?":
            self.groups += 1
            number = self.groups
            head = "("
        else:
            self.i += 1
            c = self.take()
            if c in ":=!>":
                head = "(?" + c
            elif c == "<" and self.peek() in ("=", "!"):
                head = "(?<" + self.take()
            elif c == "<":
                name = self.group_name()
                if name in self.names:
                    raise self.invalid(f"Named capturing group <{name}> is already defined")
                self.groups += 1
                number = self.names[name] = self.groups
                head = "("
            else:
                self.i -= 1
                if self.inline_flags():            # (?i) alone: changes the enclosing group's flags
                    return None
                head = "(?:"
        self.open.append(number)
        body = self.alternation()
        self.open.pop()
        if self.peek() != ")":
            raise self.invalid("Unclosed group", len(self.p))
        self.i += 1
        self.flags = saved
        return (_ASSERT if head in ("(?=", "(?!", "(?<=", "(?<!") else "") + head + body + ")"

    def group_name(self) -> str:
        start = self.i
        while self.peek().isascii() and self.peek().isalnum():
            self.i += 1
        name = self.p[start:self.i]
        if not name or not name[0].isalpha() or self.peek() != ">":
            raise self.invalid("named capturing group is missing trailing '>'" if name else
                               "capturing group name does not start with a Latin letter")
        self.i += 1
        return name

    def inline_flags(self) -> bool:
        """`(?i-m)` (True: a whole group) or `(?i-m:` (False: a group follows)."""
        on = True
        while True:
            c = self.take()
            if c == ")":
                return True
            if c == ":":
                return False
            if c == "-":
                on = False
                continue
            if c not in _FLAGS:
                raise self.invalid("Unknown inline modifier", self.i - 1)
            if c == "U":
                raise self.untranslatable("the flag (?U) (UNICODE_CHARACTER_CLASS)")
            self.flags = (self.flags + c) if on else self.flags.replace(c, "")

    # -- anchors

    def caret(self) -> str:
        """Java's `^`: the start; in (?m) also after a line terminator (`\\r\\n` is one), but
        never at the end of the input, not even an empty one."""
        if "m" not in self.flags:
            return "\\A"
        if "d" in self.flags:
            return "(?:\\A|(?<=\\n))(?!\\z)"
        return "(?:\\A|(?<=[\\n\\u0085\\u2028\\u2029])|(?<=\\r)(?!\\n))(?!\\z)"

    def dollar(self) -> str:
        if "d" in self.flags:
            return "(?=\\n|\\z)" if "m" in self.flags else "(?=\\n?\\z)"
        if "m" in self.flags:
            return f"(?=[{TERMINATORS}]|\\z)(?!(?<=\\r)\\n)"
        return f"(?=(?:\\r\\n|[{TERMINATORS}])?\\z)(?!(?<=\\r)\\n)"

    # -- escapes

    def escape(self) -> str | None:
        """What follows a `\\` outside a class."""
        c = self.take()
        if c in "bBAGzZ":
            return _ASSERT + self.assertion(c)
        if c in CLASSES or c.lower() in CLASSES:
            inside = CLASSES[c.lower()]
            return f"[^{inside}]" if c.isupper() else f"[{inside}]"
        if c in "pP":
            inside = self.property()
            return f"[^{inside}]" if c == "P" else f"[{inside}]"
        if c == "R":
            return "(?:\\r\\n|[\\n\\x0B\\f\\r\\u0085\\u2028\\u2029])"
        if c == "X":
            raise self.untranslatable("\\X (grapheme clusters)")
        if c == "Q":
            end = self.p.find("\\E", self.i)
            quoted = self.p[self.i:] if end < 0 else self.p[self.i:end]
            self.i = len(self.p) if end < 0 else end + 2
            return "".join(self.literal(ord(q)) for q in quoted) or None
        if c == "k":
            return self.named_backref()
        if c.isdigit() and c != "0":
            return self.backref(int(c))
        return self.literal(self.char_escape(c))

    def assertion(self, c: str) -> str:
        """`\\b \\B \\A \\G \\z \\Z` (Java's `\\b` in 21+: between `\\w` and not `\\w`)."""
        if c == "b":
            if self.peek() == "{":
                raise self.untranslatable("\\b{g} (grapheme cluster boundaries)")
            return f"(?:(?<=[{WORD}])(?![{WORD}])|(?<![{WORD}])(?=[{WORD}]))"
        if c == "B":
            return f"(?:(?<=[{WORD}])(?=[{WORD}])|(?<![{WORD}])(?![{WORD}]))"
        if c in "AG":
            return "\\A"                           # \G: where the match starts, for `matches` the start
        if c == "z":
            return "\\z"
        return self.dollar() if "m" not in self.flags else self._dollar_at_end()

    def _dollar_at_end(self) -> str:
        saved, self.flags = self.flags, self.flags.replace("m", "")
        try:
            return self.dollar()
        finally:
            self.flags = saved

    def char_escape(self, c: str) -> int:
        """The code point of a character escape (`\\n`, `\\x41`, `\\u00e9`, `\\0101`, ...) after its `\\`."""
        simple = {"t": 9, "n": 10, "r": 13, "f": 12, "a": 7, "e": 27}
        if c in simple:
            return simple[c]
        if c == "0":
            digits = ""
            while len(digits) < 3 and self.peek() in "01234567" and self.peek() != "" \
                    and (len(digits) < 2 or digits[0] in "0123"):
                digits += self.take()
            if not digits:
                raise self.invalid("Illegal octal escape sequence")
            return int(digits, 8)
        if c == "x":
            if self.peek() == "{":
                end = self.p.find("}", self.i)
                digits = self.p[self.i + 1:end] if end > 0 else ""
                if not digits or not all(d in "0123456789abcdefABCDEF" for d in digits) or int(digits, 16) > 0x10FFFF:
                    raise self.invalid("Illegal hexadecimal escape sequence")
                self.i = end + 1
                return int(digits, 16)
            return self.hex_digits(2, "Illegal hexadecimal escape sequence")
        if c == "u":
            code = self.hex_digits(4, "Illegal Unicode escape sequence")
            if 0xD800 <= code < 0xDC00 and self.p.startswith("\\u", self.i):
                saved = self.i
                self.i += 2
                low = self.hex_digits(4, "Illegal Unicode escape sequence")
                if 0xDC00 <= low < 0xE000:
                    return 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                self.i = saved
            return code
        if c == "c":
            return ord(self.take()) ^ 64
        if c == "N" and self.peek() == "{":
            end = self.p.find("}", self.i)
            try:
                char = unicodedata.lookup(self.p[self.i + 1:end])
            except KeyError:
                raise self.invalid("Unknown character name") from None
            self.i = end + 1
            return ord(char)
        if c.isascii() and c.isalnum():
            raise self.invalid("Illegal/unsupported escape sequence", self.i - 1)
        return ord(c)

    def hex_digits(self, n: int, error: str) -> int:
        digits = self.p[self.i:self.i + n]
        if len(digits) != n or not all(d in "0123456789abcdefABCDEF" for d in digits):
            raise self.invalid(error)
        self.i += n
        return int(digits, 16)

    def backref(self, number: int) -> str:
        while self.peek().isdigit() and self.peek().isascii() and number * 10 + int(self.peek()) <= self.groups:
            number = number * 10 + int(self.take())
        if number > self.groups:
            return _ASSERT + "(?!)"                 # Java: a group that never matched fails
        return self._ref(number)

    def named_backref(self) -> str:
        if self.take() != "<":
            raise self.invalid("\\k is not followed by '<' for named capturing group")
        name = self.group_name()
        if name not in self.names:
            raise self.invalid(f"named capturing group <{name}> does not exist")
        return self._ref(self.names[name])

    def _ref(self, number: int) -> str:
        if number in self.open:
            raise self.untranslatable("a back-reference inside the group it refers to")
        if "i" in self.flags:
            raise self.untranslatable("a back-reference under case-insensitive matching")
        return f"(?:\\{number})"

    def property(self) -> str:
        """Class contents for `\\p{name}` / `\\pL` (after the `p`)."""
        if self.peek() == "{":
            end = self.p.find("}", self.i)
            if end < 0:
                raise self.invalid("Unclosed character family")
            name = self.p[self.i + 1:end]
            self.i = end + 1
        else:
            name = self.take()
        try:
            return property_class(name, "i" in self.flags)
        except UnknownProperty as exc:
            raise self.invalid(str(exc)) from None
        except NoEquivalent as exc:
            raise self.untranslatable(str(exc)) from None

    # -- literals and classes

    def literal(self, code: int) -> str:
        variants = self.variants(code)
        if len(variants) == 1:
            return escaped(code)
        return "[" + "".join(escaped(v, in_class=True) for v in sorted(variants)) + "]"

    def variants(self, code: int) -> set[int]:
        if "i" not in self.flags:
            return {code}
        if "u" in self.flags:
            return unicode_case_class(code)
        char = chr(code)
        if char.isascii() and char.isalpha():
            return {ord(char.lower()), ord(char.upper())}
        return {code}

    def class_body(self) -> str:
        """The inside of a Java character class (after `[`), as Oniguruma class contents; Java
        and Oniguruma read nested classes and `&&` (intersection, weaker than union) alike."""
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        items: list[str] = ["^"] if negated else []
        first = True
        while True:
            self.skip_comments()
            c = self.peek()
            if c == "":
                raise self.invalid("Unclosed character class", len(self.p) - 1)
            if c == "]" and not first:
                self.i += 1
                return "".join(items)
            first = False
            if c == "[":
                self.i += 1
                items.append("[" + self.class_body() + "]")
            elif c == "&" and self.peek(1) == "&":
                self.i += 2
                items.append("&&")
            elif c == "\\" and self.peek(1) == "Q":
                self.i += 2
                end = self.p.find("\\E", self.i)
                quoted = self.p[self.i:] if end < 0 else self.p[self.i:end]
                self.i = len(self.p) if end < 0 else end + 2
                items += [self.class_char(ord(q)) for q in quoted]
            else:
                items.append(self.class_item())

    def class_item(self) -> str:
        """One predefined class, character or range inside a class."""
        if self.peek() == "\\" and self.peek(1) in ("d", "D", "w", "W", "s", "S", "h", "H", "v", "V", "p", "P"):
            self.i += 1
            kind = self.take()
            inside = self.property() if kind in "pP" else CLASSES[kind.lower()]
            return f"[^{inside}]" if kind.isupper() else inside
        low = self.class_atom()
        if self.peek() == "-" and self.peek(1) not in ("]", "[", "") and self.p[self.i + 1:self.i + 3] != "&&":
            self.i += 1
            high = self.class_atom()
            if high < low:
                raise self.invalid("Illegal character range", self.i - 1)
            return self.class_range(low, high)
        return self.class_char(low)

    def class_atom(self) -> int:
        c = self.take()
        if c != "\\":
            return ord(c)
        e = self.take()
        if e == "b" or (e.isdigit() and e != "0") or e in "kBAGZzRXQE":
            raise self.invalid("Illegal/unsupported escape sequence", self.i - 1)
        return self.char_escape(e)

    def class_char(self, code: int) -> str:
        return "".join(escaped(v, in_class=True) for v in sorted(self.variants(code)))

    def class_range(self, low: int, high: int) -> str:
        out = f"{escaped(low, in_class=True)}-{escaped(high, in_class=True)}"
        if "i" not in self.flags:
            return out
        extra: set[int] = set()
        if "u" in self.flags:
            if high - low > 0x3000:
                raise self.untranslatable("a character range over 12,288 characters under (?iu)")
            for code in range(low, high + 1):
                extra |= unicode_case_class(code)
        else:
            for code in range(max(low, 0x41), min(high, 0x7A) + 1):
                char = chr(code)
                if char.isalpha():
                    extra |= {ord(char.lower()), ord(char.upper())}
        extra = {c for c in extra if not low <= c <= high}
        return out + "".join(ranges(sorted(extra)))
