"""Index a real repository: exact edges per language, incremental == full, bad inputs."""

from __future__ import annotations

import dataclasses
import itertools
import sqlite3
from pathlib import Path

import pytest
from conftest import RepoBuilder
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowing_pr import pipeline
from knowing_pr.config import IndexParams, Settings, default_db_path
from knowing_pr.git import GitRepo
from knowing_pr.index import index_commit
from knowing_pr.model import EdgeKind
from knowing_pr.store import Store

#: the calibrated confidence of each resolution rule (knowing_pr/config/params.py)
RULE = IndexParams()


def _db(builder: RepoBuilder) -> Path:
    return default_db_path(str(builder.path / ".git"))


def index(builder: RepoBuilder, **kw: object) -> pipeline.IndexReport:
    return pipeline.update_index(str(builder.path), **kw)  # type: ignore[arg-type]


def edges_by_name(builder: RepoBuilder) -> set[tuple[str, str, str, float]]:
    conn = sqlite3.connect(_db(builder))
    rows = conn.execute(
        "SELECT s.qualified_name, t.qualified_name, e.kind, e.confidence FROM edges e"
        " JOIN nodes s ON s.rowid = e.source JOIN nodes t ON t.rowid = e.target"
    ).fetchall()
    conn.close()
    return {(s, t, EdgeKind(k).label, c / 10000) for s, t, k, c in rows}


def snapshot(db: Path) -> tuple[object, ...]:
    """Everything that must be identical between an incremental and a full index."""
    conn = sqlite3.connect(db)
    try:
        nodes = conn.execute(
            "SELECT id, path, name, qualified_name, kind, start_line, end_line, signature, doc, content_hash"
            " FROM nodes ORDER BY id"
        ).fetchall()
        edges = sorted(
            conn.execute(
                "SELECT s.id, t.id, e.kind, e.confidence, e.rule, coalesce(f.path, e.origin) FROM edges e"
                " JOIN nodes s ON s.rowid = e.source JOIN nodes t ON t.rowid = e.target"
                " LEFT JOIN files f ON f.fid = e.origin"
            ).fetchall()
        )
        files = conn.execute("SELECT path, blob_id, status, reason, root FROM files ORDER BY path").fetchall()
        refs = conn.execute(
            "SELECT f.path, r.data FROM refs r JOIN files f USING (fid) ORDER BY 1"
        ).fetchall()
        names = conn.execute(
            "SELECT f.path, r.name FROM ref_names r JOIN files f USING (fid) ORDER BY 1, 2"
        ).fetchall()
        dirs = conn.execute("SELECT path, root FROM dirs ORDER BY path").fetchall()
        meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('graph_root', 'indexed_commit')"))
        blob = conn.execute("SELECT tag, data FROM blobs WHERE name = 'adjacency'").fetchone()
        fts = conn.execute("SELECT count(*) FROM nodes_fts").fetchone()
    finally:
        conn.close()
    return nodes, edges, files, dirs, meta, blob, fts, refs, names


# -- per-language edges -------------------------------------------------------------------


def test_python_call_through_from_import_is_import_resolved(make_repo) -> None:
    b = make_repo()
    b.write("pkg/__init__.py", "")
    b.write("pkg/b.py", "def g(x):\n    return x\n\n\ndef other():\n    pass\n")
    b.write("pkg/a.py", "from pkg.b import g\n\n\ndef f():\n    return g(1)\n")
    b.commit("init")
    index(b)
    edges = edges_by_name(b)
    assert ("pkg.a.f", "pkg.b.g", "calls", RULE.confidence_import) in edges
    assert ("pkg.a", "pkg.b", "imports", 1.0) in edges
    assert ("pkg.b", "pkg.b.g", "contains", 1.0) in edges
    assert not any(t == "pkg.b.other" for _, t, k, _ in edges if k == "calls")


def test_python_inherits_and_tests_edges(make_repo) -> None:
    b = make_repo()
    b.write(
        "shapes.py", "class Base:\n    def area(self):\n        return 0\n\n\nclass Square(Base):\n    pass\n"
    )
    b.write("tests/test_shapes.py", "from shapes import Square\n\n\ndef test_area():\n    Square().area()\n")
    b.commit("init")
    index(b)
    edges = edges_by_name(b)
    assert ("shapes.Square", "shapes.Base", "extends", RULE.confidence_same_file) in edges
    assert ("shapes.Square", "shapes.Base.area", "inherits", RULE.confidence_same_file) in edges
    assert ("tests.test_shapes.test_area", "shapes.Square", "tests", RULE.confidence_import) in edges
    assert ("tests.test_shapes", "shapes", "tests", 0.8) in edges


def test_java_class_implementing_interface(make_repo) -> None:
    b = make_repo()
    b.write(
        "src/com/acme/Greeter.java",
        "package com.acme;\n\npublic interface Greeter {\n    String greet();\n}\n",
    )
    b.write(
        "src/com/acme/Hello.java",
        "package com.acme;\n\npublic class Hello implements Greeter {\n"
        '    public String greet() { return helper(); }\n    private String helper() { return "hi"; }\n}\n',
    )
    b.commit("init")
    index(b)
    edges = edges_by_name(b)
    kinds = {(s, t, k) for s, t, k, _ in edges}
    assert ("src.com.acme.Hello.Hello", "src.com.acme.Greeter.Greeter", "implements") in kinds
    assert ("src.com.acme.Hello.Hello.greet", "src.com.acme.Hello.Hello.helper", "calls") in kinds


def test_go_method_is_contained_by_its_receiver_type(make_repo) -> None:
    b = make_repo()
    b.write("server/types.go", "package server\n\ntype Server struct {\n\tport int\n}\n")
    b.write(
        "server/run.go",
        "package server\n\nfunc (s *Server) Start() error {\n\treturn s.listen()\n}\n\n"
        "func (s *Server) listen() error {\n\treturn nil\n}\n",
    )
    b.commit("init")
    index(b)
    kinds = {(s, t, k) for s, t, k, _ in edges_by_name(b)}
    assert ("server.types.Server", "server.run.Server.Start", "contains") in kinds
    assert ("server.run.Server.Start", "server.types.Server", "member_of") in kinds
    assert ("server.run.Server.Start", "server.run.Server.listen", "calls") in kinds


def test_javascript_named_import_call(make_repo) -> None:
    b = make_repo()
    b.write("lib/x.js", "export function f(a) {\n  return a;\n}\n")
    b.write("lib/main.js", 'import { f } from "./x.js";\n\nexport function run() {\n  return f(1);\n}\n')
    b.commit("init")
    index(b)
    edges = edges_by_name(b)
    assert ("lib.main.run", "lib.x.f", "calls", RULE.confidence_import) in edges
    assert ("lib.main", "lib.x", "imports", 1.0) in edges


def test_generic_names_are_not_guessed(make_repo) -> None:
    b = make_repo()
    b.write("a/store.py", "def get(key):\n    return key\n")
    b.write("b/use.py", "def use(cache):\n    return cache.get(1)\n")
    b.commit("init")
    index(b)
    assert not any(k == "calls" and t.endswith(".get") for _, t, k, _ in edges_by_name(b))


# -- incremental == full ----------------------------------------------------------------------

SOURCES = {
    "py": ["def {n}(x):\n    return helper(x)\n", "class {N}:\n    def run(self):\n        return {n}(1)\n"],
    "js": ['import {{ helper }} from "./util.js";\nexport function {n}() {{ return helper(); }}\n'],
    "go": ["package main\n\nfunc {N}() int {{\n\treturn helper()\n}}\n"],
    "java": ["package p;\n\npublic class {N} {{\n  int f() {{ return new Helper().g(); }}\n}}\n"],
}
BASE_FILES = {
    "util.py": "def helper(x):\n    return x\n",
    "util.js": "export function helper() { return 1; }\n",
    "helper.go": "package main\n\nfunc helper() int {\n\treturn 1\n}\n",
    "Helper.java": "package p;\n\npublic class Helper {\n  int g() { return 1; }\n}\n",
}

_EXAMPLE = itertools.count()
_names = st.sampled_from(["alpha", "beta", "gamma", "delta", "omega"])
_ext = st.sampled_from(sorted(SOURCES))
_op = st.one_of(
    st.tuples(st.just("add"), _names, _ext, st.integers(0, 1)),
    st.tuples(st.just("modify"), st.integers(0, 50), st.integers(0, 1)),
    st.tuples(st.just("delete"), st.integers(0, 50)),
    st.tuples(st.just("rename"), st.integers(0, 50), _names),
)


def _apply(b: RepoBuilder, files: dict[str, str], op: tuple[object, ...]) -> None:
    kind = op[0]
    existing = sorted(files)
    if kind == "add":
        _, name, ext, variant = op
        templates = SOURCES[str(ext)]
        path = f"src/{name}.{ext}"
        content = templates[int(variant) % len(templates)].format(n=name, N=str(name).title())
        files[path] = content
        b.write(path, content)
        return
    if not existing:
        return
    path = existing[int(op[1]) % len(existing)]  # type: ignore[call-overload]
    if kind == "modify":
        files[path] = files[path] + ("\n# edit\n" if path.endswith(".py") else "\n// edit\n")
        b.write(path, files[path])
    elif kind == "delete":
        del files[path]
        b.delete(path)
    elif kind == "rename":
        ext = path.rsplit(".", 1)[-1]
        new = f"moved/{op[2]}.{ext}"
        if new in files:
            return
        files[new] = files.pop(path)
        b.rename(path, new)


def _symbol_table_mode(eager: bool) -> Settings:
    """Settings whose incremental runs always load the whole symbol table (``eager``) or always
    ask the store per name: both must give what a full index gives."""
    share = 0.0 if eager else float("inf")
    return dataclasses.replace(
        Settings(), index=dataclasses.replace(IndexParams(), eager_symbols_share=share)
    )


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.lists(_op, min_size=1, max_size=4), min_size=1, max_size=5), eager=st.booleans())
def test_incremental_index_equals_full_index(make_repo, steps, eager) -> None:
    b = make_repo(f"prop{next(_EXAMPLE)}")
    files = dict(BASE_FILES)
    for path, content in files.items():
        b.write(path, content)
    b.commit("base")
    repo = GitRepo.open(str(b.path))
    inline = _symbol_table_mode(eager)
    incremental_db = b.path.parent / f"{b.path.name}-inc.sqlite"
    index_commit(repo, inline, db_path=incremental_db)
    modes = []
    for step in steps:
        for op in step:
            _apply(b, files, op)
        b.commit("step")
        modes.append(index_commit(repo, inline, db_path=incremental_db).adjacency)
    assert set(modes) <= {"patched"}, modes
    full_db = b.path.parent / f"{b.path.name}-full.sqlite"
    report = index_commit(repo, inline, db_path=full_db, full=True)
    assert report.mode == "full"
    assert snapshot(incremental_db) == snapshot(full_db)
    with Store.open(incremental_db) as store:
        assert store.integrity_problems() == []


# -- bad inputs -------------------------------------------------------------------------------


def _skips(builder: RepoBuilder) -> dict[str, str]:
    conn = sqlite3.connect(_db(builder))
    rows = dict(conn.execute("SELECT path, reason FROM files WHERE status = 'skipped'"))
    conn.close()
    return rows


def test_bad_inputs_are_indexed_or_skipped_with_a_reason(make_repo) -> None:
    b = make_repo()
    b.write("ok.py", "def fine():\n    return 1\n")
    b.write("image.py", b"\x89PNG\r\n\x1a\n\x00\x00\x00binary")
    b.write("latin1.py", "def caf\xe9():\n    return '\xe9'\n".encode("latin-1"))
    b.write("nul.js", b"function a() {}\n\x00\x00\x00\n")
    b.write("min.js", "var a=1;" * 700_000)
    b.write("deep.py", "x = " + "(\n" * 10_000 + "1" + ")\n" * 10_000)
    b.write("dir with space/na\u00efve \u00fcn\u00efcode.py", "def spaced():\n    return 2\n")
    b.write("lfs.py", "version https://git-lfs.github.com/spec/v1\noid sha256:" + "a" * 64 + "\nsize 12\n")
    b.write("package-lock.json", "{}")
    b.write("node_modules/x/index.js", "function vendored() {}\n")
    b.symlink("outside.py", "/etc/passwd")
    b.symlink("loop.py", "loop.py")
    b.add_gitlink("vendor_sub", "1" * 40)
    b.commit("bad inputs")
    report = index(b)
    skips = _skips(b)
    assert skips["image.py"] == "binary"
    assert skips["nul.js"] == "binary"
    assert skips["min.js"] in ("minified", "size")
    assert skips["lfs.py"] == "lfs"
    assert skips["outside.py"] == "symlink"
    assert skips["loop.py"] == "symlink"
    assert skips["vendor_sub"] == "submodule"
    assert skips["node_modules/x/index.js"] == "excluded"
    assert "latin1.py" not in skips
    assert "deep.py" not in skips or skips["deep.py"] in ("parser-crash", "timeout", "parser-error")
    with Store.open(_db(b)) as store:
        names = {n.qualified_name for n in store.all_nodes()}
        assert store.integrity_problems() == []
    assert "ok.fine" in names
    assert "dir with space.na\u00efve \u00fcn\u00efcode.spaced" in names
    assert report.skipped["symlink"] == 2


def test_empty_repository_and_unborn_head(make_repo) -> None:
    b = make_repo()
    report = index(b)
    assert report.commit is None
    stats = pipeline.store_stats(str(b.path))
    assert stats["nodes"] == 0 and stats["fresh"] is True


def test_up_to_date_and_incremental_modes(make_repo) -> None:
    b = make_repo()
    b.write("a.py", "def a():\n    return b()\n")
    b.write("b.py", "def b():\n    return 1\n")
    b.commit("one")
    assert index(b).mode == "full"
    assert index(b).mode == "up-to-date"
    b.write("b.py", "def b():\n    return 2\n")
    b.commit("two")
    report = index(b)
    assert report.mode == "incremental"
    assert report.files_parsed == 1
    assert ("a.a", "b.b", "calls", RULE.confidence_same_package) in edges_by_name(b)


def test_corrupt_store_is_moved_aside_and_rebuilt(make_repo) -> None:
    b = make_repo()
    b.write("a.py", "def a():\n    return 1\n")
    b.commit("one")
    index(b)
    db = _db(b)
    db.write_bytes(b"not a database at all" * 100)
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    report = index(b)
    assert report.recovered_from is not None
    assert any(p.name.startswith("index.sqlite.corrupt-") for p in db.parent.iterdir())
    assert pipeline.store_stats(str(b.path))["nodes"] == 2


@pytest.mark.parametrize("rev", ["does-not-exist", "HEAD~5"])
def test_unknown_revision_is_a_clear_error(make_repo, rev: str, capsys: pytest.CaptureFixture[str]) -> None:
    from knowing_pr.cli import main

    b = make_repo()
    b.write("a.py", "x = 1\n")
    b.commit("one")
    code = main(["index", "--repo", str(b.path), "--rev", rev])
    err = capsys.readouterr().err
    assert code == 2  # an input error
    assert err.startswith("knowing-pr: error:")
    assert "Traceback" not in err


def test_calls_through_external_modules_are_not_guessed(make_repo) -> None:
    b = make_repo()
    b.write("engine.py", "class Engine:\n    def compile(self, source):\n        return source\n")
    b.write(
        "ident.py",
        "import re\nfrom os.path import join\n\npattern = re.compile('x')\n\n\ndef p():\n    return join('a')\n",
    )
    b.write("paths.py", "def join(*parts):\n    return '/'.join(parts)\n")
    b.commit("init")
    index(b)
    targets = {t for _, t, k, _ in edges_by_name(b) if k == "calls"}
    assert "engine.Engine.compile" not in targets
    assert "paths.join" not in targets


# -- incremental == full across nested packages (lazy path indexes, Merkle chains) -------------

_DIRS = ["", "app", "app/core", "app/core/deep", "lib", "lib/util", "svc/alpha", "svc/beta"]


def _nested_source(kind: str, directory: str, name: str, other: str, variant: int) -> tuple[str, str]:
    """(path, text) of one file in ``directory`` that imports ``other`` (a module name) and
    calls it, in the ways the resolver looks paths up: dotted module suffixes, directory
    suffixes (Go), relative default imports (JS) and test subjects by stem."""
    base = f"{directory}/" if directory else ""
    dotted = f"{base.replace('/', '.')}{other}"
    if kind == "py":
        extra = "\n\nclass Runner:\n    def run(self):\n        return compute(2)\n" if variant else ""
        text = f"from {dotted} import compute\n\n\ndef {name}(x):\n    return compute(x)\n{extra}"
        return f"{base}{name}.py", text
    if kind == "pyinit":
        return f"{base}__init__.py", f"def {name}():\n    return 1\n"
    if kind == "test":
        return (
            f"{base}tests/test_{other}.py",
            f"from {dotted} import compute\n\n\ndef test_it():\n    compute(1)\n",
        )
    if kind == "go":
        package = directory.rsplit("/", 1)[-1] or "main"
        text = (
            f'package {package}\n\nimport "example.com/m/{directory or "x"}"\n\n'
            f"type {name.title()} struct{{}}\n\nfunc ({name[0]} {name.title()}) Compute() int {{\n\treturn {variant}\n}}\n"
        )
        return f"{base}{name}.go", text
    text = f'import helper from "./{other}.js";\nexport function {name}() {{ return helper(); }}\n' + (
        f"export class K{variant} {{}}\n" if variant else ""
    )
    return f"{base}{name}.js", text


_nested_add = st.tuples(
    st.just("add"),
    st.sampled_from(["py", "pyinit", "test", "go", "js"]),
    st.sampled_from(_DIRS),
    st.sampled_from(["compute", "alpha", "beta"]),
    st.sampled_from(["compute", "alpha", "beta"]),
    st.integers(0, 1),
)
_nested_op = st.one_of(
    _nested_add,
    st.tuples(st.just("delete"), st.integers(0, 60)),
    st.tuples(st.just("rename"), st.integers(0, 60), st.sampled_from(_DIRS)),
    st.tuples(st.just("delete-dir"), st.sampled_from(_DIRS[1:])),
)


def _apply_nested(b: RepoBuilder, files: dict[str, str], op: tuple[object, ...]) -> None:
    existing = sorted(files)
    if op[0] == "add":
        _, kind, directory, name, other, variant = op
        path, text = _nested_source(str(kind), str(directory), str(name), str(other), int(variant))  # type: ignore[call-overload]
        files[path] = text
        b.write(path, text)
    elif op[0] == "delete-dir":
        prefix = f"{op[1]}/"
        for path in [p for p in existing if p.startswith(prefix)]:
            del files[path]
            b.delete(path)
    elif existing:
        path = existing[int(op[1]) % len(existing)]  # type: ignore[call-overload]
        if op[0] == "delete":
            del files[path]
            b.delete(path)
        else:
            new = f"{op[2]}/{path.rsplit('/', 1)[-1]}" if op[2] else path.rsplit("/", 1)[-1]
            if new in files:
                return
            files[new] = files.pop(path)
            b.rename(path, new)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    base=st.lists(_nested_add, min_size=3, max_size=12),
    steps=st.lists(st.lists(_nested_op, min_size=1, max_size=4), min_size=1, max_size=4),
    eager=st.booleans(),
)
def test_incremental_equals_full_across_nested_packages(make_repo, base, steps, eager) -> None:
    b = make_repo(f"nested{next(_EXAMPLE)}")
    files: dict[str, str] = {}
    for op in base:
        _apply_nested(b, files, op)
    b.write("README.md", "nested\n")
    b.commit("base")
    repo = GitRepo.open(str(b.path))
    inline = _symbol_table_mode(eager)
    incremental_db = b.path.parent / f"{b.path.name}-inc.sqlite"
    index_commit(repo, inline, db_path=incremental_db)
    for step in steps:
        for op in step:
            _apply_nested(b, files, op)
        b.commit("step")
        assert index_commit(repo, inline, db_path=incremental_db).adjacency in ("patched", "")
    full_db = b.path.parent / f"{b.path.name}-full.sqlite"
    index_commit(repo, inline, db_path=full_db, full=True)
    assert snapshot(incremental_db) == snapshot(full_db)


def test_a_file_with_inline_modules_keeps_its_own_module_node(make_repo) -> None:
    """Rust ``mod name { … }`` blocks are module symbols too; the file's own module must stand
    for the file (its `use` imports start there), in a full index and after an incremental one."""
    b = make_repo()
    b.write("src/engine.rs", "pub fn run() -> u32 {\n    1\n}\n")
    b.write(
        "src/lib.rs",
        "pub mod engine;\npub use engine::run;\n\npub mod shells {\n    pub fn bash() -> u32 {\n"
        "        2\n    }\n}\n\npub mod generator {\n    pub fn gen() -> u32 {\n        3\n    }\n}\n",
    )
    b.commit("base")
    repo = GitRepo.open(str(b.path))
    incremental_db = b.path.parent / "inline-inc.sqlite"
    index_commit(repo, Settings(), db_path=incremental_db)
    b.write("src/engine.rs", "pub fn run() -> u32 {\n    10\n}\n\npub fn stop() -> u32 {\n    0\n}\n")
    b.commit("engine grows")
    index_commit(repo, _symbol_table_mode(eager=False), db_path=incremental_db)
    full_db = b.path.parent / "inline-full.sqlite"
    index_commit(repo, Settings(), db_path=full_db, full=True)
    assert snapshot(incremental_db) == snapshot(full_db)
    conn = sqlite3.connect(full_db)
    sources = {
        row[0]
        for row in conn.execute(
            "SELECT s.qualified_name FROM edges e JOIN nodes s ON s.rowid = e.source"
            " JOIN nodes t ON t.rowid = e.target WHERE e.kind = ? AND t.path = 'src/engine.rs'",
            (int(EdgeKind.IMPORTS),),
        )
    }
    conn.close()
    assert sources == {"src.lib"}
