"""Go extraction on real tree-sitter parses: definitions, references, imports, bad input."""

from __future__ import annotations

import time

from parse_helpers import (
    definition_rows,
    parser_for,
    reference_rows,
)

SERVER_GO = """\
package server

import (
\t"fmt"
\tnethttp "net/http"
\t"github.com/acme/store/v2"
)

// Handler handles requests.
// It is an interface.
type Handler interface {
\tBase
\tServe(req *Request) error
}

// Server serves.
type Server struct {
\tBase
\t*store.Cache
\tname    string
\thandler Handler
}

const MaxConns = 10

const (
\tDEFAULT_PORT = 8080
\tinternal     = 1
)

func NewServer(h Handler) *Server {
\treturn &Server{handler: h}
}

// Start starts the server.
func (s *Server) Start(addr Addr) (Result, error) {
\tfmt.Println(s.name)
\tgo func() {
\t\tnethttp.ListenAndServe(format(addr), nil)
\t}()
\treturn s.handler.Serve(newRequest()), nil
}

func (l *List[T]) Len() int { return 0 }
"""


parse = parser_for("server/server.go", "go")


def test_definitions_with_receiver_methods_types_and_constants() -> None:
    assert definition_rows(parse(SERVER_GO)) == [
        ("Handler", "Handler", "interface", 11, 14, None),
        ("Server", "Server", "struct", 17, 22, None),
        ("MaxConns", "MaxConns", "constant", 24, 24, None),
        ("DEFAULT_PORT", "DEFAULT_PORT", "constant", 27, 27, None),
        ("NewServer", "NewServer", "function", 31, 33, None),
        ("Start", "Server.Start", "method", 36, 42, "Server"),
        ("Len", "List.Len", "method", 44, 44, "List"),
    ]


def test_signatures_docs_and_byte_ranges() -> None:
    parsed = parse(SERVER_GO)
    by_name = {d.qualified_name: d for d in parsed.definitions}
    start = by_name["Server.Start"]
    assert start.signature == "func (s *Server) Start(addr Addr) (Result, error)"
    assert start.doc == "Start starts the server."
    assert SERVER_GO.encode()[start.start_byte : start.end_byte].startswith(b"func (s *Server) Start(")
    assert SERVER_GO.encode()[start.start_byte : start.end_byte].endswith(b"nil\n}")
    assert by_name["Handler"].doc == "Handler handles requests. It is an interface."
    assert by_name["Handler"].signature == "type Handler interface"
    assert by_name["Server"].signature == "type Server struct"
    assert by_name["Server"].doc == "Server serves."
    assert by_name["NewServer"].doc == ""
    assert by_name["MaxConns"].signature == "const MaxConns = 10"


def test_references_calls_embedding_and_types() -> None:
    assert reference_rows(parse(SERVER_GO)) == [
        ("extends", "Base", "", "Handler", 12),
        ("type", "Request", "", "Handler", 13),
        ("extends", "Base", "", "Server", 18),
        ("extends", "Cache", "store", "Server", 19),
        ("type", "Handler", "", "Server", 21),
        ("type", "Handler", "", "NewServer", 31),
        ("type", "Server", "", "NewServer", 31),
        ("type", "Server", "", "NewServer", 32),
        ("type", "Addr", "", "Server.Start", 36),
        ("type", "Result", "", "Server.Start", 36),
        ("call", "Println", "fmt", "Server.Start", 37),
        ("call", "ListenAndServe", "nethttp", "Server.Start", 39),
        ("call", "format", "", "Server.Start", 39),
        ("call", "Serve", "s.handler", "Server.Start", 41),
        ("call", "newRequest", "", "Server.Start", 41),
    ]


def test_imports_grouped_aliased_and_versioned() -> None:
    imports = [(i.module, i.names, i.line) for i in parse(SERVER_GO).imports]
    assert imports == [
        ("fmt", (("*", "fmt"),), 4),
        ("net/http", (("*", "nethttp"),), 5),
        ("github.com/acme/store/v2", (("*", "store"),), 6),
    ]


def test_single_import_blank_and_dot_aliases() -> None:
    source = 'package p\nimport "github.com/a/b"\nimport _ "x/driver"\nimport . "gopkg.in/yaml.v3"\n'
    imports = [(i.module, i.names) for i in parse(source).imports]
    assert imports == [
        ("github.com/a/b", (("*", "b"),)),
        ("x/driver", (("*", "_"),)),
        ("gopkg.in/yaml.v3", (("*", "."),)),
    ]
    assert parse('package p\nimport "gopkg.in/yaml.v3"\n').imports[0].names == (("*", "yaml"),)


def test_nested_calls_generics_conversions_and_literals() -> None:
    source = """\
package p
type Box[T any] struct{ item T }
func Use[K comparable](k K) {
\tx.y.Do(Map[int](k), []Item{}, pkg.Point{})
\tconvert(int64(k))
}
"""
    parsed = parse(source)
    assert definition_rows(parsed) == [
        ("Box", "Box", "struct", 2, 2, None),
        ("Use", "Use", "function", 3, 6, None),
    ]
    assert reference_rows(parsed) == [
        ("call", "Do", "x.y", "Use", 4),
        ("call", "Map", "", "Use", 4),
        ("type", "Item", "", "Use", 4),
        ("type", "Point", "pkg", "Use", 4),
        ("call", "convert", "", "Use", 5),
        ("call", "int64", "", "Use", 5),
    ]


def test_grouped_type_declaration_spans_each_spec_and_other_types_are_classes() -> None:
    source = "package p\n\ntype (\n\t// ID names.\n\tID string\n\tAlias = other.T\n)\n"
    parsed = parse(source)
    assert definition_rows(parsed) == [
        ("ID", "ID", "class", 5, 5, None),
        ("Alias", "Alias", "class", 6, 6, None),
    ]
    assert parsed.definitions[0].doc == "ID names."
    assert reference_rows(parsed) == [("type", "T", "other", "Alias", 6)]


def test_trailing_comment_of_previous_line_is_not_a_doc() -> None:
    source = "package p\nvar x = 1 // counter\nfunc F() {}\n"
    assert parse(source).definitions[0].doc == ""


def test_invalid_utf8_is_replaced_not_raised() -> None:
    parsed = parse(b"package p\n// caf\xe9 \xff\nfunc Good() { call\xfe() }\n")
    assert definition_rows(parsed) == [("Good", "Good", "function", 3, 3, None)]
    assert parsed.definitions[0].doc == "caf\ufffd \ufffd"


def test_nul_bytes_keep_the_definitions_around_them() -> None:
    parsed = parse(b"package p\nfunc A() {}\n\x00\x00\x00\nfunc B() {}\n")
    assert ("A", "A", "function", 2, 2, None) in definition_rows(parsed)


def test_syntax_error_keeps_valid_definitions() -> None:
    source = "package p\nfunc Before() { ok() }\nfunc Broken( {\n\tx := \n}\nfunc After() int { return 1 }\n"
    rows = definition_rows(parse(source))
    assert ("Before", "Before", "function", 2, 2, None) in rows
    assert ("After", "After", "function", 6, 6, None) in rows


def test_deep_nesting_does_not_recurse() -> None:
    depth = 3000
    source = "package p\nfunc f() { x := " + "g(" * depth + "1" + ")" * depth + "\n}\n"
    parsed = parse(source)
    assert len(parsed.references) == depth
    assert {r.scope for r in parsed.references} == {"f"}


def test_large_generated_file() -> None:
    blocks = [
        f"// T{i} is a type.\ntype T{i} struct {{\n\tBase\n\tnext *T{i + 1}\n}}\n\n"
        f"func (t *T{i}) Step(x Input) (Output, error) {{\n"
        f"\tif t.next != nil {{\n\t\treturn t.next.Step(x)\n\t}}\n"
        f"\treturn helper{i}(x), nil\n}}\n\nfunc helper{i}(x Input) Output {{ return Output{{}} }}\n\n"
        for i in range(400)
    ]
    source = 'package big\n\nimport "fmt"\n\n' + "".join(blocks)
    started = time.perf_counter()
    parsed = parse(source)
    elapsed_s = time.perf_counter() - started
    assert len(parsed.definitions) == 1200
    assert sum(r.kind == "call" for r in parsed.references) == 800
    assert parsed.definitions[1].qualified_name == "T0.Step"
    assert elapsed_s < 20  # a loose ceiling; measured figures are in the report
