"""A pack's ``ChangeSummary`` → its parts in each format, and the summary cut to a share of the budget.

- ``together_rows``: the one place the "usually changed together" rows come from (the history
  evidence, in the order of the ranked file list when the pack has one);
- markdown lines: a call site, a test to run, a history partner, a removed symbol, the changed
  symbols left out;
- JSON members and XML elements of the summary (``summary_json``, ``summary_xml``);
- ``fit_summary``: the summary's lists cut, best first, so that its text in one format takes at
  most a given number of characters (each item's text is measured once).
"""

from __future__ import annotations

import dataclasses
import json
import shlex
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from knowing_pr.model import CallSite, ChangeSummary, Node, RankedFile, RemovedSymbol, TestToRun
from knowing_pr.rank.runners import group_commands
from knowing_pr.render.display import display_name
from knowing_pr.render.frame import RenderLimits
from knowing_pr.render.jsontext import indented_json
from knowing_pr.render.reviewers import reviewer_json
from knowing_pr.render.safety import inline_code, plain, xml_text
from knowing_pr.visible import json_visible

__all__ = [
    "TogetherRow",
    "fit_summary",
    "left_out_chars",
    "left_out_item",
    "markdown_call_site",
    "markdown_partner",
    "markdown_removed",
    "markdown_test",
    "removed_total",
    "summary_json",
    "summary_xml",
    "together_rows",
]

#: (co-changed path, commits together, commits of the changed file it pairs with, that file or "")
TogetherRow = tuple[str, int, int, str]


def together_rows(
    cochange: Sequence[tuple[str, int, int]],
    summary: ChangeSummary | None,
    files: Sequence[RankedFile] = (),
) -> list[TogetherRow]:
    """ "Usually changed together, not in this change": one row per partner file, best first,
    with the changed file each count is about. With a ranked file list (``pack.files``), the
    partners it names come first, in its order (the fitted model's, which weighs the history
    with everything else), then the others in the history's order."""
    pairs = summary.cochange_with if summary is not None else {}
    rows = [(path, together, out_of, pairs.get(path, "")) for path, together, out_of in cochange]
    rank = {f.path: i for i, f in enumerate(files)}
    return sorted(rows, key=lambda row: rank.get(row[0], len(rank)))


# ---------------------------------------------------------------- markdown lines


def _place(path: str, line: int, limits: RenderLimits) -> str:
    return inline_code(f"{path}:{line}", limits.path_bytes)


def call_excerpt(text: str, callee: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters so that the callee's name stays in view: a long line
    whose call comes late is shown from shortly before the name, with ``…`` where it was cut."""
    if len(text) <= limit:
        return text
    name = callee.rsplit(".", 1)[-1]
    at = text.find(name) if name else -1
    if at < 0 or at + len(name) <= limit - 1:
        return text[: limit - 1] + "…"
    start = max(1, at - limit // 4)
    window = text[start : start + limit - 2]
    return "…" + window + ("…" if start + limit - 2 < len(text) else "")


def markdown_call_site(site: CallSite, limits: RenderLimits) -> str:
    """``- ⚠️ `path:line` `call text` — in `caller` · not updated``."""
    parts = ["- "]
    if site.not_updated:
        parts.append("⚠️ ")
    parts.append(_place(site.path, site.line, limits))
    if site.text:
        text = call_excerpt(site.text, site.callee, limits.call_text_chars)
        parts.append(" " + inline_code(text, limits.signature_bytes))
    if site.caller:
        parts.append(f" — in {inline_code(site.caller, limits.name_bytes)}")
    if site.removed:
        parts.append(f" · uses removed {inline_code(site.callee, limits.name_bytes)}")
    elif site.not_updated:
        parts.append(" · not updated")
    return "".join(parts) + "\n"


def markdown_test(
    test: TestToRun, limits: RenderLimits, *, named: bool = False, where: str = "this change"
) -> str:
    """``- `command` — its evidence`` (``edited in this change``, ``calls the changed code``,
    ``imports `x.py```…); ``named``: the test's file and name instead of its command (a command
    shared by several tests follows them)."""
    note = f" — {test_evidence(test, limits, where)}"
    if named:
        title = test.name.rsplit(" > ", 1)[-1]
        if test.name == test.path:  # a whole file: its name is its path
            return f"- {inline_code(test.path, limits.path_bytes)}{note}\n"
        return f"- {inline_code(test.path, limits.path_bytes)} › {plain(title, 200)}{note}\n"
    suite = " (runs the whole suite: Karma cannot pick one test)" if test.framework == "karma" else ""
    return f"- {inline_code(test.run, limits.text_bytes)}{suite}{note}\n"


def test_evidence(test: TestToRun, limits: RenderLimits, where: str = "this change") -> str:
    """A test's evidence in markdown: the names it quotes in backticks as code spans."""
    if test.changed:
        return f"edited in {where}"
    if test.reason == "calls":
        if test.via:
            return f"calls it through {inline_code(test.via, limits.name_bytes)}"
        return "calls the changed code"
    parts = test.evidence.split("`")
    return "".join(
        inline_code(part, limits.path_bytes) if index % 2 else _spaced(part)
        for index, part in enumerate(parts)
    )


def _spaced(text: str) -> str:
    """Prose between code spans, its outer spaces kept."""
    if not text.strip():
        return " " if text else ""
    lead = " " if text[0] == " " else ""
    tail = " " if text[-1] == " " else ""
    return f"{lead}{plain(text.strip(), 120)}{tail}"


def grouped_commands(tests: Sequence[TestToRun]) -> list[tuple[str, str, int]]:
    """(framework, one command running several of ``tests``, how many) where the framework takes
    several tests at once: pytest node ids, ``go test`` packages with one ``-run`` pattern, and the
    others ``rank.runners.group_commands`` groups (cargo, Jest/Vitest/Mocha, JUnit, dotnet, RSpec:
    a line per crate, target, module or project)."""
    out: list[tuple[str, str, int]] = []
    pytest = [
        t.run.removeprefix("pytest ") for t in tests if t.framework == "pytest" and " " not in t.run[7:]
    ]
    if len(pytest) > 1:
        out.append(("pytest", "pytest " + " ".join(dict.fromkeys(pytest)), len(pytest)))
    by_package = [
        (t, package)
        for t in tests
        if t.framework == "go test" and not t.run.startswith("cd ") and (package := _go_package(t.run))
    ]
    go = [t for t, _ in by_package]
    packages = list(dict.fromkeys(package for _, package in by_package))
    names = list(dict.fromkeys(t.name for t in go if " -run " in t.run))
    # a whole package, or a benchmark or example (not selected by a ``Test`` pattern): no pattern
    whole = any(" -run " not in t.run for t in go) or not all(n.startswith("Test") for n in names)
    if len(go) > 1 and packages:
        pattern = "" if whole or not names else " -run '^(" + "|".join(names) + ")$'"
        out.append(("go test", f"go test {' '.join(packages)}{pattern}", len(go)))
    return out + group_commands([(t.framework, t.run) for t in tests])


def _go_package(run: str) -> str:
    """The package of a ``go test PACKAGE …`` command, shell-quoted ("" when there is none)."""
    try:
        words = shlex.split(run)
    except ValueError:
        return ""
    return shlex.quote(words[2]) if len(words) > 2 and words[:2] == ["go", "test"] else ""


def markdown_partner(row: TogetherRow, limits: RenderLimits) -> str:
    """``- `path` — in 8 of the last 38 commits that touched `other``` (one rule for every row)."""
    path, together, out_of, source = row
    if source:
        where = f"commits that touched {inline_code(source, limits.path_bytes)}"
    else:
        where = "commits that touched the changed files"
    return f"- {inline_code(path, limits.path_bytes)} — in {together:,} of the last {out_of:,} {where}\n"


def markdown_removed(removed: RemovedSymbol, limits: RenderLimits) -> str:
    kind = plain(removed.kind, 30)
    return f"- removed: {kind} {inline_code(removed.name, limits.name_bytes)} — {_place(removed.path, removed.line, limits)}\n"


def left_out_item(node: Node) -> str:
    """How a changed symbol left out of the pack is named: ``path:line name``."""
    return f"{node.path}:{node.start_line} {display_name(node)}"


def left_out_chars(item: str, fmt: str) -> int:
    """Characters one left-out name adds in ``fmt`` (markdown only counts them)."""
    if fmt == "json":
        return len(json.dumps(item, ensure_ascii=False)) + 6
    if fmt == "xml":
        return len(_xml_element("changed_left_out", {"symbol": item}))
    return 0


# ---------------------------------------------------------------- JSON and XML


def _call_site_json(site: CallSite) -> dict[str, Any]:
    return {
        "file": site.path,
        "line": site.line,
        "caller": site.caller,
        "callee": site.callee,
        "callee_id": site.callee_id,
        "text": site.text,
        "in_change": site.in_change,
        "not_updated": site.not_updated,
        "removed": site.removed,
    }


def _test_json(test: TestToRun) -> dict[str, Any]:
    return {
        "name": test.name,
        "file": test.path,
        "line": test.line,
        "framework": test.framework,
        "run": test.run,
        "changed": test.changed,
        "hops": test.hops,
        "via": test.via,
        "reason": test.reason,
        "evidence": test.evidence,
        "scope": test.scope,
    }


def _removed_json(removed: RemovedSymbol) -> dict[str, Any]:
    return {"name": removed.name, "kind": removed.kind, "file": removed.path, "line": removed.line}


def summary_json(
    summary: ChangeSummary, dump: Callable[[object, int], str], *, worst_counts: int | None = None
) -> list[tuple[str, str]]:
    """The summary's JSON members (key, rendered value) in contract order."""

    def items(values: Sequence[dict[str, Any]]) -> str:
        if not values:
            return "[]"
        return "[\n" + ",\n".join("    " + dump(v, 2) for v in values) + "\n  ]"

    count = (lambda n: worst_counts) if worst_counts is not None else (lambda n: n)
    return [
        ("no_code_change", dump(summary.no_code, 1)),
        ("call_sites", items([_call_site_json(s) for s in summary.call_sites])),
        ("call_sites_total", dump(summary.call_sites_total, 1)),
        ("call_sites_outside", dump(summary.call_sites_outside, 1)),
        ("call_sites_not_updated", dump(summary.call_sites_not_updated, 1)),
        ("call_site_lines", dump(list(summary.call_site_lines), 1)),
        ("tests_to_run", items([_test_json(t) for t in summary.tests])),
        ("tests_to_run_total", dump(summary.tests_total, 1)),
        ("removed_symbols", items([_removed_json(r) for r in summary.removed])),
        ("removed_symbols_total", dump(count(removed_total(summary)), 1)),
        ("changed_left_out", dump(list(summary.changed_left_out), 1)),
        ("changed_left_out_count", dump(count(summary.changed_left_out_count), 1)),
        ("reviewers", items([reviewer_json(r) for r in summary.reviewers])),
    ]


def removed_total(summary: ChangeSummary) -> int:
    """How many symbols the change removed (a summary recorded before the count was kept: its list)."""
    return max(summary.removed_total, len(summary.removed))


def _xml_attrs(pairs: Mapping[str, object]) -> dict[str, str]:
    return {
        key: xml_text("true" if value is True else "false" if value is False else str(value))
        for key, value in pairs.items()
        if value is not None
    }


def _xml_element(tag: str, pairs: Mapping[str, object]) -> str:
    return "  " + ET.tostring(ET.Element(tag, _xml_attrs(pairs)), encoding="unicode") + "\n"


def summary_xml(summary: ChangeSummary) -> str:
    """The summary's XML elements, one per line."""
    parts = [_xml_element("call_site", _call_site_json(s)) for s in summary.call_sites]
    parts += [_xml_element("call_site_lines", {"at": item}) for item in summary.call_site_lines]
    parts += [_xml_element("test_to_run", _test_json(t)) for t in summary.tests]
    parts += [_xml_element("removed_symbol", _removed_json(r)) for r in summary.removed]
    parts += [_xml_element("changed_left_out", {"symbol": item}) for item in summary.changed_left_out]
    parts += [
        _xml_element("reviewer", {k: v for k, v in reviewer_json(r).items() if k != "evidence"})
        for r in summary.reviewers
    ]
    return "".join(parts)


def summary_xml_attrs(summary: ChangeSummary, worst_counts: int | None = None) -> list[tuple[str, object]]:
    left_out = worst_counts if worst_counts is not None else summary.changed_left_out_count
    return [
        ("no_code_change", "true" if summary.no_code else "false"),
        ("call_sites_total", summary.call_sites_total),
        ("call_sites_outside", summary.call_sites_outside),
        ("call_sites_not_updated", summary.call_sites_not_updated),
        ("tests_to_run_total", summary.tests_total),
        ("removed_symbols_total", worst_counts if worst_counts is not None else removed_total(summary)),
        ("changed_left_out_count", left_out),
    ]


# ---------------------------------------------------------------- fitting


def _dump(value: object) -> str:
    return json_visible(indented_json(value))


def item_costs(
    summary: ChangeSummary, fmt: str, limits: RenderLimits
) -> tuple[list[int], list[int], list[int]]:
    """Characters each call site, test and removed symbol adds to the summary in ``fmt``."""
    if fmt == "json":
        sites = [len(_dump(_call_site_json(s))) + 10 + 12 * 6 for s in summary.call_sites]
        tests = [len(_dump(_test_json(t))) + 10 + 10 * 6 for t in summary.tests]
        removed = [len(_dump(_removed_json(r))) + 10 + 6 * 6 for r in summary.removed]
    elif fmt == "xml":
        sites = [len(_xml_element("call_site", _call_site_json(s))) for s in summary.call_sites]
        tests = [len(_xml_element("test_to_run", _test_json(t))) for t in summary.tests]
        removed = [len(_xml_element("removed_symbol", _removed_json(r))) for r in summary.removed]
    else:
        sites = [len(markdown_call_site(s, limits)) for s in summary.call_sites]
        tests = [len(markdown_test(t, limits)) for t in summary.tests]
        removed = [len(markdown_removed(r, limits)) for r in summary.removed]
    return sites, tests, removed


def fit_summary(
    summary: ChangeSummary,
    fmt: str,
    max_chars: int,
    limits: RenderLimits,
    *,
    shown: tuple[int, int] | None = None,
) -> ChangeSummary:
    """``summary`` with its lists cut so that their items take at most ``max_chars`` in ``fmt``.

    JSON and XML name every test to run, every removed symbol and every call site's place
    (``call_site_lines``, a file each, compact) whatever the room: names are cheap, the budget
    governs bodies ("Lists are whole in JSON"). The call sites' own entries are taken in this
    order while they fit: those not updated, then the others between the tests (markdown: the
    change's own tests first, then tests and call sites alternately, then removed symbols); each
    list keeps its order (a prefix of it). ``shown`` caps how many sites
    and tests a format shows at all (markdown's summary shows a few; the rest are counted)."""
    sites, tests, removed = item_costs(summary, fmt, limits)
    lines = [_line_item_chars(item, fmt) for item in summary.call_site_lines]
    max_sites, max_tests = shown if shown is not None else (len(sites), len(tests))
    whole_lists = fmt != "markdown"  # every test, removed symbol and call site is named, whatever the budget
    if whole_lists:
        max_chars -= sum(tests) + sum(removed) + sum(lines)
        max_tests = 0
    order: list[tuple[str, int]] = []
    order += [("site", i) for i, s in enumerate(summary.call_sites) if s.not_updated]
    order += [("test", i) for i, t in enumerate(summary.tests) if t.changed]
    rest_sites = [i for i, s in enumerate(summary.call_sites) if not s.not_updated]
    rest_tests = [i for i, t in enumerate(summary.tests) if not t.changed]
    for index in range(max(len(rest_sites), len(rest_tests))):
        order += [("test", rest_tests[index])] if index < len(rest_tests) else []
        order += [("site", rest_sites[index])] if index < len(rest_sites) else []
    order += [("removed", i) for i in range(len(removed))]
    cost = {"site": sites, "test": tests, "removed": removed}
    taken: dict[str, int] = {"site": 0, "test": 0, "removed": 0}
    limit = {"site": max_sites, "test": max_tests, "removed": 0 if whole_lists else len(removed)}
    used = 0
    for kind, index in order:
        if index != taken[kind] or taken[kind] >= limit[kind]:
            continue  # a list is kept as a prefix: once an item is skipped, the rest of its list is
        if used + cost[kind][index] > max_chars:
            limit[kind] = taken[kind]
            continue
        used += cost[kind][index]
        taken[kind] += 1
    return dataclasses.replace(
        summary,
        call_sites=summary.call_sites[: taken["site"]],
        tests=list(summary.tests) if whole_lists else summary.tests[: taken["test"]],
        removed=list(summary.removed) if whole_lists else summary.removed[: taken["removed"]],
        call_site_lines=list(summary.call_site_lines),
    )


def _line_item_chars(item: str, fmt: str) -> int:
    if fmt == "json":
        return len(json.dumps(item, ensure_ascii=False)) + 6
    if fmt == "xml":
        return len(_xml_element("call_site_lines", {"at": item}))
    return 0  # markdown shows counts, not this list
