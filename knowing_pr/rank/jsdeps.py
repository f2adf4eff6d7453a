"""A change to a dependency's version in a ``package.json`` → the JavaScript/TypeScript test files
of that package that import the dependency (trpc's zod 3 → 4 bump: the tests that build zod
schemas are the ones that break).

A dependency is bumped when the change wrote its line inside the manifest's ``dependencies``,
``devDependencies``, ``peerDependencies`` or ``optionalDependencies`` object (the head's text and
the change's added lines; a manifest the change added whole bumps nothing: its package is new). A
workspace reference (``workspace:*``) is no outside code: the import edges follow it. A test
file's import of the dependency resolves, as Node's does, from the nearest manifest above it that
declares it (trpc's ``packages/tests`` declares no ``zod``: its tests get the root's); it imports
the dependency when it names it, or a path under it, in an ``import``/``from``/``require``/
``import()``. The manifest is
read as text and JSON, nothing is run; one that does not parse bumps nothing.
"""

from __future__ import annotations

import bisect
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence

from knowing_pr.graph.packages import manifest_path, package_dirs_of
from knowing_pr.rank.runners import RepoFiles, package_json

__all__ = [
    "bumped_dependencies",
    "declared_dependencies",
    "governing_bumps",
    "imports_any",
    "manifests_changed",
]

_DEPENDENCY_SECTIONS = ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies")
#: a ``"name": "version"`` line
_ENTRY = re.compile(r'^\s*"([^"\\]+)"\s*:\s*"([^"\\]*)"')
_MAX_MANIFEST_BYTES = 512 * 1024
_MAX_NAMES = 64


def bumped_dependencies(
    manifest: str, files: RepoFiles, added: Sequence[tuple[int, int]] | None
) -> list[str]:
    """The dependencies of ``manifest`` whose line the change wrote (module docstring), sorted."""
    if added is None:
        return []
    declared = declared_dependencies(manifest, files)  # none for a manifest over the size bound
    if not declared:
        return []
    text = (files.read(manifest) or b"").decode("utf-8", "replace")
    lines = text.splitlines()
    starts, ends = _merged(_section_lines(text))
    found: set[str] = set()
    for start, end in added:
        for number in range(max(start, 1), min(end, len(lines)) + 1):
            match = _ENTRY.match(lines[number - 1])
            span = bisect.bisect_right(starts, number) - 1
            in_section = span >= 0 and number <= ends[span]
            if match and in_section and match.group(1) in declared:
                found.add(match.group(1))
    return sorted(found)[:_MAX_NAMES]


def declared_dependencies(manifest: str, files: RepoFiles) -> frozenset[str]:
    """The outside packages a manifest declares (``workspace:`` references left out); none when
    it does not parse."""
    data = files.read(manifest)
    if data is None or len(data) > _MAX_MANIFEST_BYTES:
        return frozenset()
    doc = package_json(files, manifest)
    return frozenset(
        name
        for section in _DEPENDENCY_SECTIONS
        if isinstance(deps := doc.get(section), dict)
        for name, version in deps.items()
        if isinstance(version, str) and not version.startswith("workspace:")
    )


def governing_bumps(
    path: str, bumped: Mapping[str, Sequence[str]], files: RepoFiles, declared: dict[str, frozenset[str]]
) -> dict[str, str]:
    """The bumped dependencies an import in ``path`` resolves to → the manifest bumping each: as
    Node resolves a package, from the nearest manifest above the file that declares it (a
    workspace's root declares what its packages share). ``declared``: manifests read so far."""
    found: dict[str, str] = {}
    nearer: set[str] = set()
    for directory in package_dirs_of(path):
        manifest = manifest_path(directory)
        if not files.exists(manifest):
            continue
        for name in bumped.get(manifest, ()):
            if name not in nearer:
                found.setdefault(name, manifest)
        if manifest not in declared:
            declared[manifest] = declared_dependencies(manifest, files)
        nearer |= declared[manifest]
    return found


def _section_lines(text: str) -> Iterable[tuple[int, int]]:
    """The 1-based line spans of the manifest's dependency objects (their entries hold no braces)."""
    newlines = [m.start() for m in re.finditer("\n", text)]  # a line number is a bisection

    def line_of(offset: int) -> int:
        return bisect.bisect_left(newlines, offset) + 1

    for section in _DEPENDENCY_SECTIONS:
        for match in re.finditer(rf'"{section}"\s*:\s*\{{', text):
            close = text.find("}", match.end())
            if close >= 0:
                yield line_of(match.start()), line_of(close)


def _merged(spans: Iterable[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """``spans`` merged where they overlap: their starts and ends, in order (a line is in one when
    the last start at or before it has an end at or after it)."""
    starts: list[int] = []
    ends: list[int] = []
    for first, last in sorted(spans):
        if ends and first <= ends[-1]:
            ends[-1] = max(ends[-1], last)
        else:
            starts.append(first)
            ends.append(last)
    return starts, ends


def imports_any(source: bytes, names: Sequence[str]) -> str | None:
    """The first of ``names`` the JavaScript/TypeScript ``source`` imports (or a path under it).
    Read from the text, not from the index's ``workspace:`` keys: the index keeps the imports of
    ``import`` statements and ``const x = require(…)`` only (not ``await import('zod')`` nor a
    bare ``require('zod/v4')``), and no order to pick the first by."""
    if not names:
        return None
    alternatives = "|".join(re.escape(n) for n in names)
    pattern = re.compile(
        rf"""(?:\bfrom|\bimport|\brequire\s*\(|\bimport\s*\()\s*['"]({alternatives})(?:/[^'"\n]*)?['"]"""
    )
    match = pattern.search(source.decode("utf-8", "replace"))
    return match.group(1) if match else None


def manifests_changed(paths: Iterable[str], added: Mapping[str, object]) -> list[str]:
    """The changed ``package.json`` files outside ``node_modules``."""
    return sorted(
        p
        for p in paths
        if posixpath.basename(p) == "package.json" and "node_modules" not in p.split("/") and p in added
    )
