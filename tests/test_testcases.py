"""Test cases as each framework collects them (``parse.testcases``), the command that runs one
(``rank.runners``), and the change's own symbols and signature changes (``rank.changes``)."""

from __future__ import annotations

import json

import pytest

from knowing_pr.graph.paths import is_test_path
from knowing_pr.model import Node
from knowing_pr.parse.testcases import find_test_cases
from knowing_pr.rank.changes import breaks_callers, changed_in_file, signature_changes
from knowing_pr.rank.runners import RepoFiles, run_command, run_file_command


def cases(path: str, language: str, source: str) -> list[tuple[tuple[str, ...], int]]:
    found, _ = find_test_cases(path, language, source.encode())
    return [(case.parts, case.start_line) for case in found]


def test_pytest_and_unittest_cases() -> None:
    source = """import unittest

@pytest.mark.slow
def test_top(client, db):
    pass

def helper():
    pass

class TestThing:
    def test_a(self):
        pass
    def not_a_test(self):
        pass
    class TestNested:
        def test_b(self):
            pass

class Plain:
    def test_ignored(self):
        pass

class Legacy(unittest.TestCase):
    def setUp(self):
        pass
    def test_c(self):
        pass
"""
    found, groups = find_test_cases("tests/test_x.py", "python", source.encode())
    assert [(c.parts, c.start_line) for c in found] == [
        (("test_top",), 3),
        (("TestThing", "test_a"), 11),
        (("TestThing", "TestNested", "test_b"), 16),
        (("Legacy", "test_c"), 26),
    ]
    assert found[0].params == ("client", "db")
    legacy = next(g for g in groups if g.parts == ("Legacy",))
    assert legacy.hooks == ((24, 25),)
    # pytest reads a conftest.py for its fixtures and hooks and never collects a test from it
    assert find_test_cases("tests/conftest.py", "python", source.encode()) == ([], [])
    assert find_test_cases("conftest.py", "python", source.encode()) == ([], [])


def test_go_tests_benchmarks_and_fuzz_only_in_test_files() -> None:
    source = """package chi

func TestMux(t *testing.T) {}
func BenchmarkMux(b *testing.B) {}
func FuzzMux(f *testing.F) {}
func Testimony(t *testing.T) {}
func TestHelper() {}
func helper(t *testing.T) {}
"""
    assert cases("mux_test.go", "go", source) == [
        (("TestMux",), 3),
        (("BenchmarkMux",), 4),
        (("FuzzMux",), 5),
    ]
    assert cases("mux.go", "go", source) == []


def test_rust_test_attributes_and_module_path() -> None:
    source = """fn helper() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_works() {}

    #[tokio::test]
    async fn it_awaits() {}

    #[test]
    #[should_panic]
    fn it_panics() {}

    fn not_a_test() {}
}
"""
    assert cases("src/lib.rs", "rust", source) == [
        (("tests", "it_works"), 7),
        (("tests", "it_awaits"), 10),
        (("tests", "it_panics"), 13),
    ]


def test_javascript_blocks_by_title_inside_describes_and_hooks() -> None:
    source = """describe('Axios', () => {
  beforeEach(() => { setup(); });
  it('builds a url', () => { expect(buildURL('a')).toBe('a'); });
  it.skip('is skipped', () => {});
  test.each([1, 2])('runs %s', (n) => {});
  describe.skip('skipped group', () => { it('inside', () => {}); });
  it(dynamicTitle, () => {});
});
test(`top level`, async () => {});
"""
    found, groups = find_test_cases("a.test.js", "javascript", source.encode())
    assert [(c.parts, c.start_line) for c in found] == [
        (("Axios", "builds a url"), 3),
        (("Axios", "runs %s"), 5),
        (("top level",), 9),
    ]
    assert groups[0].parts == ("Axios",) and groups[0].hooks == ((2, 2),)


def test_java_csharp_and_ruby_cases() -> None:
    java = """package org.example;
class FooTest {
  @Test void plain() {}
  @ParameterizedTest @ValueSource(ints = {1}) void param(int x) {}
  @BeforeEach void setUp() {}
  void helper() {}
}
class OldTest extends TestCase {
  public void testLegacy() {}
}
"""
    found, _ = find_test_cases("src/test/java/org/example/FooTest.java", "java", java.encode())
    assert [(c.parts, c.namespace) for c in found] == [
        (("FooTest", "plain"), "org.example"),
        (("FooTest", "param"), "org.example"),
        (("OldTest", "testLegacy"), "org.example"),
    ]
    csharp = """namespace Polly.Tests;
public class RetryTests {
    [Fact] public void Retries() {}
    [Theory, InlineData(1)] public void Many(int n) {}
    [SetUp] public void Init() {}
    public void Helper() {}
}
"""
    found, _ = find_test_cases("test/RetryTests.cs", "csharp", csharp.encode())
    assert [(c.parts, c.namespace) for c in found] == [
        (("RetryTests", "Retries"), "Polly.Tests"),
        (("RetryTests", "Many"), "Polly.Tests"),
    ]
    ruby = """describe Rack::Request do
  before do
    @req = make
  end
  it "reads the body" do
    @req.body
  end
  def test_old_style
  end
end
"""
    assert cases("spec/request_spec.rb", "ruby", ruby) == [
        (("Rack::Request", "reads the body"), 5),
        (("Rack::Request", "test_old_style"), 8),
    ]


def files_of(tree: dict[str, str]) -> RepoFiles:
    def lister(directory: str) -> list[str]:
        prefix = f"{directory}/" if directory else ""
        return [p[len(prefix) :] for p in tree if p.startswith(prefix) and "/" not in p[len(prefix) :]]

    return RepoFiles(lister=lister, reader=lambda path: tree[path].encode() if path in tree else None)


def command(path: str, language: str, source: str, tree: dict[str, str], index: int = 0) -> str:
    found, _ = find_test_cases(path, language, source.encode())
    return run_command(found[index], path, files_of(tree)).command


@pytest.mark.parametrize(
    ("path", "language", "source", "tree", "expected"),
    [
        (
            "tests/test_x.py", "python", "class TestA:\n    def test_b(self):\n        pass\n", {},
            "pytest tests/test_x.py::TestA::test_b",
        ),
        (
            "sub/pkg/x_test.go", "go", "package pkg\nfunc TestX(t *testing.T) {}\n", {"sub/go.mod": "module m"},
            "cd sub && go test ./pkg -run '^TestX$'",
        ),
        (
            "crates/core/tests/cli.rs", "rust", "#[test]\nfn parses() {}\n",
            {"crates/core/Cargo.toml": '[package]\nname = "core"\n'},
            "cargo test -p core --test cli parses",
        ),
        (
            "packages/server/src/a.test.ts", "typescript", "describe('a', () => { it('b (c)', () => {}) })\n",
            {"package.json": json.dumps({"scripts": {"test": "vitest"}})},
            "npx vitest run packages/server/src/a.test.ts -t 'a b \\(c\\)'",
        ),
        (
            "test/unit/a.js", "javascript", "it('works', () => {})\n",
            {"package.json": json.dumps({"scripts": {"test:unit": "mocha test/unit/**/*.js", "test:e2e": "jest"}})},
            "npx mocha test/unit/a.js --grep works",
        ),
        (
            "gson/src/test/java/a/FooTest.java", "java", "package a;\nclass FooTest { @Test void x() {} }\n",
            {"gson/pom.xml": "<project/>", "pom.xml": "<project/>"},
            "mvn test -pl gson -Dtest='FooTest#x'",
        ),
        (
            "test/A.Tests/ATests.cs", "csharp", "namespace A;\nclass ATests { [Fact] void X() {} }\n",
            {"test/A.Tests/A.Tests.csproj": "<Project/>"},
            "dotnet test test/A.Tests/A.Tests.csproj --filter 'FullyQualifiedName~ATests.X'",
        ),
        (
            "test/spec_a.rb", "ruby", "describe A do\n  it 'reads a.b' do\n  end\nend\n", {"Gemfile": ""},
            "bundle exec ruby -Ilib -Itest test/spec_a.rb -n '/reads a\\.b/'",
        ),
    ],
)  # fmt: skip
def test_each_framework_gets_a_command_that_runs_just_that_test(
    path: str, language: str, source: str, tree: dict[str, str], expected: str
) -> None:
    assert command(path, language, source, tree) == expected


@pytest.mark.parametrize(
    ("path", "tree", "expected"),
    [
        ("tests/test_x.py", {}, "pytest tests/test_x.py"),
        ("sub/pkg/x_test.go", {"sub/go.mod": "module m"}, "cd sub && go test ./pkg"),
        ("crates/core/tests/cli.rs", {"crates/core/Cargo.toml": '[package]\nname = "core"\n'}, "cargo test -p core --test cli"),
        ("src/walk/mod.rs", {"Cargo.toml": '[package]\nname = "fd"\n'}, "cargo test -p fd walk::"),
        ("web/a.test.ts", {"package.json": json.dumps({"scripts": {"test": "vitest"}})}, "npx vitest run web/a.test.ts"),
        ("test/a.spec.js", {"package.json": json.dumps({"devDependencies": {"karma": "1"}}), "karma.conf.cjs": ""}, "npx karma start karma.conf.cjs --single-run"),
        ("gson/src/test/java/a/FooTest.java", {"gson/pom.xml": "<project/>"}, "mvn test -pl gson -Dtest=FooTest"),
        ("lib/src/test/java/a/FooTest.java", {"lib/build.gradle": ""}, "./gradlew :lib:test --tests FooTest"),
        ("test/A.Tests/ATests.cs", {"test/A.Tests/A.Tests.csproj": "<Project/>"}, "dotnet test test/A.Tests/A.Tests.csproj --filter 'FullyQualifiedName~ATests'"),
        ("spec/a_spec.rb", {"Gemfile": ""}, "bundle exec rspec spec/a_spec.rb"),
    ],
)  # fmt: skip
def test_a_whole_test_file_gets_a_command_that_runs_the_file(
    path: str, tree: dict[str, str], expected: str
) -> None:
    run = run_file_command(path, files_of(tree))
    assert (run.name, run.command) == (path, expected)


def node(name: str, kind: str, start: int, end: int, path: str = "m.py") -> Node:
    qualified = "m" if kind == "module" else f"m.{name}"
    return Node(f"{name}-{kind}", path, name, qualified, kind, "python", start, end, "", "", "h")


def test_the_changes_own_symbols_are_the_innermost_definitions() -> None:
    text = [
        "import os",  # 1
        "",  # 2
        "class C:",  # 3
        "    x = 1",  # 4
        "",  # 5
        "    @property",  # 6
        "    def m(self):",  # 7
        "        return 1",  # 8
        "",  # 9
        "    def n(self):",  # 10
        "        return 2",  # 11
        "",  # 12
        "LIMIT = compute()",  # 13
    ]
    nodes = [
        node("m", "module", 1, 13),
        node("C", "class", 3, 11),
        node("C.m", "method", 7, 8),
        node("C.n", "method", 10, 11),
    ]
    assert changed_in_file(nodes, [(8, 8)], (), text).ids == ("C.m-method",)
    assert changed_in_file(nodes, [(6, 6)], (), text).ids == (
        "C.m-method",
    )  # a decorator is its definition's
    assert changed_in_file(nodes, [(4, 4)], (), text).ids == ("C-class",)
    assert changed_in_file(nodes, [(9, 9)], (), text).ids == ()  # a blank line alone is no change of C
    assert changed_in_file(nodes, [(1, 1), (8, 8)], (), text).ids == ("C.m-method",)  # an import is no code
    assert changed_in_file(nodes, [(1, 1)], (), text).ids == ("m-module",)  # unless nothing else changed
    assert changed_in_file(nodes, [(13, 13)], (), text).module_changed
    assert changed_in_file(nodes, [], (10,), text).ids == ("C.n-method",)  # lines deleted inside n
    assert changed_in_file(nodes, [], (9,), text).ids == ("C-class",)  # between m and n: C's own lines
    # lines deleted at module level: an import or a statement (no definition went with them) is the
    # module's code when nothing else changed; a definition deleted there is *removed* instead
    assert changed_in_file(nodes, [], (1,), text, (1,)).ids == ("m-module",)
    assert changed_in_file(nodes, [], (1,), text, ()).ids == ()
    assert changed_in_file(nodes, [(8, 8)], (1,), text, (1,)).ids == ("C.m-method",)


@pytest.mark.parametrize(
    ("before", "after", "name", "kind", "expected"),
    [
        ("function f(a, b)", "function f(a, b, c)", "f", "function", ("parameters",)),
        ("def f( self,  # the x\n x, )", "def f(self, x)", "f", "method", ()),
        ("func (m *Mux) Route(p string) Router", "func (m *Mux) Route(p string) *Mux", "Route", "method", ("return type",)),
        ("fn arg(self) -> Self", "pub fn arg(self) -> Self", "arg", "method", ("visibility",)),
        ("public static String trim(String s)", "public static CharSequence trim(String s)", "trim", "method", ("return type",)),
        ("def f(a)", "async def f(a)", "f", "function", ("signature",)),
        ("class C(B)", "class C(B, D)", "C", "class", ("declaration",)),
    ],
)  # fmt: skip
def test_signature_changes_name_what_changed(
    before: str, after: str, name: str, kind: str, expected: tuple[str, ...]
) -> None:
    assert signature_changes(before, after, name, kind) == expected


@pytest.mark.parametrize(
    ("before", "after", "breaks"),
    [
        ("function f(a, b)", "function f(a, b, c)", True),
        ("function f(a: string)", "function f(a: string, options?: Options)", False),
        ("def f(a)", "def f(a, b=1)", False),
        ("def f(a)", "def f(a, *, b)", True),
        ("def f(a, b)", "def f(a)", True),
        ("def f(a) -> int", "def f(a) -> str", False),
        ("pub fn f(a: u8)", "fn f(a: u8)", True),
    ],
)
def test_a_signature_change_breaks_callers_unless_it_only_adds_optional_parameters(
    before: str, after: str, breaks: bool
) -> None:
    assert breaks_callers(before, after, "f", "function") is breaks


def test_a_file_named_test_is_a_test_file() -> None:
    assert is_test_path("src/constructFrom/test.ts") and is_test_path("app/tests.py")
    assert not is_test_path("src/contest.ts")


def test_vitest_conditional_cases_run() -> None:
    """``test.runIf(cond)(…)``/``describe.skipIf(cond)(…)`` run when their condition says so: the
    file holds tests (vite's playground specs run some only in build mode)."""
    source = """import { describe, expect, test } from 'vitest'

test.runIf(isBuild)('no minifySyntax', () => {
  expect(1).toBe(1)
})

describe.skipIf(isWindows)('paths', () => {
  test('posix', () => {})
})
"""
    assert cases("playground/minify/__tests__/minify.spec.ts", "typescript", source) == [
        (("no minifySyntax",), 3),
        (("paths", "posix"), 8),
    ]


def test_a_title_with_placeholders_runs_the_cases_it_stands_for() -> None:
    """``test.each(…)('handles $label values')`` runs as "handles undefined values", ``describe.each``
    titles hold ``%s``, a Ruby title ``#{…}``: the command matched the placeholder itself, no test."""
    import re
    import shlex

    vitest = {"package.json": json.dumps({"scripts": {"test": "vitest"}})}
    each = "describe('client', () => {\n  test.each([{ label: 'undefined' }])('handles $label values', () => {})\n})\n"
    words = shlex.split(command("a.test.ts", "typescript", each, vitest))
    pattern = words[words.index("-t") + 1]
    assert re.search(pattern, "client handles undefined values")
    assert not re.search(pattern, "client handles values")
    printf = "describe.each(['a'])('with keyPrefix: %s', () => {\n  it('uses it', () => {})\n})\n"
    words = shlex.split(command("b.test.ts", "typescript", printf, vitest))
    assert re.search(words[words.index("-t") + 1], "with keyPrefix: a uses it")
    ruby = 'class T < Minitest::Test\n  it "is set #{global ? "globally" : "by config"}" do\n  end\nend\n'
    words = shlex.split(command("test/t_test.rb", "ruby", ruby, {}))
    selector = words[words.index("-n") + 1]
    assert selector.startswith("/") and re.search(selector.strip("/"), "is set globally")
    percent = "test.each([[1]])('keeps 100%% of %d', () => {})\n"
    words = shlex.split(command("c.test.ts", "typescript", percent, vitest))
    pattern = words[words.index("-t") + 1]  # ``%%`` prints ``%``: a literal, not a placeholder
    assert re.search(pattern, "keeps 100% of 1") and not re.search(pattern, "keeps 100 of 1")
    # a title that is not an ``each`` one keeps its ``%%`` (Jest's plain titles, mocha, minitest)
    plain = [
        ("c.test.ts", "typescript", vitest, "-t", "test('keeps 100%% of it', () => {})\n"),
        (
            "test/t_test.rb",
            "ruby",
            {},
            "-n",
            'class T < Minitest::Test\n  it "keeps 100%% of it" do\n  end\nend\n',
        ),
    ]
    for path, language, config, flag, source in plain:
        words = shlex.split(command(path, language, source, config))
        pattern = words[words.index(flag) + 1].strip("/")
        assert re.search(pattern, "keeps 100%% of it") and re.search(pattern, "keeps 100% of it")
        assert not re.search(pattern, "keeps 100 of it")


def test_a_skipped_java_or_csharp_test_is_no_test_to_run() -> None:
    """gson listed seven ``@Ignore``'d tests with a command that runs nothing."""
    java = (
        "class ATest {\n"
        "  @Test public void runs() {}\n"
        '  @Ignore("flaky")\n  @Test public void ignored() {}\n'
        "  @Disabled @Test void disabled() {}\n"
        "  @DisabledOnOs(OS.WINDOWS) @Test void elsewhere() {}\n"
        "  @Test(enabled = false) public void off() {}\n"
        "}\n"
        "@Disabled\nclass BTest {\n  @Test void quiet() {}\n}\n"
    )
    assert [parts for parts, _ in cases("src/test/java/ATest.java", "java", java)] == [
        ("ATest", "runs"),
        ("ATest", "elsewhere"),
    ]
    csharp = (
        "public class Tests {\n"
        "  [Fact] public void Runs() {}\n"
        '  [Fact(Skip = "later")] public void Skipped() {}\n'
        '  [Test, Ignore("x")] public void Ignored() {}\n'
        "  [Theory] [InlineData(1)] public void Data(int x) {}\n"
        '  [Theory] [InlineData(1)] [InlineData(2, Skip = "one row")] public void Rows(int x) {}\n'
        "}\n"
    )
    # a skipped data row leaves the theory's other rows to run
    assert [parts for parts, _ in cases("tests/Tests.cs", "csharp", csharp)] == [
        ("Tests", "Runs"),
        ("Tests", "Data"),
        ("Tests", "Rows"),
    ]


def test_a_skip_named_inside_a_string_or_a_skipped_outer_class() -> None:
    """``Skip =`` or ``enabled = false`` written inside a string or a comment is no argument (the
    test runs); a JUnit ``@Nested`` class inside a ``@Disabled`` class runs none of its tests, while
    a C# class nested in an ``[Ignore]`` class is a fixture of its own and runs its tests."""
    java = (
        "class ATest {\n"
        '  @Test(description = "enabled = false is the default") void described() {}\n'
        '  @Test(/* enabled = false later */ groups = "x") void noted() {}\n'
        "}\n"
        "@Disabled\nclass OTest {\n  @Nested class Inner {\n    @Test void b() {}\n  }\n}\n"
    )
    assert [parts for parts, _ in cases("src/test/java/ATest.java", "java", java)] == [
        ("ATest", "described"),
        ("ATest", "noted"),
    ]
    csharp = (
        "public class Tests {\n"
        '  [Fact(DisplayName = "Skip = no")] public void Named() {}\n'
        "  [Fact(/* Skip = maybe */)] public void Noted() {}\n"
        "}\n"
        '[Ignore("later")]\npublic class Off {\n  [Test] public void A() {}\n'
        "  public class Inner {\n    [Test] public void B() {}\n  }\n}\n"
    )
    assert [parts for parts, _ in cases("tests/Tests.cs", "csharp", csharp)] == [
        ("Tests", "Named"),
        ("Tests", "Noted"),
        ("Off", "Inner", "B"),
    ]
