"""knowing_pr.git.served: a forked reader answers GitRepo's questions for a fresh ``pr``; its answers
must be the in-process GitRepo's, errors included, and a dead reader or a forked asker must fall
back to asking in-process (real repositories from the make_repo fixture, a real fork)."""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from knowing_pr.errors import RepoError
from knowing_pr.git import GitRepo, open_repo
from knowing_pr.git import served as served_module
from knowing_pr.git.served import ServedRepo, served_repo, start_reader, stop_reader

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the reader is a fork")

APP = "def total(xs):\n    return sum(xs)\n\n\ndef mean(xs):\n    return total(xs) / len(xs)\n"


@pytest.fixture(autouse=True)
def _no_reader_left() -> Iterator[None]:
    yield
    stop_reader()


def two_commits(b) -> tuple[str, str]:
    b.write("src/app.py", APP)
    b.write("README.md", "# app\n")
    base = b.commit("base")
    b.write("src/app.py", APP.replace("sum(xs)", "sum(x for x in xs)") + "\n\ndef mode(xs):\n    return 0\n")
    b.delete("README.md")
    b.write("docs/guide.md", "guide\n")
    head = b.commit("head")
    return base, head


def answers(repo: GitRepo, base: str, head: str) -> dict[str, object]:
    """Every question a ServedRepo serves, asked of ``repo``."""
    app = repo.entries_at(head, ["src/app.py"])["src/app.py"]
    return {
        "workdir": repo.workdir,
        "git_dir": repo.git_dir,
        "is_shallow": repo.is_shallow,
        "is_empty": repo.is_empty,
        "head_commit": repo.head_commit(),
        "resolve": repo.resolve("HEAD~1"),
        "has_commit": (repo.has_commit(base), repo.has_commit("0" * 40)),
        "parents": repo.parents(head),
        "commit_time": repo.commit_time(head),
        "merge_base": repo.merge_base(base, head),
        "is_ancestor": (repo.is_ancestor(base, head), repo.is_ancestor(head, base)),
        "is_shallow_boundary": repo.is_shallow_boundary(head),
        "default_base": repo.default_base(head),
        "tree_entries": repo.tree_entries(head),
        "entries_at": repo.entries_at(base, ["src/app.py", "README.md", "absent.py"]),
        "file_names": repo.file_names(head, "src"),
        "read_blob": repo.read_blob(app.blob_id),
        "diff_trees": repo.diff_trees(base, head),
        "diff_hunks": repo.diff_hunks(base, head),
        "notes": repo.notes("refs/notes/knowing-pr"),
        "remote_url": repo.remote_url(),
        "history": [c.sha for c in repo.iter_commits(head, max_commits=5)],
    }


def started(path: str, **warm: str | None) -> ServedRepo:
    start_reader(path, **warm)
    found = served_repo(path)
    assert isinstance(found, ServedRepo)
    return found


def test_every_answer_is_the_in_process_repositorys(repo) -> None:
    base, head = two_commits(repo)
    expected = answers(GitRepo.open(repo.path), base, head)
    assert expected["diff_hunks"] and expected["tree_entries"]  # the comparison covers real content
    served = started(str(repo.path), base=base, head="HEAD")
    assert answers(served, base, head) == expected
    assert served._local is not None  # the history walk opened pygit2 here: the reader does not walk
    assert {"resolve", "diff_hunks", "read_blob", "entries_at", "default_base"} <= served_module.SERVED
    assert "iter_commits" not in served_module.SERVED


def test_questions_other_than_the_walk_leave_pygit2_unopened_here(repo) -> None:
    base, head = two_commits(repo)
    served = started(str(repo.path), base=base, head=head)
    assert served.diff_hunks(served.merge_base(base, head) or base, head)
    assert served.read_blob(served.entries_at(head, ["src/app.py"])["src/app.py"].blob_id).startswith(b"def")
    assert served._local is None


def test_an_unknown_revision_is_the_same_repo_error(repo) -> None:
    two_commits(repo)
    with pytest.raises(RepoError) as in_process:
        GitRepo.open(repo.path).resolve("no-such-branch")
    served = started(str(repo.path), base="no-such-branch", head="HEAD")  # the warm-up meets it first
    with pytest.raises(RepoError) as answered:
        served.resolve("no-such-branch")
    assert (answered.value.message, answered.value.hint) == (in_process.value.message, in_process.value.hint)
    assert served.resolve("HEAD") == GitRepo.open(repo.path).resolve("HEAD")  # the reader goes on


def test_a_directory_that_is_no_repository_raises_what_opening_raises(tmp_path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(RepoError) as in_process:
        GitRepo.open(plain)
    start_reader(str(plain))
    with pytest.raises(RepoError) as answered:
        open_repo(str(plain))
    assert (answered.value.message, answered.value.hint) == (in_process.value.message, in_process.value.hint)


def test_a_dead_reader_is_replaced_by_asking_here(repo) -> None:
    base, head = two_commits(repo)
    served = started(str(repo.path), base=base, head=head)
    assert served.resolve("HEAD") == head
    os.kill(served._reader.pid, signal.SIGKILL)
    os.waitpid(served._reader.pid, 0)
    assert served.diff_hunks(base, head) == GitRepo.open(repo.path).diff_hunks(base, head)
    assert served.resolve("HEAD~1") == base
    assert not served._reader.alive and served._local is not None


def test_a_forked_child_asks_in_its_own_process_and_leaves_the_pipe_intact(repo) -> None:
    base, head = two_commits(repo)
    served = started(str(repo.path), base=base, head=head)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # a forked worker of the command: it must not use the command's pipes
        try:
            os.close(read_end)
            os.write(write_end, pickle.dumps((served.resolve("HEAD~1"), served._local is not None)))
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as reply:
        child_answer, child_opened_here = pickle.loads(reply.read())  # noqa: S301  # our own child
    os.waitpid(pid, 0)
    assert (child_answer, child_opened_here) == (base, True)
    assert served.resolve("HEAD") == head  # the reader still answers this process, frame for frame
    assert served._local is None


def test_the_reader_is_handed_out_once_and_only_for_its_path(repo, make_repo) -> None:
    two_commits(repo)
    other = make_repo("other")
    two_commits(other)
    start_reader(str(repo.path))
    assert served_repo(str(other.path)) is None
    assert isinstance(open_repo(str(repo.path)), ServedRepo)
    second = open_repo(str(repo.path))
    assert type(second) is GitRepo


def test_stopping_reaps_the_reader(repo) -> None:
    two_commits(repo)
    served = started(str(repo.path))
    pid = served._reader.pid
    stop_reader()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    assert not served._reader.alive  # its pipes' numbers may be reused: never written to again
    assert served.resolve("HEAD") == repo.head()  # asked here once the reader is gone


def test_stopping_without_reaping_kills_the_reader_and_leaves_it_to_be_reaped(repo) -> None:
    """What the console script does at its end: the process exits next, and the system reaps."""
    two_commits(repo)
    served = started(str(repo.path))
    pid = served._reader.pid
    stop_reader(reap=False)
    assert not served._reader.alive
    reaped, status = os.waitpid(pid, 0)  # still this process's child: killed, not yet reaped
    assert reaped == pid and os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL


def test_a_fresh_pr_never_loads_pygit2_and_answers_as_in_process(repo) -> None:
    two_commits(repo)
    fresh_probe = (
        "import atexit, sys\n"
        "from knowing_pr.cli import run\n"
        "sys.argv = ['knowing-pr', 'pr', '--repo', sys.argv[1], '--format', 'json']\n"
        # run() ends the process: what was loaded is told by an exit handler
        "atexit.register(lambda: print('PYGIT2', 'pygit2._pygit2' in sys.modules))\n"
        "run()\n"
    )
    in_process_probe = (  # main() without fresh_process: no reader, git read in this process
        "import sys\n"
        "from knowing_pr.cli import main\n"
        "main(['pr', '--repo', sys.argv[1], '--format', 'json'])\n"
        "print('PYGIT2', 'pygit2._pygit2' in sys.modules)\n"
    )
    index = [sys.executable, "-m", "knowing_pr", "index", "--repo", str(repo.path), "--quiet"]
    subprocess.run(index, capture_output=True, check=True)  # both read the same up-to-date store
    fresh, in_process = (
        subprocess.run(
            [sys.executable, "-c", probe, str(repo.path)], capture_output=True, text=True, check=True
        ).stdout
        for probe in (fresh_probe, in_process_probe)
    )
    pack, _, loaded = fresh.rpartition("PYGIT2 ")
    expected, _, loaded_in_process = in_process.rpartition("PYGIT2 ")
    assert (loaded.strip(), loaded_in_process.strip()) == ("False", "True")
    assert '"symbols"' in pack and '"changed"' in pack
    assert pack == expected


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's parent-death signal")
def test_the_reader_dies_with_the_command(repo) -> None:
    """The command dies by SIGKILL while a fork of it still holds the pipe's other end, so the
    reader never reads an end of file: only the kernel's parent-death signal ends it."""
    two_commits(repo)
    command = (
        "import os, signal, sys, time\n"
        "from knowing_pr.git import served\n"
        "served.start_reader(sys.argv[1], base='HEAD~1', head='HEAD')\n"
        "served.served_repo(sys.argv[1]).resolve('HEAD')\n"  # the reader is serving now
        "holder = os.fork()\n"
        "if holder == 0:\n"
        "    quiet = os.open(os.devnull, os.O_RDWR)\n"
        "    for fd in (0, 1, 2):\n"
        "        os.dup2(quiet, fd)\n"
        "    time.sleep(60)\n"
        "    os._exit(0)\n"
        "print(served._READER.pid, holder, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    done = subprocess.run([sys.executable, "-c", command, str(repo.path)], capture_output=True, text=True)
    reader, holder = (int(pid) for pid in done.stdout.split())
    try:
        assert done.returncode == -signal.SIGKILL
        assert _alive(holder)  # the pipe's write end is still open
        deadline = time.monotonic() + 10
        while _alive(reader) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not _alive(reader), f"the reader {reader} outlived the command"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(holder, signal.SIGKILL)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its new parent to reap it does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state != "Z"


def test_the_reader_keeps_only_its_warm_up_answers(repo) -> None:
    base, head = two_commits(repo)
    answers = served_module._Answers(GitRepo.open(repo.path))
    assert answers.value("resolve", "HEAD") == head
    answers.keeping = False  # the warm-up is over
    blob = GitRepo.open(repo.path).entries_at(head, ["src/app.py"])["src/app.py"].blob_id
    assert answers.ask("read_blob", (blob,), 50)[0] == "ok"
    assert answers.ask("resolve", ("HEAD",), 50) == ("ok", head)
    assert list(answers.known) == [("resolve", ("HEAD",), 50)]


# -- what the reader prepares for the command: the base's definitions (pipeline/basedefs.py) -----

PREPARE_BASE_DEFINITIONS = ("knowing_pr.pipeline.basedefs", "prepare_in_reader", (None,))


def removal(b) -> tuple[str, str]:
    """A change that removes a function from one file and edits another."""
    b.write("src/app.py", APP)
    b.write(
        "src/util.py",
        "# "
        + "-" * 100
        + "\ndef helper(x):\n    return x\n\n\nclass Box:\n    def size(self):\n        return 1\n",
    )
    base = b.commit("base")
    b.write("src/app.py", APP.replace("\n\ndef mean(xs):\n    return total(xs) / len(xs)\n", "\n"))
    b.write("src/util.py", "def helper(x):\n    return x + 1\n")
    head = b.commit("remove mean and Box")
    return base, head


def base_definitions(repo: GitRepo, settings, base: str, head: str) -> dict[str, list[tuple[str, int, int]]]:
    from knowing_pr.pipeline.basedefs import start_base_definitions

    found = start_base_definitions(repo, settings, base, repo.diff_hunks(base, head))()
    return {
        path: [(d.qualified_name, d.start_line, d.end_line) for d in defs] for path, defs in found.items()
    }


def test_the_reader_prepares_the_base_definitions_the_command_would_parse(repo) -> None:
    from knowing_pr.config import Settings
    from knowing_pr.pipeline import basedefs

    base, head = removal(repo)
    expected = base_definitions(GitRepo.open(repo.path), Settings(), base, head)
    assert expected == {
        "src/app.py": [("total", 1, 2), ("mean", 5, 6)],
        "src/util.py": [("helper", 2, 3), ("Box", 6, 8), ("Box.size", 7, 8)],
    }
    served = started(str(repo.path), base=base, head=head, preparation=PREPARE_BASE_DEFINITIONS)
    question = basedefs._question(base, ("src/app.py", "src/util.py"), Settings().index)
    assert served.has_prepared(question)  # the reader began the parse: the command forks none
    assert base_definitions(served, Settings(), base, head) == expected
    assert not served.has_prepared(question)  # taken once
    assert served._local is None


def test_other_index_settings_than_the_readers_are_parsed_here(repo) -> None:
    from knowing_pr.config import IndexParams, Settings
    from knowing_pr.pipeline import basedefs

    base, head = removal(repo)
    served = started(str(repo.path), base=base, head=head, preparation=PREPARE_BASE_DEFINITIONS)
    other = Settings(index=IndexParams(max_file_bytes=100))  # src/util.py is larger: left out
    assert not served.has_prepared(basedefs._question(base, ("src/app.py", "src/util.py"), other.index))
    assert base_definitions(served, other, base, head) == {"src/app.py": [("total", 1, 2), ("mean", 5, 6)]}


def test_a_preparation_that_fails_leaves_the_parse_to_the_command(repo, monkeypatch) -> None:
    from knowing_pr.config import Settings
    from knowing_pr.pipeline import basedefs

    base, head = removal(repo)
    expected = base_definitions(GitRepo.open(repo.path), Settings(), base, head)

    def failing(repo_, start, diffs, config):
        question = basedefs._question(start, basedefs._wanted_paths(diffs), Settings().index)
        return {question: lambda: 1 / 0}  # begun, then failed in the reader

    monkeypatch.setattr(basedefs, "prepare_in_reader", failing)  # the fork inherits it
    served = started(str(repo.path), base=base, head=head, preparation=PREPARE_BASE_DEFINITIONS)
    assert served.has_prepared(basedefs._question(base, ("src/app.py", "src/util.py"), Settings().index))
    assert base_definitions(served, Settings(), base, head) == expected
    # the failure was the reader's answer, not its end: it still serves, pygit2 unopened here
    assert served._reader.alive and served.resolve("HEAD") == head and served._local is None


def test_a_preparation_that_cannot_start_is_no_answer(repo) -> None:
    from knowing_pr.config import Settings
    from knowing_pr.pipeline import basedefs

    base, head = removal(repo)
    broken = ("knowing_pr.no_such_module", "prepare", ())
    served = started(str(repo.path), base=base, head=head, preparation=broken)
    assert not served.has_prepared(basedefs._question(base, ("src/app.py", "src/util.py"), Settings().index))
    # the reader serves on (a reader that had died would leave the question to pygit2 here)
    assert served.resolve("HEAD") == head and served._reader.alive and served._local is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's parent-death signal")
def test_a_reader_that_dies_while_its_parse_is_stuck_leaves_the_parse_to_the_command(repo) -> None:
    """The reader's parse fork holds none of the reader's pipes, so the command sees the reader's
    end at once and parses itself (it would otherwise wait for the stuck fork); and the fork dies
    with the reader instead of parsing on without anyone to keep its timeout."""
    import threading

    import psutil

    from knowing_pr.config import load_settings

    functions = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(24000))  # ~0.9 MB
    # a per-file parse timeout no loaded machine reaches: the command's own parse must finish
    # however busy the machine is (the default 10 s marks this file `timeout` under load)
    repo.write(".knowing-pr.yml", "index: {parse_timeout_s: 600}\n")
    settings = load_settings(repo.path / ".knowing-pr.yml")
    repo.write("src/big.py", functions + "def gone():\n    return 0\n")
    base = repo.commit("base")
    repo.write("src/big.py", functions)
    head = repo.commit("remove gone")
    served = started(str(repo.path), base=base, head=head, preparation=PREPARE_BASE_DEFINITIONS)
    reader = psutil.Process(served._reader.pid)
    deadline = time.monotonic() + 120
    while not reader.children() and time.monotonic() < deadline:
        time.sleep(0.005)
    (fork,) = reader.children()
    fork.suspend()  # a parser stuck on a file
    from knowing_pr.pipeline import basedefs

    try:
        assert served.has_prepared(basedefs._question(base, ("src/big.py",), settings.index))
        reader.kill()
        found: list[object] = []
        waiting = threading.Thread(
            target=lambda: found.append(base_definitions(served, settings, base, head)), daemon=True
        )
        waiting.start()
        waiting.join(timeout=600)  # the fork stays stopped: were the command to wait for it, forever
        assert not waiting.is_alive(), "the command waited for the reader's stuck fork"
        (definitions,) = found
        assert ("gone", 96001, 96002) in definitions["src/big.py"]  # parsed here
        deadline = time.monotonic() + 120
        while fork.is_running() and fork.status() != psutil.STATUS_ZOMBIE and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not fork.is_running() or fork.status() == psutil.STATUS_ZOMBIE  # it died with the reader
    finally:
        with contextlib.suppress(psutil.Error):
            fork.kill()
