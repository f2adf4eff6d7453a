"""A JavaScript or TypeScript syntax tree → its scopes: what each used expression holds, and the
file's facts (the shared machinery and the value expressions: ``parse/scopes.py``, ``model.py``).

- scopes: functions (declarations, expressions, arrows, methods) and classes; a function is
  named (``<q.n>``) when it is a definition of the graph (a declaration, a method, a class
  field or a top-level ``const`` holding a function), anonymous otherwise;
- bindings: parameters (a TypeScript annotation gives an instance of its type; a default its
  value; destructured names ``?``), ``const``/``let``/``var`` declarators (annotation, else the
  value), reassignments, ``for … of``/``in`` targets, ``catch`` parameters, nested declarations;
- ``this``: the instance of the enclosing class in a method or field (the class in a static
  method), looked through arrow functions, unknown in other functions; ``super.m`` is ``^<C>``;
- ``require("./m")`` is the module ``{./m:*}``; ``const {a, b: c} = x`` binds ``x.a``, ``x.b``;
- a module-level object literal bound to ``name`` holds ``#name#``: its properties are module
  facts ``name.property`` (``export default { isFoo, bar: baz }`` as ``default.isFoo``, …);
- facts: module-level variables, ``export default`` (bound as ``default``), CommonJS exports
  (``module.exports = X`` as ``module.exports``, ``exports.f = g`` as ``f``), class fields,
  constructor parameter properties and ``this.x = …`` as attributes, declared or returned types.

One module over the style's ~400 lines: the scope walk of JavaScript and TypeScript is one
recursive visitor whose cases share its scope stack.
"""

from __future__ import annotations

from tree_sitter import Node, QueryCursor

from knowing_pr.parse.scopes import EXTERNAL, UNKNOWN, Binding, FileScopesBase, Scope, suffixed, union
from knowing_pr.parse.treesitter import (
    QUERY_MAX_START_DEPTH,
    Captures,
    captures_in_order,
    load_joined_query,
    node_text,
)

__all__ = ["JsScopes"]

_QUERY_FILES = {
    "javascript": ("javascript_scopes", "javascript_fields"),
    "typescript": ("javascript_scopes", "typescript_scopes"),
    "tsx": ("javascript_scopes", "typescript_scopes"),
}
_LITERALS = frozenset(
    {
        "string",
        "template_string",
        "number",
        "true",
        "false",
        "array",
        "object",
        "regex",
        "binary_expression",
        "unary_expression",
        "update_expression",
    }
)
_TRANSPARENT = frozenset(
    {"parenthesized_expression", "await_expression", "non_null_expression", "satisfies_expression"}
)
_NAMED_FUNCTIONS = frozenset({"function_declaration", "generator_function_declaration", "method_definition"})
_PATTERNS = frozenset(
    {"object_pattern", "array_pattern", "rest_pattern", "assignment_pattern", "pair_pattern"}
)
_NOTHING = frozenset({"null", "undefined"})


class JsScopes(FileScopesBase):
    """The scopes of one JavaScript/TypeScript file, answering "what does this expression hold?"."""

    def __init__(self, root: Node, source: bytes, language: str) -> None:
        super().__init__(root, source)
        cursor = QueryCursor(load_joined_query(_QUERY_FILES[language], language))
        cursor.set_max_start_depth(QUERY_MAX_START_DEPTH)
        captures = captures_in_order(cursor, root)
        self.this_of: dict[int, str] = {}  # function scope id → what ``this`` holds in it
        self._build_tree(captures)
        self._collect(captures)
        self.finish()

    def return_annotation(self, scope: Scope) -> Node | None:
        node = scope.node
        return node.child_by_field_name("return_type") if node is not None else None

    # -- scopes -------------------------------------------------------------------------------

    def _build_tree(self, captures: Captures) -> None:
        top = {node.start_byte for node in captures.get("top", ())}
        fields = {}
        for field_node in captures.get("field", ()):
            value = field_node.child_by_field_name("value")
            key = field_node.child_by_field_name("name") or field_node.child_by_field_name("property")
            if value is not None and key is not None:
                fields[value.start_byte] = node_text(key, self.source)
        declarators = {}
        for declarator in captures.get("declarator", ()):
            value = declarator.child_by_field_name("value")
            target = declarator.child_by_field_name("name")
            if value is not None and target is not None and target.type == "identifier":
                declarators[value.start_byte] = node_text(target, self.source)
        found = [(n, "function") for n in captures.get("function", ())]
        found += [(n, "class") for n in captures.get("class", ())]
        for node, kind, body, parent in self.nested(found):
            name = self._scope_name(node, kind, top, fields, declarators)
            named_parent = parent
            while named_parent.kind != "module" and named_parent.qualified_name.endswith("#"):
                named_parent = named_parent.parent or self.module
            prefix = named_parent.qualified_name
            # an anonymous function or class is no definition: "#" marks its name
            qualified = (f"{prefix}.{name}" if prefix else name) if name else prefix + "#"
            scope = Scope(kind, qualified, (body.start_byte, body.end_byte), parent, node)
            if name and (kind == "class" or node.type in _NAMED_FUNCTIONS or node.start_byte in top):
                parent.bind(Binding(name, node.start_byte, None, values=(f"<{qualified}>",), definition=True))
            if kind == "function":
                self.this_of[id(scope)] = self._this_value(node, parent)
                self._read_parameters(scope, node)
            self.all_scopes.append(scope)
        self.index_scopes()

    def _scope_name(
        self, node: Node, kind: str, top: set[int], fields: dict[int, str], declarators: dict[int, str]
    ) -> str:
        """The definition name of a scope ("" for an anonymous function or class)."""
        name = node.child_by_field_name("name")
        if node.type in _NAMED_FUNCTIONS or kind == "class":
            if node.type == "class" and name is None:
                return declarators.get(node.start_byte, "") if node.start_byte in top else ""
            return node_text(name, self.source) if name is not None else ""
        if node.start_byte in fields:
            return fields[node.start_byte]
        if node.start_byte in top:
            return declarators.get(node.start_byte, "")
        return ""

    def _this_value(self, node: Node, parent: Scope) -> str:
        """``this`` in a function: the class's instance in a method (the class when static),
        the enclosing function's in an arrow function, else unknown."""
        if node.type == "arrow_function":
            return self.this_of.get(id(parent), UNKNOWN) if parent.kind == "function" else _class_this(parent)
        if node.type == "method_definition" and parent.kind == "class" and _named(parent):
            static = any(c.type == "static" for c in node.children[:3])
            return f"<{parent.qualified_name}>" if static else f"&<{parent.qualified_name}>"
        return UNKNOWN

    def _read_parameters(self, scope: Scope, function: Node) -> None:
        parameters = function.child_by_field_name("parameters")
        single = function.child_by_field_name("parameter")  # ``x => …``
        nodes = (
            parameters.named_children if parameters is not None else [single] if single is not None else []
        )
        position = scope.body[0]
        cls = scope.parent if scope.parent is not None and scope.parent.kind == "class" else None
        constructor = (
            function.type == "method_definition"
            and node_text(function.child_by_field_name("name"), self.source) == "constructor"
        )
        for parameter in nodes:
            pattern, annotation, default = _parameter_parts(parameter)
            if pattern is None:
                continue
            if pattern.type == "identifier":
                name = node_text(pattern, self.source)
                if annotation is not None:
                    binding = Binding(name, position, None, annotation=annotation)
                elif default is not None:
                    binding = Binding(name, position, default)
                else:
                    binding = Binding(name, position, None, sources=[])
                scope.bind(binding)
                scope.positional.append(binding)
                if constructor and cls is not None and _is_parameter_property(parameter):
                    self.attributes.append(
                        (cls.qualified_name, Binding(name, position, None, annotation=annotation), scope)
                    )
            elif pattern.type == "rest_pattern":
                for identifier in _identifiers(pattern):
                    scope.bind(
                        Binding(node_text(identifier, self.source), position, None, values=(EXTERNAL,))
                    )
            else:
                for identifier in _identifiers(pattern):
                    scope.bind(Binding(node_text(identifier, self.source), position, None, values=(UNKNOWN,)))

    # -- bindings -----------------------------------------------------------------------------

    def _collect(self, captures: Captures) -> None:
        for node in captures.get("declarator", ()):
            self._read_declarator(node)
        for node in captures.get("assignment", ()):
            self._read_assignment(node)
        for node in captures.get("field", ()):
            self._read_field(node)
        for node in captures.get("for", ()):
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is None or right is None:
                continue
            scope = self.scope_at(node.start_byte)
            if left.type == "identifier":
                of = any(c.type == "of" for c in node.children)
                binding = (
                    Binding(node_text(left, self.source), left.end_byte, right, suffix="[]") if of else None
                )
                scope.bind(
                    binding or Binding(node_text(left, self.source), left.end_byte, None, values=(EXTERNAL,))
                )
            else:
                for identifier in _identifiers(left):
                    scope.bind(
                        Binding(node_text(identifier, self.source), left.end_byte, None, values=(UNKNOWN,))
                    )
        for node in captures.get("catch", ()):
            parameter = node.child_by_field_name("parameter")
            for identifier in _identifiers(parameter) if parameter is not None else ():
                scope = self.scope_at(node.start_byte)
                scope.bind(
                    Binding(node_text(identifier, self.source), node.start_byte, None, values=(UNKNOWN,))
                )
        for node in captures.get("return", ()):
            if node.named_children:
                self.scope_at(node.start_byte).returns.append(node.named_children[0])
        for node in captures.get("yield", ()):
            scope = self.scope_at(node.start_byte)
            scope.generator = True
            if node.named_children:
                scope.yields.append(node.named_children[0])
        for node in captures.get("default", ()):
            if not self._bind_module_object("default", node, node.end_byte):
                self.module.bind(Binding("default", node.end_byte, node))
        for node in captures.get("default_declaration", ()):
            name = node.child_by_field_name("name")
            if name is not None:
                self.module.bind(Binding("default", node.end_byte, name))

    def _read_declarator(self, node: Node) -> None:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        annotation = node.child_by_field_name("type")
        if name is None:
            return
        scope = self.scope_at(node.start_byte)
        if name.type == "identifier":
            text = node_text(name, self.source)
            if (
                value is not None
                and value.type in ("arrow_function", "function_expression")
                and scope is self.module
            ):
                return  # a top-level function: a definition, bound by _build_tree
            if (
                value is not None
                and scope is self.module
                and self._bind_module_object(text, value, node.end_byte)
            ):
                return
            if annotation is not None:
                scope.bind(Binding(text, node.end_byte, None, annotation=annotation))
            elif value is not None:
                scope.bind(Binding(text, node.end_byte, value))
            else:
                scope.bind(Binding(text, node.end_byte, None, values=(UNKNOWN,)))
            return
        if name.type == "object_pattern" and value is not None:  # const {a, b: c} = x
            for part in name.named_children:
                key, target = _destructured(part)
                if key is not None and target is not None:
                    suffix = "." + node_text(key, self.source)
                    scope.bind(Binding(node_text(target, self.source), node.end_byte, value, suffix=suffix))
                    continue
                for identifier in _identifiers(part):
                    text = node_text(identifier, self.source)
                    scope.bind(Binding(text, node.end_byte, None, values=(UNKNOWN,)))
            return
        for identifier in _identifiers(name):
            scope.bind(Binding(node_text(identifier, self.source), node.end_byte, None, values=(UNKNOWN,)))

    def _bind_module_object(self, name: str, value: Node, end: int) -> bool:
        """A module-level name bound to an object literal (``export default { a, b: c }``): it
        holds ``#name#`` and each property is a module fact ``name.property``."""
        if value.type != "object":
            return False
        for part in value.named_children:
            if part.type == "shorthand_property_identifier":
                self.module.bind(Binding(f"{name}.{node_text(part, self.source)}", end, part))
            elif part.type == "pair":
                key, member = part.child_by_field_name("key"), part.child_by_field_name("value")
                if key is not None and member is not None and key.type == "property_identifier":
                    self.module.bind(Binding(f"{name}.{node_text(key, self.source)}", end, member))
        self.module.bind(Binding(name, end, None, values=(f"#{name}#",)))
        return True

    def _read_assignment(self, node: Node) -> None:
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is None or right is None:
            return
        scope = self.scope_at(node.start_byte)
        if left.type == "identifier":
            scope.bind(Binding(node_text(left, self.source), node.end_byte, right))
            return
        if left.type != "member_expression":
            return
        obj, prop = left.child_by_field_name("object"), left.child_by_field_name("property")
        if obj is None or prop is None:
            return
        name = node_text(prop, self.source)
        target = node_text(obj, self.source)
        if obj.type == "this":
            this = self._this_at(scope)
            if this.startswith(("&<", "<")) and this.endswith(">"):
                owner = this[this.index("<") + 1 : -1]
                self.attributes.append((owner, Binding(name, node.end_byte, right), scope))
        elif scope is self.module and target == "module" and name == "exports":
            if not self._bind_module_object("module.exports", right, node.end_byte):
                self.module.bind(Binding("module.exports", node.end_byte, right))
        elif scope is self.module and target in ("exports", "module.exports"):
            self.module.bind(Binding(name, node.end_byte, right))

    def _read_field(self, node: Node) -> None:
        name = node.child_by_field_name("name") or node.child_by_field_name("property")
        value = node.child_by_field_name("value")
        annotation = node.child_by_field_name("type")
        scope = self.scope_at(node.start_byte)
        if name is None or scope.kind != "class" or not _named(scope):
            return
        if value is not None and value.type in ("arrow_function", "function_expression"):
            return  # a method (a definition of the graph)
        if annotation is None and value is None:
            return
        binding = Binding(node_text(name, self.source), node.end_byte, value, annotation=annotation)
        self.attributes.append((scope.qualified_name, binding, scope))

    # -- values -------------------------------------------------------------------------------

    def _this_at(self, scope: Scope) -> str:
        if scope.kind == "function":
            return self.this_of.get(id(scope), UNKNOWN)
        if scope.kind == "class" and _named(scope):
            return f"&<{scope.qualified_name}>"
        return UNKNOWN

    def _value(self, node: Node, scope: Scope, depth: int) -> list[str]:
        kind = node.type
        if depth > 40:
            return [UNKNOWN]
        if kind in ("identifier", "type_identifier", "shorthand_property_identifier"):
            text = node_text(node, self.source)
            return [] if text in _NOTHING else self.lookup(text, scope, node.start_byte)
        if kind == "this":
            return [self._this_at(scope)]
        if kind == "super":
            cls = _enclosing_named_class(scope)
            return [f"^<{cls.qualified_name}>"] if cls is not None else [UNKNOWN]
        if kind == "member_expression":
            obj, prop = node.child_by_field_name("object"), node.child_by_field_name("property")
            if obj is None or prop is None:
                return [UNKNOWN]
            return suffixed(self._value(obj, scope, depth + 1), "." + node_text(prop, self.source))
        if kind == "call_expression":
            function = node.child_by_field_name("function")
            if function is None:
                return [UNKNOWN]
            if function.type == "identifier" and function.text == b"require":
                return self._required(node)
            return suffixed(self._value(function, scope, depth + 1), "()")
        if kind == "new_expression":
            constructor = node.child_by_field_name("constructor")
            return suffixed(self._value(constructor, scope, depth + 1), "()") if constructor else [UNKNOWN]
        if kind == "subscript_expression":
            obj = node.child_by_field_name("object")
            return suffixed(self._value(obj, scope, depth + 1), "[]") if obj is not None else [UNKNOWN]
        if kind in _TRANSPARENT and node.named_children:
            return self._value(node.named_children[0], scope, depth + 1)
        if kind == "as_expression" and len(node.named_children) >= 2:
            return self._annotation(node.named_children[1], scope, depth + 1)
        if kind == "ternary_expression":
            parts = [node.child_by_field_name("consequence"), node.child_by_field_name("alternative")]
            return union(self._value(p, scope, depth + 1) for p in parts if p is not None)
        if kind == "binary_expression" and any(c.type in ("||", "??") for c in node.children):
            parts = [node.child_by_field_name("left"), node.child_by_field_name("right")]
            return union(self._value(p, scope, depth + 1) for p in parts if p is not None)
        if kind in _LITERALS or kind in ("null", "undefined"):
            return [] if kind in ("null", "undefined") else [EXTERNAL]
        return [UNKNOWN]

    def _required(self, call: Node) -> list[str]:
        arguments = call.child_by_field_name("arguments")
        first = arguments.named_children[0] if arguments is not None and arguments.named_children else None
        if first is None or first.type != "string":
            return [UNKNOWN]
        spec = node_text(first, self.source)[1:-1]
        return [f"{{{spec}:*}}"] if spec and "{" not in spec and "}" not in spec else [UNKNOWN]

    def annotation_values(self, node: Node) -> list[str]:
        return self._annotation(node, self.scope_at(node.start_byte), 0)

    def _annotation(self, node: Node, scope: Scope, depth: int) -> list[str]:
        """The instances a type describes (unions without ``null``/``undefined``; ``Promise<T>``
        is read as ``T``, what awaiting it gives)."""
        if depth > 12:
            return [UNKNOWN]
        kind = node.type
        if kind == "type_annotation":
            return (
                self._annotation(node.named_children[0], scope, depth + 1)
                if node.named_children
                else [UNKNOWN]
            )
        if kind in ("type_identifier", "identifier"):
            return suffixed(self.lookup(node_text(node, self.source), scope, node.start_byte), "()")
        if kind == "nested_type_identifier":
            module, name = node.child_by_field_name("module"), node.child_by_field_name("name")
            if module is None or name is None:
                return [UNKNOWN]
            return suffixed(self._value(module, scope, depth + 1), f".{node_text(name, self.source)}()")
        if kind == "generic_type":
            name = node.child_by_field_name("name")
            arguments = node.child_by_field_name("type_arguments")
            if name is not None and node_text(name, self.source) == "Promise" and arguments is not None:
                inner = arguments.named_children[0] if arguments.named_children else None
                return self._annotation(inner, scope, depth + 1) if inner is not None else [UNKNOWN]
            return self._annotation(name, scope, depth + 1) if name is not None else [UNKNOWN]
        if kind == "union_type":
            return union(self._annotation(c, scope, depth + 1) for c in node.named_children)
        if kind == "parenthesized_type" and node.named_children:
            return self._annotation(node.named_children[0], scope, depth + 1)
        if kind == "literal_type" and node.named_children and node.named_children[0].type in _NOTHING:
            return []
        if kind in (
            "predefined_type",
            "array_type",
            "tuple_type",
            "literal_type",
            "object_type",
            "function_type",
        ):
            return [EXTERNAL]
        return [UNKNOWN]


def _named(scope: Scope) -> bool:
    return bool(scope.qualified_name) and not scope.qualified_name.endswith("#")


def _class_this(scope: Scope) -> str:
    return f"&<{scope.qualified_name}>" if scope.kind == "class" and _named(scope) else UNKNOWN


def _enclosing_named_class(scope: Scope) -> Scope | None:
    current: Scope | None = scope
    while current is not None and current.kind != "module":
        if current.kind == "class" and _named(current):
            return current
        current = current.parent
    return None


def _parameter_parts(parameter: Node) -> tuple[Node | None, Node | None, Node | None]:
    """(pattern, type annotation, default value) of one parameter."""
    kind = parameter.type
    if kind in ("required_parameter", "optional_parameter"):
        return (
            parameter.child_by_field_name("pattern"),
            parameter.child_by_field_name("type"),
            parameter.child_by_field_name("value"),
        )
    if kind == "assignment_pattern":
        return parameter.child_by_field_name("left"), None, parameter.child_by_field_name("right")
    if kind in ("identifier", "rest_pattern", "object_pattern", "array_pattern"):
        return parameter, None, None
    return None, None, None


def _is_parameter_property(parameter: Node) -> bool:
    """``constructor(private readonly x: T)``: a TypeScript parameter property."""
    return any(
        c.type in ("accessibility_modifier", "readonly", "override_modifier") for c in parameter.children
    )


def _destructured(part: Node) -> tuple[Node | None, Node | None]:
    """(property, bound name) of one part of an object pattern (``a`` or ``b: c``)."""
    if part.type == "shorthand_property_identifier_pattern":
        return part, part
    if part.type == "pair_pattern":
        key, value = part.child_by_field_name("key"), part.child_by_field_name("value")
        if (
            key is not None
            and key.type == "property_identifier"
            and value is not None
            and value.type == "identifier"
        ):
            return key, value
    return None, None


def _identifiers(node: Node) -> list[Node]:
    """The names a binding pattern binds (``{a, b: c, ...d}`` → a, c, d)."""
    found: list[Node] = []
    stack = [node]
    while stack:
        current = stack.pop()
        kind = current.type
        if kind in ("identifier", "shorthand_property_identifier_pattern"):
            found.append(current)
        elif kind == "pair_pattern":
            value = current.child_by_field_name("value")
            if value is not None:
                stack.append(value)
        elif kind == "assignment_pattern":
            left = current.child_by_field_name("left")
            if left is not None:
                stack.append(left)
        elif kind in _PATTERNS or kind in ("object_pattern", "array_pattern", "object_assignment_pattern"):
            stack.extend(reversed(current.named_children))
    return found
