; C#: definitions, references and imports (read by knowing_pr/parse/csharp.py).
; Capture convention (see syntax.py): @definition.<kind> on the whole declaration + @name,
; @body on its body; @reference.<kind> on the using node; @import on a using directive.
; C#-specific captures:
;   @definition.record  a record: `record struct` is a struct, any other record a class
;   @definition.field   a field declaration: csharp.py keeps `const` fields as constants
;   @namespace          a namespace (block or file-scoped), recorded as an import hint
;   @reference.call     the callee of an invocation, or the type of an object creation
;   @reference.bases    a base list: csharp.py splits it into extends / implements
;   @reference.type     a type expression; csharp.py collects every named type inside it
;   @type_parameter     a generic type parameter (never reported as a type use)

(class_declaration name: (identifier) @name body: (_) @body) @definition.class
(struct_declaration name: (identifier) @name body: (_) @body) @definition.struct
(interface_declaration name: (identifier) @name body: (_) @body) @definition.interface
(enum_declaration name: (identifier) @name body: (_) @body) @definition.enum
(record_declaration name: (identifier) @name body: (_)? @body) @definition.record
(method_declaration name: (identifier) @name body: (_)? @body) @definition.method
(constructor_declaration name: (identifier) @name body: (_)? @body) @definition.method
(local_function_statement name: (identifier) @name body: (_)? @body) @definition.function
(field_declaration
  (variable_declaration (variable_declarator name: (identifier) @name))) @definition.field

(invocation_expression function: (_) @reference.call)
(object_creation_expression type: (_) @reference.call)

(base_list) @reference.bases

(parameter type: (_) @reference.type)
(method_declaration returns: (_) @reference.type)
(field_declaration (variable_declaration type: (_) @reference.type))
(property_declaration type: (_) @reference.type)

(type_parameter name: (identifier) @type_parameter)

(namespace_declaration name: (_) @name) @namespace
(file_scoped_namespace_declaration name: (_) @name) @namespace
(using_directive) @import
