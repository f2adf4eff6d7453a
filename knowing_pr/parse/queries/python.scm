; Python: the nodes extraction reads, one capture per node kind, run with the captures API
; (parse/python.py reads each node's fields; parse/python_scopes.py the binding ones).

(class_definition name: (identifier)) @class

(function_definition name: (identifier)) @function

; the range of a decorated definition starts at its first decorator
(decorated_definition) @decorated

; module-level ``UPPER_CASE = …`` constants
(module
  (assignment left: (identifier) @constant.name) @constant
  (#match? @constant.name "^_*[A-Z][A-Z0-9_]*$"))

(call) @call

(decorator) @decorator

(type) @type

(import_statement) @import

(import_from_statement) @import

; binding and flow statements (parse/python_scopes.py)

(assignment) @assignment

(for_statement) @for

(for_in_clause) @comprehension

(as_pattern) @as

(named_expression) @walrus

(global_statement) @global

(nonlocal_statement) @global

(return_statement) @return

(yield) @yield

(lambda) @lambda

(raise_statement) @raised
