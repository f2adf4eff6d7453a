"""Every file knowing-pr writes is created here, and never through a symbolic link.

One rule for every output (``--out``, ``--export``, ``--out-dir`` members, the Action's
manifest and hand-off files, the hook's log, lock and pid files): **a symbolic link at the
final component of the path is refused**, whatever it points to; the write fails with
``errno.ELOOP`` (what ``O_NOFOLLOW`` gives), which the command line turns into exit 2 and the
hook into a skipped event. A repository can commit ``CONTEXT.md -> ../.venv/…/x.pth``; a
user who runs ``map --out CONTEXT.md`` gets a refusal, not a file written where the link
points. The directories above the final component are the user's choice and are taken as
the system resolves them; the new file is always created in the directory the path names,
never in the directory of a link's target.

How: a whole file goes to a temporary file created with ``O_CREAT | O_EXCL`` (which never
follows a link) in that directory, then ``os.replace`` renames it over the final name; the
rename replaces whatever is there, a link raced in after the check included, and never
follows it. Appended and locked files are opened with ``O_NOFOLLOW``.

Two kinds of path are written in place instead: a character device or a pipe named directly
(``/dev/null``, a FIFO), and the standard streams and inherited descriptors spelled
``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N`` or ``/proc/self/fd/N`` (symbolic links on
Linux, which the user typed, a repository cannot). Nothing to replace there.

Only ``os``, ``errno``, ``stat`` and ``contextlib`` at module level: the hook imports this on every git command.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterable

__all__ = [
    "check_not_a_link",
    "is_stream_name",
    "link_error",
    "open_append",
    "open_lock",
    "write_atomic",
]

#: the names of the standard streams; and the directories whose entries are inherited descriptors
_STREAMS = ("/dev/stdout", "/dev/stderr")
_DESCRIPTOR_DIRS = ("/dev/fd", "/proc/self/fd", "/proc/thread-self/fd")


def is_stream_name(path: str | os.PathLike[str]) -> bool:
    """``path`` spells a standard stream or an inherited descriptor (``/dev/stdout``,
    ``/dev/fd/63`` from a shell's ``>(…)``): written in place, through its link."""
    name = os.path.abspath(os.fspath(path))
    if name in _STREAMS:
        return True
    directory, number = os.path.split(name)
    return (
        number.isdigit()
        and number.isascii()
        and (
            directory in _DESCRIPTOR_DIRS
            or (directory.startswith("/proc/") and directory[6:-3].isdigit() and directory.endswith("/fd"))
        )
    )


def link_error(path: str | os.PathLike[str]) -> OSError:
    """The error every refused write raises: ``ELOOP`` with the path."""
    return OSError(errno.ELOOP, "is a symbolic link (knowing-pr never writes through one)", os.fspath(path))


def check_not_a_link(path: str | os.PathLike[str]) -> None:
    """Raise ``link_error`` when the final component of ``path`` is a symbolic link."""
    if os.path.islink(path) and not is_stream_name(path):
        raise link_error(path)


def _written_in_place(path: str) -> bool:
    if is_stream_name(path):
        return True
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def _new_file_mode(path: str) -> int:
    """The mode a new file gets from the umask; an existing regular file keeps its own."""
    try:
        st = os.lstat(path)
        if stat.S_ISREG(st.st_mode):
            return stat.S_IMODE(st.st_mode)
    except OSError:
        pass
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _temporary(directory: str, name: str) -> tuple[int, str]:
    """A new file beside the target, created with ``O_EXCL`` (never through a link)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    for attempt in range(100):
        tmp = os.path.join(directory, f".{name}.{os.getpid()}.{attempt}.tmp")
        try:
            return os.open(tmp, flags, 0o600), tmp
        except FileExistsError:
            continue
    raise OSError(errno.EEXIST, "no free temporary name", os.path.join(directory, f".{name}.tmp"))


def write_atomic(
    path: str | os.PathLike[str], chunks: Iterable[str | bytes], *, mode: int | None = None
) -> int:
    """Write ``chunks`` (text as UTF-8) to ``path``; a reader sees the old file or the new one.

    Returns the number of chunks. Raises ``link_error`` for a symbolic link at ``path`` and
    any ``OSError`` of the writing itself; a failure leaves no temporary file behind.
    ``mode``: the new file's permission bits (default: an existing file's, else the umask's).
    """
    target = os.fspath(path)
    if _written_in_place(target):
        # a stream is reopened through its link, appending: ``> file`` and ``>> file`` both
        # keep what is already there; a device named directly is never reached through a link
        stream = is_stream_name(target)
        flags = os.O_WRONLY | os.O_CLOEXEC | (os.O_APPEND if stream else getattr(os, "O_NOFOLLOW", 0))
        fd = os.open(target, flags)
        with os.fdopen(fd, "wb") as out:
            return _write_chunks(out.write, chunks)
    check_not_a_link(target)
    directory, name = os.path.split(target)
    fd, tmp = _temporary(directory or ".", name)
    try:
        with os.fdopen(fd, "wb") as out:
            count = _write_chunks(out.write, chunks)
        os.chmod(tmp, _new_file_mode(target) if mode is None else mode)
        check_not_a_link(target)
        os.replace(tmp, target)  # replaces the name itself: never follows a link
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return count


def _write_chunks(write: Callable[[bytes], object], chunks: Iterable[str | bytes]) -> int:
    count = 0
    for chunk in chunks:
        write(chunk.encode("utf-8") if isinstance(chunk, str) else chunk)
        count += 1
    return count


def _open_no_follow(path: str | os.PathLike[str], flags: int, mode: int) -> int:
    try:
        return os.open(path, flags | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0), mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP or os.path.islink(path):
            raise link_error(path) from None
        raise


def open_append(path: str | os.PathLike[str], mode: int = 0o644) -> int:
    """A descriptor appending to ``path`` (created when missing); a link is refused."""
    return _open_no_follow(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, mode)


def open_lock(path: str | os.PathLike[str], mode: int = 0o644) -> int:
    """A read-write descriptor on the lock file ``path`` (created when missing); a link is refused."""
    return _open_no_follow(path, os.O_RDWR | os.O_CREAT, mode)
