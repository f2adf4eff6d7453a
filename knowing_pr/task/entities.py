"""Task description → named entities, change type, and a confidence score with suggestions
(seed 001, "Stage 2: Task Resolution").

- ``extract_entities``: file names (``user.py``, ``src/payment-service.ts``), class names
  (``UserController``), method names (``handleWebhook``, ``process_payment``, ``x.run()``),
  routes (``/api/users``, ``GET /checkout``), error codes (``E_USER_DEPRECATED``,
  ``ECONNREFUSED``, ``HTTP 503``);
- ``classify_change``: bugfix / feature / refactor / perf / security by indicator words
  (``unknown`` when none is present; a stack trace makes it a bugfix);
- ``assess_confidence``: a 0–1 score from what the task names and what of it the index
  knows, plus suggestions for a more specific task when the score is low.

Pure functions, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from knowing_pr.task.keywords import split_identifier

__all__ = [
    "CHANGE_TYPES",
    "Confidence",
    "Entities",
    "MatchEvidence",
    "assess_confidence",
    "classify_change",
    "extract_entities",
    "is_about_tests",
]

SOURCE_EXTENSIONS = (
    *("py", "pyi", "js", "jsx", "mjs", "cjs", "ts", "tsx", "go", "rs", "java", "kt", "kts", "scala"),
    *("cs", "rb", "php", "c", "h", "cc", "cpp", "hpp", "swift", "m", "ex", "exs", "erl", "clj"),
    *("vue", "svelte", "sql", "yml", "yaml", "json", "toml", "ini", "cfg", "md", "rst", "html"),
    *("css", "scss", "sh"),
)

#: change type → indicator words (seed 001's table, with their inflections)
CHANGE_TYPES: dict[str, tuple[str, ...]] = {
    "bugfix": (
        "fix",
        "fixes",
        "fixed",
        "fixing",
        "bug",
        "bugs",
        "error",
        "errors",
        "issue",
        "broken",
        "fails",
        "fail",
        "failing",
        "failure",
        "crash",
        "crashes",
        "exception",
        "wrong",
        "incorrect",
        "regression",
        "traceback",
        "panic",
        "panics",
    ),
    "feature": (
        "add",
        "adds",
        "added",
        "implement",
        "implements",
        "create",
        "new",
        "support",
        "supports",
        "introduce",
        "allow",
        "enable",
        "feature",
    ),
    "refactor": (
        "refactor",
        "refactoring",
        "clean",
        "cleanup",
        "improve",
        "rename",
        "restructure",
        "simplify",
        "extract",
        "move",
        "reorganize",
        "deduplicate",
    ),
    "perf": (
        "performance",
        "perf",
        "slow",
        "slower",
        "fast",
        "faster",
        "optimize",
        "optimise",
        "latency",
        "cache",
        "caching",
        "speed",
        "memory",
        "throughput",
    ),
    "security": (
        "security",
        "vulnerability",
        "vulnerable",
        "cve",
        "auth",
        "authentication",
        "authorization",
        "permission",
        "permissions",
        "xss",
        "csrf",
        "injection",
        "sanitize",
        "escape",
        "secret",
        "token",
        "exploit",
    ),
}
#: the order that breaks a tie between change types
_TYPE_PRIORITY = ("security", "bugfix", "perf", "refactor", "feature")

_EXT = "|".join(re.escape(e) for e in sorted(SOURCE_EXTENSIONS, key=len, reverse=True))
_FILE = re.compile(rf"(?<![\w/.-])((?:[\w.-]+/)*[\w-][\w.-]*\.(?:{_EXT}))(?![\w/])")
_CLASS = re.compile(r"(?<![\w.])([A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[A-Z]{2,}[a-z]+[A-Za-z0-9]*)(?![\w])")
_SNAKE = re.compile(r"(?<![\w.])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?![\w])")
_CAMEL = re.compile(r"(?<![\w.])([a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+)(?![\w])")
_CALLED = re.compile(r"(?<![\w])([A-Za-z_]\w*)\(\)")
_ROUTE = re.compile(
    r"(?:(?<=\s)|^)(?:(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s+)?(/[A-Za-z0-9_{}:<>*.-]+(?:/[A-Za-z0-9_{}:<>*.-]*)*)"
)
_ERROR_CODE = re.compile(
    r"(?<![\w])([A-Z][A-Z0-9]*_[A-Z0-9_]{2,}|E[A-Z]{4,}|HTTP[ /]?[45]\d\d|[45]\d\d (?=error|status))"
)
_TEST_WORDS = re.compile(
    r"\b(tests?|testing|unit ?tests?|spec|specs|pytest|unittest|jest|fixtures?|test suite|"
    r"failing test|flaky|coverage)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Entities:
    """Things the task names explicitly."""

    files: tuple[str, ...] = ()
    classes: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    routes: tuple[str, ...] = ()
    error_codes: tuple[str, ...] = ()

    def count(self) -> int:
        return (
            len(self.files) + len(self.classes) + len(self.methods) + len(self.routes) + len(self.error_codes)
        )


def _unique(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i for i in items if i))


def extract_entities(text: str) -> Entities:
    """File names, class names, method names, routes and error codes mentioned in ``text``."""
    plain = text.replace("`", " ")
    files = _unique([m.group(1) for m in _FILE.finditer(plain) if not m.group(1)[0].isdigit()])
    file_set = set(files)
    classes = [c for c in _CLASS.findall(plain) if not c.isupper() and len(split_identifier(c)) > 1]
    methods = _SNAKE.findall(plain) + _CAMEL.findall(plain) + _CALLED.findall(plain)
    methods = [m for m in methods if not any(m in f for f in file_set)]
    routes = []
    for match in _ROUTE.finditer(plain):
        route = match.group(2).rstrip(".,;:")
        if route in file_set or any(f.endswith(route) or route.endswith(f) for f in file_set):
            continue
        if "." in route.rsplit("/", 1)[-1] and not match.group(1):
            continue  # a file path, not a route
        if len(route) > 1 and re.search(r"[A-Za-z]", route):
            routes.append(f"{match.group(1)} {route}" if match.group(1) else route)
    codes = [c.strip() for c in _ERROR_CODE.findall(plain)]
    return Entities(
        files=files,
        classes=_unique(classes),
        methods=_unique([m for m in methods if m not in classes]),
        routes=_unique(routes),
        error_codes=_unique(codes),
    )


def classify_change(text: str, *, has_trace: bool = False) -> str:
    """The change type with the most indicator words (``unknown`` when there are none)."""
    words = re.findall(r"[a-z]+", text.lower())
    counts = {kind: sum(1 for w in words if w in indicators) for kind, indicators in CHANGE_TYPES.items()}
    if has_trace:
        counts["bugfix"] += 2
    best = max(counts.values())
    if best == 0:
        return "unknown"
    return next(kind for kind in _TYPE_PRIORITY if counts[kind] == best)


def is_about_tests(text: str) -> bool:
    """Does the task talk about tests (so test symbols must not be penalised)?"""
    return _TEST_WORDS.search(text) is not None


@dataclass(frozen=True)
class MatchEvidence:
    """What the index confirmed of the task (counts from the seed channels)."""

    keywords: int
    keywords_matched: int
    exact_named: int
    exact_found: int
    files_named: int
    files_found: int
    frames: int
    frames_found: int
    equivalence_classes: int


@dataclass(frozen=True)
class Confidence:
    score: float
    level: str  # "high" | "medium" | "low"
    suggestions: tuple[str, ...]


def assess_confidence(entities: Entities, evidence: MatchEvidence, *, low_below: float = 0.4) -> Confidence:
    """Seed 001's confidence: exact names, file names, keyword matches, domain matches."""
    score = 0.0
    if evidence.exact_named:
        score += 0.35 * evidence.exact_found / evidence.exact_named
    if evidence.files_named:
        score += 0.2 * evidence.files_found / evidence.files_named
    if evidence.frames:
        score += 0.35 * evidence.frames_found / evidence.frames
    if evidence.keywords:
        score += 0.3 * min(evidence.keywords_matched / max(evidence.keywords, 1), 1.0)
        score += 0.1 * min(evidence.keywords_matched, 5) / 5
    if evidence.equivalence_classes:
        score += min(0.05 * evidence.equivalence_classes, 0.15)
    score = round(min(score, 1.0), 3)
    level = "high" if score >= 0.7 else "medium" if score >= low_below else "low"
    suggestions: list[str] = []
    if score < low_below:
        if not evidence.exact_named:
            suggestions.append("name the function or class in backticks, e.g. `parse_config`")
        if not entities.files:
            suggestions.append("mention the file you suspect, e.g. src/app/config.py")
        if not evidence.frames:
            suggestions.append("paste the stack trace into the task, or pass it with --error-file LOG")
        if evidence.keywords and evidence.keywords_matched < evidence.keywords:
            suggestions.append("use the words the code uses (class, function or directory names)")
        if evidence.keywords <= 2:
            suggestions.append("describe the behaviour in more words: what happens, where, and when")
    return Confidence(score, level, tuple(suggestions))
