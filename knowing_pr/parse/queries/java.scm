; Java: definitions, references and imports (read by knowing_pr/parse/java.py).
; Capture convention (see syntax.py): @definition.<kind> on the whole declaration + @name,
; @body on its body; @reference.<kind> on the using node; @import on an import declaration.
; Java-specific captures:
;   @definition.field   a field declaration: java.py keeps `static final` UPPER_CASE names
;                       (any UPPER_CASE field of an interface) as constants
;   @package            the package declaration
;   @reference.call     a method invocation, object creation or method reference
;   @reference.type     a type expression; java.py collects every named type inside it
;   @reference.extends / @reference.implements   a superclass or super-interface list
;   @type_parameter     a generic type parameter (never reported as a type use)

(class_declaration name: (identifier) @name body: (_) @body) @definition.class
(record_declaration name: (identifier) @name body: (_) @body) @definition.class
(interface_declaration name: (identifier) @name body: (_) @body) @definition.interface
(annotation_type_declaration name: (identifier) @name body: (_) @body) @definition.interface
(enum_declaration name: (identifier) @name body: (_) @body) @definition.enum
(method_declaration name: (identifier) @name body: (_)? @body) @definition.method
(constructor_declaration name: (identifier) @name body: (_) @body) @definition.method
(compact_constructor_declaration name: (identifier) @name body: (_) @body) @definition.method
(field_declaration declarator: (variable_declarator name: (identifier) @name)) @definition.field
(constant_declaration declarator: (variable_declarator name: (identifier) @name)) @definition.field

(method_invocation name: (identifier) @name) @reference.call
(object_creation_expression type: (_) @reference.call)
(method_reference) @reference.call

(superclass (_) @reference.extends)
(super_interfaces (type_list) @reference.implements)
(extends_interfaces (type_list) @reference.extends)

(formal_parameter type: (_) @reference.type)
(spread_parameter (_) @reference.type)
(method_declaration type: (_) @reference.type)
(field_declaration type: (_) @reference.type)
(constant_declaration type: (_) @reference.type)

(type_parameter (type_identifier) @type_parameter)

(package_declaration) @package
(import_declaration) @import
