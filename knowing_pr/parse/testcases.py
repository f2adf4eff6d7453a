"""A test file's source → the test cases its framework runs, and the groups that hold them.

What each framework collects, read from the syntax tree (tree-sitter, no query files):

- Python (pytest, unittest): module-level ``test*`` functions; methods ``test*`` of classes named
  ``Test*`` or deriving from a ``…TestCase``, nested ``Test*`` classes included; none in a
  ``conftest.py``;
- Go: ``func TestXxx(t *testing.T)``, ``BenchmarkXxx(b *testing.B)``, ``FuzzXxx(f *testing.F)``;
- Rust: functions under a ``#[test]``-like attribute (``#[test]``, ``#[tokio::test]``,
  ``#[rstest]``, ``#[test_case(…)]``), with the inline ``mod`` path around them;
- JavaScript / TypeScript (Jest, Vitest, Mocha, Jasmine, node:test): ``it``/``test``/``specify``
  calls with a literal title (``.only``, ``.each(…)``, ``.concurrent``, Vitest's ``.runIf(…)``
  and ``.skipIf(…)`` too; ``.skip``,
  ``.todo``, ``xit`` do not run), inside ``describe``/``context``/``suite`` titles;
- Java (JUnit 3–5, TestNG): methods annotated ``@Test``, ``@ParameterizedTest``,
  ``@RepeatedTest``, ``@TestFactory``, ``@TestTemplate``; ``public void test*`` methods of a
  class extending ``TestCase``; not those marked ``@Ignore``/``@Disabled`` (or in a class so
  marked) or ``@Test(enabled = false)``;
- C# (NUnit, xUnit, MSTest): methods with ``[Test]``, ``[TestCase…]``, ``[Fact]``, ``[Theory]``,
  ``[TestMethod]``, ``[DataTestMethod]``…; not those with ``[Ignore]`` or ``Skip = "…"``;
- Ruby (RSpec, minitest, test-unit): ``it``/``specify``/``example``/``scenario`` blocks with a
  literal title inside ``describe``/``context`` blocks; ``def test_*`` methods.

A ``TestGroup`` is a class or ``describe`` block: lines of it outside every case (``setUp``,
``beforeEach``, fixtures declared on the class) run for each case inside.

One module over the style's ~400 lines: a walker per framework family over the same
``TestCase``/``TestGroup`` records, read side by side when a framework's rules change.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node as SyntaxNode

from knowing_pr.parse.treesitter import get_parser, line_of, node_text

__all__ = [
    "TEST_CASE_LANGUAGES",
    "TestCase",
    "TestGroup",
    "decode_test_cases",
    "encode_test_cases",
    "find_test_cases",
    "test_cases_in",
]


@dataclass(frozen=True, slots=True)
class TestCase:
    """One test case: its title path (outer groups first, the case last), lines and framework
    family (``pytest``, ``go``, ``rust``, ``js``, ``junit``, ``dotnet``, ``rspec``, ``minitest``).

    ``params``: a Python test's parameter names (pytest fixtures); ``namespace``: the Java package
    or C# namespace; ``mods``: a Rust test's inline module path."""

    __test__ = False  # not a pytest test class

    parts: tuple[str, ...]
    start_line: int
    end_line: int
    family: str
    params: tuple[str, ...] = ()
    namespace: str = ""
    is_title: bool = False


@dataclass(frozen=True, slots=True)
class TestGroup:
    """A class or ``describe`` block around test cases (the whole file for top-level hooks), with
    the spans of the setup hooks that run before each of its cases (``setUp``, ``beforeEach``,
    ``before do``, ``@BeforeEach``, ``[SetUp]`` …)."""

    __test__ = False  # not a pytest test class

    parts: tuple[str, ...]
    start_line: int
    end_line: int
    hooks: tuple[tuple[int, int], ...] = ()


#: spans of setup hooks (``beforeEach``, ``setUp`` …) a walker finds
Hooks = list[tuple[int, int]]

_MAX_DEPTH = 400
_JS_CASES = frozenset({"it", "test", "specify", "fit"})
_JS_GROUPS = frozenset({"describe", "context", "suite", "fdescribe"})
#: Vitest's ``test.runIf(cond)(…)`` and ``test.skipIf(cond)(…)`` run when their condition says so
_JS_RUNNING_MODIFIERS = frozenset({"only", "concurrent", "each", "serial", "failing", "runIf", "skipIf"})
_RUBY_CASES = frozenset({"it", "specify", "example", "scenario", "its", "test"})
_RUBY_GROUPS = frozenset({"describe", "context", "feature", "shared_examples", "shared_examples_for"})
_JAVA_TESTS = frozenset({"Test", "ParameterizedTest", "RepeatedTest", "TestFactory", "TestTemplate"})
_DOTNET_TESTS = frozenset(
    {"Test", "TestCase", "TestCaseSource", "Theory", "Fact", "TestMethod", "DataTestMethod", "SkippableFact"}
)
#: a JUnit 4 ``@Ignore`` / JUnit 5 ``@Disabled`` method or class is not run (``@DisabledIf…`` decide
#: when the test runs: those stay); NUnit/MSTest ``[Ignore]`` the same
_SKIP_MARKS = frozenset({"Ignore", "Disabled"})
#: TestNG's ``@Test(enabled = false)``, xUnit's ``[Fact(Skip = "…")]`` / ``[Theory(Skip = "…")]``
_SKIP_ARGUMENT = re.compile(r"\benabled\s*=\s*false\b|\bSkip\s*=")
_GO_TEST = re.compile(r"^(Test|Benchmark|Fuzz)([^a-z]|$)")
_RUST_TEST_ATTR = re.compile(r"^#\[\s*(?:[\w:]*::)?(?:test|rstest|test_case|quickcheck)\b")


def find_test_cases(path: str, language: str, source: bytes) -> tuple[list[TestCase], list[TestGroup]]:
    """The test cases of one file and their groups, in source order (empty for other files)."""
    if language not in _WALKERS:
        return [], []
    return test_cases_in(get_parser(language).parse(source).root_node, path, language, source)


def encode_test_cases(cases: list[TestCase], groups: list[TestGroup]) -> str:
    """Cases and groups as compact JSON, as the index keeps them (``decode_test_cases``)."""
    return json.dumps(
        [
            [
                [list(c.parts), c.start_line, c.end_line, c.family, list(c.params), c.namespace, c.is_title]
                for c in cases
            ],
            [[list(g.parts), g.start_line, g.end_line, [list(h) for h in g.hooks]] for g in groups],
        ],
        separators=(",", ":"),
        ensure_ascii=False,
    )


def decode_test_cases(data: str) -> tuple[list[TestCase], list[TestGroup]]:
    """``encode_test_cases``' text → the same cases and groups."""
    cases, groups = json.loads(data)
    return (
        [
            TestCase(tuple(parts), start, end, family, tuple(params), namespace, bool(is_title))
            for parts, start, end, family, params, namespace, is_title in cases
        ],
        [
            TestGroup(tuple(parts), start, end, tuple((int(a), int(b)) for a, b in hooks))
            for parts, start, end, hooks in groups
        ],
    )


def test_cases_in(
    root: SyntaxNode, path: str, language: str, source: bytes
) -> tuple[list[TestCase], list[TestGroup]]:
    """``find_test_cases`` over a syntax tree already parsed from ``source`` (the index's own:
    ``index.parse.keeps_test_cases`` names the files)."""
    walker = _WALKERS.get(language)
    if walker is None:
        return [], []
    cases: list[TestCase] = []
    groups: list[TestGroup] = []
    hooks: Hooks = []
    walker(root, source, path, cases, groups, hooks)
    return cases, _with_hooks(groups, sorted(hooks), int(root.end_point[0]) + 1)


def _with_hooks(groups: list[TestGroup], hooks: list[tuple[int, int]], last_line: int) -> list[TestGroup]:
    """Each hook span given to the innermost group holding it (a file-level group for the rest)."""
    owned: dict[int, list[tuple[int, int]]] = {}
    loose: list[tuple[int, int]] = []
    for start, end in hooks:
        holders = [i for i, g in enumerate(groups) if g.start_line <= start and end <= g.end_line]
        if holders:
            owner = min(holders, key=lambda i: groups[i].end_line - groups[i].start_line)
            owned.setdefault(owner, []).append((start, end))
        else:
            loose.append((start, end))
    out = [
        TestGroup(g.parts, g.start_line, g.end_line, tuple(owned.get(i, ()))) for i, g in enumerate(groups)
    ]
    if loose:
        out.insert(0, TestGroup((), 1, last_line, tuple(loose)))
    return out


_HOOK_CALLS = frozenset(
    {"beforeEach", "beforeAll", "before", "setup", "suiteSetup", "prepend_before", "let", "let!", "subject"}
)
_HOOK_METHODS = frozenset(
    {
        "setUp",
        "setUpClass",
        "asyncSetUp",
        "setup_method",
        "setup_class",
        "setup",
        "setup_module",
        "setup_function",
    }
)
_HOOK_ANNOTATIONS = frozenset(
    {
        "Before",
        "BeforeEach",
        "BeforeAll",
        "BeforeClass",
        "SetUp",
        "OneTimeSetUp",
        "TestInitialize",
        "ClassInitialize",
    }
)


def _span(node: SyntaxNode) -> tuple[int, int]:
    return line_of(node), int(node.end_point[0]) + 1


def _children(node: SyntaxNode, kind: str) -> Iterator[SyntaxNode]:
    return (child for child in node.named_children if child.type == kind)


# ---------------------------------------------------------------- Python


def _python(
    root: SyntaxNode, source: bytes, path: str, cases: list[TestCase], groups: list[TestGroup], hooks: Hooks
) -> None:
    if path.rpartition("/")[2] == "conftest.py":
        return  # pytest reads a conftest for its fixtures and hooks, never collects tests from it
    _python_block(root, source, (), cases, groups, hooks)


def _python_definition(node: SyntaxNode) -> tuple[SyntaxNode, SyntaxNode]:
    """(the definition, the node whose span counts: the decorated definition when decorated)."""
    if node.type == "decorated_definition":
        inner = node.child_by_field_name("definition")
        if inner is not None:
            return inner, node
    return node, node


def _python_block(
    block: SyntaxNode,
    source: bytes,
    outer: tuple[str, ...],
    cases: list[TestCase],
    groups: list[TestGroup],
    hooks: Hooks,
) -> None:
    for child in block.named_children:
        definition, spanned = _python_definition(child)
        name = node_text(definition.child_by_field_name("name"), source)
        if definition.type == "function_definition" and name in _HOOK_METHODS:
            hooks.append(_span(spanned))
        elif definition.type == "function_definition" and name.startswith("test"):
            params = _python_params(definition, source)
            start, end = _span(spanned)
            cases.append(TestCase((*outer, name), start, end, "pytest", params=params))
        elif definition.type == "class_definition" and len(outer) < _MAX_DEPTH:
            bases = node_text(definition.child_by_field_name("superclasses"), source)
            if not (name.startswith("Test") or "TestCase" in bases or "Test" in bases.split(".")[-1]):
                continue
            body = definition.child_by_field_name("body")
            if body is None:
                continue
            start, end = _span(spanned)
            groups.append(TestGroup((*outer, name), start, end))
            _python_block(body, source, (*outer, name), cases, groups, hooks)


def _python_params(definition: SyntaxNode, source: bytes) -> tuple[str, ...]:
    params = definition.child_by_field_name("parameters")
    names: list[str] = []
    for param in params.named_children if params is not None else ():
        target = (
            param
            if param.type == "identifier"
            else param.child_by_field_name("name")
            or (param.named_children[0] if param.named_children else None)
        )
        text = node_text(target, source)
        if text and text not in ("self", "cls") and text.isidentifier():
            names.append(text)
    return tuple(names)


# ---------------------------------------------------------------- Go


def _go(
    root: SyntaxNode, source: bytes, path: str, cases: list[TestCase], groups: list[TestGroup], hooks: Hooks
) -> None:
    if not path.endswith("_test.go"):
        return
    for child in _children(root, "function_declaration"):
        name = node_text(child.child_by_field_name("name"), source)
        params = node_text(child.child_by_field_name("parameters"), source)
        if _GO_TEST.match(name) and "testing." in params:
            start, end = _span(child)
            cases.append(TestCase((name,), start, end, "go"))


# ---------------------------------------------------------------- Rust


def _rust(
    root: SyntaxNode, source: bytes, path: str, cases: list[TestCase], groups: list[TestGroup], hooks: Hooks
) -> None:
    stack: list[tuple[SyntaxNode, tuple[str, ...]]] = [(root, ())]
    while stack:
        container, mods = stack.pop()
        attributes: list[SyntaxNode] = []
        for child in container.named_children:
            if child.type == "attribute_item":
                attributes.append(child)
                continue
            if child.type in ("line_comment", "block_comment"):
                continue
            if child.type == "function_item" and any(
                _RUST_TEST_ATTR.match(node_text(a, source)) for a in attributes
            ):
                name = node_text(child.child_by_field_name("name"), source)
                start = line_of(attributes[0]) if attributes else line_of(child)
                cases.append(TestCase((*mods, name), start, int(child.end_point[0]) + 1, "rust"))
            elif child.type == "mod_item" and len(mods) < _MAX_DEPTH:
                body = child.child_by_field_name("body")
                if body is not None:
                    stack.append((body, (*mods, node_text(child.child_by_field_name("name"), source))))
            attributes = []
    cases.sort(key=lambda case: case.start_line)


# ---------------------------------------------------------------- JavaScript / TypeScript


def _js_callee(call: SyntaxNode, source: bytes) -> tuple[str, bool]:
    """(the test function's name, whether this call runs) for ``it(…)``, ``it.only(…)``,
    ``test.each(table)(…)``, ``test.runIf(cond)(…)``; ("", False) otherwise."""
    function = call.child_by_field_name("function")
    if function is None:
        return "", False
    if function.type == "call_expression":  # test.each(table)("title", fn)
        function = function.child_by_field_name("function")
        if function is None:
            return "", False
    if function.type == "identifier":
        return node_text(function, source), True
    if function.type == "member_expression":
        obj = function.child_by_field_name("object")
        prop = node_text(function.child_by_field_name("property"), source)
        if obj is not None and obj.type == "identifier":
            return node_text(obj, source), prop in _JS_RUNNING_MODIFIERS
    return "", False


def _literal_title(node: SyntaxNode | None, source: bytes) -> str:
    """The text of a string literal (``'a'``, ``"a"``, a template without substitutions)."""
    if node is None:
        return ""
    if node.type in ("string", "template_string"):
        text = node_text(node, source)
        return text[1:-1] if len(text) >= 2 else ""
    return ""


def _first_argument(call: SyntaxNode) -> SyntaxNode | None:
    arguments = call.child_by_field_name("arguments")
    if arguments is None or not arguments.named_children:
        return None
    return arguments.named_children[0]


def _js(
    root: SyntaxNode, source: bytes, path: str, cases: list[TestCase], groups: list[TestGroup], hooks: Hooks
) -> None:
    stack: list[tuple[SyntaxNode, tuple[str, ...], int]] = [(root, (), 0)]
    while stack:
        node, outer, depth = stack.pop()
        if node.type == "call_expression" and depth < _MAX_DEPTH:
            name, runs = _js_callee(node, source)
            title = _literal_title(_first_argument(node), source)
            if name in _HOOK_CALLS:
                hooks.append(_span(node))
                continue
            if name in _JS_CASES and title:
                if runs:
                    start, end = _span(node)
                    cases.append(TestCase((*outer, title), start, end, "js", is_title=True))
                continue
            if name in _JS_GROUPS and title:
                start, end = _span(node)
                if runs:
                    groups.append(TestGroup((*outer, title), start, end))
                    outer = (*outer, title)
                else:
                    continue
        stack.extend((child, outer, depth + 1) for child in reversed(node.named_children))
    cases.sort(key=lambda case: case.start_line)
    groups.sort(key=lambda group: group.start_line)


# ---------------------------------------------------------------- Java


def _annotation_names(modifiers: SyntaxNode | None, source: bytes) -> set[str]:
    names: set[str] = set()
    for child in modifiers.named_children if modifiers is not None else ():
        if child.type in ("marker_annotation", "annotation"):
            text = node_text(child.child_by_field_name("name"), source)
            names.add(text.rsplit(".", 1)[-1])
    return names


def _skip_argument(arguments: SyntaxNode | None, source: bytes) -> bool:
    """Whether ``arguments`` (of a test annotation or attribute) say ``enabled = false`` or
    ``Skip = …``, outside any string literal or comment (``DisplayName = "Skip = no"`` is a name,
    ``/* enabled = false later */`` a note)."""
    if arguments is None:
        return False
    text = bytearray(source[arguments.start_byte : arguments.end_byte])
    stack = [arguments]
    while stack:
        node = stack.pop()
        if "string" in node.type or "comment" in node.type:  # string_literal, block_comment, …
            start, end = node.start_byte - arguments.start_byte, node.end_byte - arguments.start_byte
            text[start:end] = b" " * (end - start)
        else:
            stack.extend(node.named_children)
    return _SKIP_ARGUMENT.search(text.decode("utf-8", "replace")) is not None


def _disabled_test(modifiers: SyntaxNode | None, source: bytes) -> bool:
    """TestNG's ``@Test(enabled = false)``: the argument of the test annotation itself."""
    return any(
        child.type == "annotation"
        and node_text(child.child_by_field_name("name"), source).endswith("Test")
        and _skip_argument(child.child_by_field_name("arguments"), source)
        for child in (modifiers.named_children if modifiers is not None else ())
    )


def _java(
    root: SyntaxNode, source: bytes, path: str, cases: list[TestCase], groups: list[TestGroup], hooks: Hooks
) -> None:
    package = ""
    for child in _children(root, "package_declaration"):
        package = " ".join(node_text(c, source) for c in child.named_children if c.type != "annotation")
    # each container with its classes' names and whether an enclosing class is skipped
    stack: list[tuple[SyntaxNode, tuple[str, ...], bool]] = [(root, (), False)]
    while stack:
        container, outer, outer_skipped = stack.pop()
        for child in container.named_children:
            if child.type != "class_declaration" or len(outer) >= _MAX_DEPTH:
                continue
            name = node_text(child.child_by_field_name("name"), source)
            body = child.child_by_field_name("body")
            if body is None:
                continue
            junit3 = "TestCase" in node_text(child.child_by_field_name("superclass"), source)
            start, end = _span(child)
            groups.append(TestGroup((*outer, name), start, end))
            class_skipped = outer_skipped or bool(
                _annotation_names(next(_children(child, "modifiers"), None), source) & _SKIP_MARKS
            )
            for member in _children(body, "method_declaration"):
                method = node_text(member.child_by_field_name("name"), source)
                modifiers = next(_children(member, "modifiers"), None)
                marks = _annotation_names(modifiers, source)
                if marks & _HOOK_ANNOTATIONS or method in _HOOK_METHODS:
                    hooks.append(_span(member))
                annotated = bool(marks & _JAVA_TESTS)
                modifier_text = node_text(modifiers, source)
                legacy = junit3 and method.startswith("test") and "public" in modifier_text
                skipped = class_skipped or bool(marks & _SKIP_MARKS) or _disabled_test(modifiers, source)
                if (annotated or legacy) and not skipped:
                    first, last = _span(member)
                    cases.append(TestCase((*outer, name, method), first, last, "junit", namespace=package))
            stack.append((body, (*outer, name), class_skipped))
    cases.sort(key=lambda case: case.start_line)


# ---------------------------------------------------------------- C#


def _attributes(node: SyntaxNode, source: bytes) -> Iterator[tuple[str, SyntaxNode]]:
    """Each attribute of ``node`` with its name, namespace and ``Attribute`` suffix dropped."""
    for attributes in _children(node, "attribute_list"):
        for attribute in _children(attributes, "attribute"):
            text = node_text(attribute.child_by_field_name("name"), source).rsplit(".", 1)[-1]
            yield text.removesuffix("Attribute"), attribute


def _attribute_names(node: SyntaxNode, source: bytes) -> set[str]:
    return {name for name, _ in _attributes(node, source)}


def _skipped_dotnet(member: SyntaxNode, source: bytes) -> bool:
    """``[Ignore]``, or a ``Skip = "…"`` argument of its test attribute itself (``[Fact(Skip = …)]``;
    a skipped ``[InlineData(…, Skip = …)]`` row leaves the theory's other rows to run)."""
    return any(
        name in _SKIP_MARKS
        or (
            name in _DOTNET_TESTS
            and _skip_argument(next(_children(attribute, "attribute_argument_list"), None), source)
        )
        for name, attribute in _attributes(member, source)
    )


def _csharp(
    root: SyntaxNode, source: bytes, path: str, cases: list[TestCase], groups: list[TestGroup], hooks: Hooks
) -> None:
    # each container with its namespace and its classes' names; an ``[Ignore]`` class skips its own
    # tests only: NUnit and MSTest run a nested class as a fixture of its own (Java's ``@Nested``
    # classes are the enclosing class's children, and a skip there carries into them: ``_java``)
    stack: list[tuple[SyntaxNode, str, tuple[str, ...]]] = [(root, "", ())]
    while stack:
        container, namespace, outer = stack.pop()
        for child in container.named_children:
            if child.type in ("namespace_declaration", "file_scoped_namespace_declaration"):
                name = node_text(child.child_by_field_name("name"), source)
                inner = f"{namespace}.{name}" if namespace else name
                body = child.child_by_field_name("body")
                if body is not None:
                    stack.append((body, inner, outer))
                else:  # file-scoped: the rest of the file
                    namespace = inner
            elif child.type in ("class_declaration", "record_declaration") and len(outer) < _MAX_DEPTH:
                name = node_text(child.child_by_field_name("name"), source)
                body = child.child_by_field_name("body")
                if body is None:
                    continue
                start, end = _span(child)
                groups.append(TestGroup((*outer, name), start, end))
                class_skipped = bool(_attribute_names(child, source) & _SKIP_MARKS)
                for member in _children(body, "method_declaration"):
                    names = _attribute_names(member, source)
                    if names & _HOOK_ANNOTATIONS:
                        hooks.append(_span(member))
                    if names & _DOTNET_TESTS and not class_skipped and not _skipped_dotnet(member, source):
                        method = node_text(member.child_by_field_name("name"), source)
                        first, last = _span(member)
                        cases.append(
                            TestCase((*outer, name, method), first, last, "dotnet", namespace=namespace)
                        )
                stack.append((body, namespace, (*outer, name)))
    cases.sort(key=lambda case: case.start_line)


# ---------------------------------------------------------------- Ruby


def _ruby_call_name(call: SyntaxNode, source: bytes) -> str:
    receiver = call.child_by_field_name("receiver")
    method = node_text(call.child_by_field_name("method"), source)
    if receiver is not None and node_text(receiver, source) not in ("RSpec",):
        return ""
    return method


def _ruby_title(call: SyntaxNode, source: bytes) -> str:
    argument = _first_argument(call)
    if argument is None:
        return ""
    if argument.type == "string":
        return node_text(argument, source)[1:-1]
    if argument.type in ("constant", "scope_resolution"):
        return node_text(argument, source)
    return ""


def _ruby(
    root: SyntaxNode, source: bytes, path: str, cases: list[TestCase], groups: list[TestGroup], hooks: Hooks
) -> None:
    family = "rspec" if path.endswith("_spec.rb") else "minitest"
    stack: list[tuple[SyntaxNode, tuple[str, ...], int]] = [(root, (), 0)]
    while stack:
        node, outer, depth = stack.pop()
        if depth >= _MAX_DEPTH:
            continue
        if node.type == "call":
            name = _ruby_call_name(node, source)
            title = _ruby_title(node, source)
            block = node.child_by_field_name("block")
            if name in _HOOK_CALLS and block is not None:
                hooks.append(_span(node))
                continue
            if name in _RUBY_CASES and title and block is not None:
                start, end = _span(node)
                cases.append(TestCase((*outer, title), start, end, family, is_title=True))
                continue
            if name in _RUBY_GROUPS and title and block is not None:
                start, end = _span(node)
                groups.append(TestGroup((*outer, title), start, end))
                outer = (*outer, title)
        elif node.type == "method":
            name = node_text(node.child_by_field_name("name"), source)
            if name in _HOOK_METHODS:
                hooks.append(_span(node))
                continue
            if name.startswith("test_"):
                start, end = _span(node)
                cases.append(TestCase((*outer, name), start, end, "minitest"))
                continue
        elif node.type in ("class", "module"):
            name = node_text(node.child_by_field_name("name"), source)
            start, end = _span(node)
            groups.append(TestGroup((*outer, name), start, end))
            outer = (*outer, name)
        stack.extend((child, outer, depth + 1) for child in reversed(node.named_children))
    cases.sort(key=lambda case: case.start_line)
    groups.sort(key=lambda group: group.start_line)


_WALKERS = {
    "python": _python,
    "go": _go,
    "rust": _rust,
    "javascript": _js,
    "typescript": _js,
    "tsx": _js,
    "java": _java,
    "csharp": _csharp,
    "ruby": _ruby,
}

#: the languages whose test cases are found (the others have none to find)
TEST_CASE_LANGUAGES = frozenset(_WALKERS)
