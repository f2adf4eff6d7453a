; Rust: definitions, references and imports (read by knowing_pr/parse/rust.py).
; Capture convention (see syntax.py): @definition.<kind> on the whole item + @name, @body on
; its body; @reference.<kind> on the using node; @import on a use/mod/extern crate item.
; Rust-specific captures:
;   @impl              an impl block: names the scope of its items (the implementing type)
;   @impl.type / @impl.trait   the implementing type and the implemented trait
;   @reference.call    the callee expression; rust.py reads the name and qualifier from it
;   @reference.macro   a macro's token tree: `name(…)` inside it is read as a call
;   @reference.type    a type expression; rust.py collects every named type inside it
;   @reference.extends a trait's supertrait bounds
;   @type_parameter    a generic type parameter name (never reported as a type use)

(function_item name: (identifier) @name body: (block) @body) @definition.function
(function_signature_item name: (identifier) @name) @definition.function
(struct_item name: (type_identifier) @name body: (_)? @body) @definition.struct
(union_item name: (type_identifier) @name body: (_)? @body) @definition.struct
(enum_item name: (type_identifier) @name body: (_)? @body) @definition.enum
(trait_item name: (type_identifier) @name body: (_)? @body) @definition.trait
(mod_item name: (identifier) @name body: (declaration_list) @body) @definition.module
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.constant

(impl_item trait: (_)? @impl.trait type: (_) @impl.type body: (_)? @body) @impl

(call_expression function: (_) @reference.call)
(macro_invocation (token_tree) @reference.macro)
(struct_expression name: (_) @reference.type)

(parameter type: (_) @reference.type)
(function_item return_type: (_) @reference.type)
(function_signature_item return_type: (_) @reference.type)
(field_declaration type: (_) @reference.type)
(ordered_field_declaration_list type: (_) @reference.type)
(const_item type: (_) @reference.type)
(static_item type: (_) @reference.type)
(type_item type: (_) @reference.type)
(trait_item bounds: (trait_bounds) @reference.extends)

(type_parameter name: (type_identifier) @type_parameter)

(use_declaration) @import
(mod_item !body) @import
(extern_crate_declaration) @import
