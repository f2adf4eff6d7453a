"""Ruby extraction on real tree-sitter parses."""

from __future__ import annotations

from knowing_pr.model import Import
from knowing_pr.parse import parse_source

RUBY = b"""require "json"
require_relative "../lib/base"

# Billing things.
# Second line.
module Billing
  RATE = 3

  class Invoice < Base
    include Payable, Audit::Trail

    # Totals it.
    def total(items)
      sum(items)
      items.each { |i| i.price }
      Line.new(1)
      refresh
      items
    end

    def self.build; end
  end

  class Api::Client < ::Http::Client
  end
end
"""


def test_ruby_definitions() -> None:
    parsed = parse_source("lib/billing.rb", "ruby", RUBY)
    summary = [
        (d.name, d.qualified_name, d.kind, d.start_line, d.end_line, d.parent) for d in parsed.definitions
    ]
    assert summary == [
        ("Billing", "Billing", "class", 6, 26, None),
        ("RATE", "Billing.RATE", "constant", 7, 7, "Billing"),
        ("Invoice", "Billing.Invoice", "class", 9, 22, "Billing"),
        ("total", "Billing.Invoice.total", "method", 13, 19, "Billing.Invoice"),
        ("build", "Billing.Invoice.build", "method", 21, 21, "Billing.Invoice"),
        ("Client", "Billing.Api.Client", "class", 24, 25, "Billing"),
    ]
    by_name = {d.qualified_name: d for d in parsed.definitions}
    assert by_name["Billing"].doc == "Billing things. Second line."
    assert by_name["Billing.Invoice.total"].doc == "Totals it."
    assert by_name["Billing.Invoice.total"].signature == "def total(items)"
    assert by_name["Billing.Invoice"].signature == "class Invoice < Base"


def test_ruby_references_and_imports() -> None:
    parsed = parse_source("lib/billing.rb", "ruby", RUBY)
    assert [(r.kind, r.name, r.qualifier, r.scope, r.line) for r in parsed.references] == [
        ("extends", "Base", "", "Billing.Invoice", 9),
        ("implements", "Payable", "", "Billing.Invoice", 10),
        ("implements", "Trail", "Audit", "Billing.Invoice", 10),
        ("call", "sum", "", "Billing.Invoice.total", 14),
        ("call", "each", "items", "Billing.Invoice.total", 15),
        ("call", "price", "i", "Billing.Invoice.total", 15),
        ("call", "Line", "", "Billing.Invoice.total", 16),
        ("call", "new", "Line", "Billing.Invoice.total", 16),
        ("call", "refresh", "", "Billing.Invoice.total", 17),
        ("extends", "Client", "Http", "Billing.Api.Client", 24),
    ]
    assert parsed.imports == [Import("json", (), 1), Import("../lib/base", (), 2)]


def test_bad_inputs_never_raise() -> None:
    crlf = parse_source("a.rb", "ruby", b"# doc\r\ndef f(a)\r\n  g(a)\r\nend\r\n")
    assert [(d.name, d.kind, d.start_line, d.end_line, d.doc) for d in crlf.definitions] == [
        ("f", "function", 2, 4, "doc")
    ]
    for source in (b"", b"\x00" * 10, b"class \xff < \xfe\n  def (\n", b"module A; class B < C"):
        assert isinstance(parse_source("a.rb", "ruby", source).definitions, list)
