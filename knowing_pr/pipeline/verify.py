"""A PackRoot → the recorded pack, or a recomputation at its commit compared with it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from knowing_pr.indexer import index_commit, open_store
from knowing_pr.model import Pack
from knowing_pr.pipeline.packs import build_files_pack, build_pr_pack
from knowing_pr.pipeline.workspace import Workspace, open_workspace

__all__ = ["replay_command"]


def replay_command(args: argparse.Namespace) -> tuple[int, str]:
    """Print a recorded pack; with ``--verify``, recompute it at its commit and compare."""
    from knowing_pr.errors import UsageError
    from knowing_pr.render import render_pack
    from knowing_pr.replay import (
        diff_symbols,
        pack_from_manifest,
        read_manifest_file,
        validate_pack_root,
    )

    pack_root = validate_pack_root(args.pack_root)
    ws = open_workspace(args.repo, db=args.db, config=args.config)
    if args.manifest:
        manifest = read_manifest_file(args.manifest)
    else:
        store, _ = open_store(ws.db_path)
        try:
            found = store.load_pack(pack_root)
        finally:
            store.close()
        if found is None:
            raise UsageError(
                f"no pack {pack_root[:12]}… is recorded in this clone's store",
                hint="pass --manifest FILE with the manifest the Action uploaded",
            )
        manifest = found
    recorded = pack_from_manifest(manifest)
    if recorded.pack_root != pack_root:
        raise UsageError(f"the manifest is for pack {recorded.pack_root[:12]}…, not {pack_root[:12]}…")
    if args.export:
        import json as _json

        Path(args.export).write_text(_json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    if not args.verify:
        return 0, render_pack(recorded, args.format)
    recomputed = _recompute(ws, manifest)
    added, removed = diff_symbols(recorded, recomputed)
    if recomputed.pack_root == recorded.pack_root and not added and not removed:
        return (
            0,
            f"verified: {pack_root} (commit {str(recorded.commit)[:12]}, {len(recorded.symbols)} symbols)",
        )
    lines = [f"mismatch: recorded {pack_root}", f"          recomputed {recomputed.pack_root}"]
    lines += [f"+ {name}" for name in added] + [f"- {name}" for name in removed]
    if not added and not removed:
        lines.append("same symbols; the parameters or inputs differ")
    return 1, "\n".join(lines)


def _recompute(ws: Workspace, manifest: dict[str, Any]) -> Pack:
    """Rebuild the pack at its recorded commit in a scratch store (the working tree and the
    clone's own store are not touched)."""
    import tempfile

    from knowing_pr.config import settings_from_params

    request = manifest.get("request", {})
    settings = settings_from_params(ws.settings, manifest.get("params", {}))
    with tempfile.TemporaryDirectory(prefix="knowing-pr-verify-") as tmp:
        scratch = Workspace(ws.repo, settings, Path(tmp) / "index.sqlite")
        mode = request.get("mode", manifest.get("mode"))
        fmt = request.get("format", "markdown")
        if mode == "pr":
            return build_pr_pack(
                scratch,
                base=request.get("base"),
                head=request.get("head"),
                files=request.get("files") or None,
                fmt=fmt,
                task=request.get("task"),
            )
        if mode == "files":
            index_commit(scratch.repo, settings, rev=request.get("head"), db_path=scratch.db_path)
            return build_files_pack(scratch, request.get("files", []), fmt=fmt)
        from knowing_pr.errors import UsageError

        raise UsageError(f"cannot verify a pack of mode {mode!r}")
