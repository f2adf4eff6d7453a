"""A task pack + its analysis → the pack folder on disk (``task --out-dir``): the sources and the
edges between the packed files read, the members composed (``render/folder.py``), then written
safely: the output directory must not be a symlink; every file is written under it with
``writing.write_atomic`` (a temporary file, then ``os.replace``), its real path checked to stay
inside; a symlink planted at any member's name refuses the whole folder before a file is
written (the rule of every output, ``knowing_pr/writing.py``); stale excerpts of an earlier pack
are removed. The archive ``ctx.tgz``
is deterministic (mtime 0, uid/gid 0, sorted members)."""

from __future__ import annotations

import gzip
import io
import os
import tarfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from knowing_pr.errors import UsageError
from knowing_pr.git import GitRepo
from knowing_pr.model import Edge, EdgeKind, Pack
from knowing_pr.render.folder import EXCERPT_NAME, FolderLimits, compose_pack_folder, pack_folder_files
from knowing_pr.store import Store
from knowing_pr.task import TaskAnalysis
from knowing_pr.writing import write_atomic

__all__ = ["write_pack_folder"]


def write_pack_folder(
    repo: GitRepo,
    store: Store,
    pack: Pack,
    analysis: TaskAnalysis,
    out_dir: str | os.PathLike[str],
    *,
    limits: FolderLimits | None = None,
) -> list[str]:
    """Write the seven artefacts into ``out_dir`` (created if missing); returns relative names."""
    root = _prepare_dir(Path(out_dir))
    paths = pack_folder_files(pack)
    blobs = {e.path: e.blob_id for e in repo.tree_entries(pack.commit)} if pack.commit and paths else {}
    sources = {path: _source_of(repo, blobs, path) for path in paths}
    members = compose_pack_folder(pack, analysis, sources, _file_edges(store, paths), limits=limits)
    _refuse_planted_links(root, [name for name, _ in members] + ["ctx.tgz"])
    _remove_stale_excerpts(root / "excerpts", {name.removeprefix("excerpts/") for name, _ in members})
    for name, data in members:
        _write(root, name, data)
    _write(root, "ctx.tgz", _tarball(members))
    return sorted([name for name, _ in members] + ["ctx.tgz"])


def _source_of(repo: GitRepo, blobs: Mapping[str, str], path: str) -> list[str]:
    blob = blobs.get(path)
    if blob is None:
        return []
    return repo.read_blob(blob).decode("utf-8", "replace").replace("\r\n", "\n").split("\n")


def _file_edges(store: Store, paths: Sequence[str]) -> dict[tuple[str, str], set[str]]:
    """(from file, to file) → edge kinds, between the packed files (structure, not history)."""
    path_of = {n.id: n.path for n in store.nodes_in_paths(paths)}
    edges: dict[tuple[str, str], set[str]] = {}
    skip = {EdgeKind.CONTAINS, EdgeKind.MEMBER_OF, EdgeKind.CO_CHANGED_WITH}
    touching: list[Edge] = store.edges_touching(path_of) if path_of else []
    for edge in touching:
        a, b = path_of.get(edge.source), path_of.get(edge.target)
        if a and b and a != b and edge.kind not in skip:
            edges.setdefault((a, b), set()).add(edge.kind.label)
    return edges


def _prepare_dir(out_dir: Path) -> Path:
    if out_dir.is_symlink():
        raise UsageError(
            f"refusing to write into {out_dir}: it is a symbolic link",
            hint="pass a real directory (it is created when missing)",
        )
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"--out-dir {out_dir} exists and is not a directory")
    out_dir.mkdir(parents=True, exist_ok=True)
    excerpts = out_dir / "excerpts"
    if excerpts.is_symlink() or (excerpts.exists() and not excerpts.is_dir()):
        raise UsageError(f"refusing to write into {excerpts}: it is not a plain directory")
    excerpts.mkdir(exist_ok=True)
    return Path(os.path.realpath(out_dir))


def _contained(root: Path, relative: str) -> Path:
    parts = relative.split("/")
    if not relative or relative.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise UsageError(f"unsafe output name {relative!r}")
    target = root.joinpath(*parts)
    parent = Path(os.path.realpath(target.parent))
    if parent != root and root not in parent.parents:
        raise UsageError(f"refusing to write {relative!r} outside {root}")
    return target


def _refuse_planted_links(root: Path, names: Sequence[str]) -> None:
    """Every member's name is checked before the first write: no half-written folder."""
    for relative in names:
        target = _contained(root, relative)
        if target.is_symlink():
            raise UsageError(
                f"refusing to write {relative} in {root}: it is a symbolic link"
                " (knowing-pr never writes through one)",
                hint="remove the link, or name an empty --out-dir",
            )


def _write(root: Path, relative: str, data: bytes) -> None:
    write_atomic(_contained(root, relative), [data], mode=0o644)


def _tarball(members: Sequence[tuple[str, bytes]]) -> bytes:
    raw = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for name, data in sorted(members):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            info.mtime = 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    return raw.getvalue()


def _remove_stale_excerpts(excerpts_dir: Path, keep: set[str]) -> None:
    for entry in excerpts_dir.iterdir():
        if EXCERPT_NAME.fullmatch(entry.name) and entry.name not in keep and not entry.is_dir():
            entry.unlink()
