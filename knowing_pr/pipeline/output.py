"""An output path given on the command line → checked before any work, then written atomically.

``check_output_file`` and ``check_output_dir`` refuse, with one ``UsageError`` naming the
option and the path, what cannot work: an empty path, a missing directory, a directory where a
file is expected (and the reverse), a place where no file can be created (a read-only file
system, ``/proc``, no permission). They probe by creating and removing a temporary file, so
the answer is the file system's, not a guess from permission bits. A symbolic link at the
final component is refused (exit 2), whatever it points to: a repository can commit
``CONTEXT.md -> ../.venv/…/x.pth`` (``knowing_pr/writing.py`` holds the rule). ``write_text``
and ``write_lines`` write through ``writing.write_atomic``: a temporary file in the directory
the path names, then ``os.replace``, so a failure never leaves half a file. Character devices
and pipes (``/dev/stdout``, a FIFO) are written in place: there is nothing to replace.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable
from pathlib import Path

from knowing_pr.errors import KnowingPRError, UsageError
from knowing_pr.writing import is_stream_name, write_atomic

__all__ = [
    "check_creatable",
    "check_output_dir",
    "check_output_file",
    "write_error",
    "write_lines",
    "write_text",
]

#: a write that fails with one of these is the path's fault (exit 2), any other (a full disk,
#: an I/O error) is a runtime failure (exit 1)
_INPUT_ERRNOS = frozenset(
    {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOENT, errno.ENOTDIR, errno.EISDIR, errno.ELOOP}
)


def check_output_file(option: str, value: str, *, example: str = "pack.md") -> Path:
    """``value`` as a file that can be written: never a symbolic link (``/dev/stdout`` and
    ``/dev/fd/N`` aside); ``example`` is the file name the hint suggests."""
    if not value:
        raise UsageError(f"{option}: the path is empty", hint=f"name a file, e.g. {option} {example}")
    path = Path(value)
    if os.path.islink(value) and not is_stream_name(value):
        raise _link_refused(option, value)
    if path.is_dir():
        raise UsageError(
            f"{option} {value}: is a directory",
            hint=f"name a file, e.g. {option} {Path(value) / example}",
        )
    if path.exists() and not path.is_file():
        return path  # a device or a pipe: written in place
    parent = path.parent
    if not parent.exists():
        raise UsageError(
            f"{option} {value}: the directory {parent} does not exist",
            hint=f"create it first: mkdir -p {parent}",
        )
    if not parent.is_dir():
        raise UsageError(f"{option} {value}: {parent} is not a directory")
    _probe(option, value, parent)
    return path


def check_output_dir(option: str, value: str) -> Path:
    """``value`` as a directory that exists or can be created, and can be written into."""
    if not value:
        raise UsageError(f"{option}: the path is empty", hint=f"name a directory, e.g. {option} pack")
    path = Path(value)
    if path.is_symlink():
        raise UsageError(f"{option} {value}: is a symbolic link", hint="name a real directory")
    if path.exists() and not path.is_dir():
        raise UsageError(
            f"{option} {value}: is not a directory", hint="name a directory (created when missing)"
        )
    check_creatable(option, value, path)
    return path


def check_creatable(option: str, value: str, directory: Path) -> None:
    """Files can be created in ``directory``, or in the nearest directory above it that exists
    (the missing ones are created later)."""
    existing = directory
    while not existing.exists() and existing.parent != existing:
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"{option} {value}: {existing} is not a directory")
    _probe(option, value, existing)


def write_text(option: str, path: Path, text: str) -> None:
    """Write ``text`` (ending with a newline) to ``path`` atomically."""
    write_lines(option, path, [text if text.endswith("\n") else text + "\n"])


def write_lines(option: str, path: Path, lines: Iterable[str]) -> int:
    """Write ``lines`` to ``path`` atomically (in place for a device or a pipe); their count."""
    try:
        return write_atomic(path, lines)
    except OSError as exc:
        raise write_error(option, str(path), exc) from None


def _link_refused(option: str, value: str) -> UsageError:
    from knowing_pr.visible import visible

    try:
        target = visible(os.readlink(value))
    except OSError:
        target = "?"
    return UsageError(
        f"{option} {visible(value)}: is a symbolic link (to {target}); knowing-pr never writes through one",
        hint="remove the link or name another file",
    )


def _probe(option: str, value: str, directory: Path) -> None:
    """Create and remove a temporary file in ``directory``: the file system's own answer."""
    import tempfile

    try:
        fd, tmp = tempfile.mkstemp(prefix=".knowing-pr-probe-", dir=directory)
    except OSError as exc:
        # an existing directory that answers "no such file" (``/proc``, ``/sys``) takes no new files
        reason = "it takes no new files" if exc.errno == errno.ENOENT else exc.strerror or type(exc).__name__
        raise UsageError(
            f"{option} {value}: cannot create a file in {directory} ({reason})",
            hint="name a writable place",
        ) from None
    os.close(fd)
    Path(tmp).unlink(missing_ok=True)


def write_error(option: str, value: str, exc: OSError) -> KnowingPRError:
    """A failed write as an error naming the option and path: the path's fault (exit 2) or not."""
    if exc.errno == errno.ELOOP:
        return _link_refused(option, value)
    message = f"{option} {value}: {exc.strerror or type(exc).__name__}"
    if exc.errno in _INPUT_ERRNOS:
        return UsageError(message, hint="name a writable place")
    return KnowingPRError(message, hint="nothing was written; fix the cause (disk space?) and re-run")
