"""Render stage: goldens, the JSON contract, XML, the budget invariant, the PR comment.

Rewrite the golden files with ``KNOWING_PR_UPDATE_GOLDEN=1 pytest tests/test_render.py``.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import os
import random
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from knowing_pr.errors import UsageError
from knowing_pr.graph.merkle import params_digest
from knowing_pr.model import (
    CallSite,
    ChangeSummary,
    Node,
    Pack,
    RankedFile,
    RemovedSymbol,
    ScoredSymbol,
    SymbolKind,
    TestToRun,
    node_id,
)
from knowing_pr.render import (
    COMMENT_MARKER,
    FORMATS,
    RenderLimits,
    entry_cost,
    entry_text,
    fit_pack,
    frame_cost,
    hidden_lines,
    render_comment,
    render_pack,
)

GOLDEN_DIR = Path(__file__).parent / "golden"
PACK_ROOT = "3f9a0c1d2e4b5a6978c0d1e2f3a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6"
GRAPH_ROOT = "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d"
BASE = "1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d"
HEAD = "7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b"


def make_symbol(
    path: str,
    qualified_name: str,
    kind: str,
    reason: str,
    score: float,
    *,
    lines: tuple[int, int] = (1, 10),
    signature: str = "",
    doc: str = "",
    distance: int = 1,
    language: str = "python",
) -> ScoredSymbol:
    name = qualified_name.rsplit(".", 1)[-1]
    try:
        identity = node_id(path, qualified_name, kind)
    except UnicodeEncodeError:  # surrogates outside surrogateescape's range (fuzzing only)
        identity = node_id(repr(path), repr(qualified_name), kind)
    node = Node(
        id=identity,
        path=path,
        name=name,
        qualified_name=qualified_name,
        kind=kind,
        language=language,
        start_line=lines[0],
        end_line=lines[1],
        signature=signature,
        doc=doc,
        content_hash=identity[::-1],
    )
    return ScoredSymbol(
        node=node,
        score=score,
        rwr=round(score / 7, 6),
        authority=round(score / 3, 6),
        hub=round(score / 5, 6),
        distance=distance,
        reason=reason,
        is_seed=reason == "changed",
        is_test=reason == "test",
        components=(("blast", round(score * 0.6, 6)), ("distance", 0.5), ("recency", 0.25)),
    )


def fixture_symbols() -> list[ScoredSymbol]:
    return [
        make_symbol(
            "shop/cart.py",
            "shop.cart.Cart.add_item",
            SymbolKind.METHOD,
            "changed",
            0.9412,
            lines=(41, 67),
            signature="def add_item(self, sku: str, qty: int = 1) -> None",
            doc="Add `qty` units of `sku` to the cart.\n\nRaises ValueError when qty < 1.",
            distance=0,
        ),
        make_symbol(
            "shop/cart.py",
            "shop.cart.Cart.total",
            SymbolKind.METHOD,
            "changed",
            0.8125,
            lines=(69, 80),
            signature="def total(self) -> Money",
            doc="Sum of line prices after discounts.",
            distance=0,
        ),
        make_symbol(
            "shop/checkout.py",
            "shop.checkout.checkout",
            SymbolKind.FUNCTION,
            "caller",
            0.6031,
            lines=(12, 58),
            signature="def checkout(cart: Cart, payment: PaymentMethod) -> Order",
            doc="Turn a cart into an order; charges the payment method once.",
        ),
        make_symbol(
            "shop/api/views.py",
            "shop.api.views.CartView.post",
            SymbolKind.METHOD,
            "caller",
            0.5177,
            lines=(88, 120),
            signature="def post(self, request: Request) -> Response",
        ),
        make_symbol(
            "shop/inventory.py",
            "shop.inventory.reserve",
            SymbolKind.FUNCTION,
            "callee",
            0.4402,
            lines=(5, 31),
            signature="def reserve(sku: str, qty: int) -> Reservation",
            doc="Hold stock for a cart for 15 minutes. The hold expires on its own.",
        ),
        make_symbol(
            "shop/money.py",
            "shop.money.Money",
            SymbolKind.CLASS,
            "callee",
            0.3999,
            lines=(1, 95),
            signature="class Money(NamedTuple)",
            doc="An amount in minor units with its ISO 4217 currency.",
        ),
        make_symbol(
            "tests/test_cart.py",
            "tests.test_cart.test_add_item_rejects_zero",
            SymbolKind.FUNCTION,
            "test",
            0.3561,
            lines=(20, 27),
            signature="def test_add_item_rejects_zero(cart: Cart) -> None",
        ),
        make_symbol(
            "shop/pricing.py",
            "shop.pricing.apply_discounts",
            SymbolKind.FUNCTION,
            "cochange",
            0.2484,
            lines=(14, 49),
            signature="def apply_discounts(lines: list[Line]) -> list[Line]",
            doc="Apply every active promotion, best first",
        ),
        make_symbol(
            "shop/models.py",
            "shop.models.Product",
            SymbolKind.CLASS,
            "related",
            0.1520,
            lines=(10, 44),
            signature="class Product(Model)",
        ),
        make_symbol(
            "shop/search.py",
            "shop.search.find_products",
            SymbolKind.FUNCTION,
            "related",
            0.1018,
            lines=(3, 22),
            signature="def find_products(query: str) -> list[Product]",
            doc="Full-text search over product names.",
        ),
    ]


def fixture_summary() -> ChangeSummary:
    return ChangeSummary(
        call_sites=[
            CallSite(
                "shop/api/views.py", 97, "CartView.post", None, "Cart.add_item", None,
                text="cart.add_item(sku)", not_updated=True,
            ),
            CallSite("shop/checkout.py", 30, "checkout", None, "Cart.total", None, text="total = cart.total()"),
            CallSite("shop/cart.py", 90, "Cart.merge", None, "Cart.add_item", None, in_change=True),
        ],
        call_sites_total=3,
        call_sites_outside=2,
        call_sites_not_updated=1,
        tests=[
            TestToRun(
                "test_add_item_rejects_zero", "tests/test_cart.py", 20, "pytest",
                "pytest tests/test_cart.py::test_add_item_rejects_zero", hops=0, changed=True,
                reason="edited", evidence="edited in this change",
            ),
            TestToRun(
                "TestCheckout::test_total", "tests/test_checkout.py", 8, "pytest",
                "pytest tests/test_checkout.py::TestCheckout::test_total", hops=2, via="checkout",
                evidence="calls the change through `checkout`",
            ),
            TestToRun(
                "tests/test_pricing.py", "tests/test_pricing.py", 1, "pytest",
                "pytest tests/test_pricing.py", hops=0, reason="imports",
                evidence="imports `shop/pricing.py`", scope="file",
            ),
        ],
        tests_total=3,
        removed=[RemovedSymbol("old_total", "function", "shop/legacy.py", 4)],
        cochange_with={"shop/pricing.py": "shop/cart.py"},
    )  # fmt: skip


def fixture_pack() -> Pack:
    symbols = fixture_symbols()
    symbols[0] = dataclasses.replace(
        symbols[0], signature_changes=("parameters",), signature_before="def add_item(self, sku: str) -> None"
    )
    ids = {sym.node.qualified_name: sym.node.id for sym in symbols}
    edges = [
        (ids["shop.checkout.checkout"], ids["shop.cart.Cart.total"], "calls"),
        (ids["shop.api.views.CartView.post"], ids["shop.cart.Cart.add_item"], "calls"),
        (ids["shop.cart.Cart.add_item"], ids["shop.inventory.reserve"], "calls"),
        (ids["shop.cart.Cart.total"], ids["shop.money.Money"], "references"),
        (ids["tests.test_cart.test_add_item_rejects_zero"], ids["shop.cart.Cart.add_item"], "tests"),
        (ids["shop.cart.Cart.total"], ids["shop.pricing.apply_discounts"], "calls"),
        (ids["shop.search.find_products"], ids["shop.models.Product"], "references"),
        # a duplicate and an edge to a symbol that did not make the pack are ignored
        (ids["shop.checkout.checkout"], ids["shop.cart.Cart.total"], "calls"),
        (ids["shop.checkout.checkout"], "0" * 32, "calls"),
    ]
    return Pack(
        pack_root=PACK_ROOT,
        mode="pr",
        token_budget=4000,
        tokens_used=2788,
        graph_root=GRAPH_ROOT,
        commit=HEAD,
        inputs={"files": ["shop/cart.py", "tests/test_cart.py"], "base": BASE, "head": HEAD},
        symbols=symbols,
        edges=edges,
        params={"rank": {"restart_prob": 0.2, "max_iter": 20}, "pack": {"budget_tokens": 4000}},
        dropped=[(node_id("shop/legacy.py", "shop.legacy.old_total", "function"), "budget")],
        cochange=[("shop/pricing.py", 7, 9), ("docs/cart.md", 3, 9)],
        summary=fixture_summary(),
        files=[
            RankedFile(
                "shop/pricing.py",
                0.61,
                ("cochange", "callee"),
                "changed with shop/cart.py in 7 of its 9 commits; is used by shop/cart.py (3 links)",
            ),
            RankedFile("tests/test_pricing.py", 0.2, ("test",), "tests shop/pricing.py"),
        ],
    )


def check_golden(name: str, text: str) -> None:
    path = GOLDEN_DIR / name
    if os.environ.get("KNOWING_PR_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="")
        return
    expected = path.read_text(encoding="utf-8")
    if text != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True), text.splitlines(keepends=True), str(path), "rendered"
            )
        )
        pytest.fail(f"{name} differs from its golden file (KNOWING_PR_UPDATE_GOLDEN=1 rewrites):\n{diff}")


# ---------------------------------------------------------------- goldens


@pytest.mark.parametrize(
    ("fmt", "name"), [("markdown", "pack.md"), ("json", "pack.json"), ("xml", "pack.xml")]
)
def test_pack_matches_golden(fmt: str, name: str) -> None:
    check_golden(name, render_pack(fixture_pack(), fmt))


def test_comment_matches_golden() -> None:
    check_golden("comment.md", render_comment(fixture_pack()))


def test_markdown_answer_first_then_details_then_one_footer() -> None:
    text = render_pack(fixture_pack(), "markdown")
    lines = text.splitlines()
    assert (
        lines[0] == "### knowing-pr · 2 symbols changed, 1 removed, 1 call site not updated, 3 tests to run"
    )
    headings = re.findall(r"^\*\*(.+?)\*\*", text, flags=re.MULTILINE)
    assert headings == [
        "What changed",
        "Callers outside this change",
        "Tests to run",
        "Usually changed together, not in this change",
    ]
    assert re.findall(r"^#### (.+?) \(\d+\)$", text, flags=re.MULTILINE) == [
        "Who calls the changed code",
        "What the changed code uses",
        "Code of tests near the change",
        "Code of files changed with these before",
        "Related",
    ]
    assert text.index("<details>") > text.index("**Usually changed together")
    changed = (
        "- method `Cart.add_item(sku: str, qty: int = 1) -> None` — `shop/cart.py:41` · **signature changed**: "
        "parameters (was `Cart.add_item(sku: str) -> None`)\n"
    )
    assert changed in text
    assert "- ⚠️ `shop/api/views.py:97` `cart.add_item(sku)` — in `CartView.post` · not updated\n" in text
    assert "- `pytest tests/test_cart.py::test_add_item_rejects_zero` — edited in this change\n" in text
    assert "- removed: function `old_total` — `shop/legacy.py:4`\n" in text
    assert "- `shop/pricing.py` — in 7 of the last 9 commits that touched `shop/cart.py`\n" in text
    # the first sentence of the doc only, with its backticks escaped
    assert "— Hold stock for a cart for 15 minutes.\n" in text and "expires on its own" not in text
    # no scores, token counts or full commit hashes; the PackRoot once, in the footer
    assert "score" not in text and "token" not in text
    assert BASE not in text and HEAD not in text and GRAPH_ROOT not in text
    assert text.count(PACK_ROOT) == 1
    assert lines[-1] == f"knowing-pr · replay: `knowing-pr replay {PACK_ROOT}`"
    # every entry is one line: the text renders the same with and without hard line breaks
    for line in lines:
        if line.startswith("- "):
            assert "  " not in line.strip()


def test_sections_are_omitted_when_empty_and_replay_command_is_used() -> None:
    pack = fixture_pack()
    pack.symbols = [sym for sym in pack.symbols if sym.reason in ("changed", "test")]
    pack.cochange = []
    text = render_pack(pack, "markdown", replay_command="uvx knowing-pr replay --verify X")
    assert re.findall(r"^#### (.+)$", text, flags=re.MULTILINE) == [
        "Code of tests near the change (1)",
        "How they connect",
    ]
    assert text.rstrip().endswith("knowing-pr · replay: `uvx knowing-pr replay --verify X`")
    assert "Usually changed together" not in text and "Who calls" not in text


def test_a_change_without_code_is_one_line_and_the_footer() -> None:
    pack = fixture_pack()
    pack.symbols, pack.edges, pack.cochange = [], [], []
    pack.summary = ChangeSummary(no_code=True)
    pack.inputs = {
        "files": [".github/workflows/ci.yml", "README.md"],
        "files_total": 2,
        "base": BASE,
        "head": HEAD,
    }
    lines = [line for line in render_pack(pack, "markdown").splitlines() if line]
    assert lines == [
        "### knowing-pr · no code changed",
        "No code changed: the change touches no source file (`.github/workflows/ci.yml`, `README.md`).",
        f"knowing-pr · replay: `knowing-pr replay {PACK_ROOT}`",
    ]
    assert json.loads(render_pack(pack, "json"))["no_code_change"] is True


def test_brief_entries_and_changed_symbols_left_out_are_said() -> None:
    pack = fixture_pack()
    pack.symbols[1] = dataclasses.replace(pack.symbols[1], brief=True)
    assert pack.summary is not None
    pack.summary.changed_left_out = ["shop/cart.py:99 Cart.clear"]
    pack.summary.changed_left_out_count = 4
    text = render_pack(pack, "markdown")
    assert "- method `Cart.total` — `shop/cart.py:69`\n" in text
    assert "- … and 4 more changed symbols the budget had no room for (named in the JSON pack)\n" in text
    data = json.loads(render_pack(pack, "json"))
    brief = next(s for s in data["symbols"] if s["name"] == "total")
    assert brief["brief"] is True and "components" not in brief and "signature" not in brief
    assert data["changed_left_out"] == ["shop/cart.py:99 Cart.clear"] and data["changed_left_out_count"] == 4
    root = ET.fromstring(render_pack(pack, "xml").encode("utf-8"))
    assert root.get("changed_left_out_count") == "4"
    assert [e.get("symbol") for e in root.findall("changed_left_out")] == ["shop/cart.py:99 Cart.clear"]


def diagram_of(text: str) -> str:
    return text.split("```mermaid\n", 1)[1].split("```", 1)[0]


def test_mermaid_diagram_has_packed_edges_only_one_per_pair_and_the_change_highlighted() -> None:
    pack = fixture_pack()
    ids = {sym.node.qualified_name: sym.node.id for sym in pack.symbols}
    pack.edges += [
        (ids["shop.cart.Cart.add_item"], ids["shop.api.views.CartView.post"], "references"),  # same pair
        (ids["shop.cart.Cart.total"], ids["shop.money.Money"], "contains"),  # containment: never drawn
    ]
    diagram = diagram_of(render_pack(pack, "markdown"))
    edge_lines = [line for line in diagram.splitlines() if "-->" in line]
    # 11 given: duplicates, a containment edge, one outside the pack, one not connected to the change
    assert len(edge_lines) == 6
    assert "-->|calls|" in diagram and "-->|tests|" in diagram and "-->|uses|" in diagram
    assert "contains" not in diagram
    assert diagram.splitlines()[-1] == "  class n1,n2 changed"
    labels = re.findall(r'\["(.+?)"\]', diagram)
    assert len(labels) == len(set(labels)) and "Cart.add_item" in labels


def test_diagram_labels_are_unique_and_it_is_left_out_when_nothing_connects() -> None:
    pack = fixture_pack()
    first, second = pack.symbols[0], pack.symbols[2]
    twin_node = dataclasses.replace(second.node, qualified_name="shop.checkout.Cart.add_item")
    twin = dataclasses.replace(second, node=twin_node)
    pack.symbols[2] = twin
    labels = re.findall(r'\["(.+?)"\]', diagram_of(render_pack(pack, "markdown")))
    assert "Cart.add_item in cart.py" in labels and "Cart.add_item in checkout.py" in labels
    assert first.node.id != twin.node.id
    pack.edges = []
    assert "```mermaid" not in render_pack(pack, "markdown")


# ---------------------------------------------------------------- JSON contract

CONTRACT_TOP = [
    "pack_root",
    "mode",
    "token_budget",
    "tokens_used",
    "graph_root",
    "commit",
    "inputs",
    "symbols",
    "edges",
]
SUMMARY_KEYS = [
    "no_code_change",
    "call_sites",
    "call_sites_total",
    "call_sites_outside",
    "call_sites_not_updated",
    "call_site_lines",
    "tests_to_run",
    "tests_to_run_total",
    "removed_symbols",
    "removed_symbols_total",
    "changed_left_out",
    "changed_left_out_count",
    "reviewers",
]
CONTRACT_SYMBOL = {
    "id": str,
    "name": str,
    "qualified_name": str,
    "kind": str,
    "file": str,
    "start_line": int,
    "end_line": int,
    "score": float,
    "distance": int,
    "reason": str,
    "rwr": float,
    "authority": float,
    "hub": float,
    "components": dict,
    "signature": str,
    "language": str,
    "is_test": bool,
}


def test_json_contract_keys_types_and_order() -> None:
    pack = fixture_pack()
    random.Random(7).shuffle(pack.symbols)  # the renderer sorts by score
    data = json.loads(render_pack(pack, "json"))
    assert list(data)[: len(CONTRACT_TOP)] == CONTRACT_TOP
    assert {"params", "cochange", "dropped_count"} <= set(data)
    assert data["pack_root"] == PACK_ROOT and re.fullmatch(r"[0-9a-f]{64}", data["graph_root"])
    assert data["mode"] == "pr" and data["token_budget"] == 4000
    assert data["tokens_used"] == math.ceil(len(render_pack(pack, "json")) / 4)  # its own text's tokens
    assert data["commit"] == HEAD
    assert data["inputs"] == {"files": ["shop/cart.py", "tests/test_cart.py"], "base": BASE, "head": HEAD}
    assert data["dropped_count"] == 1
    assert data["cochange"][0] == {
        "path": "shop/pricing.py",
        "together": 7,
        "out_of": 9,
        "with": "shop/cart.py",
    }
    assert data["params"] == {"digest": params_digest(pack.params)}
    # the reviewer's summary, after the contract's members
    assert list(data)[-len(SUMMARY_KEYS) :] == SUMMARY_KEYS
    assert data["no_code_change"] is False
    assert data["call_sites"][0] == {
        "file": "shop/api/views.py",
        "line": 97,
        "caller": "CartView.post",
        "callee": "Cart.add_item",
        "callee_id": None,
        "text": "cart.add_item(sku)",
        "in_change": False,
        "not_updated": True,
        "removed": False,
    }
    assert (data["call_sites_total"], data["call_sites_outside"], data["call_sites_not_updated"]) == (3, 2, 1)
    assert data["tests_to_run"][0]["run"] == "pytest tests/test_cart.py::test_add_item_rejects_zero"
    assert data["tests_to_run"][1] == {
        "name": "TestCheckout::test_total",
        "file": "tests/test_checkout.py",
        "line": 8,
        "framework": "pytest",
        "run": "pytest tests/test_checkout.py::TestCheckout::test_total",
        "changed": False,
        "hops": 2,
        "via": "checkout",
        "reason": "calls",
        "evidence": "calls the change through `checkout`",
        "scope": "test",
    }
    assert data["tests_to_run"][2]["evidence"] == "imports `shop/pricing.py`"
    assert data["tests_to_run"][2]["scope"] == "file"
    assert data["tests_to_run_total"] == len(data["tests_to_run"]) == 3
    assert data["removed_symbols"] == [
        {"name": "old_total", "kind": "function", "file": "shop/legacy.py", "line": 4}
    ]
    scores = [sym["score"] for sym in data["symbols"]]
    assert scores == sorted(scores, reverse=True) and len(scores) == 10
    for sym in data["symbols"]:
        for key, kind in CONTRACT_SYMBOL.items():
            assert isinstance(sym[key], kind), (key, sym[key])
        assert sym["start_line"] >= 1 and "\\" not in sym["file"]
    first = data["symbols"][0]
    assert first["qualified_name"] == "shop.cart.Cart.add_item" and first["reason"] == "changed"
    assert first["signature_changed"] is True and first["signature_changes"] == ["parameters"]
    assert first["signature_before"] == "def add_item(self, sku: str) -> None"
    assert data["symbols"][1]["signature_changed"] is False
    assert all("signature_changed" not in sym for sym in data["symbols"] if sym["reason"] != "changed")
    assert first["components"] == {"blast": 0.56472, "distance": 0.5, "recency": 0.25}
    assert first["doc"] == "Add `qty` units of `sku` to the cart."
    assert len(data["edges"]) == data["edges_total"] == 7
    assert set(data["edges"][0]) == {"source", "target", "type"}
    symbol_ids = {sym["id"] for sym in data["symbols"]}
    assert all(edge["source"] in symbol_ids and edge["target"] in symbol_ids for edge in data["edges"])


def test_json_matches_json_dumps_layout() -> None:
    text = render_pack(fixture_pack(), "json")
    assert text == json.dumps(json.loads(text), ensure_ascii=False, indent=2) + "\n"


def test_json_empty_pack_is_valid() -> None:
    pack = fixture_pack()
    pack.symbols, pack.edges, pack.commit = [], [], None
    text = render_pack(pack, "json")
    data = json.loads(text)
    assert data["symbols"] == [] and data["edges"] == [] and data["commit"] is None
    assert text == json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def test_json_keeps_paths_exact_even_with_surrogates_and_controls() -> None:
    path = "src/caf\udce9/\u202eevil\n.py"
    pack = fixture_pack()
    pack.symbols = [make_symbol(path, "m.f", "function", "changed", 0.5, doc="x\x00y. z")]
    text = render_pack(pack, "json")
    text.encode("utf-8")  # no lone surrogate left raw
    data = json.loads(text)
    assert data["symbols"][0]["file"] == path
    assert data["symbols"][0]["doc"] == "x\\x00y."  # descriptive text: shown escaped, as in markdown
    assert "\u202e" not in text and "\\u202e" in text  # exact data, but no raw bidi character


def test_non_finite_scores_become_null_in_json() -> None:
    pack = fixture_pack()
    pack.symbols = [make_symbol("a.py", "a.f", "function", "changed", math.nan)]
    data = json.loads(render_pack(pack, "json"))
    assert data["symbols"][0]["score"] is None
    assert "- function `a.f` — `a.py:1`" not in render_pack(pack, "markdown")  # its signature is shown


# ---------------------------------------------------------------- XML


def test_xml_parses_and_carries_every_symbol() -> None:
    root = ET.fromstring(render_pack(fixture_pack(), "xml").encode("utf-8"))
    assert root.tag == "pack" and root.get("pack_root") == PACK_ROOT and root.get("mode") == "pr"
    symbols = root.findall("symbol")
    assert [s.get("qualified_name") for s in symbols][:2] == [
        "shop.cart.Cart.add_item",
        "shop.cart.Cart.total",
    ]
    assert len(symbols) == 10 and len(root.findall("edge")) == 7
    assert symbols[0].findtext("signature") == "def add_item(self, sku: str, qty: int = 1) -> None"
    files = [v.text for v in root.findall("inputs/input[@name='files']/value")]
    assert files == ["shop/cart.py", "tests/test_cart.py"]


def test_xml_escapes_and_drops_invalid_characters() -> None:
    pack = fixture_pack()
    hostile = "a\"<b>&'c\x00\x1b\ufffe\udcff]]>"
    pack.symbols = [make_symbol(hostile, hostile, "function", "changed", 0.5, signature=hostile, doc=hostile)]
    pack.inputs = {"task": hostile, "files": [hostile]}
    root = ET.fromstring(render_pack(pack, "xml").encode("utf-8"))
    expected = "a\"<b>&'c\\x00\\x1b\\ufffe\\udcff]]>"  # what XML cannot hold, shown escaped
    assert root.find("symbol").get("file") == expected  # type: ignore[union-attr]
    # descriptive fields are cleaned like markdown text: a lone surrogate becomes U+FFFD
    assert root.findtext("symbol/signature") == "a\"<b>&'c\\x00\\x1b\\ufffe\ufffd]]>"
    assert root.findtext("inputs/input[@name='task']/value") == expected


# ---------------------------------------------------------------- entries and costs


@pytest.mark.parametrize("fmt", FORMATS)
def test_entry_text_appears_verbatim(fmt: str) -> None:
    pack = fixture_pack()
    text = render_pack(pack, fmt)
    for sym in pack.symbols:
        entry = entry_text(sym, fmt)
        assert entry.removesuffix(",\n") in text
        assert entry_cost(sym, fmt) == math.ceil(len(entry) / 4)
        assert entry_cost(sym, fmt, 3.0) == math.ceil(len(entry) / 3)


def test_unknown_format_is_a_usage_error() -> None:
    pack = fixture_pack()
    with pytest.raises(UsageError):
        render_pack(pack, "html")
    with pytest.raises(UsageError):
        entry_text(pack.symbols[0], "yaml")
    with pytest.raises(UsageError):
        frame_cost("toml", mode="pr", token_budget=100, inputs={})


def test_limits_that_break_the_line_cap_are_refused() -> None:
    with pytest.raises(UsageError):
        RenderLimits(name_bytes=600, path_bytes=600)


def test_rendering_is_deterministic() -> None:
    first = fixture_pack()
    second = fixture_pack()
    random.Random(3).shuffle(second.edges)
    for fmt in FORMATS:
        assert render_pack(first, fmt) == render_pack(second, fmt)


def test_edge_reserve_caps_diagram_and_edge_lists() -> None:
    pack = fixture_pack()
    symbols = [make_symbol(f"m{i}.py", f"m{i}.f", "function", "related", 1 - i / 100) for i in range(60)]
    pack.symbols = [*fixture_symbols()[:2], *symbols]
    pack.edges = [(a.node.id, b.node.id, "calls") for a in pack.symbols for b in pack.symbols if a is not b]
    pack.token_budget = 100_000
    diagram = diagram_of(render_pack(pack, "markdown"))
    assert len(re.findall(r"^  n\d+\[", diagram, flags=re.MULTILINE)) == 12  # at most 12 nodes
    data = json.loads(render_pack(pack, "json"))
    assert len(data["edges"]) == 40 and data["edges_total"] == 62 * 61
    pack.token_budget = 2000  # reserve 800 characters: a handful of edges
    data = json.loads(render_pack(pack, "json"))
    assert 1 <= len(data["edges"]) < 10
    # the best-ranked endpoints come first
    top = max(pack.symbols, key=lambda sym: sym.score).node.id
    assert data["edges"][0]["source"] == top or data["edges"][0]["target"] == top


# ---------------------------------------------------------------- budget invariant

TEXT = st.text(st.characters(exclude_categories=()), max_size=60)
REASONS = ("changed", "caller", "callee", "test", "cochange", "related", "match", "other")


@st.composite
def symbols_strategy(draw: st.DrawFn, count: int) -> list[ScoredSymbol]:
    out = []
    for index in range(count):
        path = draw(TEXT) or "p.py"
        qualified = draw(TEXT)
        kind = draw(st.sampled_from([*SymbolKind.ALL, "weird kind!"]))
        start = draw(st.integers(1, 10**6))
        sym = make_symbol(
            f"{path}{index}",
            qualified,
            kind,
            draw(st.sampled_from(REASONS)),
            draw(st.floats(0, 1)),
            lines=(start, start + draw(st.integers(0, 10**5))),
            signature=draw(st.text(max_size=draw(st.sampled_from([0, 40, 400])))),
            doc=draw(st.text(max_size=draw(st.sampled_from([0, 80, 800])))),
        )
        out.append(sym)
    return out


@st.composite
def summary_strategy(draw: st.DrawFn) -> ChangeSummary:
    line = st.integers(1, 10**6)
    sites = draw(
        st.lists(
            st.builds(
                CallSite, TEXT, line, TEXT, st.none(), TEXT, st.none(), TEXT, st.booleans(), st.booleans(),
                st.booleans(),
            ),
            max_size=6,
        )
    )  # fmt: skip
    tests = draw(
        st.lists(
            st.builds(TestToRun, TEXT, TEXT, line, TEXT, TEXT, st.integers(0, 3), st.booleans(), TEXT),
            max_size=6,
        )
    )
    removed = draw(st.lists(st.builds(RemovedSymbol, TEXT, TEXT, TEXT, line), max_size=3))
    return ChangeSummary(
        no_code=draw(st.booleans()),
        call_sites=sites,
        call_sites_total=len(sites) + draw(st.integers(0, 10**6)),
        call_sites_outside=draw(st.integers(0, 10**6)),
        call_sites_not_updated=draw(st.integers(0, 10**6)),
        tests=tests,
        tests_total=len(tests) + draw(st.integers(0, 10**6)),
        removed=removed,
        changed_left_out=draw(st.lists(TEXT, max_size=3)),
        changed_left_out_count=draw(st.integers(0, 10**6)),
    )


def pack_greedily(
    symbols: list[ScoredSymbol], fmt: str, budget: int, frame: int, chars_per_token: float
) -> tuple[list[ScoredSymbol], int]:
    chosen, used = [], frame
    for sym in sorted(symbols, key=lambda s: -s.score):
        cost = entry_cost(sym, fmt, chars_per_token)
        if used + cost <= budget:
            chosen.append(sym)
            used += cost
    return chosen, used


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(data=st.data())
def test_budget_invariant_holds_for_every_format(data: st.DataObject) -> None:
    fmt = data.draw(st.sampled_from(FORMATS))
    chars_per_token = data.draw(st.sampled_from([4.0, 3.0, 4.5]))
    mode = data.draw(st.sampled_from(["pr", "files", "task"]))
    symbols = data.draw(symbols_strategy(data.draw(st.integers(0, 20))))
    files = data.draw(st.lists(TEXT, max_size=5))
    inputs: dict[str, object] = {"files": files, "base": data.draw(st.none() | TEXT), "head": HEAD}
    if mode == "task":
        inputs = {"task": data.draw(st.text(max_size=700))}
    cochange = data.draw(st.lists(st.tuples(TEXT, st.integers(0, 10**6), st.integers(0, 10**6)), max_size=12))
    commit = data.draw(st.none() | st.just(HEAD))
    summary = data.draw(st.none() | summary_strategy()) if mode == "pr" else None
    params = {"pack": {"budget_tokens": 1, "chars_per_token": chars_per_token}}

    def frame_for(budget: int) -> int:
        return frame_cost(
            fmt,
            mode=mode,
            token_budget=budget,
            inputs=inputs,
            graph_root=GRAPH_ROOT,
            commit=commit,
            params=params,
            cochange=cochange,
            chars_per_token=chars_per_token,
            summary=summary,
        )

    if data.draw(st.booleans()):
        budget = data.draw(st.integers(50, 8000))
        chosen, used = pack_greedily(symbols, fmt, budget, frame_for(budget), chars_per_token)
    else:  # a budget met exactly: frame + chosen entries == budget
        chosen = symbols
        entries = sum(entry_cost(sym, fmt, chars_per_token) for sym in chosen)
        budget = entries + 1
        for _ in range(60):
            budget = max(budget, entries + frame_for(budget))
        used = entries + frame_for(budget)
        if used > budget:
            chosen, used = pack_greedily(symbols, fmt, budget, frame_for(budget), chars_per_token)
    ids = [sym.node.id for sym in chosen]
    edges = (
        [
            (
                data.draw(st.sampled_from(ids)),
                data.draw(st.sampled_from(ids)),
                data.draw(st.sampled_from(["calls", "tests", "x"])),
            )
            for _ in range(data.draw(st.integers(0, 80)))
        ]
        if ids
        else []
    )
    pack = Pack(
        pack_root=PACK_ROOT,
        mode=mode,
        token_budget=budget,
        tokens_used=used,
        graph_root=GRAPH_ROOT,
        commit=commit,
        inputs=inputs,
        symbols=sorted(chosen, key=lambda s: -s.score),
        edges=edges,
        params=params,
        dropped=[("x", "budget")] * (len(symbols) - len(chosen)),
        cochange=cochange,
        summary=summary,
    )
    text = render_pack(pack, fmt)
    text.encode("utf-8")
    if frame_for(budget) <= budget:
        assert math.ceil(len(text) / chars_per_token) <= budget
        assert fit_pack(pack, fmt).symbols == pack.symbols  # the costs were right: nothing had to be cut
    if fmt == "json":
        assert len(json.loads(text)["symbols"]) == len(chosen)
    elif fmt == "xml":
        assert len(ET.fromstring(text.encode("utf-8")).findall("symbol")) == len(chosen)


def test_frame_cost_grows_with_the_budget_only_through_the_edge_reserve() -> None:
    inputs = {"files": ["a.py"], "base": BASE, "head": HEAD}
    small = frame_cost("markdown", mode="pr", token_budget=1000, inputs=inputs)
    large = frame_cost("markdown", mode="pr", token_budget=8000, inputs=inputs)
    assert 0 < small < 1000 * 0.1 + 250
    assert large - small == pytest.approx(700, abs=5)  # 10% of the extra 7,000 tokens
    with_summary = frame_cost(
        "markdown", mode="pr", token_budget=1000, inputs=inputs, summary=fixture_summary()
    )
    assert with_summary > small  # the summary's lines are part of the frame


# ---------------------------------------------------------------- PR comment


def many_symbols_pack(count: int) -> Pack:
    pack = fixture_pack()
    reasons = ("changed", "caller", "callee", "test", "related")
    pack.symbols = [
        make_symbol(
            f"pkg/module_{i:03d}.py",
            f"pkg.module_{i:03d}.function_{i:03d}",
            "function",
            reasons[i % len(reasons)],
            1 - i / (count + 1),
            signature=f"def function_{i:03d}(alpha: int, beta: str = 'x') -> dict[str, int]",
            doc="Compute the frobnication table for the given alpha and beta values.",
        )
        for i in range(count)
    ]
    pack.edges = [(pack.symbols[i].node.id, pack.symbols[i + 1].node.id, "calls") for i in range(count - 1)]
    return pack


def assert_comment_structure(body: str) -> None:
    lines = body.split("\n")
    assert lines[0] == COMMENT_MARKER
    assert re.fullmatch(r"<!-- knowing-pr:pack-root=[0-9a-f]{64} -->", lines[1])
    tokens = MarkdownIt("commonmark").enable("table").parse(body)
    html = [t.content for t in tokens if t.type == "html_block"]
    opened = sum(chunk.count("<details>") for chunk in html)
    closed = sum(chunk.count("</details>") for chunk in html)
    assert opened == closed
    assert body.count("<details>") == body.count("</details>")
    for token in tokens:
        if token.type == "fence":
            assert token.info == "mermaid"
    fence_lines = [line for line in lines if line.startswith("```")]
    assert len(fence_lines) % 2 == 0
    assert not any(child.type == "html_inline" for token in tokens for child in token.children or [])


def test_comment_has_hidden_lines_then_the_answer_open_and_the_details_folded() -> None:
    pack = many_symbols_pack(30)
    body = render_comment(pack)
    assert_comment_structure(body)
    assert body.split("\n")[:2] == hidden_lines(pack)
    assert body.count("<details>") == 1 and body.index("**Tests to run**") < body.index("<details>")
    assert "**Callers outside this PR**" in body and "this change" not in body.split("<details>")[0]
    assert "were cut" not in body
    # related symbols: at most ten in a comment, the rest counted; all of them in the markdown pack
    related = [s for s in pack.symbols if s.reason == "related"]
    assert len(related) == 6
    shown = body.split("#### Related", 1)[1]
    assert sum(line.startswith("- function") for line in shown.splitlines()) == 6


def test_comment_counts_related_symbols_of_the_changed_files_instead_of_listing_them() -> None:
    pack = many_symbols_pack(160)
    changed_path = next(s.node.path for s in pack.symbols if s.reason == "changed")
    pack.symbols = [
        dataclasses.replace(s, node=dataclasses.replace(s.node, path=changed_path)) if i % 10 == 4 else s
        for i, s in enumerate(pack.symbols)
    ]
    body = render_comment(pack)
    related = body.split("#### Related", 1)[1].split("####", 1)[0]
    assert sum(line.startswith("- function") for line in related.splitlines()) == 10
    assert "- and 16 other symbols of the changed files, 6 more (all in the job summary)" in related
    pack.token_budget = 100_000  # the markdown pack is fitted to its budget
    full = render_pack(pack, "markdown").split("#### Related", 1)[1].split("####", 1)[0]
    assert sum(line.startswith("- function") for line in full.splitlines()) == 32


def test_the_comment_and_the_markdown_pack_say_the_same_answer() -> None:
    pack = fixture_pack()
    comment = render_comment(pack).replace("this PR", "this change")
    markdown = render_pack(pack, "markdown")
    assert comment.split("\n", 2)[2] == markdown


@pytest.mark.parametrize("max_bytes", [3000, 6000, 20000])
def test_comment_cuts_lowest_ranked_entries_to_fit_but_never_the_change(max_bytes: int) -> None:
    pack = many_symbols_pack(200)
    # five changed symbols; no related ones (a comment lists ten of those at most)
    for index, sym in enumerate(pack.symbols):
        if sym.reason == "related" or (sym.reason == "changed" and index >= 25):
            object.__setattr__(sym, "reason", "callee")
    body = render_comment(pack, max_bytes=max_bytes)
    assert len(body.encode("utf-8")) <= max_bytes
    assert_comment_structure(body)
    changed = [sym for sym in pack.symbols if sym.reason == "changed"]
    others = [sym for sym in pack.symbols if sym.reason != "changed"]
    assert all(entry_text(sym, "markdown") in body for sym in changed)
    kept = [sym for sym in others if entry_text(sym, "markdown") in body]
    assert kept == others[: len(kept)]  # the top of the ranking, every kept entry whole
    cut = len(others) - len(kept)
    assert cut > 0
    assert (
        f"The diagram was left out and {cut} lower-ranked symbols were cut to fit GitHub's comment limit; "
        "the full pack is in the job summary / artifact." in body
    )


def test_comment_too_small_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        render_comment(fixture_pack(), max_bytes=200)


def test_comment_of_a_huge_pack_stays_under_githubs_limit() -> None:
    pack = many_symbols_pack(2000)
    for sym in pack.symbols:  # the comment lists related symbols of other files only up to ten
        if sym.reason == "related":
            object.__setattr__(sym, "reason", "callee")
    body = render_comment(pack)
    size = len(body.encode("utf-8"))
    assert 60_000 < size <= 65_536  # cut close to the limit, not far below it
    assert_comment_structure(body)
    kept = sum(line.startswith("- function") for line in body.splitlines())
    assert f"{2000 - kept:,} lower-ranked symbols were cut" in body


def test_diagram_labels_stay_unique_when_names_are_cut_to_the_label_length() -> None:
    pack = fixture_pack()
    long = "a_very_long_function_name_that_is_cut_at_the_label_length"
    symbols = [
        make_symbol(
            "pkg/same.py", f"pkg.same.C{i}.{long}", "method", "changed" if i == 0 else "caller", 1 - i / 10
        )
        for i in range(4)
    ]
    symbols = [
        dataclasses.replace(s, node=dataclasses.replace(s.node, qualified_name=f"pkg.same.{long}"))
        for s in symbols
    ]
    pack.symbols = symbols
    pack.edges = [(s.node.id, symbols[0].node.id, "calls") for s in symbols[1:]]
    labels = re.findall(r'\["(.+?)"\]', diagram_of(render_pack(pack, "markdown")))
    assert len(labels) == 4 and len(set(labels)) == 4


def test_a_long_call_line_is_cut_around_the_callee_not_before_it() -> None:
    from knowing_pr.render.summary import call_excerpt

    line = "console.log(colorize()`[${this.method.toUpperCase()}] Request [${new URL(axios.getUri(cfg))}]`)"
    shown = call_excerpt(line, "Axios.getUri", 72)
    assert "getUri(" in shown and shown.startswith("…") and len(shown) <= 72
    short = "const fullPath = buildFullPath(config.baseURL, config.url);"
    assert call_excerpt(short, "buildFullPath", 72) == short
    early = "x = buildFullPath(" + "a, " * 40 + ")"
    cut = call_excerpt(early, "buildFullPath", 72)
    assert cut.startswith("x = buildFullPath(") and cut.endswith("…") and len(cut) == 72


@pytest.mark.parametrize("chars_per_token", [3.0, 4.5])
def test_the_frame_reserves_the_edges_in_the_packs_own_characters_per_token(chars_per_token: float) -> None:
    """A pack costed exactly to its budget at a ``chars_per_token`` other than the render
    limits' default, with its edge list full: nothing has to be cut when it is rendered (the
    frame's worst case once reserved the edges at 4 characters a token)."""
    symbols = [make_symbol(f"p{i}.py", "", "module", "changed", 0.0) for i in range(21)]
    ids = [s.node.id for s in symbols]
    edges = [(ids[i], ids[0], "calls") for i in range(1, 21)]
    params = {"pack": {"budget_tokens": 1, "chars_per_token": chars_per_token}}
    inputs = {"files": [], "base": None, "head": HEAD}
    entries = sum(entry_cost(s, "json", chars_per_token) for s in symbols)
    budget = entries + 1
    for _ in range(60):
        frame = frame_cost(
            "json", mode="pr", token_budget=budget, inputs=inputs, graph_root=GRAPH_ROOT,
            commit=HEAD, params=params, chars_per_token=chars_per_token,
        )  # fmt: skip
        budget = max(budget, entries + frame)
    pack = Pack(
        pack_root=PACK_ROOT,
        mode="pr",
        token_budget=budget,
        tokens_used=budget,
        graph_root=GRAPH_ROOT,
        commit=HEAD,
        inputs=inputs,
        symbols=symbols,
        edges=edges,
        params=params,
        dropped=[],
        cochange=[],
    )
    assert fit_pack(pack, "json").symbols == pack.symbols
    assert math.ceil(len(render_pack(pack, "json")) / chars_per_token) <= budget


def test_the_lists_say_how_many_more_in_the_right_number() -> None:
    pack = fixture_pack()
    assert pack.summary is not None
    for extra, said in ((1, "1 more call site"), (3, "3 more call sites")):
        summary = dataclasses.replace(
            pack.summary, call_sites_outside=pack.summary.call_sites_outside + extra
        )
        text = render_comment(dataclasses.replace(pack, summary=summary))
        assert f"- … and {said} (all in the JSON pack)\n" in text
    summary = dataclasses.replace(pack.summary, tests_total=pack.summary.tests_total + 1)
    text = render_pack(dataclasses.replace(pack, summary=summary), "markdown")
    assert "- … and 1 more test, each with its evidence and command, in the JSON pack\n" in text


_WORDY = st.text(alphabet=st.sampled_from("ab_$1 (),.:éß٣\u0301"), max_size=24)


@given(text=_WORDY, name=st.text(alphabet=st.sampled_from("ab_$1é"), min_size=1, max_size=4))
@settings(max_examples=400, deadline=None)
def test_a_symbols_name_is_found_as_a_whole_word_as_the_regular_expression_finds_it(
    text: str, name: str
) -> None:
    from knowing_pr.render.display import _whole_word

    found = re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", text)
    assert _whole_word(text, name) == (None if found is None else found.span())


def _reference_template():  # type: ignore[no-untyped-def]
    import jinja2

    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent / "fixtures"),
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        undefined=jinja2.StrictUndefined,
    )
    return environment.get_template("pack.md.j2")


_LINE = st.text(alphabet=st.sampled_from("ab \n-#*`>"), max_size=12)
_BLOCK = st.fixed_dictionaries({"heading": st.sampled_from(["", "**H** (2)"]), "body": _LINE})
_SECTION = st.fixed_dictionaries({"title": _LINE, "body": _LINE})


@given(
    hidden=st.lists(_LINE, max_size=2),
    title=_LINE,
    blocks=st.lists(_BLOCK, max_size=4),
    more=st.none()
    | st.fixed_dictionaries({"summary": _LINE, "sections": st.lists(_SECTION, max_size=3), "diagram": _LINE}),
    cut_note=st.sampled_from(["", "cut: 3 symbols"]),
    footer=_LINE,
    entry=st.fixed_dictionaries({"kind": _LINE, "name": _LINE, "location": _LINE, "note": _LINE}),
)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_markdown_layout_is_the_reference_templates(
    hidden: list[str],
    title: str,
    blocks: list[dict[str, str]],
    more: dict[str, object] | None,
    cut_note: str,
    footer: str,
    entry: dict[str, str],
) -> None:
    """The pack's markdown is laid out in Python (a fresh ``pr`` does not import jinja2); the
    template it was written from stays the reference, rendered here by jinja2."""
    from knowing_pr.render.markdown import _document, _entry_line

    template = _reference_template()
    values = {"title": title, "blocks": blocks, "more": more, "cut_note": cut_note, "footer": footer}
    assert _document(hidden_lines=hidden, **values) == template.render(hidden_lines=hidden, **values)  # type: ignore[arg-type]
    assert _entry_line(entry) == template.module.entry(entry)


def test_a_ruby_class_keeps_its_superclass_spaced_and_a_ruby_module_is_a_module() -> None:
    """sinatra showed ``class `Sinatra.Application <Base` `` and ``class `module Rack.Protection` ``:
    the space after ``<`` went as if it opened a type argument, and a module took a class's word."""
    from knowing_pr.model import Node
    from knowing_pr.render.display import kind_word, signature_line

    def ruby(qualified: str, kind: str, signature: str) -> Node:
        name = qualified.rsplit(".", 1)[-1]
        return Node("id", "lib/a.rb", name, "lib.a." + qualified, kind, "ruby", 1, 2, signature, "", "h")

    application = ruby("Sinatra.Application", "class", "class Application < Base")
    assert (kind_word(application), signature_line(application)) == ("class", "Sinatra.Application < Base")
    protection = ruby("Rack.Protection", "class", "module Protection")
    assert (kind_word(protection), signature_line(protection)) == ("module", "Rack.Protection")
    generic = Node(
        "id", "a.ts", "f", "a.f", "function", "typescript", 1, 2, "function f(x: Array< T >)", "", "h"
    )
    assert signature_line(generic) == "f(x: Array<T>)"  # a type argument's bracket stays tight


def test_a_whole_test_file_sharing_a_command_is_named_by_its_path_once() -> None:
    """chi showed ``- `middleware/compress_test.go` › middleware/compress\\_test.go``, and the line
    "all go test tests above at once" repeated the shared command said just before it."""
    from knowing_pr.model import TestToRun
    from knowing_pr.render.frame import RenderLimits
    from knowing_pr.render.markdown import _grouped_lines
    from knowing_pr.render.summary import markdown_test

    whole = [
        TestToRun(
            path,
            path,
            1,
            "go test",
            "go test ./middleware",
            reason="package",
            evidence="tests package `middleware`",
        )
        for path in ("middleware/a_test.go", "middleware/b_test.go")
    ]
    line = markdown_test(whole[0], RenderLimits(), named=True)
    assert line == "- `middleware/a_test.go` — tests package `middleware`\n"
    assert _grouped_lines(whole, RenderLimits(), shared={"go test ./middleware"}) == ""
