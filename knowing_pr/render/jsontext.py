"""A JSON value (dicts with string keys, lists, tuples, strings, numbers, booleans, ``None``) → the
text ``json.dumps(value, ensure_ascii=False, indent=2)`` gives, character for character.

``json.dumps`` with an indent runs the standard library's pure-Python encoder, which builds a set
of closures that refer to each other on every call: each call leaves a reference cycle that only
the cycle collector frees (33 objects per call for one entry, ``bench/mcp_garbage.py``), and a JSON
pack makes hundreds of such calls (every entry is costed), which a server answering without the
collector running piles up. This writer makes no cycle; any other value is handed to
``json.dumps`` itself.
"""

from __future__ import annotations

import json
import math
from json.encoder import encode_basestring

__all__ = ["indented_json"]

_INDENT = "  "


def indented_json(value: object) -> str:
    """``json.dumps(value, ensure_ascii=False, indent=2)``."""
    try:
        return _value(value, 0)
    except _Unsupported:
        return json.dumps(value, ensure_ascii=False, indent=2)


class _Unsupported(Exception):
    """A value this writer leaves to ``json.dumps``."""


def _value(value: object, level: int) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return encode_basestring(value)
    if type(value) is int:
        return int.__repr__(value)
    if type(value) is float:
        return _float(value)
    if isinstance(value, (list, tuple)):
        return _list(value, level)
    if isinstance(value, dict):
        return _dict(value, level)
    raise _Unsupported


def _float(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def _list(values: list[object] | tuple[object, ...], level: int) -> str:
    if not values:
        return "[]"
    inner = "\n" + _INDENT * (level + 1)
    return (
        "[" + inner + ("," + inner).join(_value(v, level + 1) for v in values) + "\n" + _INDENT * level + "]"
    )


def _dict(values: dict[object, object], level: int) -> str:
    if not values:
        return "{}"
    if not all(isinstance(key, str) for key in values):
        raise _Unsupported
    inner = "\n" + _INDENT * (level + 1)
    items = (f"{encode_basestring(key)}: {_value(v, level + 1)}" for key, v in values.items())  # type: ignore[arg-type]
    return "{" + inner + ("," + inner).join(items) + "\n" + _INDENT * level + "}"
