"""Hostile text in markdown (RELIABILITY.md S6, B15): the output keeps exactly our skeleton.

Every untrusted string of a pack (names, paths, signatures, docs, task text, revisions,
co-changed paths) is drawn from a hostile corpus or from hypothesis, rendered as a pack and as
a PR comment, and parsed with markdown-it-py (CommonMark + tables). The only HTML is ours, no
link or image comes from untrusted text, no text node holds a mention, an issue reference or
an autolink source, no line is longer than the cap, and no bidi or zero-width character
survives.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token

from knowing_pr.model import Node, Pack, ScoredSymbol, node_id
from knowing_pr.render import render_comment, render_pack
from knowing_pr.render.safety import (
    LINE_CAP_BYTES,
    clean_text,
    code_block,
    first_sentence,
    inline_code,
    mermaid_label,
    one_line,
    plain,
    truncate_bytes,
    xml_text,
)

PACK_ROOT = "5d41402abc4b2a76b9719d911017c592a1b2c3d4e5f60718293a4b5c6d7e8f90"
REASONS = ("changed", "caller", "callee", "test", "related")

HOSTILE = [
    "</details>",
    "<details open><summary>x</summary>",
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "<!-- knowing-pr -->",
    "-->",
    "[x](javascript:alert(1))",
    "[docs](https://evil.example/phish)",
    "![i](http://evil.example/p.png)",
    "<https://evil.example>",
    "see https://evil.example/x and www.evil.example",
    *["`" * n for n in range(1, 11)],
    *["a" + "`" * n + "b" for n in range(3, 11)],
    "~~~",
    "~~~~python",
    "```js",
    "@org/team",
    "@user",
    "ping @user, please",
    "&#64;user",
    "&commat;user",
    "mail me: dev@example.com",
    "owner/repo#1",
    "#1",
    "fixes #12345",
    "GH-1",
    "JIRA-42",
    "commit a1b2c3d4e5f6",
    "a\u202eb\u2066c\u2067d\u2068e\u2069f\u202ag\u200eh\u200fi\u061cj",
    "zero\u200bwidth\u200cjoin\u200d\u2060\ufeff",
    "tags\U000e0041\U000e0042",
    "| a | b |\n|---|---|\n| c | d |",
    ":--|--:",
    "line1\r\nline2\rline3\nline4\u2028line5",
    "x" * 100_000,
    "é" * 100_000,
    "# heading",
    "- item",
    "1. item",
    "> quote",
    "===",
    "---",
    "***",
    "    indented code",
    "\ttab",
    "*em* _em_ **strong** ~~strike~~",
    "trailing backslash\\",
    "trailing spaces  ",
    "$\\href{javascript:alert(1)}{x}$",
    "\x00\x1b[31mred\x7f\x85",
    "lone \udcff surrogate",
    "",
    "   ",
]

BIDI_OR_INVISIBLE = re.compile(
    "[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\u200b-\u200d\u2060\ufeff\U000e0000-\U000e007f]"
)
MENTION = re.compile(r"[@\uff20][A-Za-z0-9_]")
# GitHub links `#12`, `owner/repo#12`, `GH-12` and custom `PREFIX-12`; `# 12` (a space) is text
ISSUE_REF = re.compile(r"#\d|\b[A-Za-z]+-\d")
AUTOLINK_SOURCE = re.compile(r"://|www\.", re.IGNORECASE)
OUR_HTML = [
    re.compile(r"<!-- knowing-pr -->\n"),
    re.compile(r"<!-- knowing-pr:pack-root=[0-9a-f]{64} -->\n"),
    re.compile(r"<details>\n<summary>[A-Za-z0-9, :]+</summary>\n"),
    re.compile(r"</details>\n"),
]
INLINE_CHILDREN = {"text", "code_inline", "softbreak", "strong_open", "strong_close"}


def hostile_symbol(index: int, text: str, reason: str) -> ScoredSymbol:
    path = f"{text}/{index}.py"
    node = Node(
        id=node_id(path.encode("utf-8", "replace").decode(), str(index), "function"),
        path=path,
        name=text,
        qualified_name=f"{text}.{text}" if text else "",
        kind="function" if index % 2 else text,
        language="python",
        start_line=index + 1,
        end_line=index + 5,
        signature=f"def f(x={text!r}) -> {text}",
        doc=f"{text}. Second sentence {text}",
        content_hash="0" * 32,
    )
    return ScoredSymbol(node=node, score=1 - index / 1000, distance=1, reason=reason)


def hostile_pack(texts: list[str], *, benign: bool = False) -> Pack:
    def pick(text: str) -> str:
        if not benign:
            return text
        return "x" if one_line(text) else ""

    symbols = [hostile_symbol(i, pick(t), REASONS[i % len(REASONS)]) for i, t in enumerate(texts)]
    edges = [(symbols[i].node.id, symbols[i + 1].node.id, "calls") for i in range(len(symbols) - 1)]
    joined = " ".join(texts[:8])
    return Pack(
        pack_root=PACK_ROOT,
        mode="pr",
        token_budget=10**6,
        tokens_used=1234,
        graph_root="0" * 64,
        commit=None,
        inputs={
            "files": texts[:3],
            "base": pick(texts[0]) or "b",
            "head": pick(texts[-1]) or "h",
            "task": pick(joined),
        },
        symbols=symbols,
        edges=edges,
        cochange=[(pick(t) or "c", 2, 3) for t in texts[:5]],
    )


def walk(tokens: list[Token]) -> list[Token]:
    out: list[Token] = []
    for token in tokens:
        out.append(token)
        out.extend(walk(token.children or []))
    return out


def block_skeleton(body: str) -> list[tuple[str, str, str]]:
    tokens = MarkdownIt("commonmark").enable("table").parse(body)
    return [(t.type, t.tag, t.content if t.type in ("html_block", "heading_open") else "") for t in tokens]


def assert_inert(body: str, entries: int) -> None:
    """The invariants of S6 on one rendered markdown text with ``entries`` symbol entries."""
    body.encode("utf-8")
    for line in body.split("\n"):
        assert len(line.encode("utf-8")) <= LINE_CAP_BYTES, line[:80]
    assert not BIDI_OR_INVISIBLE.search(body)
    assert "\r" not in body
    tokens = walk(MarkdownIt("commonmark").enable("table").parse(body))
    types = [t.type for t in tokens]
    for token in tokens:
        if token.type == "html_block":
            assert any(p.fullmatch(token.content) for p in OUR_HTML), token.content
        elif token.type == "fence":
            assert token.info == "mermaid"
        elif token.type == "inline":
            kinds = {child.type for child in token.children or []}
            assert kinds <= INLINE_CHILDREN, kinds - INLINE_CHILDREN
        elif token.type == "text":
            assert not MENTION.search(token.content), token.content
            assert not ISSUE_REF.search(token.content), token.content
            assert not AUTOLINK_SOURCE.search(token.content), token.content
    for forbidden in (
        "link_open",
        "image",
        "html_inline",
        "code_block",
        "em_open",
        "table_open",
        "blockquote_open",
        "hr",
    ):
        cut_note = "to fit GitHub's comment limit" in body
        assert forbidden not in types or (forbidden == "blockquote_open" and cut_note), forbidden
    # bold only where the template puts it: the summary's headings and "signature changed"
    ours = sum(line.startswith("**") for line in body.split("\n")) + body.count("· **signature changed**")
    assert types.count("strong_open") == ours
    assert types.count("list_item_open") >= entries


@pytest.mark.parametrize("chunk", range(0, len(HOSTILE), 12))
def test_hostile_corpus_keeps_our_skeleton(chunk: int) -> None:
    texts = HOSTILE[chunk : chunk + 12]
    pack, benign = hostile_pack(texts), hostile_pack(texts, benign=True)
    for render in (lambda p: render_pack(p, "markdown"), render_comment):
        body = render(pack)
        assert_inert(body, len(texts))
        assert block_skeleton(body) == block_skeleton(render(benign))


def test_every_hostile_string_alone() -> None:
    for text in HOSTILE:
        body = render_comment(hostile_pack([text]))
        assert_inert(body, 1)


def test_hostile_comment_truncation_stays_inert_and_small() -> None:
    pack = hostile_pack(HOSTILE * 3)
    body = render_comment(pack, max_bytes=20_000)
    assert len(body.encode("utf-8")) <= 20_000
    assert "lower-ranked symbols were cut" in body
    entries = sum(line.startswith("- ") for line in body.split("\n"))
    assert_inert(body, entries)


identifiers = st.text(st.characters(exclude_categories=()), max_size=80)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(identifiers | st.sampled_from(HOSTILE[:50]), min_size=1, max_size=8))
def test_fuzzed_identifiers_keep_our_skeleton(texts: list[str]) -> None:
    pack = hostile_pack(texts)
    body = render_comment(pack)
    assert_inert(body, len(texts))
    assert block_skeleton(body) == block_skeleton(render_comment(hostile_pack(texts, benign=True)))
    small = render_comment(pack, max_bytes=3000)
    assert len(small.encode("utf-8")) <= 3000
    assert_inert(small, sum(line.startswith("- ") for line in small.split("\n")))


# ---------------------------------------------------------------- the primitives

md = MarkdownIt("commonmark").enable("table")


def only_inline(markdown: str) -> list[Token]:
    tokens = md.parse(markdown)
    assert [t.type for t in tokens] == ["paragraph_open", "inline", "paragraph_close"], markdown
    return tokens[1].children or []


@pytest.mark.parametrize(
    "text",
    ["plain", "a`b", "``", "`lead", "trail`", " both ", "a ``` b", "`" * 10, "x\ny", "<b>&amp;</b>", "   "],
)
def test_inline_code_round_trips(text: str) -> None:
    children = only_inline("see " + inline_code(text) + " here")
    codes = [c for c in children if c.type == "code_inline"]
    assert len(codes) == 1
    assert codes[0].content == re.sub(r"\s+", " ", text)


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(exclude_categories=()), max_size=120))
def test_inline_code_round_trips_any_text(text: str) -> None:
    expected = re.sub(r"\s+", " ", clean_text(text)) or " "
    span = inline_code(text)
    children = only_inline("x " + span + " y")
    assert [c.type for c in children] == ["text", "code_inline", "text"]
    assert children[1].content == expected
    # also at the start of a line, where a long fence must not open a code block
    assert only_inline(span)[0].content == expected


def test_inline_code_caps_bytes_even_with_backtick_runs() -> None:
    text = "`" * 300 + "a" * 2000
    span = inline_code(text, max_bytes=200)
    assert len(span.encode("utf-8")) <= 200
    assert span.endswith("`") and "…" in span


@pytest.mark.parametrize("text", ["```\ncode\n```", "~~~\n~~~~", "````` and ~~~~~~~", "a\r\nb", "plain"])
def test_code_block_cannot_be_closed_from_inside(text: str) -> None:
    block = code_block(text, "py;rm -rf")
    tokens = md.parse(block + "\n\nafter")
    assert tokens[0].type == "fence" and tokens[0].info == "pyrm-rf"
    assert tokens[0].content == clean_text(text) + "\n"
    assert tokens[1].type == "paragraph_open"


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(exclude_categories=()), max_size=120))
def test_plain_is_one_inert_paragraph(text: str) -> None:
    rendered = plain(text)
    if not rendered:
        assert not clean_text(text).strip()
        return
    children = only_inline(rendered)
    assert {c.type for c in children} <= {"text", "code_inline"}
    # nothing is lost: the words read back, punctuation and all
    assert "".join(c.content for c in children) == re.sub(r"\s+", " ", clean_text(text)).strip()


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("ping @user now", "@user"),
        ("see owner/repo#1", "owner/repo#1"),
        ("fixes #12.", "#12."),
        ("GH-1", "GH-1"),
        ("&#64;user", "&#64;user"),
        ("go to https://x.example", "https://x.example"),
        ("www.x.example", "www.x.example"),
        ("commit a1b2c3d", "a1b2c3d"),
    ],
)
def test_plain_puts_references_in_code(text: str, code: str) -> None:
    children = only_inline(plain(text))
    assert code in [c.content for c in children if c.type == "code_inline"]
    assert not any(
        MENTION.search(c.content) or ISSUE_REF.search(c.content) for c in children if c.type == "text"
    )


@pytest.mark.parametrize(
    "text", ["# h", "- i", "+ i", "1. i", "2) i", "> q", "===", "---", "***", ":--", "<div>"]
)
def test_plain_at_line_start_stays_a_paragraph(text: str) -> None:
    children = only_inline(plain(text))
    assert "".join(c.content for c in children) == text


@settings(max_examples=300)
@given(
    st.text(st.characters(exclude_categories=()), max_size=60)
    | st.text(st.sampled_from("aé€😀\t\n\r\u200b\u202e\ufeff\x00\x1b\x85\u2028\udcff \u00ad"), max_size=30)
)
def test_clean_text_equals_escaping_each_control_and_format_character(text: str) -> None:
    """Its fast paths (ASCII, all printable) against the rule applied character by character."""
    import unicodedata

    from knowing_pr.visible import escape_char

    expected = []
    for char in re.sub(r"\r\n|[\r\u0085\u2028\u2029\v\f]", "\n", text):
        category = unicodedata.category(char)
        if category == "Cs":
            expected.append("\ufffd")
        elif char in "\n\t" or category not in ("Cc", "Cf"):
            expected.append(char)
        else:
            expected.append(escape_char(char))
    assert clean_text(text) == "".join(expected)


def test_clean_text_shows_invisible_characters_and_normalises_breaks() -> None:
    shown = clean_text("a\u202eb\u200bc\ufeffd\x00e\x1bf\U000e0041g")
    assert shown == "a\\u202eb\\u200bc\\ufeffd\\x00e\\x1bf\\U000e0041g"
    assert clean_text("a\r\nb\rc\u2028d\u0085e") == "a\nb\nc\nd\ne"
    assert clean_text("p\udcffq\tr") == "p\ufffdq\tr"


def test_truncate_bytes_respects_character_boundaries() -> None:
    assert truncate_bytes("abc", 3) == "abc"
    cut = truncate_bytes("é" * 10, 8)
    assert cut == "éé…" and len(cut.encode("utf-8")) <= 8
    assert truncate_bytes("abcdef", 2) == ""


def test_mermaid_label_and_xml_text() -> None:
    assert mermaid_label('a"]) --> B[("x', 40) == "a___ --_ B___x"
    assert mermaid_label("", 10) == "?"
    assert mermaid_label("abcdefghijkl", 5) == "abcd…"
    assert xml_text("a\x00b\x0bc\ufffed\udcffe\tf") == "a\\x00b\\x0bc\\ufffed\\udcffe\tf"


def test_first_sentence() -> None:
    assert first_sentence("Add it. Then more.") == "Add it."
    assert first_sentence("Summary line\ncontinues here.\n\nBody.") == "Summary line continues here."
    assert first_sentence("No end") == "No end"
    assert first_sentence("v1.2 is out! Yes") == "v1.2 is out!"


def test_a_hostile_summary_stays_inert() -> None:
    """Call sites, tests, commands, removed names and history pairs come from the repository too."""
    from knowing_pr.model import CallSite, ChangeSummary, RemovedSymbol, TestToRun

    for chunk in range(0, len(HOSTILE), 12):
        texts = HOSTILE[chunk : chunk + 12]
        pack = hostile_pack(texts)
        pack.summary = ChangeSummary(
            call_sites=[
                CallSite(t, i + 1, t, None, t, None, text=t, not_updated=i % 2 == 0)
                for i, t in enumerate(texts)
            ],
            call_sites_total=len(texts),
            call_sites_outside=len(texts),
            tests=[
                TestToRun(t, t, i + 1, t, f"pytest {t}", changed=i % 3 == 0, via=t)
                for i, t in enumerate(texts)
            ],
            tests_total=len(texts),
            removed=[RemovedSymbol(t, t, t, 1) for t in texts[:3]],
            cochange_with={(t or "c"): t for t in texts[:5]},
            changed_left_out=texts[:2],
            changed_left_out_count=2,
        )
        for body in (render_pack(pack, "markdown"), render_comment(pack)):
            assert_inert(body, 1)


@given(st.text(alphabet=st.sampled_from("ab&<>\"'\n\r\t é\u2028"), max_size=30))
@settings(max_examples=300, deadline=None)
def test_xml_escaping_is_the_standard_librarys_character_for_character(text: str) -> None:
    from xml.sax.saxutils import escape, quoteattr

    from knowing_pr.render.safety import xml_escape, xml_quoteattr

    assert xml_escape(text) == escape(text)
    assert xml_quoteattr(text) == quoteattr(text)


_JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=8)
    | st.sampled_from(['"', "\\", "\n", "\x00", "é", "\u2028", "\ud800"])
)
_JSON = st.recursive(
    _JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(_JSON)
@settings(max_examples=300, deadline=None)
def test_the_json_writer_gives_json_dumps_text(value: object) -> None:
    import json

    from knowing_pr.render.jsontext import indented_json

    assert indented_json(value) == json.dumps(value, ensure_ascii=False, indent=2)


def test_the_json_writer_leaves_no_reference_cycle() -> None:
    """(``json.dumps`` with an indent leaves one per call.)"""
    import gc

    from knowing_pr.render.jsontext import indented_json

    entry = {"id": "a" * 32, "score": 0.5, "lines": [1, 2], "doc": "x", "flags": {"test": False}}
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        texts = [indented_json(entry) for _ in range(200)]
        assert gc.collect() == 0  # nothing it made needed the cycle collector
    finally:
        if was:
            gc.enable()
    assert len(set(texts)) == 1


_XML_FORBIDDEN = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(
        st.text(alphabet=st.characters(max_codepoint=0x7F)),
        st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from("\x00\x0b\x1f\ufffe\uffff\ud800")),
    )
)
def test_xml_text_shows_escaped_exactly_what_xml_forbids_and_what_is_invisible(text: str) -> None:
    """ASCII text takes a shortcut (``str.translate``): the same characters change as XML 1.0's
    definition, written as a pattern, plus the invisible ones, character by character."""
    import unicodedata

    from knowing_pr.render.safety import xml_text
    from knowing_pr.visible import escape_char

    def shown(char: str) -> str:
        invisible = char not in "\t\n\r" and unicodedata.category(char) in ("Cc", "Cf", "Cs", "Zl", "Zp")
        return escape_char(char) if invisible or _XML_FORBIDDEN.fullmatch(char) else char

    assert xml_text(text) == "".join(shown(char) for char in text)


def _normalized_by_patterns(signature: str) -> str:
    """What ``normalize_signature`` does, with patterns (it uses plain replacements); a ``<``
    after a space keeps the space after it (``Application < Base``: no type argument)."""
    from knowing_pr.rank.changes import _BLOCK_COMMENT, _LINE_COMMENT, _SPACE

    text = _BLOCK_COMMENT.sub(" ", signature)
    text = _LINE_COMMENT.sub(" ", text)
    text = _SPACE.sub(" ", text).strip()
    text = re.sub(r"([(\[]) ", r"\1", text)
    text = re.sub(r"(?<! )< ", "<", text)
    text = re.sub(r" ([)\]>])", r"\1", text)
    text = re.sub(r",\s*([)\]>])", r"\1", text)
    return text.rstrip("{:; ").strip()


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet=st.sampled_from("([<>])),,, \t\n\u00a0\u2003ab:;{/*#x1"), max_size=40))
@example("a< < b")
@example("< < x")
@example("class A < Base")
@example("List< T >")
def test_a_signature_is_normalized_as_the_patterns_did(signature: str) -> None:
    from knowing_pr.rank.changes import normalize_signature

    assert normalize_signature(signature) == _normalized_by_patterns(signature)
