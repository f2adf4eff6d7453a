"""Pack + TaskAnalysis + the indexed commit's blobs → a Context-style pack folder (seed 001,
"Stage 5: Composition"):

=============  ==========================================================
PACK.md        task, analysis, files, code excerpts (one prompt)
TASK.md        keywords by tier, entities, change type, confidence, hints
FILES.md       files with scores and the reasons they are in
GRAPH.md       an ASCII dependency graph between the packed files
excerpts/      one file per packed file with its symbols' source lines
ctx.json       machine-readable manifest
ctx.tgz        tar.gz of all of the above
=============  ==========================================================

This module composes the members; ``pipeline/folder.py`` reads the sources (git blobs of the
pack's commit, never the working tree) and writes them safely. Excerpt names are built from
``[A-Za-z0-9._-]`` only; the other members have fixed relative names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from knowing_pr.errors import UsageError
from knowing_pr.model import Pack, ScoredSymbol
from knowing_pr.render.safety import code_block, inline_code, one_line

if TYPE_CHECKING:
    from knowing_pr.task.analysis import TaskAnalysis

__all__ = [
    "ARTEFACTS",
    "EXCERPT_NAME",
    "FolderLimits",
    "compose_pack_folder",
    "excerpt_name",
    "pack_folder_files",
]

ARTEFACTS = ("PACK.md", "TASK.md", "FILES.md", "GRAPH.md", "excerpts", "ctx.json", "ctx.tgz")
EXCERPT_NAME = re.compile(r"\d{3}-[A-Za-z0-9._-]{1,160}\.txt")
_LANG_OF_EXT = {
    "py": "python",
    "js": "javascript",
    "mjs": "javascript",
    "ts": "typescript",
    "tsx": "tsx",
    "go": "go",
    "rs": "rust",
    "java": "java",
    "cs": "csharp",
    "rb": "ruby",
}


@dataclass(frozen=True)
class FolderLimits:
    max_lines_per_file: int = 300
    context_lines: int = 0


def excerpt_name(position: int, path: str) -> str:
    """``007-src__auth__session.py.txt``: numbered, flat, no separators or dot-dot."""
    flat = re.sub(r"[^A-Za-z0-9._-]+", "_", path.replace("/", "__")).strip("._") or "file"
    flat = flat.replace("..", "_")[:150]
    name = f"{position:03d}-{flat}.txt"
    if not EXCERPT_NAME.fullmatch(name):
        raise UsageError(f"cannot build a safe excerpt name for {path!r}")
    return name


@dataclass
class _File:
    path: str
    symbols: list[ScoredSymbol]

    @property
    def score(self) -> float:
        return max(s.score for s in self.symbols)


def _files_of(pack: Pack) -> list[_File]:
    by_path: dict[str, list[ScoredSymbol]] = {}
    for sym in pack.symbols:
        by_path.setdefault(sym.node.path, []).append(sym)
    files = [
        _File(p, sorted(syms, key=lambda s: (s.node.start_line, s.node.id))) for p, syms in by_path.items()
    ]
    return sorted(files, key=lambda f: (-f.score, f.path))


def _merged_ranges(symbols: Iterable[ScoredSymbol], context: int) -> list[tuple[int, int]]:
    ranges = sorted((max(s.node.start_line - context, 1), s.node.end_line + context) for s in symbols)
    merged: list[tuple[int, int]] = []
    for start, end in ranges:
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _excerpt_lines(source: list[str], ranges: Sequence[tuple[int, int]], max_lines: int) -> list[str]:
    out: list[str] = []
    width = len(str(max((e for _, e in ranges), default=1)))
    for start, end in ranges:
        if out:
            out.append("...")
        for number in range(start, min(end, len(source)) + 1):
            if len(out) >= max_lines:
                out.append(f"... (cut at {max_lines} lines)")
                return out
            out.append(f"{number:>{width}} | {source[number - 1]}")
    return out


def _graph_text(files: Sequence[_File], edges: Mapping[tuple[str, str], set[str]]) -> str:
    lines = ["# Dependency graph", "", "Files of the pack and how they depend on each other", ""]
    body: list[str] = []
    for file in files:
        body.append(file.path)
        targets = sorted((b, kinds) for (a, b), kinds in edges.items() if a == file.path)
        if not targets:
            body.append("└── (no dependencies on other packed files)")
        for position, (target, kinds) in enumerate(targets):
            branch = "└──" if position == len(targets) - 1 else "├──"
            body.append(f"{branch} {', '.join(sorted(kinds))} → {target}")
        body.append("")
    lines.append(code_block("\n".join(body).rstrip("\n"), "text"))
    return "\n".join(lines) + "\n"


def _symbol_reason(sym: ScoredSymbol, analysis: TaskAnalysis) -> str:
    found = analysis.seed_summary(sym.node.id)
    return f"seed: {found}" if sym.is_seed and found else sym.reason


def _list(items: Sequence[str]) -> str:
    return ", ".join(inline_code(i, 200) for i in items) if items else "-"


def _task_text(analysis: TaskAnalysis, pack: Pack) -> str:
    data = analysis.as_dict()
    kw = data["keywords"]
    entities = data["entities"]
    lines = [
        "# Task analysis",
        "",
        "## Task",
        "",
        code_block(analysis.task, "text"),
        "",
        f"- Change type: {analysis.change_type}",
        f"- Confidence: {analysis.confidence.score:.2f} ({analysis.confidence.level})",
        f"- About tests: {'yes (no test penalty)' if analysis.about_tests else 'no (tests penalised)'}",
        f"- PackRoot: {inline_code(pack.pack_root, 100)}",
        "",
        "## Keywords",
        "",
        f"- Exact: {_list(kw['exact'])}",
        f"- Compounds: {_list(kw['compounds'])}",
        f"- Components: {_list(kw['components'])}",
        f"- Path terms: {_list(data['path_terms'])}",
        "",
        "## Entities",
        "",
    ]
    for key in ("files", "classes", "methods", "routes", "error_codes"):
        lines.append(f"- {key.replace('_', ' ').capitalize()}: {_list(entities[key])}")
    lines += ["", "## Equivalence classes", ""]
    lines += [
        f"- {m['name']} ({m['source']}): {_list(m['phrases'])}" for m in data["equivalence_classes"]
    ] or ["- none matched"]
    if data["frames"]:
        lines += ["", "## Stack frames", ""]
        for frame in data["frames"]:
            where = frame["indexed_path"] or "not in the repository"
            symbol = frame["symbol"] or "-"
            lines.append(
                f"- {inline_code(frame['path'] + ':' + str(frame['line']), 300)} "
                f"{inline_code(frame['function'] or '?', 100)} → "
                f"{inline_code(where, 300)} {inline_code(symbol, 300)}"
            )
    lines += ["", "## Seeds", ""]
    for seed in data["seeds"]:
        how = analysis.seed_summary(seed["id"]) or "path context (supplemental)"
        lines.append(
            f"- {inline_code(seed['symbol'], 300)} weight {seed['restart_weight']:.2f} — "
            f"{one_line(how)[:300]}"
        )
    if not data["seeds"]:
        lines.append("- none: nothing in the index matched the task")
    lines += ["", "## Suggestions", ""]
    lines += [f"- {s}" for s in analysis.confidence.suggestions] or ["- none: the task is specific enough"]
    return "\n".join(lines) + "\n"


def _files_text(files: Sequence[_File], analysis: TaskAnalysis, names: Mapping[str, str]) -> str:
    lines = ["# Files", "", "| # | File | Score | Symbols | Why |", "|---|------|-------|---------|-----|"]
    for position, file in enumerate(files, 1):
        reasons = sorted({_symbol_reason(s, analysis) for s in file.symbols})
        why = "; ".join(one_line(r)[:200] for r in reasons).replace("|", "\\|")
        symbols = ", ".join(s.node.name for s in file.symbols).replace("|", "\\|")
        lines.append(
            f"| {position} | {inline_code(file.path, 300)} | {file.score:.3f} | "
            f"{one_line(symbols)[:400]} | {why} |"
        )
    lines += ["", "Excerpts: " + (", ".join(f"excerpts/{names[f.path]}" for f in files) or "none")]
    return "\n".join(lines) + "\n"


def _pack_text(
    pack: Pack,
    analysis: TaskAnalysis,
    files: Sequence[_File],
    excerpts: Mapping[str, list[str]],
) -> str:
    keywords = list(analysis.keywords.primary())[:12] + list(analysis.keywords.components)[:12]
    lines = [
        "# Context Pack",
        "",
        "## Task",
        "",
        code_block(analysis.task, "text"),
        "",
        "## Analysis",
        "",
        f"- Change type: {analysis.change_type} · confidence {analysis.confidence.score:.2f} "
        f"({analysis.confidence.level})",
        f"- Keywords: {_list(keywords)}",
        f"- Equivalence classes: {', '.join(m.cls.name for m in analysis.equivalence) or '-'}",
        f"- {len(pack.symbols)} symbols in {len(files)} files · "
        f"{pack.tokens_used:,} / {pack.token_budget:,} tokens · "
        f"commit {inline_code((pack.commit or '')[:12], 40)}",
        "",
        "## Files",
        "",
    ]
    for file in files:
        reasons = sorted({_symbol_reason(s, analysis) for s in file.symbols})
        lines.append(
            f"- {inline_code(file.path, 300)} — score {file.score:.3f}; {one_line('; '.join(reasons))[:300]}"
        )
    lines += ["", "## Code", ""]
    for file in files:
        ext = file.path.rsplit(".", 1)[-1] if "." in file.path else ""
        lines += [
            f"### {inline_code(file.path, 300)}",
            "",
            code_block("\n".join(excerpts[file.path]), _LANG_OF_EXT.get(ext, "")),
            "",
        ]
    lines.append(f"PackRoot {inline_code(pack.pack_root, 100)}")
    return "\n".join(lines) + "\n"


def _manifest(
    pack: Pack,
    analysis: TaskAnalysis,
    files: Sequence[_File],
    names: Mapping[str, str],
    edges: Mapping[tuple[str, str], set[str]],
) -> dict[str, Any]:
    return {
        "version": 1,
        "pack_root": pack.pack_root,
        "mode": pack.mode,
        "commit": pack.commit,
        "graph_root": pack.graph_root,
        "token_budget": pack.token_budget,
        "tokens_used": pack.tokens_used,
        "analysis": analysis.as_dict(),
        "files": [
            {
                "path": f.path,
                "score": round(f.score, 6),
                "excerpt": f"excerpts/{names[f.path]}",
                "symbols": [
                    {
                        "id": s.node.id,
                        "name": s.node.name,
                        "qualified_name": s.node.qualified_name,
                        "kind": s.node.kind,
                        "start_line": s.node.start_line,
                        "end_line": s.node.end_line,
                        "score": round(s.score, 6),
                        "reason": s.reason,
                        "is_seed": s.is_seed,
                        "found_by": analysis.seed_summary(s.node.id),
                    }
                    for s in f.symbols
                ],
            }
            for f in files
        ],
        "graph": [{"from": a, "to": b, "kinds": sorted(k)} for (a, b), k in sorted(edges.items())],
        "artefacts": list(ARTEFACTS),
    }


def pack_folder_files(pack: Pack) -> list[str]:
    """The files a pack folder shows, best first (what its sources and edges are read for)."""
    return [f.path for f in _files_of(pack)]


def compose_pack_folder(
    pack: Pack,
    analysis: TaskAnalysis,
    sources: Mapping[str, list[str]],
    edges: Mapping[tuple[str, str], set[str]],
    *,
    limits: FolderLimits | None = None,
) -> list[tuple[str, bytes]]:
    """The folder's members (relative name, bytes) but the archive: one excerpt per packed file
    (``sources[path]``: its lines at the pack's commit) and the documents; ``edges``: (from file,
    to file) → edge kinds between the packed files."""
    chosen = limits or FolderLimits()
    files = _files_of(pack)
    names = {f.path: excerpt_name(i, f.path) for i, f in enumerate(files, 1)}
    excerpts = {
        f.path: _excerpt_lines(
            sources.get(f.path, []),
            _merged_ranges(f.symbols, chosen.context_lines),
            chosen.max_lines_per_file,
        )
        for f in files
    }
    members: list[tuple[str, bytes]] = []
    for file in files:
        header = [f"# {file.path} @ {(pack.commit or '')[:12]}"]
        header += [
            f"# {s.node.qualified_name} ({s.node.kind}) lines {s.node.start_line}-{s.node.end_line}, "
            f"score {s.score:.3f}, {_symbol_reason(s, analysis)}"
            for s in file.symbols
        ]
        text = "\n".join([*(one_line(h) for h in header), "", *excerpts[file.path]]) + "\n"
        members.append((f"excerpts/{names[file.path]}", text.encode("utf-8", "replace")))
    documents = {
        "PACK.md": _pack_text(pack, analysis, files, excerpts),
        "TASK.md": _task_text(analysis, pack),
        "FILES.md": _files_text(files, analysis, names),
        "GRAPH.md": _graph_text(files, edges),
        "ctx.json": json.dumps(_manifest(pack, analysis, files, names, edges), indent=2, sort_keys=True)
        + "\n",
    }
    members += [(name, text.encode("utf-8", "replace")) for name, text in documents.items()]
    return members
