; Go: the nodes that make scopes, bind names or carry values, read node by node by
; parse/go_scopes.py (single-node patterns, run with the captures API).

[(function_declaration) (method_declaration) (func_literal)] @function

(short_var_declaration) @short_var

(var_spec) @var

(range_clause) @range

(type_switch_statement) @type_switch

(field_declaration name: (_)) @field

(return_statement) @return

(package_clause (package_identifier) @package)
