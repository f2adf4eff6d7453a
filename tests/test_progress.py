"""Progress on stderr: a piped ``index`` prints a line per long step every ``progress_interval_s``
seconds (step, count, total, rate); ``--quiet`` prints none; the clock is injected, never slept."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from conftest import RepoBuilder

from knowing_pr.index.progress import StepProgress


def _small_repo(make_repo) -> RepoBuilder:  # type: ignore[no-untyped-def]
    builder = make_repo()
    for i in range(3):
        builder.write(f"pkg/m{i}.py", f"def f{i}():\n    return {i}\n\n\ndef g{i}():\n    f{i}()\n")
    builder.commit("three modules")
    builder.write("pkg/m0.py", "def f0():\n    return 10\n")
    builder.commit("edit")
    return builder


def _index(builder: RepoBuilder, config: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "knowing_pr",
            "index",
            "--repo",
            str(builder.path),
            "--config",
            str(config),
            *extra,
        ],
        capture_output=True,
        text=True,
        check=True,
    )


def test_a_piped_index_prints_progress_lines_and_a_quiet_one_none(make_repo, tmp_path: Path) -> None:
    builder = _small_repo(make_repo)
    every_update = tmp_path / "progress.yml"
    every_update.write_text("index:\n  progress_interval_s: 0\n")
    shown = _index(builder, every_update, "--full").stderr.splitlines()
    assert "knowing-pr: parse 1/3 files" in "\n".join(shown)
    for step in ("parse", "resolve", "history", "fit"):
        assert any(line.startswith(f"knowing-pr: {step} ") for line in shown), (step, shown)
    assert any(line.startswith("knowing-pr: parse 3/3 files (") and "done in" in line for line in shown)
    assert all(line.startswith("knowing-pr: ") and "\r" not in line for line in shown)  # no bar on a pipe

    quiet = _index(builder, every_update, "--full", "--quiet")
    assert quiet.stderr == "" and quiet.stdout == ""


def test_lines_come_every_interval_with_the_rate() -> None:
    now = [100.0]
    out = io.StringIO()
    progress = StepProgress(out, live=False, interval_s=5.0, clock=lambda: now[0])
    for done in range(1, 13):  # one file a second
        now[0] = 100.0 + done
        progress("parse", done, 20)
    now[0] = 200.0
    progress("resolve", 1, 1)  # a short step: no line of its own
    progress.close()
    assert out.getvalue().splitlines() == [
        "knowing-pr: parse 6/20 files (1/s)",  # the step began at its first count, second 1
        "knowing-pr: parse 11/20 files (1/s)",
        "knowing-pr: parse 12/20 files (0/s), done in 99.0 s",
    ]


def test_a_step_without_a_count_shows_its_time_and_a_short_run_prints_nothing() -> None:
    now = [0.0]
    out = io.StringIO()
    progress = StepProgress(out, live=False, interval_s=5.0, clock=lambda: now[0])
    progress("store", 0, 0)
    now[0] = 1.0
    progress("history", 0, 0)
    for second in range(2, 13):
        now[0] = float(second)
        progress.tick()  # what the ticker thread does
    progress.close()
    assert out.getvalue().splitlines() == [
        "knowing-pr: history 5 s",
        "knowing-pr: history 10 s",
        "knowing-pr: history done in 11.0 s",
    ]


def test_a_terminal_gets_one_bar_redrawn_in_place() -> None:
    now = [0.0]
    out = io.StringIO()
    progress = StepProgress(out, live=True, interval_s=5.0, clock=lambda: now[0])
    for done in range(1, 5):
        now[0] = done * 0.5
        progress("parse", done, 4)
    progress.close()
    text = out.getvalue()
    assert text.count("\n") == 1 and text.endswith("\x1b[K\n")
    assert "\rparse    [########################] 4/4 files (3/s)\x1b[K\n" in text  # 4 in 1.5 s


def test_a_first_pr_shows_the_index_steps_and_the_pack_and_quiet_none(make_repo, tmp_path: Path) -> None:
    builder = _small_repo(make_repo)
    every_update = tmp_path / "progress.yml"
    every_update.write_text("index:\n  progress_interval_s: 0\n")
    command = [
        sys.executable,
        "-m",
        "knowing_pr",
        "pr",
        "--repo",
        str(builder.path),
        "--config",
        str(every_update),
    ]
    command += ["--base", "HEAD~1", "--format", "json"]
    shown = subprocess.run(command, capture_output=True, text=True, check=True).stderr.splitlines()
    for step in ("parse", "resolve", "history", "pack"):
        assert any(line.startswith(f"knowing-pr: {step} ") for line in shown), (step, shown)
    # the pack is counted 0 of 1 only to keep the ticker away: it closes by its time, not "0/1 items"
    [pack_done] = [line for line in shown if line.startswith("knowing-pr: pack ") and "done in" in line]
    assert pack_done.startswith("knowing-pr: pack done in "), pack_done
    quiet = subprocess.run([*command, "--quiet"], capture_output=True, text=True, check=True)
    assert quiet.stderr == "" and quiet.stdout.startswith("{")
