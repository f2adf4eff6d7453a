"""A node → the words a reviewer reads: the language's own kind, a short name, a one-line
signature, a doc excerpt without markup. Plain text; callers sanitise it for their format.

- **Kinds**: as the language says them: a Go or Rust type that is neither struct, interface,
  trait nor enum is a ``type``; a module is a ``file``; a Ruby ``module`` is a ``module``.
- **Names**: the name inside its file (``Cart.add_item``, not ``shop.cart.Cart.add_item``);
  Go adds its package (``middleware.Logger``); Rust joins with ``::``.
- **Signatures**: one line, comments out, whitespace collapsed, the definition keyword dropped
  (``def``, ``function``, ``func``, ``fn``, ``async``, ``export``, ``default``; visibility stays),
  annotations and attributes (``@Test``, ``[Fact]``) dropped,
  a Go receiver folded into the name, the method's type before its name; at most 100
  characters.
- **Docs**: the first sentence, without JSDoc tags (``@param …``), ``{@link X}``, reST roles
  (``:class:`~a.B``` → ``B``) or doubled backticks; at most 160 characters.
"""

from __future__ import annotations

import posixpath
import re

from knowing_pr.model import Node, SymbolKind
from knowing_pr.rank.changes import in_file_name, normalize_signature
from knowing_pr.render.safety import ELLIPSIS, first_sentence, one_line

__all__ = ["SIGNATURE_CHARS", "display_name", "doc_excerpt", "kind_word", "signature_line"]

SIGNATURE_CHARS = 100
DOC_CHARS = 160
_DROPPED_WORDS = re.compile(
    r"(?<![\w$])(?:export|default|async|def|function\*?|func|fn|class|module|struct|interface|trait|enum|type|record)"
    r"(?:\s+|$)"
)
_GO_RECEIVER = re.compile(r"^\([^()]*\)\s*")
#: Java/Kotlin annotations and C# attributes written before a signature (``@Test``, ``[Fact]``)
_ANNOTATIONS = re.compile(r"(?:@[\w.]+(?:\([^()]*\))?|\[[\w.]+(?:\([^()]*\))?\])\s*")
_PY_SELF = re.compile(r"^\(\s*(?:self|cls)\s*(?:,\s*|(?=\)))")
_JSDOC_TAG = re.compile(r"(?:^|\s)@[a-zA-Z]+\b.*$", re.S)
_LINK = re.compile(r"\{@\w+\s+([^}|\s]+)[^}]*\}")
_REST_ROLE = re.compile(r":[\w:.-]+:`~?([^`<]*?)(?:\s*<[^>]*>)?`")
_DOUBLE_TICKS = re.compile(r"``([^`]+)``")
_OTHER_TYPE = {"go": "type", "rust": "type"}


def kind_word(node: Node) -> str:
    """The symbol's kind as its language calls it (module docstring)."""
    if node.kind == SymbolKind.MODULE:
        return "file"
    if node.kind == SymbolKind.CLASS and node.language in _OTHER_TYPE:
        return _OTHER_TYPE[node.language]
    if node.kind == SymbolKind.CLASS and node.language == "ruby" and node.signature.startswith("module"):
        return "module"  # a Ruby module is indexed as a class (it holds methods, it is no file)
    return node.kind


def display_name(node: Node) -> str:
    """The name a reviewer knows the symbol by (module docstring)."""
    if node.kind == SymbolKind.MODULE:
        return node.path
    name = in_file_name(node)
    if node.language == "go":
        package = posixpath.basename(posixpath.dirname(node.path))
        return f"{package}.{name}" if package else name
    if node.language == "rust":
        return name.replace(".", "::")
    return name


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + ELLIPSIS


def signature_line(node: Node, signature: str | None = None, limit: int = SIGNATURE_CHARS) -> str:
    """``signature`` (the node's own by default) on one line for a reader; the display name when
    the signature is empty or does not name the symbol."""
    text = normalize_signature(one_line(signature if signature is not None else node.signature))
    if not text or node.kind == SymbolKind.MODULE:
        return _cap(display_name(node), limit)
    at = _whole_word(text, node.name) if node.name else None
    if at is None:
        return _cap(_DROPPED_WORDS.sub("", text).strip(), limit)
    prefix = _ANNOTATIONS.sub("", _DROPPED_WORDS.sub("", text[: at[0]]))
    if node.language == "go":
        prefix = _GO_RECEIVER.sub("", prefix.strip())
    name = in_file_name(node).replace(".", "::") if node.language == "rust" else in_file_name(node)
    rest = text[at[1] :]
    if node.language == "python" and node.kind == SymbolKind.METHOD:
        rest = _PY_SELF.sub("(", rest, count=1)
    return _cap(f"{' '.join(prefix.split())} {name}{rest}".strip(), limit)


def _whole_word(text: str, name: str) -> tuple[int, int] | None:
    """Where ``name`` first stands as a whole word in ``text`` (no word character or ``$``
    either side: ``str.isalnum`` is the regular expressions' ``\\w`` without ``_``), as (start,
    end); one pattern per symbol would make a regex compile per entry."""
    start = text.find(name)
    while start >= 0:
        end = start + len(name)
        if not (start and _word_char(text[start - 1])) and not (end < len(text) and _word_char(text[end])):
            return start, end
        start = text.find(name, start + 1)
    return None


def _word_char(char: str) -> bool:
    return char.isalnum() or char in "_$"


def doc_excerpt(doc: str, limit: int = DOC_CHARS) -> str:
    """The doc's first sentence without markup (module docstring); ``""`` when there is none."""
    text = _LINK.sub(r"\1", doc[: limit * 8])
    text = _REST_ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1] if "~" in m.group(0) else m.group(1), text)
    text = _DOUBLE_TICKS.sub(r"\1", text)
    text = _JSDOC_TAG.sub("", first_sentence(text)).strip()
    return _cap(text, limit)
