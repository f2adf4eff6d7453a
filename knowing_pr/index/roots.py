"""The files an index run touched → their Merkle roots, and the directory roots above them up to
the repository's graph root (re-hashed along the touched chains only, or rebuilt in full)."""

from __future__ import annotations

from knowing_pr.graph.merkle import dir_roots_for, file_root, graph_root_of, updated_dir_roots
from knowing_pr.model import Edge, Node
from knowing_pr.store import Store

__all__ = ["file_roots", "rebuild_dir_roots", "update_dir_roots"]


def file_roots(
    store: Store, dirty: set[str], new_nodes: dict[str, list[Node]], edges_by_origin: dict[str, list[Edge]]
) -> dict[str, str]:
    missing = [p for p in dirty if p not in new_nodes]
    loaded: dict[str, list[Node]] = {}
    for node in store.nodes_in_paths(missing):
        loaded.setdefault(node.path, []).append(node)
    return {
        path: file_root(new_nodes.get(path) or loaded.get(path, []), edges_by_origin.get(path, []))
        for path in dirty
    }


def rebuild_dir_roots(store: Store) -> str:
    """Every directory's root from every file's; returns the graph root."""
    all_roots = {
        f.path: f.root for f in store.files().values() if f.status == "indexed" and f.root is not None
    }
    dir_roots = dir_roots_for(all_roots)
    old_dirs = store.dir_roots()
    store.replace_dir_roots(
        {d: r for d, r in dir_roots.items() if old_dirs.get(d) != r},
        [d for d in old_dirs if d not in dir_roots],
    )
    return graph_root_of(dir_roots)


def update_dir_roots(store: Store, touched_paths: set[str]) -> str:
    """Re-hash only the directories above files whose rows changed; returns the graph root.

    Read inside the write transaction: the stored roots are then those of the last commit
    of any writer, and the ancestors of this run's files are brought up to date on them."""
    recomputed = updated_dir_roots(touched_paths, store.file_roots_in_dirs, store.subdir_roots)
    before = store.dir_roots_of(recomputed)
    store.replace_dir_roots(
        {d: r for d, r in recomputed.items() if r is not None and before.get(d) != r},
        [d for d, r in recomputed.items() if r is None and d in before],
    )
    if "" not in recomputed:  # no file row changed (an empty diff)
        return graph_root_of(store.dir_roots_of([""]))
    return recomputed[""] or graph_root_of({})
