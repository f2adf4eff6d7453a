"""A history mine from scratch, run ahead in a child process while the index resolves and stores.

A full index (or a store's first) mines the whole history from scratch, and that mine reads
nothing but git. So the index starts it in a child process once the files are parsed and takes
its result when it reaches the history step: the mine runs on the second core beside the resolve
and store steps, which use one (``index/run.py``). The result is the one ``mine_history`` gives in
process, bit for bit: the child runs knowing-pr's own code, the same call, and answers with the
state, every commit it applied and the rows of their subjects (``store/commitwords.py``), encoded
by ``history/codec.py`` (the state's rows in the order the mine made them, so the decoded mappings iterate
as the mined ones do).

The child is ``python -I`` (never an import from the working directory: an untrusted checkout)
with the parent's import path, as the parse workers are; it gets the git dir, the head's id, the
parameters and the index's process id on its command line, and writes one payload on stdout (on
Linux the kernel kills it when the index dies: ``die_with_parent``). Anything that goes wrong
(the child cannot start, exits badly, answers what does not decode, or the run turns out to need
another head, other parameters or no mine from scratch) gives ``None`` or is dropped, and the
index mines in process: running ahead can make an index faster, never different.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass

from knowing_pr.config import HistoryParams
from knowing_pr.errors import StoreError
from knowing_pr.history.codec import decode_history, encode_history
from knowing_pr.history.state import HistoryState
from knowing_pr.parse.worker import isolated_python
from knowing_pr.store.commitwords import CommitRow

__all__ = ["AheadMine", "MineAhead", "serve", "start_mine_ahead"]


@dataclass(frozen=True)
class AheadMine:
    """What the child mined: ``mine_history(repo, head, params, None, keep_recent=keep)`` with its
    subjects' rows (``CommitRows.rows()`` of the commits it applied) and the mine's own seconds
    in the child."""

    state: HistoryState
    #: oldest first
    rows: list[CommitRow]
    seconds: float


class MineAhead:
    """A child mining ``head`` with ``params``, its result taken once (``take``) or dropped."""

    def __init__(self, process: subprocess.Popen[bytes], head: str, params: HistoryParams, keep: int) -> None:
        self.process = process
        self.head = head
        self.params = params
        self.keep = keep

    def take(self, head: str, params: HistoryParams, keep: int) -> AheadMine | None:
        """The child's mine when it was asked for exactly this ``head``, ``params`` and ``keep``
        and answered well (it is waited for); else None (the caller mines in process)."""
        if (head, params, keep) != (self.head, self.params, self.keep):
            self.drop()
            return None
        assert self.process.stdout is not None
        try:
            payload = self.process.stdout.read()
        except OSError:
            payload = b""
        finally:
            self.process.stdout.close()
        if self.process.wait() != 0 or not payload:
            return None
        try:
            mine, mined_with = _decoded(payload, keep)
        except (ValueError, TypeError, KeyError, IndexError, OverflowError, RecursionError, StoreError):
            return None
        if mined_with != dataclasses.asdict(params) or mine.state.mined_head not in (None, head):
            return None  # the child read its request otherwise than it was meant
        return mine

    def drop(self) -> None:
        """Stop the child if it still runs (a run that needed no mine from scratch, or failed)."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        if self.process.stdout is not None:
            with contextlib.suppress(OSError):
                self.process.stdout.close()


def start_mine_ahead(git_dir: str, head: str, params: HistoryParams, keep: int) -> MineAhead | None:
    """A child mining ``head`` (a full commit id) of the repository at ``git_dir``; None when no
    child can be started."""
    request = json.dumps(
        {
            "git_dir": git_dir,
            "head": head,
            "params": dataclasses.asdict(params),
            "keep": keep,
            "parent": os.getpid(),
        }
    )
    command = isolated_python("from knowing_pr.index.historyahead import serve; serve(sys.argv[2:])", request)
    try:
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
    except OSError:
        return None
    return MineAhead(process, head, params, keep)


def serve(argv: list[str]) -> None:
    """The child: mine as asked (``argv[0]``, JSON) and write the payload on stdout."""
    import gc

    from knowing_pr import die_with_parent
    from knowing_pr.git import GitRepo
    from knowing_pr.git.repo import keep_no_objects
    from knowing_pr.history.mine import mine_history
    from knowing_pr.store.commitwords import CommitRows

    gc.disable()  # as an index run mines (``index/commit.py`` pauses the cycle collector)
    keep_no_objects()  # the mine reads each commit once
    request = json.loads(argv[0])
    # killed with the index (a SIGKILL, the OOM killer), not left mining for no one
    die_with_parent(int(request["parent"]))
    params = HistoryParams(**request["params"])
    keep = int(request["keep"])
    repo = GitRepo.open(request["git_dir"])
    built = CommitRows()
    started = time.perf_counter()
    state = mine_history(
        repo, request["head"], params, None, keep_recent=keep, on_applied=built.add, idle=built.build_some
    )
    seconds = time.perf_counter() - started
    sys.stdout.buffer.write(_encoded(state, params, built.rows(), seconds))
    sys.stdout.buffer.flush()


def _encoded(
    state: HistoryState,
    params: HistoryParams,
    rows: list[CommitRow],
    seconds: float,
) -> bytes:
    """The payload: the state's rows in their mined order, every applied commit, of each subjects'
    row the parts not in its commit (its files as JSON, its words), and the parameters mined with."""
    meta = state.meta_rows()
    files = [(path, s.commits, s.last_time, s.churn) for path, s in state.files.items()]
    pairs = [(a, b, s.count, s.weight, s.sized) for (a, b), s in state.pairs.items()]
    extra = {
        "params": dataclasses.asdict(params),
        "extended": state.extended,
        "recent": len(state.recent),
        "rows": [[files_json, words] for _, _, _, files_json, words in rows],
        "seconds": seconds,
    }
    return encode_history((meta, files, pairs), state.applied, extra)


def _decoded(payload: bytes, keep: int) -> tuple[AheadMine, object]:
    """``_encoded``'s mine back, with the parameters it was mined with (``ValueError`` and the
    rest when it is malformed)."""
    state, applied, head = decode_history(payload)
    recent, extended = head["recent"], head["extended"]
    if recent != min(keep, len(applied)) or extended is not False:  # as ``mine_history`` keeps them
        raise ValueError("the mine's recent commits are malformed")
    made = head["rows"]
    counted = [commit for commit in applied if commit.touched]
    if not isinstance(made, list) or len(made) != len(counted):
        raise ValueError("the mine's subjects' rows are malformed")
    rows: list[CommitRow] = []
    for commit, (files_json, words) in zip(counted, made, strict=True):
        if not (isinstance(files_json, str) and isinstance(words, str)):
            raise ValueError("a subjects' row is malformed")
        rows.append((commit.sha, commit.subject, len(commit.touched), files_json, words))
    object.__setattr__(state, "applied", applied)
    object.__setattr__(state, "recent", applied[len(applied) - recent :] if recent else ())
    return AheadMine(state, rows, float(head["seconds"])), head["params"]
