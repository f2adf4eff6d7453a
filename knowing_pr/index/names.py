"""Symbols that appeared or vanished → the names whose resolution they can change, and a file's
references → the names it depends on (what lets an incremental run re-resolve only the files
whose answers can change)."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

from knowing_pr.graph import FileRefs, decode_refs, ref_names
from knowing_pr.graph.deps import changed_keys, module_key
from knowing_pr.graph.packages import (
    PACKAGE_MANIFEST,
    bare_package_name,
    manifest_path,
    package_dirs_of,
)
from knowing_pr.model import Node
from knowing_pr.store import Store

__all__ = [
    "DEFAULT_IMPORT_KEY",
    "MANIFEST_KEY",
    "WORKSPACE_KEY",
    "changed_fact_keys",
    "changed_manifest_keys",
    "manifests_read",
    "reference_names",
    "touched_names",
    "workspace_keys",
]


#: prefix of the stored reference names that stand for a default import of a file
DEFAULT_IMPORT_KEY = "default-import:"
#: prefix of the stored reference names that stand for a ``package.json`` an import reads
MANIFEST_KEY = "manifest:"
#: prefix of the stored reference names that stand for the workspace package a bare import names
WORKSPACE_KEY = "workspace:"


def reference_names(path: str, refs: FileRefs, nodes: list[Node]) -> set[str]:
    """The names whose definitions can change how this file resolves, plus one key per file
    a default import of it could bind."""
    from knowing_pr.graph.resolve import default_import_paths

    names = ref_names(path, refs, nodes)
    names.update(DEFAULT_IMPORT_KEY + target for target in default_import_paths(refs))
    names.update(MANIFEST_KEY + manifest for manifest in manifests_read(refs))
    names.update(workspace_keys(refs))
    return names


def workspace_keys(refs: FileRefs) -> set[str]:
    """One key per package a JS/TS file's bare imports name (``@x/b`` of ``@x/b/sub``): the
    manifest of whichever workspace package holds that name can redirect them."""
    if refs.language not in ("javascript", "typescript", "tsx"):
        return set()
    names = (bare_package_name(imp.module) for imp in refs.imports)
    return {WORKSPACE_KEY + name for name in names if name}


def manifests_read(refs: FileRefs) -> set[str]:
    """The ``package.json`` files a JS/TS file's imports can resolve through: the manifest of a
    directory it imports, and those of its own package (an import of the package's own name)."""
    if refs.language not in ("javascript", "typescript", "tsx"):
        return set()
    out: set[str] = set()
    for imp in refs.imports:
        if imp.module.startswith("."):
            target = posixpath.normpath(posixpath.join(posixpath.dirname(refs.path), imp.module))
            out.add(manifest_path("" if target == "." else target))
        else:
            out.update(manifest_path(d) for d in package_dirs_of(refs.path))
    return out


def changed_manifest_keys(changed_paths: Iterable[str], package_names: Iterable[str] = ()) -> set[str]:
    """The keys of the files whose imports a changed or removed ``package.json`` can redirect
    (``package_names``: the names those manifests declared before and after the change)."""
    keys = {MANIFEST_KEY + p for p in changed_paths if posixpath.basename(p) == PACKAGE_MANIFEST}
    return keys | {WORKSPACE_KEY + name for name in package_names}


def touched_names(changed_rows: Iterable[tuple[str, str, str, str, str]]) -> set[str]:
    """Names whose resolution can change when these symbols appear or vanish: their own
    names, a key for their file's default importers, and the owner type's name (its members feed
    ``inherits`` and member calls)."""
    from knowing_pr.graph import module_name

    names: set[str] = set()
    for _id, path, name, qualified_name, kind in changed_rows:
        names.add(name)
        if kind == "module":  # a file that appears or goes: what imports name it by
            names.add(module_key(path))
        # a JS/TS default import binds whatever the module's first declaration is, without
        # naming it: re-resolve the files whose default imports can bind this file
        names.add(DEFAULT_IMPORT_KEY + path)
        infile = qualified_name[len(module_name(path)) + 1 :]
        if "." in infile:
            names.add(infile.rsplit(".", 1)[0].rsplit(".", 1)[-1].split("#", 1)[0])
    return names


def changed_fact_keys(store: Store, gone: set[str], new: dict[str, FileRefs]) -> set[str]:
    """The keys of the facts (module variables, attributes, returns, bases, imports) that the
    changed and removed files held before this run and do not hold now, or the reverse."""
    old = store.refs_for(gone)
    keys: set[str] = set()
    for path in sorted(gone | new.keys()):
        before = decode_refs(path, old[path]) if path in old else None
        keys |= changed_keys(before, new.get(path))
    return keys
