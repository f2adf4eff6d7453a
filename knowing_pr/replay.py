"""Pack ↔ manifest (plain JSON), PackRoot validation, the comparison behind ``--verify``, and a
pack's request record ↔ the hidden comment line and the git note.

A manifest holds the whole pack (every symbol with its node record and score components)
plus the request that produced it (mode, inputs, budget, format, commit), so a replay can
print exactly what the bot saw and a verification can recompute it at the same commit.

A *request record* is what a replay needs when no manifest is at hand: the request (mode,
base and head commits, files, budget, format), the digest of every parameter
(``params_digest``), the task text (or its sha256 and where it came from) and, in a git note,
the parameters themselves. The PR comment carries it as a hidden line
(``render.comment.request_line``, bounded: long values shrink to their digests); a git note
under ``NOTES_REF`` on the head commit holds one record per line.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from knowing_pr.errors import InvalidPackRoot, UsageError
from knowing_pr.graph.merkle import params_digest
from knowing_pr.model import (
    CallSite,
    ChangeSummary,
    Node,
    Pack,
    RankedFile,
    RemovedSymbol,
    Reviewer,
    ScoredSymbol,
    TestToRun,
)
from knowing_pr.render.comment import request_line

__all__ = [
    "MANIFEST_VERSION",
    "NOTES_REF",
    "RECORD_VERSION",
    "TASK_SOURCES",
    "comment_record",
    "diff_symbols",
    "manifest_of",
    "note_text",
    "pack_from_manifest",
    "pr_request",
    "read_manifest_file",
    "records_in_note",
    "request_record",
    "task_digest",
    "validate_pack_root",
    "validate_record",
]

MANIFEST_VERSION = 1
RECORD_VERSION = 1
#: the git notes ref the Action writes a pack's request record to (on the head commit)
NOTES_REF = "refs/notes/knowing-pr"
#: where a pack's task text came from: the PR's title and body (the Action), a ``--task`` argument
TASK_SOURCES = ("pr", "argument")
_PACK_ROOT = re.compile(r"[0-9a-f]{64}")
_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_MODES = ("pr", "files")
_FORMATS = ("markdown", "json", "xml")
_MAX_FILES = 10_000
_MAX_TASK_CHARS = 100_000
#: a PR author (an e-mail address, a name or a login) a record may name
_MAX_AUTHOR_CHARS = 320
_MAX_NOTE_RECORDS = 50


def validate_pack_root(text: str) -> str:
    """Exactly 64 lowercase hex characters (``fullmatch``: no trailing newline sneaks in)."""
    if not isinstance(text, str) or _PACK_ROOT.fullmatch(text) is None:
        shown = repr(text[:80]) if isinstance(text, str) else type(text).__name__
        raise InvalidPackRoot(
            f"not a PackRoot: {shown}",
            hint="a PackRoot is exactly 64 lowercase hexadecimal characters, as printed by 'knowing-pr pr'",
        )
    return text


def pr_request(
    *,
    base: str | None,
    head: str,
    files: Sequence[str],
    budget: int,
    fmt: str,
    task: str | None,
    author: str | None = None,
) -> dict[str, Any]:
    """The request of a ForPR pack as its manifest records it: what ``--verify`` rebuilds from.

    One definition for the CLI's packs and the Action's artifact, so both manifests agree."""
    text = " ".join((task or "").split())
    request: dict[str, Any] = {
        "mode": "pr",
        "base": base,
        "head": head,
        "files": list(files),
        "budget": budget,
        "format": fmt,
        "task": text or None,
    }
    if author:  # only when given: the requests recorded before reviewers stay as they were
        request["author"] = author
    return request


def manifest_of(pack: Pack, request: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "version": MANIFEST_VERSION,
        "pack_root": pack.pack_root,
        "mode": pack.mode,
        "token_budget": pack.token_budget,
        "tokens_used": pack.tokens_used,
        "graph_root": pack.graph_root,
        "commit": pack.commit,
        "inputs": pack.inputs,
        "params": pack.params,
        "request": dict(request),
        "symbols": [
            {
                "node": _fields_of(s.node),
                "score": s.score,
                "rwr": s.rwr,
                "authority": s.authority,
                "hub": s.hub,
                "distance": s.distance,
                "reason": s.reason,
                "is_seed": s.is_seed,
                "is_test": s.is_test,
                "components": [list(c) for c in s.components],
                **_change_of(s),
            }
            for s in pack.symbols
        ],
        "edges": [list(e) for e in pack.edges],
        "dropped": [list(d) for d in pack.dropped],
        "cochange": [list(c) for c in pack.cochange],
        **({"summary": asdict(pack.summary)} if pack.summary is not None else {}),
        "files": [
            {
                "path": f.path,
                "score": f.score,
                "reasons": list(f.reasons),
                "evidence": f.evidence,
                "signals": [list(v) for v in f.signals],
            }
            for f in pack.files
        ],
    }


def _fields_of(node: Node) -> dict[str, Any]:
    """``dataclasses.asdict(node)`` for a record of plain fields, without its deep copies (a
    tenth of the time, the same dict)."""
    return {f.name: getattr(node, f.name) for f in fields(node)}


def _change_of(symbol: ScoredSymbol) -> dict[str, Any]:
    """What a symbol's record adds when the change did something to it (absent otherwise)."""
    out: dict[str, Any] = {}
    if symbol.brief:
        out["brief"] = True
    if symbol.signature_changes:
        out["signature_changes"] = list(symbol.signature_changes)
        out["signature_before"] = symbol.signature_before
    if symbol.is_new:
        out["is_new"] = True
    return out


def _summary_from(data: Mapping[str, Any] | None) -> ChangeSummary | None:
    """A recorded summary back as a ``ChangeSummary`` (``None`` when the manifest has none)."""
    if data is None:
        return None
    return ChangeSummary(
        no_code=bool(data.get("no_code", False)),
        call_sites=[CallSite(**site) for site in data.get("call_sites", [])],
        call_sites_total=int(data.get("call_sites_total", 0)),
        call_sites_outside=int(data.get("call_sites_outside", 0)),
        call_sites_not_updated=int(data.get("call_sites_not_updated", 0)),
        call_site_lines=[str(item) for item in data.get("call_site_lines", [])],
        tests=[TestToRun(**test) for test in data.get("tests", [])],
        tests_total=int(data.get("tests_total", 0)),
        removed=[RemovedSymbol(**removed) for removed in data.get("removed", [])],
        removed_total=int(data.get("removed_total", 0)),
        cochange_with={str(k): str(v) for k, v in dict(data.get("cochange_with", {})).items()},
        changed_left_out=[str(item) for item in data.get("changed_left_out", [])],
        changed_left_out_count=int(data.get("changed_left_out_count", 0)),
        reviewers=[
            Reviewer(**{**r, "evidence": tuple(r.get("evidence", ()))}) for r in data.get("reviewers", [])
        ],
    )


def pack_from_manifest(data: Mapping[str, Any]) -> Pack:
    try:
        if data.get("version") != MANIFEST_VERSION:
            raise UsageError(f"unsupported manifest version {data.get('version')!r}")
        symbols = [
            ScoredSymbol(
                node=Node(**s["node"]),
                score=float(s["score"]),
                rwr=float(s["rwr"]),
                authority=float(s["authority"]),
                hub=float(s["hub"]),
                distance=int(s["distance"]),
                reason=str(s["reason"]),
                is_seed=bool(s["is_seed"]),
                is_test=bool(s["is_test"]),
                components=tuple((str(a), float(b)) for a, b in s["components"]),
                brief=bool(s.get("brief", False)),
                signature_changes=tuple(str(c) for c in s.get("signature_changes", ())),
                signature_before=str(s.get("signature_before", "")),
                is_new=bool(s.get("is_new", False)),
            )
            for s in data["symbols"]
        ]
        return Pack(
            pack_root=validate_pack_root(str(data["pack_root"])),
            mode=str(data["mode"]),
            token_budget=int(data["token_budget"]),
            tokens_used=int(data["tokens_used"]),
            graph_root=str(data["graph_root"]),
            commit=data.get("commit"),
            inputs=dict(data["inputs"]),
            symbols=symbols,
            edges=[(str(a), str(b), str(c)) for a, b, c in data["edges"]],
            params=dict(data["params"]),
            dropped=[(str(a), str(b)) for a, b in data.get("dropped", [])],
            cochange=[(str(a), int(b), int(c)) for a, b, c in data.get("cochange", [])],
            summary=_summary_from(data.get("summary")),
            files=[
                RankedFile(
                    path=str(f["path"]),
                    score=float(f["score"]),
                    reasons=tuple(str(r) for r in f["reasons"]),
                    evidence=str(f["evidence"]),
                    signals=tuple((str(a), float(b)) for a, b in f.get("signals", [])),
                )
                for f in data.get("files", [])
            ],
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"the manifest is malformed: {exc}") from None


def read_manifest_file(path: str) -> dict[str, Any]:
    file = Path(path)
    if not file.is_file():
        raise UsageError(f"manifest file not found: {path}")
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"cannot read the manifest {file.name}: {exc}") from None
    if not isinstance(data, dict):
        raise UsageError("the manifest must be a JSON object")
    return data


def diff_symbols(recorded: Pack, recomputed: Pack) -> tuple[list[str], list[str]]:
    """(added, removed) qualified names of the recomputed pack against the recorded one."""
    before = {(s.node.id, s.node.content_hash): s.node.qualified_name for s in recorded.symbols}
    after = {(s.node.id, s.node.content_hash): s.node.qualified_name for s in recomputed.symbols}
    added = sorted(after[k] for k in after.keys() - before.keys())
    removed = sorted(before[k] for k in before.keys() - after.keys())
    return added, removed


# -- request records: the hidden comment line and the git note -------------------------------------


def task_digest(text: str) -> str:
    """sha256 of the task text as a pack uses it (whitespace runs collapsed to one space)."""
    return hashlib.sha256(" ".join(text.split()).encode("utf-8", "surrogateescape")).hexdigest()


def request_record(
    manifest: Mapping[str, Any],
    *,
    with_params: bool = True,
    task_from: str | None = None,
    config: str | None = None,
) -> dict[str, Any]:
    """A manifest → its request record: enough to rebuild the pack from git objects (with the
    parameters themselves when ``with_params``, else only their digest). ``task_from`` says where
    the task text came from (``TASK_SOURCES``), ``config`` names the repository's settings file
    when it is not ``.knowing-pr.yml``."""
    request = manifest.get("request") or {}
    params = manifest.get("params") or {}
    task = request.get("task")
    record: dict[str, Any] = {
        "v": RECORD_VERSION,
        "pack_root": manifest["pack_root"],
        "mode": request.get("mode", manifest.get("mode")),
        "base": request.get("base"),
        "head": request.get("head") or manifest.get("commit"),
        "files": list(request.get("files") or []),
        "budget": request.get("budget", manifest.get("token_budget")),
        "format": request.get("format", "markdown"),
        "params_digest": params_digest(params),
        "task": task,
        "task_sha256": task_digest(task) if task else None,
        "task_from": task_from if task else None,
    }
    if config:
        record["config"] = config
    if request.get("author"):
        record["author"] = request["author"]
    if with_params:
        record["params"] = dict(params)
    return record


def comment_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """The record as the comment's hidden line carries it: no parameters (their digest stays);
    a task text or a file list that would pass ``MAX_REQUEST_LINE_BYTES`` is left out (the task
    keeps its sha256 and source, the files a sha256 of their JSON list)."""
    small = {k: v for k, v in record.items() if k != "params"}
    if _line_fits(small):
        return small
    small["task"] = None
    if _line_fits(small):
        return small
    files = small.pop("files", [])
    small["files_sha256"] = hashlib.sha256(json.dumps(files).encode("utf-8", "surrogateescape")).hexdigest()
    if not _line_fits(small):
        raise UsageError("the pack's request does not fit a comment line")
    return small


def _line_fits(record: Mapping[str, Any]) -> bool:
    try:
        request_line(record)
    except ValueError:
        return False
    return True


def validate_record(data: Any) -> dict[str, Any]:
    """An untrusted request record (from a comment anyone may write, a note, a file) → the same
    record, every field checked; ``UsageError`` naming the first bad field."""
    if not isinstance(data, Mapping):
        raise UsageError("the pack's request record is not a JSON object")

    def bad(field: str) -> UsageError:
        return UsageError(f"the pack's request record has an invalid {field!r}")

    checks: dict[str, Any] = {
        "v": lambda v: v == RECORD_VERSION,
        "pack_root": lambda v: isinstance(v, str) and _PACK_ROOT.fullmatch(v) is not None,
        "mode": lambda v: v in _MODES,
        "base": lambda v: v is None or (isinstance(v, str) and _COMMIT.fullmatch(v) is not None),
        "head": lambda v: isinstance(v, str) and _COMMIT.fullmatch(v) is not None,
        "budget": lambda v: isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 10_000_000,
        "format": lambda v: v in _FORMATS,
        "params_digest": lambda v: isinstance(v, str) and _HEX64.fullmatch(v) is not None,
    }
    for field, ok in checks.items():
        if not ok(data.get(field)):
            raise bad(field)
    files = data.get("files", [])
    if not isinstance(files, list) or len(files) > _MAX_FILES or not all(_is_path(f) for f in files):
        raise bad("files")
    task = data.get("task")
    if task is not None and (not isinstance(task, str) or len(task) > _MAX_TASK_CHARS):
        raise bad("task")
    for field in ("task_sha256", "files_sha256"):
        value = data.get(field)
        if value is not None and (not isinstance(value, str) or _HEX64.fullmatch(value) is None):
            raise bad(field)
    if data.get("task_from") not in (None, *TASK_SOURCES):
        raise bad("task_from")
    if data.get("config") is not None and not _is_path(data.get("config")):
        raise bad("config")
    author = data.get("author")
    if author is not None and (not isinstance(author, str) or not 0 < len(author) <= _MAX_AUTHOR_CHARS):
        raise bad("author")
    if "params" in data and (
        not isinstance(data["params"], Mapping) or params_digest(data["params"]) != data["params_digest"]
    ):
        raise bad("params")
    if task is not None and data.get("task_sha256") not in (None, task_digest(task)):
        raise bad("task_sha256")
    return dict(data)


def _is_path(value: Any) -> bool:
    """A repository-relative path as a record may name one (no absolute paths, no ``..``)."""
    return (
        isinstance(value, str)
        and 0 < len(value) <= 4096
        and not value.startswith("/")
        and "\0" not in value
        and ".." not in value.split("/")
    )


def note_text(existing: str | None, record: Mapping[str, Any]) -> str:
    """The git note of a commit with ``record`` added: one JSON record per line, the newest last,
    a record of the same PackRoot replaced, at most the last ``_MAX_NOTE_RECORDS`` kept."""
    kept = [r for r in records_in_note(existing or "") if r.get("pack_root") != record["pack_root"]]
    lines = [json.dumps(r, sort_keys=True, separators=(",", ":")) for r in [*kept, dict(record)]]
    return "\n".join(lines[-_MAX_NOTE_RECORDS:]) + "\n"


def records_in_note(text: str) -> list[dict[str, Any]]:
    """The JSON objects of a note, one per line (lines that are not one are skipped)."""
    found: list[dict[str, Any]] = []
    for line in text.splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict):
            found.append(data)
    return found
