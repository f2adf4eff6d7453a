"""The mined commits' subjects ↔ the table ``hist_commits`` and its FTS5 index ``commit_words``:
one row a commit the history mine applied (rowid = the order it landed in, oldest first), its
sha, subject (``git.commit_subject``: the first paragraph, at most 200 characters) and the files
it changed that the counts took in; ``commit_words`` holds the subject's words, identifiers
split as in ``file_words``. BM25 over it is the task's ``commits`` channel: past commits whose
subjects match the task vote for the files they changed.

The rows describe the history of one head (meta ``commit_words_head``): an index run that
extends that head appends the new commits, any other run replaces them all
(``index/history.py``); a store written before the tables existed gets them on its next index
run. A subject is repository text: it is stored and searched, never rendered; the FTS query is
built from the task's own tokens (``task.parts.file_query``), and one that does not parse finds
nothing. The caller owns the transaction.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import deque
from collections.abc import Iterable
from functools import lru_cache
from itertools import chain
from typing import TYPE_CHECKING

from knowing_pr.store.fts import word_tokens

if TYPE_CHECKING:
    from knowing_pr.history.state import AppliedCommit

__all__ = [
    "COMMITS_HEAD_META",
    "COMMIT_TABLES",
    "CommitRow",
    "CommitRows",
    "append_commits",
    "commit_row",
    "clear_commits",
    "search_commits",
    "subject_words",
]

#: a path JSON writes as it is: printable ASCII without a quote or a backslash
_PLAIN_PATH = re.compile(r"[ !#-\[\]-~]*")

#: meta key: the head whose history the rows describe ("" or absent: none)
COMMITS_HEAD_META = "commit_words_head"

COMMIT_TABLES = (
    """CREATE TABLE IF NOT EXISTS hist_commits(
        seq INTEGER PRIMARY KEY, sha TEXT NOT NULL, subject TEXT NOT NULL,
        file_count INTEGER NOT NULL, files TEXT NOT NULL)""",
    """CREATE VIRTUAL TABLE IF NOT EXISTS commit_words USING fts5(
        words, content = '', tokenize = "unicode61 tokenchars '_'")""",
)


def subject_words(subject: str) -> str:
    """A subject's words for ``commit_words``: each word and its identifier parts, lower case."""
    return " ".join(chain.from_iterable(map(_word_terms, subject.split())))


@lru_cache(maxsize=65536)
def _word_terms(word: str) -> tuple[str, ...]:
    """One word's terms for ``commit_words`` (subjects repeat their words: each is split once)."""
    return tuple(t for t in dict.fromkeys(map(str.lower, word_tokens(word))) if 1 < len(t) <= 64)


def _files_json(paths: tuple[str, ...]) -> str:
    """``json.dumps(list(paths))`` without spaces; the common paths (printable ASCII, nothing JSON
    escapes) joined directly (a history has tens of thousands of these lists)."""
    if all(_PLAIN_PATH.fullmatch(path) for path in paths):
        return '["' + '","'.join(paths) + '"]' if paths else "[]"
    return json.dumps(list(paths), separators=(",", ":"))


def clear_commits(conn: sqlite3.Connection) -> None:
    """Forget every commit row (a contentless FTS5 table is emptied with its ``delete-all``)."""
    conn.execute("DELETE FROM hist_commits")
    conn.execute("INSERT INTO commit_words(commit_words) VALUES ('delete-all')")


#: one commit's row as ``append_commits`` writes it, before its number: sha, subject, how many
#: files, the files as JSON, the subject's words
CommitRow = tuple[str, str, int, str, str]


def commit_row(commit: AppliedCommit) -> CommitRow:
    """``commit``'s row (a commit that changed a counted file)."""
    touched = commit.touched
    return commit.sha, commit.subject, len(touched), _files_json(touched), subject_words(commit.subject)


class CommitRows:
    """The rows of commits told one at a time (``add``), oldest first, built ahead in spare moments
    (``build_some``: a history mine calls it while git has printed nothing new); ``rows`` builds the
    rest. The rows are the same whenever they are built."""

    #: commits built per ``build_some`` call (a fraction of a millisecond)
    STEP = 16

    def __init__(self) -> None:
        self._waiting: deque[AppliedCommit] = deque()
        self._built: list[CommitRow] = []

    @classmethod
    def built_already(cls, rows: list[CommitRow]) -> CommitRows:
        """The rows of commits told elsewhere (a mine in another process), built there."""
        made = cls()
        made._built = rows
        return made

    def add(self, commit: AppliedCommit) -> None:
        if commit.touched:
            self._waiting.append(commit)

    def build_some(self) -> bool:
        """Build a few waiting rows; False when none was waiting."""
        waiting = self._waiting
        if not waiting:
            return False
        for _ in range(min(self.STEP, len(waiting))):
            self._built.append(commit_row(waiting.popleft()))
        return True

    def rows(self) -> list[CommitRow]:
        while self.build_some():
            pass
        return self._built


def append_commits(
    conn: sqlite3.Connection, commits: Iterable[AppliedCommit], *, built: CommitRows | None = None
) -> int:
    """Add ``commits`` (oldest first) after the rows there; the commits that changed no file the
    counts took in are left out (they vote for nothing). ``built``: the same commits' rows, built
    already (told them, in order). The number of rows added."""
    start = int(conn.execute("SELECT COALESCE(MAX(seq), 0) FROM hist_commits").fetchone()[0])
    made = built.rows() if built is not None else [commit_row(c) for c in commits if c.touched]
    conn.executemany(
        "INSERT INTO hist_commits(seq, sha, subject, file_count, files) VALUES (?, ?, ?, ?, ?)",
        [
            (start + i, sha, subject, count, files)
            for i, (sha, subject, count, files, _) in enumerate(made, 1)
        ],
    )
    conn.executemany(
        "INSERT INTO commit_words(rowid, words) VALUES (?, ?)",
        [(start + i, words) for i, (*_, words) in enumerate(made, 1)],
    )
    return len(made)


def search_commits(
    conn: sqlite3.Connection, query: str, *, limit: int, max_files: int
) -> list[tuple[float, tuple[str, ...]]]:
    """BM25 over the subjects of the commits that changed at most ``max_files`` files: (score > 0,
    the files it changed), best first, ties by the newer commit; at most ``limit``."""
    if not query:
        return []
    try:
        rows = conn.execute(
            "SELECT -bm25(commit_words) AS score, hist_commits.files FROM commit_words"
            " JOIN hist_commits ON hist_commits.seq = commit_words.rowid"
            " WHERE commit_words MATCH ? AND hist_commits.file_count <= ?"
            " ORDER BY score DESC, hist_commits.seq DESC LIMIT ?",
            (query, max_files, limit),
        ).fetchall()
    except sqlite3.OperationalError:
        return []
    return [(float(score), tuple(str(p) for p in json.loads(files))) for score, files in rows]
