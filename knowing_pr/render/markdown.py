"""Frame + symbols + edges → markdown (``_document``): the reviewer's answer first,
the details behind one "More" fold, one footer line.

A ``pr`` pack with a summary reads, in order: a title line that is the answer in one sentence;
**What changed** (the change's own symbols, signature changes flagged with the old signature;
removed symbols; those the budget left out, counted); **Callers outside this PR** (call sites as
``path:line``, the not-updated ones first); **Tests to run** (a command each); **Usually changed
together, not in this PR**; then a collapsed "More" with the callers' and callees' code, the
tests' code, related symbols and the diagram; then the footer with the replay command. A change
without code is one line and the footer, plus **Tests to run** when it bumps a dependency those
tests import. Other packs (``files``, ``task``) list their sections
the same way. Nothing shows scores, token counts or full commit hashes (the JSON keeps them).

Every untrusted string goes through ``knowing_pr.render.safety`` first; every entry is one line.

One module a little over the style's ~400 lines: the sections of one document, rendered
and costed by the same helpers so that the budget holds on the text a reader sees.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from knowing_pr.model import ChangeSummary, RankedFile, ScoredSymbol, SymbolKind, TestToRun
from knowing_pr.render.diagram import mermaid_diagram
from knowing_pr.render.display import display_name, doc_excerpt, kind_word, signature_line
from knowing_pr.render.frame import WORST_COUNT, Frame, RenderLimits
from knowing_pr.render.reviewers import markdown_reviewers, mentions_allowed
from knowing_pr.render.safety import clean_text, inline_code, one_line, plain
from knowing_pr.render.summary import (
    grouped_commands,
    markdown_call_site,
    markdown_partner,
    markdown_removed,
    markdown_test,
    removed_total,
    together_rows,
)
from knowing_pr.task.parts import split_task

__all__ = ["markdown_entry", "plural", "render_markdown"]

#: the "More" sections of a change's pack: (reason, title, what the fold's summary calls one, many)
_DETAIL_SECTIONS = (
    ("caller", "Who calls the changed code", "caller", "callers"),
    ("callee", "What the changed code uses", "symbol it uses", "symbols it uses"),
    ("test", "Code of tests near the change", "test symbol", "test symbols"),
    (
        "cochange",
        "Code of files changed with these before",
        "symbol of co-changed files",
        "symbols of co-changed files",
    ),
    ("related", "Related", "related symbol", "related symbols"),
)
#: the "More" sections of a pack that has no change (``task``, ``files``): the same groups, in
#: words about the symbols found, never about a change
_FOUND_SECTIONS = (
    ("caller", "Callers of these", "caller", "callers"),
    ("callee", "What these use", "symbol they use", "symbols they use"),
    ("test", "Tests that reach these", "test symbol", "test symbols"),
    (
        "cochange",
        "Code of files changed with these before",
        "symbol of co-changed files",
        "symbols of co-changed files",
    ),
    ("related", "Related", "related symbol", "related symbols"),
)
#: the sections of other packs, in order
_PLAIN_SECTIONS = {
    "task": (("match", "Code to look at"),),
    "files": (("changed", "Symbols of these files"),),
}
_MODE_TITLES = {
    "pr": "what this change touches",
    "files": "what these files touch",
    "task": "code for this task",
}


def plural(count: int, word: str) -> str:
    return f"{count:,} {word}" if count == 1 else f"{count:,} {word}s"


# ---------------------------------------------------------------- entries


def _location(sym: ScoredSymbol, limits: RenderLimits) -> str:
    path = one_line(sym.node.path[: limits.path_bytes * 4])
    return inline_code(f"{path}:{sym.node.start_line}", limits.path_bytes)


def _change_note(sym: ScoredSymbol, limits: RenderLimits) -> str:
    if sym.signature_changes:
        what = plain(", ".join(sym.signature_changes), 60)
        if sym.brief:
            return f" · **signature changed**: {what}"
        before = inline_code(signature_line(sym.node, sym.signature_before), limits.signature_bytes)
        return f" · **signature changed**: {what} (was {before})"
    return " · new" if sym.is_new else ""


@lru_cache(maxsize=4096)  # a pack costs its candidates' entries, then renders the chosen ones again
def markdown_entry(sym: ScoredSymbol, limits: RenderLimits) -> str:
    """The markdown text of one symbol's entry (one line), exactly as the pack shows it."""
    node = sym.node
    if node.kind == SymbolKind.MODULE:
        edited_tests = sym.reason == "changed" and sym.is_test
        fields = {
            "kind": "tests in" if edited_tests else "file",
            "name": inline_code(one_line(node.path), limits.path_bytes),
            "location": "module-level code" if sym.reason == "changed" else "the whole file",
            "note": "",
        }
        if edited_tests:
            fields["location"] = "edited (see Tests to run)"
    elif sym.reason == "changed" or sym.brief:
        shown = display_name(node) if sym.brief else signature_line(node)
        fields = {
            "kind": plain(kind_word(node), 30),
            "name": inline_code(shown, limits.signature_bytes),
            "location": _location(sym, limits),
            "note": _change_note(sym, limits) if sym.reason == "changed" else "",
        }
    else:
        doc = doc_excerpt(node.doc)
        fields = {
            "kind": plain(kind_word(node), 30),
            "name": inline_code(signature_line(node), limits.signature_bytes),
            "location": _location(sym, limits),
            "note": f" — {plain(doc, limits.doc_bytes)}" if doc else "",
        }
    return _entry_line(fields)


def _entry_line(fields: Mapping[str, str]) -> str:
    """One entry: ``- kind name — location note``."""
    return f"- {fields['kind']} {fields['name']} — {fields['location']}{fields['note']}\n"


# ---------------------------------------------------------------- the answer (a change's summary)


@dataclass(frozen=True)
class _Counts:
    """The counts a title and the fold's summary show (worst case: all ``WORST_COUNT``)."""

    changed: int
    outside: int
    not_updated: int
    tests: int
    removed: int


def _counts(frame: Frame, summary: ChangeSummary, changed: int, worst: bool) -> _Counts:
    if worst:
        return _Counts(WORST_COUNT, WORST_COUNT, WORST_COUNT, WORST_COUNT, WORST_COUNT)
    return _Counts(
        changed + summary.changed_left_out_count,
        summary.call_sites_outside,
        summary.call_sites_not_updated,
        summary.tests_total,
        removed_total(summary),
    )


def _title(frame: Frame, counts: _Counts | None, summary: ChangeSummary | None) -> str:
    if summary is not None and summary.no_code:
        tests = f", {plural(counts.tests, 'test')} to run" if counts is not None and counts.tests else ""
        return "knowing-pr · no code changed" + tests
    if summary is None or counts is None:
        return "knowing-pr · " + _MODE_TITLES.get(frame.mode, "context pack")
    parts = [f"{plural(counts.changed, 'symbol')} changed"]
    if counts.removed:
        parts.append(f"{counts.removed:,} removed")
    where = "this PR" if frame.comment else "this change"
    if counts.not_updated:
        parts.append(f"{plural(counts.not_updated, 'call site')} not updated")
    else:
        parts.append(f"{plural(counts.outside, 'call site')} outside {where}")
    parts.append(f"{plural(counts.tests, 'test')} to run")
    return "knowing-pr · " + ", ".join(parts)


def _shown(frame: Frame) -> int:
    """How many call sites and tests the summary lists: fewer in a comment (its first screen)."""
    return frame.limits.comment_shown if frame.comment else frame.limits.summary_shown


def _more_line(count: int, total: int, what: str) -> str:
    """``- … and 3 more tests (all in the JSON pack)``; ``what`` in the singular."""
    more = total - count
    return f"- … and {plural(more, 'more ' + what)} (all in the JSON pack)\n" if more > 0 else ""


def _changed_block(
    frame: Frame, summary: ChangeSummary, entries: Sequence[str], changed_count: int, worst: bool
) -> dict[str, str]:
    limits = frame.limits
    shown = limits.comment_changed_shown if frame.comment else len(entries)
    body = "".join(entries[:shown])
    if len(entries) > shown:  # a comment's first screen keeps room for the callers and the tests
        rest = len(entries) - shown
        body += (
            f"\n<details>\n<summary>{plural(rest, 'more changed symbol')}</summary>\n\n"
            + "".join(entries[shown:])
            + "\n</details>\n\n"
        )
    body += "".join(markdown_removed(r, limits) for r in summary.removed)
    removed_more = WORST_COUNT if worst else removed_total(summary) - len(summary.removed)
    if removed_more > 0 and removed_total(summary):
        body += f"- … and {plural(removed_more, 'more removed symbol')} (all in the JSON pack)\n"
    left_out = WORST_COUNT if worst else summary.changed_left_out_count
    if left_out:
        body += (
            f"- … and {plural(left_out, 'more changed symbol')} the budget had no room for"
            " (named in the JSON pack)\n"
        )
    deleted = _deleted_line(frame)
    if deleted:
        body += f"- {deleted}\n"
    not_indexed = _not_indexed_line(frame)
    if not_indexed:
        body += f"- {not_indexed}\n"
    count = (
        WORST_COUNT
        if worst
        else changed_count + summary.changed_left_out_count + removed_total(summary) + _deleted_count(frame)
    )
    return {"heading": f"**What changed** ({count:,})", "body": body or "- nothing the index can see\n"}


def _callers_block(frame: Frame, summary: ChangeSummary, counts: _Counts) -> dict[str, str]:
    limits = frame.limits
    outside = [s for s in summary.call_sites if not s.in_change][: _shown(frame)]
    where = "this PR" if frame.comment else "this change"
    body = "".join(markdown_call_site(s, limits) for s in outside)
    body += _more_line(len(outside), counts.outside, "call site")
    inside = summary.call_sites_total - summary.call_sites_outside
    heading = f"**Callers outside {where}** ({counts.outside:,})"
    if counts.not_updated:
        heading += f" — ⚠️ {plural(counts.not_updated, 'call site')} not updated: check they still work"
    if not body:
        body = (
            f"- none: {plural(inside, 'call site')}, all in the files {where} edits\n"
            if inside > 0
            else "- none found\n"
        )
    elif inside > 0:
        body += f"- and {plural(inside, 'call site')} in the files {where} edits\n"
    return {"heading": heading, "body": body}


def _tests_block(frame: Frame, summary: ChangeSummary, counts: _Counts) -> dict[str, str]:
    """One command per test; tests whose command is shared (a runner that cannot pick one test)
    are named one per line and the command follows once."""
    limits = frame.limits
    shown = summary.tests[: _shown(frame)]
    uses: dict[str, int] = {}
    for test in shown:
        uses[test.run] = uses.get(test.run, 0) + 1
    where = "this PR" if frame.comment else "this change"
    body = "".join(markdown_test(t, limits, named=uses[t.run] > 1, where=where) for t in shown)
    suites = {t.run for t in shown if t.framework == "karma"}
    for command, count in uses.items():
        if count > 1:
            suite = " (the whole suite: Karma cannot pick one test)" if command in suites else ""
            body += (
                f"- {plural(count, 'test')} above run with {inline_code(command, limits.text_bytes)}{suite}\n"
            )
    body += _grouped_lines(shown, limits, shared={command for command, count in uses.items() if count > 1})
    more = counts.tests - len(shown)
    if more > 0:
        body += f"- … and {plural(more, 'more test')}, each with its evidence and command, in the JSON pack\n"
    return {
        "heading": f"**Tests to run** ({counts.tests:,})",
        "body": body or "- no test case found that reaches the change\n",
    }


def _grouped_lines(shown: Sequence[TestToRun], limits: RenderLimits, shared: Collection[str] = ()) -> str:
    """``- all pytest tests above at once: `…` ``; ``- 3 of the dotnet test tests above at once``
    where a line runs only some of them (one per project, crate, target); a command too long to
    show whole is left out: cut, it would not run. A line that is one of the ``shared`` commands
    (said already: "7 tests above run with `go test ./pkg`") is not said again."""
    per_framework: dict[str, int] = {}
    for test in shown:
        per_framework[test.framework] = per_framework.get(test.framework, 0) + 1
    lines = ""
    for framework, command, count in grouped_commands(shown):
        span = inline_code(command, limits.text_bytes)
        if command in shared or span != inline_code(command, 2 * len(command.encode()) + 16):
            continue
        which = "all" if count >= per_framework.get(framework, 0) else f"{count:,} of the"
        lines += f"- {which} {framework} tests above at once: {span}\n"
    return lines


def _together_block(frame: Frame, summary: ChangeSummary) -> dict[str, str] | None:
    rows = together_rows(frame.cochange, summary, frame.files)[
        : min(frame.limits.cochange_max, _shown(frame))
    ]
    if not rows:
        return None
    where = "this PR" if frame.comment else "this change"
    body = "".join(markdown_partner(row, frame.limits) for row in rows)
    return {"heading": f"**Usually changed together, not in {where}**", "body": body}


def _no_code_block(frame: Frame) -> dict[str, str]:
    files = frame.inputs.get("files")
    names = [str(f) for f in files][:5] if isinstance(files, (list, tuple)) else []
    listed = _named_list(
        [inline_code(n, frame.limits.path_bytes) for n in names], frame.inputs.get("files_total")
    )
    return {
        "heading": "",
        "body": f"No code changed: the change touches no source file ({listed}).\n",
    }


def _deleted_line(frame: Frame) -> str:
    """The source files the change deleted (their symbols, if any, are listed as removed)."""
    paths = frame.inputs.get("deleted")
    if not isinstance(paths, (list, tuple)) or not paths:
        return ""
    named = [inline_code(str(path), frame.limits.path_bytes) for path in paths]
    return "deleted: " + _named_list(named, frame.inputs.get("deleted_total"))


def _deleted_count(frame: Frame) -> int:
    total, paths = frame.inputs.get("deleted_total"), frame.inputs.get("deleted")
    if isinstance(total, int):
        return total
    return len(paths) if isinstance(paths, (list, tuple)) else 0


def _not_indexed_line(frame: Frame) -> str:
    """Changed files with no symbols in the pack because the index skipped them."""
    entries = frame.inputs.get("not_indexed")
    if not isinstance(entries, (list, tuple)) or not entries:
        return ""
    named = [
        f"{inline_code(str(e.get('path', '')), frame.limits.path_bytes)} ({plain(str(e.get('reason', '')), 40)})"
        for e in entries
        if isinstance(e, Mapping)
    ]
    prefix = "changed but not indexed (no symbols from them): "
    return prefix + _named_list(named, frame.inputs.get("not_indexed_total"))


def _named_list(named: Sequence[str], total: object) -> str:
    """``a, b and 3 more``: the names a pack's inputs show, and how many more ``total`` counts."""
    more = total - len(named) if isinstance(total, int) and total > len(named) else 0
    return ", ".join(named) + (f" and {more:,} more" if more else "")


# ---------------------------------------------------------------- details


def _detail_sections(
    frame: Frame,
    symbols: Sequence[ScoredSymbol],
    entries: Sequence[str],
    sections: Sequence[tuple[str, str, str, str]],
    worst: bool,
) -> tuple[list[dict[str, str]], list[str]]:
    """(sections with their entries, the fold summary's parts)."""
    keys = {key for key, _, _, _ in sections}
    groups: dict[str, list[tuple[ScoredSymbol, str]]] = {key: [] for key in keys}
    for sym, entry in zip(symbols, entries, strict=True):
        if sym.reason not in ("changed", "match"):
            groups[sym.reason if sym.reason in keys else "related"].append((sym, entry))
    changed_paths = {s.node.path for s in symbols if s.reason == "changed"}
    out: list[dict[str, str]] = []
    parts: list[str] = []
    for key, title, one, many in sections:
        items = groups.get(key, [])
        if not items and not worst:
            continue
        count = WORST_COUNT if worst else len(items)
        body = "".join(entry for _, entry in items)
        if key == "related" and frame.comment and not worst:
            body = _related_in_comment(items, changed_paths, frame.limits)
        out.append({"title": f"{title} ({count:,})", "body": body})
        parts.append(f"{count:,} {one if count == 1 else many}")
    return out, parts


def _related_in_comment(
    items: Sequence[tuple[ScoredSymbol, str]], changed_paths: set[str], limits: RenderLimits
) -> str:
    """Related symbols in a comment: at most ``related_shown`` outside the changed files; those
    of the changed files only counted."""
    own = [entry for sym, entry in items if sym.node.path in changed_paths]
    others = [entry for sym, entry in items if sym.node.path not in changed_paths]
    shown = others[: limits.related_shown]
    tail = []
    if own:
        tail.append(f"{plural(len(own), 'other symbol')} of the changed files")
    if len(others) > len(shown):
        tail.append(f"{len(others) - len(shown):,} more")
    more = f"- and {', '.join(tail)} (all in the job summary)\n" if tail else ""
    return "".join(shown) + more


def _answer_blocks(
    frame: Frame, summary: ChangeSummary, changed_entries: Sequence[str], worst: bool
) -> tuple[list[dict[str, str]], _Counts]:
    counts = _counts(frame, summary, len(changed_entries), worst)
    blocks = [
        _changed_block(frame, summary, changed_entries, len(changed_entries), worst),
        _callers_block(frame, summary, counts),
        _tests_block(frame, summary, counts),
    ]
    together = _together_block(frame, summary)
    if together:
        blocks.append(together)
    blocks += _reviewers_blocks(frame, summary)
    return blocks, counts


def _reviewers_blocks(frame: Frame, summary: ChangeSummary) -> list[dict[str, str]]:
    """The suggested reviewers' line, last of the answer (a pack with or without code)."""
    reviewers = markdown_reviewers(summary.reviewers, mentions_allowed(frame.params))
    return [{"heading": "", "body": reviewers}] if reviewers else []


def _task_line(task: str, max_bytes: int) -> str:
    """A task as one line of inert prose: a text of several lines as its title (its first line
    of prose, ``task.parts``; else its first line) and how many more lines it has."""
    # split as the rendering sees the text: ``clean_text`` escapes the control characters Python's
    # ``splitlines`` would also break at (``\x1c`` … ``\x1f``) and makes ``\u2028`` a newline
    lines = [line for line in clean_text(task).split("\n") if line.strip()]
    if len(lines) <= 1:
        return plain(task, max_bytes)
    suffix = f" (and {len(lines) - 1:,} more lines)"
    head = split_task(task).title or lines[0]
    return plain(head, max(max_bytes - len(suffix), 1)) + suffix


def _plain_blocks(
    frame: Frame, symbols: Sequence[ScoredSymbol], entries: Sequence[str], worst: bool
) -> tuple[list[dict[str, str]], list[tuple[str, str, str, str]]]:
    """Blocks of a pack without a summary (``files``, ``task``, ``pr --files`` …): the input
    lines, then its own section open; the rest go to the fold."""
    limits = frame.limits
    blocks: list[dict[str, str]] = []
    task = frame.inputs.get("task")
    if isinstance(task, str) and one_line(task):
        blocks.append({"heading": "", "body": "Task: " + _task_line(task, limits.text_bytes) + "\n"})
    not_indexed = _not_indexed_line(frame)
    if not_indexed:
        blocks.append({"heading": "", "body": not_indexed[0].upper() + not_indexed[1:] + "\n"})
    if frame.mode == "task" and frame.files:
        shown = min(len(frame.files), WHERE_TO_LOOK_SHOWN)
        more = (
            f" ({shown:,} of {len(frame.files):,}; all in the JSON pack)" if len(frame.files) > shown else ""
        )
        blocks.append({"heading": f"**Where to look**{more}", "body": _where_to_look(frame.files, limits)})
    own_key, own_title = _PLAIN_SECTIONS.get(frame.mode, (("changed", "Changed symbols"),))[0]
    own = [entry for sym, entry in zip(symbols, entries, strict=True) if sym.reason in ("changed", "match")]
    if own or worst:
        count = WORST_COUNT if worst else len(own)
        blocks.append({"heading": f"**{own_title}** ({count:,})", "body": "".join(own)})
    rows = together_rows(frame.cochange, None, frame.files)[: limits.cochange_max]
    if rows:
        blocks.append(
            {
                "heading": "**Often changed together**",
                "body": "".join(markdown_partner(r, limits) for r in rows),
            }
        )
    return blocks, list(_FOUND_SECTIONS if frame.mode in ("task", "files") else _DETAIL_SECTIONS)


#: the files a task's markdown pack lists (the JSON and XML packs list them all)
WHERE_TO_LOOK_SHOWN = 10
#: the reasons a "Where to look" line gives, strongest first (the JSON and XML packs keep them all)
WHERE_TO_LOOK_REASONS = 3


#: a task file's reasons (``rank/task_files.CHANNELS``) in a reader's words
_WHERE_REASONS = {
    "named": "named in the task",
    "defs": "defines a name it writes as code",
    "names": "holds names it writes as code",
    "bm25": "the task's words",
    "title": "the task's title",
    "seeds": "symbols matching the task",
    "symbols": "high in the symbol ranking",
    "commits": "past commits like this task",
}


def _where_to_look(files: Sequence[RankedFile], limits: RenderLimits) -> str:
    """A task's first ranked files, one line each: the path and its strongest reasons."""
    return "".join(
        f"- {inline_code(f.path, limits.path_bytes)} — "
        + ", ".join(_WHERE_REASONS.get(r, plain(r, 30)) for r in f.reasons[:WHERE_TO_LOOK_REASONS])
        + "\n"
        for f in files[:WHERE_TO_LOOK_SHOWN]
    )


def render_markdown(
    frame: Frame,
    symbols: Sequence[ScoredSymbol],
    edges: Sequence[tuple[str, str, str]],
    *,
    worst: bool = False,
    with_diagram: bool = True,
    cut_note: str = "",
    entries: Sequence[str] | None = None,
    hidden_lines: Sequence[str] = (),
) -> str:
    """The markdown text; ``entries`` are the symbols' entry texts when already rendered."""
    limits = frame.limits
    if entries is None:
        entries = [markdown_entry(sym, limits) for sym in symbols]
    summary = frame.summary if frame.mode == "pr" else None
    counts: _Counts | None = None
    more: dict[str, Any] | None = None
    if summary is not None and summary.no_code:
        blocks = [_no_code_block(frame)]
        if summary.tests or summary.tests_total:  # a bumped dependency's tests (``rank.jsdeps``)
            counts = _counts(frame, summary, 0, worst)
            blocks.append(_tests_block(frame, summary, counts))
        blocks += _reviewers_blocks(frame, summary)
    else:
        if summary is not None:
            own = [(s, e) for s, e in zip(symbols, entries, strict=True) if s.reason == "changed"]
            changed_entries = [e for s, e in own if not s.is_test] + [e for s, e in own if s.is_test]
            blocks, counts = _answer_blocks(frame, summary, changed_entries, worst)
            sections = list(_DETAIL_SECTIONS)
        else:
            blocks, sections = _plain_blocks(frame, symbols, entries, worst)
        details, parts = _detail_sections(frame, symbols, entries, sections, worst)
        reserve = limits.edge_reserve_chars(frame.token_budget)
        if worst:
            diagram = "x" * reserve
        elif with_diagram:
            diagram = mermaid_diagram(
                symbols, edges, reserve, max_nodes=limits.diagram_max_nodes, label_chars=limits.label_chars
            )
        else:
            diagram = ""
        if diagram:
            parts.append("how they connect")
        if details or diagram:
            more = {"summary": "More: " + ", ".join(parts), "sections": details, "diagram": diagram}
    return _document(
        hidden_lines=hidden_lines,
        title=_title(frame, counts, summary),
        blocks=blocks,
        more=more,
        cut_note=cut_note,
        footer="knowing-pr · replay: " + inline_code(frame.replay_command, limits.text_bytes),
    )


def _document(
    *,
    hidden_lines: Sequence[str],
    title: str,
    blocks: Sequence[Mapping[str, str]],
    more: Mapping[str, Any] | None,
    cut_note: str,
    footer: str,
) -> str:
    """The document's layout: every block after a blank line, every entry one line, so the text
    renders the same as a comment (line breaks kept) and as a job summary (line breaks folded).
    Every value arrives already sanitised (``render.safety``)."""
    parts = [f"{line}\n" for line in hidden_lines]
    parts.append(f"### {title}\n")
    for block in blocks:
        parts.append("\n")
        if block["heading"]:
            parts.append(f"{block['heading']}\n\n")
        parts.append(block["body"])
    if more:
        parts.append(f"\n<details>\n<summary>{more['summary']}</summary>\n")
        for section in more["sections"]:
            parts.append(f"\n#### {section['title']}\n\n{section['body']}")
        if more["diagram"]:
            parts.append(f"\n#### How they connect\n\n{more['diagram']}\n")
        parts.append("\n</details>\n")
    if cut_note:
        parts.append(f"\n> {cut_note}\n")
    parts.append(f"\n{footer}\n")
    return "".join(parts)
