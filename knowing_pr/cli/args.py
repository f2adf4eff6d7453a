"""The command line's grammar: every subcommand, its options and their types (argv → a namespace, or
one error line and a hint on stderr with exit 2 — never argparse's usage block)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

from knowing_pr import __version__
from knowing_pr.cli.say import say as _say

__all__ = ["FORMATS", "MIN_BUDGET", "build_parser"]

FORMATS = ("markdown", "json", "xml")
MIN_BUDGET = 500


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        """One error line and one hint line, like every other input error (no usage block)."""
        _say(f"knowing-pr: error: {' '.join(message.split())}")
        _say(f"hint: see '{self.prog} --help'")
        raise SystemExit(2)


def _path(value: str) -> str:
    """A file or directory path: any bytes the OS allows, but not nothing."""
    if not value:
        raise argparse.ArgumentTypeError("the path is empty")
    return value


def _revision(value: str) -> str:
    if not value.strip():
        raise argparse.ArgumentTypeError("the revision is empty")
    return value


#: the longest ``--author`` (a request record refuses longer ones: ``replay.validate_record``)
MAX_AUTHOR_CHARS = 320


def _author(value: str) -> str:
    """The PR's author: UTF-8 text of at most ``MAX_AUTHOR_CHARS`` characters."""
    text = _text(value)
    if len(text) > MAX_AUTHOR_CHARS:
        raise argparse.ArgumentTypeError(f"at most {MAX_AUTHOR_CHARS} characters, got {len(text):,}")
    return text


def _text(value: str) -> str:
    """Free text (a task, a query, a symbol): it is searched and printed, so it must be UTF-8."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise argparse.ArgumentTypeError(
            f"not valid UTF-8 text: {value.encode('utf-8', 'surrogateescape')[:60]!r}"
        ) from None
    return value


def _budget(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"budget must be a whole number of tokens, got {value!r}") from None
    if number < MIN_BUDGET or number > 10_000_000:
        raise argparse.ArgumentTypeError(
            f"budget must be between {MIN_BUDGET:,} and 10,000,000 tokens, got {number:,}"
            " (a pack's header, edges and PackRoot alone take a few hundred tokens)"
        )
    return number


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--repo", type=_path, default=".", help="repository path (default: the current directory)")
    p.add_argument(
        "--db", type=_path, default=None, help="store file (default: <git dir>/knowing-pr/index.sqlite)"
    )
    p.add_argument(
        "--config", type=_path, default=None, help="config file (default: .knowing-pr.yml in the repository)"
    )


def _pack_options(p: argparse.ArgumentParser, *, budget_default: int | None = None) -> None:
    p.add_argument("--budget", type=_budget, default=budget_default, help="token budget (default 8000)")
    p.add_argument("--format", choices=FORMATS, default="markdown")
    p.add_argument("--out", type=_path, default=None, help="write the pack to this file instead of stdout")
    p.add_argument("--quiet", action="store_true", help="no progress output on stderr")


def _index_options(p: argparse.ArgumentParser) -> None:
    _common(p)
    p.add_argument("--rev", type=_revision, default=None, help="commit to index (default HEAD)")
    p.add_argument("--full", action="store_true", help="rebuild from scratch")
    p.add_argument("--quiet", action="store_true", help="no progress or summary output")
    p.add_argument("--json", action="store_true", help="print the run report as JSON")


def _stats_options(p: argparse.ArgumentParser) -> None:
    _common(p)
    p.add_argument("--json", action="store_true")


def _pr_options(p: argparse.ArgumentParser) -> None:
    _common(p)
    p.add_argument(
        "--base",
        type=_revision,
        default=None,
        help="base revision (default: merge-base with the default branch)",
    )
    p.add_argument("--head", type=_revision, default=None, help="head revision (default HEAD)")
    p.add_argument("--files", nargs="+", default=None, metavar="PATH", help="changed paths instead of a diff")
    p.add_argument("--task", type=_text, default=None, help="extra task text (e.g. the PR title and body)")
    p.add_argument(
        "--author",
        type=_author,
        default=None,
        metavar="WHO",
        help="the PR's author (e-mail, name or GitHub login): never suggested as a reviewer",
    )
    _pack_options(p)
    p.add_argument(
        "--record",
        choices=("note",),
        default=None,
        help="also record the pack's request as a git note on the head commit (refs/notes/knowing-pr; "
        "share it with `git push origin refs/notes/knowing-pr`)",
    )
    p.add_argument(
        "--manifest",
        dest="manifest_out",
        type=_path,
        default=None,
        metavar="FILE",
        help="also write the pack's manifest to FILE (replay --manifest FILE reads it)",
    )


def _files_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH")
    _common(p)
    _pack_options(p)


def _task_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("description", type=_text)
    _common(p)
    _pack_options(p)
    p.add_argument("--error-file", type=_path, default=None, help="a log with a stack trace to seed from")
    p.add_argument(
        "--diff",
        type=_revision,
        default=None,
        metavar="REV",
        help="also seed from the symbols REV..HEAD changed",
    )
    p.add_argument(
        "--out-dir",
        type=_path,
        default=None,
        help="write PACK.md, TASK.md, FILES.md, GRAPH.md, excerpts/, ctx.*",
    )


def _why_options(p: argparse.ArgumentParser) -> None:
    # optional here: `why --change A B FILE` ends with the file, which --change's paths take in
    # (cli.commands splits it off, see ``why_target``)
    p.add_argument("symbol", type=_text, nargs="?", default=None, help="a symbol; with --change, a file")
    p.add_argument("--task", type=_text, default=None)
    p.add_argument(
        "--change",
        action="extend",
        nargs="+",
        default=[],
        metavar="PATH",
        help="the changed files, then the FILE to explain: its place in their ranked file list",
    )
    _common(p)
    p.add_argument("--budget", type=_budget, default=None)
    p.add_argument("--json", action="store_true")


def _replay_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("pack_root", metavar="PACKROOT")
    _common(p)
    p.add_argument("--verify", action="store_true", help="recompute at the recorded commit and compare")
    p.add_argument("--manifest", type=_path, default=None, help="a manifest file exported from another clone")
    p.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="print the pack in this format (default: the pack's own)",
    )
    p.add_argument(
        "--quiet", action="store_true", help="with --verify, print the verdict alone (not the pack before it)"
    )
    p.add_argument("--export", type=_path, default=None, metavar="FILE", help="write the manifest to FILE")
    p.add_argument(
        "--pr",
        default=None,
        metavar="N|URL",
        help="also look in this pull request's comments (a number, with GITHUB_REPOSITORY or the "
        "origin remote naming the repository, or the pull request's URL)",
    )


def _diff_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("before", metavar="ROOT_A", help="the earlier pack's PackRoot")
    p.add_argument("after", metavar="ROOT_B", help="the later pack's PackRoot")
    _common(p)
    p.add_argument("--format", choices=("markdown", "json"), default="markdown")
    p.add_argument("--out", type=_path, default=None, help="write to this file instead of stdout")
    p.add_argument(
        "--pr",
        default=None,
        metavar="N|URL",
        help="also look in this pull request's comments for the packs' requests (as replay --pr)",
    )


def _map_options(p: argparse.ArgumentParser) -> None:
    _common(p)
    p.add_argument(
        "--profile", choices=("default", "debug", "feature", "architecture", "refactor"), default="default"
    )
    p.add_argument("--query", type=_text, default=None)
    p.add_argument("--budget", type=_budget, default=None)
    p.add_argument("--out", type=_path, default=None)


def _export_options(p: argparse.ArgumentParser) -> None:
    _common(p)
    p.add_argument("--format", choices=("jsonl", "graphml", "dot"), default="jsonl")
    p.add_argument("--out", type=_path, default=None, help="write to this file instead of stdout")


def _hook_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("install", "uninstall", "run", "status"))
    p.add_argument("hook_args", nargs="*", help=argparse.SUPPRESS)
    p.add_argument("--repo", type=_path, default=".")
    p.add_argument("--hooks-path-ok", action="store_true", help="install into core.hooksPath")


def _no_options(p: argparse.ArgumentParser) -> None:
    """The command takes no options (``action`` reads the GitHub environment)."""


_COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "index": ("index the repository (incremental unless --full)", _index_options),
    "stats": ("what the store holds and whether it is fresh", _stats_options),
    "pr": ("pack what a change touches", _pr_options),
    "files": ("symbols of these files plus their direct callers", _files_options),
    "task": ("pack the code a task description needs", _task_options),
    "why": ("explain a symbol's rank for a task (or a file's for a change)", _why_options),
    "replay": ("print or verify a recorded pack", _replay_options),
    "diff": ("what moved between two recorded packs (both rebuilt from their requests)", _diff_options),
    "map": ("a ranked repository map (CONTEXT.md)", _map_options),
    "export": ("the whole graph: nodes and edges (jsonl, graphml or dot)", _export_options),
    "hook": ("git hooks that keep the index current", _hook_options),
    "action": ("GitHub Action entry point (reads the GITHUB_* environment)", _no_options),
    "mcp": ("a Model Context Protocol server over stdio (tools for agents)", _common),
}


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command line's parser; given the ``argv`` it will parse, only the parser of the command
    it names is built (any other line, ``--help`` for one, gets them all)."""
    parser = _Parser(prog="knowing-pr", description="The code a pull request touches, in a budget.")
    parser.add_argument("--version", action="version", version=f"knowing-pr {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    named = argv[0] if argv else None
    for name, (help_text, add_options) in _COMMANDS.items():
        if named in _COMMANDS and name != named:
            continue
        add_options(sub.add_parser(name, help=help_text))
    return parser
