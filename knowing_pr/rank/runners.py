"""A test case + the repository's build files → the framework that runs it, its name there and a
command that runs just it.

| family | framework (how it is told) | command |
|---|---|---|
| pytest | pytest (also runs unittest) | ``pytest path::Class::test_x`` |
| go | go test (nearest ``go.mod``) | ``go test ./pkg -run '^TestX$'`` (benchmarks: ``-run '^$' -bench``) |
| rust | cargo (nearest ``Cargo.toml`` with a ``[package]``) | ``cargo test -p crate [--test target] mod::name`` |
| js | vitest, jest, mocha, node:test, karma — from the nearest ``package.json`` that names one (scripts first, then dependencies) | ``npx vitest run path -t 'title'``, ``npx jest path -t 'title'``, ``npx mocha path --grep 'title'``, ``node --test --test-name-pattern='title' path``, ``npx karma start CONFIG --single-run`` (runs the browser suite; CONFIG: the nearest ``karma.conf*`` at or above the package, named from the package's directory, ``../karma.conf.js`` when above); ``--config FILE`` when the default config leaves the file out and one other config of the package runs it |
| junit | Maven (``pom.xml``) or Gradle (``build.gradle[.kts]``) | ``mvn test -pl module -Dtest='Class#method'``, ``./gradlew :module:test --tests 'pkg.Class.method'`` |
| dotnet | ``dotnet test`` (nearest ``*.csproj``) | ``dotnet test X.csproj --filter 'FullyQualifiedName~Class.Method'`` |
| rspec | RSpec | ``bundle exec rspec path:line`` |
| minitest | minitest / test-unit | ``ruby -Ilib -Itest path -n '/title/'`` (``bundle exec`` with a Gemfile) |

Titles in filters are regular-expression escaped; every argument is shell-quoted. No word taken
from the repository is read as an option, whatever it starts with (a test file at ``-evil/x.py``,
``--rootdir=x/test_a.py``, a Rust module ``-x``): a path starting with ``-`` is written ``./-evil/x.py``
(every runner here, and ``cd``, reads that as the same file; ``go test`` packages always start
with ``./``); a title pattern starting with ``-`` starts with ``[-]`` instead (the same regular
expression); Cargo takes such a target or package as ``--test=-x`` / ``--package=-x`` and such a
filter after ``-- --`` (libtest stops reading options at the second ``--``); AVA's ``--match=``.
``run_file_command`` runs a whole test file instead: ``pytest path``, ``go test ./pkg``, ``cargo
test -p crate --test target`` (a unit-test module: its path as the filter), the JavaScript
runner on the file, ``mvn test -Dtest=Class`` / ``--tests pkg.Class``, ``dotnet test --filter
FullyQualifiedName~Class``, ``rspec path``, ``ruby -Ilib -Itest path``.
"""

from __future__ import annotations

import dataclasses
import json
import posixpath
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from knowing_pr.parse import language_for_path
from knowing_pr.parse.testcases import TestCase
from knowing_pr.rank.runnerconfig import RunnerConfig, is_runner_config, names_a_setup, read_runner_config

__all__ = [
    "RepoFiles",
    "TestRun",
    "crate_name",
    "group_commands",
    "is_crate_manifest",
    "package_json",
    "run_command",
    "run_file_command",
    "runner_config",
]

_JS_RUNNERS = ("vitest", "jest", "mocha", "node --test", "karma", "jasmine", "ava")
_RUST_NAME = re.compile(r'^\s*name\s*=\s*"([^"]+)"', re.M)


#: the config a runner reads when none is named: ``vitest.config.ts``, ``jest.config.mjs`` …
_DEFAULT_CONFIG = re.compile(r"^(vitest|jest)\.config\.[mc]?[jt]s$")


@dataclass
class RepoFiles:
    """The head's files as the runners read them: one directory's file names (``lister``) and a
    file's bytes (``reader``), each remembered; ``identifier``, when given, names the git blob
    ``reader`` would read (None when it reads None) without reading it."""

    lister: Callable[[str], list[str]]
    reader: Callable[[str], bytes | None]
    identifier: Callable[[str], str | None] | None = None
    _names: dict[str, list[str]] = field(default_factory=dict)
    _bytes: dict[str, bytes | None] = field(default_factory=dict)
    #: directory → (runner, package directory, karma config), for the JavaScript tests there
    js_runners: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    #: package.json path → its parsed content
    manifests: dict[str, dict[str, object]] = field(default_factory=dict)
    #: (runner, package directory) → its default config and its other configs, as read
    runner_configs: dict[tuple[str, str], tuple[RunnerConfig | None, list[RunnerConfig]]] = field(
        default_factory=dict
    )
    #: runner config path → its one parse (``runner_config``)
    parsed_configs: dict[str, RunnerConfig | None] = field(default_factory=dict)

    def names(self, directory: str) -> list[str]:
        """File names (not paths) directly in ``directory`` ("" for the root), sorted."""
        if directory not in self._names:
            self._names[directory] = sorted(self.lister(directory))
        return self._names[directory]

    def exists(self, path: str) -> bool:
        return posixpath.basename(path) in self.names(posixpath.dirname(path))

    def blob_id(self, path: str) -> str | None:
        """The id of the blob ``read`` gives (None: absent, too big, or no ``identifier``)."""
        return self.identifier(path) if self.identifier is not None else None

    def read(self, path: str) -> bytes | None:
        if path not in self._bytes:
            self._bytes[path] = self.reader(path)
        return self._bytes[path]

    def nearest(self, path: str, match: Callable[[str], bool]) -> str | None:
        """The file nearest above ``path`` (same directory first) whose path ``match``es."""
        directory = posixpath.dirname(path)
        while True:
            for name in self.names(directory):
                candidate = f"{directory}/{name}" if directory else name
                if match(candidate):
                    return candidate
            if not directory:
                return None
            directory = posixpath.dirname(directory)


@dataclass(frozen=True)
class TestRun:
    """How one test case runs: its framework, its name there and a command."""

    __test__ = False  # not a pytest test class

    framework: str
    name: str
    command: str
    #: what ``command`` runs: ``test``, ``file`` (the whole file) or ``suite`` (the whole suite)
    scope: str = "test"


def _q(text: str) -> str:
    return shlex.quote(text)


def _path_word(path: str) -> str:
    """A repository-relative path as one command word no runner reads as an option: ``./``
    before a path that starts with ``-``, then shell-quoted."""
    return _q(f"./{path}" if path.startswith("-") else path)


def _unflagged(pattern: str) -> str:
    """A regular expression that matches what ``pattern`` does and does not start with ``-``."""
    return f"[-]{pattern[1:]}" if pattern.startswith("-") else pattern


def _valued(flag: str, value: str) -> str:
    """``--flag value``, or ``--flag=value`` when the value starts with ``-`` (an option parser
    would read it as another option)."""
    return f"{flag}={_q(value)}" if value.startswith("-") else f"{flag} {_q(value)}"


#: what a title holds in place of text the framework fills in when the test runs: Jest/Vitest
#: ``each`` formats (``%s``, ``%d``, ``%#``…) and ``$name`` / ``$a.b`` fields, a Ruby ``#{…}``
_PLACEHOLDER = re.compile(r"%[sdifjoOpc#%]|\$[A-Za-z_][\w.]*|#\{[^}]*\}")


def _pattern(text: str) -> str:
    """A title as a regular expression that matches it literally (spaces left as they are), but
    for its placeholders, which match anything: the title ``handles $label values`` runs as
    ``handles undefined values`` (a pattern of the placeholder itself matched no test); ``%%`` is
    the ``%`` an ``each`` title prints and stays ``%%`` in any other (``%%?`` matches both)."""
    parts: list[str] = []
    last = 0
    for match in _PLACEHOLDER.finditer(text):
        parts += [_literal(text[last : match.start()]), "%%?" if match.group() == "%%" else ".*"]
        last = match.end()
    return "".join([*parts, _literal(text[last:])])


def _literal(text: str) -> str:
    return re.sub(r"([.^$*+?()\[\]{}|\\])", r"\\\1", text)


def _in_dir(directory: str, command: str) -> str:
    return f"cd {_path_word(directory)} && {command}" if directory else command


def _relative(path: str, directory: str) -> str:
    """``path`` as a command run in ``directory`` names it: below it, the rest of the path; else
    through ``..`` (a Karma config above its package: ``../../karma.conf.js``)."""
    if not directory:
        return path
    if path.startswith(f"{directory}/"):
        return path[len(directory) + 1 :]
    return posixpath.relpath(path, directory)


def run_command(case: TestCase, path: str, files: RepoFiles) -> TestRun:
    """The framework, name and command of one test case of the file ``path``."""
    family = case.family
    if family == "pytest":
        return _pytest(case, path)
    if family == "go":
        return _go(case, path, files)
    if family == "rust":
        return _rust(case, path, files)
    if family == "js":
        return _js(case, path, files)
    if family == "junit":
        return _junit(case, path, files)
    if family == "dotnet":
        return _dotnet(case, path, files)
    return _ruby(case, path, files)


def run_file_command(path: str, files: RepoFiles) -> TestRun:
    """The framework and a command that runs every test of the file ``path`` (its name: the path;
    its scope ``file``, ``suite`` for Karma)."""
    run = _file_command(path, files)
    return dataclasses.replace(run, scope="suite" if run.framework == "karma" else "file")


def _file_command(path: str, files: RepoFiles) -> TestRun:
    language = language_for_path(path) or ""
    if language == "python":
        return TestRun("pytest", path, f"pytest {_path_word(path)}")
    if language == "go":
        root, target = _go_target(path, files)
        return TestRun("go test", path, _in_dir(root, f"go test {_q(target)}"))
    if language == "rust":
        return _rust_run(path, files, ())
    if language in ("javascript", "typescript", "tsx"):
        return _js_file(path, files)
    stem = posixpath.basename(path).split(".", 1)[0]
    if language == "java":
        return _junit_run(TestCase((stem,), 1, 1, "junit"), path, files, "")
    if language == "csharp":
        project = files.nearest(path, lambda p: p.endswith(".csproj"))
        target = f" {_path_word(project)}" if project else ""
        return TestRun(
            "dotnet test", path, f"dotnet test{target} --filter {_q(f'FullyQualifiedName~{stem}')}"
        )
    bundle = "bundle exec " if files.exists("Gemfile") else ""
    if path.endswith("_spec.rb"):
        return TestRun("rspec", path, f"{bundle}rspec {_path_word(path)}")
    return TestRun("minitest", path, f"{bundle}ruby -Ilib -Itest {_path_word(path)}")


def _js_file(path: str, files: RepoFiles) -> TestRun:
    runner, directory, config = _js_runner(files, path)
    relative = _path_word(_relative(path, directory))
    option = _config_option(files, runner, directory, path)
    commands = {
        "vitest": f"npx vitest run{option} {relative}",
        "mocha": f"npx mocha {relative}",
        "node --test": f"node --test {relative}",
        "karma": f"npx karma start {_path_word(config or 'karma.conf.js')} --single-run",
        "ava": f"npx ava {relative}",
        "jasmine": f"npx jasmine {relative}",
    }
    command = commands.get(runner, f"npx jest{option} {relative}")
    return TestRun(runner.replace("node --test", "node:test"), path, _in_dir(directory, command))


def _config_option(files: RepoFiles, runner: str, directory: str, path: str) -> str:
    """`` --config FILE`` when Vitest or Jest runs ``path`` by another config than its default:
    the package's default config (``vitest.config.ts``, ``jest.config.js``) is read and leaves the
    file out, and exactly one other config of the package (``vitest.config.e2e.ts``) takes it in
    (``rank/runnerconfig``; read, never run). "" otherwise: the default runs it, or it cannot be
    told."""
    if runner not in ("vitest", "jest"):
        return ""
    key = (runner, directory)
    if key not in files.runner_configs:
        files.runner_configs[key] = _package_configs(files, runner, directory)
    default, others = files.runner_configs[key]
    if default is None or default.includes(path):
        return ""
    taking = [config for config in others if config.includes(path)]
    if len(taking) != 1:
        return ""
    return f" --config {_path_word(_relative(taking[0].path, directory))}"


def _package_configs(
    files: RepoFiles, runner: str, directory: str
) -> tuple[RunnerConfig | None, list[RunnerConfig]]:
    """(the package's default config, its other configs) of ``runner``, as read; a default this
    reader cannot follow is None."""
    default: RunnerConfig | None = None
    others: list[RunnerConfig] = []
    for name in files.names(directory):
        if not is_runner_config(name) or not name.startswith(runner + "."):
            continue
        config_path = f"{directory}/{name}" if directory else name
        config = runner_config(files, config_path, without_setup=True) if files.read(config_path) else None
        if _DEFAULT_CONFIG.match(name):
            default = config
        elif config is not None:
            others.append(config)
    return default, others


def runner_config(files: RepoFiles, path: str, *, without_setup: bool = False) -> RunnerConfig | None:
    """The Vitest/Jest config at ``path`` as ``read_runner_config`` reads it, parsed at most once
    per run whoever asks (the tests a setup reaches, the config a test runs under)."""
    source = files.read(path) or b""
    if not without_setup and not names_a_setup(source):
        return None
    parsed = files.parsed_configs
    if path in parsed:
        config = parsed[path]
    else:  # one parse answers with or without a setup file
        config = parsed[path] = read_runner_config(path, source, without_setup=True)
    return config if without_setup or (config is not None and config.setups) else None


def _pytest(case: TestCase, path: str) -> TestRun:
    name = "::".join(case.parts)
    return TestRun("pytest", name, f"pytest {_path_word(f'{path}::{name}')}")


def _go_target(path: str, files: RepoFiles) -> tuple[str, str]:
    """(the module's directory, the package as ``go test`` names it from there)."""
    module = files.nearest(path, lambda p: posixpath.basename(p) == "go.mod")
    root = posixpath.dirname(module) if module else ""
    package = posixpath.dirname(_relative(path, root) if root else path)
    return root, f"./{package}" if package else "."


def _go(case: TestCase, path: str, files: RepoFiles) -> TestRun:
    name = case.parts[-1]
    root, target = _go_target(path, files)
    if name.startswith("Benchmark"):
        flags = f"-run '^$' -bench {_q(f'^{name}$')}"
    else:
        flags = f"-run {_q(f'^{name}$')}"
    return TestRun("go test", name, _in_dir(root, f"go test {_q(target)} {flags}"))


def _rust_module_path(path: str, crate: str) -> tuple[str | None, list[str]]:
    """(integration-test target or None, module path of the file inside its target)."""
    inside = _relative(path, crate).split("/")
    stem = inside[-1].removesuffix(".rs")
    if inside[0] == "tests" and len(inside) >= 2:
        if len(inside) == 2:
            return stem, []
        modules = inside[2:-1] + ([] if stem in ("main", "mod") else [stem])
        return inside[1], modules
    if inside[0] == "src":
        modules = inside[1:-1] + ([] if stem in ("lib", "main", "mod") else [stem])
        return None, modules
    return None, []


def is_crate_manifest(files: RepoFiles, path: str) -> bool:
    """A ``Cargo.toml`` that declares a package (not a workspace-only manifest)."""
    return posixpath.basename(path) == "Cargo.toml" and b"[package]" in (files.read(path) or b"")


def crate_name(files: RepoFiles, manifest: str) -> str | None:
    """The ``name`` of a ``Cargo.toml``'s ``[package]`` section (None without one)."""
    text = (files.read(manifest) or b"").decode("utf-8", "replace")
    if "[package]" not in text:
        return None
    found = _RUST_NAME.search(text.split("[package]", 1)[1].split("\n[", 1)[0])
    return found.group(1) if found else None


def _rust(case: TestCase, path: str, files: RepoFiles) -> TestRun:
    return _rust_run(path, files, case.parts)


def _rust_run(path: str, files: RepoFiles, parts: tuple[str, ...]) -> TestRun:
    """``cargo test`` of the tests named ``parts`` in the file (no parts: all of the file's)."""

    manifest = files.nearest(path, lambda candidate: is_crate_manifest(files, candidate))
    crate_dir = posixpath.dirname(manifest) if manifest else ""
    target, modules = _rust_module_path(path, crate_dir)
    filter_path = "::".join([*modules, *parts])
    words = ["cargo test"]
    name = crate_name(files, manifest) if manifest else None
    if name:
        words.append(f"--package={_q(name)}" if name.startswith("-") else f"-p {_q(name)}")
    if target:
        words.append(_valued("--test", target))
    chosen = filter_path if parts else f"{filter_path}::" if filter_path else ""
    if chosen:
        words.append(f"-- -- {_q(chosen)}" if chosen.startswith("-") else _q(chosen))
    return TestRun("cargo test", filter_path if parts else path, " ".join(words))


def package_json(files: RepoFiles, path: str) -> dict[str, object]:
    """The ``package.json`` at ``path`` parsed, once per run ({}: absent, not JSON, not an object,
    or nested past the parser's depth)."""
    if path not in files.manifests:
        files.manifests[path] = _read_package_json(files, path)
    return files.manifests[path]


def _read_package_json(files: RepoFiles, path: str) -> dict[str, object]:
    try:
        data = json.loads((files.read(path) or b"{}").decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _js_runner(files: RepoFiles, path: str) -> tuple[str, str, str]:
    """(runner, the package.json's directory, the karma config when karma), worked out once per
    directory (a change can reach hundreds of tests of one package)."""
    directory = posixpath.dirname(path)
    if directory not in files.js_runners:
        files.js_runners[directory] = _find_js_runner(files, path)
    return files.js_runners[directory]


def _find_js_runner(files: RepoFiles, path: str) -> tuple[str, str, str]:
    candidate = path
    while True:
        manifest = files.nearest(candidate, lambda p: posixpath.basename(p) == "package.json")
        if manifest is None:
            return "jest", "", ""
        data = package_json(files, manifest)
        directory = posixpath.dirname(manifest)
        runner = _runner_of(data, _relative(path, directory))
        if runner:
            config = ""
            if runner == "karma":
                found = files.nearest(manifest, lambda p: posixpath.basename(p).startswith("karma.conf"))
                config = _relative(found, directory) if found else ""
            return runner, directory, config
        if not directory:
            return "jest", "", ""
        candidate = directory


def _runner_of(data: dict[str, object], relative_path: str) -> str:
    """The runner a package.json uses for this file: the script whose paths cover the file, else the
    first runner its test scripts name, else the first one among its dependencies."""
    scripts = data.get("scripts")
    unscoped: list[str] = []
    if isinstance(scripts, dict):
        for key, value in scripts.items():
            if not isinstance(value, str) or "test" not in str(key):
                continue
            for command in re.split(r"&&|\|\||;", value):
                runner = next((r for r in _JS_RUNNERS if re.search(rf"(^|\s){r}(\s|$)", command)), "")
                if not runner:
                    continue
                after = re.split(rf"(?:^|\s){runner}(?:\s|$)", command, maxsplit=1)[-1]
                globs = [a.strip("'\"") for a in after.split() if "/" in a and not a.startswith("-")]
                if any(relative_path.startswith(g.split("*", 1)[0]) for g in globs):
                    return runner
                if not globs:  # a runner whose paths are in its own configuration
                    unscoped.append(runner)
    if unscoped:
        return unscoped[0]
    dependencies: dict[str, object] = {}
    for key in ("devDependencies", "dependencies"):
        value = data.get(key)
        if isinstance(value, dict):
            dependencies.update(value)
    return next((r for r in _JS_RUNNERS if r in dependencies), "")


def _js(case: TestCase, path: str, files: RepoFiles) -> TestRun:
    runner, directory, config = _js_runner(files, path)
    name = " ".join(case.parts)
    title = _unflagged(_pattern(name) if runner in ("vitest", "jest") else _pattern(case.parts[-1]))
    relative = _path_word(_relative(path, directory))
    option = _config_option(files, runner, directory, path)
    if runner == "vitest":
        command = f"npx vitest run{option} {relative} -t {_q(title)}"
    elif runner == "mocha":
        command = f"npx mocha {relative} --grep {_q(title)}"
    elif runner == "node --test":
        command = f"node --test --test-name-pattern={_q(title)} {relative}"
    elif runner == "karma":
        command = f"npx karma start {_path_word(config or 'karma.conf.js')} --single-run"
    elif runner == "ava":  # a match is a wildcard pattern, not a regular expression
        command = f"npx ava {relative} {_valued('--match', case.parts[-1])}"
    elif runner == "jasmine":
        command = f"npx jasmine {relative} --filter={_q(title)}"
    else:
        command = f"npx jest{option} {relative} -t {_q(title)}"
    return TestRun(
        runner.replace("node --test", "node:test"),
        " > ".join(case.parts),
        _in_dir(directory, command),
        "suite" if runner == "karma" else "test",
    )


def _junit(case: TestCase, path: str, files: RepoFiles) -> TestRun:
    return _junit_run(dataclasses.replace(case, parts=case.parts[:-1]), path, files, case.parts[-1])


def _junit_run(case: TestCase, path: str, files: RepoFiles, method: str) -> TestRun:
    """One method of the classes ``case.parts`` (no method: the whole class)."""
    classes = case.parts
    build = files.nearest(
        path, lambda p: posixpath.basename(p) in ("pom.xml", "build.gradle", "build.gradle.kts")
    )
    module = posixpath.dirname(build) if build else ""
    simple = "$".join(classes)
    qualified = ".".join(filter(None, [case.namespace, ".".join(classes)]))
    name = f"{qualified}.{method}" if method else path
    if build and build.endswith((".gradle", ".gradle.kts")):
        task = f":{module.replace('/', ':')}:test" if module else "test"
        selector = f"{qualified}.{method}" if method else qualified
        return TestRun("junit (gradle)", name, f"./gradlew {_q(task)} --tests {_q(selector)}")
    module_flag = f" -pl {_path_word(module)}" if module else ""
    selector = f"{simple}#{method}" if method else simple
    return TestRun("junit (maven)", name, f"mvn test{module_flag} -Dtest={_q(selector)}")


def _dotnet(case: TestCase, path: str, files: RepoFiles) -> TestRun:
    project = files.nearest(path, lambda p: p.endswith(".csproj"))
    classes, method = case.parts[:-1], case.parts[-1]
    qualified = ".".join(filter(None, [case.namespace, "+".join(classes), method]))
    target = f" {_path_word(project)}" if project else ""
    short = f"{classes[-1]}.{method}" if classes else method
    return TestRun(
        "dotnet test", qualified, f"dotnet test{target} --filter {_q(f'FullyQualifiedName~{short}')}"
    )


def _ruby(case: TestCase, path: str, files: RepoFiles) -> TestRun:
    bundle = "bundle exec " if files.exists("Gemfile") else ""
    if case.family == "rspec":
        return TestRun(
            "rspec", " ".join(case.parts), f"{bundle}rspec {_path_word(f'{path}:{case.start_line}')}"
        )
    last = case.parts[-1]
    selector = last if not case.is_title else f"/{_pattern(last)}/"
    return TestRun(
        "minitest", " ".join(case.parts), f"{bundle}ruby -Ilib -Itest {_path_word(path)} -n {_q(selector)}"
    )


# -- several tests in one line ---------------------------------------------------------------------


@dataclass
class _Group:
    """Tests one command line can run together: the words before the selection, and the selection."""

    framework: str
    head: list[str]
    #: Jest/Vitest/Mocha: the runner's words at the head of ``head`` (the files follow)
    runner_words: int = 0
    selected: list[str] = field(default_factory=list)
    whole: bool = False  # a member runs without a filter: the line runs everything ``head`` does
    members: int = 0


def _split(command: str) -> tuple[str, list[str]]:
    """(the directory the command runs in, its words): the words of a command ``runners`` built."""
    try:
        words = shlex.split(command)
    except ValueError:
        return "", []
    if len(words) > 3 and words[0] == "cd" and words[2] == "&&":
        return words[1], words[3:]
    return "", words


def _selection(framework: str, words: list[str]) -> tuple[list[str], str | None] | None:
    """(the words before the selection, the selection or None for a whole target) of one
    command, or None when it is not one this module can group."""
    if framework == "cargo test" and words[:2] == ["cargo", "test"]:
        return _cargo_selection(words)
    if framework in ("jest", "vitest", "mocha"):
        runner = ["npx", framework, *(["run"] if framework == "vitest" else [])]
        flag = "--grep" if framework == "mocha" else "-t"
        rest = words[len(runner) :]
        if words[: len(runner)] == runner and rest[:1] == ["--config"] and len(rest) > 2:
            runner, rest = [*runner, *rest[:2]], rest[2:]  # a config of its own: part of the head
        if words[: len(runner)] != runner or len(rest) not in (1, 3) or (len(rest) == 3 and rest[1] != flag):
            return None
        return [*runner, rest[0]], rest[2] if len(rest) == 3 else None
    if framework == "junit (maven)" and words[:2] == ["mvn", "test"] and words[-1].startswith("-Dtest="):
        return words[:-1], words[-1].removeprefix("-Dtest=")
    if framework == "junit (gradle)" and len(words) == 4 and words[2] == "--tests":
        return words[:2], words[3]
    if framework == "dotnet test" and len(words) >= 4 and words[-2] == "--filter":
        return words[:-2], words[-1]
    if framework == "rspec" and words[-2:-1] == ["rspec"]:
        return words[:-1], words[-1]
    return None


def _cargo_selection(words: list[str]) -> tuple[list[str], str | None] | None:
    """``cargo test`` with its ``-p``/``--test`` options (``--package=``/``--test=`` too), then at
    most one filter (after ``-- --`` when it starts with ``-``)."""
    head, rest = words[:2], words[2:]
    while rest:
        if rest[0] in ("-p", "--test") and len(rest) > 1:
            head, rest = [*head, *rest[:2]], rest[2:]
        elif rest[0].startswith(("--package=", "--test=")):
            head, rest = [*head, rest[0]], rest[1:]
        else:
            break
    if rest[:2] == ["--", "--"] and len(rest) == 3:
        rest = rest[2:]
    if len(rest) > 1:
        return None
    return head, rest[0] if rest else None


def _joined(group: _Group) -> str:
    """The one command line of a group, every word shell-quoted."""
    head = " ".join(_q(w) for w in group.head)
    chosen = list(dict.fromkeys(group.selected))
    if group.framework == "cargo test":
        # libtest reads a filter that starts with ``-`` as an option unless a second ``--`` ends them
        separator = "-- --" if any(s.startswith("-") for s in chosen) else "--"
        return head if group.whole else f"{head} {separator} {' '.join(_q(s) for s in chosen)}"
    if group.framework in ("jest", "vitest", "mocha"):
        files = list(dict.fromkeys(group.head[group.runner_words :]))
        runner = " ".join(_q(w) for w in [*group.head[: group.runner_words], *files])
        if group.whole:
            return runner
        flag = "--grep" if group.framework == "mocha" else "-t"
        return f"{runner} {flag} {_q('|'.join(chosen))}"
    if group.framework == "junit (maven)":
        methods: dict[str, list[str]] = {}
        for selector in chosen:
            cls, _, method = selector.partition("#")
            methods.setdefault(cls, [])
            if not method:
                methods[cls].append("")
            elif "" not in methods[cls]:
                methods[cls].append(method)
        parts = [c if "" in m else f"{c}#{'+'.join(m)}" for c, m in methods.items()]
        return f"{head} -Dtest={_q(','.join(parts))}"
    if group.framework == "junit (gradle)":
        return f"{head} " + " ".join(f"--tests {_q(s)}" for s in chosen)
    if group.framework == "dotnet test":
        return f"{head} --filter {_q('|'.join(chosen))}"
    return f"{head} " + " ".join(_q(s) for s in chosen)


def group_commands(runs: Sequence[tuple[str, str]]) -> list[tuple[str, str, int]]:
    """(framework, one line, how many of the runs it runs) per framework and place (directory,
    crate, target, module, project) where two or more of the ``(framework, command)`` runs can go
    in one command: ``cargo test
    -p crate --test target -- name1 name2`` (libtest runs a test any of its filters match), one
    Jest/Vitest/Mocha run of the files with the titles' patterns as one alternation,
    ``mvn test -Dtest='A#m1+m2,B#m3'``, ``./gradlew test --tests a --tests b``, ``dotnet test
    --filter 'A|B'``, ``rspec a:12 b:40``. A run of a whole file or target makes its line run
    the whole of it. Every word is shell-quoted again: a hostile test name stays one word."""
    groups: dict[tuple[str, str, tuple[str, ...]], _Group] = {}
    for framework, command in runs:
        directory, words = _split(command)
        found = _selection(framework, words) if words else None
        if found is None:
            continue
        head, chosen = found
        group_head = head[:-1] if framework in ("jest", "vitest", "mocha") else head
        key = (framework, directory, tuple(group_head))
        group = groups.setdefault(key, _Group(framework, list(group_head), len(group_head)))
        if framework in ("jest", "vitest", "mocha"):
            group.head.append(head[-1])
        group.members += 1
        if chosen is None:
            group.whole = True
        else:
            group.selected.append(chosen)
    out: list[tuple[str, str, int]] = []
    for (framework, directory, _), group in groups.items():
        if group.members > 1:
            out.append((framework, _in_dir(directory, _joined(group)), group.members))
    return out
