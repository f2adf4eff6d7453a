; Go: definitions, references and imports (read by knowing_pr/parse/go.py).
; Capture convention (see syntax.py): @definition.<kind> on the whole node + @name;
; @reference.<kind> on the using node; @import on an import spec. Go-specific captures:
;   @definition.type   a type_spec/type_alias; the kind comes from its type (struct, interface, class)
;   @definition.constant on a top-level const_spec (exported or ALL_CAPS names are kept in go.py)
;   @receiver          the receiver list of a method (its type gives the method's parent)
;   @reference.call    the callee expression; go.py reads the name and qualifier from it
;   @reference.type    a type expression; go.py collects every named type inside it
;   @reference.extends an embedded field or embedded interface element
;   @type_parameter    a generic type parameter name (never reported as a type use)

(function_declaration
  name: (identifier) @name
  body: (block)? @body) @definition.function

(method_declaration
  receiver: (parameter_list) @receiver
  name: (field_identifier) @name
  body: (block)? @body) @definition.method

(type_declaration
  [(type_spec name: (type_identifier) @name)
   (type_alias name: (type_identifier) @name)] @definition.type)

(source_file
  (const_declaration
    (const_spec name: (identifier) @name) @definition.constant))

(call_expression function: (_) @reference.call)
(type_conversion_expression type: (_) @reference.call)

(composite_literal type: (_) @reference.type)
(parameter_declaration type: (_) @reference.type)
(variadic_parameter_declaration type: (_) @reference.type)
(function_declaration result: (_) @reference.type)
(method_declaration result: (_) @reference.type)
(function_type result: (_) @reference.type)
(method_elem result: (_) @reference.type)
(field_declaration name: (_) type: (_) @reference.type)
(type_spec type: (_) @reference.type)
(type_alias type: (_) @reference.type)

(field_declaration !name type: (_) @reference.extends)
(interface_type (type_elem) @reference.extends)

(type_parameter_declaration name: (identifier) @type_parameter)

(import_spec) @import
