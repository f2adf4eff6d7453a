"""Keyword arguments → the tunables of the hook and its worker (one plain object).

No imports at all: this module is on the hook's start-up path, which every git command pays for.
"""

from __future__ import annotations


class HookParams:
    """Tunables of the hook and its worker.

    A plain class rather than a frozen dataclass: importing ``dataclasses`` costs ~8 ms on a
    path every commit pays for.
    """

    __slots__ = (
        "background_nice",
        "log_cap_bytes",
        "log_tail_lines",
        "max_index_runs",
        "poll_s",
        "sequence_wait_s",
    )

    def __init__(
        self,
        *,
        log_cap_bytes: int = 1 << 20,
        log_tail_lines: int = 10,
        max_index_runs: int = 20,
        poll_s: float = 0.2,
        sequence_wait_s: float = 900.0,
        background_nice: int = 10,
    ) -> None:
        #: the detached hook and its worker run this much nicer than git: they never compete
        #: with the command the user is waiting for (pre-commit's own start-up, the next commit)
        self.background_nice = background_nice
        self.log_cap_bytes = log_cap_bytes
        self.log_tail_lines = log_tail_lines
        self.max_index_runs = max_index_runs
        self.poll_s = poll_s
        self.sequence_wait_s = sequence_wait_s
