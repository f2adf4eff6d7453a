"""A Python syntax tree → its scopes: what each used expression holds, and the file's facts.

Value expressions are described in ``knowing_pr/model.py``. This module applies Python's own
scoping inside one file, so the resolver only ever evaluates module-scope names:

- a function's parameters (``self``/``cls`` from the enclosing class, annotations as instances
  of their type, ``?`` without one), its assignments, loop, ``with`` and ``except`` targets,
  walrus names and nested definitions shadow the module; ``global``/``nonlocal`` names do not;
- a class body's names are seen by the class body only, never by its methods;
- a local read at position p holds what its last assignment before p assigned (all of its
  assignments when none precedes p, or when read from a nested function);
- lambda parameters and comprehension variables hold ``?`` (``[]`` of the iterable for the
  latter) within their own expression.

Facts for the rest of the repository: module-level variables and class attributes (class body
assignments and annotations, ``self.x = …`` in methods) as ``bind``; what a function returns
(its annotation, else the union of its ``return`` expressions; a generator returns ``!``) as
``returns``; ``@property`` methods as ``property``.

One module over the style's ~400 lines: Python's scope walk is one recursive visitor (binding,
flow-ordered assignments, facts) whose cases share its scope stack.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from knowing_pr.model import Import
from knowing_pr.parse.scopes import (
    EXTERNAL,
    UNKNOWN,
    Binding,
    FileScopesBase,
    Scope,
    suffixed,
    union,
)
from knowing_pr.parse.treesitter import Captures, node_text

__all__ = ["FileScopes"]

_LITERALS = frozenset(
    {
        "string",
        "concatenated_string",
        "integer",
        "float",
        "true",
        "false",
        "list",
        "dictionary",
        "set",
        "tuple",
        "list_comprehension",
        "dictionary_comprehension",
        "set_comprehension",
        "generator_expression",
        "binary_operator",
        "unary_operator",
        "comparison_operator",
        "not_operator",
        "ellipsis",
    }
)
#: annotation wrappers whose first argument is the type (``Optional[T]`` holds a ``T``)
_TYPE_WRAPPERS = frozenset(
    {"Optional", "Annotated", "ClassVar", "Final", "Required", "NotRequired", "ReadOnly", "InitVar"}
)
_PROPERTY_DECORATORS = frozenset({"property", "cached_property", "functools.cached_property"})
_CLASS_RECEIVER_METHODS = frozenset({"__new__", "__init_subclass__", "__class_getitem__"})
_DOTTED = re.compile(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*$")


class FileScopes(FileScopesBase):
    """The scopes of one Python file, answering "what does this expression hold?"."""

    def __init__(
        self, root: Node, source: bytes, definitions: list[tuple[Node, str]], captures: Captures
    ) -> None:
        super().__init__(root, source)
        self.raised: list[Node] = []
        self.iterables: list[Node] = []
        self._collect(definitions, captures)

    def return_annotation(self, scope: Scope) -> Node | None:
        return scope.node.child_by_field_name("return_type") if scope.node is not None else None

    def is_property(self, scope: Scope) -> bool:
        return any(d in _PROPERTY_DECORATORS for d in scope.decorators)

    # -- collection ---------------------------------------------------------------------------

    def _collect(self, definitions: list[tuple[Node, str]], captures: Captures) -> None:
        """``definitions``: every ``function_definition``/``class_definition`` node with its kind;
        ``captures``: the file's captures of ``queries/python.scm`` by capture name (the binding
        and flow statements: ``assignment``, ``for``, ``comprehension``, ``as``, ``walrus``,
        ``global``, ``return``, ``yield``, ``lambda``, ``raised``)."""
        self._build_tree(definitions)
        for node in captures.get("global", ()):
            scope = self.scope_at(node.start_byte)
            scope.globals.update(
                node_text(n, self.source) for n in node.named_children if n.type == "identifier"
            )
        for node in captures.get("assignment", ()):
            self._read_assignment(node)
        for node in captures.get("for", ()):
            left, iterable = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is not None and iterable is not None:
                self._bind_targets(
                    self.scope_at(left.start_byte), left, iterable, left.end_byte, suffix="[]", pairwise=False
                )
                self.iterables.append(iterable)
        for node in captures.get("comprehension", ()):
            self._read_comprehension(node)
        for node in captures.get("as", ()):
            alias = node.child_by_field_name("alias")
            if alias is not None:
                self._read_as(node, alias)
        for node in captures.get("walrus", ()):
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            if name is not None and value is not None and name.type == "identifier":
                self.scope_at(node.start_byte).bind(
                    Binding(node_text(name, self.source), node.end_byte, value)
                )
        for node in captures.get("return", ()):
            if node.named_children:
                self.scope_at(node.start_byte).returns.append(node.named_children[0])
        for node in captures.get("yield", ()):
            scope = self.scope_at(node.start_byte)
            scope.generator = True
            if node.named_children and node.named_children[0].type != "expression_list":
                scope.yields.append(node.named_children[0])
        for node in captures.get("lambda", ()):
            self._read_lambda(node)
        for node in captures.get("raised", ()):
            raised = node.named_children[0] if node.named_children else None
            if raised is not None and raised.type in ("identifier", "attribute"):
                self.raised.append(raised)

    def _build_tree(self, definitions: list[tuple[Node, str]]) -> None:
        for node, kind, body, parent in self.nested(definitions):
            name = node_text(node.child_by_field_name("name"), self.source)
            qualified = f"{parent.qualified_name}.{name}" if parent.qualified_name else name
            scope = Scope(kind, qualified, (body.start_byte, body.end_byte), parent, node)
            scope.decorators = self._decorators(node)
            start = (
                node.parent.start_byte
                if node.parent is not None and node.parent.type == "decorated_definition"
                else node.start_byte
            )
            parent.bind(Binding(name, start, None, values=(f"<{qualified}>",), definition=True))
            if kind == "function":
                self._read_parameters(scope, node)
            self.all_scopes.append(scope)
        self.index_scopes()

    def _decorators(self, node: Node) -> tuple[str, ...]:
        parent = node.parent
        if parent is None or parent.type != "decorated_definition":
            return ()
        names = []
        for child in parent.named_children:
            if child.type == "decorator" and child.named_children:
                expression = child.named_children[0]
                if expression.type == "call":
                    expression = expression.child_by_field_name("function") or expression
                names.append("".join(node_text(expression, self.source).split()))
        return tuple(names)

    def _read_parameters(self, scope: Scope, function: Node) -> None:
        parameters = function.child_by_field_name("parameters")
        if parameters is None:
            return
        cls = scope.parent if scope.parent is not None and scope.parent.kind == "class" else None
        position = scope.body[0]
        first = True
        keyword_only = False
        for parameter in parameters.named_children:
            if parameter.type in ("keyword_separator", "list_splat_pattern"):
                keyword_only = True
            name_node, annotation, default = _parameter_parts(parameter)
            if name_node is None:
                first = False
                continue
            name = node_text(name_node, self.source)
            if parameter.type in ("list_splat_pattern", "dictionary_splat_pattern"):
                scope.bind(Binding(name, position, None, values=(EXTERNAL,)))
            elif first and cls is not None and "staticmethod" not in scope.decorators:
                classlike = (
                    "classmethod" in scope.decorators or _simple_name(scope) in _CLASS_RECEIVER_METHODS
                )
                value = f"<{cls.qualified_name}>" if classlike else f"&<{cls.qualified_name}>"
                scope.receiver, scope.receiver_value = name, value
                scope.bind(Binding(name, position, None, values=(value,)))
            else:
                if annotation is not None:
                    binding = Binding(name, position, None, annotation=annotation)
                elif default is not None and default.type != "none":
                    binding = Binding(name, position, default)
                else:
                    binding = Binding(name, position, None, sources=[])
                scope.bind(binding)
                if not keyword_only:
                    scope.positional.append(binding)
                scope.keywords[name] = binding
            first = False

    def _read_assignment(self, node: Node) -> None:
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        annotation = node.child_by_field_name("type")
        if left is None:
            return
        scope = self.scope_at(node.start_byte)
        while right is not None and right.type == "assignment":  # a = b = value
            right = right.child_by_field_name("right")
        if left.type == "identifier":
            name = node_text(left, self.source)
            if name in scope.globals:
                scope = self.module
            if annotation is not None:
                scope.bind(Binding(name, node.end_byte, None, annotation=annotation))
            elif right is not None:
                scope.bind(Binding(name, node.end_byte, right))
            return
        if left.type == "attribute":
            self._bind_attribute(scope, left, right, annotation, node.end_byte)
            return
        if right is not None:
            self._bind_targets(scope, left, right, node.end_byte, suffix="", pairwise=True)

    def _bind_attribute(
        self, scope: Scope, left: Node, right: Node | None, annotation: Node | None, end: int
    ) -> None:
        """``self.x = value`` (or ``cls.x``) in a method: an attribute of the method's class."""
        receiver = left.child_by_field_name("object")
        attribute = left.child_by_field_name("attribute")
        if receiver is None or attribute is None or receiver.type != "identifier":
            return
        name = node_text(receiver, self.source)
        method: Scope | None = scope
        while method is not None and method.kind == "function" and method.receiver != name:
            method = method.parent  # a closure inside the method sees its ``self``
        if method is None or method.kind != "function" or method.parent is None:
            return
        attribute_name = node_text(attribute, self.source)
        binding = Binding(attribute_name, end, right, annotation=annotation)
        self.attributes.append((method.parent.qualified_name, binding, scope))

    def _bind_targets(
        self, scope: Scope, left: Node, right: Node, end: int, *, suffix: str, pairwise: bool
    ) -> None:
        if left.type == "identifier":
            scope.bind(Binding(node_text(left, self.source), end, right, suffix=suffix))
            return
        if left.type in ("pattern_list", "tuple_pattern", "list_pattern", "tuple", "list", "expression_list"):
            targets = left.named_children
            sources = right.named_children if right.type in ("expression_list", "tuple", "list") else []
            for index, target in enumerate(targets):
                if pairwise and len(sources) == len(targets) and target.type != "list_splat_pattern":
                    self._bind_targets(scope, target, sources[index], end, suffix="", pairwise=True)
                else:
                    for name in _identifiers(target):
                        scope.bind(Binding(node_text(name, self.source), end, None, values=(UNKNOWN,)))
        elif left.type == "list_splat_pattern":
            for name in _identifiers(left):
                scope.bind(Binding(node_text(name, self.source), end, None, values=(EXTERNAL,)))

    def _read_comprehension(self, clause: Node) -> None:
        comprehension = clause.parent or clause
        left, iterable = clause.child_by_field_name("left"), clause.child_by_field_name("right")
        if left is None or iterable is None:
            return
        scope = self.scope_at(comprehension.start_byte)
        names: dict[str, Binding] = {}
        if left.type == "identifier":
            name = node_text(left, self.source)
            names[name] = Binding(name, 0, iterable, suffix="[]")
        else:
            for node in _identifiers(left):
                name = node_text(node, self.source)
                names[name] = Binding(name, 0, None, values=(UNKNOWN,))
        scope.limited.append((comprehension.start_byte, comprehension.end_byte, names))

    def _read_lambda(self, node: Node) -> None:
        parameters = node.child_by_field_name("parameters")
        if parameters is None:
            return
        names = {
            node_text(n, self.source): Binding(node_text(n, self.source), 0, None, values=(UNKNOWN,))
            for p in parameters.named_children
            for n in [_parameter_parts(p)[0]]
            if n is not None
        }
        scope = self.scope_at(node.start_byte)
        scope.limited.append((node.start_byte, node.end_byte, names))

    def _read_as(self, node: Node, alias: Node) -> None:
        target = alias.named_children[0] if alias.named_children else None
        value = node.named_children[0] if node.named_children else None
        if target is None or value is None:
            return
        scope = self.scope_at(node.start_byte)
        clause = node.parent
        suffix = "()" if clause is not None and clause.type == "except_clause" else ".__enter__()"
        if target.type == "identifier":
            scope.bind(Binding(node_text(target, self.source), node.end_byte, value, suffix=suffix))
        else:
            for name in _identifiers(target):
                scope.bind(Binding(node_text(name, self.source), node.end_byte, None, values=(UNKNOWN,)))

    def bind_call_arguments(self, calls: list[Node]) -> None:
        """Each call of a function (or class) defined in this file binds its arguments to that
        function's parameters (by position and by keyword; ``*args``/``**kw`` stop the mapping)."""
        by_name = {scope.qualified_name: scope for scope in self.all_scopes if scope.kind != "module"}
        for call in calls:
            target = self._called_scope(call, by_name)
            arguments = call.child_by_field_name("arguments")
            if target is None or arguments is None or arguments.type != "argument_list":
                continue
            index = 0
            for argument in arguments.named_children:
                if argument.type == "keyword_argument":
                    name = argument.child_by_field_name("name")
                    value = argument.child_by_field_name("value")
                    binding = target.keywords.get(node_text(name, self.source)) if name is not None else None
                    if binding is not None and binding.sources is not None and value is not None:
                        binding.sources.append(value)
                elif argument.type in ("list_splat", "dictionary_splat"):
                    break
                elif index < len(target.positional):
                    binding = target.positional[index]
                    if binding.sources is not None:
                        binding.sources.append(argument)
                    index += 1

    def _called_scope(self, call: Node, by_name: dict[str, Scope]) -> Scope | None:
        """The function a call names directly (a definition in scope, ``self.m``/``cls.m`` of the
        enclosing class), or a class's ``__init__``; ``None`` otherwise."""
        function = call.child_by_field_name("function")
        if function is None:
            return None
        scope = self.scope_at(call.start_byte)
        qualified = None
        if function.type == "identifier":
            qualified = self._defined(node_text(function, self.source), scope)
        elif function.type == "attribute":
            obj, attribute = function.child_by_field_name("object"), function.child_by_field_name("attribute")
            method = scope
            while (
                method.kind == "function"
                and obj is not None
                and method.receiver != node_text(obj, self.source)
            ):
                method = method.parent or self.module
            if (
                obj is not None
                and attribute is not None
                and method.kind == "function"
                and method.parent is not None
            ):
                qualified = f"{method.parent.qualified_name}.{node_text(attribute, self.source)}"
        target = by_name.get(qualified) if qualified else None
        if target is not None and target.kind == "class":
            target = by_name.get(f"{target.qualified_name}.__init__")
        return target if target is not None and target.kind == "function" else None

    def _defined(self, name: str, scope: Scope) -> str | None:
        """The qualified name of the definition ``name`` reads in ``scope`` when every binding of
        it there is that definition."""
        current: Scope | None = scope
        here = True
        while current is not None:
            if current.kind == "class" and not here:
                current = current.parent
                continue
            bindings = current.bindings.get(name)
            if bindings:
                values = {b.values[0] for b in bindings if b.definition and b.values}
                if len(values) == 1 and all(b.definition for b in bindings):
                    return next(iter(values))[1:-1]
                return None
            here = False
            current = current.parent
        return None

    def _value(self, node: Node, scope: Scope, depth: int) -> list[str]:
        kind = node.type
        if depth > 40:
            return [UNKNOWN]
        if kind == "identifier":
            return self.lookup(node_text(node, self.source), scope, node.start_byte)
        if kind == "attribute" or kind == "call":
            chain = self._chain(node)
            if chain is not None:
                root, suffix = chain
                return suffixed(self.lookup(node_text(root, self.source), scope, root.start_byte), suffix)
        if kind == "attribute":
            obj = node.child_by_field_name("object")
            attribute = node.child_by_field_name("attribute")
            if obj is None or attribute is None:
                return [UNKNOWN]
            return suffixed(self._value(obj, scope, depth + 1), "." + node_text(attribute, self.source))
        if kind == "call":
            function = node.child_by_field_name("function")
            if function is None:
                return [UNKNOWN]
            if function.type == "identifier" and node_text(function, self.source) == "super":
                cls = scope.enclosing_class
                return [f"^<{cls.qualified_name}>"] if cls is not None else [UNKNOWN]
            return suffixed(self._value(function, scope, depth + 1), "()")
        if kind == "subscript":
            value = node.child_by_field_name("value")
            return suffixed(self._value(value, scope, depth + 1), "[]") if value is not None else [UNKNOWN]
        if kind in ("parenthesized_expression", "await") and node.named_children:
            return self._value(node.named_children[0], scope, depth + 1)
        if kind == "conditional_expression" and len(node.named_children) >= 3:
            first, _, second = node.named_children[:3]
            return union([self._value(first, scope, depth + 1), self._value(second, scope, depth + 1)])
        if kind == "boolean_operator":
            parts = [node.child_by_field_name("left"), node.child_by_field_name("right")]
            return union(self._value(p, scope, depth + 1) for p in parts if p is not None)
        if kind == "none":
            return []
        if kind in _LITERALS:
            return [EXTERNAL]
        return [UNKNOWN]

    def _chain(self, node: Node) -> tuple[Node, str] | None:
        """``a.b().c`` → (the identifier ``a``, ``".b().c"``); ``None`` for any other shape."""
        parts: list[str] = []
        source = self.source
        while True:
            kind = node.type
            if kind == "attribute":
                attribute = node.child_by_field_name("attribute")
                obj = node.child_by_field_name("object")
                if attribute is None or obj is None:
                    return None
                parts.append(
                    "." + source[attribute.start_byte : attribute.end_byte].decode("utf-8", "replace")
                )
                node = obj
            elif kind == "call":
                function = node.child_by_field_name("function")
                if function is None or (function.type == "identifier" and function.text == b"super"):
                    return None
                parts.append("()")
                node = function
            elif kind == "identifier":
                return (node, "".join(reversed(parts))) if parts else None
            else:
                return None
            if len(parts) > 40:
                return None

    def annotation_values(self, node: Node) -> list[str]:
        """The instances a type annotation describes (``Optional``/``Union``/``|`` unwrapped)."""
        return self._annotation(node, self.scope_at(node.start_byte), 0)

    def _annotation(self, node: Node, scope: Scope, depth: int) -> list[str]:
        if depth > 12:
            return [UNKNOWN]
        if node.type == "type":
            return (
                self._annotation(node.named_children[0], scope, depth + 1)
                if node.named_children
                else [UNKNOWN]
            )
        kind = node.type
        if kind == "none":
            return []
        if kind == "string":
            content = "".join(
                node_text(c, self.source) for c in node.named_children if c.type == "string_content"
            )
            return self._annotation_text(content, scope, node.start_byte, depth + 1)
        if kind in ("identifier", "attribute"):
            dotted = "".join(node_text(node, self.source).split())
            return self._named_type(dotted, self._value(node, scope, depth + 1), scope)
        if kind == "binary_operator":
            parts = [node.child_by_field_name("left"), node.child_by_field_name("right")]
            return union(self._annotation(p, scope, depth + 1) for p in parts if p is not None)
        if kind in ("generic_type", "subscript"):
            base = node.named_children[0] if node.named_children else None
            if base is None:
                return [UNKNOWN]
            arguments = _type_arguments(node)
            base_name = node_text(base, self.source).rsplit(".", 1)[-1]
            if base_name in _TYPE_WRAPPERS or base_name == "Union":
                chosen = arguments if base_name == "Union" else arguments[:1]
                return union(self._annotation(a, scope, depth + 1) for a in chosen)
            if base_name in ("type", "Type") and arguments:
                inner = arguments[0].named_children[0] if arguments[0].type == "type" else arguments[0]
                return self._value(inner, scope, depth + 1) if inner is not None else [UNKNOWN]
            return suffixed(self._value(base, scope, depth + 1), "()")
        return [UNKNOWN]

    def _named_type(self, dotted: str, values: list[str], scope: Scope) -> list[str]:
        last = dotted.rsplit(".", 1)[-1]
        if last == "Self":
            cls = scope.enclosing_class or (scope if scope.kind == "class" else None)
            return [f"&<{cls.qualified_name}>"] if cls is not None else [UNKNOWN]
        if last in ("Any", "object"):
            return [UNKNOWN]
        return suffixed(values, "()")

    def _annotation_text(self, text: str, scope: Scope, position: int, depth: int) -> list[str]:
        """A string annotation (``"Foo"``, ``"t.Optional[Foo]"``, ``"Foo | None"``) read as a type."""
        text = "".join(text.split())
        if depth > 12 or not text:
            return [UNKNOWN]
        parts = _split_top_level(text, "|")
        if len(parts) > 1:
            return union(self._annotation_text(p, scope, position, depth + 1) for p in parts)
        if text == "None":
            return []
        if text.endswith("]") and "[" in text:
            base, inner = text[:-1].split("[", 1)
            arguments = _split_top_level(inner, ",")
            base_name = base.rsplit(".", 1)[-1]
            if base_name in _TYPE_WRAPPERS or base_name == "Union":
                chosen = arguments if base_name == "Union" else arguments[:1]
                return union(self._annotation_text(a, scope, position, depth + 1) for a in chosen)
            text = base
        if not _DOTTED.match(text):
            return [UNKNOWN]
        head, _, rest = text.partition(".")
        values = self.lookup(head, scope, position)
        if rest:
            values = suffixed(values, "." + rest)
        return self._named_type(text, values, scope)

    def overload_stubs(self) -> set[int]:
        """Start bytes of ``@overload`` stubs followed by their implementation (same qualified
        name): the implementation is the definition, so its node covers the code that runs."""
        last: dict[str, Scope] = {}
        for scope in self.all_scopes:
            if scope.kind == "function":
                last[scope.qualified_name] = scope
        return {
            scope.node.start_byte
            for scope in self.all_scopes
            if scope.kind == "function"
            and scope.node is not None
            and any(d.rsplit(".", 1)[-1] == "overload" for d in scope.decorators)
            and last[scope.qualified_name] is not scope
        }

    def bind_local_imports(self, statement: Node, imports: list[Import]) -> bool:
        """Bind the names of an ``import`` inside a function to what they import (``{spec:name}``);
        ``False`` for an import at module or class level (the resolver reads those itself)."""
        scope = self.scope_at(statement.start_byte)
        if scope.kind != "function":
            return False
        for imported in imports:
            for name, alias in imported.names:
                if name == "*" and alias == imported.module and "." in alias and " as " not in alias:
                    head = alias.split(".", 1)[0]  # ``import a.b`` binds ``a``
                    value = f"{{{head}:*}}"
                    alias = head
                else:
                    value = f"{{{imported.module}:{name}}}"
                scope.bind(Binding(alias, statement.end_byte, None, values=(value,)))
        return True


def _simple_name(scope: Scope) -> str:
    return scope.qualified_name.rsplit(".", 1)[-1]


def _parameter_parts(parameter: Node) -> tuple[Node | None, Node | None, Node | None]:
    """(name, annotation, default) of one parameter node."""
    kind = parameter.type
    if kind == "identifier":
        return parameter, None, None
    if kind == "typed_parameter":
        name = next((c for c in parameter.named_children if c.type == "identifier"), None)
        if name is None:  # *args: T
            inner = next((c for c in parameter.named_children if c.type.endswith("splat_pattern")), None)
            name = next((c for c in inner.named_children if c.type == "identifier"), None) if inner else None
        return name, parameter.child_by_field_name("type"), None
    if kind in ("default_parameter", "typed_default_parameter"):
        return (
            parameter.child_by_field_name("name"),
            parameter.child_by_field_name("type"),
            parameter.child_by_field_name("value"),
        )
    if kind in ("list_splat_pattern", "dictionary_splat_pattern"):
        return next((c for c in parameter.named_children if c.type == "identifier"), None), None, None
    return None, None, None


def _identifiers(node: Node) -> list[Node]:
    """The identifiers a target pattern binds (``a, (b, *c)`` → a, b, c), attributes excluded."""
    found: list[Node] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "identifier":
            found.append(current)
        elif current.type in (
            "pattern_list",
            "tuple_pattern",
            "list_pattern",
            "tuple",
            "list",
            "list_splat_pattern",
            "parenthesized_expression",
            "expression_list",
        ):
            stack.extend(reversed(current.named_children))
    return found


def _type_arguments(node: Node) -> list[Node]:
    if node.type == "generic_type":
        parameter = next((c for c in node.named_children if c.type == "type_parameter"), None)
        return list(parameter.named_children) if parameter is not None else []
    subscripts = node.children_by_field_name("subscript")
    if len(subscripts) == 1 and subscripts[0].type == "tuple":
        return list(subscripts[0].named_children)
    return list(subscripts)


def _split_top_level(text: str, separator: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        if char == separator and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [p for p in parts if p]
