"""The isolated parse worker: crashes, timeouts and errors mark one file; the rest parse."""

from __future__ import annotations

import time

import psutil

from knowing_pr.parse import parse_source
from knowing_pr.parse.worker import parse_files, parse_files_inline

# tree-sitter dereferences a failed allocation: under a 200 MB address-space cap this
# array (2 MB of source, ~400 MB of tree) kills the child with SIGSEGV
CRASHING = ("crash.js", "javascript", b"var x = [" + b"1," * 1_000_000 + b"];\n")
# nested string interpolation: tree-sitter's query cursor needs ~15 s on this
SLOW = ("slow.rb", "ruby", b'x = "' + b'#{"' * 100_000 + b"1" + b'"}' * 100_000 + b'"\n')
# a per-file timeout no loaded machine reaches: with it, a file is skipped only by a crash or an
# error, so the test names that reason, not whichever of a crash and a timeout came first
NEVER_S = 600
# the timeout for SLOW: a few times shorter than its parse on an idle machine (load only makes
# the parse slower); its child has room (1 GB), so the timeout is the only way it ends
SLOW_TIMEOUT_S = 5
UNKNOWN = ("a.cob", "cobol", b"DISPLAY 'x'.")


def small_files(count: int) -> list[tuple[str, str, bytes]]:
    samples = [
        ("python", "def f{i}(a):\n    return g{i}(a)\n"),
        ("javascript", "export function f{i}(a) {{ return g{i}(a); }}\n"),
        ("typescript", "export function f{i}(a: T{i}): void {{ g{i}(a); }}\n"),
        ("tsx", "export const f{i} = () => <G{i} />;\n"),
        ("ruby", "def f{i}(a)\n  g{i}(a)\nend\n"),
    ]
    files = []
    for i in range(count):
        language, template = samples[i % len(samples)]
        files.append((f"f{i}.{language}", language, template.format(i=i).encode()))
    return files


def test_worker_output_equals_inline() -> None:
    files = small_files(40)
    isolated = list(parse_files(files, timeout_s=NEVER_S, memory_mb=1024, workers=2, batch_size=8))
    inline = list(parse_files_inline(files))
    assert isolated == inline
    assert [path for path, _, _ in isolated] == [path for path, _, _ in files]
    assert all(parsed is not None and reason is None for _, parsed, reason in isolated)
    assert isolated[0][1] == parse_source("f0.python", "python", files[0][2])


def test_crash_timeout_and_error_mark_only_their_file() -> None:
    ok = small_files(8)
    items = [*ok[:2], CRASHING, *ok[2:4], *ok[4:6], UNKNOWN, *ok[6:]]
    results = list(parse_files(items, timeout_s=NEVER_S, memory_mb=200, workers=2, batch_size=4))
    assert [path for path, _, _ in results] == [path for path, _, _ in items]
    reasons = {path: reason for path, _, reason in results}
    assert reasons.pop("crash.js") == "parser-crash"
    assert reasons.pop("a.cob") == "parser-error"
    assert set(reasons.values()) == {None}
    timed = [*ok[:2], SLOW, *ok[2:4]]
    results_timed = list(
        parse_files(timed, timeout_s=SLOW_TIMEOUT_S, memory_mb=1024, workers=2, batch_size=4)
    )
    assert [(path, reason) for path, _, reason in results_timed] == [
        (path, "timeout" if path == "slow.rb" else None) for path, _, _ in timed
    ]
    by_path = {path: parsed for path, parsed, _ in results}
    assert by_path["f7.typescript"] is not None
    assert [d.name for d in by_path["f7.typescript"].definitions] == ["f7"]


def test_inline_reports_errors_without_raising() -> None:
    results = list(parse_files_inline([UNKNOWN, *small_files(1)]))
    assert [(path, reason) for path, _, reason in results] == [("a.cob", "parser-error"), ("f0.python", None)]


def test_deep_nesting_is_parsed_or_skipped_in_every_language() -> None:
    depth = 10_000
    items = [
        ("deep.py", "python", b"x = " + b"(" * depth + b"1" + b")" * depth + b"\n"),
        ("deep.js", "javascript", b"x = " + b"f(" * depth + b"1" + b")" * depth + b";\n"),
        ("deep.ts", "typescript", b"let x: " + b"A<" * depth + b"B" + b">" * depth + b";\n"),
        ("deep.tsx", "tsx", b"x = " + b"[" * depth + b"1" + b"]" * depth + b";\n"),
        ("deep.rb", "ruby", b"x = " + b"f(" * depth + b"1" + b")" * depth + b"\n"),
    ]
    results = list(parse_files(items, timeout_s=NEVER_S, memory_mb=1024, workers=2))
    for path, parsed, reason in results:
        assert (parsed is None) == (reason in {"parser-crash", "timeout", "parser-error"}), path
    by_path = {path: parsed for path, parsed, _ in results}
    deep_js = by_path["deep.js"]
    assert deep_js is not None and deep_js.references[0].name == "f"


def test_five_megabyte_line_is_parsed_or_skipped_within_timeout() -> None:
    minified = b"var a=[" + b"1," * 2_500_000 + b"];function z(){return a}\n"
    assert len(minified) > 5_000_000
    started = time.monotonic()
    results = list(
        parse_files(
            [("min.js", "javascript", minified), *small_files(2)], timeout_s=3, memory_mb=1024, workers=1
        )
    )
    # generous: the timeout bounds the wait however busy the machine; only a parse left to run
    # unbounded on a 5 MB line could come near it
    assert time.monotonic() - started < 3 + 120
    (_, parsed, reason), *rest = results
    assert (parsed is None and reason in {"timeout", "parser-crash"}) or (
        parsed is not None and [d.name for d in parsed.definitions] == ["z"]
    )
    assert [reason for _, _, reason in rest] == [None, None]


def test_closing_the_iterator_stops_the_children() -> None:
    me = psutil.Process()
    before = {child.pid for child in me.children(recursive=True)}
    results = parse_files(small_files(200), timeout_s=NEVER_S, memory_mb=1024, workers=2, batch_size=4)
    first = next(results)
    assert first[2] is None
    assert {child.pid for child in me.children(recursive=True)} - before
    results.close()
    assert {child.pid for child in me.children(recursive=True)} - before == set()


def test_forked_batches_mark_crashes_and_timeouts_like_the_pool() -> None:
    from knowing_pr.parse.fork import ForkedParse

    ok = small_files(6)
    items = [*ok[:2], CRASHING, *ok[2:]]
    results = list(ForkedParse(items, timeout_s=NEVER_S, memory_mb=200).results())
    assert [path for path, _, _ in results] == [path for path, _, _ in items]
    reasons = {path: reason for path, _, reason in results}
    assert reasons.pop("crash.js") == "parser-crash"
    assert set(reasons.values()) == {None}
    timed = [*ok[:2], SLOW, *ok[2:]]
    results_timed = list(ForkedParse(timed, timeout_s=SLOW_TIMEOUT_S, memory_mb=1024).results())
    assert [(path, reason) for path, _, reason in results_timed] == [
        (path, "timeout" if path == "slow.rb" else None) for path, _, _ in timed
    ]
    assert list(ForkedParse(ok, timeout_s=NEVER_S, memory_mb=1024).results()) == list(parse_files_inline(ok))


def test_a_fork_started_early_answers_as_the_forked_batches_do() -> None:
    from knowing_pr.parse.fork import ForkedParse

    ok = small_files(6)
    items = [*ok[:3], CRASHING, *ok[3:]]
    me = psutil.Process()
    started = ForkedParse(items, timeout_s=NEVER_S, memory_mb=200)
    results = list(started.results())
    assert [path for path, _, _ in results] == [path for path, _, _ in items]
    reasons = {path: reason for path, _, reason in results}
    assert reasons.pop("crash.js") == "parser-crash"  # the first fork died there; a second took the rest
    assert set(reasons.values()) == {None}
    parsed = [(path, result) for path, result, _ in results if path != "crash.js"]
    assert parsed == [(path, result) for path, result, _ in parse_files_inline(ok)]
    assert not me.children()  # every fork was reaped
    assert list(ForkedParse([], timeout_s=1, memory_mb=200).results()) == []


def test_a_fork_for_definitions_only_sends_the_same_definitions_and_nothing_else() -> None:
    from knowing_pr.parse.fork import ForkedParse

    ok = small_files(5)
    items = [*ok[:2], CRASHING, *ok[2:]]  # the second fork, after the crash, still sends definitions only
    results = list(ForkedParse(items, timeout_s=NEVER_S, memory_mb=200, definitions_only=True).results())
    reasons = {path: reason for path, _, reason in results}
    assert reasons.pop("crash.js") == "parser-crash" and set(reasons.values()) == {None}
    full = {path: parsed for path, parsed, _ in parse_files_inline(ok)}
    for path, parsed, _ in results:
        if path == "crash.js":
            continue
        assert parsed is not None and full[path] is not None
        assert parsed.definitions == full[path].definitions and parsed.definitions
        assert parsed.line_count == full[path].line_count
        assert full[path].references and not parsed.references and not parsed.imports and not parsed.facts
