"""A file's source + a line + a test's name → whether the test framework would run a test case there,
by the frameworks' own collection rules, written independently of knowing-pr's parser.

Used by ``bench/answer_bench.py`` to judge the entries of "Tests to run". Nothing here imports
knowing-pr or tree-sitter: Python goes through the standard ``ast`` module, the other languages
through line patterns of the frameworks' documented rules:

- **pytest / unittest** (pytest's defaults ``python_functions = test*``, ``python_classes =
  Test*``; unittest: ``test*`` methods of a ``TestCase`` subclass): a ``def``/``async def``
  named ``test*`` at the line (or whose first decorator is there), at module level or in classes
  that are all named ``Test*`` or derive from something named ``…TestCase``/``…Test``;
- **go test** (``go help testfunc``): in a ``_test.go`` file, ``func TestXxx(t *testing.T)``,
  ``BenchmarkXxx(b *testing.B)`` or ``FuzzXxx(f *testing.F)`` where ``Xxx`` does not start with a
  lower-case letter;
- **cargo test**: a ``fn`` under a ``#[test]`` attribute (or ``#[tokio::test]``, ``#[rstest]``,
  ``#[test_case(…)]``) within the few lines at and after the entry's line;
- **Jest / Vitest / Mocha / Jasmine / node:test**: an ``it(``/``test(``/``specify(`` call (with
  ``.only``, ``.concurrent``, ``.each(…)``) whose literal title is the entry's last name part;
- **JUnit / TestNG**: ``@Test``, ``@ParameterizedTest``, ``@RepeatedTest``, ``@TestFactory`` or
  ``@TestTemplate`` between the entry's line and the method's name; JUnit 3: a ``public void
  test…()`` method;
- **NUnit / xUnit / MSTest**: ``[Test]``, ``[TestCase…]``, ``[TestCaseSource…]``, ``[Fact]``,
  ``[Theory]``, ``[TestMethod]``, ``[DataTestMethod]`` between the entry's line and the method name;
- **RSpec / minitest / test-unit**: an ``it``/``specify``/``example``/``scenario``/``test`` block
  with a literal title, or ``def test_…``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

__all__ = ["is_test_case"]

_GO = re.compile(r"^func\s+(Test|Benchmark|Fuzz)([^a-z(]\w*)?\s*\(\s*\w+\s+\*testing\.[TBF]\s*\)")
_RUST_ATTR = re.compile(r"#\[\s*(?:[\w:]*::)?(?:test|rstest|test_case|quickcheck)\b")
_JS = re.compile(
    r"\b(?:it|test|specify)(?:\.only|\.concurrent|\.each\s*\(.*?\)|\.failing)*\s*\(\s*(['\"`])(.*)"
)
_JAVA = re.compile(
    r"@(?:org\.junit[\w.]*\.)?(?:Test|ParameterizedTest|RepeatedTest|TestFactory|TestTemplate)\b"
)
_DOTNET = re.compile(
    r"\[\s*(?:[\w.]+\.)?(?:Test|TestCase|TestCaseSource|Fact|Theory|TestMethod|DataTestMethod)\b"
)
_RUBY = re.compile(r"^\s*(?:it|specify|example|scenario|test)\s*\(?\s*(['\"])")
_RUBY_DEF = re.compile(r"^\s*def\s+test_\w*")


def _python(source: str, line: int) -> bool:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False

    def walk(body: Sequence[ast.stmt], classes: tuple[ast.ClassDef, ...]) -> bool:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                if line in (node.lineno, first) and node.name.startswith("test"):
                    return all(_collected_class(c) for c in classes)
            elif isinstance(node, ast.ClassDef) and walk(node.body, (*classes, node)):
                return True
        return False

    return walk(tree.body, ())


def _collected_class(node: ast.ClassDef) -> bool:
    if node.name.startswith("Test"):
        return not any(isinstance(b, ast.FunctionDef) and b.name == "__init__" for b in node.body)
    bases = [ast.unparse(base).rsplit(".", 1)[-1] for base in node.bases]
    return any(base.endswith(("TestCase", "Test")) for base in bases)


def _window(lines: Sequence[str], line: int, size: int = 12) -> list[str]:
    return list(lines[max(line - 1, 0) : line - 1 + size])


def _method_window(lines: Sequence[str], line: int, method: str) -> str:
    """The text from ``line`` to the line that names ``method(`` (annotations and attributes)."""
    collected: list[str] = []
    for text in _window(lines, line, 20):
        collected.append(text)
        if re.search(rf"\b{re.escape(method)}\s*\(", text):
            return "\n".join(collected)
    return ""


def is_test_case(path: str, language: str, source: str, line: int, name: str) -> bool:
    """Whether a test case named ``name`` (its last part after ``::``, ``.``, `` > `` or a space
    is the case itself) starts at ``line`` of ``path``, by the rules in the module docstring."""
    lines = source.splitlines()
    if not 1 <= line <= len(lines):
        return False
    text = lines[line - 1]
    last = re.split(r"::| > ", name)[-1]
    if language == "python":
        return _python(source, line)
    if language == "go":
        return path.endswith("_test.go") and bool(_GO.match(text.strip()))
    if language == "rust":
        window = _window(lines, line, 8)
        fn_at = next((i for i, t in enumerate(window) if re.search(rf"\bfn\s+{re.escape(last)}\b", t)), None)
        return fn_at is not None and any(_RUST_ATTR.search(t) for t in window[: fn_at + 1])
    if language in ("javascript", "typescript", "tsx"):
        joined = " ".join(t.strip() for t in _window(lines, line, 3))
        found = _JS.search(joined)
        return bool(found) and found.group(2).startswith(last[: max(len(last) - 1, 1)])
    if language == "java":
        method = last.rsplit(".", 1)[-1]
        window = _method_window(lines, line, method)
        legacy = re.search(rf"public\s+void\s+{re.escape(method)}\s*\(", window) and method.startswith("test")
        return bool(window) and (bool(_JAVA.search(window)) or bool(legacy))
    if language == "csharp":
        method = last.rsplit(".", 1)[-1]
        window = _method_window(lines, line, method)
        return bool(window) and bool(_DOTNET.search(window))
    if language == "ruby":
        return bool(_RUBY.match(text) or _RUBY_DEF.match(text))
    return False
