"""A retrieved symbol name + a task's ground truth → knowing's verdicts and metrics (a Python port).

The public cross-system benchmark of knowing (github.com/blackwell-systems/knowing,
``bench/cross-system/``) matches a system's ranked symbols against hand-labelled ground truth
with its own rules. This module reproduces those rules' behaviour so that ``knowing-pr task``
can be scored exactly as knowing scores itself; each function names the Go function it ports:

- ``normalize_symbol``: ``normalize/normalize.go`` ``Symbol`` (with ``stripFilePath``,
  ``stripRepoURL``, ``stripDeclKeyword``, ``looksLikeFile``, ``containsUpper``, ``isNumeric``);
- ``matches_ground_truth``: ``normalize/normalize.go`` ``MatchesGroundTruth`` (with
  ``terminalName``, ``qualifierOverlap``, ``dotBoundedContains``);
- ``precision_at``, ``recall_at``, ``ndcg_at``, ``reciprocal_rank``: ``metrics/metrics.go``
  ``precisionAtK``, ``recallAtK``, ``ndcgAtK``, ``reciprocalRank`` (and ``isRelevant``);
- ``achievable_ground_truth``: ``groundtruth_test.go`` ``filterAchievableGroundTruth``.

Two properties of knowing's rules that the report makes visible:

- P@10 counts every retrieved symbol that matches *any* expected symbol, so one expected
  symbol can be credited several times (an expected class ``Voucher`` credits ``Voucher``,
  ``Voucher.get_discount`` and ``Voucher.clean`` through the dot-bounded containment rule);
  ``precision_once_at`` credits each expected symbol at most once (a maximum matching);
- NDCG's DCG uses the same many-to-one relevance while its ideal DCG counts
  ``min(len(ground truth), k)`` items, so NDCG can exceed 1.

Go compares bytes; the corpus names are ASCII, where byte and character indexing agree.
``strings.EqualFold`` is approximated by comparing ``str.lower()`` (identical for ASCII).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Sequence

__all__ = [
    "achievable_ground_truth",
    "matches_ground_truth",
    "ndcg_at",
    "normalize_symbol",
    "precision_at",
    "precision_once_at",
    "recall_at",
    "reciprocal_rank",
]

_SOURCE_EXTENSIONS = (".go", ".py", ".ts", ".tsx", ".js", ".jsx", ".rs", ".java", ".cs", ".rb")
_DECLARATION_KEYWORDS = ("func ", "type ", "var ", "const ", "def ", "class ", "interface ", "struct ")


# -- normalize.go: Symbol ------------------------------------------------------------------
def normalize_symbol(raw: str) -> str:
    """The symbol part of a name in any system's format (``normalize.go`` ``Symbol``)."""
    s = raw.strip().rstrip(".").rstrip("(")
    if not s:
        return ""
    three = s.split(":", 2)
    if len(three) == 3 and _looks_like_file(three[0]):  # grep: "file.go:42:func Name("
        content = _strip_declaration_keyword(three[2].strip())
        cut = min((i for i in (content.find(c) for c in "( {[<") if i >= 0), default=-1)
        return content[:cut] if cut > 0 else content
    two = s.split(":", 1)
    if len(two) == 2 and _looks_like_file(two[0]):  # aider: "file.go:Name" (or "file.go:42")
        return "" if _is_numeric(two[1]) else two[1].strip()
    scheme = s.find("://")  # knowing: "repoURL://path/file.py.Class.method"
    if scheme >= 0:
        s = s[scheme + 3 :]
    s = _strip_repo_url(_strip_file_path(s))
    slash = s.rfind("/")
    return s[slash + 1 :] if slash >= 0 else s


def _strip_file_path(s: str) -> str:
    """``normalize.go`` ``stripFilePath``: the text after the last ``.ext.``, else a heuristic."""
    for extension in _SOURCE_EXTENSIONS:
        at = s.rfind(extension + ".")
        if at >= 0:
            return s[at + len(extension) + 1 :]
    slash = s.rfind("/")
    if slash >= 0:  # Go style "pkg/path/context.Engine.Run": after the first dot of the last segment
        after = s[slash + 1 :]
        dot = after.find(".")
        return after[dot + 1 :] if dot >= 0 else after
    parts = s.split(".")
    for index, part in enumerate(parts):  # Python module style: the first capitalised component
        if part and "A" <= part[0] <= "Z":
            return ".".join(parts[index:])
    return parts[-1] if len(parts) > 1 else s


def _strip_repo_url(s: str) -> str:
    """``normalize.go`` ``stripRepoURL``: drop ``domain/org/repo/`` when the first segment is a domain."""
    scheme = s.find("://")
    if scheme >= 0:
        s = s[scheme + 3 :]
    parts = s.split("/")
    if len(parts) >= 3 and "." in parts[0] and not _contains_upper(parts[0]):
        return "/".join(parts[3:])
    return s


def _strip_declaration_keyword(s: str) -> str:
    for keyword in _DECLARATION_KEYWORDS:
        if s.startswith(keyword):
            return s[len(keyword) :]
    return s


def _looks_like_file(s: str) -> bool:
    return s.endswith(_SOURCE_EXTENSIONS)


def _contains_upper(s: str) -> bool:
    return any("A" <= c <= "Z" for c in s)


def _is_numeric(s: str) -> bool:
    return bool(s) and all("0" <= c <= "9" for c in s)


# -- normalize.go: MatchesGroundTruth ------------------------------------------------------
def matches_ground_truth(retrieved: str, expected: str) -> bool:
    """Whether a retrieved name counts as the expected one (``normalize.go`` ``MatchesGroundTruth``)."""
    return normalized_match(normalize_symbol(retrieved), normalize_symbol(expected))


def normalized_match(r: str, g: str) -> bool:
    """``MatchesGroundTruth`` after both sides went through ``Symbol`` (lets callers cache them)."""
    if not r or not g:
        return False
    r_lower, g_lower = r.lower(), g.lower()
    if r == g or r_lower == g_lower:
        return True
    # suffix at a dot: the same symbol at different qualification depths (case-insensitive too)
    if r_lower.endswith("." + g_lower) or g_lower.endswith("." + r_lower):
        return True
    r_terminal, g_terminal = _terminal_name(r), _terminal_name(g)
    same_terminal = bool(r_terminal and g_terminal) and r_terminal.lower() == g_terminal.lower()
    if same_terminal and (_qualifier_overlap(r, g) or "." not in g or "." not in r):
        return True
    # one is a whole dot-bounded run of the other's components ("QuerySet" in "QuerySet.filter")
    return _dot_bounded_contains(r, g) or _dot_bounded_contains(g, r)


def _terminal_name(s: str) -> str:
    return s[s.rfind(".") + 1 :]


def _qualifier_overlap(a: str, b: str) -> bool:
    """``qualifierOverlap``: a shared non-terminal component (case-insensitive), or one unqualified."""
    if "." not in a or "." not in b:
        return True
    qualifiers = {p.lower() for p in a.split(".")[:-1]}
    return any(p.lower() in qualifiers for p in b.split(".")[:-1])


def _dot_bounded_contains(outer: str, inner: str) -> bool:
    """``dotBoundedContains``: Go's ``strings.Index`` looks at the first occurrence only."""
    o = outer.replace("::", ".")
    n = inner.replace("::", ".")
    at = o.find(n)
    if at < 0:
        return False
    if at > 0 and o[at - 1] != ".":
        return False
    end = at + len(n)
    return end >= len(o) or o[end] == "."


# -- metrics.go ----------------------------------------------------------------------------
Matcher = Callable[[int, int], bool]
"""``matcher(i, j)``: does retrieved item ``i`` match expected item ``j`` (precomputed verdicts)."""


def _is_relevant(i: int, expected_count: int, matcher: Matcher) -> bool:
    return any(matcher(i, j) for j in range(expected_count))


def precision_at(retrieved_count: int, expected_count: int, matcher: Matcher, k: int) -> float:
    """``precisionAtK``: relevant items among the first ``k`` over ``k`` (a short list still divides by k)."""
    top = min(retrieved_count, k)
    if k <= 0 or top == 0:
        return 0.0
    return sum(_is_relevant(i, expected_count, matcher) for i in range(top)) / k


def precision_once_at(retrieved_count: int, expected_count: int, matcher: Matcher, k: int) -> float:
    """P@k where each expected symbol credits at most one retrieved item (maximum bipartite matching)."""
    top = min(retrieved_count, k)
    if k <= 0 or top == 0:
        return 0.0
    owner: dict[int, int] = {}  # expected item -> the retrieved item credited for it

    def augment(i: int, seen: set[int]) -> bool:
        for j in range(expected_count):
            if matcher(i, j) and j not in seen:
                seen.add(j)
                if j not in owner or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return sum(augment(i, set()) for i in range(top)) / k


def recall_at(retrieved_count: int, expected_count: int, matcher: Matcher, k: int) -> float:
    """``recallAtK``: expected items matched by any of the first ``k`` over all expected items."""
    if expected_count == 0:
        return 0.0
    top = min(retrieved_count, k)
    found = sum(any(matcher(i, j) for i in range(top)) for j in range(expected_count))
    return found / expected_count


def ndcg_at(retrieved_count: int, expected_count: int, matcher: Matcher, k: int) -> float:
    """``ndcgAtK``: binary gains over the first ``k``; ideal DCG over ``min(expected, k)`` items."""
    from math import log2

    dcg = sum(
        1.0 / log2(i + 2) for i in range(min(retrieved_count, k)) if _is_relevant(i, expected_count, matcher)
    )
    idcg = sum(1.0 / log2(i + 2) for i in range(min(expected_count, k)))
    return dcg / idcg if idcg else 0.0


def reciprocal_rank(retrieved_count: int, expected_count: int, matcher: Matcher) -> float:
    """``reciprocalRank``: 1 / rank of the first relevant item over the whole list."""
    for i in range(retrieved_count):
        if _is_relevant(i, expected_count, matcher):
            return 1.0 / (i + 1)
    return 0.0


# -- groundtruth_test.go: filterAchievableGroundTruth --------------------------------------
class QualifiedNameIndex:
    """The qualified names of a store, queried with SQLite's ``LIKE`` as knowing's store does."""

    def __init__(self, qualified_names: Iterable[str]) -> None:
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute("CREATE TABLE nodes(qualified_name TEXT NOT NULL)")
        self.conn.executemany("INSERT INTO nodes VALUES (?)", ((q,) for q in qualified_names))

    def any_like(self, pattern: str) -> bool:
        """``SQLiteStore.NodesByName(pattern)``: ``qualified_name LIKE pattern || '%'`` found anything."""
        row = self.conn.execute(
            "SELECT 1 FROM nodes WHERE qualified_name LIKE ? LIMIT 1", (pattern + "%",)
        ).fetchone()
        return row is not None


def achievable_ground_truth(expected: Sequence[str], index: QualifiedNameIndex) -> list[str]:
    """``filterAchievableGroundTruth`` for one task: the expected symbols whose last dot-component
    occurs (``LIKE '%term%'``: case-insensitive, ``_`` any one character) in some qualified name;
    all of them when none does."""
    achievable = []
    for symbol in expected:
        terminal = symbol.split(".")[-1]
        if terminal and index.any_like("%" + terminal + "%"):
            achievable.append(symbol)
    return achievable or list(expected)
