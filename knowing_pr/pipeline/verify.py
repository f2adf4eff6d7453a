"""A PackRoot → the recorded pack, or a recomputation at its commit compared with it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from knowing_pr.index import index_commit
from knowing_pr.model import Pack
from knowing_pr.pipeline.output import check_output_file, write_text
from knowing_pr.pipeline.pr import PrRequest, build_files_pack, build_pr_pack
from knowing_pr.pipeline.workspace import Workspace
from knowing_pr.store.opening import open_store

__all__ = ["ReplayRequest", "replay"]


@dataclass(frozen=True)
class ReplayRequest:
    """What ``knowing-pr replay`` was asked."""

    pack_root: str
    verify: bool = False
    manifest: str | None = None  # a manifest file exported from another clone
    export: str | None = None  # write the manifest here
    fmt: str = "markdown"


def replay(ws: Workspace, request: ReplayRequest) -> tuple[int, str]:
    """Print a recorded pack; with ``verify``, recompute it at its commit and compare. Returns the
    exit code (1 on a mismatch) and the text."""
    from knowing_pr.errors import UsageError
    from knowing_pr.render import render_pack
    from knowing_pr.replay import (
        diff_symbols,
        pack_from_manifest,
        read_manifest_file,
        validate_pack_root,
    )

    pack_root = validate_pack_root(request.pack_root)
    export = (
        check_output_file("--export", request.export, example="manifest.json")
        if request.export is not None
        else None
    )
    if request.manifest is not None:
        manifest = read_manifest_file(_checked_manifest(request.manifest))
    else:
        found = None
        if ws.db_path.exists():  # no store: nothing is recorded, and none is created to say so
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
    if export is not None:
        import json as _json

        write_text("--export", export, _json.dumps(manifest, indent=2, sort_keys=True))
    if not request.verify:
        return 0, render_pack(recorded, request.fmt)
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


def _checked_manifest(value: str) -> str:
    from knowing_pr.errors import UsageError

    path = Path(value)
    if not path.exists():
        raise UsageError(f"--manifest {value}: no such file")
    if not path.is_file():
        raise UsageError(f"--manifest {value}: is {'a directory' if path.is_dir() else 'not a regular file'}")
    return value


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
            pr = PrRequest(
                base=request.get("base"),
                head=request.get("head"),
                files=tuple(request.get("files") or ()),
                task=request.get("task"),
                fmt=fmt,
            )
            return build_pr_pack(scratch, pr)
        if mode == "files":
            index_commit(scratch.repo, settings, rev=request.get("head"), db_path=scratch.db_path)
            return build_files_pack(scratch, request.get("files", []), fmt=fmt)
        from knowing_pr.errors import UsageError

        raise UsageError(f"cannot verify a pack of mode {mode!r}")
