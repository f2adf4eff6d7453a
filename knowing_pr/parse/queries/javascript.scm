; JavaScript: definitions, references and imports (capture convention in parse/syntax.py).
; JSX element references live in tsx.scm, loaded together with this file.

(function_declaration name: (identifier) @name) @definition.function

(generator_function_declaration name: (identifier) @name) @definition.function

(class_declaration name: (identifier) @name) @definition.class

(class_body
  (method_definition name: [(property_identifier) (private_property_identifier)] @name) @definition.method)

(class_body
  (field_definition
    property: (property_identifier) @name
    value: [(arrow_function) (function_expression)]) @definition.method)

; top-level `const f = (...) => ...`, `const f = function ...`, `const MAX = ...`
(program
  [(lexical_declaration (variable_declarator name: (identifier) @name) @definition.function)
   (variable_declaration (variable_declarator name: (identifier) @name) @definition.function)] @declaration)

(program
  (export_statement
    declaration: (lexical_declaration
      (variable_declarator name: (identifier) @name) @definition.function) @declaration))

; context read from captures, not from node.parent / prev_sibling (O(depth) each in tree-sitter)
(export_statement declaration: (_) @exported) @export

(comment) @comment

(call_expression function: (identifier) @name) @reference.call

(call_expression
  function: (member_expression object: (_) @receiver property: (property_identifier) @name)) @reference.call

(new_expression constructor: (identifier) @name) @reference.call

(new_expression
  constructor: (member_expression object: (_) @receiver property: (property_identifier) @name)) @reference.call

(class_heritage
  [
    (identifier) @name
    (member_expression object: (_) @receiver property: (property_identifier) @name)
  ] @reference.extends)

(import_statement) @import

; re-exports: `export { a as b } from "m"`, `export * from "m"` bind names as imports do
(export_statement source: (string)) @reexport

(variable_declarator
  value: (call_expression
    function: (identifier) @require
    arguments: (arguments . (string) .))
  (#eq? @require "require")) @import

; `const x = require("m").name` binds one name of the module
(variable_declarator
  value: (member_expression
    object: (call_expression
      function: (identifier) @require
      arguments: (arguments . (string) .))
    property: (property_identifier))
  (#eq? @require "require")) @import
