"""``knowing-pr diff ROOT_A ROOT_B``: two recorded packs of one pull request's pushes rebuilt from
their requests and compared (markdown, JSON, ``--out``), in the clone that built them and in a
fresh clone that has only the git notes; and its errors, each a documented exit code."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pushes import PUSH_2_MOVED, build_base, push_1, push_2, push_3

from knowing_pr.cli import main
from knowing_pr.replay import NOTES_REF
from knowing_pr.store.opening import open_store


def pack_root(capsys: pytest.CaptureFixture[str], repo: Path, base: str, head: str, *extra: str) -> str:
    capsys.readouterr()
    args = ["pr", "--repo", str(repo), "--base", base, "--head", head, "--format", "json", "--quiet", *extra]
    assert main(args) == 0
    return str(json.loads(capsys.readouterr().out)["pack_root"])


def diff(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["diff", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def pushed(repo: Any, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    base = build_base(repo)
    heads = [push_1(repo), push_2(repo), push_3(repo)]
    roots = [pack_root(capsys, repo.path, base, head) for head in heads]
    return {"base": base, "heads": heads, "roots": roots, "path": str(repo.path)}


def test_diff_of_two_recorded_packs_in_markdown_json_and_to_a_file(
    pushed: dict[str, Any], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    first, second, third = pushed["roots"]
    repo = pushed["path"]

    code, out, _ = diff(capsys, first, second, "--repo", repo)

    assert code == 0
    assert out.splitlines()[0] == (
        f"From pack `{first[:12]}` (commit `{pushed['heads'][0][:7]}`) to pack `{second[:12]}` "
        f"(commit `{pushed['heads'][1][:7]}`): 2 symbols newly changed, 1 call site newly not updated, "
        "1 test added to the tests to run, 1 file newly co-changed."
    )
    assert out.splitlines()[2:] == PUSH_2_MOVED

    code, out, _ = diff(capsys, second, third, "--repo", repo, "--format", "json")

    assert code == 0
    data = json.loads(out)
    assert data["before"] == {"pack_root": second, "commit": pushed["heads"][1]}
    assert data["symbols_newly_changed"] == [{"path": "src/page.py", "name": "page"}]
    assert data["call_sites_now_updated"] == [{"path": "src/page.py", "caller": "page", "callee": "render"}]
    assert data["tests_added"] == data["tests_dropped"] == data["files_newly_coupled"] == []
    assert data["nothing_moved"] is False

    target = tmp_path / "moved.md"
    code, out, _ = diff(capsys, third, first, "--repo", repo, "--out", str(target))
    assert code == 0 and out == ""
    written = target.read_text(encoding="utf-8")
    assert "- No longer changed (3):\n  - `page` in `src/page.py`\n" in written
    assert "- Tests dropped (1):\n  - `test_render_with_a_tag` in `tests/test_view.py`" in written
    assert "- Files no longer co-changed (1):\n  - `docs/view.md`" in written


def test_a_push_that_moves_nothing_is_one_line(
    pushed: dict[str, Any], repo: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.write("NOTES.txt", "Nothing for the code.\n")
    quiet = repo.commit("a note")
    fourth = pack_root(capsys, repo.path, pushed["base"], quiet)
    assert fourth != pushed["roots"][2]

    code, out, _ = diff(capsys, pushed["roots"][2], fourth, "--repo", pushed["path"])

    assert code == 0
    assert out.splitlines() == [
        f"From pack `{pushed['roots'][2][:12]}` (commit `{pushed['heads'][2][:7]}`) to pack `{fourth[:12]}` "
        f"(commit `{quiet[:7]}`): nothing moved: the same symbols changed, the same call sites not "
        "updated, the same tests to run and the same co-changed files."
    ]


def test_a_fresh_clone_diffs_two_packs_recorded_as_git_notes(
    repo: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = build_base(repo)
    heads = [push_1(repo), push_2(repo)]
    roots = [pack_root(capsys, repo.path, base, head, "--record", "note") for head in heads]
    fresh = tmp_path / "fresh"
    git = {"env": {**repo.git_env()}, "capture_output": True, "check": True}
    subprocess.run(["git", "clone", "-q", str(repo.path), str(fresh)], **git)  # type: ignore[call-overload]

    code, _, err = diff(capsys, *roots, "--repo", str(fresh))
    assert code == 2 and f"git fetch origin {NOTES_REF}:{NOTES_REF}" in err  # no notes yet

    subprocess.run(["git", "-C", str(fresh), "fetch", "-q", "origin", f"{NOTES_REF}:{NOTES_REF}"], **git)  # type: ignore[call-overload]
    code, out, err = diff(capsys, *roots, "--repo", str(fresh), "--format", "json")

    assert code == 0, err
    assert json.loads(out)["call_sites_newly_not_updated"] == [
        {"path": "src/page.py", "caller": "page", "callee": "render"}
    ]
    assert not (fresh / ".git" / "knowing-pr").exists()  # rebuilt in scratch stores


def test_bad_roots_unknown_packs_and_a_pack_that_does_not_replay_are_clear_exit_codes(
    pushed: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    first, second, _ = pushed["roots"]
    repo = pushed["path"]

    code, out, err = diff(capsys, "abc", second, "--repo", repo)
    assert (code, out) == (2, "") and "knowing-pr: error: not a PackRoot: 'abc'" in err

    code, _, err = diff(capsys, first, "0" * 64, "--repo", repo)
    assert code == 2 and "no record of pack 000000000000" in err

    # a manifest filed under a PackRoot its request does not yield: the rebuild says so
    forged = "f" * 64
    store, _ = open_store(Path(repo) / ".git" / "knowing-pr" / "index.sqlite")
    try:
        manifest = store.load_pack(first)
        assert manifest is not None
        store.save_pack(forged, pushed["heads"][0], {**manifest, "pack_root": forged})
    finally:
        store.close()
    code, out, err = diff(capsys, forged, second, "--repo", repo)
    assert code == 1 and out == ""
    assert f"pack {'f' * 12}… does not replay" in err and f"yields {first[:12]}…" in err
    assert "Traceback" not in err


def test_a_changed_symbol_packed_in_one_push_and_only_named_in_the_other_has_not_moved(
    repo: Any, tmp_path: Path
) -> None:
    import dataclasses

    from knowing_pr.pipeline import PrRequest, build_pr_pack, open_workspace
    from knowing_pr.pipeline.packdiff import compare_packs
    from knowing_pr.render.display import display_name
    from knowing_pr.render.summary import left_out_item

    base = build_base(repo)
    push_1(repo)
    head = push_2(repo)
    ws = open_workspace(str(repo.path), db=str(tmp_path / "index.sqlite"), budget=8000)
    packed = build_pr_pack(ws, PrRequest(base=base, head=head, fmt="json"))
    changed = [s for s in packed.symbols if s.reason == "changed"]
    assert changed and packed.summary is not None
    # the next push's budget had room only for the names of the changed symbols (``path:line name``)
    named = dataclasses.replace(
        packed,
        symbols=[s for s in packed.symbols if s.reason != "changed"],
        summary=dataclasses.replace(
            packed.summary, changed_left_out=[left_out_item(s.node) for s in changed]
        ),
    )

    moved = compare_packs(packed, named, display_name)

    assert moved.changed.added == moved.changed.removed == ()


def test_a_path_with_a_space_is_one_path_in_a_named_symbol(repo: Any, tmp_path: Path) -> None:
    """``path:line name`` splits at the first ``:line `` and not at the first space: a symbol of
    ``lib/a b.py`` named in one push and packed in the other has not moved."""
    import dataclasses

    from knowing_pr.pipeline import PrRequest, build_pr_pack, open_workspace
    from knowing_pr.pipeline.packdiff import compare_packs
    from knowing_pr.render.display import display_name
    from knowing_pr.render.summary import left_out_item

    base = build_base(repo)
    push_1(repo)
    head = push_2(repo)
    ws = open_workspace(str(repo.path), db=str(tmp_path / "index.sqlite"), budget=8000)
    built = build_pr_pack(ws, PrRequest(base=base, head=head, fmt="json"))
    spaced = [
        dataclasses.replace(s, node=dataclasses.replace(s.node, path="lib/a b/" + s.node.path))
        for s in built.symbols
        if s.reason == "changed"
    ]
    assert spaced and built.summary is not None
    packed = dataclasses.replace(built, symbols=spaced)
    named = dataclasses.replace(
        built,
        symbols=[],
        summary=dataclasses.replace(built.summary, changed_left_out=[left_out_item(s.node) for s in spaced]),
    )
    moved = compare_packs(packed, named, display_name)
    assert moved.changed.added == moved.changed.removed == ()
