"""Small real repositories, one trap each, indexed end to end: the ``calls`` edges a reviewer
would be misled by must not exist, and the ones the trap hid must (issue "Edges a reviewer can
trust": every wrong-edge cause, per language)."""

from __future__ import annotations

import sqlite3

from conftest import RepoBuilder

from knowing_pr import pipeline
from knowing_pr.config import default_db_path


def calls(files: dict[str, str], make_repo) -> set[tuple[str, str]]:  # type: ignore[no-untyped-def]
    """Index a repository of ``files``; its ``calls`` edges as (source, target) qualified names."""
    b: RepoBuilder = make_repo()
    for path, text in files.items():
        b.write(path, text)
    b.commit("init")
    pipeline.update_index(str(b.path))
    conn = sqlite3.connect(default_db_path(str(b.path / ".git")))
    try:
        rows = conn.execute(
            "SELECT s.qualified_name, t.qualified_name FROM edges e"
            " JOIN nodes s ON s.rowid = e.source JOIN nodes t ON t.rowid = e.target WHERE e.kind = 1"
        ).fetchall()
    finally:
        conn.close()
    return {(s, t) for s, t in rows}


def targets_of(edges: set[tuple[str, str]], source: str) -> set[str]:
    return {t for s, t in edges if s == source}


# -- 1. a call through a parameter or a local is not a same-named definition elsewhere ------------


def test_python_fixture_and_callback_parameters_are_not_their_namesakes(make_repo) -> None:
    edges = calls(
        {
            "tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef client_factory():\n"
            "    return lambda app: app\n",
            "tests/test_app.py": "def test_client(client_factory):\n    client_factory('app')\n\n\n"
            "async def handle(scope, send):\n    await send({'type': 'http'})\n",
            "app/transport.py": "def send(message):\n    return message\n",
        },
        make_repo,
    )
    assert targets_of(edges, "tests.test_app.test_client") == set()
    assert targets_of(edges, "tests.test_app.handle") == set()


def test_python_local_class_in_a_test_is_not_the_module_one(make_repo) -> None:
    edges = calls(
        {
            "tests/test_schema.py": "class MySchema:\n    pass\n\n\ndef test_local():\n"
            "    class MySchema:\n        pass\n\n    MySchema()\n\n\ndef test_module():\n    MySchema()\n",
        },
        make_repo,
    )
    assert targets_of(edges, "tests.test_schema.test_local") == {"tests.test_schema.test_local.MySchema"}
    assert targets_of(edges, "tests.test_schema.test_module") == {"tests.test_schema.MySchema"}


def test_javascript_test_callback_is_not_an_adapter_function(make_repo) -> None:
    edges = calls(
        {
            "lib/adapters/xhr.js": "export function done(result) {\n  return result;\n}\n",
            "test/adapter.spec.js": "describe('adapter', () => {\n  it('works', (done) => {\n"
            "    setTimeout(() => done(), 1);\n  });\n});\n\nexport function check(done) {\n  done();\n}\n",
        },
        make_repo,
    )
    assert not any(t == "lib.adapters.xhr.done" for _, t in edges)


def test_typescript_promise_executor_parameter_is_not_a_repository_resolve(make_repo) -> None:
    edges = calls(
        {
            "src/router.ts": "export function resolve(path: string): string {\n  return path;\n}\n",
            "src/server.ts": "export function listen(): Promise<void> {\n"
            "  return new Promise((resolve) => {\n    resolve();\n  });\n}\n",
        },
        make_repo,
    )
    assert targets_of(edges, "src.server.listen") == set()


def test_go_function_parameter_is_not_a_package_function(make_repo) -> None:
    edges = calls(
        {
            "walk.go": "package tree\n\nfunc Walk(visit func(int)) {\n\tvisit(1)\n}\n",
            "visit.go": "package tree\n\nfunc visit(n int) {}\n",
        },
        make_repo,
    )
    assert targets_of(edges, "walk.Walk") == set()


# -- 2. a method call on a standard-library or third-party object is not the repository's method ---


def test_python_methods_of_external_objects_are_not_repository_methods(make_repo) -> None:
    edges = calls(
        {
            "app/request.py": "class Request:\n    def json(self):\n        return {}\n",
            "app/codec.py": "class Codec:\n    def decode(self, data):\n        return data\n",
            "app/environment.py": "class Environment:\n    def extend(self, **kw):\n        return kw\n",
            "app/client.py": "import requests\n\n\ndef fetch(url):\n    response = requests.get(url)\n"
            "    return response.json()\n\n\ndef text(data: bytes):\n    return data.decode()\n\n\n"
            "def collect(items):\n    results = []\n    results.extend(items)\n    return results\n",
        },
        make_repo,
    )
    assert targets_of(edges, "app.client.fetch") == set()
    assert targets_of(edges, "app.client.text") == set()
    assert targets_of(edges, "app.client.collect") == set()


def test_go_standard_library_receiver_is_not_a_repository_method(make_repo) -> None:
    edges = calls(
        {
            "ctx.go": "package web\n\ntype Session struct{}\n\nfunc (s *Session) Context() int {\n\treturn 1\n}\n",
            "handler.go": 'package web\n\nimport "net/http"\n\n'
            "func Handle(w http.ResponseWriter, r *http.Request) {\n\t_ = r.Context()\n}\n",
        },
        make_repo,
    )
    assert targets_of(edges, "handler.Handle") == set()


def test_rust_standard_library_receivers_are_not_repository_functions(make_repo) -> None:
    edges = calls(
        {
            "src/walk.rs": "pub struct DirEntry;\n\npub fn is_empty(entry: &DirEntry) -> bool {\n    true\n}\n\n"
            "pub struct Printer;\n\nimpl Printer {\n    pub fn lock(&self) -> u32 {\n        1\n    }\n}\n",
            "src/main.rs": "use std::io;\n\nfn matches(pattern: &str) -> bool {\n    pattern.is_empty()\n}\n\n"
            "fn print() {\n    let _out = io::stdout().lock();\n}\n",
        },
        make_repo,
    )
    assert targets_of(edges, "src.main.matches") == set()
    assert targets_of(edges, "src.main.print") == set()


def test_javascript_method_of_an_array_is_not_a_repository_function(make_repo) -> None:
    edges = calls(
        {
            "lib/queue.js": "export class Queue {\n  drain() {\n    return [];\n  }\n}\n",
            "lib/run.js": "export function run(jobs) {\n  const pending = [];\n  pending.drain();\n"
            "  return jobs.map((job) => job);\n}\n",
        },
        make_repo,
    )
    assert targets_of(edges, "lib.run.run") == set()


# -- 3. self.attr.m() is not self.m() --------------------------------------------------------------


def test_python_attribute_method_is_not_the_own_method(make_repo) -> None:
    edges = calls(
        {
            "app/cache.py": "class Cache:\n    def __init__(self):\n        self.store = {}\n\n"
            "    def lookup(self, key):\n        return self.store.get(key)\n\n"
            "    def reset(self):\n        self.store.clear()\n\n"
            "    def get(self, key):\n        return key\n\n    def clear(self):\n        return None\n",
        },
        make_repo,
    )
    assert targets_of(edges, "app.cache.Cache.lookup") == set()
    assert targets_of(edges, "app.cache.Cache.reset") == set()


def test_typescript_field_method_is_not_the_own_method(make_repo) -> None:
    edges = calls(
        {
            "src/dual.ts": "export class DualMap {\n  private map = new Map<string, number>();\n"
            "  get(key: string) {\n    return 1;\n  }\n"
            "  has(key: string) {\n    return this.map.get(key) !== undefined;\n  }\n"
            "  size() {\n    return this.get('x');\n  }\n}\n",
        },
        make_repo,
    )
    assert targets_of(edges, "src.dual.DualMap.has") == set()
    assert targets_of(edges, "src.dual.DualMap.size") == {"src.dual.DualMap.get"}


def test_go_field_method_is_not_the_own_method(make_repo) -> None:
    edges = calls(
        {
            "store.go": 'package web\n\nimport "sync"\n\ntype Store struct {\n\tmu sync.Mutex\n}\n\n'
            "func (s *Store) Lock() {}\n\nfunc (s *Store) Put() {\n\ts.mu.Lock()\n}\n\n"
            "func (s *Store) Close() {\n\ts.Lock()\n}\n",
        },
        make_repo,
    )
    assert targets_of(edges, "store.Store.Put") == set()
    assert targets_of(edges, "store.Store.Close") == {"store.Store.Lock"}


def test_java_field_method_is_not_the_own_method(make_repo) -> None:
    edges = calls(
        {
            "src/Bag.java": "package app;\n\nimport java.util.ArrayList;\nimport java.util.List;\n\n"
            "public class Bag {\n    private List<String> items = new ArrayList<>();\n\n"
            "    public void add(String x) {\n    }\n\n"
            "    public void put(String x) {\n        this.items.add(x);\n    }\n}\n",
        },
        make_repo,
    )
    assert targets_of(edges, "src.Bag.Bag.put") == set()


# -- 4. builtins are not repository methods ------------------------------------------------------------


def test_python_builtins_are_not_repository_methods(make_repo) -> None:
    edges = calls(
        {
            "app/environment.py": "class Environment:\n    def getattr(self, obj, name):\n        return obj\n\n"
            "    def compile(self, source):\n        return source\n",
            "app/use.py": "def read(obj, name):\n    return getattr(obj, name)\n\n\n"
            "def build(text):\n    return compile(text, 'x', 'exec')\n",
        },
        make_repo,
    )
    assert targets_of(edges, "app.use.read") == set()
    assert targets_of(edges, "app.use.build") == set()


def test_javascript_globals_are_not_repository_functions(make_repo) -> None:
    edges = calls(
        {
            "src/preload.ts": "export function allSettled(items: unknown[]) {\n  return items;\n}\n",
            "src/params.ts": "export function isArray(value: unknown) {\n  return false;\n}\n",
            "src/close.ts": "export async function close(tasks: Promise<void>[]) {\n"
            "  await Promise.allSettled(tasks);\n  return Array.isArray(tasks);\n}\n",
        },
        make_repo,
    )
    assert targets_of(edges, "src.close.close") == set()


# -- 5. an inherited method is the base class's, not a sibling's ------------------------------------


def test_python_inherited_method_is_the_base_class_one(make_repo) -> None:
    edges = calls(
        {
            "visitors/base.py": "class NodeVisitor:\n    def generic_visit(self, node):\n        return node\n",
            "visitors/sibling.py": "from visitors.base import NodeVisitor\n\n\nclass Transformer(NodeVisitor):\n"
            "    def generic_visit(self, node):\n        return None\n",
            "visitors/child.py": "from visitors.base import NodeVisitor\n\n\nclass Compiler(NodeVisitor):\n"
            "    def visit_name(self, node):\n        return self.generic_visit(node)\n",
        },
        make_repo,
    )
    assert targets_of(edges, "visitors.child.Compiler.visit_name") == {
        "visitors.base.NodeVisitor.generic_visit"
    }


def test_typescript_inherited_method_is_the_base_class_one(make_repo) -> None:
    edges = calls(
        {
            "src/base.ts": "export class Visitor {\n  visit(): number {\n    return 1;\n  }\n}\n",
            "src/sibling.ts": "import { Visitor } from './base';\n\nexport class Printer extends Visitor {\n"
            "  visit(): number {\n    return 2;\n  }\n}\n",
            "src/child.ts": "import { Visitor } from './base';\n\nexport class Compiler extends Visitor {\n"
            "  run(): number {\n    return this.visit();\n  }\n}\n",
        },
        make_repo,
    )
    assert targets_of(edges, "src.child.Compiler.run") == {"src.base.Visitor.visit"}


def test_go_promoted_method_is_the_embedded_type_one(make_repo) -> None:
    edges = calls(
        {
            "base.go": "package ast\n\ntype Base struct{}\n\nfunc (b *Base) Visit() {}\n",
            "sibling.go": "package ast\n\ntype Printer struct{}\n\nfunc (p *Printer) Visit() {}\n",
            "child.go": "package ast\n\ntype Compiler struct {\n\tBase\n}\n\n"
            "func (c *Compiler) Run() {\n\tc.Visit()\n}\n",
        },
        make_repo,
    )
    assert targets_of(edges, "child.Compiler.Run") == {"base.Base.Visit"}


# -- 6. a default import binds what ``export default`` names ------------------------------------------


def test_typescript_default_import_binds_the_default_export(make_repo) -> None:
    edges = calls(
        {
            "src/index.ts": "export function helper(): number {\n  return 1;\n}\n\n"
            "function createClient(): number {\n  return helper();\n}\n\nexport default createClient;\n",
            "src/main.ts": 'import client from "./index";\n\nexport function start(): number {\n  return client();\n}\n',
        },
        make_repo,
    )
    assert targets_of(edges, "src.main.start") == {"src.index.createClient"}


# -- what resolution now finds -------------------------------------------------------------------------


def test_python_reexports_receiver_types_and_super(make_repo) -> None:
    edges = calls(
        {
            "pkg/__init__.py": "from .environment import Environment as Environment\n",
            "pkg/environment.py": "from .template import Template\n\n\nclass Environment:\n"
            "    def get_template(self, name) -> 'Template':\n        return Template()\n",
            "pkg/template.py": "class Base:\n    def render(self):\n        return ''\n\n\n"
            "class Template(Base):\n    def render(self):\n        return super().render()\n",
            "app.py": "from pkg import Environment\n\n\ndef page():\n    env = Environment()\n"
            "    template = env.get_template('x')\n    return template.render()\n",
        },
        make_repo,
    )
    assert targets_of(edges, "app.page") == {
        "pkg.environment.Environment",
        "pkg.environment.Environment.get_template",
        "pkg.template.Template.render",
    }
    assert targets_of(edges, "pkg.template.Template.render") == {"pkg.template.Base.render"}


def test_go_method_sharing_a_name_with_a_function_is_found_by_receiver_type(make_repo) -> None:
    edges = calls(
        {
            "mux.go": "package chi\n\ntype Mux struct{}\n\nfunc NewMux() *Mux {\n\treturn &Mux{}\n}\n\n"
            "func (m *Mux) Get(pattern string) {}\n",
            "get.go": "package chi\n\nfunc Get(pattern string) {}\n",
            "main.go": 'package chi\n\nfunc Route() {\n\tm := NewMux()\n\tm.Get("/")\n\tGet("/")\n}\n',
        },
        make_repo,
    )
    assert targets_of(edges, "main.Route") == {"mux.NewMux", "mux.Mux.Get", "get.Get"}


def test_calls_in_anonymous_functions_are_credited_to_the_enclosing_definition(make_repo) -> None:
    edges = calls(
        {
            "lib/buildFullPath.js": "export default function buildFullPath(base, url) {\n  return base + url;\n}\n",
            "lib/resolveConfig.js": "import buildFullPath from './buildFullPath.js';\n\n"
            "export default (config) => {\n  return buildFullPath(config.baseURL, config.url);\n};\n",
            "lib/http.js": "import buildFullPath from './buildFullPath.js';\n\n"
            "export function dispatch(config) {\n  return new Promise(function (resolve) {\n"
            "    resolve(buildFullPath(config.baseURL, config.url));\n  });\n}\n",
            "app/util.py": "def clean(x):\n    return x\n",
            "app/use.py": "from app.util import clean\n\n\ndef handler(items):\n"
            "    return sorted(items, key=lambda i: clean(i))\n\n\nDEFAULT = (lambda: clean(1))()\n",
        },
        make_repo,
    )
    full_path = "lib.buildFullPath.buildFullPath"
    assert {s for s, t in edges if t == full_path} == {"lib.resolveConfig", "lib.http.dispatch"}
    assert {s for s, t in edges if t == "app.util.clean"} == {"app.use.handler", "app.use.DEFAULT"}


def test_an_overloaded_function_is_its_implementation(make_repo) -> None:
    b: RepoBuilder = make_repo()
    b.write(
        "app/parse.py",
        "from typing import overload\n\n\ndef helper(x):\n    return x\n\n\n"
        "@overload\ndef parse(x: int) -> int: ...\n@overload\ndef parse(x: str) -> str: ...\n"
        "def parse(x):\n    return helper(x)\n",
    )
    b.commit("init")
    pipeline.update_index(str(b.path))
    conn = sqlite3.connect(default_db_path(str(b.path / ".git")))
    try:
        rows = conn.execute(
            "SELECT start_line, end_line, signature FROM nodes WHERE qualified_name = 'app.parse.parse'"
        ).fetchall()
    finally:
        conn.close()
    assert rows == [(12, 13, "def parse(x)")]
