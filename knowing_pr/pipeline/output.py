"""An output path given on the command line → checked before any work, then written atomically.

``check_output_file`` and ``check_output_dir`` refuse, with one ``UsageError`` naming the
option and the path, what cannot work: an empty path, a missing directory, a directory where a
file is expected (and the reverse), a place where no file can be created (a read-only file
system, ``/proc``, no permission). They probe by creating and removing a temporary file, so
the answer is the file system's, not a guess from permission bits. ``write_text`` and
``write_lines`` write through a temporary file in the same directory and ``os.replace`` it: a
failure never leaves half a file. Character devices and pipes (``/dev/stdout``, a FIFO) are
written in place: there is nothing to replace.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from knowing_pr.errors import KnowingPRError, UsageError

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
_INPUT_ERRNOS = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOENT, errno.ENOTDIR, errno.EISDIR})


def check_output_file(option: str, value: str, *, example: str = "pack.md") -> Path:
    """``value`` as a file that can be written (a symbolic link is followed to its target);
    ``example`` is the file name the hint suggests."""
    if not value:
        raise UsageError(f"{option}: the path is empty", hint=f"name a file, e.g. {option} {example}")
    path = Path(os.path.realpath(value)) if os.path.islink(value) else Path(value)
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
    count = 0
    try:
        if path.exists() and not path.is_file():
            with path.open("w", encoding="utf-8", newline="\n") as handle:
                for line in lines:
                    handle.write(line)
                    count += 1
            return count
        import tempfile  # for a file only: the standard output needs none

        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
                for line in lines:
                    handle.write(line)
                    count += 1
            os.chmod(tmp, _mode_for(path))
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise write_error(option, str(path), exc) from None
    return count


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


def _mode_for(path: Path) -> int:
    """The mode a new file gets from the umask; an existing file keeps its own."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_error(option: str, value: str, exc: OSError) -> KnowingPRError:
    """A failed write as an error naming the option and path: the path's fault (exit 2) or not."""
    message = f"{option} {value}: {exc.strerror or type(exc).__name__}"
    if exc.errno in _INPUT_ERRNOS:
        return UsageError(message, hint="name a writable place")
    return KnowingPRError(message, hint="nothing was written; fix the cause (disk space?) and re-run")
