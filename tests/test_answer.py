"""The reviewer's answer of a ``pr`` pack on real repositories: the change's own symbols (innermost,
never dropped), signature changes, call sites (not-updated first), tests to run with a command,
removed symbols, a change without code, and the budget on every format."""

from __future__ import annotations

import dataclasses
import json
import math
import xml.etree.ElementTree as ET

import pytest
from conftest import RepoBuilder

from knowing_pr.pipeline import PrRequest, build_pr_pack, open_workspace
from knowing_pr.render import FORMATS, render_comment, render_pack

CART = '''"""A shopping cart."""


class Cart:
    def __init__(self):
        self.lines = []

    def add(self, sku, qty):
        self.lines.append((sku, qty))

    def total(self):
        return sum(qty for _, qty in self.lines)
'''
CHECKOUT = """from shop.cart import Cart


def checkout(skus):
    cart = Cart()
    for sku in skus:
        cart.add(sku, 1)
    return cart.total()


def legacy_total(cart):
    return cart.total()
"""
REPORT = """from shop.checkout import legacy_total


def report(cart):
    return legacy_total(cart)
"""
TESTS = """import pytest

from shop.cart import Cart
from shop.checkout import checkout


@pytest.fixture
def cart():
    return Cart()


def test_checkout_counts():
    assert checkout(["a", "b"]) == 2


class TestCart:
    def test_add(self, cart):
        cart.add("a", 2)
        assert cart.total() == 2

    def test_empty(self):
        assert Cart().lines == []


def helper_not_a_test():
    return 1
"""


def shop(make_repo) -> RepoBuilder:
    b = make_repo("shop")
    b.write("shop/__init__.py", "")
    b.write("shop/cart.py", CART)
    b.write("shop/checkout.py", CHECKOUT)
    b.write("shop/report.py", REPORT)
    b.write("tests/test_shop.py", TESTS)
    b.write(".github/workflows/ci.yml", "on: push\n")
    b.commit("base")
    return b


def pack_of(b: RepoBuilder, *, budget: int | None = None, fmt: str = "json", base: str = "HEAD~1"):
    ws = open_workspace(str(b.path), budget=budget)
    return build_pr_pack(ws, PrRequest(base=base, head="HEAD", fmt=fmt))


def test_a_method_change_is_the_method_not_its_class(make_repo) -> None:
    b = shop(make_repo)
    b.write("shop/cart.py", CART.replace("def add(self, sku, qty):", "def add(self, sku, qty, price=0):"))
    b.commit("add a price")
    pack = pack_of(b)
    changed = [s for s in pack.symbols if s.reason == "changed"]
    assert [s.node.qualified_name for s in changed] == ["shop.cart.Cart.add"]
    assert changed[0].signature_changes == ("parameters",)
    assert changed[0].signature_before == "def add(self, sku, qty)"
    assert "**signature changed**: parameters (was `Cart.add(sku, qty)`)" in render_comment(pack)


def test_callers_outside_the_change_come_with_their_line_and_not_updated_first(make_repo) -> None:
    b = shop(make_repo)
    b.write("shop/checkout.py", CHECKOUT.replace("def legacy_total(cart):", "def legacy_total(cart, rate):"))
    b.commit("legacy_total takes a rate")
    pack = pack_of(b)
    assert pack.summary is not None
    site = pack.summary.call_sites[0]
    assert (site.path, site.line, site.caller, site.callee) == ("shop/report.py", 5, "report", "legacy_total")
    assert site.not_updated and not site.in_change and site.text == "return legacy_total(cart)"
    assert pack.summary.call_sites_not_updated == 1
    comment = render_comment(pack)
    assert "- ⚠️ `shop/report.py:5` `return legacy_total(cart)` — in `report` · not updated" in comment
    # no test calls legacy_total; the test file that imports its module is still to run
    assert comment.splitlines()[2].endswith("1 call site not updated, 1 test to run")
    assert "- `pytest tests/test_shop.py` — imports `shop/checkout.py`" in comment


def test_tests_to_run_are_test_cases_with_a_command_helpers_rolled_up_and_the_changed_ones_first(
    make_repo,
) -> None:
    b = shop(make_repo)
    b.write(
        "shop/cart.py",
        CART.replace("return sum(qty for _, qty in self.lines)", "return sum(q for _, q in self.lines)"),
    )
    b.write("tests/test_shop.py", TESTS.replace("assert Cart().lines == []", "assert not Cart().lines"))
    b.commit("rename a variable; reword a test")
    pack = pack_of(b)
    assert pack.summary is not None
    tests = {t.name: t for t in pack.summary.tests}
    assert list(tests)[0] == "TestCart::test_empty" and tests["TestCart::test_empty"].changed
    assert tests["TestCart::test_add"].run == "pytest tests/test_shop.py::TestCart::test_add"
    assert tests["test_checkout_counts"].hops == 2 and tests["test_checkout_counts"].via == "checkout"
    assert "helper_not_a_test" not in tests and "cart" not in tests  # helpers and fixtures are not tests
    assert pack.summary.tests_total == len(pack.summary.tests)
    data = json.loads(render_pack(pack, "json"))
    assert data["tests_to_run"][0]["run"] == "pytest tests/test_shop.py::TestCart::test_empty"


def test_a_removed_function_lists_the_lines_that_still_call_it(make_repo) -> None:
    b = shop(make_repo)
    b.write("shop/checkout.py", CHECKOUT.split("\n\ndef legacy_total")[0] + "\n")
    b.commit("drop legacy_total")
    pack = pack_of(b)
    assert pack.summary is not None
    assert [(r.name, r.path) for r in pack.summary.removed] == [("legacy_total", "shop/checkout.py")]
    site = next(s for s in pack.summary.call_sites if s.removed)
    assert (site.path, site.line, site.callee, site.not_updated) == (
        "shop/report.py",
        5,
        "legacy_total",
        True,
    )
    assert "uses removed `legacy_total`" in render_pack(pack, "markdown")


def test_a_change_without_code_says_so_in_one_line(make_repo) -> None:
    b = shop(make_repo)
    b.write(".github/workflows/ci.yml", "on: [push, pull_request]\n")
    b.commit("ci only")
    pack = pack_of(b, fmt="markdown")
    assert pack.symbols == [] and pack.summary is not None and pack.summary.no_code
    lines = [line for line in render_pack(pack, "markdown").splitlines() if line]
    assert lines[0] == "### knowing-pr · no code changed" and len(lines) == 3
    assert "```mermaid" not in render_comment(pack)


@pytest.mark.parametrize("budget", [8000, 2000, 500])
def test_changed_symbols_are_never_dropped_and_the_budget_holds_in_every_format(
    make_repo, budget: int
) -> None:
    b = shop(make_repo)
    body = "".join(
        f"\n\ndef helper_{i}(value):\n    '''Help {i}.'''\n    return value + {i}\n" for i in range(60)
    )
    b.write("shop/helpers.py", '"""Helpers."""' + body)
    b.commit("helpers")
    b.write("shop/helpers.py", '"""Helpers."""' + body.replace("return value +", "return value -"))
    b.commit("flip every helper")
    for fmt in FORMATS:
        pack = pack_of(b, budget=budget, fmt=fmt)
        assert pack.summary is not None
        changed = [s for s in pack.symbols if s.reason == "changed"]
        assert len(changed) + pack.summary.changed_left_out_count == 60
        assert len(changed) > 0
        # markdown counts what it cannot show: any of these packs fits the budget as markdown
        assert math.ceil(len(render_pack(pack, "markdown")) / 4) <= budget, fmt
        text = render_pack(pack, fmt)
        names_only = render_pack(dataclasses.replace(pack, symbols=[], edges=[]), fmt)
        lists_fit = math.ceil(len(names_only) / 4) <= budget
        if fmt == "json":
            data = json.loads(text)
            assert data["tokens_used"] == math.ceil(len(text) / 4)
            shown = [s for s in data["symbols"] if s["reason"] == "changed"]
            assert len(shown) + len(data["changed_left_out"]) == 60  # every one left out is named
            assert len(shown) + data["changed_left_out_count"] == 60
        elif fmt == "xml":
            root = ET.fromstring(text.encode("utf-8"))
            assert int(root.get("tokens_used", "0")) == math.ceil(len(text) / 4)
        if fmt == "markdown" or lists_fit:
            assert pack.tokens_used <= budget, fmt
        else:  # the names alone pass the budget: the best changed symbol in a line, nothing else
            assert [(s.reason, s.brief) for s in pack.symbols] == [("changed", True)], fmt
    if budget == 8000:
        assert not any(s.brief for s in changed)


def test_every_removed_symbol_is_named_in_json_and_counted_truly_in_markdown(make_repo) -> None:
    b = shop(make_repo)
    body = "".join(f"\n\ndef gone_{i}(value):\n    return value + {i}\n" for i in range(80))
    b.write("shop/gone.py", '"""Soon gone."""' + body)
    b.commit("eighty helpers")
    b.write("shop/gone.py", '"""Soon gone."""\n')
    b.commit("remove them all")
    data = json.loads(render_pack(pack_of(b, budget=500, fmt="json"), "json"))
    assert len(data["removed_symbols"]) == data["removed_symbols_total"] == 80
    pack = pack_of(b, budget=500, fmt="markdown")
    assert pack.summary is not None
    shown = len(pack.summary.removed)
    text = render_pack(pack, "markdown")
    assert "80 removed" in text.splitlines()[0]
    assert shown < 80 and f"… and {80 - shown} more removed symbols (all in the JSON pack)" in text


def test_a_pr_comment_replays_with_its_summary(make_repo) -> None:
    from knowing_pr.replay import manifest_of, pack_from_manifest

    b = shop(make_repo)
    b.write("shop/cart.py", CART.replace("def add(self, sku, qty):", "def add(self, sku, qty, price=0):"))
    b.commit("add a price")
    pack = pack_of(b, fmt="markdown")
    again = pack_from_manifest(json.loads(json.dumps(manifest_of(pack, {"mode": "pr"}))))
    assert render_comment(again) == render_comment(pack)


def test_calls_through_a_re_exporting_package_are_found_and_every_site_is_listed_compactly(make_repo) -> None:
    b = make_repo("pricing")
    b.write("shop/__init__.py", "from shop.pricing import discount_rate\n")
    b.write("shop/pricing.py", "def discount_rate(order):\n    return 0.1\n")
    b.write(
        "app/orders.py", "import shop\n\n\ndef price(order):\n    return 10 * shop.discount_rate(order)\n"
    )
    b.write(
        "app/report.py",
        "from shop import discount_rate\n\n\ndef rows(orders):\n    return [discount_rate(o) for o in orders]\n",
    )
    b.commit("base")
    b.write("shop/pricing.py", "def discount_rate(order, season):\n    return 0.1\n")
    b.commit("a season")
    pack = pack_of(b)
    assert pack.summary is not None
    places = {(s.path, s.line, s.not_updated) for s in pack.summary.call_sites}
    assert {("app/orders.py", 5, True), ("app/report.py", 5, True)} <= places
    assert set(pack.summary.call_site_lines) >= {"app/orders.py:5", "app/report.py:5"}
    assert json.loads(render_pack(pack, "json"))["call_site_lines"][:2] == pack.summary.call_site_lines[:2]


def test_optional_parameters_added_at_the_end_do_not_make_callers_not_updated(make_repo) -> None:
    b = shop(make_repo)
    b.write(
        "shop/checkout.py", CHECKOUT.replace("def legacy_total(cart):", "def legacy_total(cart, rate=1):")
    )
    b.commit("legacy_total takes an optional rate")
    pack = pack_of(b)
    assert pack.summary is not None
    assert [s.signature_changes for s in pack.symbols if s.reason == "changed"] == [("parameters",)]
    assert pack.summary.call_sites and not any(s.not_updated for s in pack.summary.call_sites)


CHI_CONTEXT = """package chi

type Context struct {
	keys []string
}

func (x *Context) Reset() {
	x.keys = x.keys[:0]
}
"""
CHI_TEST = """package chi

import (
	"net/http/httptest"
	"testing"
)

func TestReset(t *testing.T) {
	x := &Context{}
	x.Reset()
}

func TestHeaders(t *testing.T) {
	w := httptest.NewRecorder()
	cloned := w.Header().Clone()
	_ = cloned
}
"""


def test_a_method_guessed_on_an_unknown_receiver_brings_no_test(make_repo) -> None:
    """``w.Header().Clone()`` is the standard library's ``http.Header.Clone``: a test calling it
    does not reach a ``Clone`` the change adds to the repository's own type."""
    b = make_repo("chi")
    b.write("go.mod", "module example.com/chi\n\ngo 1.22\n")
    b.write("context.go", CHI_CONTEXT)
    b.write("context_test.go", CHI_TEST)
    b.commit("base")
    clone = "\nfunc (x *Context) Clone() *Context {\n\treturn &Context{keys: append([]string(nil), x.keys...)}\n}\n"
    b.write("context.go", CHI_CONTEXT + clone)
    b.commit("add Clone")
    pack = pack_of(b)
    assert pack.summary is not None
    assert [s.node.name for s in pack.symbols if s.reason == "changed"] == ["Clone"]
    assert "TestHeaders" not in {t.name for t in pack.summary.tests}
    assert not [site for site in pack.summary.call_sites if site.path == "context_test.go"]


def test_a_call_through_a_local_alias_is_listed_at_its_line(make_repo) -> None:
    b = shop(make_repo)
    b.write(
        "shop/report.py",
        REPORT.replace("    return legacy_total(cart)", "    total = legacy_total\n    return total(cart)"),
    )
    b.commit("an alias")
    b.write("shop/checkout.py", CHECKOUT.replace("def legacy_total(cart):", "def legacy_total(cart, rate):"))
    b.commit("legacy_total takes a rate")
    pack = pack_of(b)
    assert pack.summary is not None
    sites = [(s.path, s.line, s.text) for s in pack.summary.call_sites if s.path == "shop/report.py"]
    assert sites == [("shop/report.py", 6, "return total(cart)")]
