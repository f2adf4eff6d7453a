"""Hostile repositories against what knowing-pr writes and shows (issue 25, items 1 and 6).

Each test is one attack tried on the release before the fix, on a real repository built in
``tmp_path``: a committed symlink that turns ``--out`` into a write elsewhere (a ``.pth`` file
runs at the next interpreter start), a docstring that a ``.pth`` would execute, planted links
at the hook's log and lock, a repository path with a newline, invisible and bidi characters
in names, terminal escape sequences in names and config keys, a backtick in a path. The rule
for writes is ``knowing_pr/writing.py``'s: a symbolic link at the final name is refused
(exit 2), whatever it points to.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RepoBuilder
from markdown_it import MarkdownIt

from knowing_pr.cli import main
from knowing_pr.hooks import SYNC_ENV, run_hook, store_path

MakeRepo = Callable[..., RepoBuilder]

#: a module docstring that is also a line a ``.pth`` file executes
PTH_PAYLOAD = 'import os; os.system("touch PWNED") #'
#: a terminal escape: set the window title, then clear the screen
ESCAPES = "\x1b]0;PWNED\x07\x1b[2J"


def venv_target(tmp_path: Path) -> Path:
    """Where a virtual environment's next start would read a ``.pth`` file (not created)."""
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    return site / "zz.pth"


def pth_repo(make_repo: MakeRepo, tmp_path: Path) -> tuple[RepoBuilder, Path]:
    """The issue's attack: ``CONTEXT.md`` committed as a dangling link to a ``.pth`` file."""
    target = venv_target(tmp_path)
    b = make_repo()
    b.write("src/evil.py", f'"""{PTH_PAYLOAD}"""\n\n\ndef run():\n    return 1\n')
    b.write("src/main.py", "from src.evil import run\n\n\ndef main():\n    return run()\n")
    b.symlink("CONTEXT.md", os.path.relpath(target, b.path))
    b.commit("a map that writes itself elsewhere")
    return b, target


def test_map_out_refuses_a_committed_dangling_symlink(make_repo: MakeRepo, tmp_path: Path, capsys) -> None:
    b, target = pth_repo(make_repo, tmp_path)
    link = b.path / "CONTEXT.md"
    assert main(["map", "--repo", str(b.path), "--out", str(link)]) == 2
    err = capsys.readouterr().err
    assert "is a symbolic link" in err and "never writes through one" in err and "Traceback" not in err
    assert not target.exists()
    assert link.is_symlink() and not list(target.parent.iterdir())


def test_the_map_never_starts_a_line_with_repository_text(
    make_repo: MakeRepo, tmp_path: Path, capsys
) -> None:
    """Even written to a ``.pth`` on purpose, no line of the map is one Python would run."""
    b, _ = pth_repo(make_repo, tmp_path)
    out = tmp_path / "CONTEXT.md"
    assert main(["map", "--repo", str(b.path), "--out", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert any("os.system" in line for line in lines)  # the purpose is shown …
    assert not [line for line in lines if line.startswith(("import ", "import\t"))]  # … never as code


@pytest.mark.parametrize("command", ["pr --out", "export --out", "replay --export"])
def test_every_output_option_refuses_a_committed_symlink(
    make_repo: MakeRepo, tmp_path: Path, capsys, command: str
) -> None:
    b, target = pth_repo(make_repo, tmp_path)
    b.write("src/evil.py", f'"""{PTH_PAYLOAD}"""\n\n\ndef run():\n    return 2\n')
    b.commit("change run")
    link = str(b.path / "CONTEXT.md")
    if command == "replay --export":
        assert main(["pr", "--repo", str(b.path), "--format", "json"]) == 0
        root = json.loads(capsys.readouterr().out)["pack_root"]
        argv = ["replay", root, "--repo", str(b.path), "--export", link]
    else:
        name, option = command.split()
        argv = [name, "--repo", str(b.path), option, link]
    assert main(argv) == 2
    assert "is a symbolic link" in capsys.readouterr().err
    assert not target.exists()


def test_an_existing_file_behind_a_link_is_left_alone(make_repo: MakeRepo, tmp_path: Path, capsys) -> None:
    b, target = pth_repo(make_repo, tmp_path)
    target.write_text("kept\n")
    assert main(["export", "--repo", str(b.path), "--out", str(b.path / "CONTEXT.md")]) == 2
    assert target.read_text() == "kept\n"


def test_hook_log_and_lock_links_are_never_followed(make_repo: MakeRepo, tmp_path: Path, monkeypatch) -> None:
    b = make_repo()
    b.write("a.py", "def a():\n    return 1\n")
    b.commit("a")
    outside = tmp_path / "outside"
    outside.mkdir()
    store_dir = Path(store_path(b.path / ".git")).parent
    store_dir.mkdir(parents=True)
    (store_dir / "index.lock").symlink_to(outside / "lock")
    (store_dir / "hook.log").symlink_to(outside / "log")
    monkeypatch.setenv(SYNC_ENV, "1")
    assert run_hook("post-commit", [], repo_path=str(b.path)) == 0
    assert not list(outside.iterdir())  # nothing created or appended through the links
    assert (store_dir / "index.lock").is_symlink() and (store_dir / "hook.log").is_symlink()


def test_hook_in_a_repository_path_with_a_newline_stays_inside(
    make_repo: MakeRepo, tmp_path: Path, monkeypatch
) -> None:
    b = make_repo("x\ny/repo")
    b.write("a.py", "def a():\n    return 1\n")
    b.commit("a")
    monkeypatch.setenv(SYNC_ENV, "1")
    assert run_hook("post-commit", [], repo_path=str(b.path)) == 0
    assert not (tmp_path / "x").exists()  # git's first output line, cut at the newline
    log = b.path / ".git" / "knowing-pr" / "hook.log"
    assert log.is_file() and " indexed " in log.read_text()


def hostile_names_repo(make_repo: MakeRepo) -> RepoBuilder:
    """A change to ``src/auth\u200b.py`` (which reads as ``src/auth.py``) and a name with escapes."""
    b = make_repo()
    b.write("src/auth.py", "def login():\n    return 1\n")
    b.write("src/auth\u200b.py", "from src.auth import login\n\n\ndef login2():\n    return login()\n")
    b.write(f"src/t{ESCAPES}.py", f'"""Title {ESCAPES} here."""\n\n\ndef title():\n    return 1\n')
    b.commit("names")
    b.write("src/auth\u200b.py", "from src.auth import login\n\n\ndef login2():\n    return login() + 1\n")
    b.write(f"src/t{ESCAPES}.py", f'"""Title {ESCAPES} here."""\n\n\ndef title():\n    return 2\n')
    b.commit("change the look-alike and the title")
    return b


def one_file_repo(make_repo: MakeRepo, path: str, name: str = "one") -> RepoBuilder:
    """The map of a one-file repository shows that file in tier 1."""
    b = make_repo(name)
    b.write(path, f'"""Doc of {path}."""\n\n\ndef f():\n    return 1\n')
    b.commit("one file")
    return b


def test_invisible_characters_in_names_are_shown_escaped(make_repo: MakeRepo, capsys) -> None:
    b = hostile_names_repo(make_repo)
    assert main(["pr", "--repo", str(b.path)]) == 0
    markdown = capsys.readouterr().out
    assert "src/auth\\u200b.py" in markdown and "\u200b" not in markdown
    b = one_file_repo(make_repo, "src/auth\u200b.py")
    assert main(["map", "--repo", str(b.path)]) == 0
    shown = capsys.readouterr().out
    assert "src/auth\\u200b.py" in shown and "\u200b" not in shown


def test_json_keeps_names_exact_without_raw_invisible_characters(make_repo: MakeRepo, capsys) -> None:
    b = hostile_names_repo(make_repo)
    assert main(["pr", "--repo", str(b.path), "--format", "json"]) == 0
    text = capsys.readouterr().out
    assert "\u200b" not in text and "\\u200b" in text
    assert "src/auth\u200b.py" in {s["file"] for s in json.loads(text)["symbols"]}


def test_map_output_carries_no_escape_sequence(make_repo: MakeRepo, capsys) -> None:
    b = one_file_repo(make_repo, f"src/t{ESCAPES}.py")
    assert main(["map", "--repo", str(b.path)]) == 0
    out, err = capsys.readouterr()
    assert "PWNED" in out  # the name is shown …
    assert "\x1b" not in out + err and "\x07" not in out + err  # … and no escape reaches the terminal


@pytest.mark.parametrize("argv", [["pr"], ["pr", "--format", "xml"], ["pr", "--format", "json"], ["export"]])
def test_pack_and_export_formats_carry_no_escape_sequence(
    make_repo: MakeRepo, capsys, argv: list[str]
) -> None:
    """These held before the fix too (cleaned or JSON-escaped); kept as guards."""
    b = hostile_names_repo(make_repo)
    assert main([*argv, "--repo", str(b.path)]) == 0
    out, err = capsys.readouterr()
    assert "PWNED" in out
    assert "\x1b" not in out + err and "\x07" not in out + err


def test_config_errors_carry_no_escape_sequence(make_repo: MakeRepo, capsys) -> None:
    b = one_file_repo(make_repo, "a.py")
    (b.path / ".knowing-pr.yml").write_text('"\\e]0;PWNED\\a\\e[2J": 1\n')
    assert main(["map", "--repo", str(b.path)]) == 2
    err = capsys.readouterr().err
    assert "unknown top-level key" in err and "\x1b" not in err and "\\x1b]0;PWNED" in err


def test_a_backtick_in_a_path_stays_inside_its_code_span(make_repo: MakeRepo, capsys) -> None:
    b = one_file_repo(make_repo, "src/a`b.py")
    assert main(["map", "--repo", str(b.path)]) == 0
    tokens = MarkdownIt("commonmark").parse(capsys.readouterr().out)
    spans = [
        child.content for token in tokens for child in token.children or () if child.type == "code_inline"
    ]
    assert "src/a`b.py" in spans


def test_the_store_marker_and_stamp_are_never_written_through_links(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    b = make_repo()
    b.write("a.py", "def a():\n    return 1\n")
    b.commit("a")
    outside = tmp_path / "outside"
    outside.mkdir()
    db = tmp_path / "store" / "index.sqlite"
    db.parent.mkdir()
    (db.parent / "index.sqlite.writing").symlink_to(outside / "marker")
    (db.parent / "index.sqlite.stamp").symlink_to(outside / "stamp")
    assert main(["index", "--repo", str(b.path), "--db", str(db)]) == 0
    assert not list(outside.iterdir())


def test_why_text_carries_no_escape_sequence(make_repo: MakeRepo, capsys) -> None:
    b = one_file_repo(make_repo, f"t{ESCAPES}.py")
    assert main(["why", "--repo", str(b.path), "--task", "f", "f"]) == 0
    out = capsys.readouterr().out
    assert "PWNED" in out and "\x1b" not in out and "\x07" not in out


def test_the_action_files_are_never_written_through_a_committed_link(tmp_path: Path) -> None:
    """Without ``RUNNER_TEMP`` the Action writes into ``.knowing-pr`` of the checked-out PR."""
    from knowing_pr.action.outputs import _write_atomic

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / ".knowing-pr").symlink_to(elsewhere)
    with pytest.raises(OSError, match="symbolic link"):
        _write_atomic(workspace / ".knowing-pr" / "manifest.json", "{}\n")
    other = tmp_path / "other"
    (other / ".knowing-pr").mkdir(parents=True)
    (other / ".knowing-pr" / "manifest.json").symlink_to(elsewhere / "victim")
    with pytest.raises(OSError, match="symbolic link"):
        _write_atomic(other / ".knowing-pr" / "manifest.json", "{}\n")
    assert not list(elsewhere.iterdir())


def test_dot_export_shows_bidi_zero_width_and_c1_characters_as_escapes(make_repo: MakeRepo, capsys) -> None:
    """``export --format dot`` wrote U+202E (right-to-left override), U+200B and the 8-bit CSI
    U+009B raw (found by review): they are escapes now, as in every other shown format."""
    b = one_file_repo(make_repo, "src/evil\u202egnp\u200b\x9b2J.py")
    assert main(["export", "--format", "dot", "--repo", str(b.path)]) == 0
    out = capsys.readouterr().out
    assert not any(c in out for c in "\u202e\u200b\x9b")
    assert "\\\\u202e" in out and "\\\\u200b" in out and "\\\\x9b" in out
