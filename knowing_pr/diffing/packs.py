"""Pack × pack → ``PackComparison``: what the second pack (a later push, say) says that the first
did not, and what it no longer says.

Items are compared by what survives an edit elsewhere in a file, never by line numbers (a push
that adds a line above a function moves every line below it):

- a changed symbol by (path, qualified name): the pack's symbols of reason ``changed``, the
  changed symbols left out of it for the budget (``ChangeSummary.changed_left_out``) and the
  removed definitions; one present in both whose content hash differs is *changed again*;
- a call site that is not updated by (path, caller, callee): newly not updated, or now updated
  (the second pack no longer flags it: its file was edited, or the callee's signature is back);
- a test to run by (path, name); a co-changed file by its path.

Only what each pack lists is compared: a list cut to the budget (``tests_total`` beyond
``tests``) compares its listed part.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, TypeVar

from knowing_pr.model import Node, Pack

#: a changed symbol the budget left out, as ``render.left_out_item`` names it: "path:line name"
#: (a path may hold spaces; the first ":digits " ends it)
_LEFT_OUT = re.compile(r"(.+?):\d+ (.+)", re.DOTALL)

__all__ = ["CallSiteKey", "Moved", "PackComparison", "SymbolKey", "ListedTest", "compare_packs"]

T = TypeVar("T")


class SymbolKey(NamedTuple):
    path: str
    name: str


class CallSiteKey(NamedTuple):
    path: str
    caller: str  # "" at module level
    callee: str


class ListedTest(NamedTuple):
    path: str
    name: str


@dataclass(frozen=True)
class Moved(Generic[T]):
    """Items the second pack has and the first has not (``added``), and the reverse, sorted."""

    added: tuple[T, ...] = ()
    removed: tuple[T, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.removed)


@dataclass(frozen=True)
class PackComparison:
    """What moved from the pack ``before_root`` to the pack ``after_root``."""

    before_root: str
    after_root: str
    before_commit: str | None
    after_commit: str | None
    #: added: newly changed; removed: no longer changed
    changed: Moved[SymbolKey]
    #: changed in both packs, with other content in the second
    changed_again: tuple[SymbolKey, ...]
    #: added: newly not updated; removed: now updated
    not_updated: Moved[CallSiteKey]
    #: added to / dropped from the tests to run
    tests: Moved[ListedTest]
    #: newly co-changed files / no longer
    coupled: Moved[str]

    @property
    def nothing_moved(self) -> bool:
        return not (self.changed or self.changed_again or self.not_updated or self.tests or self.coupled)

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-able data (``knowing-pr diff --format json``, the MCP ``pack_diff`` tool)."""

        def pairs(items: Iterable[tuple[str, ...]], names: tuple[str, ...]) -> list[dict[str, str]]:
            return [dict(zip(names, item, strict=True)) for item in items]

        symbol, site, test = ("path", "name"), ("path", "caller", "callee"), ("path", "name")
        return {
            "before": {"pack_root": self.before_root, "commit": self.before_commit},
            "after": {"pack_root": self.after_root, "commit": self.after_commit},
            "nothing_moved": self.nothing_moved,
            "symbols_newly_changed": pairs(self.changed.added, symbol),
            "symbols_no_longer_changed": pairs(self.changed.removed, symbol),
            "symbols_changed_again": pairs(self.changed_again, symbol),
            "call_sites_newly_not_updated": pairs(self.not_updated.added, site),
            "call_sites_now_updated": pairs(self.not_updated.removed, site),
            "tests_added": pairs(self.tests.added, test),
            "tests_dropped": pairs(self.tests.removed, test),
            "files_newly_coupled": list(self.coupled.added),
            "files_no_longer_coupled": list(self.coupled.removed),
        }


def compare_packs(before: Pack, after: Pack, name_of: Callable[[Node], str]) -> PackComparison:
    """What moved from ``before`` to ``after`` (both ``pr`` packs, or any two packs).

    ``name_of`` must name a packed symbol as the summary's ``changed_left_out`` names the ones
    the budget left out (``render.display_name``): a symbol packed in one push and only named in
    the other is then the same symbol, not one newly changed and one no longer changed."""
    changed_before, changed_after = changed_symbols(before, name_of), changed_symbols(after, name_of)
    again = tuple(
        sorted(
            key
            for key, digest in changed_after.items()
            if key in changed_before and digest and changed_before[key] and digest != changed_before[key]
        )
    )
    return PackComparison(
        before_root=before.pack_root,
        after_root=after.pack_root,
        before_commit=before.commit,
        after_commit=after.commit,
        changed=_moved(set(changed_before), set(changed_after)),
        changed_again=again,
        not_updated=_moved(not_updated_sites(before), not_updated_sites(after)),
        tests=_moved(tests_to_run(before), tests_to_run(after)),
        coupled=_moved(coupled_files(before), coupled_files(after)),
    )


def changed_symbols(pack: Pack, name_of: Callable[[Node], str]) -> dict[SymbolKey, str]:
    """Each changed symbol → its content hash ("" when the pack holds no entry for it)."""
    found = {
        SymbolKey(s.node.path, name_of(s.node)): s.node.content_hash
        for s in pack.symbols
        if s.reason == "changed"
    }
    summary = pack.summary
    if summary is None:
        return found
    for item in summary.changed_left_out:  # "path:line name" (render.left_out_item)
        named = _LEFT_OUT.fullmatch(item)
        if named:
            found.setdefault(SymbolKey(named.group(1), named.group(2)), "")
    for removed in summary.removed:
        found.setdefault(SymbolKey(removed.path, removed.name), "")
    return found


def not_updated_sites(pack: Pack) -> set[CallSiteKey]:
    summary = pack.summary
    if summary is None:
        return set()
    return {CallSiteKey(c.path, c.caller, c.callee) for c in summary.call_sites if c.not_updated}


def tests_to_run(pack: Pack) -> set[ListedTest]:
    summary = pack.summary
    return set() if summary is None else {ListedTest(t.path, t.name) for t in summary.tests}


def coupled_files(pack: Pack) -> set[str]:
    return {path for path, _, _ in pack.cochange}


def _moved(before: set[T], after: set[T]) -> Moved[T]:
    return Moved(tuple(sorted(after - before)), tuple(sorted(before - after)))  # type: ignore[type-var]
