"""A JavaScript/TypeScript package's manifest (``package.json``) → the file an import of the
package's directory or of its own name binds.

``require('..')``, ``require('../..')``, ``import x from '.'`` and, inside a package,
``require('<its own name>')`` name a directory: Node binds its ``package.json`` ``main`` (or
``exports["."]``), else its ``index`` file. Manifests are read as blobs at the indexed commit
(JSON only, nothing is executed), once per directory.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "PACKAGE_MANIFEST",
    "NO_PACKAGES",
    "Packages",
    "manifest_path",
    "package_dirs_of",
]

PACKAGE_MANIFEST = "package.json"

#: condition keys of ``exports`` tried in this order (a CommonJS test's ``require`` first)
_CONDITIONS = ("require", "node", "default", "import")


@dataclass(frozen=True, slots=True)
class _Manifest:
    name: str | None
    entries: tuple[str, ...]  # ``main`` then ``exports["."]``, as written


def manifest_path(directory: str) -> str:
    return posixpath.join(directory, PACKAGE_MANIFEST) if directory else PACKAGE_MANIFEST


def package_dirs_of(path: str) -> list[str]:
    """The directories whose manifest can name the package a file is in, innermost first."""
    out: list[str] = []
    directory = posixpath.dirname(path)
    while directory:
        out.append(directory)
        directory = posixpath.dirname(directory)
    out.append("")
    return out


def _export_target(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return next((t for t in map(_export_target, value) if t), None)
    if isinstance(value, dict):
        for key in _CONDITIONS:
            if key in value:
                found = _export_target(value[key])
                if found:
                    return found
    return None


def _root_export(exports: object) -> str | None:
    if isinstance(exports, dict):
        if "." in exports:
            return _export_target(exports["."])
        if any(isinstance(k, str) and k.startswith(".") for k in exports):
            return None  # subpaths only: the package root is not exported
    return _export_target(exports)


def _parse_manifest(data: bytes) -> _Manifest | None:
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None  # an unreadable manifest names no entry: the index fallback still applies
    if not isinstance(doc, dict):
        return None
    name = doc.get("name")
    entries = [doc.get("main"), _root_export(doc.get("exports"))]
    return _Manifest(
        name if isinstance(name, str) else None,
        tuple(e for e in entries if isinstance(e, str) and e),
    )


class Packages:
    """The manifests of one commit, read on demand: ``read`` gives a repository file's bytes, or
    None when the commit has no such file."""

    def __init__(self, read: Callable[[str], bytes | None]) -> None:
        self._read = read
        self._manifests: dict[str, _Manifest | None] = {}

    def _manifest(self, directory: str) -> _Manifest | None:
        if directory not in self._manifests:
            data = self._read(manifest_path(directory))
            self._manifests[directory] = _parse_manifest(data) if data is not None else None
        return self._manifests[directory]

    def entry_specs(self, directory: str) -> tuple[str, ...]:
        """What the directory's manifest names as its entry (``main``, then ``exports["."]``),
        as paths relative to the directory; empty without a manifest."""
        manifest = self._manifest(directory)
        return manifest.entries if manifest is not None else ()

    def own_package(self, path: str, spec: str) -> tuple[str, str] | None:
        """``spec`` named by its package's own name from a file inside that package: the
        package's directory and the rest of the spec (``""`` for the package itself)."""
        for directory in package_dirs_of(path):
            manifest = self._manifest(directory)
            if manifest is None or not manifest.name:
                continue
            if spec == manifest.name:
                return directory, ""
            if spec.startswith(manifest.name + "/"):
                return directory, spec[len(manifest.name) + 1 :]
            return None  # the innermost package is the one a bare spec can name itself
        return None


#: no manifests (a table built without a repository)
NO_PACKAGES = Packages(lambda _path: None)
