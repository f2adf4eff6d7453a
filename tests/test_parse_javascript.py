"""JavaScript / TypeScript / TSX extraction on real tree-sitter parses."""

from __future__ import annotations

from knowing_pr.model import Import, Reference
from knowing_pr.parse import parse_source

JS = b"""import D, {f, g as h} from "./x.js";
import * as ns from "m";
const x = require("./y"), {a, b: c} = require("./z");

/** Main entry.
 * @param a thing
 */
export default function main(a) {
  new Widget(f());
  a.b.c();
  this.h();
}

export const run = (q) => f(q);
const MAX_RETRIES = 3;

class K extends ns.Base {
  m() { return helper(); }
  field = () => other();
}
"""


def test_javascript_definitions() -> None:
    parsed = parse_source("src/a.js", "javascript", JS)
    summary = [
        (d.name, d.qualified_name, d.kind, d.start_line, d.end_line, d.parent) for d in parsed.definitions
    ]
    assert summary == [
        ("main", "main", "function", 8, 12, None),
        ("run", "run", "function", 14, 14, None),
        ("MAX_RETRIES", "MAX_RETRIES", "constant", 15, 15, None),
        ("K", "K", "class", 17, 20, None),
        ("m", "K.m", "method", 18, 18, "K"),
        ("field", "K.field", "method", 19, 19, "K"),
    ]
    main = parsed.definitions[0]
    assert main.signature == "export default function main(a)"
    assert main.doc == "Main entry. @param a thing"
    assert parsed.definitions[1].signature == "export const run = (q)"


def test_javascript_references_and_imports() -> None:
    parsed = parse_source("src/a.js", "javascript", JS)
    assert [(r.kind, r.name, r.qualifier, r.scope, r.line) for r in parsed.references] == [
        ("call", "Widget", "", "main", 9),
        ("call", "f", "", "main", 9),
        ("call", "c", "a.b", "main", 10),
        ("call", "h", "this", "main", 11),
        ("call", "f", "", "run", 14),
        ("extends", "Base", "ns", "K", 17),
        ("call", "helper", "", "K.m", 18),
        ("call", "other", "", "K.field", 19),
    ]
    assert parsed.imports == [
        Import("./x.js", (("default", "D"), ("f", "f"), ("g", "h")), 1),
        Import("m", (("*", "ns"),), 2),
        Import("./y", (("*", "x"),), 3),
        Import("./z", (("a", "a"), ("b", "c")), 3),
    ]


def test_imported_function_called() -> None:
    parsed = parse_source("a.js", "javascript", b'import {f} from "./x.js";\nfunction g() {\n  f();\n}\n')
    assert parsed.imports == [Import("./x.js", (("f", "f"),), 1)]
    assert parsed.references == [Reference("call", "f", 3, "g", "", hint="f")]


TS = b"""import type {Z} from "./z";
/** Shape of things. */
export interface Shape extends Base<Inner>, ns.Named {
  area(unit: Unit): number;
}
type Alias<T> = { value: T; other: Other };
enum Color { Red }
export abstract class Square<T> extends Figure implements Shape, ns.Sized {
  private cache: Map<string, Entry>;
  area(unit: Unit): Promise<Result> { return compute(unit); }
}
export async function g(a: Input): Promise<Output> {}
"""


def test_typescript_definitions() -> None:
    parsed = parse_source("a.ts", "typescript", TS)
    summary = [
        (d.name, d.qualified_name, d.kind, d.start_line, d.end_line, d.parent) for d in parsed.definitions
    ]
    assert summary == [
        ("Shape", "Shape", "interface", 3, 5, None),
        ("Alias", "Alias", "interface", 6, 6, None),
        ("Color", "Color", "enum", 7, 7, None),
        ("Square", "Square", "class", 8, 11, None),
        ("area", "Square.area", "method", 10, 10, "Square"),
        ("g", "g", "function", 12, 12, None),
    ]
    assert parsed.definitions[0].doc == "Shape of things."
    assert parsed.definitions[-1].signature == "export async function g(a: Input): Promise<Output>"


def test_typescript_heritage_and_type_references() -> None:
    parsed = parse_source("a.ts", "typescript", TS)
    assert [(r.kind, r.name, r.qualifier, r.scope) for r in parsed.references] == [
        ("extends", "Base", "", "Shape"),
        ("type", "Inner", "", "Shape"),
        ("extends", "Named", "ns", "Shape"),
        ("type", "Unit", "", "Shape"),
        ("type", "Other", "", "Alias"),
        ("extends", "Figure", "", "Square"),
        ("implements", "Shape", "", "Square"),
        ("implements", "Sized", "ns", "Square"),
        ("type", "Map", "", "Square"),
        ("type", "Entry", "", "Square"),
        ("type", "Unit", "", "Square.area"),
        ("type", "Promise", "", "Square.area"),
        ("type", "Result", "", "Square.area"),
        ("call", "compute", "", "Square.area"),
        ("type", "Input", "", "g"),
        ("type", "Promise", "", "g"),
        ("type", "Output", "", "g"),
    ]
    assert parsed.imports == [Import("./z", (("Z", "Z"),), 1)]


def test_tsx_component() -> None:
    source = b"""import React from "react";
export function Button(props: Props) {
  return <div><Icon.Star size={big()} /><Label>hi</Label></div>;
}
export const Card = ({title}: CardProps) => <Button label={title} />;
"""
    parsed = parse_source("a.tsx", "tsx", source)
    assert [(d.name, d.kind, d.start_line, d.end_line) for d in parsed.definitions] == [
        ("Button", "function", 2, 4),
        ("Card", "function", 5, 5),
    ]
    assert [(r.kind, r.name, r.qualifier, r.scope) for r in parsed.references] == [
        ("type", "Props", "", "Button"),
        ("call", "Star", "Icon", "Button"),
        ("call", "big", "", "Button"),
        ("call", "Label", "", "Button"),
        ("type", "CardProps", "", "Card"),
        ("call", "Button", "", "Card"),
    ]
    assert parsed.imports == [Import("react", (("default", "React"),), 1)]


def test_bad_inputs_never_raise() -> None:
    crlf = parse_source("a.js", "javascript", b"// c\r\nfunction f() {\r\n  g();\r\n}\r\n")
    assert [(d.name, d.start_line, d.end_line) for d in crlf.definitions] == [("f", 2, 4)]
    assert crlf.references == [Reference("call", "g", 3, "f", "", hint="g")]
    for language in ("javascript", "typescript", "tsx"):
        for source in (b"", b"\x00\x00\x00", b"function \xff(a) { b(\xc3\x28 }", b"class { extends ("):
            parsed = parse_source("a", language, source)
            assert isinstance(parsed.references, list)
