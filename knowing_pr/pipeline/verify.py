"""A PackRoot → the recorded pack, or a recomputation at its commit compared with it.

Where the pack is recorded is ``records.find_pack``'s business (the store, git notes, a pull
request's comments). A whole manifest is printed as recorded; a request record (a note, a
comment's hidden line) is rebuilt from git objects at its commit, in a scratch store, and the
rebuilt pack counts only if it yields the same PackRoot. A record that carries only the
parameters' digest is rebuilt with the first settings that match it: this clone's, then the
``.knowing-pr.yml`` at the recorded commit; when neither does, the error names the digest. A PR
pack's parameters carry the file model's weights, which the index fits on the history up to the
commit: a digest-only record is matched with the weights the scratch store fits there (the fit
is a function of the commit's history and tree, whatever store built the pack).

What is printed: the pack, in ``--format`` (default: the format it was built in); with
``--verify``, the pack and then the verdict on its last line (``verified: …`` or ``mismatch: …``,
exit code 1); ``--quiet`` prints the verdict alone. A record whose rebuild does not match has no
pack to print: the verdict alone.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from knowing_pr.config import CONFIG_FILENAME, Settings, load_settings, settings_from_params
from knowing_pr.errors import ConfigError, ReplayMismatch, UsageError
from knowing_pr.graph.merkle import params_digest
from knowing_pr.model import Pack
from knowing_pr.pack import PackSpec, pack_params
from knowing_pr.pipeline.committed import committed_config_text
from knowing_pr.pipeline.output import check_output_file, write_text
from knowing_pr.pipeline.pr import PrRequest, build_files_pack, build_pr_pack
from knowing_pr.pipeline.records import FETCH_NOTES, FoundPack, find_pack, pull_request_task
from knowing_pr.pipeline.task import TaskRequest, build_task_pack
from knowing_pr.pipeline.workspace import Workspace
from knowing_pr.replay import (
    diff_symbols,
    manifest_of,
    pack_from_manifest,
    read_manifest_file,
    task_digest,
    validate_pack_root,
)

__all__ = ["ReplayRequest", "rebuild_found_pack", "replay"]


@dataclass(frozen=True)
class ReplayRequest:
    """What ``knowing-pr replay`` was asked."""

    pack_root: str
    verify: bool = False
    manifest: str | None = None  # a manifest file exported from another clone
    export: str | None = None  # write the manifest here
    fmt: str | None = None  # the format to print the pack in (``None``: the pack's own)
    pr: str | None = None  # a pull request number or URL whose comments may carry the request
    quiet: bool = False  # with ``verify``: the verdict alone, not the pack before it


def replay(ws: Workspace, request: ReplayRequest, *, env: Mapping[str, str] | None = None) -> tuple[int, str]:
    """Print a recorded pack; with ``verify``, recompute it at its commit and compare. Returns the
    exit code (1 on a mismatch) and the text. ``env`` (default: the process's) names the GitHub
    API, repository and token for ``request.pr``."""
    pack_root = validate_pack_root(request.pack_root)
    if request.export is not None:  # a bad --export or --pr is refused before any work
        check_output_file("--export", request.export, example="manifest.json")
    if request.pr is not None:
        from knowing_pr.github import check_pull_reference

        check_pull_reference(request.pr)
    if request.manifest is not None:
        return _replay_manifest(
            ws, pack_root, read_manifest_file(_checked_manifest(request.manifest)), request
        )
    found = find_pack(ws, pack_root, pr=request.pr, env=os.environ if env is None else env)
    if found.manifest is not None:
        return _replay_manifest(ws, pack_root, found.manifest, request)
    return _replay_record(ws, pack_root, found, request)


def _replay_manifest(
    ws: Workspace, pack_root: str, manifest: dict[str, Any], request: ReplayRequest
) -> tuple[int, str]:
    """A manifest's pack. Without ``verify`` it is printed as the file has it, with a warning that
    nothing vouches for it; with ``verify`` the pack is rebuilt from the code and the REBUILT pack
    is printed: the PackRoot covers the selection, not every line a manifest carries (its tests to
    run, call sites, commit), so an edited manifest must never be shown as verified."""
    from knowing_pr.render import render_pack

    recorded = pack_from_manifest(manifest)
    if recorded.pack_root != pack_root:
        raise UsageError(f"the manifest is for pack {recorded.pack_root[:12]}…, not {pack_root[:12]}…")
    if request.export:
        _export(request.export, manifest)
    fmt = request.fmt or _recorded_format(manifest.get("request"))
    if not request.verify:
        ws.warnings.append(
            "this is the manifest's content as written, unverified; "
            "--verify rebuilds the pack from the code and prints what the code yields"
        )
        return 0, render_pack(recorded, fmt)
    import tempfile

    settings = settings_from_params(ws.settings, manifest.get("params", {}))
    with tempfile.TemporaryDirectory(prefix="knowing-pr-verify-") as tmp:
        request_ = manifest.get("request", {}) or {"mode": manifest.get("mode")}
        recomputed = _rebuild(ws, request_, settings, Path(tmp) / "index.sqlite")
    shown = render_pack(recomputed, fmt)
    added, removed = diff_symbols(recorded, recomputed)
    if recomputed.pack_root == recorded.pack_root and not added and not removed:
        verdict = (
            f"verified: {pack_root} (commit {str(recomputed.commit)[:12]}, "
            f"{len(recomputed.symbols)} symbols; the pack above is rebuilt from the code)"
        )
        return 0, _with_verdict(shown, verdict, request.quiet)
    lines = [f"mismatch: recorded {pack_root}", f"          recomputed {recomputed.pack_root}"]
    lines += [f"+ {name}" for name in added] + [f"- {name}" for name in removed]
    if not added and not removed:
        lines.append("same symbols; the parameters or inputs differ")
    lines.append("the pack above is what the code yields now, not the manifest's")
    return 1, _with_verdict(shown, "\n".join(lines), request.quiet)


def _recorded_format(request: Any) -> str:
    """The format a manifest's request asked for (markdown when it does not say)."""
    from knowing_pr.render import FORMATS

    fmt = request.get("format") if isinstance(request, Mapping) else None
    return fmt if isinstance(fmt, str) and fmt in FORMATS else "markdown"


def _with_verdict(shown: str, verdict: str, quiet: bool) -> str:
    """The pack as printed, then the verdict on a line of its own (``quiet``: the verdict alone)."""
    if quiet:
        return verdict
    return (shown if shown.endswith("\n") else shown + "\n") + "\n" + verdict


def _replay_record(
    ws: Workspace, pack_root: str, found: FoundPack, request: ReplayRequest
) -> tuple[int, str]:
    """Rebuild a pack from its request record; it counts only if it yields the same PackRoot."""
    import tempfile

    record = found.record or {}
    _require_commits(ws, record)
    with tempfile.TemporaryDirectory(prefix="knowing-pr-verify-") as tmp:
        scratch = Path(tmp) / "index.sqlite"
        settings, settings_source = _settings_for(ws, record, scratch)
        return _compare_rebuilt(ws, pack_root, found, request, settings, settings_source, scratch)


def _compare_rebuilt(
    ws: Workspace,
    pack_root: str,
    found: FoundPack,
    request: ReplayRequest,
    settings: Settings,
    settings_source: str,
    scratch: Path,
) -> tuple[int, str]:
    from knowing_pr.render import render_pack

    record = found.record or {}
    rebuilt_request = _rebuilt_request(found)
    pack = _rebuild(ws, rebuilt_request, settings, scratch)
    if request.export:
        _export(request.export, manifest_of(pack, rebuilt_request))
    if pack.pack_root != pack_root:
        return 1, "\n".join(
            [
                f"mismatch: recorded {pack_root}",
                f"          rebuilt  {pack.pack_root}",
                f"from the request in {found.source}, with {settings_source}:",
                f"the code at {record['head'][:12]} no longer yields the recorded pack "
                "(or the tool's version ranks differently)",
            ]
        )
    shown = render_pack(pack, request.fmt or str(record["format"]))
    if request.verify:
        verdict = (
            f"verified: {pack_root} (commit {record['head'][:12]}, {len(pack.symbols)} symbols; "
            f"rebuilt from the request in {found.source}, with {settings_source})"
        )
        return 0, _with_verdict(shown, verdict, request.quiet)
    return 0, shown


def _rebuilt_request(found: FoundPack) -> dict[str, Any]:
    """The request a record names, as ``_rebuild`` takes it (the task text rebuilt if need be)."""
    record = found.record or {}
    return {
        "mode": record["mode"],
        "base": record.get("base"),
        "head": record["head"],
        "files": list(record.get("files") or []),
        "budget": record["budget"],
        "format": record["format"],
        "task": _task_text(found),
        **({"author": record["author"]} if record.get("author") else {}),
    }


def rebuild_found_pack(ws: Workspace, pack_root: str, found: FoundPack) -> Pack:
    """The pack ``found`` records (a manifest or a request record), rebuilt from the code at its
    commit in a scratch store, as ``replay --verify`` rebuilds it; ``ReplayMismatch`` (exit code
    1) when the rebuild yields another PackRoot, ``UsageError`` when it cannot be rebuilt here (a
    commit missing, other settings, a task text not recorded)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="knowing-pr-verify-") as tmp:
        scratch = Path(tmp) / "index.sqlite"
        if found.manifest is not None:
            manifest = found.manifest
            settings = settings_from_params(ws.settings, manifest.get("params", {}))
            request_ = manifest.get("request", {}) or {"mode": manifest.get("mode")}
            source = f"the manifest in {found.source}"
        else:
            record = found.record or {}
            _require_commits(ws, record)
            settings, _ = _settings_for(ws, record, scratch)
            request_ = _rebuilt_request(found)
            source = f"the request in {found.source}"
        pack = _rebuild(ws, request_, settings, scratch)
    if pack.pack_root != pack_root:
        recorded = pack_from_manifest(found.manifest) if found.manifest is not None else None
        added, removed = diff_symbols(recorded, pack) if recorded is not None else ([], [])
        raise ReplayMismatch(
            f"pack {pack_root[:12]}… does not replay: rebuilt from {source}, the code yields "
            f"{pack.pack_root[:12]}… (the code changed, or the tool's version ranks differently)",
            added,
            removed,
        )
    return pack


def _require_commits(ws: Workspace, record: Mapping[str, Any]) -> None:
    for role in ("head", "base"):
        sha = record.get(role)
        if sha and not ws.repo.has_commit(sha):
            raise UsageError(
                f"the pack's {role} commit {sha[:12]} is not in this clone",
                hint=f"fetch it (git fetch origin {sha}, or for a pull request: "
                "git fetch origin pull/N/head), then replay again",
            )


def _task_text(found: FoundPack) -> str | None:
    """The record's task text, or, when it carries only the text's digest, the text rebuilt from
    where it came from and checked against that digest."""
    record = found.record or {}
    if record.get("task"):
        return str(record["task"])
    digest = record.get("task_sha256")
    if not digest:
        return None
    text = pull_request_task(found)
    if text is not None and task_digest(text) == digest:
        return text
    source = "the pull request's title and body" if record.get("task_from") == "pr" else "a --task argument"
    raise UsageError(
        f"the pack's task text is not recorded here, only its sha256 {digest} (from {source})",
        hint="the pull request's title or body has changed since the pack was built"
        if text is not None
        else f"fetch the git notes ({FETCH_NOTES}) or pass --manifest FILE: both keep the text",
    )


def _settings_for(ws: Workspace, record: Mapping[str, Any], scratch: Path) -> tuple[Settings, str]:
    """The settings to rebuild with: the recorded parameters when the record has them, else the
    first candidate whose parameters' digest is the recorded one (a PR pack's with the file
    model's weights fitted in the ``scratch`` store at the recorded commit)."""
    if isinstance(record.get("params"), Mapping):
        return settings_from_params(ws.settings, record["params"]), "the recorded parameters"
    wanted = str(record["params_digest"])
    head = str(record["head"])
    config = str(record.get("config") or CONFIG_FILENAME)
    tried: list[str] = []
    for label, candidate in _candidate_settings(ws, head, config, record.get("base")):
        settings = candidate.with_budget(int(record["budget"]))
        if record["mode"] == "pr":
            settings = _with_fitted_weights(ws, settings, head, scratch)
        digest = params_digest(_expected_params(settings, str(record["mode"]), str(record["format"])))
        if digest == wanted:
            return settings, label
        tried.append(f"{label}: {digest}")
    raise UsageError(
        f"the pack was built with other settings: its parameters' digest is {wanted}, and only the "
        "digest is recorded here; the settings at hand give:\n" + "\n".join(f"  - {t}" for t in tried),
        hint="replay with the settings the pack was built with (--config FILE: the .knowing-pr.yml "
        f"the Action read), or get the full parameters: fetch the git notes ({FETCH_NOTES}) or pass "
        "--manifest FILE with the manifest the Action uploaded",
    )


def _with_fitted_weights(ws: Workspace, settings: Settings, head: str, scratch: Path) -> Settings:
    """``settings`` with the file model's weights pinned as a PR pack built at ``head`` pins
    them: the scratch store indexed at ``head`` (the rebuild reuses it)."""
    from knowing_pr.index import index_commit
    from knowing_pr.rank.files import with_file_weights
    from knowing_pr.store.opening import open_store

    index_commit(ws.repo, settings, rev=head, db_path=scratch)
    store, _ = open_store(scratch)
    try:
        return with_file_weights(store, settings)
    finally:
        store.close()


def _candidate_settings(
    ws: Workspace, head: str, config: str, base: str | None = None
) -> list[tuple[str, Settings]]:
    """This clone's settings, then the config file at the recorded commit (or the defaults), then
    at the recorded base (the Action reads the base's); each distinct settings once."""
    candidates = [("this clone's settings", ws.settings)]
    commits = [head] + ([base] if base is not None and base != head and ws.repo.has_commit(base) else [])
    for commit in commits:
        found = _committed_candidate(ws, commit, config)
        if found is not None and all(found[1] != settings for _, settings in candidates[1:]):
            candidates.append(found)
    return candidates


def _committed_candidate(ws: Workspace, commit: str, config: str) -> tuple[str, Settings] | None:
    try:  # a settings file committed as a link or a submodule is never read
        text = committed_config_text(ws.repo, commit, config)
        if text is None:
            return (f"the default settings (no {config} at {commit[:12]})", Settings())
        return (f"{config} at {commit[:12]}", load_settings(text=text))
    except ConfigError:
        return None


def _expected_params(settings: Settings, mode: str, fmt: str) -> dict[str, object]:
    """The parameters a pack of ``mode`` built with ``settings`` records (as ``pipeline.pr`` builds
    its PackSpec: a PR pack caps tests at ``pack.test_share``, a files pack does not)."""
    test_share = settings.pack.test_share if mode == "pr" else 0.0
    spec = PackSpec(mode, {}, {}, fmt, None, "", test_share=test_share)
    return pack_params(settings, spec)


def _rebuild(ws: Workspace, request: Mapping[str, Any], settings: Settings, db: Path) -> Pack:
    """Rebuild the pack at its recorded commit in the scratch store ``db`` (the working tree and
    the clone's own store are not touched)."""
    scratch = Workspace(ws.repo, settings, db)
    mode = request.get("mode")
    fmt = request.get("format", "markdown")
    if mode == "pr":
        pr = PrRequest(
            base=request.get("base"),
            head=request.get("head"),
            files=tuple(request.get("files") or ()),
            task=request.get("task"),
            fmt=fmt,
            author=request.get("author"),
        )
        return build_pr_pack(scratch, pr)
    if mode == "files":
        return build_files_pack(scratch, request.get("files", []), fmt=fmt, at=request.get("head"))
    if mode == "task":
        if request.get("error_sha256"):
            raise UsageError(
                "this task pack was seeded from an error log, which is not recorded",
                hint="run the task again with the same --error-file to compare",
            )
        task = TaskRequest(
            str(request.get("task") or ""), diff_rev=request.get("diff"), fmt=fmt, at=request.get("head")
        )
        return build_task_pack(scratch, task).pack
    raise UsageError(f"cannot verify a pack of mode {mode!r}")


def _export(path: str, manifest: Mapping[str, Any]) -> None:
    import json

    target = check_output_file("--export", path, example="manifest.json")
    write_text("--export", target, json.dumps(manifest, indent=2, sort_keys=True))


def _checked_manifest(value: str) -> str:
    path = Path(value)
    if not path.exists():
        raise UsageError(f"--manifest {value}: no such file")
    if not path.is_file():
        raise UsageError(f"--manifest {value}: is {'a directory' if path.is_dir() else 'not a regular file'}")
    return value
