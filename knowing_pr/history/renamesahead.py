"""The commits of a mine that need their renames paired → paired by a fork of this process too,
from the newest back, while the mine applies the commits from the oldest on.

Pairing a commit's deleted and added files (``git/renames.py``) reads and compares their blobs,
the largest part of a history mine after git's own log, and the mine applies commits one by one
on one core. ``RenamesAhead`` forks once: the fork pairs the pending records from the last the
mine will meet backwards, each answer a frame on a pipe, while the mine goes forwards, pairing
the ones it meets first itself and taking the fork's answers once it reaches them. The pairs are
a function of the commit's blobs and the rule only, so who pairs a commit changes no number.

Who pairs a record is settled through a shared page of claim bytes, two per record:

* the fork sets its claim on record ``i``, then looks at the mine's: if the mine has claimed it,
  the fork answers "skipped" and stops (the mine has come this far: every record before is the
  mine's); else it pairs the record and answers with the pairs;
* the mine, on reaching record ``i`` (or passing it by: its renames cannot change anything,
  ``mine._Accumulator._renames_matter``), sets its claim, then looks at the fork's: if the fork
  has claimed it, the mine waits for that answer (pairing the record itself after a "skipped"),
  else it pairs the record itself.

Every record the fork claims gets an answer, so the mine never waits for one that does not come;
both may pair a record, never neither. A fork that dies, or that this system cannot make (no
``os.fork``), leaves the pairing to the mine: the same pairs, later. Records the mine passes by
may have been paired by the fork for nothing: that is the fork's core's time, not the mine's.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import signal
import struct
import threading
import warnings
from collections.abc import Callable, Sequence

from knowing_pr import close_inherited, die_with_parent
from knowing_pr.git.records import CommitInfo
from knowing_pr.git.walk import paired_record

__all__ = ["MIN_AHEAD_SIDES", "RenamesAhead"]

#: fewer deleted and added files than this over all pending records: the mine pairs them itself
#: (a fork costs more than it saves)
MIN_AHEAD_SIDES = 2000

#: an answer's header: record number, kind (``_SKIPPED`` or ``_PAIRED``), length of the JSON pairs
_FRAME = struct.Struct(">IBI")
_SKIPPED = 0
_PAIRED = 1

Pairs = list[tuple[str, str]]


class RenamesAhead:
    """The renames of ``pending`` (``renames_pending`` records, in the order the mine applies
    them), paired by ``pair`` in a fork when there are enough of them (``ahead``), else here."""

    def __init__(
        self,
        pending: Sequence[CommitInfo],
        pair: Callable[[CommitInfo], Pairs],
        *,
        min_sides: int = MIN_AHEAD_SIDES,
    ) -> None:
        self._pair = pair
        self._number = {record.sha: i for i, record in enumerate(pending)}
        self._count = len(pending)
        self._answers: dict[int, Pairs | None] = {}
        self._done = threading.Condition()
        self._ended = False
        self._pid = 0
        self._claims: object = None
        self._reader: threading.Thread | None = None
        sides = sum(len(record.sides) for record in pending)
        if pending and sides >= min_sides and hasattr(os, "fork"):
            self._start(pending)

    @property
    def ahead(self) -> bool:
        """Whether a fork pairs ahead of the mine."""
        return self._pid > 0

    def renamed(self, record: CommitInfo) -> CommitInfo:
        """``record`` (``renames_pending``) with its renames."""
        number = self._claim(record)
        if number is not None and self._claims_of_fork(number):
            pairs = self._wait(number)  # the fork claimed it: its answer comes
            if pairs is not None:
                return paired_record(record, pairs)
        return paired_record(record, self._pair(record))

    def passed(self, record: CommitInfo) -> None:
        """The mine applied ``record`` without its renames: the fork need not pair it."""
        self._claim(record)

    def close(self) -> None:
        """End the fork (its remaining answers are not needed) and reap it."""
        if self._pid > 0:
            with contextlib.suppress(OSError):
                os.kill(self._pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(self._pid, 0)
            self._pid = 0
        if self._reader is not None:
            self._reader.join()
            self._reader = None
            gc.unfreeze()

    def __enter__(self) -> RenamesAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the mine's side ---------------------------------------------------------------------------

    def _claim(self, record: CommitInfo) -> int | None:
        number = self._number.get(record.sha)
        if number is not None and self._claims is not None:
            self._claims[self._count + number] = 1  # type: ignore[index]
        return number

    def _claims_of_fork(self, number: int) -> bool:
        return self._claims is not None and self._claims[number] == 1  # type: ignore[index]

    def _wait(self, number: int) -> Pairs | None:
        """The fork's answer for ``number`` (None: skipped, or the fork ended without one)."""
        with self._done:
            while number not in self._answers and not self._ended:
                self._done.wait()
            return self._answers.pop(number, None)

    def _start(self, pending: Sequence[CommitInfo]) -> None:
        import mmap

        claims = mmap.mmap(-1, 2 * len(pending))  # shared with the fork (MAP_SHARED)
        read_fd, write_fd = os.pipe()
        parent = os.getpid()
        # the objects made so far leave the collector's view until ``close``: a full collection in
        # either process would write to every one of their pages, each then copied for the writer
        gc.freeze()
        try:
            with warnings.catch_warnings():  # a ticker thread may run: the fork uses none of its state
                warnings.simplefilter("ignore", DeprecationWarning)
                pid = os.fork()
        except OSError:  # no fork (out of processes, of memory): the mine pairs them all
            gc.unfreeze()
            os.close(read_fd)
            os.close(write_fd)
            return
        if pid == 0:
            status = 0
            try:
                gc.disable()  # a bounded job: no cycle to collect is worth a copied page
                os.close(read_fd)
                close_inherited(keep=write_fd, pipes_only=True)
                die_with_parent(parent)
                _pair_ahead(pending, self._pair, claims, write_fd)
            except BaseException:
                status = 1
            finally:
                os._exit(status)
        os.close(write_fd)
        self._pid, self._claims = pid, claims
        self._reader = threading.Thread(target=self._read, args=(read_fd,), daemon=True)
        self._reader.start()

    def _read(self, read_fd: int) -> None:
        """The fork's answers into ``_answers`` until its pipe ends (the fork finished or died)."""
        with os.fdopen(read_fd, "rb") as pipe:
            while True:
                header = pipe.read(_FRAME.size)
                if len(header) < _FRAME.size:
                    break
                number, kind, length = _FRAME.unpack(header)
                body = pipe.read(length)
                if len(body) < length:
                    break
                answer = _pairs(body) if kind == _PAIRED else None
                with self._done:
                    self._answers[number] = answer
                    self._done.notify_all()
        with self._done:
            self._ended = True
            self._done.notify_all()


def _pair_ahead(
    pending: Sequence[CommitInfo], pair: Callable[[CommitInfo], Pairs], claims: object, write_fd: int
) -> None:
    """The fork: claim each record in turn, the last first, and answer it (module docstring)."""
    count = len(pending)
    with os.fdopen(write_fd, "wb", buffering=0) as out:
        for number in range(count - 1, -1, -1):
            record = pending[number]
            claims[number] = 1  # type: ignore[index]
            if claims[count + number] == 1:  # type: ignore[index]
                out.write(_FRAME.pack(number, _SKIPPED, 0))
                return  # the mine has come this far: the records before are its own
            body = json.dumps(pair(record)).encode("utf-8", "surrogateescape")
            out.write(_FRAME.pack(number, _PAIRED, len(body)) + body)


def _pairs(body: bytes) -> Pairs | None:
    """An answer's pairs (None: not understood, the mine pairs the record itself)."""
    try:
        rows = json.loads(body.decode("utf-8", "surrogateescape"))
        return [(str(old), str(new)) for old, new in rows]
    except (ValueError, TypeError):
        return None
