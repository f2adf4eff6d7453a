"""A JavaScript/TypeScript package's manifest (``package.json``) → the file an import of the
package's directory or of its name binds.

``require('..')``, ``require('../..')`` and ``import x from '.'`` name a directory: Node binds
its ``package.json`` ``main`` (or ``exports["."]``), else its ``index`` file. A bare name binds a
package of the repository: the importing file's own package (``require('<its own name>')``), or
another package of a monorepo's workspace (``@scope/pkg``, ``@scope/pkg/sub/path``: every
``package.json`` of the commit with a ``name``, outside ``node_modules`` and the excluded paths).
Such a package's entry is its ``exports`` map (``"."``, ``"./sub"``, ``"./*"`` patterns, condition
objects: ``types``, ``import``, ``default``, ``require``, ``node``), else ``types``/``typings``/
``module``/``main``; a target that is a build output the repository does not hold
(``dist/index.mjs``) has its source beside it (``source_candidates``: ``src/index.ts``).

Manifests are read as blobs at the indexed commit (JSON only, nothing is executed), once per
directory. A manifest that is not a JSON object, too deep, or holds targets outside its package
names no entry: the import stays unresolved (external), never an error.
"""

from __future__ import annotations

import itertools
import json
import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = [
    "PACKAGE_MANIFEST",
    "NO_PACKAGES",
    "Packages",
    "bare_package_name",
    "manifest_name",
    "manifest_path",
    "package_dirs_of",
    "source_candidates",
]

PACKAGE_MANIFEST = "package.json"

#: condition keys of ``exports`` tried in this order (type declarations are tried after code by
#: the resolver: a ``.d.ts`` holds no code a test runs)
_CONDITIONS = ("types", "import", "default", "require", "node")
#: the same for a CommonJS ``require`` of a directory (``require('..')``)
_REQUIRE_CONDITIONS = ("require", "node", "default", "import")
#: package fields naming the entry when there is no ``exports``, in this order
_ENTRY_FIELDS = ("types", "typings", "module", "main")
#: nesting of condition objects and arrays followed in an ``exports`` value
_MAX_EXPORT_DEPTH = 6
#: keys of an ``exports`` map looked at for a ``*`` pattern at most (a package has tens)
_MAX_PATTERN_KEYS = 4096
#: targets taken from one ``exports`` value at most
_MAX_TARGETS = 16
#: directories a build writes its output to; their files' sources live under ``src``
_BUILD_DIRS = frozenset({"dist", "lib", "build", "out", "esm", "cjs", "es", "types", "typings"})
_DECLARATION_SUFFIXES = (".d.ts", ".d.mts", ".d.cts")
_CODE_SUFFIXES = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")
#: extensions a package's source file can have, TypeScript first
SOURCE_EXTENSIONS = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")


@dataclass(frozen=True, slots=True)
class _Manifest:
    name: str | None
    entries: tuple[str, ...]  # ``main`` then ``exports["."]``, as written (a directory import)
    fields: tuple[str, ...]  # ``types``, ``typings``, ``module``, ``main``, as written
    exports: object  # the ``exports`` value as parsed (None when absent)


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


def bare_package_name(spec: str) -> str | None:
    """The package a bare import names: ``@scope/pkg`` of ``@scope/pkg/sub``, ``pkg`` of
    ``pkg/sub``; None for a relative, absolute or URL-like spec."""
    if not spec or spec.startswith((".", "/")) or ":" in spec:
        return None
    parts = spec.split("/")
    if spec.startswith("@"):
        return "/".join(parts[:2]) if len(parts) >= 2 and parts[1] else None
    return parts[0]


def _export_targets(value: object, conditions: tuple[str, ...] = _CONDITIONS, depth: int = 0) -> list[str]:
    """Every target of an ``exports`` value (a string, an array of fallbacks, a condition
    object), in the order of ``conditions``; empty past ``_MAX_EXPORT_DEPTH``."""
    if depth > _MAX_EXPORT_DEPTH:
        return []
    if isinstance(value, str):
        return [value]
    out: list[str] = []
    if isinstance(value, list):
        for item in value[:_MAX_TARGETS]:
            out.extend(_export_targets(item, conditions, depth + 1))
    elif isinstance(value, dict):
        for key in conditions:
            if key in value:
                out.extend(_export_targets(value[key], conditions, depth + 1))
    return list(dict.fromkeys(out))[:_MAX_TARGETS]


def _first_export(value: object) -> str | None:
    """The target a CommonJS ``require`` of a directory takes from ``exports["."]``."""
    targets = _export_targets(value, _REQUIRE_CONDITIONS)
    return next((t for t in targets if not t.endswith(_DECLARATION_SUFFIXES)), None)


def _is_subpath_map(exports: object) -> bool:
    return isinstance(exports, dict) and any(isinstance(k, str) and k.startswith(".") for k in exports)


def _root_export(exports: object) -> str | None:
    if _is_subpath_map(exports):
        assert isinstance(exports, dict)
        return _first_export(exports["."]) if "." in exports else None
    return _first_export(exports)


def _pattern_match(key: str, subpath: str) -> str | None:
    """What ``*`` stands for when ``subpath`` matches the pattern key ``./x/*.js``, else None."""
    if key.count("*") != 1:
        return None
    prefix, suffix = key.split("*")
    if len(subpath) < len(prefix) + len(suffix) or not subpath.startswith(prefix):
        return None
    if not subpath.endswith(suffix):
        return None
    return subpath[len(prefix) : len(subpath) - len(suffix)]


def _subpath_targets(exports: object, subpath: str) -> list[str]:
    """The targets ``exports`` gives ``subpath`` (``"."`` or ``"./sub"``): its exact key, else
    the pattern with the longest prefix, ``*`` replaced."""
    if not _is_subpath_map(exports):
        return _export_targets(exports) if subpath == "." else []
    assert isinstance(exports, dict)
    if subpath in exports:
        return _export_targets(exports[subpath])
    best: tuple[int, str, str] | None = None
    for key in itertools.islice(exports, _MAX_PATTERN_KEYS):
        star = _pattern_match(key, subpath) if isinstance(key, str) else None
        if star is not None and (best is None or key.index("*") > best[0]):
            best = (key.index("*"), key, star)
    if best is None:
        return []
    _, key, star = best
    return [t.replace("*", star) for t in _export_targets(exports[key])]


def _inside_package(target: str) -> str | None:
    """A target as a path relative to its package directory, or None when it leaves the
    package (``../x``, ``/abs``) or names a dependency's file."""
    if not target or target.startswith("/") or "\\" in target or ":" in target:
        return None
    normal = posixpath.normpath(target)
    if normal == ".." or normal.startswith("../") or "node_modules" in normal.split("/"):
        return None
    return normal


def source_candidates(target: str) -> list[str]:
    """Where the source of a build output lives, relative to its package directory:
    ``dist/adapters/ws.mjs`` → ``src/adapters/ws.ts`` (and the other source extensions, then
    ``src/adapters/ws/index.*``); empty when the target is not under a build directory."""
    relative = _inside_package(target)
    if relative is None:
        return []
    parts = relative.split("/")
    if len(parts) < 2 or parts[0] not in _BUILD_DIRS:
        return []
    while len(parts) > 1 and parts[0] in _BUILD_DIRS:
        parts = parts[1:]
    stem = "/".join(parts)
    for suffix in (*_DECLARATION_SUFFIXES, *_CODE_SUFFIXES):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    base = posixpath.join("src", stem)
    return [base + ext for ext in SOURCE_EXTENSIONS] + [f"{base}/index{ext}" for ext in SOURCE_EXTENSIONS]


def _strings(doc: dict[str, object], keys: Iterable[str]) -> tuple[str, ...]:
    values = (doc.get(k) for k in keys)
    return tuple(dict.fromkeys(v for v in values if isinstance(v, str) and v))


def _parse_manifest(data: bytes) -> _Manifest | None:
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None  # an unreadable manifest names no entry: the index fallback still applies
    if not isinstance(doc, dict):
        return None
    name = doc.get("name")
    exports = doc.get("exports")
    entries = [doc.get("main"), _root_export(exports)]
    return _Manifest(
        name if isinstance(name, str) and bare_package_name(name) == name else None,
        tuple(e for e in entries if isinstance(e, str) and e),
        _strings(doc, _ENTRY_FIELDS),
        exports,
    )


def manifest_name(data: bytes) -> str | None:
    """The package name a manifest's bytes declare (None: unreadable or unnamed)."""
    manifest = _parse_manifest(data)
    return manifest.name if manifest is not None else None


class Packages:
    """The manifests of one commit, read on demand: ``read`` gives a repository file's bytes, or
    None when the commit has no such file; ``manifest_paths`` lists the commit's ``package.json``
    files (the workspace's packages, looked at once, on the first bare import that needs it)."""

    def __init__(
        self,
        read: Callable[[str], bytes | None],
        manifest_paths: Callable[[], Iterable[str]] = tuple,
    ) -> None:
        self._read = read
        self._manifest_paths = manifest_paths
        self._manifests: dict[str, _Manifest | None] = {}
        self._workspace: dict[str, str] | None = None
        self._targets: dict[tuple[str, str], tuple[str, ...]] = {}

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

    def entry_targets(self, directory: str, rest: str) -> tuple[str, ...]:
        """The files a bare import binds in the package at ``directory`` (``rest``: the path
        after the package's name, ``""`` for the package itself), relative to the directory, as
        the manifest writes them: its ``exports`` for that subpath, else (the package itself)
        ``types``/``typings``/``module``/``main``, else (a subpath) the subpath."""
        key = (directory, rest)
        if key not in self._targets:
            self._targets[key] = self._entry_targets(directory, rest)
        return self._targets[key]

    def _entry_targets(self, directory: str, rest: str) -> tuple[str, ...]:
        manifest = self._manifest(directory)
        if manifest is None:
            return ("./" + rest,) if rest else ()
        targets: list[str] = []
        if manifest.exports is not None:
            targets = _subpath_targets(manifest.exports, "./" + rest if rest else ".")
        if not targets:
            targets = ["./" + rest] if rest else list(manifest.fields)
        return tuple(t for t in targets if _inside_package(t) is not None)

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

    def workspace_package(self, spec: str) -> tuple[str, str] | None:
        """``spec`` naming a package of the repository by its name (``@x/b``, ``@x/b/sub``):
        that package's directory and the rest of the spec; None for a package from outside."""
        name = bare_package_name(spec)
        if name is None:
            return None
        directory = self._workspace_map().get(name)
        if directory is None:
            return None
        return directory, spec[len(name) + 1 :]

    def _workspace_map(self) -> dict[str, str]:
        """Package name → its directory, for every named manifest of the commit; a name two
        manifests claim goes to the shallower one (then the first by path)."""
        if self._workspace is None:
            found: dict[str, str] = {}
            directories = {posixpath.dirname(p) for p in self._manifest_paths()}
            for directory in sorted(directories, key=lambda d: (d.count("/") if d else -1, d)):
                manifest = self._manifest(directory)
                if manifest is not None and manifest.name and manifest.name not in found:
                    found[manifest.name] = directory
            self._workspace = found
        return self._workspace


#: no manifests (a table built without a repository)
NO_PACKAGES = Packages(lambda _path: None)
