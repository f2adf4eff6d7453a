"""A pack just built → its records outside the store, so another clone can replay it by its
PackRoot: the manifest as a file (``pr --manifest FILE``, the form ``replay --export`` writes)
and the pack's request record as a git note on its head commit (``pr --record note``: one JSON
record per line under ``refs/notes/knowing-pr``, the form the Action writes, with every
parameter). The note is written in this clone only; ``git push origin refs/notes/knowing-pr``
shares it.
"""

from __future__ import annotations

import json
from typing import Any

from knowing_pr.errors import StoreError
from knowing_pr.pipeline.output import check_output_file, write_text
from knowing_pr.pipeline.workspace import Workspace
from knowing_pr.replay import NOTES_REF, note_text, request_record
from knowing_pr.store.opening import open_store

__all__ = ["RECORD_PLACES", "check_manifest_path", "record_pack"]

#: where ``pr --record`` can record a pack's request
RECORD_PLACES = ("note",)


def check_manifest_path(value: str) -> None:
    """Refuse a ``--manifest`` target before any work (``UsageError`` naming the problem)."""
    check_output_file("--manifest", value, example="manifest.json")


def record_pack(ws: Workspace, pack_root: str, *, note: bool, manifest_path: str | None) -> None:
    """Write the recorded pack ``pack_root`` (saved in the store by the command that built it)
    to ``manifest_path`` and/or as a git note on its head commit (silently, as ``--out`` writes)."""
    manifest = _saved_manifest(ws, pack_root)
    if manifest_path is not None:
        target = check_output_file("--manifest", manifest_path, example="manifest.json")
        write_text("--manifest", target, json.dumps(manifest, indent=2, sort_keys=True))
    if note:
        task = (manifest.get("request") or {}).get("task")
        record = request_record(manifest, task_from="argument" if task else None)
        head = str(record["head"])
        existing = (ws.repo.notes(NOTES_REF) or {}).get(head)
        ws.repo.write_note(NOTES_REF, head, note_text(existing, record))


def _saved_manifest(ws: Workspace, pack_root: str) -> dict[str, Any]:
    store, _ = open_store(ws.db_path)
    try:
        manifest = store.load_pack(pack_root)
    finally:
        store.close()
    if manifest is None:
        raise StoreError(f"the pack {pack_root[:12]}… is not recorded in the store", hint="build it again")
    return manifest
