"""Java's character sets, written as Oniguruma class contents (used by `java_regex.py`).

Java's predefined and POSIX classes are US-ASCII unless (?U); its Unicode properties go by the
names Oniguruma knows where both have them (general categories, scripts, the binary properties
below); `(?iu)` equivalence is Java's `Character.toLowerCase(Character.toUpperCase(c))`, one
character to one, unlike Oniguruma's own case folding (`ß` ~ `ss`).
"""

from __future__ import annotations

from functools import lru_cache


class UnknownProperty(ValueError):
    """Java has no property of that name (it rejects the pattern)."""


class NoEquivalent(ValueError):
    """Java knows the property; Oniguruma has nothing that matches the same characters."""


TERMINATORS = "\\n\\r\\u0085\\u2028\\u2029"
WORD = "a-zA-Z0-9_"
#: Java's predefined classes (ASCII unless (?U), which is not translated), as class contents.
CLASSES = {
    "d": "0-9", "w": WORD, "s": " \\t\\n\\x0B\\f\\r",
    "h": " \\t\\u00A0\\u1680\\u180e\\u2000-\\u200a\\u202f\\u205f\\u3000",
    "v": "\\n\\x0B\\f\\r\\u0085\\u2028\\u2029",
}
#: Java's POSIX character classes: US-ASCII only.
_POSIX = {
    "lower": "a-z", "upper": "A-Z", "ascii": "\\x00-\\x7F", "alpha": "a-zA-Z", "digit": "0-9",
    "alnum": "a-zA-Z0-9", "punct": "!-/:-@\\[-`{-~", "graph": "!-~", "print": " -~", "blank": " \\t",
    "cntrl": "\\x00-\\x1F\\x7F", "xdigit": "0-9a-fA-F", "space": " \\t\\n\\x0B\\f\\r",
}
_POSIX_NAMES = {"Lower", "Upper", "ASCII", "Alpha", "Digit", "Alnum", "Punct", "Graph", "Print", "Blank",
                "Cntrl", "XDigit", "Space"}
#: Under (?i) Java matches these case-insensitively: any cased letter.
_CASED = {"lower": "a-zA-Z", "upper": "a-zA-Z", "Lu": "\\p{LC}", "Ll": "\\p{LC}", "Lt": "\\p{LC}",
          "lowercase": "\\p{Lowercase}\\p{Uppercase}\\p{Lt}", "uppercase": "\\p{Lowercase}\\p{Uppercase}\\p{Lt}",
          "titlecase": "\\p{Lowercase}\\p{Uppercase}\\p{Lt}"}
#: Java's binary properties (`\\p{IsAlphabetic}`) and java.lang.Character classes -> Oniguruma.
_PROPERTIES = {
    "alphabetic": "\\p{Alphabetic}", "letter": "\\p{L}", "ideographic": "\\p{Ideographic}",
    "lowercase": "\\p{Lowercase}", "uppercase": "\\p{Uppercase}", "titlecase": "\\p{Lt}",
    "white_space": "\\p{White_Space}", "whitespace": "\\p{White_Space}", "control": "\\p{Cc}",
    "punctuation": "\\p{P}", "hex_digit": "\\p{Hex_Digit}", "hexdigit": "\\p{Hex_Digit}",
    "join_control": "\\p{Join_Control}", "joincontrol": "\\p{Join_Control}", "digit": "\\p{Nd}",
    "noncharacter_code_point": "\\p{Noncharacter_Code_Point}", "assigned": "\\P{Cn}",
    "javalowercase": "\\p{Lowercase}", "javauppercase": "\\p{Uppercase}", "javaletter": "\\p{L}",
    "javadigit": "\\p{Nd}", "javaletterordigit": "\\p{L}\\p{Nd}", "javaalphabetic": "\\p{Alphabetic}",
    "javaideographic": "\\p{Ideographic}", "javatitlecase": "\\p{Lt}", "javaspacechar": "\\p{Z}",
    "javaisocontrol": "\\x00-\\x1F\\x7F-\\x9F",
}
_CATEGORIES = {c for c in ("L Lu Ll Lt Lm Lo LC M Mn Mc Me N Nd Nl No P Pc Pd Ps Pe Pi Pf Po S Sm Sc "
                           "Sk So Z Zs Zl Zp C Cc Cf Co Cs Cn").split()}


def property_class(name: str, case_insensitive: bool) -> str:
    """Class contents for Java's `\\p{name}`."""
    if case_insensitive and (cased := _cased(name)):
        return cased
    key, _, value = name.partition("=")
    key = key.lower()
    if value:
        if key in ("gc", "general_category") and value in _CATEGORIES:
            return f"\\p{{{value}}}"
        if key in ("sc", "script"):
            return f"\\p{{{value}}}"
        raise NoEquivalent(f"the property \\p{{{name}}}")
    if name in _CATEGORIES:
        return f"\\p{{{name}}}"
    if name.startswith("Is"):
        rest = name[2:]
        if rest in _CATEGORIES:
            return f"\\p{{{rest}}}"
        if rest.lower() in _PROPERTIES:
            return _PROPERTIES[rest.lower()]
        if rest.isalpha():
            return f"\\p{{{rest}}}"             # a script: Java and Oniguruma share the names
    if name.startswith("In"):
        raise NoEquivalent(f"the Unicode block \\p{{{name}}}; use a range or a script (\\p{{IsGreek}})")
    if name in _POSIX_NAMES:
        return _POSIX[name.lower()]
    if name in ("javaLowerCase", "javaUpperCase", "javaLetter", "javaDigit", "javaLetterOrDigit",
                "javaAlphabetic", "javaIdeographic", "javaTitleCase", "javaSpaceChar", "javaISOControl"):
        return _PROPERTIES[name.lower()]
    if name == "all":
        return "\\s\\S"
    raise UnknownProperty(f"Unknown character property name {{{name}}}")


def _cased(name: str) -> str | None:
    """Under (?i) Java widens the case properties to every cased letter."""
    for prefix in ("Is", "gc=", "general_category="):
        if name.startswith(prefix) and name[len(prefix):] in ("Lu", "Ll", "Lt"):
            name = name[len(prefix):]
    if name in ("Lower", "Upper"):
        return _CASED[name.lower()]
    if name in ("Lu", "Ll", "Lt"):
        return _CASED[name]
    if name.startswith("Is") and name[2:].lower() in _CASED:
        return _CASED[name[2:].lower()]
    if name in ("javaLowerCase", "javaUpperCase", "javaTitleCase"):
        return _CASED["lowercase"]
    return None


def ranges(codes: list[int]) -> list[str]:
    out, start = [], None
    for index, code in enumerate(codes):
        if start is None:
            start = code
        if index + 1 == len(codes) or codes[index + 1] != code + 1:
            out.append(escaped(start, in_class=True) if start == code else
                       f"{escaped(start, in_class=True)}-{escaped(code, in_class=True)}")
            start = None
    return out


_META = set("\\^$.|?*+()[]{}")
_CLASS_META = set("\\^-[]&")


def escaped(code: int, in_class: bool = False) -> str:
    """One code point as Oniguruma pattern text that means exactly that character."""
    char = chr(code)
    if code < 0x20 or code == 0x7F:
        return f"\\x{code:02X}"
    if char in (_CLASS_META if in_class else _META) or (in_class and char in "{}|$.*+?()"):
        return "\\" + char
    if 0xD800 <= code < 0xE000 or (code < 0x10000 and not char.isprintable()):
        return f"\\u{code:04X}"
    return char


def _simple_upper(char: str) -> str:
    upper = char.upper()
    if len(upper) == 1:
        return upper
    title = char.title()
    return title if len(title) == 1 else char


def _simple_lower(char: str) -> str:
    lower = char.lower()
    return lower if len(lower) == 1 else lower[0]


def _fold(char: str) -> str:
    """Java's UNICODE_CASE equivalence: Character.toLowerCase(Character.toUpperCase(c))."""
    return _simple_lower(_simple_upper(char))


@lru_cache(maxsize=None)
def _fold_classes() -> dict[str, frozenset[int]]:
    """Fold -> every code point with that fold (built once, on the first `(?iu)`)."""
    classes: dict[str, set[int]] = {}
    for code in range(0x110000):
        if 0xD800 <= code < 0xE000:
            continue
        char = chr(code)
        if char.upper() != char or char.lower() != char or char.title() != char:
            classes.setdefault(_fold(char), set()).add(code)
    return {fold: frozenset(codes) for fold, codes in classes.items()}


def unicode_case_class(code: int) -> set[int]:
    char = chr(code)
    return {code} | set(_fold_classes().get(_fold(char), ()))
