; Ruby: definitions, references and imports (capture convention in parse/syntax.py).
; `module` blocks are recorded as classes (kind "class").

(class name: [(constant) (scope_resolution)] @name) @definition.class

(module name: [(constant) (scope_resolution)] @name) @definition.class

(method name: (_) @name) @definition.function

(singleton_method name: (_) @name) @definition.function

(assignment left: (constant) @name) @definition.constant

(call
  receiver: (_) @receiver
  method: [(identifier) (constant)] @name) @reference.call

(call
  !receiver
  method: [(identifier) (constant)] @name) @reference.call

; a bare identifier as a statement is a call without arguments (unless it names a local)
(program (identifier) @bare)
(body_statement (identifier) @bare)
(block_body (identifier) @bare)
(then (identifier) @bare)
(else (identifier) @bare)

(superclass
  [
    (constant) @name
    (scope_resolution scope: (_) @receiver name: (constant) @name)
    (scope_resolution !scope name: (constant) @name)
  ] @reference.extends)

; doc comments are found from their end bytes (tree-sitter prev_sibling costs O(depth))
(comment) @comment

; names bound as locals, so that a bare use of them is not taken for a call
(assignment left: (identifier) @local)
(operator_assignment left: (identifier) @local)
(method_parameters (identifier) @local)
(lambda_parameters (identifier) @local)
(block_parameters (identifier) @local)
(optional_parameter name: (identifier) @local)
(keyword_parameter name: (identifier) @local)

(call
  !receiver
  method: (identifier) @require
  arguments: (argument_list . (string) .)
  (#any-of? @require "require" "require_relative")) @import
