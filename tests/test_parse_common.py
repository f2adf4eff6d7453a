"""Every query-driven language on the same bad inputs: empty file, CRLF, random and damaged bytes.

Each language's sample is the one its own ``test_parse_<language>.py`` checks in detail.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from parse_helpers import definition_rows, parser_for, reference_rows
from test_parse_csharp import RUNNER_CS
from test_parse_go import SERVER_GO
from test_parse_java import SERVICE_JAVA
from test_parse_rust import LIB_RS

from knowing_pr.model import ParsedFile

#: language → (path it is parsed as, sample source)
SAMPLES = {
    "go": ("server/server.go", SERVER_GO),
    "java": ("src/main/java/com/acme/app/Service.java", SERVICE_JAVA),
    "rust": ("src/lib.rs", LIB_RS),
    "csharp": ("src/Runner.cs", RUNNER_CS),
}
LANGUAGES = sorted(SAMPLES)


@pytest.mark.parametrize("language", LANGUAGES)
def test_empty_file(language: str) -> None:
    parsed = parser_for(SAMPLES[language][0], language)(b"")
    assert (parsed.definitions, parsed.references, parsed.imports, parsed.line_count) == ([], [], [], 0)


@pytest.mark.parametrize("language", LANGUAGES)
def test_crlf_line_endings_keep_line_numbers(language: str) -> None:
    path, sample = SAMPLES[language]
    parse = parser_for(path, language)
    lf = parse(sample)
    crlf = parse(sample.replace("\n", "\r\n"))
    assert len(lf.definitions) > 3 and len(lf.references) > 3 and lf.imports
    assert definition_rows(crlf) == definition_rows(lf)
    assert reference_rows(crlf) == reference_rows(lf)
    assert [(d.signature, d.doc) for d in crlf.definitions] == [(d.signature, d.doc) for d in lf.definitions]
    assert crlf.imports == lf.imports


@pytest.mark.parametrize("language", LANGUAGES)
@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=400))
def test_arbitrary_bytes_never_raise(language: str, data: bytes) -> None:
    assert isinstance(parser_for("x", language)(data), ParsedFile)


@pytest.mark.parametrize("language", LANGUAGES)
@settings(max_examples=60, deadline=None)
@given(data=st.data(), cut=st.integers(0, 40), junk=st.binary(max_size=8))
def test_damaged_source_never_raises(language: str, data: st.DataObject, cut: int, junk: bytes) -> None:
    path, sample = SAMPLES[language]
    source = sample.encode()
    at = data.draw(st.integers(0, len(source)), label="at")
    assert isinstance(parser_for(path, language)(source[:at] + junk + source[at + cut :]), ParsedFile)


def test_the_parse_stage_knows_exactly_the_languages_the_model_names() -> None:
    """``config`` validates ``index.languages`` against ``model.LANGUAGES``; the parse stage maps
    file extensions onto the same names."""
    from knowing_pr.model import LANGUAGES
    from knowing_pr.parse import LANGUAGE_BY_EXTENSION

    assert set(LANGUAGE_BY_EXTENSION.values()) == LANGUAGES


def test_each_grammar_is_the_packs_own_and_loads_without_the_packs_package() -> None:
    """``get_language`` loads tree-sitter-language-pack's compiled grammar module by its path: the
    same grammar as the pack's ``get_language`` gives (every node kind and field), without
    running the pack's package (which loads other grammars and ``importlib.resources``)."""
    import subprocess
    import sys

    from tree_sitter_language_pack import get_language as pack_language

    from knowing_pr.parse.treesitter import GRAMMAR_NAMES, get_language

    for language, name in GRAMMAR_NAMES.items():
        ours, packs = get_language(language), pack_language(name)  # type: ignore[arg-type]
        assert (ours.name, ours.abi_version) == (packs.name, packs.abi_version)
        assert [ours.node_kind_for_id(i) for i in range(ours.node_kind_count)] == [
            packs.node_kind_for_id(i) for i in range(packs.node_kind_count)
        ]
        assert [ours.field_name_for_id(i) for i in range(1, ours.field_count + 1)] == [
            packs.field_name_for_id(i) for i in range(1, packs.field_count + 1)
        ]
    probe = (
        "import sys\n"
        "from knowing_pr.parse import parse_source\n"
        "parsed = parse_source('a.cs', 'csharp', b'class A { void M() {} }')\n"
        "parsed = parse_source('a.py', 'python', b'def f():\\n    return 1\\n')\n"
        "print([d.name for d in parsed.definitions], sorted(m for m in sys.modules if m.startswith('tree_sitter')))\n"
    )
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert shown.split("]", 1)[0] == "['f'"
    assert "tree_sitter_language_pack'" not in shown and "'tree_sitter_c_sharp'" not in shown


def test_a_grammar_file_that_does_not_load_leaves_the_grammar_to_the_packs_loader(
    tmp_path, monkeypatch
) -> None:
    """A damaged compiled module (here: not a library at all) is no grammar: ``get_language``
    then asks tree-sitter-language-pack's own loader, which raises what it meets."""
    import importlib.machinery

    from knowing_pr.parse import treesitter

    package = tmp_path / "damagedpack"
    (package / "bindings").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "bindings" / f"python{importlib.machinery.EXTENSION_SUFFIXES[0]}").write_bytes(
        b"not a library"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(treesitter._BINDING_HOMES, "python", ("damagedpack", "bindings.python"))
    assert treesitter._grammar_module("python") is None
    monkeypatch.setitem(treesitter._BINDING_HOMES, "python", ("no_such_package_here", "bindings.python"))
    assert treesitter._grammar_module("python") is None
    assert treesitter._grammar_module("ruby") is not None  # where the pack keeps it, it loads


def _preorder(root):  # type: ignore[no-untyped-def]
    """Every node under ``root`` in document order (a parent before its children)."""
    order, stack = [], [root]
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(reversed(node.children))
    return order


FACTORY_PY = "\n".join(
    ["class A: pass", "class B: pass", "class C: pass", "class D: pass", "class E: pass", "class F: pass", ""]
    + ["def factory(kind):"]
    + [f"    if kind == {i}:\n        return {name}()" for i, name in enumerate("ABCDEF")]
    + ["    return None", ""]
)


@pytest.mark.parametrize(
    ("language", "query", "source"),
    [
        ("python", ("python",), FACTORY_PY),
        ("javascript", ("javascript",), "function f(a) { if (a) { return g(a) } return h(b(c(a))) }\n"),
        ("go", ("go",), SERVER_GO),
    ],
)
def test_captures_come_in_document_order_every_time(
    language: str, query: tuple[str, ...], source: str
) -> None:
    """tree-sitter's ``QueryCursor.captures`` lists a capture name's nodes in no fixed order;
    ``captures_in_order`` puts them in document order, the order the scope code reads them in."""
    from tree_sitter import QueryCursor

    from knowing_pr.parse.treesitter import captures_in_order, get_parser, load_joined_query

    data = source.encode()
    for _ in range(20):  # the order tree-sitter gives changed from one call to the next
        root = get_parser(language).parse(data).root_node
        position = {
            (n.start_byte, n.end_byte, n.type, n.parent.type if n.parent else ""): i
            for i, n in enumerate(_preorder(root))
        }
        captures = captures_in_order(QueryCursor(load_joined_query(query, language)), root)
        assert captures
        for name, nodes in captures.items():
            ranks = [
                position[(n.start_byte, n.end_byte, n.type, n.parent.type if n.parent else "")] for n in nodes
            ]
            assert ranks == sorted(ranks), name


def test_a_file_parses_to_the_same_records_every_time() -> None:
    """What a function returns is its first ``MAX_VALUES`` distinct returns in source order, the
    same in every parse (they once followed tree-sitter's capture order, which changes between
    calls: an index of Django made different typed edges from one run to the next)."""
    from knowing_pr.parse import parse_source
    from knowing_pr.parse.scopes import MAX_VALUES

    other = "\n".join(f"def g{i}(x):\n    return x + {i}\n" for i in range(40)).encode()
    seen = set()
    for i in range(25):
        parse_source("other.py", "python", other[: 200 + 37 * i])  # other trees between the parses
        parsed = parse_source("factory.py", "python", FACTORY_PY.encode())
        seen.add((repr(parsed.facts), repr(parsed.references), repr(parsed.definitions)))
        returns = [f.values for f in parsed.facts if f.kind == "returns" and f.scope == "factory"]
        assert returns == [tuple(f"{name}()" for name in "ABCDEF"[:MAX_VALUES])]
    assert len(seen) == 1


@pytest.mark.parametrize(
    ("path", "language", "source", "call"),
    [
        ("a.py", "python", "def f(g):\n    return (g\n        .query(1))\n", ("query", 3)),
        ("a.js", "javascript", "function f(g) {\n  return g\n    .query(1);\n}\n", ("query", 3)),
        ("a.ts", "typescript", "function f(g: G) {\n  return g\n    .query(1);\n}\n", ("query", 3)),
        ("a.rb", "ruby", "def f(app)\n  Rack::MockRequest.new(app).\n    query('/')\nend\n", ("query", 3)),
        ("a.go", "go", "package a\n\nfunc f(g G) int {\n\treturn g.\n\t\tQuery(1)\n}\n", ("Query", 5)),
        (
            "A.java",
            "java",
            "class A {\n  int f(G g) {\n    return g\n      .query(1);\n  }\n}\n",
            ("query", 4),
        ),
    ],
)
def test_a_call_split_over_lines_is_on_the_line_that_names_the_method(
    path: str, language: str, source: str, call: tuple[str, int]
) -> None:
    """rack's ``Rack::MockRequest.new(app).`` / ``query("/")`` was shown as a call of ``query`` on
    the receiver's line (Python, JavaScript, TypeScript and Ruby anchored a call on its start)."""
    parsed = parser_for(path, language)(source)
    calls = {(name, line) for kind, name, _, _, line in reference_rows(parsed) if kind == "call"}
    assert call in calls
