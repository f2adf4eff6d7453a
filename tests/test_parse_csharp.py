"""C# extraction on real tree-sitter parses: definitions, references, usings, bad input."""

from __future__ import annotations

import time

from parse_helpers import (
    definition_rows,
    parser_for,
    reference_rows,
)

RUNNER_CS = """\
using System;
using System.Collections.Generic;
using Store = Acme.Data.Store<int>;
using static System.Math;

namespace Acme.App
{
    /// <summary>
    /// Runs <see cref="Job"/> items.
    /// </summary>
    [Serializable]
    public class Runner : BaseRunner, IService, IDisposable
    {
        public const int MaxJobs = 10;
        private static readonly Clock clock = new Clock();
        private Repo _repo;

        /// <summary>Creates it.</summary>
        public Runner(Repo repo) : base(repo) { _repo = repo; }

        public Result Run(Job job, int tries)
        {
            var found = _repo.Find(job.Id)?.Load();
            Log.Write(Format(found));
            return new Result(found);
        }

        public struct Slot { public Job Current; }

        public interface IListener : IObserver, Notifier
        {
            void On(Event e);
        }
    }
}
"""


parse = parser_for("src/Runner.cs", "csharp")


def test_definitions_ignore_the_namespace_in_qualified_names() -> None:
    assert definition_rows(parse(RUNNER_CS)) == [
        ("Runner", "Runner", "class", 11, 34, None),
        ("MaxJobs", "Runner.MaxJobs", "constant", 14, 14, "Runner"),
        ("Runner", "Runner.Runner", "method", 19, 19, "Runner"),
        ("Run", "Runner.Run", "method", 21, 26, "Runner"),
        ("Slot", "Runner.Slot", "struct", 28, 28, "Runner"),
        ("IListener", "Runner.IListener", "interface", 30, 33, "Runner"),
        ("On", "Runner.IListener.On", "method", 32, 32, "Runner.IListener"),
    ]


def test_xml_doc_comments_and_signatures() -> None:
    by_name = {d.qualified_name: d for d in parse(RUNNER_CS).definitions}
    assert by_name["Runner"].doc == "Runs Job items."
    assert by_name["Runner.Runner"].doc == "Creates it."
    assert by_name["Runner.Run"].doc == ""
    assert by_name["Runner"].signature == (
        "[Serializable] public class Runner : BaseRunner, IService, IDisposable"
    )
    assert by_name["Runner.Run"].signature == "public Result Run(Job job, int tries)"
    assert by_name["Runner.IListener.On"].signature == "void On(Event e)"


def test_references_bases_calls_and_types() -> None:
    assert reference_rows(parse(RUNNER_CS)) == [
        ("extends", "BaseRunner", "", "Runner", 12),
        ("implements", "IService", "", "Runner", 12),
        ("implements", "IDisposable", "", "Runner", 12),
        ("type", "Clock", "", "Runner", 15),
        ("call", "Clock", "", "Runner", 15),
        ("type", "Repo", "", "Runner", 16),
        ("type", "Repo", "", "Runner.Runner", 19),
        ("type", "Result", "", "Runner.Run", 21),
        ("type", "Job", "", "Runner.Run", 21),
        ("call", "Find", "_repo", "Runner.Run", 23),
        ("call", "Load", "_repo.Find(job.Id)", "Runner.Run", 23),
        ("call", "Write", "Log", "Runner.Run", 24),
        ("call", "Format", "", "Runner.Run", 24),
        ("call", "Result", "", "Runner.Run", 25),
        ("type", "Job", "", "Runner.Slot", 28),
        ("extends", "IObserver", "", "Runner.IListener", 30),
        ("extends", "Notifier", "", "Runner.IListener", 30),
        ("type", "Event", "", "Runner.IListener.On", 32),
    ]


def test_usings_and_namespace_hint() -> None:
    imports = [(i.module, i.names, i.line) for i in parse(RUNNER_CS).imports]
    assert imports == [
        ("System", (("*", "*"),), 1),
        ("System.Collections.Generic", (("*", "*"),), 2),
        ("Acme.Data", (("Store", "Store"),), 3),
        ("System.Math", (("*", "*"),), 4),
        ("Acme.App", (("namespace", "Acme.App"),), 6),
    ]


def test_file_scoped_namespace_records_and_generic_calls() -> None:
    source = """\
namespace Acme.Models;
/// A point.
public record Point(int X, Coord Y) : Shape, IEquatable<Point>;
public record struct Pair(int A, int B);
public enum Kind : byte { One, Two }
class Q<T> { T Get(Acme.Data.Table<Row> t) { return t.Fetch<T>() ?? Make<Row>(); } }
"""
    parsed = parse(source)
    assert definition_rows(parsed) == [
        ("Point", "Point", "class", 3, 3, None),
        ("Pair", "Pair", "struct", 4, 4, None),
        ("Kind", "Kind", "enum", 5, 5, None),
        ("Q", "Q", "class", 6, 6, None),
        ("Get", "Q.Get", "method", 6, 6, "Q"),
    ]
    assert parsed.definitions[0].doc == "A point."
    assert reference_rows(parsed) == [
        ("type", "Coord", "", "Point", 3),
        ("extends", "Shape", "", "Point", 3),
        ("implements", "IEquatable", "", "Point", 3),
        ("type", "Table", "Acme.Data", "Q.Get", 6),
        ("type", "Row", "", "Q.Get", 6),
        ("call", "Fetch", "t", "Q.Get", 6),
        ("call", "Make", "", "Q.Get", 6),
    ]
    assert [(i.module, i.names) for i in parsed.imports] == [("Acme.Models", (("namespace", "Acme.Models"),))]


def test_nested_namespaces_join() -> None:
    source = "namespace A { namespace B.C { class D {} } }\n"
    parsed = parse(source)
    assert [i.module for i in parsed.imports] == ["A", "A.B.C"]
    assert definition_rows(parsed) == [("D", "D", "class", 1, 1, None)]


def test_invalid_utf8_is_replaced_not_raised() -> None:
    parsed = parse(b"/// caf\xe9\nclass Good { void M() { Call\xff(); } }\n")
    assert definition_rows(parsed)[0] == ("Good", "Good", "class", 2, 2, None)
    assert parsed.definitions[0].doc == "caf\ufffd"


def test_nul_bytes_keep_the_definitions_around_them() -> None:
    parsed = parse(b"class A { void M() {} }\n\x00\x00\nclass B {}\n")
    assert ("A", "A", "class", 1, 1, None) in definition_rows(parsed)


def test_syntax_error_keeps_valid_definitions() -> None:
    source = (
        "class A {\n  void Before() { Ok(); }\n  void Broken() { int x = ; if ( }\n  void After() {}\n}\n"
    )
    rows = definition_rows(parse(source))
    assert ("Before", "A.Before", "method", 2, 2, "A") in rows
    assert ("After", "A.After", "method", 4, 4, "A") in rows


def test_broken_signature_keeps_the_definitions_before_it_and_the_names_after_it() -> None:
    # tree-sitter recovers `After` as a top-level local function here: the name survives
    source = "class A {\n  void Before() { Ok(); }\n  void Broken( { int x = ; }\n  void After() {}\n}\n"
    parsed = parse(source)
    assert ("Before", "A.Before", "method", 2, 2, "A") in definition_rows(parsed)
    assert ("After", "After", "function", 4, 4, None) in definition_rows(parsed)


def test_deep_nesting_does_not_recurse() -> None:
    depth = 300
    source = "class A {" * depth + "void M() {}" + "}" * depth
    parsed = parse(source)
    assert len(parsed.definitions) == depth + 1
    assert parsed.definitions[-1].parent == ".".join(["A"] * depth)


def test_large_generated_file() -> None:
    members = [
        f"        /// <summary>Step {i}.</summary>\n        public Output Step{i}(Input input)\n        {{\n"
        f"            if (input.IsEmpty()) {{ return new Output(); }}\n"
        f"            return _helper.Apply{i}(input).Select(x => Convert(x));\n        }}\n\n"
        f"        public sealed class Part{i} : Base, IStep\n"
        f"        {{\n            public Part{i}() {{ }}\n        }}\n\n"
        for i in range(400)
    ]
    source = (
        "using System;\n\nnamespace Big\n{\n    public class Big\n    {\n" + "".join(members) + "    }\n}\n"
    )
    started = time.perf_counter()
    parsed = parse(source)
    elapsed_s = time.perf_counter() - started
    assert len(parsed.definitions) == 1 + 3 * 400
    assert sum(r.kind == "call" for r in parsed.references) == 5 * 400
    assert sum(r.kind == "implements" for r in parsed.references) == 400
    assert elapsed_s < 20  # a loose ceiling; measured figures are in the report


def test_overloads_are_symbols_of_their_own() -> None:
    source = "class C {\n  void F(int a) {}\n  void F(string s) {}\n}\n"
    assert [(d.name, d.qualified_name) for d in parse(source).definitions] == [
        ("C", "C"),
        ("F", "C.F"),
        ("F", "C.F(string s)"),
    ]
