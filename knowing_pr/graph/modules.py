"""An import's module spec + the symbol table → the repository files it names (empty: external).

Per language: Python (relative by dots, absolute by dotted module suffix), JavaScript and
TypeScript (relative paths with their extensions and ``index`` files, a directory by its
``package.json`` entry, a package of the repository by its name: its own, or a workspace
package's, through its ``exports`` and build outputs' sources: ``packages.py``), Ruby, Go (by directory
suffix), Rust (``crate``/``self``/``super`` paths) and Java (by dotted suffix).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

from knowing_pr.graph.builtins import is_python_stdlib
from knowing_pr.graph.nodes import FileRefs
from knowing_pr.graph.packages import SOURCE_EXTENSIONS, manifest_path, source_candidates
from knowing_pr.graph.paths import module_name
from knowing_pr.graph.symbols import SymbolTable

__all__ = [
    "by_module_suffix",
    "default_import_paths",
    "js_module_paths",
    "module_paths",
    "python_module_paths",
    "relative_candidates",
]

_EXTENSIONS = {
    "python": (".py", ".pyi"),
    "javascript": (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx"),
    "typescript": (".ts", ".tsx", ".d.ts", ".js", ".mts"),
    "tsx": (".tsx", ".ts", ".js", ".jsx"),
    "ruby": (".rb",),
    "rust": (".rs",),
}


def relative_candidates(path: str, spec: str, language: str) -> list[str]:
    base = posixpath.normpath(posixpath.join(posixpath.dirname(path), spec))
    exts = _EXTENSIONS.get(language, ())
    out = [base]
    stem = base
    for js_ext in (".js", ".jsx", ".mjs", ".cjs"):
        if base.endswith(js_ext):
            stem = base[: -len(js_ext)]
    out.extend(stem + ext for ext in exts)
    out.extend(f"{base}/index{ext}" for ext in exts)
    return out


def _present(table: SymbolTable, candidates: Iterable[str]) -> list[str]:
    return [p for p in candidates if p in table.module_of][:1]


def _directory_entry(table: SymbolTable, directory: str, language: str) -> list[str]:
    """The file an import of a directory binds: its manifest's entry, else its ``index`` file."""
    manifest = manifest_path(directory)
    for entry in table.packages.entry_specs(directory):
        found = _present(table, relative_candidates(manifest, entry, language))
        if found:
            return found
    prefix = f"{directory}/" if directory else ""
    return _present(table, (f"{prefix}index{ext}" for ext in _EXTENSIONS[language]))


def js_module_paths(table: SymbolTable, path: str, language: str, spec: str) -> list[str]:
    """A relative spec's file (``./m``, ``./m.js``, ``./dir/index.js``), a directory's or the
    package root's entry (``..``, ``../..``), or a package of the repository named by its name
    (the importing package's own, else a workspace package's)."""
    if spec.startswith("."):
        found = _present(table, relative_candidates(path, spec, language))
        if found:
            return found
        directory = posixpath.normpath(posixpath.join(posixpath.dirname(path), spec))
        if directory.startswith(".."):
            return []
        return _directory_entry(table, "" if directory == "." else directory, language)
    package = table.packages.own_package(path, spec) or table.packages.workspace_package(spec)
    if package is None:
        return []
    return _package_entry(table, *package)


def _package_entry(table: SymbolTable, directory: str, rest: str) -> list[str]:
    """The file a bare import binds in a package of the repository (``rest``: the subpath after
    its name): a target its manifest names that exists (code before type declarations), else
    that target's source (``dist/x.js`` → ``src/x.ts``), else the subpath under the package or
    its ``src`` (what a tsconfig ``paths`` entry ``pkg/*`` → ``src/*`` gives), else, for the
    package itself, its ``src/index`` or ``index`` file."""
    targets = sorted(table.packages.entry_targets(directory, rest), key=_is_declaration)
    for target in targets:
        found = _present(table, _in_package(directory, _file_candidates(target)))
        if found:
            return found
    for target in targets:
        found = _present(table, _in_package(directory, source_candidates(target)))
        if found:
            return found
    fallbacks = [f"./{rest}", f"./src/{rest}"] if rest else ["./src/index", "./index"]
    for fallback in fallbacks:
        found = _present(table, _in_package(directory, _file_candidates(fallback)))
        if found:
            return found
    return []


def _is_declaration(target: str) -> bool:
    return target.endswith((".d.ts", ".d.mts", ".d.cts"))


def _file_candidates(target: str) -> list[str]:
    """A target as written, with each source extension (in place of its own), or its
    directory's ``index``."""
    base = posixpath.normpath(target)
    stem = base
    for ext in (".js", ".jsx", ".mjs", ".cjs"):
        if base.endswith(ext):
            stem = base[: -len(ext)]
    return [
        base,
        *(stem + ext for ext in SOURCE_EXTENSIONS),
        *(f"{base}/index{ext}" for ext in SOURCE_EXTENSIONS),
    ]


def _in_package(directory: str, relatives: Iterable[str]) -> list[str]:
    return [
        posixpath.normpath(posixpath.join(directory, r)) if directory else posixpath.normpath(r)
        for r in relatives
    ]


def default_import_paths(refs: FileRefs) -> set[str]:
    """Every file a default import of this file could bind (``import x from "./m.js"`` binds
    the module's first declaration, whatever its name): when such a file's declarations
    change, this file must be resolved again."""
    if refs.language not in ("javascript", "typescript", "tsx"):
        return set()
    out: set[str] = set()
    for imp in refs.imports:
        if imp.module.startswith(".") and any(imported == "default" for imported, _ in imp.names):
            out.update(relative_candidates(refs.path, imp.module, refs.language))
    return out


def python_module_paths(table: SymbolTable, path: str, spec: str) -> list[str]:
    if spec.startswith("."):
        level = len(spec) - len(spec.lstrip("."))
        rest = spec[level:]
        base = posixpath.dirname(path)
        for _ in range(level - 1):
            base = posixpath.dirname(base)
        target = posixpath.join(base, rest.replace(".", "/")) if rest else base
        found = [p for p in (target + ".py", target + "/__init__.py") if p in table.module_of]
        return found or [p for p in (target + ".pyi", target + "/__init__.pyi") if p in table.module_of]
    if is_python_stdlib(spec.split(".", 1)[0]):
        # ``import json`` is the standard library's, unless the repository has a top-level
        # package of that very name (not any file whose dotted name merely ends so)
        return [p for p in by_module_suffix(table, spec) if module_name(p) in (spec, "src." + spec)]
    return by_module_suffix(table, spec)


def by_module_suffix(table: SymbolTable, dotted: str) -> list[str]:
    paths = table.paths_by_module_suffix.get(dotted, [])
    if len(paths) <= 1:
        return list(paths)
    # the shortest path is the most likely root-relative match (src/ layouts excepted)
    exact = [p for p in paths if module_name(p) == dotted]
    return exact or sorted(paths, key=lambda p: (p.count("/"), p))[:1]


def module_paths(table: SymbolTable, path: str, language: str, spec: str) -> list[str]:
    """The files an import's module spec names (empty when it is external)."""
    if language == "python":
        return python_module_paths(table, path, spec)
    if language in ("javascript", "typescript", "tsx"):
        return js_module_paths(table, path, language, spec)
    if language == "ruby":
        if spec.startswith("."):
            cands = relative_candidates(path, spec, "ruby")
        else:
            cands = [p for p in table.paths_by_module_suffix.get(spec.replace("/", "."), [])]
        return [p for p in cands if p in table.module_of][:1]
    if language == "go":
        parts = spec.strip("/").split("/")
        for i in range(len(parts)):
            dirs = table.dirs_by_suffix.get("/".join(parts[i:]))
            if dirs:
                chosen = sorted(dirs, key=lambda d: (d.count("/"), d))[0]
                return [p for p in table.paths_by_dir.get(chosen, []) if p.endswith(".go")]
        return []
    if language == "rust":
        segs = [s for s in spec.split("::") if s]
        base_dir = posixpath.dirname(path)
        if segs and segs[0] == "crate":
            segs = segs[1:]
        elif segs and segs[0] == "self":
            segs = [*base_dir.split("/")[-1:], *segs[1:]] if base_dir else segs[1:]
        while segs and segs[0] == "super":
            segs = segs[1:]
        if not segs:
            return []
        return by_module_suffix(table, ".".join(segs)) or by_module_suffix(table, ".".join([*segs, "mod"]))
    if language == "java":
        return by_module_suffix(table, spec)
    return []
