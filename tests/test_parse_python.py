"""Python extraction on real tree-sitter parses: exact definitions, references, imports."""

from __future__ import annotations

from knowing_pr.model import Definition, Import, Reference
from knowing_pr.parse import parse_source

SOURCE = b'''"""Module doc."""
import os.path
import numpy as np
from . import sibling
from ..pkg import y as yy, z
from b import g
from a import *

MAX_SIZE: int = 3
lower = 2


def f(a: Foo, b=default()) -> mod.Bar:
    """Do f.

    More text.
    """
    g()
    return os.path.join(a, lambda q: h(q))


@register
@app.route("/x")
class C(Base, mod.Other, metaclass=Meta):
    """A class."""

    def m(self, x: int) -> None:
        def inner():
            self.h()

        return inner

    @property
    def p(self):
        return helper(p=1)
'''


def parse() -> tuple[list[Definition], list[Reference], list[Import]]:
    parsed = parse_source("pkg/m.py", "python", SOURCE)
    assert parsed.line_count == 35
    return parsed.definitions, parsed.references, parsed.imports


def test_definitions_with_nesting_decorators_and_docstrings() -> None:
    definitions, _, _ = parse()
    summary = [(d.name, d.qualified_name, d.kind, d.start_line, d.end_line, d.parent) for d in definitions]
    assert summary == [
        ("MAX_SIZE", "MAX_SIZE", "constant", 9, 9, None),
        ("f", "f", "function", 13, 19, None),
        ("C", "C", "class", 22, 35, None),
        ("m", "C.m", "method", 27, 31, "C"),
        ("inner", "C.m.inner", "function", 28, 29, "C.m"),
        ("p", "C.p", "method", 33, 35, "C"),
    ]
    by_name = {d.qualified_name: d for d in definitions}
    assert by_name["f"].signature == "def f(a: Foo, b=default()) -> mod.Bar"
    assert by_name["f"].doc == "Do f. More text."
    assert by_name["C"].signature == "class C(Base, mod.Other, metaclass=Meta)"
    assert by_name["C"].doc == "A class."
    assert SOURCE[by_name["C"].start_byte :].startswith(b"@register")
    assert SOURCE[: by_name["C"].end_byte].endswith(b"return helper(p=1)")


def test_references_with_scopes() -> None:
    _, references, _ = parse()
    summary = [(r.kind, r.name, r.qualifier, r.scope, r.line) for r in references]
    assert summary == [
        ("type", "Foo", "", "f", 13),
        ("call", "default", "", "f", 13),
        ("type", "Bar", "mod", "f", 13),
        ("call", "g", "", "f", 18),
        ("call", "join", "os.path", "f", 19),
        ("call", "h", "", "f", 19),
        ("call", "register", "", "C", 22),
        ("call", "()", "", "C", 23),  # the decorator app.route("/x") returns is called too
        ("call", "route", "app", "C", 23),
        ("extends", "Base", "", "C", 24),
        ("extends", "Other", "mod", "C", 24),
        ("call", "h", "self", "C.m.inner", 29),
        ("call", "property", "", "C.p", 33),
        ("call", "helper", "", "C.p", 35),
    ]


def test_imports() -> None:
    _, _, imports = parse()
    assert imports == [
        Import("os.path", (("*", "os.path"),), 2),
        Import("numpy", (("*", "np"),), 3),
        Import(".", (("sibling", "sibling"),), 4),
        Import("..pkg", (("y", "yy"), ("z", "z")), 5),
        Import("b", (("g", "g"),), 6),
        Import("a", (("*", "*"),), 7),
    ]


def test_imported_name_called_in_function() -> None:
    parsed = parse_source("a.py", "python", b"from b import g\n\ndef f():\n    g()\n")
    assert parsed.imports == [Import("b", (("g", "g"),), 1)]
    assert parsed.references == [Reference("call", "g", 4, "f", "", hint="g")]


def test_crlf_line_numbers() -> None:
    parsed = parse_source("a.py", "python", b"import x\r\n\r\ndef f():\r\n    x.y()\r\n")
    assert [(d.name, d.start_line, d.end_line) for d in parsed.definitions] == [("f", 3, 4)]
    assert parsed.references == [Reference("call", "y", 4, "f", "x", hint="x.y")]
    assert parsed.line_count == 4


def test_bad_bytes_never_raise() -> None:
    invalid = parse_source("a.py", "python", b"def \xff\xfe(a):\n    g\xc3(\x80)\nclass C:\n    pass\n")
    assert [d.qualified_name for d in invalid.definitions][-1] == "C"
    nul = parse_source("a.py", "python", b"\x00" * 64 + b"\ndef f():\n    g()\x00\n")
    assert isinstance(nul.definitions, list)
    empty = parse_source("a.py", "python", b"")
    assert (empty.definitions, empty.references, empty.imports, empty.line_count) == ([], [], [], 0)
    broken = parse_source("a.py", "python", b"def f(:\n  class\n    g(\n")
    assert isinstance(broken.references, list)
