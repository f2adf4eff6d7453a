; TypeScript (and TSX): abstract classes and class fields (parse/js_scopes.py).

(abstract_class_declaration) @class

(public_field_definition) @field
