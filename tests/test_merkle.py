"""Directory Merkle roots: every file counts whatever the order, and re-hashing one ancestor
chain gives the same roots as hashing everything."""

from __future__ import annotations

import random

import pytest

from knowing_pr.graph.merkle import dir_roots_for, graph_root_of, updated_dir_roots

DIRS = ["", "a", "a/b", "a/b/c", "a/b/c/d", "x", "x/y", "z/q/r"]


def _random_files(rng: random.Random, count: int) -> dict[str, str]:
    out = {}
    for i in range(count):
        d = rng.choice(DIRS)
        out[f"{d}/f{i}.py" if d else f"f{i}.py"] = f"{rng.getrandbits(64):016x}"
    return out


def test_a_file_deep_down_changes_every_root_above_it() -> None:
    before = dir_roots_for({"top.py": "1", "a/b/c/deep.py": "2"})
    after = dir_roots_for({"top.py": "1", "a/b/c/deep.py": "3"})
    assert set(before) == {"", "a", "a/b", "a/b/c"}
    assert all(before[d] != after[d] for d in before)


@pytest.mark.parametrize("seed", range(5))
def test_roots_do_not_depend_on_the_order_of_the_files(seed: int) -> None:
    rng = random.Random(seed)
    files = _random_files(rng, 30)
    shuffled = list(files.items())
    rng.shuffle(shuffled)
    assert dir_roots_for(dict(shuffled)) == dir_roots_for(dict(sorted(files.items())))


@pytest.mark.parametrize("seed", range(20))
def test_updating_the_touched_chains_equals_hashing_everything(seed: int) -> None:
    rng = random.Random(seed)
    files = _random_files(rng, rng.randint(0, 25))
    stored = dir_roots_for(files)
    changed = dict(files)
    touched: set[str] = set()
    for path in rng.sample(sorted(files), k=min(len(files), rng.randint(0, 6))):
        del changed[path]  # deleted (possibly the last file of its directory)
        touched.add(path)
    for path, root in _random_files(rng, rng.randint(0, 6)).items():
        path = path.replace("f", "g", 1)
        changed[path] = root
        touched.add(path)

    def files_in(directories: list[str]) -> dict[str, list[tuple[str, str]]]:
        return {d: [(p, r) for p, r in changed.items() if p.rpartition("/")[0] == d] for d in directories}

    def subdirs_of(directory: str) -> dict[str, str]:
        return {d: r for d, r in stored.items() if d and d.rpartition("/")[0] == directory}

    recomputed = updated_dir_roots(touched, files_in, subdirs_of)
    result = {d: r for d, r in stored.items() if d not in recomputed}
    result.update({d: r for d, r in recomputed.items() if r is not None})
    assert result == dir_roots_for(changed)
    assert graph_root_of(result) == graph_root_of(dir_roots_for(changed))
