; JavaScript / TypeScript: the nodes that make scopes, bind names or carry values, read node by
; node by parse/js_scopes.py (single-node patterns, run with the captures API). Class fields
; are in javascript_fields.scm (JavaScript) and typescript_scopes.scm (TypeScript, TSX).

[(function_declaration) (generator_function_declaration) (function_expression) (arrow_function)
 (method_definition)] @function

[(class_declaration) (class)] @class

(variable_declarator) @declarator

(assignment_expression) @assignment

(for_in_statement) @for

(catch_clause) @catch

(return_statement) @return

(yield_expression) @yield

; top-level `const f = () => …` (a definition: its function is a named scope)
(program
  [(lexical_declaration (variable_declarator name: (identifier) value: (_) @top))
   (variable_declaration (variable_declarator name: (identifier) value: (_) @top))])

(program
  (export_statement
    declaration: (lexical_declaration (variable_declarator name: (identifier) value: (_) @top))))

(export_statement "default" value: (_) @default)

(export_statement "default" declaration: (_) @default_declaration)
