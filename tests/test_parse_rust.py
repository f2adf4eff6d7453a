"""Rust extraction on real tree-sitter parses: definitions, references, `use` forms, bad input."""

from __future__ import annotations

import time

from parse_helpers import (
    definition_rows,
    parser_for,
    reference_rows,
)

LIB_RS = """\
//! Crate docs.
use crate::store::cache::Cache;
use std::collections::{HashMap, BTreeMap as Tree, hash_map::Entry, self};
use serde;
use std::io::*;
mod util;

/// Can render.
pub trait Render: Display {
    fn render(&self, out: &mut Output) -> Html;
    fn title(&self) -> Label {
        self.render(&mut Output::new())
    }
}

/// A page.
#[derive(Debug)]
pub struct Page<T> {
    body: Body,
    tags: Vec<Tag>,
    extra: T,
}

impl<T> Render for Page<T> {
    fn render(&self, out: &mut Output) -> Html {
        let parts = self.body.parts().map(|p| wrap(p));
        assert_eq!(check(parts), util::ok());
        Html::from(parts)
    }
}

impl<T> Page<T> {
    pub const LIMIT: usize = 10;
    pub fn new() -> Self { Page { body: Body::default(), tags: Vec::new() } }
}

pub mod shapes {
    pub enum Shape { Circle(Radius) }
    pub fn area(s: &Shape) -> f64 { geometry::area(s) }
}

static GREETING: &str = "hi";
"""


parse = parser_for("src/lib.rs", "rust")


def test_definitions_traits_impls_and_modules() -> None:
    assert definition_rows(parse(LIB_RS)) == [
        ("Render", "Render", "trait", 9, 14, None),
        ("render", "Render.render", "method", 10, 10, "Render"),
        ("title", "Render.title", "method", 11, 13, "Render"),
        ("Page", "Page", "struct", 18, 22, None),
        ("render", "Page.render", "method", 25, 29, "Page"),
        ("LIMIT", "Page.LIMIT", "constant", 33, 33, "Page"),
        ("new", "Page.new", "method", 34, 34, "Page"),
        ("shapes", "shapes", "module", 37, 40, None),
        ("Shape", "shapes.Shape", "enum", 38, 38, "shapes"),
        ("area", "shapes.area", "function", 39, 39, "shapes"),
        ("GREETING", "GREETING", "constant", 42, 42, None),
    ]


def test_docs_skip_attributes_and_signatures_stop_at_the_body() -> None:
    by_name = {d.qualified_name: d for d in parse(LIB_RS).definitions}
    assert by_name["Render"].doc == "Can render."
    assert by_name["Page"].doc == "A page."
    assert by_name["Page.render"].doc == ""
    assert by_name["Render"].signature == "pub trait Render: Display"
    assert by_name["Render.render"].signature == "fn render(&self, out: &mut Output) -> Html"
    assert by_name["Page.new"].signature == "pub fn new() -> Self"
    assert by_name["Page"].signature == "pub struct Page<T>"


def test_references_impl_trait_calls_macros_and_types() -> None:
    assert reference_rows(parse(LIB_RS)) == [
        ("extends", "Display", "", "Render", 9),
        ("type", "Output", "", "Render.render", 10),
        ("type", "Html", "", "Render.render", 10),
        ("type", "Label", "", "Render.title", 11),
        ("call", "render", "self", "Render.title", 12),
        ("call", "Output", "", "Render.title", 12),
        ("call", "new", "Output", "Render.title", 12),
        ("type", "Body", "", "Page", 19),
        ("type", "Tag", "", "Page", 20),
        ("implements", "Render", "", "Page", 24),
        ("type", "Output", "", "Page.render", 25),
        ("type", "Html", "", "Page.render", 25),
        ("call", "parts", "self.body", "Page.render", 26),
        ("call", "map", "self.body.parts()", "Page.render", 26),
        ("call", "wrap", "", "Page.render", 26),
        ("call", "check", "", "Page.render", 27),
        ("call", "ok", "util", "Page.render", 27),
        ("call", "Html", "", "Page.render", 28),
        ("call", "from", "Html", "Page.render", 28),
        ("type", "Page", "", "Page.new", 34),
        ("call", "Body", "", "Page.new", 34),
        ("call", "default", "Body", "Page.new", 34),
        ("call", "new", "Vec", "Page.new", 34),
        ("type", "Radius", "", "shapes.Shape", 38),
        ("type", "Shape", "", "shapes.area", 39),
        ("call", "area", "geometry", "shapes.area", 39),
    ]


def test_use_forms() -> None:
    imports = [(i.module, i.names, i.line) for i in parse(LIB_RS).imports]
    assert imports == [
        ("crate::store::cache", (("Cache", "Cache"),), 2),
        ("std::collections", (("HashMap", "HashMap"), ("BTreeMap", "Tree")), 3),
        ("std::collections::hash_map", (("Entry", "Entry"),), 3),
        ("std", (("collections", "collections"),), 3),
        ("serde", (("*", "serde"),), 4),
        ("std::io", (("*", "*"),), 5),
        ("util", (("*", "util"),), 6),
    ]


def test_use_module_alias_nested_lists_and_extern_crate() -> None:
    source = "use a::b;\nuse a::b as c;\npub use super::x::{y::{Z, W}};\nextern crate foo as bar;\n"
    imports = [(i.module, i.names) for i in parse(source).imports]
    assert imports == [
        ("a", (("b", "b"),)),
        ("a", (("b", "c"),)),
        ("super::x::y", (("Z", "Z"), ("W", "W"))),
        ("foo", (("*", "bar"),)),
    ]


def test_impl_trait_for_scoped_type_inside_module() -> None:
    source = "mod m {\n    impl crate::fmt::Show for super::Thing {\n        fn show(&self) {}\n    }\n}\n"
    parsed = parse(source)
    assert definition_rows(parsed) == [
        ("m", "m", "module", 1, 5, None),
        ("show", "m.Thing.show", "method", 3, 3, "m.Thing"),
    ]
    assert reference_rows(parsed) == [("implements", "Show", "crate::fmt", "m.Thing", 2)]


def test_generic_calls_and_turbofish() -> None:
    source = "fn f<K: Key>(k: K) { x.get::<u8>(k); parse::<Num>(k); }\n"
    assert reference_rows(parse(source)) == [
        ("call", "get", "x", "f", 1),
        ("call", "parse", "", "f", 1),
    ]


def test_invalid_utf8_is_replaced_not_raised() -> None:
    parsed = parse(b"/// caf\xe9\nfn good() { call\xff(); }\n")
    assert definition_rows(parsed) == [("good", "good", "function", 2, 2, None)]
    assert parsed.definitions[0].doc == "caf\ufffd"


def test_nul_bytes_keep_the_definitions_around_them() -> None:
    parsed = parse(b"fn a() {}\n\x00\x00\nfn b() {}\n")
    assert ("a", "a", "function", 1, 1, None) in definition_rows(parsed)


def test_syntax_error_keeps_valid_definitions() -> None:
    source = "fn before() { ok(); }\nfn broken( { let x = ; }\nstruct After { a: A }\n"
    rows = definition_rows(parse(source))
    assert ("before", "before", "function", 1, 1, None) in rows
    assert ("After", "After", "struct", 3, 3, None) in rows


def test_deep_nesting_does_not_recurse() -> None:
    depth = 400
    source = "mod m {" * depth + "fn f() {}" + "}" * depth
    parsed = parse(source)
    assert len(parsed.definitions) == depth + 1
    assert parsed.definitions[-1].qualified_name == ".".join(["m"] * depth + ["f"])


def test_large_generated_file() -> None:
    blocks = [
        f"/// Item {i}.\npub struct S{i} {{ next: Option<Box<S{i + 1}>>, data: Data }}\n\n"
        f"impl Step for S{i} {{\n    fn step(&self, x: Input) -> Output {{\n"
        f"        match &self.next {{ Some(n) => n.step(x), None => helper{i}(x) }}\n    }}\n}}\n\n"
        f"fn helper{i}(x: Input) -> Output {{ Output::from(x) }}\n\n"
        for i in range(400)
    ]
    started = time.perf_counter()
    parsed = parse("use crate::step::Step;\n\n" + "".join(blocks))
    elapsed_s = time.perf_counter() - started
    assert len(parsed.definitions) == 1200
    assert sum(r.kind == "implements" for r in parsed.references) == 400
    assert parsed.definitions[1].qualified_name == "S0.step"
    assert elapsed_s < 20  # a loose ceiling; measured figures are in the report


#: fd's ``DirEntry``: its own ``path``, then an ``impl Colorable`` opened with a ``path`` of its own
DIR_ENTRY_PATHS = (
    "impl DirEntry {\n"
    "    fn path(&self) -> &Path { &self.inner }\n"
    "}\n"
    "impl Colorable for DirEntry {\n"
    "    fn path(&self) -> PathBuf { self.path().to_owned() }\n"
)


def test_trait_impl_methods_named_like_inherent_ones_are_both_kept() -> None:
    """fd's ``impl Colorable for DirEntry`` has ``path`` beside ``DirEntry``'s own ``path``: two
    symbols, the trait's named with the trait; a trait method no other shares keeps its name."""
    source = DIR_ENTRY_PATHS + "    fn file_name(&self) -> OsString { todo!() }\n}\n"
    assert definition_rows(parse(source)) == [
        ("path", "DirEntry.path", "method", 2, 2, "DirEntry"),
        ("path", "DirEntry.<Colorable>.path", "method", 5, 5, "DirEntry"),
        ("file_name", "DirEntry.file_name", "method", 6, 6, "DirEntry"),
    ]


def test_a_use_inside_a_trait_impl_method_named_with_its_trait_is_that_method_s() -> None:
    """The uses inside ``DirEntry.<Colorable>.path`` are its own: under the name the method had
    before it was told apart, they fell to the inherent ``DirEntry.path`` (or, with no such
    node left, to the type; axum's ``Path`` took the calls of both its ``from_request_parts``)."""
    source = (
        DIR_ENTRY_PATHS + "}\n"
        "impl Other for DirEntry {\n"
        "    fn path(&self) -> PathBuf { matches!(self.kind(), Kind::File) }\n"
        "}\n"
    )
    calls = {(name, scope) for kind, name, _, scope, _ in reference_rows(parse(source)) if kind == "call"}
    assert calls == {
        ("path", "DirEntry.<Colorable>.path"),
        ("to_owned", "DirEntry.<Colorable>.path"),
        ("kind", "DirEntry.<Other>.path"),
    }
