; Python: definitions, references and imports (capture convention in parse/syntax.py).

(class_definition name: (identifier) @name) @definition.class

; the range of a decorated definition starts at its first decorator
(decorated_definition definition: (_) @decorated) @decoration

(function_definition name: (identifier) @name) @definition.function

(module
  (assignment left: (identifier) @name) @definition.constant
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))

(call function: (identifier) @name) @reference.call

(call
  function: (attribute object: (_) @receiver attribute: (identifier) @name)) @reference.call

(decorator (identifier) @name) @reference.call

(decorator
  (attribute object: (_) @receiver attribute: (identifier) @name)) @reference.call

(class_definition
  superclasses: (argument_list
    [
      (identifier) @name
      (attribute object: (_) @receiver attribute: (identifier) @name)
      (subscript value: [
        (identifier) @name
        (attribute object: (_) @receiver attribute: (identifier) @name)])
    ] @reference.extends))

(type) @reference.type

(import_statement) @import

(import_from_statement) @import
