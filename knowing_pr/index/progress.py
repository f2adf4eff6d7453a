"""The steps of a long run (parse, resolve, history, fit, pack) shown on stderr while they run.

On a terminal, one live bar redrawn in place (step, count/total, rate); on a pipe (CI, the
Action's log, an MCP client's log) one plain line every ``interval_s`` seconds with the step,
the count, the total and the rate, and a closing line for a step that printed any. A step that
reports no counts (total 0: the history mine, the fit, the pack) is shown by a ticker thread
with its elapsed time, so a long step is never silent. ``--quiet`` builds none of this.

The clock is injectable and ``interval_s`` 0 prints every update: tests never sleep.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO

__all__ = ["StepProgress", "progress_on_stderr"]

#: a terminal bar is redrawn at most this often
_REDRAW_S = 0.1
_BAR_WIDTH = 24
#: the noun of each step's count
_UNITS = {"parse": "files", "resolve": "files", "history": "commits"}


@dataclass
class _Step:
    name: str
    started: float
    done: int = 0
    total: int = 0
    shown: float = 0.0  # when a line or bar was last written for it
    lines: int = 0  # lines written for it on a pipe


def _counted(step: _Step) -> bool:
    """Whether a step's count says anything: a step of one item without a noun (the pack, counted
    0 of 1 only so that no ticker thread runs while a fork parses) is shown by its time."""
    return step.total > 1 or (step.total == 1 and step.name in _UNITS)


@dataclass
class StepProgress:
    """A ``Progress`` callback, ``progress(step, done, total)`` (``total`` 0: unknown)."""

    stream: TextIO
    live: bool  # a terminal: redraw one bar
    interval_s: float = 5.0
    clock: Callable[[], float] = time.monotonic
    _step: _Step | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _ticker: threading.Thread | None = None
    _stop: threading.Event = field(default_factory=threading.Event)

    def __call__(self, step: str, done: int, total: int) -> None:
        with self._lock:
            now = self.clock()
            current = self._step
            if current is None or current.name != step:
                self._finish(now)
                current = self._step = _Step(step, now, shown=now)
            current.done, current.total = done, total
            if total and done >= total:
                self._finish(now)
                return
            self._show(now)
        if total == 0:
            self._start_ticker()
        else:  # a counted step reports often enough; no thread runs while the parser forks
            self._stop_ticker()

    def close(self) -> None:
        """Ends the step shown (its closing line or the bar's newline) and the ticker."""
        with self._lock:
            self._finish(self.clock())
        self._stop_ticker()

    # -- drawing ------------------------------------------------------------------------------

    def _show(self, now: float) -> None:
        step = self._step
        if step is None:
            return
        if self.live:
            if now - step.shown >= _REDRAW_S or step.lines == 0:
                self._write("\r" + self._bar(step, now) + "\x1b[K")
                step.shown, step.lines = now, step.lines + 1
        elif now - step.shown >= self.interval_s:
            self._write("knowing-pr: " + self._summary(step, now) + "\n")
            step.shown, step.lines = now, step.lines + 1

    def _finish(self, now: float) -> None:
        step, self._step = self._step, None
        if step is None:
            return
        if self.live and step.lines:
            self._write("\r" + self._bar(step, now) + "\x1b[K\n")
        elif not self.live and (step.lines or now - step.started >= self.interval_s):
            counted = f"{self._summary(step, now)}, " if _counted(step) else f"{step.name} "
            self._write(f"knowing-pr: {counted}done in {now - step.started:.1f} s\n")

    def _summary(self, step: _Step, now: float) -> str:
        elapsed = now - step.started
        if not _counted(step):
            return f"{step.name} {elapsed:.0f} s"
        unit = _UNITS.get(step.name, "items")
        rate = step.done / elapsed if elapsed > 0 else 0.0
        return f"{step.name} {step.done}/{step.total} {unit} ({rate:.0f}/s)"

    def _bar(self, step: _Step, now: float) -> str:
        if not _counted(step):
            return f"{step.name:<8} {now - step.started:5.0f} s"
        filled = int(_BAR_WIDTH * min(step.done, step.total) / step.total)
        return (
            f"{step.name:<8} [{'#' * filled}{'.' * (_BAR_WIDTH - filled)}] "
            + self._summary(step, now).split(" ", 1)[1]
        )

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken stderr: the run goes on unseen
            pass

    # -- a step without counts ----------------------------------------------------------------

    def tick(self) -> None:
        """What the ticker thread does every ``interval_s`` (or, on a terminal, every redraw)."""
        with self._lock:
            self._show(self.clock())

    def _start_ticker(self) -> None:
        if self._ticker is not None or self.interval_s <= 0:
            return
        self._stop.clear()
        self._ticker = threading.Thread(
            target=self._tick_until_stopped, name="knowing-pr-progress", daemon=True
        )
        self._ticker.start()

    def _tick_until_stopped(self) -> None:
        period = _REDRAW_S * 5 if self.live else min(self.interval_s, 1.0)
        while not self._stop.wait(period):
            self.tick()

    def _stop_ticker(self) -> None:
        ticker, self._ticker = self._ticker, None
        if ticker is not None:
            self._stop.set()
            ticker.join()


def progress_on_stderr(interval_s: float) -> StepProgress:
    """Progress on this process's stderr: a bar on a terminal, lines on a pipe."""
    import sys

    stream = sys.stderr
    return StepProgress(stream, live=stream.isatty(), interval_s=interval_s)
