"""A pull request's three pushes in a repository built in tmp_path (``test_pack_diff``,
``test_since_push``): what each push changes, so a comparison of their packs is known.

- base: ``src/app.py`` (``handler`` → ``parse``), ``src/view.py`` (``render``), ``src/page.py``
  (``page`` calls ``render``), a test of ``handler``; ``src/view.py`` and ``docs/view.md``
  changed together in four earlier commits (a co-change pair);
- push 1: ``parse`` changes;
- push 2: ``render`` takes a second parameter and ``page`` is left as it was (a call site not
  updated), a test of ``render`` is added;
- push 3: ``page`` passes the new parameter (the call site now updated); nothing else.
"""

from __future__ import annotations

from typing import Any

APP = """\
from src.view import render


def handler(request):
    return render(parse(request))


def parse(request):
    return request.strip()
"""
VIEW = """\
def render(text):
    return "<p>" + text + "</p>"
"""
PAGE = """\
from src.view import render


def page(title):
    return render(title)
"""
TEST_APP = """\
from src.app import handler


def test_handler():
    assert handler(" x ") == "<p>x</p>"
"""
TEST_VIEW = """\
from src.view import render


def test_render_with_a_tag():
    assert render("x", "b") == "<b>x</b>"
"""


def build_base(repo: Any) -> str:
    """The base commit (after a history where the view and its doc change together)."""
    for round_ in range(4):
        repo.write("src/view.py", VIEW + f"\n\n# revision {round_}\n")
        repo.write("docs/view.md", f"# The view\n\nRevision {round_}.\n")
        repo.commit(f"view revision {round_}")
    repo.write("src/app.py", APP)
    repo.write("src/view.py", VIEW)
    repo.write("src/page.py", PAGE)
    repo.write("tests/test_app.py", TEST_APP)
    return str(repo.commit("base"))


def push_1(repo: Any) -> str:
    repo.write("src/app.py", APP.replace("request.strip()", "request.strip().lower()"))
    return str(repo.commit("parse lower-cases"))


def push_2(repo: Any) -> str:
    repo.write(
        "src/view.py",
        'def render(text, tag):\n    return "<" + tag + ">" + text + "</" + tag + ">"\n',
    )
    repo.write("tests/test_view.py", TEST_VIEW)
    return str(repo.commit("render takes a tag"))


def push_3(repo: Any) -> str:
    repo.write("src/page.py", PAGE.replace("render(title)", 'render(title, "h1")'))
    return str(repo.commit("page passes its tag"))


#: what moved from push 1 to push 2, as the comment's section and ``diff``'s markdown list it
PUSH_2_MOVED = [
    "- Newly changed (2):",
    "  - `render` in `src/view.py`",
    "  - `test_render_with_a_tag` in `tests/test_view.py`",
    "- Call sites newly not updated (1):",
    "  - `src/page.py` (`page` → `render`)",
    "- Tests added (1):",
    "  - `test_render_with_a_tag` in `tests/test_view.py`",
    "- Files newly co-changed (1):",
    "  - `docs/view.md`",
]
