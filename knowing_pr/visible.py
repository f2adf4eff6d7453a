"""Text from a repository or a pull request → the same text with every character a person
cannot see, or a terminal would act on, shown as an escape.

Controls (C0, C1, DEL), Unicode format characters (bidi overrides and isolates, zero-width
spaces and joiners, the BOM, the U+E0000 tag characters), line and paragraph separators and
lone surrogates (bytes of a name that are not UTF-8) become ``\\x1b``, ``\\u200b``,
``\\U000e0041``, ``\\udcff``. So ``src/auth\\u200b.py`` never reads as ``src/auth.py``, a
right-to-left override never reorders a line, and an escape sequence from a file name never
sets a window title or clears a screen. A name that holds a backslash followed by ``u200b``
reads the same as one holding U+200B: the escape is for people, machine formats (JSON) keep
the exact text.

Light on purpose (``unicodedata`` only when a character is not printable): the command line's
error printer and the hook use it.
"""

from __future__ import annotations

import re

__all__ = ["escape_char", "json_visible", "terminal_text", "visible", "visible_keeping"]

#: categories shown as escapes (surrogates, Cs, are handled apart)
SHOWN_ESCAPED = frozenset(("Cc", "Cf", "Zl", "Zp"))
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


#: ASCII control characters but tab and newline
_ASCII_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def escape_char(char: str) -> str:
    """One character as a visible escape: ``\\n``, ``\\x1b``, ``\\u200b``, ``\\U000e0041``."""
    code = ord(char)
    if char in _NAMED:
        return _NAMED[char]
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def visible_keeping(text: str, keep: str = "", surrogate: str | None = None) -> str:
    """``text`` with each control, format, separator and surrogate character escaped, except
    the characters in ``keep``; ``surrogate``, when given, replaces a lone surrogate instead."""
    import unicodedata

    out: list[str] = []
    for char in text:
        category = unicodedata.category(char)
        if category == "Cs":
            out.append(escape_char(char) if surrogate is None else surrogate)
        elif category in SHOWN_ESCAPED and char not in keep:
            out.append(escape_char(char))
        else:
            out.append(char)
    return "".join(out)


def visible(text: str) -> str:
    """``text`` on one line for a message or a name: newline and tab escaped too."""
    if text.isprintable():
        return text
    return visible_keeping(text)


def _json_escape(char: str) -> str:
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_visible(encoded: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``) with every control, format,
    separator and surrogate character left raw written as a ``\\uXXXX`` escape instead.

    The data stays exact (``json.loads`` gives the same strings back); the bytes carry no
    bidi override, zero-width character or C1 control to a terminal or an editor, and a lone
    surrogate no longer makes the text unencodable. Valid anywhere in the text: outside
    strings JSON has only ASCII punctuation, spaces and newlines, none of which is touched.
    """
    if encoded.isascii() and "\x7f" not in encoded:
        return encoded
    import unicodedata

    out: list[str] = []
    for char in encoded:
        if char > "\x7e" and (
            unicodedata.category(char) in SHOWN_ESCAPED or unicodedata.category(char) == "Cs"
        ):
            out.append(_json_escape(char))
        else:
            out.append(char)
    return "".join(out)


def terminal_text(text: str, surrogate: str | None = None) -> str:
    """Many lines for a terminal or a file: ``visible_keeping`` with newline and tab kept, quick
    when nothing needs escaping (the usual case); ``surrogate`` as in ``visible_keeping``."""
    if text.isascii():
        return _ASCII_CONTROLS.sub(lambda match: escape_char(match.group()), text)
    if text.replace("\n", "").replace("\t", "").isprintable():
        return text  # no control, format or surrogate character (none of them is printable)
    return visible_keeping(text, "\n\t", surrogate)
