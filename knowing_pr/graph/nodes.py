"""Parsed files → nodes with stable ids; references kept for re-resolution without re-parsing."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from knowing_pr.graph.paths import file_stem, module_name, test_subject_stem
from knowing_pr.model import Fact, Import, Node, ParsedFile, Reference, SymbolKind, node_id

__all__ = ["FileRefs", "build_nodes", "decode_refs", "encode_refs", "file_refs", "ref_names", "shared_refs"]


def build_nodes(parsed: ParsedFile, source: bytes, blob_id: str) -> list[Node]:
    """One module node per file plus one node per definition (duplicates get ``#n``)."""
    module_qn = module_name(parsed.path)
    nodes = [
        Node(
            id=node_id(parsed.path, module_qn, SymbolKind.MODULE),
            path=parsed.path,
            name=file_stem(parsed.path),
            qualified_name=module_qn,
            kind=SymbolKind.MODULE,
            language=parsed.language,
            start_line=1,
            end_line=max(parsed.line_count, 1),
            signature="",
            doc="",
            content_hash=blob_id,
        )
    ]
    seen: dict[tuple[str, str], int] = {}
    for d in parsed.definitions:
        qn = f"{module_qn}.{d.qualified_name}"
        key = (qn, d.kind)
        occurrence = seen.get(key, 0) + 1
        seen[key] = occurrence
        ident_qn = qn if occurrence == 1 else f"{qn}#{occurrence}"
        body = source[d.start_byte : d.end_byte]
        nodes.append(
            Node(
                id=node_id(parsed.path, ident_qn, d.kind),
                path=parsed.path,
                name=d.name,
                qualified_name=qn,
                kind=d.kind,
                language=parsed.language,
                start_line=d.start_line,
                end_line=d.end_line,
                signature=d.signature,
                doc=d.doc,
                content_hash=hashlib.sha256(body).hexdigest()[:32],
            )
        )
    return nodes


@dataclass(slots=True)
class FileRefs:
    """What the resolver needs of a file besides its nodes."""

    path: str
    language: str
    references: list[Reference] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)


def file_refs(parsed: ParsedFile) -> FileRefs:
    return FileRefs(parsed.path, parsed.language, parsed.references, parsed.imports, parsed.facts)


def encode_refs(parsed: ParsedFile) -> str:
    return json.dumps(
        {
            "language": parsed.language,
            "refs": [[r.kind, r.name, r.line, r.scope, r.qualifier, r.hint] for r in parsed.references],
            "imports": [[i.module, [list(n) for n in i.names], i.line] for i in parsed.imports],
            "facts": [[f.kind, f.scope, f.name, list(f.values)] for f in parsed.facts],
        },
        separators=(",", ":"),
        ensure_ascii=False,
    )


def decode_refs(path: str, data: str) -> FileRefs:
    raw = json.loads(data)
    return FileRefs(
        path=path,
        language=raw["language"],
        references=[Reference(k, n, line, s, q, h) for k, n, line, s, q, h in raw["refs"]],
        imports=[Import(m, tuple((a, b) for a, b in names), line) for m, names, line in raw["imports"]],
        facts=[Fact(k, s, n, tuple(v)) for k, s, n, v in raw["facts"]],
    )


#: the largest refs text ``shared_refs`` keeps (a bigger file's is decoded each time)
SHARED_REFS_MAX_CHARS = 256 << 10


def shared_refs(path: str, data: str) -> FileRefs:
    """``decode_refs`` remembered per (path, text), for readers that never change what they get:
    a warm server decodes the same callers' and tests' files for change after change. At most
    128 files of at most ``SHARED_REFS_MAX_CHARS`` each are kept."""
    if len(data) > SHARED_REFS_MAX_CHARS:
        return decode_refs(path, data)
    return _kept_refs(path, data)


@functools.lru_cache(maxsize=128)
def _kept_refs(path: str, data: str) -> FileRefs:
    return decode_refs(path, data)


def _import_tail_names(module: str) -> list[str]:
    cleaned = module.replace("::", "/").replace(".", "/").rstrip("/")
    parts = [p for p in cleaned.split("/") if p and p not in ("..", "~", "@")]
    out = [parts[-1]] if parts else []
    if out and "." in module.rsplit("/", 1)[-1]:  # "./x.js" → x
        out.append(module.rsplit("/", 1)[-1].split(".", 1)[0])
    return out


def ref_names(path: str, refs: FileRefs, nodes: Sequence[Node]) -> set[str]:
    """Names whose definitions can change how this file resolves (for ``affected_paths``)."""
    names = {r.name for r in refs.references}
    names.update(r.qualifier.replace("::", ".").split(".")[-1] for r in refs.references if r.qualifier)
    for imp in refs.imports:
        names.update(_import_tail_names(imp.module))
        names.update(a for a, _ in imp.names if a not in ("*", "default"))
    module_qn = module_name(path)
    for n in nodes:
        if n.kind != SymbolKind.MODULE and n.qualified_name.startswith(module_qn + "."):
            names.update(n.qualified_name[len(module_qn) + 1 :].split("."))
    subject = test_subject_stem(path)
    if subject:
        names.add(subject)
    from knowing_pr.graph.deps import dependency_names, reverse_entries

    names |= dependency_names(refs)
    names |= reverse_entries(refs)
    names.discard("")
    return names
