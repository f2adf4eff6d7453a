"""``knowing-pr task``: keywords, entities, traces, equivalence classes, seed channels, the pack
and its folder — on real repositories built with ``make_repo`` and indexed for real."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import re
import tarfile
from pathlib import Path

import pytest

from knowing_pr.cli import main
from knowing_pr.config import Settings, load_settings
from knowing_pr.errors import UsageError
from knowing_pr.pipeline import (
    TaskRequest,
    Workspace,
    build_task_pack,
    open_workspace,
    update_index,
    write_task_folder,
)
from knowing_pr.rank.fusion import seed_order
from knowing_pr.store.opening import open_store
from knowing_pr.task import analyse_task, task_seeds
from knowing_pr.task.channels import build_fts_query, weak_terms
from knowing_pr.task.entities import classify_change, extract_entities, is_about_tests
from knowing_pr.task.equivalence import classes_from_mappings, match_classes, universal_classes
from knowing_pr.task.keywords import extract_keywords, instruction_words, light_stem
from knowing_pr.task.traces import parse_frames

SESSION_PY = '''"""Sessions kept in memory."""


class SessionStore:
    """Stores sessions by id."""

    def load_session(self, sid):
        return self.fetch(sid)

    def fetch(self, sid):
        raise KeyError(sid)


def parse_token(text):
    """Parse a bearer token."""
    return text.split()
'''

VIEWS_PY = '''from src.auth.session import SessionStore, parse_token


def login_view(request):
    """Sign in a user with a password."""
    token = parse_token(request)
    return SessionStore().load_session(token)
'''

INVOICE_PY = '''def total_invoice(lines):
    """Sum invoice lines."""
    return sum(lines)
'''

TEST_PY = """from src.auth.session import SessionStore


def test_load_session():
    SessionStore().load_session(1)
"""

CART_GO = """package cart

type Cart struct {
	Items []int
}

func (c *Cart) Total() int {
	sum := 0
	for i := 0; i <= len(c.Items); i++ {
		sum += c.Items[i]
	}
	return sum
}

func NewCart() *Cart {
	return &Cart{}
}
"""

MAIN_GO = """package main

import "example.com/shop/cart"

func main() {
	c := cart.NewCart()
	println(c.Total())
}
"""

PY_TRACE = """Traceback (most recent call last):
  File "/home/dev/app/src/auth/views.py", line 7, in login_view
    return SessionStore().load_session(token)
  File "/home/dev/app/src/auth/session.py", line 8, in load_session
    return self.fetch(sid)
  File "/home/dev/app/src/auth/session.py", line 11, in fetch
    raise KeyError(sid)
KeyError: 'abc'
"""

GO_PANIC = """panic: runtime error: index out of range [3] with length 3

goroutine 1 [running]:
example.com/shop/cart.(*Cart).Total(0xc000010018)
\t/home/dev/shop/cart/cart.go:10 +0x1d
main.main()
\t/home/dev/shop/main.go:7 +0x25
exit status 2
"""


@pytest.fixture
def workspace(make_repo) -> Workspace:
    builder = make_repo()
    builder.write("src/auth/session.py", SESSION_PY)
    builder.write("src/auth/views.py", VIEWS_PY)
    builder.write("src/billing/invoice.py", INVOICE_PY)
    builder.write("tests/test_session.py", TEST_PY)
    builder.write("shop/cart/cart.go", CART_GO)
    builder.write("shop/main.go", MAIN_GO)
    builder.commit("initial")
    update_index(builder.path)
    return open_workspace(builder.path)


def _by_name(pack, name):
    return next((s for s in pack.symbols if s.node.name == name), None)


# -- pure parts ---------------------------------------------------------------------------------


def test_keyword_tiers_backticks_compounds_bigrams_and_components():
    ks = extract_keywords("add a new MCP tool for snapshot diffing in `before_request` and parse_config")
    assert ks.exact == ("before_request",)
    assert "parse_config" in ks.compounds
    assert {"SnapshotDiffing", "snapshot_diffing"} <= set(ks.compounds)
    assert "snapshot" in ks.components and "diff" in ks.components
    assert not {"a", "new", "for", "add"} & set(ks.components)


def test_keywords_expand_abbreviations_and_detect_code_patterns():
    ks = extract_keywords("the cfg loader breaks ModelAdmin.get_inlines() e.g. on payments")
    assert "config" in ks.components and "cfg" in ks.components
    assert "ModelAdmin.get_inlines" in ks.compounds
    assert "payment" in ks.components
    assert not any("e.g" in c for c in ks.compounds)
    assert light_stem("queries") == "query" and light_stem("running") == "run"


def test_entities_and_change_types():
    text = (
        "Fix the webhook in src/payment-service.ts: UserController.handleWebhook() fails with "
        "ECONNREFUSED on POST /api/users and E_USER_DEPRECATED; see process_payment"
    )
    e = extract_entities(text)
    assert e.files == ("src/payment-service.ts",)
    assert "UserController" in e.classes
    assert {"handleWebhook", "process_payment"} <= set(e.methods)
    assert e.routes == ("POST /api/users",)
    assert set(e.error_codes) == {"ECONNREFUSED", "E_USER_DEPRECATED"}
    assert classify_change(text) == "bugfix"
    assert classify_change("speed up the slow cache lookups") == "perf"
    assert classify_change("add support for YAML") == "feature"
    assert classify_change("rename and simplify the loader") == "refactor"
    assert classify_change("xss vulnerability in the sanitize step") == "security"
    assert classify_change("the loader") == "unknown"
    assert is_about_tests("fix the failing test") and not is_about_tests("the latest release")


def test_trace_parsing_for_every_language():
    py = parse_frames(PY_TRACE)
    assert [(f.function, f.line) for f in py] == [("fetch", 11), ("load_session", 8), ("login_view", 7)]
    go = parse_frames(GO_PANIC)
    assert [(f.path, f.line, f.function) for f in go][0] == ("/home/dev/shop/cart/cart.go", 10, "Total")
    js = parse_frames(
        "TypeError: x\n    at Object.parse (/srv/app/src/parser.js:10:5)\n    at /srv/app/src/i.js:3:1"
    )
    assert [(f.path, f.line, f.function) for f in js] == [
        ("/srv/app/src/parser.js", 10, "parse"),
        ("/srv/app/src/i.js", 3, ""),
    ]
    java = parse_frames(
        'Exception in thread "main" java.lang.NullPointerException\n\tat com.acme.Cart.total(Cart.java:42)'
    )
    assert [(f.path, f.line, f.function) for f in java] == [("com/acme/Cart.java", 42, "total")]
    rust = parse_frames(
        "thread 'main' panicked at src/cart.rs:14:9:\nboom\n"
        "   3: shop::cart::Cart::total\n             at ./src/cart.rs:14:9"
    )
    assert [(f.path, f.line) for f in rust] == [("src/cart.rs", 14)]


def test_equivalence_gate_needs_two_phrases_or_a_multi_word_phrase():
    classes = universal_classes()
    assert 40 <= len(classes) <= 70
    names = lambda text: {m.cls.name for m in match_classes(text, classes)}  # noqa: E731
    assert "authentication" not in names("the password is shown")
    assert "authentication" in names("users cannot sign in")
    assert "authentication" in names("login fails with the right password")
    user = classes_from_mappings(
        [{"name": "billing", "phrases": ["money", "coins"], "targets": ["total_invoice"]}],
        source="user",
        default_weight=1.0,
    )
    assert [m.cls.name for m in match_classes("money and coins", user)] == ["billing"]


def test_fts_query_quotes_every_term():
    hostile = 'fix "x" NEAR(a b) AND symbol_name:(foo*) OR -bar ^baz {col}:q `a"b`'
    query = build_fts_query(extract_keywords(hostile), ["near"], 48)
    # every clause is an optional column filter followed by one quoted term (and * for paths)
    clause = r'(?:(?:symbol_name|file_path) : )?"\w+"\*?'
    assert re.fullmatch(rf"{clause}(?: OR {clause})*", query), query


def test_fts_query_without_column_targeting_is_plain_terms():
    keywords = extract_keywords("fix load_session in the session store")
    query = build_fts_query(keywords, ["session"], 48, target_columns=False)
    terms = query.split(" OR ")
    assert terms[0] == '"load_session"' and '"SessionStore"' in terms and '"session"' in terms
    assert ":" not in query and "*" not in query
    targeted = build_fts_query(keywords, ["session"], 48)
    assert targeted.startswith('symbol_name : "load_session"') and 'file_path : "session"*' in targeted


def test_seed_order_puts_weighted_seeds_first():
    fused = [("n1", 0.9), ("n2", 0.8), ("n3", 0.7), ("n4", 0.6)]
    assert seed_order({"n3": 1.0, "n1": 0.5, "n2": 0.0}, fused) == ["n3", "n1", "n2", "n4"]


@pytest.mark.parametrize(
    ("text", "dropped", "kept"),
    [
        ("Add support for build scripts", {"add"}, {"build", "support"}),
        ("Extend cargo test to support filtering tests", {"extend", "support"}, {"test", "tests"}),
        ("How does it rewrite request URIs", set(), {"rewrite"}),
        ("Debug and fix a resolution failure", {"debug", "fix"}, {"resolution"}),
        ("Please add a flag to disable caching. Then fix the build.", {"add", "disable", "fix"}, {"build"}),
    ],
)
def test_a_verb_is_dropped_only_where_it_is_an_instruction(text, dropped, kept):
    keywords = extract_keywords(text)
    assert set(keywords.instructions) == dropped
    assert kept <= set(keywords.components)
    flags = dict(instruction_words(text))
    assert all(not flags.get(word, False) for word in kept)


def test_the_noun_after_the_instruction_is_the_priority_target():
    assert extract_keywords("Please add a flag to disable caching").priority == ("flag",)
    assert extract_keywords("Build account management mutations").priority == ("account",)
    assert "BuildScripts" in extract_keywords("passes metadata from build scripts").compounds


def test_weak_terms_are_the_words_of_most_paths():
    paths = [f"src/Ocelot/Routing/File{i}.cs" for i in range(8)] + ["samples/Gateway/Program.cs", "README.md"]
    keywords = extract_keywords("Configure the Ocelot routing gateway")
    assert weak_terms(keywords, paths, 0.5) == {"ocelot", "routing", "rout"}
    assert weak_terms(keywords, paths, 0.0) == frozenset()


# -- the pipeline -------------------------------------------------------------------------------


def test_backtick_identifier_is_ranked_first(workspace):
    _run = build_task_pack(workspace, TaskRequest("fix `load_session` when the session store raises"))
    pack, analysis = _run.pack, _run.analysis
    ordered = sorted(pack.symbols, key=lambda s: -s.score)
    assert ordered[0].node.qualified_name == "src.auth.session.SessionStore.load_session"
    assert ordered[0].reason == "match" and ordered[0].is_seed
    assert analysis.keywords.exact == ("load_session",)
    # the pack is in fused order: scores in (0, 1], falling, the walk's score kept alongside
    assert [s.score for s in pack.symbols] == sorted((s.score for s in pack.symbols), reverse=True)
    assert pack.symbols[0].score == 1.0 and all(0 < s.score <= 1.0 for s in pack.symbols)
    assert all(dict(s.components)["walk_score"] > 0 for s in pack.symbols)
    assert pack.mode == "task" and len(pack.pack_root) == 64


def test_python_traceback_seeds_the_frames_symbols(workspace):
    _run = build_task_pack(workspace, TaskRequest("login crashes\n" + PY_TRACE))
    pack, analysis = _run.pack, _run.analysis
    for name in ("fetch", "load_session", "login_view"):
        symbol = _by_name(pack, name)
        assert symbol is not None, name
        assert symbol.is_seed and symbol.reason == "match"
        channels = [c.channel for c in analysis.contributions[symbol.node.id]]
        assert "trace" in channels
    resolved = {f.function: path for f, path, _ in analysis.frames}
    assert resolved["fetch"] == "src/auth/session.py"
    assert analysis.change_type == "bugfix"


def test_error_file_and_go_panic_seed_the_frames(workspace, tmp_path):
    log = tmp_path / "panic.log"
    log.write_text("some noise\n" + GO_PANIC)
    code = main(
        [
            "task",
            "the cart total crashes",
            "--repo",
            str(workspace.repo.workdir),
            "--error-file",
            str(log),
            "--format",
            "json",
            "--out",
            str(tmp_path / "pack.json"),
        ]
    )
    assert code == 0
    data = json.loads((tmp_path / "pack.json").read_text())
    by_name = {s["qualified_name"]: s for s in data["symbols"]}
    total = by_name["shop.cart.cart.Cart.Total"]
    assert total["is_seed"] and total["reason"] == "match"
    assert by_name["shop.main.main"]["is_seed"]
    assert data["inputs"]["error_sha256"] and len(data["inputs"]["error_sha256"]) == 64


def test_task_about_tests_lifts_the_test_penalty(workspace):
    _run = build_task_pack(workspace, TaskRequest("session load_session raises KeyError"))
    plain, a = _run.pack, _run.analysis
    _run = build_task_pack(workspace, TaskRequest("session load_session raises KeyError in the tests"))
    about, b = _run.pack, _run.analysis
    # "tests" is no instruction here, so it stays a keyword (it may name code)
    assert set(b.keywords.components) - set(a.keywords.components) == {"tests", "test"}
    assert not a.about_tests and b.about_tests
    before = _by_name(plain, "test_load_session")
    after = _by_name(about, "test_load_session")
    assert before is not None and after is not None
    assert dict(before.components)["test_penalty"] == pytest.approx(0.3)
    assert dict(after.components)["test_penalty"] == 1.0
    assert after.score > before.score


def test_fts_hostile_task_text_does_not_crash(workspace):
    for text in (
        '"unbalanced quote',
        "NEAR(session fetch, 2)",
        "session* OR -fetch AND NOT ^load",
        "symbol_name:fetch file_path:(src) {qualified_name}: x",
        "(((",
        "* * *",
        "' ; DROP TABLE nodes; --",
    ):
        _run = build_task_pack(workspace, TaskRequest(text))
        pack, analysis = _run.pack, _run.analysis
        assert pack.mode == "task"
        assert isinstance(analysis.seeds, dict)


def test_low_confidence_task_gets_suggestions(workspace):
    _run = build_task_pack(workspace, TaskRequest("make it better"))
    _, analysis = _run.pack, _run.analysis
    assert analysis.confidence.level == "low"
    assert analysis.confidence.suggestions
    assert any("backticks" in s for s in analysis.confidence.suggestions)
    _run = build_task_pack(workspace, TaskRequest("fix `fetch` in src/auth/session.py"))
    _, specific = _run.pack, _run.analysis
    assert specific.confidence.score > analysis.confidence.score


def test_named_file_and_path_context_seed_symbols(workspace):
    _run = build_task_pack(workspace, TaskRequest("clean up billing"))
    _, analysis = _run.pack, _run.analysis
    assert analysis.channels["path"], "the billing directory seeds its symbols"
    labels = {analysis.nodes[nid].name for nid in analysis.seeds if nid in analysis.nodes}
    assert "total_invoice" in labels


def test_names_channel_finds_the_type_the_task_words_make_up(workspace):
    run = build_task_pack(workspace, TaskRequest("sessions are lost from the store after a reload"))
    names = [run.analysis.nodes[h.node_id].qualified_name for h in run.analysis.channels["names"]]
    assert names[:1] == ["src.auth.session.SessionStore"]
    # the type leads the pack: a type the task's words make up, the members following it
    assert run.pack.symbols[0].node.name == "SessionStore"


def test_user_equivalence_classes_seed_their_targets(workspace):
    settings = load_settings(
        text="equivalence_classes:\n  - name: money\n    phrases: [coins, cash register]\n"
        "    targets: [total_invoice]\n"
    )
    store, _ = open_store(workspace.db_path)
    try:
        analysis = analyse_task(store, settings, "the cash register is off")
        seeded = {analysis.nodes[n].name for n in analysis.seeds if n in analysis.nodes}
        assert "total_invoice" in seeded
        assert any(c.channel == "equivalence" for parts in analysis.contributions.values() for c in parts)
        assert not analyse_task(store, Settings(), "the cash register is off").channels["equivalence"]
    finally:
        store.close()


def test_task_seeds_are_weaker_than_change_seeds(workspace):
    store, _ = open_store(workspace.db_path)
    try:
        seeds = task_seeds(store, workspace.settings, "Session store: fix `fetch`", scale=0.25)
        assert seeds and max(seeds.values()) <= 0.25
        assert task_seeds(store, workspace.settings, "   ") == {}
    finally:
        store.close()


def test_pack_root_identity_normalises_the_task_text(workspace):
    _run = build_task_pack(workspace, TaskRequest("Fix   the session  FETCH"))
    a, _ = _run.pack, _run.analysis
    _run = build_task_pack(workspace, TaskRequest("fix the session fetch"))
    b, _ = _run.pack, _run.analysis
    _run = build_task_pack(workspace, TaskRequest("fix the session fetch", error_text=PY_TRACE))
    c, _ = _run.pack, _run.analysis
    assert a.pack_root == b.pack_root
    assert c.pack_root != b.pack_root


def test_diff_seeds_the_changed_symbols(make_repo):
    builder = make_repo()
    builder.write("src/auth/session.py", SESSION_PY)
    builder.write("src/billing/invoice.py", INVOICE_PY)
    first = builder.commit("initial")
    builder.write("src/billing/invoice.py", INVOICE_PY.replace("sum(lines)", "sum(lines) + 0"))
    builder.commit("change")
    ws = open_workspace(builder.path)
    _run = build_task_pack(ws, TaskRequest("review this", diff_rev=first))
    pack, analysis = _run.pack, _run.analysis
    total = _by_name(pack, "total_invoice")
    assert total is not None and total.is_seed
    assert "diff" in [c.channel for c in analysis.contributions[total.node.id]]
    assert pack.inputs["base"] == first


# -- the pack folder ----------------------------------------------------------------------------


def test_pack_folder_has_all_artefacts_and_the_archive_unpacks_to_them(workspace, tmp_path):
    repo_dir = Path(workspace.repo.workdir)
    # the working tree differs from the commit: excerpts must come from the indexed blobs
    (repo_dir / "src/auth/session.py").write_text("# not committed\n")
    out = tmp_path / "ctx" / "nested"
    code = main(["task", "fix `fetch` in the session store", "--repo", str(repo_dir), "--out-dir", str(out)])
    assert code == 0
    names = {p.name for p in out.iterdir()}
    assert names == {"PACK.md", "TASK.md", "FILES.md", "GRAPH.md", "excerpts", "ctx.json", "ctx.tgz"}
    excerpts = sorted(p.name for p in (out / "excerpts").iterdir())
    assert excerpts and all(re.fullmatch(r"\d{3}-[A-Za-z0-9._-]+\.txt", n) for n in excerpts)
    session_excerpt = next(n for n in excerpts if "session.py" in n and "test" not in n)
    text = (out / "excerpts" / session_excerpt).read_text()
    assert "raise KeyError(sid)" in text and "not committed" not in text
    manifest = json.loads((out / "ctx.json").read_text())
    assert manifest["pack_root"] and manifest["files"][0]["symbols"]
    assert "## Code" in (out / "PACK.md").read_text()
    assert "Compounds" in (out / "TASK.md").read_text()
    assert "src/auth/session.py" in (out / "FILES.md").read_text()
    assert "→ src/auth/session.py" in (out / "GRAPH.md").read_text()
    with tarfile.open(fileobj=io.BytesIO((out / "ctx.tgz").read_bytes()), mode="r:gz") as tar:
        members = {m.name: m for m in tar.getmembers()}
        assert set(members) == {"PACK.md", "TASK.md", "FILES.md", "GRAPH.md", "ctx.json"} | {
            f"excerpts/{n}" for n in excerpts
        }
        for name, member in members.items():
            assert member.isfile() and not name.startswith("/") and ".." not in name
            extracted = tar.extractfile(member)
            assert extracted is not None and extracted.read() == (out / name).read_bytes()


def test_pack_folder_refuses_a_symlinked_out_dir_and_planted_links(workspace, tmp_path):
    _run = build_task_pack(workspace, TaskRequest("fix `fetch`"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / "link"
    link.symlink_to(elsewhere)
    with pytest.raises(UsageError):
        write_task_folder(workspace, _run, link)
    assert not any(elsewhere.iterdir())
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (out / "PACK.md").symlink_to(victim)
    with pytest.raises(UsageError, match="symbolic link"):
        write_task_folder(workspace, _run, out)
    assert victim.read_text() == "keep me"
    assert (out / "PACK.md").is_symlink()
    assert not [p for p in out.rglob("*") if p.is_file() and not p.is_symlink()]  # nothing written


def test_why_and_task_cli_exit_codes(workspace, capsys):
    repo = str(workspace.repo.workdir)
    assert main(["task", "", "--repo", repo]) == 2
    assert "empty" in capsys.readouterr().err
    assert main(["task", "x", "--repo", repo, "--error-file", os.devnull + "-missing"]) == 2


def test_budget_is_respected_in_task_mode(workspace):
    ws = dataclasses.replace(workspace, settings=workspace.settings.with_budget(500))
    _run = build_task_pack(ws, TaskRequest("session fetch load parse token login view", fmt="json"))
    pack, _ = _run.pack, _run.analysis
    assert pack.tokens_used <= 500


def test_task_output_speaks_of_the_task_not_of_a_change(workspace, capsys):
    repo = str(workspace.repo.workdir)
    assert main(["task", "fix `load_session` when the session store raises", "--repo", repo]) == 0
    out = capsys.readouterr().out
    assert "**Where to look**" in out
    assert "#### Callers of these" in out
    assert "```mermaid" in out and "class n1" in out and " found" in out  # the finds highlighted
    for pr_word in ("changed code", "the change", "classDef changed", "Matches for the task"):
        assert pr_word not in out, pr_word
