"""A change (base, head, diff, the base's definitions, the files calling it) + the store's recent
history → who should review it (``history/reviewers.py`` scores; this module gathers).

What is read, and from where (the base commit, never the work tree nor the pull request's
version, like the Action's settings):

1. ``.mailmap``, ``.git-blame-ignore-revs`` and the first CODEOWNERS of ``CODEOWNERS_PATHS``, as
   blobs of the base commit (each at most ``MAX_SETTINGS_BYTES``);
2. **blame** at the base of the changed symbols' lines: for each range the change removed or
   modified, the smallest base definition around it (the range alone outside any; files the
   index excludes, lock files among them, are not blamed), in at most
   ``max_blame_files`` files (most changed lines first) and ``max_blame_lines`` lines each, back
   through the newest ``blame_depth_commits`` commits of the history (older lines: nobody's);
3. the **mined history**: the head's newest applied commits the index keeps for the file model
   (meta ``files_recent``: sha, time, paths; the mined state itself keeps no authors), at most
   ``max_history_commits``, for the changed files and the ``max_caller_files`` files with the most
   call sites of the change; the change's own commits left out;
4. the **authors** of those commits, read from the commit objects (immutable, so the suggestion is
   a function of the commits and the settings), and how many files each changed.

Cost: one blame per blamed file over the span of its ranges, one commit read and one tree diff
(names only) per distinct commit found, all commits (those found and the change's own) read in
one ``commit_authors`` call.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from knowing_pr.config import FileRankParams, ReviewerParams
from knowing_pr.git import FileDiff, GitRepo, LineRange
from knowing_pr.git.records import CommitAuthor
from knowing_pr.history.codeowners import CODEOWNERS_PATHS, CodeOwners, parse_codeowners
from knowing_pr.history.reviewers import Touch, ignored_revisions, person_key, suggest_reviewers
from knowing_pr.index.filefit import load_recent
from knowing_pr.index.history import RECENT_HEAD_META, recent_tag
from knowing_pr.model import Definition, Reviewer
from knowing_pr.store import Store

__all__ = [
    "BaseFiles",
    "BlameTarget",
    "ReviewerEvidence",
    "base_files",
    "blame_targets",
    "recent_commits",
    "reviewer_evidence",
    "score_evidence",
]

#: a base file read for the suggestion (mailmap, ignore list, CODEOWNERS) is read up to this size
MAX_SETTINGS_BYTES = 1 << 20
#: the change's own commits read, at most (their authors are left out)
MAX_OWN_COMMITS = 500
IGNORE_REVS_PATH = ".git-blame-ignore-revs"
MAILMAP_PATH = ".mailmap"


@dataclass(frozen=True)
class BaseFiles:
    """What the base commit says about its people: its mailmap, its ignored commits, its owners."""

    mailmap: bytes | None = None
    ignored: frozenset[str] = frozenset()
    owners: CodeOwners | None = None


@dataclass(frozen=True, slots=True)
class BlameTarget:
    """Lines of a base file to blame, and what to call them (a symbol's name, else the path)."""

    path: str
    subject: str
    lines: LineRange


def base_files(repo: GitRepo, base: str) -> BaseFiles:
    """The base's ``.mailmap``, ``.git-blame-ignore-revs`` and CODEOWNERS (absent: None / empty)."""
    wanted = [MAILMAP_PATH, IGNORE_REVS_PATH, *CODEOWNERS_PATHS]
    entries = repo.entries_at(base, wanted)

    def text_of(path: str) -> bytes | None:
        entry = entries.get(path)
        if entry is None or entry.size > MAX_SETTINGS_BYTES:
            return None
        return repo.read_blob(entry.blob_id)

    ignore = text_of(IGNORE_REVS_PATH)
    owners_path, owners_text = next(
        ((p, text) for p in CODEOWNERS_PATHS if (text := text_of(p)) is not None), (None, None)
    )
    return BaseFiles(
        mailmap=text_of(MAILMAP_PATH),
        ignored=ignored_revisions(ignore.decode("utf-8", "replace") if ignore else None),
        owners=parse_codeowners(owners_text.decode("utf-8", "replace"), owners_path)
        if owners_text is not None and owners_path is not None
        else None,
    )


def blame_targets(
    diffs: Sequence[FileDiff],
    base_defs: Mapping[str, Sequence[Definition]],
    params: ReviewerParams,
    excluded: Callable[[str], bool] = lambda path: False,
) -> list[BlameTarget]:
    """The base lines to blame: per removed or modified range, the smallest base definition that
    overlaps it (the range itself when none does); the files with the most such lines first, at
    most ``max_blame_files``, and at most ``max_blame_lines`` lines per file. A path ``excluded``
    says is not blamed (the index's excludes: lock files, vendored and generated code, whose
    blame is long to compute and says little about who knows the code)."""
    by_file: dict[str, list[BlameTarget]] = {}
    changed_lines: Counter[str] = Counter()
    for diff in diffs:
        path = diff.old_path
        if not path or not diff.removed or excluded(path):
            continue
        definitions = base_defs.get(path, ())
        for start, end in diff.removed:
            changed_lines[path] += end - start + 1
            around = [d for d in definitions if d.start_line <= end and start <= d.end_line]
            if around:
                smallest = min(around, key=lambda d: (d.end_line - d.start_line, d.start_line))
                target = BlameTarget(
                    path, smallest.qualified_name or smallest.name, (smallest.start_line, smallest.end_line)
                )
            else:
                target = BlameTarget(path, path, (start, end))
            if target not in by_file.setdefault(path, []):
                by_file[path].append(target)
    chosen = sorted(changed_lines, key=lambda p: (-changed_lines[p], p))[: params.max_blame_files]
    out: list[BlameTarget] = []
    for path in sorted(chosen):
        room = params.max_blame_lines
        for target in sorted(by_file[path], key=lambda t: t.lines):
            if room <= 0:
                break
            start, end = target.lines
            end = min(end, start + room - 1)
            room -= end - start + 1
            out.append(BlameTarget(path, target.subject, (start, end)))
    return out


def recent_commits(store: Store, head: str, files: FileRankParams) -> list[tuple[str, int, tuple[str, ...]]]:
    """The head's newest applied commits the index keeps for the file model's fit (sha, time,
    paths), newest first; empty when the fit is off (rows a run with the fit on left behind are
    not read: the pack would depend on the store's past) or the rows are another head's."""
    if not (files.enabled and files.fit) or store.get_meta(RECENT_HEAD_META) != recent_tag(
        head, files.fit_window
    ):
        return []
    return [(c.sha, c.time, c.touched) for c in reversed(load_recent(store))]


@dataclass(frozen=True)
class ReviewerEvidence:
    """What the suggestion scores: the touches found, the changed paths, the base's owners and
    the people who cannot review. Only the gathering limits of ``ReviewerParams`` shape it (files
    and lines blamed, blame depth, commits read, mass edits); the weights and the half-life only
    score it, so one evidence can be scored under several settings (``bench/reviewers.py``)."""

    touches: tuple[Touch, ...] = ()
    changed_paths: tuple[str, ...] = ()
    owners: CodeOwners | None = None
    excluded: tuple[str, ...] = ()


def score_evidence(evidence: ReviewerEvidence, params: ReviewerParams) -> list[Reviewer]:
    """The suggestion ``params`` (its weights, half-life, ``max_reviewers``) makes of ``evidence``."""
    return suggest_reviewers(
        evidence.touches,
        params,
        changed_paths=evidence.changed_paths,
        owners=evidence.owners,
        excluded=evidence.excluded,
    )


def reviewer_evidence(
    repo: GitRepo,
    params: ReviewerParams,
    *,
    base: str,
    head: str,
    diffs: Sequence[FileDiff],
    base_defs: Mapping[str, Sequence[Definition]],
    history: Sequence[tuple[str, int, tuple[str, ...]]],
    caller_paths: Sequence[str] = (),
    author: str | None = None,
    not_blamed: Callable[[str], bool] = lambda path: False,
) -> ReviewerEvidence:
    """The touches of the change ``base``..``head`` and what else the scoring needs (see the
    module docstring)."""
    found = base_files(repo, base)
    changed = sorted({p for d in diffs for p in (d.new_path or d.old_path,) if p})
    own = set(repo.commits_between(base, head, MAX_OWN_COMMITS))
    targets = blame_targets(diffs, base_defs, params, not_blamed)
    # the blame walks back through the newest ``blame_depth_commits`` commits only (most of a
    # blame's time goes to walking back to a file's first commit; old lines weigh little anyway)
    depth = params.blame_depth_commits
    blamed = _blamed(repo, base, targets, history[depth - 1][0] if 0 < depth <= len(history) else None)
    callers = [p for p in _by_count(caller_paths) if p not in set(changed)][: params.max_caller_files]
    kinds = {**{p: "caller" for p in callers}, **{p: "file" for p in changed}}
    history_touches = [
        (sha, kinds[path], path, path)
        for sha, _, touched in history[: params.max_history_commits]
        if sha not in own and len(touched) <= params.max_files_per_commit
        for path in touched
        if path in kinds
    ]
    shas = {sha for sha, *_ in blamed} | {sha for sha, *_ in history_touches}
    # one read of the commits: the touches' authors, and the change's own (who cannot review)
    authors = repo.commit_authors(shas | own, found.mailmap)
    usable = {
        sha: who
        for sha, who in authors.items()
        if sha in shas and sha not in found.ignored and who.files_changed <= params.max_files_per_commit
    }
    touches = tuple(
        _touch(usable[sha], kind, subject, path)
        for sha, kind, subject, path in (*blamed, *history_touches)
        if sha in usable
    )
    not_reviewers = {person_key(a.name, a.email) for sha, a in authors.items() if sha in own}
    if author:
        not_reviewers.add(author)
    return ReviewerEvidence(touches, tuple(changed), found.owners, tuple(sorted(not_reviewers)))


def _blamed(
    repo: GitRepo, base: str, targets: Sequence[BlameTarget], oldest: str | None
) -> list[tuple[str, str, str, str]]:
    """(sha, "lines", subject, path) per commit that last changed lines of a target."""
    out: list[tuple[str, str, str, str]] = []
    by_path: dict[str, list[BlameTarget]] = {}
    for target in targets:
        by_path.setdefault(target.path, []).append(target)
    for path, found in sorted(by_path.items()):
        hunks = repo.blame_ranges(base, path, [t.lines for t in found], oldest=oldest)
        for target in found:
            start, end = target.lines
            shas = sorted({sha for first, last, sha in hunks if first <= end and start <= last})
            out.extend((sha, "lines", target.subject, path) for sha in shas)
    return out


def _by_count(paths: Iterable[str]) -> list[str]:
    counts = Counter(paths)
    return sorted(counts, key=lambda p: (-counts[p], p))


def _touch(who: CommitAuthor, kind: str, subject: str, path: str) -> Touch:
    return Touch(person_key(who.name, who.email), who.name, who.sha, who.time, kind, subject, path)
