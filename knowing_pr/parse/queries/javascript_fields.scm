; JavaScript class fields (parse/js_scopes.py; TypeScript's are in typescript_scopes.scm).

(field_definition) @field
