"""A store path → an open ``Store``; a damaged file is moved aside and replaced by a new, empty
store (the index run that follows rebuilds it), with a clear error when that cannot be done."""

from __future__ import annotations

from pathlib import Path

from knowing_pr.errors import StoreCorrupt, StoreError
from knowing_pr.store import Store
from knowing_pr.store.recovery import move_aside

__all__ = ["move_aside_or_fail", "open_store"]


def open_store(db_path: Path) -> tuple[Store, str | None]:
    """Open the store; a corrupt one is moved aside and replaced (returns where it went)."""
    try:
        return Store.open(db_path), None
    except StoreCorrupt:
        moved = move_aside_or_fail(db_path)
        return Store.open(db_path), moved.name


def move_aside_or_fail(db_path: Path) -> Path:
    """``move_aside``, with a clear error when the directory is read-only."""
    try:
        return move_aside(db_path)
    except OSError as exc:
        raise StoreError(
            f"the store {db_path} cannot be opened or replaced: {exc.strerror}",
            hint="make its directory writable, or point KNOWING_PR_DB / --db at a writable place",
        ) from None
