"""Nodes + edges → Merkle roots (file, directory, graph) and the PackRoot digest.

- file root = sha256 over the file's nodes' sorted (id, content_hash) and its outgoing
  edges (the edges its references produced), sorted;
- directory root = sha256 over sorted (name, kind, child root);
- graph root = the root directory's root (an empty tree hashes the empty listing);
- PackRoot = sha256 of the canonical JSON of {mode, normalized inputs, ranking parameters,
  sorted (node id, content_hash) of the selected symbols} (DESIGN.md, PackRoot).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from knowing_pr.model import Edge, Node

__all__ = [
    "dir_roots_for",
    "file_root",
    "graph_root_of",
    "pack_root",
    "params_digest",
    "parent_dirs",
    "updated_dir_roots",
]


def file_root(nodes: Iterable[Node], edges: Iterable[Edge]) -> str:
    h = hashlib.sha256(b"file\0")
    for node_id, content_hash in sorted((n.id, n.content_hash) for n in nodes):
        h.update(f"n {node_id} {content_hash}\n".encode())
    for e in sorted((e.source, e.target, int(e.kind), round(e.confidence, 4), e.rule) for e in edges):
        h.update(f"e {e[0]} {e[1]} {e[2]} {e[3]:.4f} {e[4]}\n".encode())
    return h.hexdigest()


def parent_dirs(path: str) -> list[str]:
    """``a/b/c.py`` → ``["a/b", "a", ""]`` (``""`` is the repository root)."""
    parts = path.split("/")[:-1]
    out = ["/".join(parts[:i]) for i in range(len(parts), 0, -1)]
    out.append("")
    return out


def _dir_root(children: Iterable[tuple[str, str, str]]) -> str:
    h = hashlib.sha256(b"dir\0")
    for name, kind, root in sorted(children):
        h.update(
            name.encode("utf-8", "surrogateescape") + b"\0" + kind.encode() + b"\0" + root.encode() + b"\n"
        )
    return h.hexdigest()


def dir_roots_for(file_roots: Mapping[str, str]) -> dict[str, str]:
    """Every directory's root from all file roots (hashing is cheap next to parsing, and
    recomputing from the full file list keeps incremental and full indexes identical)."""
    files_in: dict[str, list[tuple[str, str, str]]] = {}
    subdirs_of: dict[str, set[str]] = {"": set()}
    for path, root in file_roots.items():
        parent, _, name = path.rpartition("/")
        files_in.setdefault(parent, []).append((name, "f", root))
        child = parent
        while child:
            up = child.rpartition("/")[0]
            if child in subdirs_of.get(up, ()):
                break  # linked already, and so is every directory above it
            subdirs_of.setdefault(child, set())
            subdirs_of.setdefault(up, set()).add(child)
            child = up
    roots: dict[str, str] = {}
    for d in sorted(subdirs_of, key=lambda p: (-(p.count("/") + (1 if p else 0)), p)):
        items = list(files_in.get(d, []))
        items.extend((s.rpartition("/")[2], "d", roots[s]) for s in subdirs_of[d])
        roots[d] = _dir_root(items)
    return roots


def updated_dir_roots(
    touched_paths: Iterable[str],
    files_in: Callable[[list[str]], Mapping[str, Iterable[tuple[str, str]]]],
    subdirs_of: Callable[[str], Mapping[str, str]],
) -> dict[str, str | None]:
    """The new root of every directory above the touched files (``None``: it is gone), from
    the current (path, root) of the files directly in each (``files_in``) and the stored
    roots of its subdirectories (``subdirs_of``): the same roots as ``dir_roots_for`` over
    every file, when the stored ones were its result before these files changed."""
    touched_dirs = {d for path in touched_paths for d in parent_dirs(path)}
    deepest_first = sorted(touched_dirs, key=lambda p: (-(p.count("/") + (1 if p else 0)), p))
    files = files_in(deepest_first)
    recomputed: dict[str, str | None] = {}
    recomputed_in: dict[str, list[str]] = {}
    for d in deepest_first:
        subdirs = dict(subdirs_of(d))
        for child in recomputed_in.get(d, []):
            root = recomputed[child]
            if root is None:
                subdirs.pop(child, None)
            else:
                subdirs[child] = root
        items = [(path.rpartition("/")[2], "f", root) for path, root in files.get(d, ())]
        items.extend((s.rpartition("/")[2], "d", root) for s, root in subdirs.items())
        recomputed[d] = _dir_root(items) if items or not d else None
        if d:
            recomputed_in.setdefault(d.rpartition("/")[0], []).append(d)
    return recomputed


def graph_root_of(dir_roots: Mapping[str, str]) -> str:
    return dir_roots.get("") or _dir_root(())


def canonical_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def params_digest(params: Mapping[str, Any]) -> str:
    """sha256 of a pack's parameters in canonical JSON: one value that tells two packs' settings
    apart (the parameters themselves are in the pack's manifest)."""
    return hashlib.sha256(canonical_json(dict(params)).encode("utf-8", "surrogateescape")).hexdigest()


def pack_root(
    mode: str,
    inputs: Mapping[str, Any],
    params: Mapping[str, Any],
    selected: Iterable[tuple[str, str]],
) -> str:
    document = {
        "mode": mode,
        "inputs": inputs,
        "params": params,
        "selected": sorted(selected),
    }
    return hashlib.sha256(canonical_json(document).encode("utf-8", "surrogateescape")).hexdigest()
