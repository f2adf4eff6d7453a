"""``task``'s past-commits channel: the mined commits' subjects kept in the store (``hist_commits``,
FTS5 ``commit_words``, incremental, only the history of the indexed head) and the files of the
commits whose subjects match the task lifted in its ranked file list — on real repositories
indexed for real."""

from __future__ import annotations

import dataclasses
import json
import sqlite3

from knowing_pr.pipeline import TaskRequest, build_task_pack, open_workspace, update_index
from knowing_pr.render import render_pack
from knowing_pr.store.commitwords import COMMITS_HEAD_META, search_commits
from knowing_pr.task.parts import split_task

GEARS_PY = '''"""The gear train."""


def turn_gears(train, steps):
    for gear in train:
        gear.angle += steps
    return train
'''


def _turning(i: int) -> str:
    # every file says "turn" and "gears" more often than gears.py: BM25 alone does not put it first
    return f'"""Turning part {i}."""\n\n\ndef turn_{i}(gears):\n    """Turn the gears, turn them."""\n' + (
        "    gears.turn()\n" * 4
    )


def _commits(db) -> list[tuple[str, str, list[str]]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT sha, subject, files FROM hist_commits ORDER BY seq").fetchall()
    return [(sha, subject, json.loads(files)) for sha, subject, files in rows]


def _meta(db, key: str) -> str | None:
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def _gear_repo(make_repo):
    b = make_repo()
    for i in range(6):
        b.write(f"src/parts/turn{i}.py", _turning(i))
    b.write("src/engine/gears.py", GEARS_PY)
    b.commit("initial layout")
    b.write("src/engine/gears.py", GEARS_PY.replace("+= steps", "+= steps % 360"))
    fix = b.commit("fix the frobnicator crash\n\nThe body is not the subject.")
    b.write("src/parts/turn0.py", _turning(0) + "\n# tidy\n")
    b.commit("tidy the first part")
    return b, fix


def test_a_past_commits_subject_lifts_the_file_it_changed(make_repo, tmp_path):
    b, fix = _gear_repo(make_repo)
    assert "frobnicator" not in GEARS_PY
    ws = open_workspace(str(b.path), db=str(tmp_path / "index.sqlite"))
    task = "frobnicator crashes when the gears turn"
    run = build_task_pack(ws, TaskRequest(task, fmt="json"))
    first = run.pack.files[0]
    assert first.path == "src/engine/gears.py"
    assert "commits" in first.reasons and "past commits" in first.evidence
    off = dataclasses.replace(ws.settings, task=dataclasses.replace(ws.settings.task, files_weight_commits=0))
    without = build_task_pack(dataclasses.replace(ws, settings=off), TaskRequest(task, fmt="json"))
    assert without.pack.files[0].path != "src/engine/gears.py"  # the channel is what lifts it
    stored = {sha: (subject, files) for sha, subject, files in _commits(ws.db_path)}
    assert stored[fix] == ("fix the frobnicator crash", ["src/engine/gears.py"])  # the subject only


def test_with_commits_title_on_the_subjects_are_asked_for_the_title_not_the_body(make_repo, tmp_path):
    b, _ = _gear_repo(make_repo)
    ws = open_workspace(str(b.path), db=str(tmp_path / "index.sqlite"))
    # the title is about the frobnicator fix; the body repeats the words of another subject
    task = "frobnicator crashes when the gears turn\n\nSeen right after we tidy the first part, tidy the first part."

    def commit_votes(settings) -> dict[str, float]:
        run = build_task_pack(dataclasses.replace(ws, settings=settings), TaskRequest(task, fmt="json"))
        return {f.path: dict(f.signals).get("commits", 0.0) for f in run.pack.files}

    titled = dataclasses.replace(ws.settings.task, files_commits_title=True)
    by_title = commit_votes(dataclasses.replace(ws.settings, task=titled))
    assert by_title["src/engine/gears.py"] > 0 and by_title.get("src/parts/turn0.py", 0.0) == 0
    by_text = dataclasses.replace(ws.settings.task, files_commits_title=False)
    votes = commit_votes(dataclasses.replace(ws.settings, task=by_text))
    assert votes["src/parts/turn0.py"] > votes["src/engine/gears.py"]  # the body's words outvote the title


def test_with_commits_title_on_a_task_without_a_line_of_prose_asks_with_its_whole_text(make_repo, tmp_path):
    b, _ = _gear_repo(make_repo)
    ws = open_workspace(str(b.path), db=str(tmp_path / "index.sqlite"))
    titled = dataclasses.replace(ws.settings.task, files_commits_title=True)
    ws = dataclasses.replace(ws, settings=dataclasses.replace(ws.settings, task=titled))
    task = (
        "Traceback (most recent call last):\n"
        '  File "src/engine/gears.py", line 5, in turn_gears\n'
        "FrobnicatorError: frobnicator crash\n"
    )
    assert split_task(task).title == ""
    run = build_task_pack(ws, TaskRequest(task, fmt="json"))
    gears = next(f for f in run.pack.files if f.path == "src/engine/gears.py")
    assert "commits" in gears.reasons


def test_a_tasks_title_is_its_first_line_of_prose():
    assert split_task("Fix the frobnicator\n\nIt crashes.").title == "Fix the frobnicator"
    # a traceback or a fenced block before the prose is no title
    trace = 'Traceback (most recent call last):\n  File "a/b.py", line 3, in f\nKeyError: 1\nThe cache loses keys\n'
    assert split_task(trace).title == "The cache loses keys"
    assert split_task("```\nx = 1\n```\n\n  Loader ignores paths  \n").title == "Loader ignores paths"
    assert split_task("```\n1 + 1\n```").title == ""


def test_the_index_appends_a_new_commits_subject_and_keeps_only_the_heads_history(make_repo, tmp_path):
    b, fix = _gear_repo(make_repo)
    db = tmp_path / "index.sqlite"
    update_index(str(b.path), db=str(db), rev=fix + "~1")  # before the fix
    assert fix not in {sha for sha, _, _ in _commits(db)}  # no commit after the indexed head
    update_index(str(b.path), db=str(db))
    before = _commits(db)
    assert [s for _, s, _ in before] == ["initial layout", "fix the frobnicator crash", "tidy the first part"]
    b.write("src/engine/sprocket.py", "def spin(rate):\n    return rate\n")
    new = b.commit("teach the sprocket to spin backwards")
    update_index(str(b.path), db=str(db))
    after = _commits(db)
    assert after[:-1] == before  # appended, the rows before kept
    assert after[-1] == (new, "teach the sprocket to spin backwards", ["src/engine/sprocket.py"])
    assert _meta(db, COMMITS_HEAD_META) == new
    fresh = tmp_path / "fresh.sqlite"
    update_index(str(b.path), db=str(fresh))
    assert _commits(fresh) == after  # incremental equals from scratch
    with sqlite3.connect(db) as conn:
        assert [f for _, f in search_commits(conn, '"sprocket"', limit=5, max_files=30)] == [
            ("src/engine/sprocket.py",)
        ]


def test_a_store_from_before_the_table_gets_the_subjects_on_its_next_index(make_repo, tmp_path):
    b, _ = _gear_repo(make_repo)
    db = tmp_path / "index.sqlite"
    update_index(str(b.path), db=str(db))
    with sqlite3.connect(db) as conn:  # what a schema-6 store holds
        conn.execute("DROP TABLE hist_commits")
        conn.execute("DROP TABLE commit_words")
        conn.execute("DELETE FROM meta WHERE key = ?", (COMMITS_HEAD_META,))
        conn.execute("PRAGMA user_version=6")
        files_before = conn.execute("SELECT count(*) FROM files").fetchone()[0]
    update_index(str(b.path), db=str(db))  # the same head: nothing to mine, the subjects filled in
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 7
        assert conn.execute("SELECT count(*) FROM files").fetchone()[0] == files_before
    assert len(_commits(db)) == 3


def test_a_hostile_subject_is_stored_searched_and_never_rendered(make_repo, tmp_path):
    b, _ = _gear_repo(make_repo)
    hostile = 'gears" OR * NEAR( ); DROP TABLE files; -- <script>alert(1)</script> \x1b[31m' + "x" * 500
    b.write("src/engine/gears.py", GEARS_PY + "\n# again\n")
    b.commit(hostile + "\n\nbody")
    update_index(str(b.path), db=str(tmp_path / "index.sqlite"))
    ws = open_workspace(str(b.path), db=str(tmp_path / "index.sqlite"))
    stored = _commits(ws.db_path)[-1][1]
    assert len(stored) == 200 and stored.startswith('gears" OR *')  # bounded, kept as text
    for task in ('frobnicator" OR * NEAR( the gears turn', "gears NEAR( DROP files --"):
        run = build_task_pack(ws, TaskRequest(task))
        assert run.pack.files[0].path == "src/engine/gears.py"
        for fmt in ("markdown", "json"):
            shown = render_pack(run.pack, fmt)
            assert "alert(1)" not in shown and "x" * 50 not in shown and "\x1b" not in shown
    with sqlite3.connect(ws.db_path) as conn:
        assert conn.execute("SELECT count(*) FROM files").fetchone()[0] == 7
        assert search_commits(conn, 'NEAR( "', limit=5, max_files=30) == []  # does not parse: nothing


def test_the_streamed_log_and_the_pygit2_walk_read_the_same_subjects(make_repo):
    from knowing_pr.git import GitRepo

    b = make_repo()
    messages = [
        "plain subject",
        "a subject on\ntwo lines\n\nand a body that is not kept",
        "tabs\tand  spaces, ünïcode — and a very long tail " + "y" * 300,
        "\n\nleading blank lines",
        "a line of spaces\n   \nends the subject",  # git's blank line: spaces, tabs, CR alone
        "a CRLF message\r\n\r\nits body",
        " \n\t\nblank-ish lines first\nthen more subject\n\t\nbody",
        "a vertical tab\n\x0b\nis not blank to git",
    ]
    for i, message in enumerate(messages):
        b.write(f"f{i}.py", f"x = {i}\n")
        b.commit(message)
    repo = GitRepo.open(str(b.path))
    streamed = repo.history_commits("HEAD", max_commits=100)
    walked = list(repo.iter_commits("HEAD", max_commits=100, merge_changes=False))
    assert [c.subject for c in streamed] == [c.subject for c in walked]
    assert [c.subject for c in reversed(streamed)][:2] == ["plain subject", "a subject on two lines"]
    assert all(len(c.subject) <= 200 for c in streamed)


def test_a_latin1_commit_has_one_subject_whichever_way_it_is_read(make_repo, tmp_path):
    # git re-encodes a message by its `encoding` header and the repository's i18n.logOutputEncoding;
    # the pygit2 walk (shallow clones, renames) must read the same subject as the streamed log
    from knowing_pr.git import GitRepo

    b = make_repo()
    b.write("a.py", "a = 1\n")
    b.commit("start")
    b.write("a.py", "a = 2\n")
    b.git("add", "-A")
    message = tmp_path / "message.txt"
    message.write_bytes("café crème".encode("latin-1"))
    b.git("-c", "i18n.commitEncoding=ISO-8859-1", "commit", "-q", "-F", str(message))
    b.git("config", "i18n.logOutputEncoding", "ISO-8859-1")
    repo = GitRepo.open(str(b.path))
    streamed = repo.history_commits("HEAD", max_commits=10)
    walked = list(repo.iter_commits("HEAD", max_commits=10, merge_changes=False))
    assert {c.subject for c in streamed} == {"start", "café crème"}
    assert sorted(c.subject for c in streamed) == sorted(c.subject for c in walked)


def _count_mines_from_scratch(monkeypatch) -> list[str]:  # type: ignore[no-untyped-def]
    """The heads the index run's history step mines from scratch from now on (the step's own
    calls: a mine that falls back to scratch inside ``history/mine.py`` is not seen)."""
    from knowing_pr.index import history as index_history

    from_scratch: list[str] = []
    real = index_history.mine_history

    def spy(repo, head, params, previous=None, **kwargs):  # type: ignore[no-untyped-def]
        if previous is None:
            from_scratch.append(head)
        return real(repo, head, params, previous, **kwargs)

    monkeypatch.setattr(index_history, "mine_history", spy)
    return from_scratch


def test_a_merge_of_commits_already_mined_appends_none_and_walks_nothing_again(
    make_repo, tmp_path, monkeypatch
):
    b, _ = _gear_repo(make_repo)
    db = tmp_path / "index.sqlite"
    update_index(str(b.path), db=str(db))
    before = _commits(db)
    tree = b.git("rev-parse", "HEAD^{tree}").strip()
    merge = b.git("commit-tree", tree, "-p", "HEAD", "-p", "HEAD~1", "-m", "merge what is merged").strip()
    b.git("update-ref", "refs/heads/main", merge)
    from_scratch = _count_mines_from_scratch(monkeypatch)
    update_index(str(b.path), db=str(db))
    assert from_scratch == []  # the subjects' rows were not mined again for a merge of nothing new
    assert _commits(db) == before and _meta(db, COMMITS_HEAD_META) == merge
    fresh = tmp_path / "fresh.sqlite"
    update_index(str(b.path), db=str(fresh))
    assert _commits(fresh) == before  # what a mine from scratch keeps


def test_a_branch_switch_takes_the_kept_states_subjects_and_walks_nothing_again(
    make_repo, tmp_path, monkeypatch
):
    b, _ = _gear_repo(make_repo)
    db = tmp_path / "index.sqlite"
    update_index(str(b.path), db=str(db))  # a mine from scratch at main: kept, with its subjects
    fork = b.git("rev-parse", "HEAD").strip()
    b.write("src/engine/gears.py", GEARS_PY + "\n# main goes on\n")
    b.commit("main goes on")
    update_index(str(b.path), db=str(db))  # extended: the rows are main's
    b.git("checkout", "-q", "-b", "topic", fork)
    b.write("src/parts/turn1.py", _turning(1) + "\n# the topic's change\n")
    topic = b.commit("the topic changes a part")
    from_scratch = _count_mines_from_scratch(monkeypatch)
    update_index(str(b.path), db=str(db))  # main's rows do not extend to the topic: the kept state does
    assert from_scratch == []
    kept_heads = (_meta(db, "history_kept_heads") or "").split()
    assert fork in kept_heads and topic not in kept_heads  # extended from the kept state, not mined again
    monkeypatch.undo()
    fresh = tmp_path / "fresh.sqlite"
    update_index(str(b.path), db=str(fresh))
    assert _commits(db) == _commits(fresh)  # what a mine from scratch at the topic keeps
    assert [subject for _, subject, _ in _commits(db)][-1] == "the topic changes a part"
    assert _meta(db, COMMITS_HEAD_META) == topic


def test_the_same_head_mined_again_with_other_history_settings_keeps_a_fresh_stores_subjects(
    make_repo, tmp_path
):
    b = make_repo()
    b.write("src/a.py", "a = 1\n")
    b.commit("start")
    for i in range(3):  # commits of two files: counted by default, not with max_files_per_commit 1
        b.write(f"src/m{i}.py", f"m = {i}\n")
        b.write(f"src/n{i}.py", f"n = {i}\n")
        b.commit(f"add the module pair {i}")
    config = tmp_path / "one-file.yml"
    config.write_text("history: {max_files_per_commit: 1}\n")
    db, fresh = tmp_path / "used.sqlite", tmp_path / "fresh.sqlite"
    update_index(str(b.path), db=str(db))
    assert any(subject.startswith("add the module pair") for _, subject, _ in _commits(db))
    update_index(str(b.path), db=str(db), config=str(config))  # the same head, other settings
    update_index(str(b.path), db=str(fresh), config=str(config))
    assert _commits(db) == _commits(fresh)
    assert not any(subject.startswith("add the module pair") for _, subject, _ in _commits(db))


def test_a_state_kept_without_subjects_is_not_taken(make_repo, tmp_path):
    import json
    import zlib

    b, _ = _gear_repo(make_repo)
    db = tmp_path / "index.sqlite"
    update_index(str(b.path), db=str(db))
    fork = b.git("rev-parse", "HEAD").strip()
    from knowing_pr.config import Settings
    from knowing_pr.git import GitRepo
    from knowing_pr.history import HistoryState
    from knowing_pr.index.history import _kept_tag, recent_kept
    from knowing_pr.index.historykeep import _kept, kept_state_for
    from knowing_pr.store import Store

    def taken() -> bool:
        store = Store.open(db)
        try:
            settings = Settings()
            params, keep = settings.history, recent_kept(settings)  # as ``update_history`` keeps it
            repo = GitRepo.open(str(b.path))
            found = kept_state_for(
                store, repo, fork, HistoryState.empty(params), _kept_tag(repo, params, keep)
            )
            return found is not None
        finally:
            store.close()

    name = f"history_at:{fork}"
    assert taken()
    with sqlite3.connect(db) as conn:
        tag, data = conn.execute("SELECT tag, data FROM blobs WHERE name = ?", (name,)).fetchone()
    kept = _kept(zlib.decompress(data))
    meta, files, pairs = kept.state.to_rows()
    # the kept state as the release before the subjects wrote it: JSON rows, no commits, its tag
    earlier = {"meta": meta, "files": files, "pairs": pairs, "recent": kept.recent}
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE blobs SET tag = ?, data = ? WHERE name = ?",
            (tag.rsplit("|", 1)[0], zlib.compress(json.dumps(earlier).encode()), name),
        )
    assert not taken()
    with sqlite3.connect(db) as conn:  # today's tag on that shape, or a payload cut short: damaged
        conn.execute("UPDATE blobs SET tag = ? WHERE name = ?", (tag, name))
    assert not taken()
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE blobs SET data = ? WHERE name = ?", (zlib.compress(zlib.decompress(data)[:-9]), name)
        )
    assert not taken()
    nested = b"[" * 200_000  # a crafted head: JSON nested past the interpreter's recursion limit
    huge = json.dumps(  # a count no integer holds (JSON's 1e400 reads as infinity)
        {"meta": [], "files": [["a.py", 1e400, 0, 0.0]], "paths": [], "pairs": 0, "recent": [], "commits": []}
    ).encode()
    for head in (nested, huge):
        with sqlite3.connect(db) as conn:
            payload = zlib.compress(len(head).to_bytes(8, "little") + head)
            conn.execute("UPDATE blobs SET data = ? WHERE name = ?", (payload, name))
        assert not taken()
    b.write("src/parts/turn1.py", _turning(1) + "\n# more\n")
    b.commit("more turning")
    update_index(str(b.path), db=str(db))
    fresh = tmp_path / "fresh.sqlite"
    update_index(str(b.path), db=str(fresh))
    assert _commits(db) == _commits(fresh)


def test_the_mine_tells_each_applied_commit_so_its_subject_row_is_the_one_built_after_it(make_repo, tmp_path):
    """The mine tells ``CommitRows`` of each commit it applies, in order, and gives it its idle
    moments: its rows, however many were built during the mine (that depends on git's pace), are
    the rows of the applied commits built afterwards."""
    from knowing_pr.config import HistoryParams
    from knowing_pr.git import GitRepo
    from knowing_pr.history import mine_history
    from knowing_pr.store.commitwords import CommitRows, commit_row

    b = make_repo()
    for n in range(40):
        b.write(f"pkg/m{n % 7}.py", f"x = {n}\n")
        b.write(f"pkg/n{n % 5}.py", f"y = {n}\n")
        b.commit(f"fixGearBox_{n} in pkg/m{n % 7}.py\n\nbody {n}")
    built = CommitRows()
    state = mine_history(
        GitRepo.open(str(b.path)), "HEAD", HistoryParams(), on_applied=built.add, idle=built.build_some
    )
    assert built.rows() == [commit_row(c) for c in state.applied if c.touched]
    assert len(built.rows()) == 40


def test_commit_rows_build_a_few_at_a_time_in_order_and_say_when_none_waits():
    from knowing_pr.history.state import AppliedCommit
    from knowing_pr.store.commitwords import CommitRows, commit_row

    rows = CommitRows()
    assert rows.build_some() is False  # nothing told yet
    commits = [
        AppliedCommit(f"{n:040x}", n, (f"f{n}.py",) if n % 3 else (), f"fixThing{n}") for n in range(40)
    ]
    for commit in commits:
        rows.add(commit)
    assert rows.build_some() is True
    assert len(rows._built) == CommitRows.STEP  # one step's worth, not all
    assert rows.rows() == [commit_row(c) for c in commits if c.touched]  # the rest, in order
    assert rows.build_some() is False
