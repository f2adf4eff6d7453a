"""``knowing-pr task``'s ranked file list: the query split into its parts, BM25 over whole files
kept in the store (``file_words``, incremental, filled in for an older store), the fused list in
the JSON pack and the markdown's "Where to look" — on real repositories indexed for real."""

from __future__ import annotations

import dataclasses
import json
import sqlite3

from knowing_pr.config import TaskParams
from knowing_pr.pipeline import TaskRequest, build_task_pack, open_workspace, update_index
from knowing_pr.rank.task_files import FileChannels, is_vendored, rank_task_files
from knowing_pr.render import render_pack
from knowing_pr.store.filewords import file_text_words
from knowing_pr.task.parts import code_names, file_query, split_task

LOADER_PY = '''"""Template loaders."""


class PackageLoader:
    """Load templates from a directory in a Python package."""

    def get_source(self, environment, template):
        spec = self.find_spec(template)
        return spec.origin

    def find_spec(self, template):
        raise KeyError(template)
'''

RETRY_PY = '''"""Retries for the connection pool."""


class Retry:
    def increment(self, method, url):
        return self.backoff_factor * 2
'''

ISSUE = """PackageLoader cannot find templates in a namespace package

When the package has no `__init__.py` the loader fails:

```python
env = Environment(loader=PackageLoader("app"))
env.get_template("index.html")
```

Traceback (most recent call last):
  File "/venv/lib/python3.12/site-packages/app/view.py", line 3, in render
  File "/venv/lib/python3.12/site-packages/tmpl/loaders.py", line 9, in get_source
KeyError: 'index.html'
"""


def _filler(i: int) -> str:
    return f'"""Module {i}."""\n\n\ndef helper_{i}(value):\n    return value + {i}\n'


def _repo(make_repo, files: dict[str, str]):
    b = make_repo()
    for path, text in files.items():
        b.write(path, text)
    b.commit("initial")
    return b


def _words(db) -> dict[str, str]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT files.path, file_words.text_words FROM file_words JOIN files ON files.fid = file_words.rowid"
        ).fetchall()
    return dict(rows)


def test_the_query_is_split_into_prose_code_paths_frames_and_errors():
    parts = split_task(ISSUE + "\nSee tmpl/environment.py; set `auto_reload = True`.\n")
    assert {"PackageLoader", "env.get_template", "__init__.py", "auto_reload"} <= set(parts.identifiers)
    assert parts.frames == (
        "/venv/lib/python3.12/site-packages/app/view.py",
        "/venv/lib/python3.12/site-packages/tmpl/loaders.py",
    )
    assert "tmpl/environment.py" in parts.paths
    assert parts.errors == ("KeyError",)
    assert "namespace" in parts.prose and "Traceback" not in parts.prose
    assert "import" not in parts.identifiers  # code's keywords name nothing
    # identifiers are split for the query as the index splits a file's words
    query = file_query(["parseHTTPResponse"])
    assert query == '"parsehttpresponse" OR "parse" OR "http" OR "response"'


def test_a_files_words_are_its_identifiers_and_their_parts_each_kept_a_few_times():
    words = file_text_words(b"def parseHTTPResponse(value):\n" + b"    value = value\n" * 20).split()
    assert {"parsehttpresponse", "parse", "http", "response"} <= set(words)
    assert words.count("value") == 8  # MAX_REPEATS


def test_file_words_are_written_at_index_time_and_follow_changes(make_repo, tmp_path):
    b = _repo(make_repo, {"src/tmpl/loaders.py": LOADER_PY, "src/net/retry.py": RETRY_PY})
    db = tmp_path / "index.sqlite"
    update_index(str(b.path), db=str(db))
    words = _words(db)
    assert set(words) == {"src/tmpl/loaders.py", "src/net/retry.py"}
    assert "packageloader" in words["src/tmpl/loaders.py"].split()
    b.write("src/net/retry.py", RETRY_PY.replace("backoff_factor", "jitter_factor"))
    b.delete("src/tmpl/loaders.py")
    b.commit("change")
    update_index(str(b.path), db=str(db))
    words = _words(db)
    assert set(words) == {"src/net/retry.py"}
    assert (
        "jitter" in words["src/net/retry.py"].split() and "backoff" not in words["src/net/retry.py"].split()
    )


def test_a_store_from_before_file_words_keeps_its_rows_and_gets_the_words(make_repo, tmp_path):
    b = _repo(make_repo, {"src/tmpl/loaders.py": LOADER_PY, "src/net/retry.py": RETRY_PY})
    db = tmp_path / "index.sqlite"
    update_index(str(b.path), db=str(db))
    with sqlite3.connect(db) as conn:  # what a schema-5 store holds
        conn.execute("DROP TABLE file_words")
        conn.execute("PRAGMA user_version=5")
        files_before = conn.execute("SELECT count(*) FROM files").fetchone()[0]
    b.write("src/net/retry.py", RETRY_PY + "\n\ndef reset():\n    pass\n")
    b.commit("one file changes")
    report = update_index(str(b.path), db=str(db))  # incremental: only retry.py is parsed again
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 7
        assert conn.execute("SELECT count(*) FROM files").fetchone()[0] == files_before
    assert report.files_parsed == 1
    assert set(_words(db)) == {"src/tmpl/loaders.py", "src/net/retry.py"}  # the unchanged one filled in


def test_the_task_pack_lists_at_least_twenty_files_the_named_ones_first(make_repo, tmp_path):
    files = {f"src/tmpl/mod{i}.py": _filler(i) for i in range(30)}
    files.update({"src/tmpl/loaders.py": LOADER_PY, "src/app/view.py": "def render():\n    return 1\n"})
    b = _repo(make_repo, files)
    for budget in (500, 2000):  # the list is whole whatever the budget (the symbols give way)
        small = open_workspace(str(b.path), db=str(tmp_path / "index.sqlite"), budget=budget)
        assert len(build_task_pack(small, TaskRequest(ISSUE, fmt="json")).pack.files) >= 20, budget
    ws = open_workspace(str(b.path), db=str(tmp_path / "index.sqlite"))
    run = build_task_pack(ws, TaskRequest(ISSUE, fmt="json"))
    paths = [f.path for f in run.pack.files]
    assert len(paths) >= 20
    assert paths[0] == "src/tmpl/loaders.py"  # the innermost frame, matched by its path's tail
    assert "src/app/view.py" in paths[:3]
    first = run.pack.files[0]
    assert first.score == 1.0 and "named" in first.reasons and first.evidence
    assert all(a.score >= b.score for a, b in zip(run.pack.files, run.pack.files[1:], strict=False))
    shown = json.loads(render_pack(run.pack, "json"))
    assert [f["path"] for f in shown["files"]][:2] == paths[:2]
    markdown = render_pack(run.pack, "markdown")
    assert "**Where to look**" in markdown and "`src/tmpl/loaders.py`" in markdown


def test_vendored_and_test_files_rank_below_the_code_beside_them(make_repo, tmp_path):
    b = _repo(
        make_repo,
        {
            "lib/adapters.py": "class HTTPAdapter:\n    def send(self, request, retries):\n        return retries\n",
            "lib/packages/urllib3/retry.py": RETRY_PY * 3,
            "tests/test_retry.py": RETRY_PY.replace("class Retry", "class TestRetry") * 3,
        },
    )
    ws = open_workspace(str(b.path), db=str(tmp_path / "index.sqlite"))
    run = build_task_pack(ws, TaskRequest("the adapter's Retry increment ignores backoff_factor retries"))
    paths = [f.path for f in run.pack.files]
    assert paths[0] == "lib/adapters.py"
    named = build_task_pack(ws, TaskRequest("Retry.increment in lib/packages/urllib3/retry.py is wrong"))
    assert named.pack.files[0].path == "lib/packages/urllib3/retry.py"  # named: not demoted


def test_bm25_is_one_channel_of_the_fusion_and_the_order_without_the_others():
    channels = FileChannels(bm25=["a.py", "b.py", "c.py"], names=["c.py"], symbols=["c.py", "b.py"])
    alone = TaskParams(
        files_weight_names=0,
        files_weight_named=0,
        files_weight_symbols=0,
        files_weight_seeds=0,
        files_history_prior=0,
    )
    assert [f.path for f in rank_task_files(channels, alone, lambda p: False)] == ["a.py", "b.py", "c.py"]
    fused = [
        f.path
        for f in rank_task_files(
            channels,
            dataclasses.replace(alone, files_weight_symbols=1.0, files_weight_names=0.5),
            lambda p: False,
        )
    ]
    assert fused[0] == "c.py" and set(fused) == {"a.py", "b.py", "c.py"}
    demoted = [f.path for f in rank_task_files(channels, alone, lambda p: p == "a.py")]
    assert demoted[-1] == "a.py"
    assert is_vendored("requests/packages/urllib3/util.py", TaskParams().vendored_segments)
    assert not is_vendored("packages/core/src/index.ts", TaskParams().vendored_segments)  # a monorepo's own


def test_the_history_prior_reorders_the_channels_files_and_adds_none():
    channels = FileChannels(bm25=["small.py", "central.py"], history={"central.py": 1.0, "elsewhere.py": 1.0})
    off = TaskParams(
        files_weight_names=0,
        files_weight_named=0,
        files_weight_symbols=0,
        files_weight_seeds=0,
        files_history_prior=0,
    )
    assert [f.path for f in rank_task_files(channels, off, lambda p: False)] == ["small.py", "central.py"]
    on = dataclasses.replace(off, files_history_prior=2.0)
    assert [f.path for f in rank_task_files(channels, on, lambda p: False)] == ["central.py", "small.py"]


def test_the_defs_channel_puts_the_file_defining_a_name_the_task_writes_as_code_first(make_repo, tmp_path):
    caller = "from widgets.factory import make_widget\n\n\ndef build_{i}(size):\n" + (
        "    make_widget(size)\n" * 6
    )
    files = {f"src/widgets/screen{i}.py": caller.format(i=i) for i in range(4)}
    files["src/widgets/factory.py"] = "def make_widget(width):\n    return [width]\n"
    files.update({f"src/misc/mod{i}.py": _filler(i) for i in range(8)})
    b = _repo(make_repo, files)
    ws = open_workspace(str(b.path), db=str(tmp_path / "index.sqlite"))
    task = "make_widget ignores the size of the screen"
    assert code_names(task, split_task(task)) == ["make_widget"]
    many = " ".join(f"helper_{i}" for i in range(1000))
    assert len(code_names(many, split_task(many))) == 160  # each name is one lookup: bounded
    paths = [f.path for f in build_task_pack(ws, TaskRequest(task)).pack.files]
    assert paths[0] == "src/widgets/factory.py"
    first = build_task_pack(ws, TaskRequest(task)).pack.files[0]
    assert first.reasons[0] == "defs" and "defines a name" in first.evidence  # its strongest channel
    without = dataclasses.replace(ws.settings.task, files_weight_defs=0.0)
    ws = dataclasses.replace(ws, settings=dataclasses.replace(ws.settings, task=without))
    assert build_task_pack(ws, TaskRequest(task)).pack.files[0].path != "src/widgets/factory.py"


def test_the_graph_channels_rerank_the_lexical_files_and_add_none_beyond_their_depth():
    channels = FileChannels(bm25=["a.py", "b.py"], symbols=["far.py", "b.py"], seeds=["far.py"])
    params = TaskParams(files_history_prior=0, files_graph_depth=50)
    ranked = [f.path for f in rank_task_files(channels, params, lambda p: False)]
    assert ranked == ["b.py", "a.py"]  # the graph lifts b.py; far.py, which no word reaches, is not listed
    unlimited = dataclasses.replace(params, files_graph_depth=0)
    assert "far.py" in [f.path for f in rank_task_files(channels, unlimited, lambda p: False)]
    shallow = dataclasses.replace(params, files_graph_depth=1)
    assert [f.path for f in rank_task_files(channels, shallow, lambda p: False)] == ["a.py", "b.py"]


def test_test_files_rank_below_the_code_even_when_the_task_talks_about_tests(make_repo, tmp_path):
    b = _repo(
        make_repo,
        {
            "lib/net/retry.py": RETRY_PY,
            "tests/test_retry.py": "".join(
                f"def test_increment_{i}():\n    assert Retry(backoff_factor={i}).increment('GET', '/')\n"
                for i in range(12)
            ),
            **{f"lib/net/mod{i}.py": _filler(i) for i in range(6)},
        },
    )
    ws = open_workspace(str(b.path), db=str(tmp_path / "index.sqlite"))
    task = "Retry increment ignores backoff_factor; add a test for it"
    lexical = dataclasses.replace(ws.settings.task, files_weight_symbols=0.0, files_weight_seeds=0.0)
    ws.settings = dataclasses.replace(ws.settings, task=lexical)
    assert [f.path for f in build_task_pack(ws, TaskRequest(task)).pack.files][0] == "lib/net/retry.py"
    old_rule = dataclasses.replace(lexical, files_demote_tests_always=False)
    ws.settings = dataclasses.replace(ws.settings, task=old_rule)
    kept = [f.path for f in build_task_pack(ws, TaskRequest(task)).pack.files]
    assert kept[0] == "tests/test_retry.py"  # the old rule: a task about tests keeps them whole
    named = build_task_pack(ws, TaskRequest("tests/test_retry.py: Retry increment is flaky"))
    assert named.pack.files[0].path == "tests/test_retry.py"


LEXER_PY = '''"""Split template source into tokens."""


def scan_raw_block(source, position):
    """Find the end of a raw block: slow when the raw block is long."""
    return source.find("endraw", position)


def tokenize(source):
    return [scan_raw_block(source, 0)]
'''

ENVIRONMENT_PY = '''"""The template environment: settings, loaders, rendering."""


class Environment:
    def from_string(self, source, globals=None):
        return Template(self, source, globals)

    def get_template(self, name, globals=None):
        return self.from_string(name, globals)


class Template:
    def __init__(self, environment, source, globals):
        self.environment, self.source, self.globals = environment, source, globals

    def render(self, context=None, **variables):
        return self.source.format(context=context, **variables)
'''

LONG_REPORT = """Lexer slows down on long raw blocks

```python
from tmpl.environment import Environment, Template
env = Environment()
template = env.from_string(source, globals={"user": user})
template.render(context={"user": user}, variables=variables)
template = env.get_template("page.html", globals=globals)
template.render(context=context, variables=variables)
```
"""


def test_the_title_channel_finds_the_file_an_issues_title_names_when_its_snippet_names_another(
    make_repo, tmp_path
):
    b = _repo(make_repo, {"src/tmpl/lexer.py": LEXER_PY, "src/tmpl/environment.py": ENVIRONMENT_PY})
    ws = open_workspace(str(b.path), db=str(tmp_path / "index.sqlite"))
    assert ws.settings.task.files_weight_title > 0
    run = build_task_pack(ws, TaskRequest(LONG_REPORT, fmt="json"))
    files = run.pack.files
    assert files[0].path == "src/tmpl/lexer.py" and "title" in files[0].reasons
    assert "the task's title" in files[0].evidence
    where = render_pack(run.pack, "markdown").split("**Where to look**", 1)[1]
    first_line = next(line for line in where.splitlines() if line.startswith("- "))
    assert first_line.startswith("- `src/tmpl/lexer.py` — the task's title")  # its reason in words
    untitled = dataclasses.replace(ws.settings.task, files_weight_title=0.0)
    off = build_task_pack(
        dataclasses.replace(ws, settings=dataclasses.replace(ws.settings, task=untitled)),
        TaskRequest(LONG_REPORT, fmt="json"),
    ).pack.files
    assert all("title" not in f.reasons for f in off)
    assert off[0].path == "src/tmpl/environment.py"  # the snippet's words alone put the API first
    # a text that is all title: the channel would repeat ``bm25``, so it stays empty
    alone = build_task_pack(ws, TaskRequest("Lexer slows down on long raw blocks", fmt="json")).pack.files
    assert alone[0].path == "src/tmpl/lexer.py" and all("title" not in f.reasons for f in alone)


def test_every_file_channel_has_its_reason_in_words_for_the_markdown():
    from knowing_pr.rank.task_files import CHANNELS
    from knowing_pr.render.markdown import _WHERE_REASONS

    assert set(_WHERE_REASONS) == set(CHANNELS)


def test_a_where_to_look_line_gives_the_three_strongest_reasons_and_the_json_keeps_all(make_repo, tmp_path):
    b = _repo(make_repo, {"src/tmpl/lexer.py": LEXER_PY, "src/tmpl/environment.py": ENVIRONMENT_PY})
    ws = open_workspace(str(b.path), db=str(tmp_path / "index.sqlite"))
    run = build_task_pack(ws, TaskRequest(LONG_REPORT, fmt="json"))
    many = next(f for f in run.pack.files if len(f.reasons) > 3)
    assert [
        f["reasons"] for f in json.loads(render_pack(run.pack, "json"))["files"] if f["path"] == many.path
    ] == [list(many.reasons)]
    where = render_pack(run.pack, "markdown").split("**Where to look**", 1)[1]
    from knowing_pr.render.markdown import _WHERE_REASONS

    line = next(x for x in where.splitlines() if x.startswith(f"- `{many.path}` — "))
    assert line == f"- `{many.path}` — " + ", ".join(_WHERE_REASONS[r] for r in many.reasons[:3])


def test_a_long_reports_markdown_names_its_title_and_how_many_lines_follow(make_repo, tmp_path):
    b = _repo(make_repo, {"src/tmpl/lexer.py": LEXER_PY, "src/tmpl/environment.py": ENVIRONMENT_PY})
    ws = open_workspace(str(b.path), db=str(tmp_path / "index.sqlite"))
    markdown = render_pack(build_task_pack(ws, TaskRequest(LONG_REPORT, fmt="json")).pack, "markdown")
    lines = [x for x in LONG_REPORT.splitlines() if x.strip()]
    assert f"Task: Lexer slows down on long raw blocks (and {len(lines) - 1} more lines)\n" in markdown
    assert "get_template" not in markdown.split("**Where to look**")[0]  # the snippet is not the header
    short = render_pack(build_task_pack(ws, TaskRequest("lexer raw blocks", fmt="json")).pack, "markdown")
    assert "Task: lexer raw blocks\n" in short


def test_the_markdown_header_of_a_report_that_opens_with_code_or_odd_breaks(make_repo, tmp_path):
    b = _repo(make_repo, {"src/tmpl/lexer.py": LEXER_PY, "src/tmpl/environment.py": ENVIRONMENT_PY})
    ws = open_workspace(str(b.path), db=str(tmp_path / "index.sqlite"))
    fenced = "```python\nenv.from_string(source)\n```\n\nLexer slows down on long raw blocks\nIt hangs.\n"
    markdown = render_pack(build_task_pack(ws, TaskRequest(fenced, fmt="json")).pack, "markdown")
    assert "Task: Lexer slows down on long raw blocks (and 4 more lines)\n" in markdown  # its title
    trace = 'Traceback (most recent call last):\n  File "src/tmpl/lexer.py", line 5, in tokenize\nValueError: raw\n'
    # line breaks to Python's ``splitlines``, escapes to a reader: rendered, never a crash
    for odd in ("\x1c", "\x1f \n \x1e", "\u2028"):
        run = build_task_pack(ws, TaskRequest(odd, fmt="json", error_text=trace))
        header = render_pack(run.pack, "markdown").split("**Where to look**")[0]
        assert not {"\x1c", "\x1e", "\x1f"} & set(header)
        assert ("Task: " in header) == (odd != "\u2028")  # a text of line breaks alone has no line


FILTERS_PY = '''"""Template filters: indent, wordwrap, truncate and the others."""


def do_indent(text, width=4, first=False, blank=False):
    """Pad every line of a text by a number of spaces: the indent filter; blank lines too."""
    lines = text.splitlines()
    return "\\n".join(" " * width + line for line in lines)


def do_wordwrap(text, width=79):
    """Wrap a text at a width; the wordwrap filter."""
    return text


def do_truncate(text, length=255):
    """Truncate a text; the truncate filter."""
    return text[:length]
'''

WRITER_PY = '''"""The code writer the compiler emits Python source with."""


class Writer:
    def writeline(self, line):
        self.indent()
        return line

    def newline(self):
        self.indent()

    def indent(self):
        self.level += 1

    def outdent(self):
        self.level -= 1
'''

EMIT_PY = """from tmpl.writer import Writer


def emit_block_{i}(writer: Writer):
    writer.indent()
    writer.writeline("pass")
    writer.outdent()
"""


def test_the_symbol_order_follows_the_task_file_list(make_repo, tmp_path):
    """The file list puts the filters' module first (the title names the filter) while the walk
    favours the writer whose ``indent`` four modules call (jinja's ``indent`` filter report, where
    ``CodeGenerator.indent`` led): the first symbol shown is in the list's first file; with
    ``rank_file_prior`` 0 it is the writer's."""
    files = {"src/tmpl/filters.py": FILTERS_PY, "src/tmpl/writer.py": WRITER_PY}
    files.update({f"src/tmpl/emit{i}.py": EMIT_PY.format(i=i) for i in range(4)})
    files.update({f"src/misc/mod{i}.py": _filler(i) for i in range(6)})
    b = _repo(make_repo, files)
    ws = open_workspace(str(b.path), db=str(tmp_path / "index.sqlite"))
    task = "Strip trailing whitespace in the indent filter\n\nThe indent filter leaves spaces on blank lines."
    run = build_task_pack(ws, TaskRequest(task, fmt="json"))
    assert run.pack.files[0].path == "src/tmpl/filters.py"
    assert run.pack.symbols[0].node.path == "src/tmpl/filters.py"
    off = dataclasses.replace(ws.settings.task, rank_file_prior=0.0)
    ws_off = dataclasses.replace(ws, settings=dataclasses.replace(ws.settings, task=off))
    before = build_task_pack(ws_off, TaskRequest(task, fmt="json"))
    assert before.pack.files[0].path == "src/tmpl/filters.py"  # the same file list
    assert before.pack.symbols[0].node.path == "src/tmpl/writer.py"
    assert before.pack.pack_root != run.pack.pack_root  # the weight enters a task's PackRoot


def test_the_task_file_lists_settings_change_a_task_packs_root_and_no_pr_packs(make_repo, tmp_path) -> None:
    """Only a task pack reads the file list's settings (``files_*``) and its order along it
    (``rank_file_prior``): a PR pack of the same change keeps its PackRoot when they change."""
    from knowing_pr.pipeline import PrRequest, build_pr_pack

    files = {"src/tmpl/filters.py": FILTERS_PY, "src/tmpl/writer.py": WRITER_PY}
    b = _repo(make_repo, files)
    b.write("src/tmpl/filters.py", FILTERS_PY + "\n\ndef trim(text):\n    return text.strip()\n")
    b.commit("trim")
    ws = open_workspace(str(b.path), db=str(tmp_path / "index.sqlite"))
    other = dataclasses.replace(
        ws.settings.task, files_weight_title=0.25, files_listed=7, rank_file_prior=2.0
    )
    ws_other = dataclasses.replace(ws, settings=dataclasses.replace(ws.settings, task=other))
    task = TaskRequest("Strip trailing whitespace in the indent filter", fmt="json")
    assert build_task_pack(ws, task).pack.pack_root != build_task_pack(ws_other, task).pack.pack_root
    pr = PrRequest(base="HEAD~1", fmt="json")
    assert build_pr_pack(ws, pr).pack_root == build_pr_pack(ws_other, pr).pack_root
