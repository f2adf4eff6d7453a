"""Untrusted text (names, paths, signatures, docs) → markdown, mermaid and XML that cannot escape.

Every string that comes from a repository or a pull request is hostile until it went through
one of these functions (RELIABILITY.md, decision 10 and test S6):

- ``clean_text`` makes visible what a reader cannot see or a terminal or parser may act on:
  bidi controls, zero-width and every other Unicode *format* character (category Cf, which
  includes the U+E0000 tag characters used to smuggle hidden text) and C0/C1 controls except
  newline and tab become escapes (``\\u200b``, ``\\x1b``, ``\\U000e0041``), so
  ``src/auth\\u200b.py`` never reads as ``src/auth.py`` and an escape sequence never reaches a
  terminal; lone surrogates (which cannot be encoded as UTF-8) become U+FFFD; every line
  ending becomes ``\\n``. ``visible`` does the same on one line (newline and tab escaped too),
  for names in messages.
- ``inline_code`` and ``code_block`` put text in a code span or fenced block whose fence is
  longer than any backtick run inside, so the text cannot close it. GitHub renders neither
  mentions, issue references nor links inside code.
- ``plain`` is for prose outside code: markdown and HTML specials are backslash-escaped, and a
  word that GitHub would turn into a mention, a team mention, an issue or commit reference or
  an autolink (``@user``, ``&#64;user``, ``#1``, ``owner/repo#1``, ``GH-1``, ``a1b2c3d``,
  ``https://…``, ``www.…``) is wrapped whole in a code span. That keeps it readable and inert;
  no look-alike characters are substituted.
- ``mermaid_label`` keeps only letters, digits and ``_ . - : /`` and spaces.
- ``xml_text`` shows the characters XML 1.0 forbids, and the invisible ones, as the same
  escapes. (JSON is exact data: its renderers keep the strings and write these characters as
  ``\\uXXXX`` escapes, ``knowing_pr.visible.json_visible``.)

Line cap: the markdown renderer composes each line from capped fields, so no rendered line is
longer than ``LINE_CAP_BYTES`` (1,000 UTF-8 bytes). Truncated text ends with "…".
"""

from __future__ import annotations

import re
import unicodedata

from knowing_pr.visible import escape_char, terminal_text, visible

__all__ = [
    "ELLIPSIS",
    "LINE_CAP_BYTES",
    "clean_text",
    "code_block",
    "first_sentence",
    "inline_code",
    "mermaid_label",
    "one_line",
    "plain",
    "truncate_bytes",
    "visible",
    "xml_escape",
    "xml_quoteattr",
    "xml_text",
]

#: the longest line, in UTF-8 bytes, that the markdown renderer ever emits
LINE_CAP_BYTES = 1000
ELLIPSIS = "…"

_LINE_BREAKS = re.compile(r"\r\n|[\r\u0085\u2028\u2029\v\f]")
_WHITESPACE = re.compile(r"\s+")
_BACKTICK_RUN = re.compile(r"`+")
_TILDE_RUN = re.compile(r"~+")
_NON_LANG = re.compile(r"[^A-Za-z0-9_+-]")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")

#: a word GitHub would link or notify: mentions and emails, issue/PR references
#: (#1, owner/repo#1, GH-1 and custom PREFIX-1 autolinks), commit ids, URLs, entities
_RISKY_WORD = re.compile(
    r"[@＠]|#\s*\d|[A-Za-z]-\d|(?<![0-9A-Za-z])[0-9A-Fa-f]{7,}(?![0-9A-Za-z])|"
    r"://|www\.|&#|mailto:",
    re.IGNORECASE,
)
#: characters that start markdown or HTML syntax anywhere in a line
_INLINE_SPECIALS = frozenset("\\`*_[]<>&|~$")
#: characters that start a block (heading, list, setext underline, table delimiter row) at a line's start
_LINE_START_SPECIALS = frozenset("#+-=:")
_ORDERED_MARKER = re.compile(r"^(\d{1,9})([.)])")


def clean_text(text: str) -> str:
    """Invisible and control characters as visible escapes; line endings as ``\\n``.

    Lone surrogates (from paths decoded with ``surrogateescape``) become U+FFFD.
    """
    return terminal_text(_LINE_BREAKS.sub("\n", text), "\ufffd")


def one_line(text: str) -> str:
    """``clean_text`` with every run of whitespace (newlines included) folded into one space."""
    return _WHITESPACE.sub(" ", clean_text(text)).strip()


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


def truncate_bytes(text: str, max_bytes: int) -> str:
    """``text`` cut at a character boundary so that it fits ``max_bytes`` UTF-8 bytes.

    A cut text ends with "…" (counted in the limit).
    """
    if _utf8_len(text) <= max_bytes:
        return text
    room = max_bytes - _utf8_len(ELLIPSIS)
    if room <= 0:
        return ""
    cut = text.encode("utf-8")[:room].decode("utf-8", "ignore")
    return cut + ELLIPSIS


def _prefix_for_cleaning(text: str, max_bytes: int) -> str:
    """A prefix long enough that cleaning and truncating it equals doing so on all of ``text``
    for any realistic input, without scanning a 100,000-character line to the end."""
    window = max(max_bytes, 1) * 4
    if len(text) <= window:
        return text
    return text[:window] + ELLIPSIS


def _shrink_step(excess_bytes: int) -> int:
    """How much to cut the content when its rendering is ``excess_bytes`` too long.

    Fences, padding and escapes make a rendering at most about four times its content, so a
    quarter of the excess never overshoots by much, and the loop still ends in a few rounds.
    """
    return max(1, (excess_bytes + 3) // 4)


def inline_code(text: str, max_bytes: int = LINE_CAP_BYTES) -> str:
    """``text`` as one code span of at most ``max_bytes`` bytes (newlines become spaces).

    The fence is one backtick longer than the longest run inside; a space pads each side when
    the content starts or ends with a backtick, or starts and ends with a space (CommonMark
    would strip one).
    """
    content = _WHITESPACE.sub(" ", clean_text(_prefix_for_cleaning(text, max_bytes)))
    budget = max_bytes
    while True:
        span = _code_span(truncate_bytes(content, budget))
        excess = _utf8_len(span) - max_bytes
        if excess <= 0 or budget <= 0:
            return span
        budget -= _shrink_step(excess)


def _code_span(content: str) -> str:
    if not content:
        return "` `"
    longest = max((len(run) for run in _BACKTICK_RUN.findall(content)), default=0)
    fence = "`" * (longest + 1)
    needs_pad = (
        content.startswith("`")
        or content.endswith("`")
        or (content.startswith(" ") and content.endswith(" ") and content.strip(" ") != "")
    )
    if needs_pad:
        content = f" {content} "
    return f"{fence}{content}{fence}"


def code_block(text: str, lang: str = "", max_line_bytes: int = LINE_CAP_BYTES) -> str:
    """``text`` as a fenced code block that nothing inside can close (no trailing newline).

    Backtick fences are used unless the text has longer backtick runs than tilde runs, so the
    fence stays short; either way it is longer than every run of its character inside.
    """
    lines = [truncate_bytes(line, max_line_bytes) for line in clean_text(text).split("\n")]
    while lines and lines[-1] == "":
        lines.pop()
    body = "\n".join(lines)
    longest_ticks = max((len(run) for run in _BACKTICK_RUN.findall(body)), default=0)
    longest_tildes = max((len(run) for run in _TILDE_RUN.findall(body)), default=0)
    char, longest = ("`", longest_ticks) if longest_ticks <= longest_tildes else ("~", longest_tildes)
    fence = char * max(3, longest + 1)
    info = _NON_LANG.sub("", lang)
    return f"{fence}{info}\n{body}\n{fence}" if body else f"{fence}{info}\n{fence}"


def _escape_word(word: str) -> str:
    return "".join(f"\\{char}" if char in _INLINE_SPECIALS else char for char in word)


def _escape_line_start(text: str) -> str:
    if not text:
        return text
    if text[0] in _LINE_START_SPECIALS:
        return "\\" + text
    marker = _ORDERED_MARKER.match(text)
    if marker:
        return f"{marker.group(1)}\\{marker.group(2)}{text[marker.end() :]}"
    return text


def _plain_words(text: str) -> str:
    words = text.split(" ")
    rendered = [
        _code_span(word) if _RISKY_WORD.search(word) else _escape_word(word) for word in words if word
    ]
    return _escape_line_start(" ".join(rendered))


def plain(text: str, max_bytes: int = LINE_CAP_BYTES) -> str:
    """``text`` as one line of inert markdown prose of at most ``max_bytes`` bytes.

    Safe at the start of a line too: block markers (``#``, ``-``, ``1.``, ``>``, ``=``) are
    escaped there.
    """
    content = one_line(_prefix_for_cleaning(text, max_bytes))
    budget = max_bytes
    while True:
        rendered = _plain_words(truncate_bytes(content, budget))
        excess = _utf8_len(rendered) - max_bytes
        if excess <= 0 or budget <= 0:
            return rendered
        budget -= _shrink_step(excess)


def mermaid_label(text: str, max_chars: int) -> str:
    """A node label for a quoted mermaid string: letters, digits, ``_ . - : /`` and spaces."""
    kept = "".join(
        char if char.isalnum() or char in "_.-:/ " else "_"
        for char in one_line(text[: max_chars * 4])
        if unicodedata.category(char) not in ("Mn", "Mc", "Me")
    )
    kept = kept.strip() or "?"
    if len(kept) > max_chars:
        kept = kept[: max(max_chars - 1, 0)] + ELLIPSIS
    return kept


def xml_text(text: str) -> str:
    """``text`` for an XML 1.0 document: the characters XML forbids (controls, surrogates,
    U+FFFE/U+FFFF) and the invisible ones (bidi, zero-width, C1 controls) as visible escapes
    (``\\x00``, ``\\u202e``), as in markdown; tab and line breaks stay."""
    if text.isascii():  # the common case: only the controls other than tab and line breaks change
        return text.translate(_ASCII_OUTSIDE_XML)
    if text.replace("\t", "").replace("\n", "").replace("\r", "").isprintable():
        return text
    return "".join(escape_char(char) if _outside_xml(char) else char for char in text)


def _outside_xml(char: str) -> bool:
    if char in "\t\n\r":
        return False
    return char in "\ufffe\uffff" or unicodedata.category(char) in ("Cc", "Cf", "Cs", "Zl", "Zp")


#: the ASCII characters XML 1.0 forbids, and DEL, for ``str.translate`` to show escaped
_ASCII_OUTSIDE_XML = {c: escape_char(chr(c)) for c in [*range(0x20), 0x7F] if chr(c) not in "\t\n\r"}


def xml_escape(text: str) -> str:
    """``&``, ``<`` and ``>`` as entities (``xml.sax.saxutils.escape``, without importing it: it
    imports ``urllib.request``, which a ``pr`` needs nowhere else)."""
    return text.replace("&", "&amp;").replace(">", "&gt;").replace("<", "&lt;")


def xml_quoteattr(text: str) -> str:
    """``text`` escaped and quoted as an attribute value, line breaks and tabs as character
    references (``xml.sax.saxutils.quoteattr``'s output, character for character)."""
    escaped = xml_escape(text).replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#9;")
    if '"' not in escaped:
        return f'"{escaped}"'
    if "'" not in escaped:
        return f"'{escaped}'"
    return '"' + escaped.replace('"', "&quot;") + '"'


def first_sentence(doc: str) -> str:
    """The first sentence of a docstring's first paragraph, on one line."""
    paragraph = _PARAGRAPH_BREAK.split(clean_text(doc).strip(), maxsplit=1)[0]
    flat = _WHITESPACE.sub(" ", paragraph).strip()
    end = _SENTENCE_END.search(flat)
    return flat[: end.end()] if end else flat
