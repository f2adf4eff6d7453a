"""A Go syntax tree → its scopes: what each used expression holds, and the file's facts (the shared
machinery and the value expressions: ``parse/scopes.py``, ``model.py``).

- scopes: functions, methods (named ``T.M`` after their receiver type, as the graph does) and
  function literals (anonymous);
- bindings: the receiver (``&<T>``: an instance of ``T``, declared in this file or another file
  of the package), parameters and results by their declared type (``*T`` and ``T`` alike, a
  package-qualified ``pkg.T`` through the import, slices, maps, channels and functions
  external), ``var``/``:=`` (a declared type, else the value; in ``a, b := f()`` ``a`` holds
  what ``f`` returns first), ``range`` targets, type switches;
- values: ``T{…}``, ``&T{…}`` and ``new(T)`` are instances of ``T``, ``x.(T)`` too;
- facts: package-level variables, struct fields by their type, the first result type of a
  function or method, the file's package name (``package``).
"""

from __future__ import annotations

from tree_sitter import Node, QueryCursor

from knowing_pr.model import Fact
from knowing_pr.parse.scopes import EXTERNAL, UNKNOWN, Binding, FileScopesBase, Scope, suffixed
from knowing_pr.parse.treesitter import (
    QUERY_MAX_START_DEPTH,
    Captures,
    captures_in_order,
    load_query,
    node_text,
)

__all__ = ["GoScopes"]

_LITERALS = frozenset(
    {
        "interpreted_string_literal",
        "raw_string_literal",
        "int_literal",
        "float_literal",
        "imaginary_literal",
        "rune_literal",
        "true",
        "false",
        "binary_expression",
        "func_literal",
    }
)
#: type expressions whose values are never the repository's methods
_EXTERNAL_TYPES = frozenset({"slice_type", "array_type", "map_type", "channel_type", "function_type"})


class GoScopes(FileScopesBase):
    """The scopes of one Go file, answering "what does this expression hold?"."""

    def __init__(self, root: Node, source: bytes, language: str) -> None:
        super().__init__(root, source)
        cursor = QueryCursor(load_query("go_scopes", language))
        cursor.set_max_start_depth(QUERY_MAX_START_DEPTH)
        captures = captures_in_order(cursor, root)
        self._build_tree(captures)
        self._collect(captures)
        self.finish()
        package = next(iter(captures.get("package", ())), None)
        self.package = node_text(package, source) if package is not None else ""

    def facts(self) -> list[Fact]:
        """The shared facts, plus the package's name (what an import of the file's directory
        binds, when the directory is the module's root and no path names it)."""
        found = super().facts()
        if self.package:
            found.append(Fact("package", "", self.package))
        return found

    def return_annotation(self, scope: Scope) -> Node | None:
        node = scope.node
        result = node.child_by_field_name("result") if node is not None else None
        if result is not None and result.type == "parameter_list":  # (T, error): the first
            first = next((c for c in result.named_children if c.type == "parameter_declaration"), None)
            return first.child_by_field_name("type") if first is not None else None
        return result

    # -- scopes -------------------------------------------------------------------------------

    def _build_tree(self, captures: Captures) -> None:
        for node, kind, body, parent in self.nested((n, "function") for n in captures.get("function", ())):
            name = node.child_by_field_name("name")
            qualified = parent.qualified_name + "#" if parent.qualified_name else "#"
            receiver_type = ""
            if node.type == "method_declaration" and name is not None:
                receiver_type = _receiver_type_name(node.child_by_field_name("receiver"), self.source)
                qualified = f"{receiver_type}.{node_text(name, self.source)}"
            elif node.type == "function_declaration" and name is not None:
                qualified = node_text(name, self.source)
            scope = Scope(kind, qualified, (body.start_byte, body.end_byte), parent, node)
            if node.type == "function_declaration" and name is not None:
                parent.bind(
                    Binding(qualified, node.start_byte, None, values=(f"<{qualified}>",), definition=True)
                )
            self._read_parameters(scope, node, receiver_type)
            self.all_scopes.append(scope)
        self.index_scopes()

    def _read_parameters(self, scope: Scope, function: Node, receiver_type: str) -> None:
        position = scope.body[0]
        receiver = function.child_by_field_name("receiver")
        for declaration in receiver.named_children if receiver is not None else ():
            for name in declaration.children_by_field_name("name"):
                scope.bind(
                    Binding(node_text(name, self.source), position, None, values=(f"&<{receiver_type}>",))
                )
        for field in ("parameters", "result"):
            parameters = function.child_by_field_name(field)
            if parameters is None or parameters.type != "parameter_list":
                continue
            for declaration in parameters.named_children:
                type_node = declaration.child_by_field_name("type")
                for name in declaration.children_by_field_name("name"):
                    variadic = declaration.type == "variadic_parameter_declaration"
                    binding = Binding(node_text(name, self.source), position, None, annotation=type_node)
                    if variadic or type_node is None:
                        binding = Binding(node_text(name, self.source), position, None, values=(EXTERNAL,))
                    scope.bind(binding)

    # -- bindings -----------------------------------------------------------------------------

    def _collect(self, captures: Captures) -> None:
        for node in captures.get("short_var", ()):
            self._bind_list(node.child_by_field_name("left"), node.child_by_field_name("right"), None, node)
        for node in captures.get("var", ()):
            names = node.children_by_field_name("name")
            value = node.child_by_field_name("value")
            type_node = node.child_by_field_name("type")
            scope = self.scope_at(node.start_byte)
            values = value.named_children if value is not None else []
            for index, name in enumerate(names):
                text = node_text(name, self.source)
                if type_node is not None:
                    scope.bind(Binding(text, node.end_byte, None, annotation=type_node))
                elif len(values) == len(names):
                    scope.bind(Binding(text, node.end_byte, values[index]))
                elif index == 0 and values:
                    scope.bind(Binding(text, node.end_byte, values[0]))
                else:
                    scope.bind(Binding(text, node.end_byte, None, values=(UNKNOWN,)))
        for node in captures.get("range", ()):
            left = node.child_by_field_name("left")
            scope = self.scope_at(node.start_byte)
            for name in left.named_children if left is not None else ():
                if name.type == "identifier":
                    scope.bind(Binding(node_text(name, self.source), node.end_byte, None, values=(UNKNOWN,)))
        for node in captures.get("type_switch", ()):
            alias = node.child_by_field_name("alias")
            for name in alias.named_children if alias is not None else ():
                scope = self.scope_at(node.start_byte)
                scope.bind(Binding(node_text(name, self.source), node.start_byte, None, values=(UNKNOWN,)))
        for node in captures.get("field", ()):
            self._read_field(node)
        for node in captures.get("return", ()):
            if node.named_children:
                first = node.named_children[0]
                if first.type == "expression_list" and first.named_children:
                    first = first.named_children[0]
                self.scope_at(node.start_byte).returns.append(first)

    def _bind_list(self, left: Node | None, right: Node | None, type_node: Node | None, node: Node) -> None:
        if left is None:
            return
        scope = self.scope_at(node.start_byte)
        names = [n for n in left.named_children if n.type == "identifier"]
        values = right.named_children if right is not None else []
        for index, name in enumerate(names):
            text = node_text(name, self.source)
            if len(values) == len(names):
                scope.bind(Binding(text, node.end_byte, values[index]))
            elif index == 0 and len(values) == 1:
                scope.bind(Binding(text, node.end_byte, values[0]))  # a, err := f(): what f returns first
            else:
                scope.bind(Binding(text, node.end_byte, None, values=(UNKNOWN,)))

    def _read_field(self, node: Node) -> None:
        """A named struct field is an attribute of its struct, by its type."""
        type_node = node.child_by_field_name("type")
        owner = _struct_of(node, self.source)
        if type_node is None or not owner:
            return
        for name in node.children_by_field_name("name"):
            binding = Binding(node_text(name, self.source), node.end_byte, None, annotation=type_node)
            self.attributes.append((owner, binding, self.module))

    # -- values -------------------------------------------------------------------------------

    def _value(self, node: Node, scope: Scope, depth: int) -> list[str]:
        kind = node.type
        if depth > 40:
            return [UNKNOWN]
        if kind in ("identifier", "type_identifier", "package_identifier"):
            text = node_text(node, self.source)
            return [] if text == "nil" else self.lookup(text, scope, node.start_byte)
        if kind == "selector_expression":
            operand, field = node.child_by_field_name("operand"), node.child_by_field_name("field")
            if operand is None or field is None:
                return [UNKNOWN]
            return suffixed(self._value(operand, scope, depth + 1), "." + node_text(field, self.source))
        if kind == "call_expression":
            function = node.child_by_field_name("function")
            if function is None:
                return [UNKNOWN]
            if function.type == "identifier" and function.text == b"new":
                arguments = node.child_by_field_name("arguments")
                first = (
                    arguments.named_children[0]
                    if arguments is not None and arguments.named_children
                    else None
                )
                return self._type(first, scope, depth + 1) if first is not None else [UNKNOWN]
            return suffixed(self._value(function, scope, depth + 1), "()")
        if kind == "composite_literal":
            type_node = node.child_by_field_name("type")
            return self._type(type_node, scope, depth + 1) if type_node is not None else [UNKNOWN]
        if kind == "unary_expression":
            operand = node.child_by_field_name("operand")
            operator = node.child_by_field_name("operator")
            if operand is not None and operator is not None and operator.type in ("&", "*"):
                return self._value(operand, scope, depth + 1)
            return [EXTERNAL]
        if kind == "type_assertion_expression":
            type_node = node.child_by_field_name("type")
            return self._type(type_node, scope, depth + 1) if type_node is not None else [UNKNOWN]
        if kind == "parenthesized_expression" and node.named_children:
            return self._value(node.named_children[0], scope, depth + 1)
        if kind == "index_expression":
            operand = node.child_by_field_name("operand")
            return (
                suffixed(self._value(operand, scope, depth + 1), "[]") if operand is not None else [UNKNOWN]
            )
        if kind == "nil":
            return []
        if kind in _LITERALS:
            return [EXTERNAL]
        return [UNKNOWN]

    def annotation_values(self, node: Node) -> list[str]:
        return self._type(node, self.scope_at(node.start_byte), 0)

    def _type(self, node: Node, scope: Scope, depth: int) -> list[str]:
        """The instances a Go type describes (pointers stripped)."""
        if depth > 12:
            return [UNKNOWN]
        kind = node.type
        if kind == "pointer_type" and node.named_children:
            return self._type(node.named_children[-1], scope, depth + 1)
        if kind == "type_identifier":
            return suffixed(self.lookup(node_text(node, self.source), scope, node.start_byte), "()")
        if kind == "qualified_type":
            package, name = node.child_by_field_name("package"), node.child_by_field_name("name")
            if package is None or name is None:
                return [UNKNOWN]
            return suffixed(self._value(package, scope, depth + 1), f".{node_text(name, self.source)}()")
        if kind == "generic_type":
            base = node.child_by_field_name("type")
            return self._type(base, scope, depth + 1) if base is not None else [UNKNOWN]
        if kind in _EXTERNAL_TYPES:
            return [EXTERNAL]
        if kind == "parenthesized_type" and node.named_children:
            return self._type(node.named_children[0], scope, depth + 1)
        return [UNKNOWN]


def _receiver_type_name(receiver: Node | None, source: bytes) -> str:
    """``(s *Server)`` → ``Server``; ``(l List[T])`` → ``List``."""
    stack = [receiver] if receiver is not None else []
    while stack:
        node = stack.pop()
        if node.type == "type_identifier":
            return node_text(node, source)
        stack.extend(reversed(node.children))
    return "?"


def _struct_of(field: Node, source: bytes) -> str:
    """The struct type a field declaration belongs to (``""`` for an anonymous struct)."""
    node = field.parent  # field_declaration_list → struct_type → type_spec
    for _ in range(3):
        if node is None:
            return ""
        if node.type == "type_spec":
            name = node.child_by_field_name("name")
            return node_text(name, source) if name is not None else ""
        node = node.parent
    return ""
