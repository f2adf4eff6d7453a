"""Pack ↔ manifest (plain JSON), PackRoot validation, and the comparison behind ``--verify``.

A manifest holds the whole pack (every symbol with its node record and score components)
plus the request that produced it (mode, inputs, budget, format, commit), so a replay can
print exactly what the bot saw and a verification can recompute it at the same commit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from knowing_pr.errors import InvalidPackRoot, UsageError
from knowing_pr.model import Node, Pack, RankedFile, ScoredSymbol

__all__ = [
    "MANIFEST_VERSION",
    "diff_symbols",
    "manifest_of",
    "pack_from_manifest",
    "pr_request",
    "read_manifest_file",
    "validate_pack_root",
]

MANIFEST_VERSION = 1
_PACK_ROOT = re.compile(r"[0-9a-f]{64}")


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
    *, base: str | None, head: str, files: Sequence[str], budget: int, fmt: str, task: str | None
) -> dict[str, Any]:
    """The request of a ForPR pack as its manifest records it: what ``--verify`` rebuilds from.

    One definition for the CLI's packs and the Action's artifact, so both manifests agree."""
    text = " ".join((task or "").split())
    return {
        "mode": "pr",
        "base": base,
        "head": head,
        "files": list(files),
        "budget": budget,
        "format": fmt,
        "task": text or None,
    }


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
                "node": asdict(s.node),
                "score": s.score,
                "rwr": s.rwr,
                "authority": s.authority,
                "hub": s.hub,
                "distance": s.distance,
                "reason": s.reason,
                "is_seed": s.is_seed,
                "is_test": s.is_test,
                "components": [list(c) for c in s.components],
            }
            for s in pack.symbols
        ],
        "edges": [list(e) for e in pack.edges],
        "dropped": [list(d) for d in pack.dropped],
        "cochange": [list(c) for c in pack.cochange],
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
