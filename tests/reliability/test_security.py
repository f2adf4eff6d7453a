"""S1 no code execution from the repository (audit hook), S2 no secret in any output, S4
malformed PackRoots refused before any file access, S5 nothing written outside --out-dir,
S8 the PackRoot is identical under other hash seeds, locales, time zones and CPU sets.

Every CLI run here is a real child process started through ``AUDIT_RUNNER``: a script in a
directory outside the repository (so the repository is never on ``sys.path``) that installs
``sys.addaudithook`` and records process starts, imports and file opens.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import RepoBuilder
from reliability_support import cli_env

AUDIT_RUNNER = r"""
import json, os, sys
log_path, repo = sys.argv[1], os.path.realpath(sys.argv[2])
events = []
def hook(event, args):
    if event in ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork"):
        events.append([event, repr(args)[:400]])
    elif event == "import" and args[1] and os.path.realpath(str(args[1])).startswith(repo + os.sep):
        events.append([event, str(args[1])])
    elif event == "open" and isinstance(args[0], str) and os.path.exists(args[0]) \
            and os.path.realpath(args[0]).startswith(repo + os.sep):
        rel = os.path.relpath(os.path.realpath(args[0]), repo)
        if not rel.startswith(".git" + os.sep) and rel != ".knowing-pr.yml":
            events.append([event, rel])
    elif event == "sqlite3.connect":
        events.append([event, repr(args)[:200]])
sys.addaudithook(hook)
from knowing_pr.cli import main
try:
    code = main(sys.argv[3:])
except SystemExit as exc:
    code = exc.code if isinstance(exc.code, int) else 2
with open(log_path, "w") as fh:
    json.dump({"code": code, "events": events}, fh)
raise SystemExit(code)
"""

CANARY_NAME = "CANARY-EXECUTED"
TOKEN = "ghp_CANARYTOKEN0123456789abcdefCANARY"


@pytest.fixture
def audited(tmp_path: Path):
    runner_dir = tmp_path / "runner"
    runner_dir.mkdir()
    runner = runner_dir / "audit_runner.py"
    runner.write_text(AUDIT_RUNNER)
    counter = iter(range(10_000))

    def run(
        repo: Path, *args: str, env: dict[str, str] | None = None
    ) -> tuple[subprocess.CompletedProcess[str], dict]:
        log = runner_dir / f"log{next(counter)}.json"
        proc = subprocess.run(
            [sys.executable, str(runner), str(log), str(repo), *args],
            cwd=repo,
            env=env or cli_env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        data = json.loads(log.read_text()) if log.exists() else {"code": proc.returncode, "events": []}
        return proc, data

    return run


def _hostile_repo(b: RepoBuilder, canary: Path) -> str:
    touch = f"open({str(canary)!r}, 'w').write('x')"
    sh_touch = f"touch {canary}"
    b.write("setup.py", f"{touch}\n")
    b.write("conftest.py", f"{touch}\n")
    b.write("json.py", f"{touch}\n")  # shadows a stdlib module if the repo were on sys.path
    b.write("sqlite3.py", f"{touch}\n")
    b.write("knowing_pr/__init__.py", f"{touch}\n")
    b.write("package.json", json.dumps({"scripts": {"preinstall": sh_touch, "test": sh_touch}}))
    b.write(".pre-commit-config.yaml", f"repos:\n- repo: local\n  hooks:\n  - id: x\n    entry: {sh_touch}\n")
    b.write("Makefile", f"all:\n\t{sh_touch}\n")
    b.write(".envrc", f"{sh_touch}\n")
    b.write(".gitattributes", "*.py filter=evil diff=evil\n*.js filter=evil diff=evil\n")
    b.write("render/templates/comment.md.j2", "{{ ''.__class__ }}" + sh_touch)
    b.write(
        "knowing_pr/render/templates/pack.md.j2",
        "{{ cycler.__init__.__globals__.os.system('" + sh_touch + "') }}",
    )
    b.write("data.pkl", b"cos\nsystem\n(S'" + sh_touch.encode() + b"'\ntR.")
    b.write("index.sqlite", b"SQLite format 3\x00" + b"\0" * 4000)
    b.write("app/core.py", "def core(x):\n    return x + 1\n")
    b.write("app/use.py", "from app.core import core\n\ndef use():\n    return core(1)\n")
    base = b.commit("hostile")
    b.write("app/core.py", "def core(x):\n    return x + 2\n")
    b.commit("change")
    for key, value in (
        ("filter.evil.clean", sh_touch),
        ("filter.evil.smudge", sh_touch),
        ("filter.evil.process", sh_touch),
        ("diff.evil.textconv", sh_touch),
        ("core.fsmonitor", sh_touch),
    ):
        b.git("config", key, value)
    return base


@pytest.mark.slow
def test_s1_no_execution_or_import_from_the_repository(make_repo, audited, tmp_path: Path) -> None:
    b = make_repo()
    canary = tmp_path / CANARY_NAME
    base = _hostile_repo(b, canary)
    out_dir = tmp_path / "task-out"
    runs = [
        ("index", "--full"),
        ("pr", "--base", base),
        ("pr", "--base", base, "--format", "json"),
        ("files", "app/use.py"),
        ("task", "change core", "--out-dir", str(out_dir)),
        ("map",),
        ("stats",),
        ("hook", "run", "post-commit"),
    ]
    allowed = (sys.executable, "git")
    for args in runs:
        proc, data = audited(b.path, *args, env=cli_env(KNOWING_PR_HOOK_SYNC="1"))
        assert proc.returncode == 0, (args, proc.stderr)
        for event, detail in data["events"]:
            if event in ("subprocess.Popen", "os.posix_spawn", "os.exec"):
                assert any(a in detail for a in allowed), (args, detail)
                assert str(b.path) + "/" not in detail.replace(str(b.path) + "/.git", ""), (args, detail)
            elif event == "os.fork":
                continue  # the parse isolation forks this interpreter (our code, no exec)
            elif event == "sqlite3.connect":
                assert str(b.path / "index.sqlite") not in detail
            else:
                raise AssertionError(f"{args}: {event} {detail}")
        assert not canary.exists(), args


@pytest.mark.slow
def test_s2_canary_token_never_reaches_outputs_store_or_logs(make_repo, audited, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".git-credentials").write_text(f"https://x:{TOKEN}@github.com\n")
    b = make_repo()
    b.symlink("environ.py", "/proc/self/environ")
    b.symlink("creds.py", str(home / ".git-credentials"))
    b.write("app/core.py", "def core(x):\n    return x + 1\n")
    base = b.commit("one")
    b.write("app/core.py", "def core(x):\n    return x + 2\n")
    b.commit("two")
    env = cli_env(GITHUB_TOKEN=TOKEN, GH_TOKEN=TOKEN, HOME=str(home), KNOWING_PR_HOOK_SYNC="1")
    outputs = []
    out_dir = tmp_path / "task-out"
    for args in (
        ("index", "--json"),
        ("pr", "--base", base),
        ("pr", "--base", base, "--format", "json"),
        ("pr", "--base", base, "--format", "xml"),
        ("task", "core", "--out-dir", str(out_dir)),
        ("stats", "--json"),
        ("hook", "run", "post-commit"),
    ):
        proc, _ = audited(b.path, *args, env=env)
        assert proc.returncode == 0, proc.stderr
        outputs.append(proc.stdout + proc.stderr)
    store_dir = b.path / ".git" / "knowing-pr"
    files = [p for p in [*store_dir.rglob("*"), *out_dir.rglob("*")] if p.is_file()]
    assert any(p.name == "index.sqlite" for p in files)
    needle = TOKEN.encode()
    assert [p.name for p in files if needle in p.read_bytes()] == []
    assert not any(TOKEN in text for text in outputs)
    assert not any(p.name == "config" and p.parent.name == ".git" for p in out_dir.rglob("*"))


BAD_ROOTS = [
    "abc",
    "a" * 63,
    "a" * 65,
    "A" * 64,
    "a" * 64 + "\n",
    "../" + "a" * 61,
    "/etc/" + "a" * 59,
    "https://example.com/" + "a" * 44,
    "a" * 32 + "\0" + "a" * 31,
    "\u0661" * 64,
    "\uff41" * 64,
    "-rf",
    " " + "a" * 64,
    "a" * 64 + " ",
]


@pytest.mark.slow
@pytest.mark.parametrize("bad", BAD_ROOTS, ids=range(len(BAD_ROOTS)))
def test_s4_malformed_pack_roots_exit_2_before_any_file_access(make_repo, audited, bad: str) -> None:
    b = make_repo()
    b.write("a.py", "def a():\n    return 1\n")
    b.commit("one")
    if "\0" in bad:  # argv cannot carry NUL: the validator itself must refuse it
        from knowing_pr.errors import InvalidPackRoot
        from knowing_pr.replay import validate_pack_root

        with pytest.raises(InvalidPackRoot):
            validate_pack_root(bad)
        return
    proc, data = audited(b.path, "replay", bad, "--verify")
    assert data["code"] == 2 and proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert data["events"] == []  # no store opened, no git started, no repository file read
    assert not (b.path / ".git" / "knowing-pr").exists()


def test_s5_task_folder_stays_inside_out_dir(make_repo, audited, tmp_path: Path) -> None:
    b = make_repo()
    names = ["Core.py", "core.py", "-rf.py", "CON.py", "..py", "a\\..\\b.py", "caf\u00e9.py", "cafe\u0301.py"]
    for i, name in enumerate(names):
        b.write(f"app/{name}", f"def core{i}(x):\n    return x + {i}\n")
    b.commit("one")
    outside = tmp_path / "outside"
    outside.mkdir()
    out_dir = tmp_path / "out"
    (out_dir).mkdir()
    os.symlink(outside, out_dir / "excerpts")  # a planted symlink where the tool writes
    before = sorted(p.name for p in outside.iterdir())
    proc, _ = audited(b.path, "task", "core function", "--out-dir", str(out_dir))
    assert "Traceback" not in proc.stderr
    assert sorted(p.name for p in outside.iterdir()) == before
    for p in out_dir.rglob("*"):
        if p.is_file() and not p.is_symlink():
            assert os.path.realpath(p).startswith(os.path.realpath(out_dir) + os.sep), p


def _pack_root(repo: Path, base: str, env: dict[str, str], prefix: list[str] | None = None) -> str:
    proc = subprocess.run(
        [*(prefix or []), sys.executable, "-m", "knowing_pr", "pr", "--base", base, "--format", "json"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return str(json.loads(proc.stdout)["pack_root"])


SEEDS = [int(s) for s in os.environ.get("KNOWING_PR_HASH_SEEDS", "0 1 2 7 20").split()]


@pytest.mark.slow
def test_s8_pack_root_identical_across_seeds_locales_time_zones_and_cpus(make_repo) -> None:
    b = make_repo()
    for i in range(12):
        b.write(
            f"pkg/m{i}.py",
            f"from pkg.m{max(i - 1, 0)} import f{max(i - 1, 0)}\n\ndef f{i}(x):\n    return x\n",
        )
    base = b.commit("one")
    b.write("pkg/m3.py", "from pkg.m2 import f2\n\ndef f3(x):\n    return f2(x) + 1\n")
    b.commit("two")
    roots = {_pack_root(b.path, base, cli_env(PYTHONHASHSEED=str(seed))) for seed in SEEDS}
    roots.add(
        _pack_root(b.path, base, cli_env(LC_ALL="C.UTF-8", TZ="Pacific/Kiritimati", PYTHONHASHSEED="3"))
    )
    roots.add(_pack_root(b.path, base, cli_env(LC_ALL="POSIX", TZ="America/St_Johns", LANG="de_DE.UTF-8")))
    if shutil.which("taskset"):
        roots.add(_pack_root(b.path, base, cli_env(), prefix=["taskset", "-c", "0"]))
    scratch = b.path.parent / "fresh-store.sqlite"  # a cold store in another place
    roots.add(_pack_root(b.path, base, cli_env(KNOWING_PR_DB=str(scratch), PYTHONHASHSEED="11")))
    assert len(roots) == 1, roots
