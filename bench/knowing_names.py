"""A knowing-pr symbol (path, qualified name, name, kind, line) → the qualified name knowing's own
indexer gives the same definition, so knowing's matching rules see the form they were written for.

knowing (github.com/blackwell-systems/knowing, ``internal/indexer/``) names symbols
``<repo URL>://<prefix>.<symbol>``; the symbol part differs from knowing-pr's in-file qualified
name (``knowing_pr.graph.module_name`` prefix removed) in two languages of the corpus, and the
difference changes verdicts (``HttpRegistry.start_fetch`` does not match the expected
``HttpRegistry<'gctx>.start_fetch``; ``Jekyll.Filters`` and ``Jekyll::Filters`` differ in the
suffix rule):

- Rust (``rustextractor/extractor.go`` ``extractImplItem*`` / ``extractFunctionItem*``): a
  function inside a top-level ``impl`` block is ``<impl type as written>.<name>``, generics
  included (``FeatureResolver<'a, 'gctx>.activate_fv``); the prefix is
  ``<module root>/<base name of the module root>/<directory of the file>`` (``computeBasePath``:
  no file name);
- Ruby (``rubyextractor/extractor.go`` ``extractNode`` and its helpers): classes and modules join
  their enclosing names with ``::`` (``buildQualifiedName``; a class nested in a class repeats the
  module prefix, as knowing does), a method is ``<container>.<name>``; only ``class``, ``module``,
  ``def``, ``def self.`` and the blocks of ordinary calls are walked (``class << self`` is not);
  the prefix is the file path without its extension (``computeQNamePrefix``);
- other languages (Python ``treesitter/extractor.go`` ``qualifiedName``, C#
  ``csharpextractor/extractor.go`` ``qualifiedName``): ``<module root>/<file path>.<in-file name>``.

Definitions knowing's walk would not name (a Ruby method under ``class << self``, a Rust method in
an inline ``mod``) keep knowing-pr's in-file name, with Ruby containers joined by ``::``. The module
root is ``bench/cross-system/corpus/repos/<name>``, where knowing's harness keeps its clones.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from knowing_pr.graph import module_name
from knowing_pr.model import TYPE_KINDS, SymbolKind
from knowing_pr.parse.treesitter import get_parser

__all__ = ["KnowingNamer"]

#: calls whose block knowing's Ruby walk does not enter (``handleCallNode``)
_RUBY_IMPORT_CALLS = frozenset({"require", "require_relative", "include", "extend"})
#: ``railsDecorators``: at class level these calls return before their block is walked
_RUBY_DECORATORS = frozenset(
    {
        *("attr_accessor", "attr_reader", "attr_writer"),
        *("has_many", "has_one", "belongs_to", "has_and_belongs_to_many"),
        *("before_action", "after_action", "around_action", "before_save", "after_save"),
        *("before_create", "after_create", "before_update", "after_update", "before_destroy"),
        *("after_destroy", "before_validation", "after_validation", "after_commit"),
        *("after_initialize", "after_find", "validates", "validate", "scope"),
    }
)
#: ``routeMethods``: in a routes file these calls become route nodes and are not walked further
_RUBY_ROUTE_CALLS = frozenset(
    {"get", "post", "put", "patch", "delete", "resources", "resource", "namespace", "root", "match"}
)

LineNames = dict[int, list[tuple[str, str]]]
"""definition start line → (name as written, knowing's symbol part)"""


@dataclass
class KnowingNamer:
    """knowing-style qualified names for the symbols of one clone (files parsed once, cached)."""

    clone: Path
    repo_url: str
    name: str
    _files: dict[str, LineNames] = field(default_factory=dict)

    @property
    def module_root(self) -> str:
        return f"bench/cross-system/corpus/repos/{self.name}"

    def qualified_name(self, path: str, qualified: str, name: str, kind: str, line: int) -> str:
        """The full knowing-style name: ``<repo URL>://<prefix>.<symbol>``."""
        if kind == SymbolKind.MODULE:
            return f"{self.repo_url}://{self.module_root}/{path}"
        return f"{self._prefix(path)}.{self.symbol_part(path, qualified, name, kind, line)}"

    def symbol_part(self, path: str, qualified: str, name: str, kind: str, line: int) -> str:
        infile = _infile_name(path, qualified)
        if path.endswith((".rs", ".rb")):
            for written, symbol in self._names_of(path).get(line, ()):
                if written == name or written.endswith("::" + name):
                    return symbol
        if path.endswith(".rb"):
            parts = infile.split(".")
            if kind in TYPE_KINDS or len(parts) == 1:
                return "::".join(parts)
            return "::".join(parts[:-1]) + "." + parts[-1]
        return infile

    def _prefix(self, path: str) -> str:
        if path.endswith(".rs"):
            directory = posixpath.dirname(path)
            base = f"{self.name}/{directory}" if directory else self.name
            return f"{self.repo_url}://{self.module_root}/{base}"
        if path.endswith(".rb"):
            return f"{self.repo_url}://{posixpath.splitext(path)[0]}"
        return f"{self.repo_url}://{self.module_root}/{path}"

    def _names_of(self, path: str) -> LineNames:
        if path not in self._files:
            try:
                source = (self.clone / path).read_bytes()
            except OSError:
                source = b""
            if path.endswith(".rs"):
                self._files[path] = rust_impl_method_names(source)
            else:
                self._files[path] = ruby_names(source, routes_file=path.endswith("routes.rb"))
        return self._files[path]


def _infile_name(path: str, qualified: str) -> str:
    module = module_name(path)
    return qualified[len(module) + 1 :] if qualified.startswith(module + ".") else qualified


def _text(node: Any, source: bytes) -> str:
    return str(source[node.start_byte : node.end_byte].decode("utf-8", "replace"))


def _record(names: LineNames, node: Any, written: str, symbol: str) -> None:
    names[node.start_point[0] + 1].append((written, symbol))


def rust_impl_method_names(source: bytes) -> LineNames:
    """Functions of top-level ``impl`` blocks → ``<impl type text>.<name>`` by start line."""
    names: LineNames = defaultdict(list)
    for item in get_parser("rust").parse(source).root_node.children:
        impl_type = item.child_by_field_name("type") if item.type == "impl_item" else None
        body = item.child_by_field_name("body") if impl_type is not None else None
        for child in body.children if body is not None else ():
            name = child.child_by_field_name("name") if child.type == "function_item" else None
            if name is not None:
                written = _text(name, source)
                _record(names, child, written, f"{_text(impl_type, source)}.{written}")
    return names


def ruby_names(source: bytes, *, routes_file: bool) -> LineNames:
    """knowing's Ruby walk: classes, modules and methods → their knowing symbol part by start line."""
    names: LineNames = defaultdict(list)

    def visit(node: Any, class_name: str, module: str) -> None:
        kind = node.type
        if kind in ("program", "body_statement"):
            for child in node.children:
                visit(child, class_name, module)
        elif kind in ("class", "module", "method", "singleton_method"):
            name_node = node.child_by_field_name("name")
            if name_node is None:
                return
            written = _text(name_node, source)
            if kind == "class":
                qualified = "::".join(p for p in (module, class_name, written) if p)
                _record(names, node, written, qualified)
                walk_body(node.child_by_field_name("body"), qualified, module)
            elif kind == "module":
                qualified = "::".join(p for p in (module, written) if p)
                _record(names, node, written, qualified)
                walk_body(node.child_by_field_name("body"), "", qualified)
            else:
                container = class_name or module
                _record(names, node, written, f"{container}.{written}" if container else written)
        elif kind == "call":
            visit_call(node, class_name, module)

    def walk_body(body: Any, class_name: str, module: str) -> None:
        for child in body.children if body is not None else ():
            visit(child, class_name, module)

    def visit_call(node: Any, class_name: str, module: str) -> None:
        method = node.child_by_field_name("method")
        if method is None:
            return
        called = _text(method, source)
        if called in _RUBY_IMPORT_CALLS or ((class_name or module) and called in _RUBY_DECORATORS):
            return
        if routes_file and called in _RUBY_ROUTE_CALLS:
            return
        block = node.child_by_field_name("block")
        if block is not None:
            walk_body(block.child_by_field_name("body"), class_name, module)

    for top in get_parser("ruby").parse(source).root_node.children:
        visit(top, "", "")
    return names
