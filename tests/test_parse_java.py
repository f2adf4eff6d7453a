"""Java extraction on real tree-sitter parses: definitions, references, imports, bad input."""

from __future__ import annotations

import time

from parse_helpers import (
    definition_rows,
    parser_for,
    reference_rows,
)

SERVICE_JAVA = """\
package com.acme.app;

import java.util.List;
import com.acme.store.*;
import static org.junit.Assert.assertEquals;

/**
 * Serves {@code Request}s.
 * <p>Thread-safe.
 */
@Component
public class Service extends BaseService implements Runnable, com.acme.Closer {
    public static final int MAX_SIZE = 10;
    private static final String lowerName = "x";
    private final Repo repo;

    /** Builds it. */
    public Service(Repo repo, List<Item> items) {
        this.repo = repo;
    }

    @Override
    public Result run(Request req) {
        Handler h = new Handler(repo);
        return repo.find(req.id()).map(x -> convert(x)).orElse(Util.empty());
    }

    static class Inner implements Comparable<Inner> {
        void tick() { Service.this.run(null); }
    }

    interface Listener extends EventListener {
        int PRIORITY = 1;
        void on(Event e);
    }
}
"""


parse = parser_for("src/main/java/com/acme/app/Service.java", "java")


def test_definitions_nested_types_constructors_and_constants() -> None:
    assert definition_rows(parse(SERVICE_JAVA)) == [
        ("Service", "Service", "class", 11, 36, None),
        ("MAX_SIZE", "Service.MAX_SIZE", "constant", 13, 13, "Service"),
        ("Service", "Service.Service", "method", 18, 20, "Service"),
        ("run", "Service.run", "method", 22, 26, "Service"),
        ("Inner", "Service.Inner", "class", 28, 30, "Service"),
        ("tick", "Service.Inner.tick", "method", 29, 29, "Service.Inner"),
        ("Listener", "Service.Listener", "interface", 32, 35, "Service"),
        ("PRIORITY", "Service.Listener.PRIORITY", "constant", 33, 33, "Service.Listener"),
        ("on", "Service.Listener.on", "method", 34, 34, "Service.Listener"),
    ]


def test_javadoc_and_signatures() -> None:
    by_name = {d.qualified_name: d for d in parse(SERVICE_JAVA).definitions}
    assert by_name["Service"].doc == "Serves Requests. Thread-safe."
    assert by_name["Service.Service"].doc == "Builds it."
    assert by_name["Service.run"].doc == ""
    assert by_name["Service"].signature == (
        "@Component public class Service extends BaseService implements Runnable, com.acme.Closer"
    )
    assert by_name["Service.run"].signature == "@Override public Result run(Request req)"
    assert by_name["Service.Listener.on"].signature == "void on(Event e)"
    assert by_name["Service.MAX_SIZE"].signature == "public static final int MAX_SIZE = 10"


def test_references_inheritance_calls_and_types() -> None:
    assert reference_rows(parse(SERVICE_JAVA)) == [
        ("extends", "BaseService", "", "Service", 12),
        ("implements", "Runnable", "", "Service", 12),
        ("implements", "Closer", "com.acme", "Service", 12),
        ("type", "Repo", "", "Service", 15),
        ("type", "Repo", "", "Service.Service", 18),
        ("type", "Item", "", "Service.Service", 18),
        ("type", "Result", "", "Service.run", 23),
        ("type", "Request", "", "Service.run", 23),
        ("call", "Handler", "", "Service.run", 24),
        ("call", "find", "repo", "Service.run", 25),
        ("call", "id", "req", "Service.run", 25),
        ("call", "map", "repo.find(req.id())", "Service.run", 25),
        ("call", "convert", "", "Service.run", 25),
        ("call", "orElse", "repo.find(req.id()).map(x -> convert(x))", "Service.run", 25),
        ("call", "empty", "Util", "Service.run", 25),
        ("implements", "Comparable", "", "Service.Inner", 28),
        ("call", "run", "Service.this", "Service.Inner.tick", 29),
        ("extends", "EventListener", "", "Service.Listener", 32),
        ("type", "Event", "", "Service.Listener.on", 34),
    ]


def test_imports_and_package() -> None:
    imports = [(i.module, i.names, i.line) for i in parse(SERVICE_JAVA).imports]
    assert imports == [
        ("com.acme.app", (("package", "com.acme.app"),), 1),
        ("java.util", (("List", "List"),), 3),
        ("com.acme.store", (("*", "*"),), 4),
        ("org.junit.Assert", (("assertEquals", "assertEquals"),), 5),
    ]
    static_glob = parse("import static org.junit.Assert.*;\n").imports
    assert [(i.module, i.names) for i in static_glob] == [("org.junit.Assert", (("*", "*"),))]


def test_enums_records_method_references_and_generics() -> None:
    source = """\
enum Color implements Paint { RED; static final Color DEFAULT_COLOR = RED; Color mix(Color o) { return o; } }
record Point(int x, Coord y) implements Shape { Point { validate(x); } }
class Box<T> { T get(Mapper<T> m) { return xs.stream().map(Conv::apply).map(Node::new).findFirst(); } }
"""
    parsed = parse(source)
    assert definition_rows(parsed) == [
        ("Color", "Color", "enum", 1, 1, None),
        ("DEFAULT_COLOR", "Color.DEFAULT_COLOR", "constant", 1, 1, "Color"),
        ("mix", "Color.mix", "method", 1, 1, "Color"),
        ("Point", "Point", "class", 2, 2, None),
        ("Point", "Point.Point", "method", 2, 2, "Point"),
        ("Box", "Box", "class", 3, 3, None),
        ("get", "Box.get", "method", 3, 3, "Box"),
    ]
    assert reference_rows(parsed) == [
        ("implements", "Paint", "", "Color", 1),
        ("type", "Color", "", "Color.DEFAULT_COLOR", 1),
        ("type", "Color", "", "Color.mix", 1),
        ("type", "Color", "", "Color.mix", 1),
        ("type", "Coord", "", "Point", 2),
        ("implements", "Shape", "", "Point", 2),
        ("call", "validate", "", "Point.Point", 2),
        ("type", "Mapper", "", "Box.get", 3),
        ("call", "stream", "xs", "Box.get", 3),
        ("call", "map", "xs.stream()", "Box.get", 3),
        ("call", "apply", "Conv", "Box.get", 3),
        ("call", "map", "xs.stream().map(Conv::apply)", "Box.get", 3),
        ("call", "Node", "", "Box.get", 3),
        ("call", "findFirst", "xs.stream().map(Conv::apply).map(Node::new)", "Box.get", 3),
    ]


def test_overloads_are_symbols_of_their_own() -> None:
    source = "class C {\n  void f(int a) {}\n  void f(String s) {}\n  void f(List<Map<K, V>>  xs) {}\n}\n"
    assert definition_rows(parse(source)) == [
        ("C", "C", "class", 1, 5, None),
        ("f", "C.f", "method", 2, 2, "C"),
        ("f", "C.f(String s)", "method", 3, 3, "C"),
        ("f", "C.f(List<Map<K, V>> xs)", "method", 4, 4, "C"),
    ]


def test_invalid_utf8_is_replaced_not_raised() -> None:
    parsed = parse(b"/** caf\xe9 */\nclass Good { void m() { call\xff(); } }\n")
    assert definition_rows(parsed)[0] == ("Good", "Good", "class", 2, 2, None)
    assert parsed.definitions[0].doc == "caf\ufffd"


def test_nul_bytes_keep_the_definitions_around_them() -> None:
    parsed = parse(b"class A { void m() {} }\n\x00\x00\nclass B {}\n")
    assert ("A", "A", "class", 1, 1, None) in definition_rows(parsed)


def test_syntax_error_keeps_valid_definitions() -> None:
    source = "class A {\n  void before() { ok(); }\n  void broken( { int x = ; }\n  void after() {}\n}\n"
    rows = definition_rows(parse(source))
    assert ("before", "A.before", "method", 2, 2, "A") in rows
    assert ("after", "A.after", "method", 4, 4, "A") in rows


def test_deep_nesting_does_not_recurse() -> None:
    depth = 400
    source = "class A {" * depth + "void m() {}" + "}" * depth
    parsed = parse(source)
    assert len(parsed.definitions) == depth + 1
    assert parsed.definitions[-1].parent == ".".join(["A"] * depth)


def test_large_generated_file() -> None:
    members = [
        f"    /** Step {i}. */\n    public Output step{i}(Input input) {{\n"
        f"        if (input.isEmpty()) {{ return new Output(); }}\n"
        f"        return helper.apply{i}(input).map(x -> convert(x));\n    }}\n\n"
        f"    static final class Part{i} extends Base implements Step {{\n"
        f"        Part{i}() {{ super(); }}\n    }}\n\n"
        for i in range(400)
    ]
    source = "package big;\n\nimport java.util.List;\n\npublic class Big {\n" + "".join(members) + "}\n"
    started = time.perf_counter()
    parsed = parse(source)
    elapsed_s = time.perf_counter() - started
    assert len(parsed.definitions) == 1 + 3 * 400
    assert sum(r.kind == "call" for r in parsed.references) == 5 * 400
    assert elapsed_s < 20  # a loose ceiling; measured figures are in the report


def test_a_call_inside_an_overload_is_that_overload_s() -> None:
    """Under the name every overload shares, the calls of a later overload were the first one's."""
    source = "class C {\n  void f(int a) { g(); }\n  void f(String s) { h(); }\n}\n"
    calls = [(name, scope) for kind, name, _, scope, _ in reference_rows(parse(source)) if kind == "call"]
    assert calls == [("g", "C.f"), ("h", "C.f(String s)")]
