; JSX component uses as calls (loaded with javascript.scm and with typescript.scm for TSX).
; Lowercase tags are intrinsic HTML elements, not components.

([(jsx_opening_element name: (identifier) @name)
  (jsx_self_closing_element name: (identifier) @name)] @reference.call
  (#match? @name "^[A-Z]"))

[(jsx_opening_element
   name: (member_expression object: (_) @receiver property: (property_identifier) @name))
 (jsx_self_closing_element
   name: (member_expression object: (_) @receiver property: (property_identifier) @name))] @reference.call
