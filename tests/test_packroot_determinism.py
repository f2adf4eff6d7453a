"""A PackRoot is a function of the change, its commits and the recorded parameters: the same
pack whatever the store went through before (fresh, moved to an older commit and back, after
other packs, after a full index, after a hook's run that deferred the fit)."""

from __future__ import annotations

import json
from pathlib import Path

from knowing_pr.config import FILE_MODEL_PRIOR
from knowing_pr.git import GitRepo
from knowing_pr.history.filemodel import FileModel
from knowing_pr.index import index_commit
from knowing_pr.index.filefit import MODEL_META
from knowing_pr.pipeline import PrRequest, build_files_pack, build_pr_pack, open_workspace, update_index
from knowing_pr.store import Store

MODULES = [f"m{i}" for i in range(10)]
SOURCE = """
def {name}_value(x):
    total = 0
    for item in range(x):
        total += item * {n}
    return total


def {name}_other(y):
    return {name}_value(y) + {n}
"""


def _history_repo(b) -> list[str]:  # type: ignore[no-untyped-def]
    """A repository with 46 commits, most of them a training task of the file model (2-3 of
    its 10 modules changed together, in groups that repeat): the shas, oldest first."""
    for i, name in enumerate(MODULES):
        b.write(f"pkg/{name}.py", SOURCE.format(name=name, n=i))
    b.write(
        "tests/test_m0.py", "from pkg.m0 import m0_value\n\n\ndef test_m0():\n    assert m0_value(2) == 0\n"
    )
    shas = [b.commit("start")]
    for n in range(45):
        group = [MODULES[n % 5], MODULES[n % 5 + 5]] + ([MODULES[(n + 2) % 10]] if n % 4 == 0 else [])
        for name in group:
            b.write(f"pkg/{name}.py", SOURCE.format(name=name, n=100 + n))
        shas.append(b.commit(f"change {n}"))
    return shas


def _pack_root(path: Path, db: Path, head: str, fmt: str = "json") -> str:
    ws = open_workspace(str(path), db=str(db))
    return build_pr_pack(ws, PrRequest(base=head + "^", head=head, fmt=fmt)).pack_root


def _weights(db: Path) -> dict[str, float]:
    with Store.open(db) as store:
        return dict(json.loads(store.get_meta(MODEL_META) or "{}")["weights"])


def test_the_packroot_of_a_change_does_not_depend_on_what_the_store_went_through(
    make_repo, tmp_path: Path
) -> None:
    b = make_repo()
    shas = _history_repo(b)
    old, middle, head = shas[26], shas[36], shas[-1]
    fresh: dict[str, str] = {}
    for n, sha in enumerate((old, middle, head)):
        db = tmp_path / f"fresh{n}.sqlite"
        fresh[sha] = _pack_root(b.path, db, sha)
        # enough history to fit: the pack ranks with weights fitted on it, not the prior
        assert _weights(db) != FileModel(FILE_MODEL_PRIOR).as_dict()
    moved = tmp_path / "moved.sqlite"
    assert _pack_root(b.path, moved, head) == fresh[head]
    assert _pack_root(b.path, moved, old) == fresh[old]  # moved to an older commit
    assert _pack_root(b.path, moved, head) == fresh[head]  # and back
    assert _pack_root(b.path, moved, middle) == fresh[middle]
    _pack_root(b.path, moved, shas[30], fmt="markdown")  # other packs made meanwhile
    build_files_pack(open_workspace(str(b.path), db=str(moved)), ["pkg/m3.py"], at=shas[40])
    for sha in (head, old, middle):
        assert _pack_root(b.path, moved, sha) == fresh[sha]
    update_index(str(b.path), full=True, db=str(moved))  # `index --full` at HEAD
    for sha in (middle, head, old):
        assert _pack_root(b.path, moved, sha) == fresh[sha]
    # a hook's run moves the store and defers the fit: the pack fits before it ranks
    index_commit(GitRepo.open(str(b.path)), open_workspace(str(b.path)).settings, rev=middle, db_path=moved)
    index_commit(
        GitRepo.open(str(b.path)), open_workspace(str(b.path)).settings, db_path=moved, defer_refit=True
    )
    assert _pack_root(b.path, moved, head) == fresh[head]


def test_moving_back_to_a_commit_takes_the_kept_parses_and_gives_the_same_store(
    make_repo, tmp_path: Path
) -> None:
    b = make_repo()
    shas = _history_repo(b)
    old, head = shas[20], shas[-1]
    repo = GitRepo.open(str(b.path))
    settings = open_workspace(str(b.path)).settings
    moved = tmp_path / "moved.sqlite"
    index_commit(repo, settings, rev=head, db_path=moved)
    first = [index_commit(repo, settings, rev=rev, db_path=moved) for rev in (old, head)]
    again = [index_commit(repo, settings, rev=rev, db_path=moved) for rev in (old, head)]
    assert all(r.files_parsed > 0 and r.parses_kept == 0 for r in first)  # parsed once each way
    assert (
        [r.parses_kept for r in again] == [r.files_parsed for r in again] == [r.files_parsed for r in first]
    )
    for rev, report in zip((old, head), again, strict=True):
        fresh = index_commit(repo, settings, rev=rev, db_path=tmp_path / f"fresh-{rev[:8]}.sqlite")
        assert report.graph_root == fresh.graph_root  # the kept parses give the store a parse gives


def test_a_fit_turned_off_in_the_settings_ranks_with_the_prior_in_an_up_to_date_store(
    make_repo, tmp_path: Path
) -> None:
    b = make_repo()
    head = _history_repo(b)[-1]
    db = tmp_path / "index.sqlite"
    fitted = _pack_root(b.path, db, head)
    (b.path / ".knowing-pr.yml").write_text("files: {fit: false}\n")
    off = _pack_root(b.path, db, head)  # the store is at the head already
    assert off != fitted and off == _pack_root(b.path, tmp_path / "fresh.sqlite", head)


def _pack_with(path: Path, db: Path, head: str, config: Path | None) -> tuple[str, dict[str, float]]:
    ws = open_workspace(str(path), db=str(db), config=str(config) if config else None)
    root = build_pr_pack(ws, PrRequest(base=head + "^", head=head, fmt="json")).pack_root
    return root, _weights(db)


def test_a_store_indexed_with_other_history_settings_gives_the_fresh_stores_pack(
    make_repo, tmp_path: Path
) -> None:
    """The history's settings (here the walk limit and the decay) decide the mined counts and the
    model fitted on them: a store first indexed with the defaults gives, under the new settings,
    the pack of a fresh store with them (neither the kept history nor a kept model of the other
    settings is taken)."""
    b = make_repo()
    head = _history_repo(b)[-1]
    for n, history in enumerate(("{max_commits: 20}", "{half_life_days: 30, max_files_per_commit: 8}")):
        config = tmp_path / f"history{n}.yml"
        config.write_text(f"history: {history}\n")
        fresh = _pack_with(b.path, tmp_path / f"fresh{n}.sqlite", head, config)
        used = tmp_path / f"used{n}.sqlite"
        default = _pack_with(b.path, used, head, None)
        assert default[0] != fresh[0], "the settings change the pack"
        assert _pack_with(b.path, used, head, config) == fresh
        assert _pack_with(b.path, used, head, None) == default  # and back


def test_a_store_moved_back_measures_the_history_on_the_same_window_as_a_fresh_one(
    make_repo, tmp_path: Path
) -> None:
    # the predictiveness window memoised at the head used to end the older commit's window where
    # the head's ended (34 commits instead of 40 on jinja), so a moved store weighed the history
    # otherwise than a fresh one and ranked the same change otherwise
    b = make_repo()
    shas = _history_repo(b)
    old, head = shas[26], shas[-1]
    repo = GitRepo.open(str(b.path))
    settings = open_workspace(str(b.path)).settings
    moved, fresh = tmp_path / "moved.sqlite", tmp_path / "fresh.sqlite"
    index_commit(repo, settings, rev=head, db_path=moved)
    index_commit(repo, settings, rev=old, db_path=moved)
    index_commit(repo, settings, rev=old, db_path=fresh)
    keys = ("history_window", "history_predictiveness")
    with Store.open(moved) as m, Store.open(fresh) as f:
        assert [m.get_meta(k) for k in keys] == [f.get_meta(k) for k in keys]
        assert len(json.loads(f.get_meta("history_window") or "[]")) == 27  # all of old's history


def test_a_store_indexed_commit_by_commit_past_the_history_window_gives_the_fresh_stores_pack(
    make_repo, tmp_path: Path
) -> None:
    """A history longer than ``max_commits``: each run extends the stored history, except where
    the window's start moves (history/mine.py), and the store ends with a fresh store's pack."""
    b = make_repo()
    shas = _history_repo(b)
    config = tmp_path / "window.yml"
    config.write_text("history: {max_commits: 20, window_step: 7}\n")
    settings = open_workspace(str(b.path), config=str(config)).settings
    repo = GitRepo.open(str(b.path))
    grown = tmp_path / "grown.sqlite"
    for sha in shas[20:]:
        index_commit(repo, settings, rev=sha, db_path=grown)
    with Store.open(grown) as store:
        mined_from_scratch = (store.get_meta("history_kept_heads") or "").split()
    # the first run, then the runs where the start moved: 27, 34 and 41 commits (of 46)
    assert mined_from_scratch == [shas[20], shas[26], shas[33], shas[40]]
    fresh = _pack_with(b.path, tmp_path / "fresh.sqlite", shas[-1], config)
    assert _pack_with(b.path, grown, shas[-1], config) == fresh


def _hist_commits(db: Path, path: str) -> int:
    with Store.open(db) as store:
        row = store.conn.execute("SELECT commits FROM hist_files WHERE path = ?", (path,)).fetchone()
    return int(row[0]) if row else 0


def test_a_store_mined_with_another_rename_rule_is_mined_again(make_repo, tmp_path: Path) -> None:
    """``history.rename_threshold`` decides whether a file moved and edited keeps its history: a
    store mined at the default (50%) asked at 90% mines again and gives the fresh store's pack."""
    b = make_repo()
    body = "".join(f"line {i} of a module long enough to be measured\n" for i in range(30))
    b.write("pkg/old.py", body)
    b.write("pkg/other.py", "VALUE = 1\n")
    for n in range(3):
        b.write("pkg/old.py", body + f"# edit {n}\n")
        b.write("pkg/other.py", f"VALUE = {n + 2}\n")
        b.commit(f"edit {n}")
    b.delete("pkg/old.py")
    b.write("pkg/new.py", body.replace("line 1 ", "row 1 ").replace("line 2 ", "row 2 "))  # ~93% alike
    b.commit("move and edit")
    b.write("pkg/new.py", body + "# after\n")
    b.write("pkg/other.py", "VALUE = 9\n")
    head = b.commit("edit both")
    strict = tmp_path / "strict.yml"
    strict.write_text("history: {rename_threshold: 95}\n")
    used = tmp_path / "used.sqlite"
    default = _pack_with(b.path, used, head, None)
    followed = _hist_commits(used, "pkg/new.py")
    fresh = _pack_with(b.path, tmp_path / "fresh.sqlite", head, strict)
    assert _pack_with(b.path, used, head, strict) == fresh != default
    assert _hist_commits(used, "pkg/new.py") < followed  # at 95% the move is not a rename
    assert _hist_commits(used, "pkg/new.py") == _hist_commits(tmp_path / "fresh.sqlite", "pkg/new.py")
