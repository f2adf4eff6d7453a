"""Repository clones → how correct knowing-pr's ``calls`` edges are, judged by an independent
oracle: jedi for Python, the TypeScript compiler's type checker for TypeScript and JavaScript,
go/types for Go.

Usage::

    python bench/edge_oracle.py --language python|typescript|javascript|go --repo CLONE
        [--repo CLONE ...] --db-dir DIR --tools-dir DIR [--subdir PATH ...] [--max-files N]
        [--json OUT.json]

``--config FILE`` indexes with that ``.knowing-pr.yml`` (``index: {scoped_languages: []}``:
every language resolved by names only, which measures the ``name_*`` rules).

For example (clones of pallets/jinja, psf/black, python-attrs/attrs, marshmallow-code/
marshmallow; trpc/trpc, vitejs/vite; axios/axios, koajs/koa; go-chi/chi, spf13/cobra,
urfave/cli)::

    python bench/edge_oracle.py --language python --repo jinja --repo black --repo attrs \
        --repo marshmallow --db-dir stores --tools-dir tools --json python.json
    python bench/edge_oracle.py --language typescript --repo trpc --subdir packages/server \
        --repo vite --subdir packages/vite --db-dir stores --tools-dir tools --json ts.json
    python bench/edge_oracle.py --language javascript --repo axios --repo koa ...
    python bench/edge_oracle.py --language go --repo chi --repo cobra --repo cli ...

Tools (installed into ``--tools-dir`` on the first run, reused after; none of them is a
dependency of knowing-pr or of its tests):

- Python: a virtual environment ``DIR/venv`` made with this interpreter, with
  ``jedi==JEDI_VERSION`` from PyPI; ``bench/oracle/py_sites.py`` runs in it;
- TypeScript / JavaScript: ``npm install --prefix DIR typescript@TYPESCRIPT_VERSION``; Node.js
  (``node``, ``npm``) must be on PATH (Debian: ``apt-get install nodejs npm``);
  ``bench/oracle/ts_sites.js`` runs with it;
- Go: nothing is installed; ``go`` must be on PATH (Debian: ``apt-get install golang-go``,
  Go 1.19 or later); ``go run bench/oracle/go_sites.go`` uses the standard library only.

Per repository:

1. the graph: ``python -m knowing_pr export --format jsonl`` of this checkout (store in
   ``--db-dir``); the files are those of the graph's module nodes in the language
   (``.pyi`` and ``.d.ts`` left out), under ``--subdir`` if given (one for all repositories or
   one per ``--repo``, in order), the first ``--max-files`` of them in path order if given;
2. the call sites: the oracle script parses those files with its own parser (``ast``; the
   TypeScript compiler API; go/parser) and records, for each call, its file, line, column,
   callee name, form (``f()``, ``self.m()``/``this.m()``/a Go method's receiver, ``obj.m()``,
   ``obj.attr.m()``, ``super().m()``, ``pkg.f()`` (Go), ``expr.m()``, ``@decorator``;
   ``Class()`` when the oracle's targets are all types, for ``new`` and Go conversions), the
   receiver's text and the enclosing named definitions; the oracle gives the callee's
   definitions (see the docstrings of ``bench/oracle/*``);
3. a site belongs to the innermost enclosing definition that is one of our nodes (same file,
   same name, start line at the definition's first decorator or ``export`` line, or its name
   line, ±1), else to the file's module node: calls in nested functions that are not nodes,
   lambdas and anonymous functions belong to the nearest enclosing node, as in knowing-pr;
4. an oracle target in the repository maps to our node of the same file and name whose line
   range holds the target's name line (the innermost); a constructor call maps to the class
   node (knowing-pr links ``Foo()`` / ``new Foo()`` to the class, never to ``__init__`` or
   ``constructor``); a repository target that is no node of ours stays ``repo-other``.

Precision (one verdict per ``calls`` edge whose source lies in the files read): the sites of
the edge's source node whose callee name is the target's name. ``correct``: the oracle resolves
one of them to the target node; ``wrong``: it resolves every one of them, none to the target
(another repository symbol, a builtin, the standard library or a third-party package);
``unjudged`` otherwise, split into ``no-site`` (no such site: a decorator, a name our parser
saw and ``ast`` did not), ``unresolved`` (the oracle resolves none) and ``partial`` (some
resolved elsewhere, some not at all). Precision = correct / (correct + wrong), per rule, per
confidence and per form of the edge's first site.

Recall: the sites whose oracle targets include one of our nodes other than the enclosing node
(a recursive call makes no edge); recalled when our graph has a ``calls`` edge from the
enclosing node to one of those target nodes. Per form.

Wrong edges are classified by the first matching cause (``CAUSES``); the JSON output lists
each with its source, target, rule, sites and the oracle's answers, and samples the misses.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import venv
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

JEDI_VERSION = "0.19.2"
TYPESCRIPT_VERSION = "5.9.3"
BENCH_DIR = Path(__file__).resolve().parent
CHECKOUT = BENCH_DIR.parent
sys.path.insert(0, str(CHECKOUT))

from knowing_pr.graph.rules import RESOLUTION_RULES  # noqa: E402

LANGUAGES = {
    "python": ({"python"}, (".py",)),
    "typescript": ({"typescript", "tsx"}, (".ts", ".tsx", ".mts", ".cts")),
    "javascript": ({"javascript"}, (".js", ".jsx", ".mjs", ".cjs")),
    "go": ({"go"}, (".go",)),
}
SKIPPED_SUFFIXES = (".pyi", ".d.ts", ".d.mts", ".d.cts")
#: the resolution rules as the index names them; "unknown": an edge stored without one
RULES = (*RESOLUTION_RULES, "unknown")
FORMS = (
    "f()",
    "self.m()",
    "obj.m()",
    "obj.attr.m()",
    "Class()",
    "super().m()",
    "pkg.f()",
    "expr.m()",
    "@decorator",
)
TYPE_NODE_KINDS = frozenset({"class", "struct", "interface", "trait", "enum"})
PARAM_BINDINGS = frozenset({"param", "Parameter", "BindingElement"})
LOCAL_BINDINGS = frozenset({"statement", "VariableDeclaration", "var"})
SELF_ROOTS = ("self", "cls", "this")
CAUSES = (
    "self.attr.m() treated as self.m()",
    "local definition (nested def/class) linked to a same-named outer one",
    "call through a parameter/variable -> same-named repo definition",
    "builtin resolved to a repo symbol",
    "method call on a stdlib/third-party object",
    "stdlib/third-party function -> same-named repo definition",
    "import bound wrong",
    "inherited method linked to a sibling class",
    "same-named method of another class",
    "same-named definition elsewhere in the repo",
    "other",
)
MISSING_SAMPLES = 40


# ---------------------------------------------------------------- tools


def python_tools(tools_dir: Path) -> Path:
    """The bench venv's interpreter, created with jedi pinned on the first run."""
    env_dir = tools_dir / "venv"
    python = env_dir / "bin" / "python"
    if not python.exists():
        venv.create(env_dir, with_pip=True)
    probe = subprocess.run(
        [str(python), "-c", "import jedi; print(jedi.__version__)"], capture_output=True, text=True
    )
    if probe.returncode != 0 or probe.stdout.strip() != JEDI_VERSION:
        subprocess.run([str(python), "-m", "pip", "install", "-q", f"jedi=={JEDI_VERSION}"], check=True)
    return python


def typescript_tools(tools_dir: Path) -> Path:
    """``DIR/node_modules/typescript``, installed with npm on the first run."""
    package = tools_dir / "node_modules" / "typescript"
    manifest = package / "package.json"
    installed = json.loads(manifest.read_text(encoding="utf-8")).get("version") if manifest.exists() else None
    if installed != TYPESCRIPT_VERSION:
        tools_dir.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                "npm",
                "install",
                "--prefix",
                str(tools_dir),
                "--no-audit",
                "--no-fund",
                f"typescript@{TYPESCRIPT_VERSION}",
            ],
            check=True,
        )
    return package


# ---------------------------------------------------------------- our graph


@dataclass(frozen=True)
class GraphNode:
    id: str
    kind: str
    name: str
    qualified_name: str
    file: str
    start_line: int
    end_line: int
    language: str


@dataclass(frozen=True)
class CallEdge:
    source: str
    target: str
    confidence: float
    rule: str


@dataclass
class Graph:
    nodes: dict[str, GraphNode] = field(default_factory=dict)
    calls: list[CallEdge] = field(default_factory=list)
    by_file_name: dict[tuple[str, str], list[GraphNode]] = field(default_factory=lambda: defaultdict(list))
    module_of: dict[str, GraphNode] = field(default_factory=dict)

    def add_node(self, node: GraphNode) -> None:
        self.nodes[node.id] = node
        if node.kind == "module":
            self.module_of[node.file] = node
        else:
            self.by_file_name[(node.file, node.name)].append(node)

    @property
    def call_pairs(self) -> set[tuple[str, str]]:
        return {(e.source, e.target) for e in self.calls}


def export_graph(repo: Path, db: Path, config: Path | None = None) -> Graph:
    """Our graph of ``repo`` (indexed into ``db`` when needed) from ``knowing_pr export``
    (``config``: a ``.knowing-pr.yml`` to index with, e.g. ``index: {scoped_languages: []}``)."""
    db.parent.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(CHECKOUT), os.environ.get("PYTHONPATH")])),
    }
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "graph.jsonl"
        command = [sys.executable, "-m", "knowing_pr", "export", "--repo", str(repo), "--db", str(db)]
        if config is not None:
            command += ["--config", str(config)]
        subprocess.run([*command, "--format", "jsonl", "--out", str(out)], check=True, env=env)
        return read_graph(out.read_text(encoding="utf-8").splitlines())


def read_graph(lines: Iterable[str]) -> Graph:
    graph = Graph()
    for line in lines:
        record = json.loads(line)
        if record["type"] == "node":
            fields = {k: record[k] for k in GraphNode.__dataclass_fields__}
            graph.add_node(GraphNode(**fields))
        elif record["kind"] == "calls":
            graph.calls.append(
                CallEdge(record["source"], record["target"], record["confidence"], record["rule"])
            )
    return graph


def select_files(graph: Graph, language: str, subdir: str | None, max_files: int | None) -> list[str]:
    languages, suffixes = LANGUAGES[language]
    prefix = subdir.strip("/") + "/" if subdir else ""
    files = sorted(
        node.file
        for node in graph.module_of.values()
        if node.language in languages
        and node.file.startswith(prefix)
        and node.file.endswith(suffixes)
        and not node.file.endswith(SKIPPED_SUFFIXES)
    )
    return files[:max_files] if max_files else files


# ---------------------------------------------------------------- oracle


def oracle_sites(language: str, repo: Path, files: Sequence[str], tools_dir: Path) -> list[dict[str, Any]]:
    """Run the language's oracle script over ``files``; its call sites in file/line order."""
    with tempfile.TemporaryDirectory() as tmp:
        listing, out = Path(tmp) / "files.txt", Path(tmp) / "sites.jsonl"
        listing.write_text("\n".join(files) + "\n", encoding="utf-8")
        if language == "python":
            python = python_tools(tools_dir)
            command = [str(python), str(BENCH_DIR / "oracle" / "py_sites.py")]
        elif language == "go":
            command = ["go", "run", str(BENCH_DIR / "oracle" / "go_sites.go")]
        else:
            typescript = typescript_tools(tools_dir)
            command = ["node", str(BENCH_DIR / "oracle" / "ts_sites.js"), "--typescript", str(typescript)]
        command += ["--repo", str(repo), "--files", str(listing), "--out", str(out)]
        # jedi reads the packages of an activated virtual environment (``VIRTUAL_ENV``) before its
        # own: one with the repository installed turns every import of it into "external"
        env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
        subprocess.run(command, check=True, cwd=tmp, env=env)
        sites = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line]
    return sorted(sites, key=lambda s: (s["file"], s["line"], s["col"]))


# ---------------------------------------------------------------- mapping


@dataclass
class Answer:
    """One oracle target of a site: our node, or a label for what it is instead."""

    node: str | None
    label: str
    external: bool
    builtin: bool
    abstract: bool


def scope_node(graph: Graph, file: str, scope: Sequence[Sequence[Any]]) -> GraphNode | None:
    """The innermost enclosing definition that is one of our nodes, else the module."""
    for name, name_line, start, _end in scope:
        candidates = [
            n for n in graph.by_file_name.get((file, name), []) if start - 1 <= n.start_line <= name_line + 1
        ]
        if candidates:
            return min(candidates, key=lambda n: abs(n.start_line - start))
    return graph.module_of.get(file)


def target_answer(graph: Graph, target: dict[str, Any]) -> Answer:
    module = target.get("module") or ""
    if target["external"]:
        builtin = module == "builtins" or "/typescript/lib/lib." in module
        where = "builtins" if builtin else Path(module).name if "/" in module else module
        return Answer(None, f"external:{where}.{target['name']}", True, builtin, False)
    label = f"{target['file']}:{target['line']}:{target['name'] or '<anonymous>'}"
    if target.get("abstract"):
        return Answer(None, f"abstract:{label}", False, False, True)
    line = target["line"]
    same_named = sorted(
        graph.by_file_name.get((target["file"], target["name"]), []), key=lambda n: n.start_line
    )
    holders = [n for n in same_named if n.start_line <= line <= n.end_line]
    if not holders:  # ``@overload`` stubs: our node is the first, the oracle names the implementation
        holders = [n for n in same_named if n.start_line <= line and n.kind != "class"][-1:]
    if holders:
        node = max(holders, key=lambda n: n.start_line)
        return Answer(node.id, node.qualified_name, False, False, False)
    return Answer(None, f"repo-other:{label}", False, False, False)


@dataclass
class Site:
    file: str
    line: int
    callee: str
    form: str
    receiver: str
    binding: str
    self_root: bool  # the receiver chain starts at self / cls / this / the Go method's receiver
    enclosing: GraphNode | None
    answers: list[Answer]

    @property
    def resolved(self) -> bool:
        return any(not a.abstract for a in self.answers)

    @property
    def target_nodes(self) -> set[str]:
        return {a.node for a in self.answers if a.node is not None}

    def describe(self) -> dict[str, Any]:
        return {
            "at": f"{self.file}:{self.line}",
            "callee": self.callee,
            "form": self.form,
            "receiver": self.receiver,
            "binding": self.binding,
            "oracle": [a.label for a in self.answers] or ["<unresolved>"],
        }


def build_sites(graph: Graph, records: Iterable[dict[str, Any]]) -> list[Site]:
    sites = []
    for record in records:
        answers = [target_answer(graph, t) for t in record["targets"]]
        receiver = record.get("receiver", "")
        site = Site(
            file=record["file"],
            line=record["line"],
            callee=record["callee"],
            form=record["form"],
            receiver=receiver,
            binding=record.get("binding", ""),
            self_root=record.get("self_root", _receiver_root(receiver) in SELF_ROOTS),
            enclosing=scope_node(graph, record["file"], record["scope"]),
            answers=answers,
        )
        nodes = [graph.nodes[n] for n in site.target_nodes]
        if nodes and all(n.kind in TYPE_NODE_KINDS for n in nodes) and site.form != "@decorator":
            site.form = "Class()"
        elif site.form == "this.m()":
            site.form = "self.m()"
        sites.append(site)
    return sites


# ---------------------------------------------------------------- precision


@dataclass
class Verdict:
    edge: CallEdge
    verdict: str  # correct | wrong | no-site | unresolved | partial
    sites: list[Site]
    cause: str = ""


def judge_edges(graph: Graph, sites: Sequence[Site], files: set[str]) -> list[Verdict]:
    by_scope_name: dict[tuple[str, str], list[Site]] = defaultdict(list)
    for site in sites:
        if site.enclosing is not None:
            by_scope_name[(site.enclosing.id, site.callee)].append(site)
    verdicts = []
    for edge in graph.calls:
        source, target = graph.nodes.get(edge.source), graph.nodes.get(edge.target)
        if source is None or target is None or source.file not in files:
            continue
        own = by_scope_name.get((edge.source, target.name), [])
        resolved = [s for s in own if s.resolved]
        if not own:
            verdict = "no-site"
        elif any(edge.target in s.target_nodes for s in own):
            verdict = "correct"
        elif not resolved:
            verdict = "unresolved"
        elif len(resolved) == len(own):
            verdict = "wrong"
        else:
            verdict = "partial"
        judged = Verdict(edge, verdict, own)
        if verdict == "wrong":
            judged.cause = classify(graph, judged)
        verdicts.append(judged)
    return verdicts


def _receiver_root(receiver: str) -> str:
    return receiver.split(".", 1)[0].split("(", 1)[0]


def classify(graph: Graph, verdict: Verdict) -> str:
    """The first cause of ``CAUSES`` that fits a wrong edge."""
    sites = verdict.sites
    answers = [a for s in sites for a in s.answers if not a.abstract]
    target = graph.nodes[verdict.edge.target]
    forms = {s.form for s in sites}
    if any(s.form == "obj.attr.m()" and s.self_root for s in sites):
        return CAUSES[0]
    source = graph.nodes[verdict.edge.source]
    if any(a.node is not None and _is_local_to(graph, graph.nodes[a.node], source) for a in answers):
        return CAUSES[1]
    if any(s.form == "f()" and s.binding in PARAM_BINDINGS | LOCAL_BINDINGS for s in sites):
        return CAUSES[2]
    if all(a.external for a in answers):
        if all(a.builtin for a in answers):
            return CAUSES[3]
        if forms & {"obj.m()", "obj.attr.m()", "expr.m()", "self.m()"}:
            return CAUSES[4]
        return CAUSES[5]
    if verdict.edge.rule == "import":
        return CAUSES[6]
    other_methods = [graph.nodes[a.node] for a in answers if a.node is not None]
    if target.kind == "method" and any(n.kind == "method" for n in other_methods):
        return CAUSES[7] if "self.m()" in forms or "super().m()" in forms else CAUSES[8]
    if any(a.node is not None or a.label.startswith("repo-other:") for a in answers):
        return CAUSES[9]
    return CAUSES[10]


def _is_local_to(graph: Graph, definition: GraphNode, source: GraphNode) -> bool:
    """``definition`` is nested in a function that is ``source`` or encloses it."""
    parent = definition.qualified_name.rsplit(".", 1)[0]
    if not (source.qualified_name == parent or source.qualified_name.startswith(parent + ".")):
        return False
    return any(
        n.qualified_name == parent and n.kind in ("function", "method")
        for n in graph.by_file_name.get((definition.file, parent.rsplit(".", 1)[-1]), [])
    )


def ratio(good: int, total: int) -> float | None:
    return round(good / total, 4) if total else None


def precision_table(verdicts: Sequence[Verdict], key: Any) -> dict[str, dict[str, Any]]:
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for verdict in verdicts:
        for group in (key(verdict), "all"):
            table[str(group)][verdict.verdict] += 1
            table[str(group)]["edges"] += 1
    return {
        group: {**counts, "precision": ratio(counts["correct"], counts["correct"] + counts["wrong"])}
        for group, counts in table.items()
    }


# ---------------------------------------------------------------- recall


def recall_by_form(
    graph: Graph, sites: Sequence[Site]
) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    pairs = graph.call_pairs
    table: dict[str, Counter[str]] = defaultdict(Counter)
    missing = []
    for site in sites:
        if site.enclosing is None:
            continue
        targets = site.target_nodes - {site.enclosing.id}
        if not targets:
            continue
        hit = any((site.enclosing.id, t) in pairs for t in targets)
        for group in (site.form, "all"):
            table[group]["sites"] += 1
            table[group]["with_edge"] += hit
        if not hit:
            missing.append(
                {
                    **site.describe(),
                    "source": site.enclosing.qualified_name,
                    "oracle_nodes": sorted(graph.nodes[t].qualified_name for t in targets),
                }
            )
    step = max(1, len(missing) // MISSING_SAMPLES)
    report = {g: {**c, "recall": ratio(c["with_edge"], c["sites"])} for g, c in table.items()}
    return report, missing[::step][:MISSING_SAMPLES]


# ---------------------------------------------------------------- one repository


def site_status(site: Site) -> str:
    """``repo-node``, ``repo-other`` (a repository definition that is none of our nodes),
    ``abstract``, ``external`` or ``unresolved``."""
    if site.target_nodes:
        return "repo-node"
    if any(not a.external and not a.abstract for a in site.answers):
        return "repo-other"
    if site.answers and all(a.abstract for a in site.answers):
        return "abstract"
    return "external" if site.resolved else "unresolved"


def evaluate(graph: Graph, records: Sequence[dict[str, Any]], files: Sequence[str]) -> dict[str, Any]:
    sites = build_sites(graph, records)
    verdicts = judge_edges(graph, sites, set(files))
    recall, missing = recall_by_form(graph, sites)
    wrong = [v for v in verdicts if v.verdict == "wrong"]
    status = Counter(site_status(s) for s in sites)
    return {
        "files": len(files),
        "sites": {"total": len(sites), **dict(status)},
        "precision_by_rule": precision_table(verdicts, lambda v: v.edge.rule),
        "precision_by_confidence": precision_table(verdicts, lambda v: v.edge.confidence),
        "precision_by_form": precision_table([v for v in verdicts if v.sites], lambda v: v.sites[0].form),
        "recall_by_form": recall,
        "wrong_causes": dict(Counter(v.cause for v in wrong).most_common()),
        "wrong_edges": [_wrong_record(graph, v) for v in wrong],
        "missing_samples": missing,
    }


def _wrong_record(graph: Graph, verdict: Verdict) -> dict[str, Any]:
    return {
        "source": graph.nodes[verdict.edge.source].qualified_name,
        "target": graph.nodes[verdict.edge.target].qualified_name,
        "rule": verdict.edge.rule,
        "confidence": verdict.edge.confidence,
        "cause": verdict.cause,
        "sites": [s.describe() for s in verdict.sites],
    }


def head_commit(repo: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()


def run_repo(
    repo: Path,
    language: str,
    db_dir: Path,
    tools_dir: Path,
    subdir: str | None,
    max_files: int | None,
    config: Path | None = None,
) -> dict[str, Any]:
    graph = export_graph(repo, db_dir / f"{repo.name}.sqlite", config)
    files = select_files(graph, language, subdir, max_files)
    if not files:
        raise SystemExit(f"{repo}: no {language} files in the graph" + (f" under {subdir}" if subdir else ""))
    print(f"{repo.name}: {len(files)} {language} files, asking the oracle …", file=sys.stderr)
    records = oracle_sites(language, repo, files, tools_dir)
    report = evaluate(graph, records, files)
    return {"repo": repo.name, "commit": head_commit(repo), "subdir": subdir or "", **report}


# ---------------------------------------------------------------- totals and tables


def merge_counts(tables: Sequence[dict[str, dict[str, Any]]], total: str, good: str, share: str) -> dict:
    merged: dict[str, Counter[str]] = defaultdict(Counter)
    for table in tables:
        for group, counts in table.items():
            merged[group].update({k: v for k, v in counts.items() if isinstance(v, int)})
    out = {}
    for group, counts in merged.items():
        base = counts[total] if total else counts["correct"] + counts["wrong"]
        out[group] = {**counts, share: ratio(counts[good], base)}
    return out


def totals(reports: Sequence[dict[str, Any]]) -> dict[str, Any]:
    causes: Counter[str] = Counter()
    for report in reports:
        causes.update(report["wrong_causes"])
    return {
        "precision_by_rule": merge_counts(
            [r["precision_by_rule"] for r in reports], "", "correct", "precision"
        ),
        "recall_by_form": merge_counts(
            [r["recall_by_form"] for r in reports], "sites", "with_edge", "recall"
        ),
        "wrong_causes": dict(causes.most_common()),
    }


def _pct(value: float | None) -> str:
    return "    –" if value is None else f"{100 * value:5.1f}%"


def print_report(title: str, report: dict[str, Any], out: Any = sys.stdout) -> None:
    print(f"\n## {title}", file=out)
    if "sites" in report:
        sites = report["sites"]
        print(
            f"files {report['files']}; call sites {sites['total']}: "
            + ", ".join(f"{k} {v}" for k, v in sorted(sites.items()) if k != "total"),
            file=out,
        )
    print(
        f"{'precision by rule':<22}{'edges':>7}{'correct':>9}{'wrong':>7}{'unjudged':>10}{'prec.':>8}",
        file=out,
    )
    table = report["precision_by_rule"]
    for rule in [*RULES, "all"]:
        c = table.get(rule)
        if not c:
            continue
        unjudged = c.get("no-site", 0) + c.get("unresolved", 0) + c.get("partial", 0)
        print(
            f"  {rule:<20}{c.get('edges', 0):>7}{c.get('correct', 0):>9}{c.get('wrong', 0):>7}"
            f"{unjudged:>10}{_pct(c['precision']):>8}",
            file=out,
        )
    print(f"{'recall by form':<22}{'sites':>7}{'w/ edge':>9}{'recall':>8}", file=out)
    for form in [*FORMS, "all"]:
        c = report["recall_by_form"].get(form)
        if c:
            print(f"  {form:<20}{c['sites']:>7}{c['with_edge']:>9}{_pct(c['recall']):>8}", file=out)
    if report["wrong_causes"]:
        print("wrong-edge causes", file=out)
        for cause, count in report["wrong_causes"].items():
            print(f"  {count:>5}  {cause}", file=out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", action="append", required=True, help="a clone (repeatable)")
    parser.add_argument("--language", choices=sorted(LANGUAGES), required=True)
    parser.add_argument("--db-dir", required=True, help="where the stores go (one per repository)")
    parser.add_argument("--tools-dir", required=True, help="bench venv (jedi) and node_modules (typescript)")
    parser.add_argument("--subdir", action="append", default=[], help="only files under this path")
    parser.add_argument("--max-files", type=int, default=None)
    parser.add_argument("--json", default=None, metavar="OUT", help="write everything to this JSON file")
    parser.add_argument(
        "--config",
        default=None,
        metavar="FILE",
        help="a .knowing-pr.yml to index with (e.g. `index: {scoped_languages: []}` measures name-only rules)",
    )
    args = parser.parse_args(argv)
    if len(args.subdir) not in (0, 1, len(args.repo)):
        parser.error("give --subdir once, or once per --repo")
    subdirs = (
        args.subdir * len(args.repo) if len(args.subdir) == 1 else args.subdir or [None] * len(args.repo)
    )
    reports = [
        run_repo(
            Path(repo).resolve(),
            args.language,
            Path(args.db_dir).resolve(),
            Path(args.tools_dir).resolve(),
            sub,
            args.max_files,
            Path(args.config).resolve() if args.config else None,
        )
        for repo, sub in zip(args.repo, subdirs, strict=True)
    ]
    for report in reports:
        where = f" ({report['subdir']})" if report["subdir"] else ""
        print_report(f"{report['repo']}{where} @ {report['commit'][:10]}", report)
    total = totals(reports)
    if len(reports) > 1:
        print_report(f"all {args.language} repositories", total)
    if args.json:
        payload = {
            "language": args.language,
            "jedi": JEDI_VERSION,
            "typescript": TYPESCRIPT_VERSION,
            "repositories": reports,
            "total": total,
        }
        Path(args.json).write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
