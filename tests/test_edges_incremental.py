"""Incremental == full when what a file holds for others changes: re-exports, aliases, star
imports, base classes, attributes and return types read across files (graph/deps.py)."""

from __future__ import annotations

import itertools

from conftest import RepoBuilder
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_index import _symbol_table_mode, snapshot

from knowing_pr.git import GitRepo
from knowing_pr.index import index_commit

#: each file's possible contents (the empty string: the file is absent)
VARIANTS: dict[str, list[str]] = {
    "pkg/__init__.py": [
        "",
        "from .impl import Engine\n",
        "from .impl import Engine as Motor\nEngine = Motor\n",
        "from .other import *\n",
        "from . import impl\nfrom .impl import make\n",
    ],
    "pkg/impl.py": [
        "",
        "from .base import Base\n\n\nclass Engine(Base):\n    pass\n\n\ndef make() -> Engine:\n    return Engine()\n",
        "class Engine:\n    def run(self):\n        return 1\n\n\ndef make():\n    return Engine()\n",
        "from .other import Engine\n\n\ndef make() -> 'Engine':\n    return Engine()\n",
    ],
    "pkg/base.py": [
        "",
        "class Base:\n    def run(self):\n        return 0\n",
        "from .other import Engine as Base\n",
        "class Root:\n    def run(self):\n        return 2\n\n\nclass Base(Root):\n    pass\n",
    ],
    "pkg/other.py": [
        "",
        "class Engine:\n    def run(self):\n        return 3\n",
        "class Engine:\n    def stop(self):\n        return 4\n",
    ],
    "models.py": [
        "",
        "from pkg import Engine\n\n\nclass Holder:\n    def __init__(self):\n        self.engine = Engine()\n",
        "from pkg.impl import make\n\n\nclass Holder:\n    def __init__(self):\n        self.engine = make()\n",
    ],
    "app.py": [
        "from pkg import Engine\n\n\ndef go():\n    Engine().run()\n",
        "import pkg\n\n\ndef go():\n    pkg.Motor().run()\n    pkg.make().run()\n",
        "from models import Holder\n\n\ndef go(h: Holder):\n    h.engine.run()\n",
        "from pkg.impl import make\n\n\ndef go():\n    engine = make()\n    engine.run()\n",
    ],
}
FILES = sorted(VARIANTS)
_EXAMPLE = itertools.count()
_op = st.tuples(st.sampled_from(FILES), st.integers(0, 4))


def _write(b: RepoBuilder, state: dict[str, str], path: str, variant: int) -> None:
    text = VARIANTS[path][variant % len(VARIANTS[path])]
    if text == state.get(path, ""):
        return
    if text:
        b.write(path, text)
    else:
        b.delete(path)
    state[path] = text


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    base=st.lists(st.integers(0, 4), min_size=len(FILES), max_size=len(FILES)),
    steps=st.lists(st.lists(_op, min_size=1, max_size=3), min_size=1, max_size=4),
    eager=st.booleans(),
)
def test_incremental_equals_full_when_facts_change(make_repo, base, steps, eager) -> None:
    b = make_repo(f"facts{next(_EXAMPLE)}")
    state: dict[str, str] = {}
    for path, variant in zip(FILES, base, strict=True):
        _write(b, state, path, variant)
    b.write("README.md", "facts\n")
    b.commit("base")
    repo = GitRepo.open(str(b.path))
    inline = _symbol_table_mode(eager)
    incremental_db = b.path.parent / f"{b.path.name}-inc.sqlite"
    index_commit(repo, inline, db_path=incremental_db)
    for step in steps:
        for path, variant in step:
            _write(b, state, path, variant)
        b.commit("step")
        index_commit(repo, inline, db_path=incremental_db)
    full_db = b.path.parent / f"{b.path.name}-full.sqlite"
    index_commit(repo, inline, db_path=full_db, full=True)
    assert snapshot(incremental_db) == snapshot(full_db)
