"""Every tunable of the tool as frozen dataclasses, one per stage, gathered in ``Settings``.

No module keeps its own tuning globals; each reads the part of ``Settings`` that is passed
down to it. ``canonical()`` gives a parameter set's stable JSON form.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from knowing_pr.config.defaults import DEFAULT_EXCLUDES, GENERIC_NAMES, LOCK_FILES, default_edge_weights
from knowing_pr.errors import ConfigError
from knowing_pr.model import EdgeKind

__all__ = [
    "FILE_MODEL_PRIOR",
    "PACK_SECTIONS",
    "FileRankParams",
    "FusionParams",
    "HistoryParams",
    "IndexParams",
    "MapParams",
    "PackParams",
    "RankParams",
    "ReviewerParams",
    "Settings",
    "TaskParams",
    "canonical",
    "pack_parameters",
]


@dataclass(frozen=True)
class IndexParams:
    """What the index reads and how: size and line caps, excluded paths, languages, the parser's
    isolation and limits, and the confidence of each way a reference is resolved to an edge."""

    max_file_bytes: int = 1 << 20
    #: a line longer than this marks a file as minified/generated
    max_line_bytes: int = 5000
    excludes: tuple[str, ...] = DEFAULT_EXCLUDES
    extra_excludes: tuple[str, ...] = ()
    languages: tuple[str, ...] = ()  # empty = all supported
    parse_timeout_s: float = 10.0
    parse_memory_mb: int = 1024
    #: run the parser in a worker process (protects against C-level crashes)
    isolate_parser: bool = True
    #: batches up to this size are parsed in a fork of the indexing process (still isolated)
    fork_max_files: int = 16
    fork_max_bytes: int = 1 << 20
    #: ``PRAGMA quick_check`` before a write when the file changed since this tool last wrote
    #: it (restored caches, copies, damage), so a damaged page is never built upon
    verify_before_write: bool = True
    #: an incremental update that resolves at least this share of the indexed files loads the
    #: whole symbol table at once (as a full index does) instead of asking the store per name:
    #: per-name lookups win for everyday commits, one bulk read for a 2,000-file PR
    eager_symbols_share: float = 0.02
    workers: int = 0  # 0 = os.cpu_count()
    #: a full index (or a store's first) of at least this many files mines the history from
    #: scratch in a child process while it resolves and stores the graph, on the core those
    #: steps leave idle (``index/historyahead.py``; the same state as a mine in process). A smaller
    #: one starts only the mine's walk and ``git log`` then, read in process later. 0: neither.
    #: Resolve and store take 1-3 ms a file, too short below a few hundred files to hide the
    #: child's start and answer: at 97 files (rack) the history step took 0.42 s with it and
    #: 0.28 s without, from 625 files on it gained (bench/big_repos.py, docs/history.md)
    mine_ahead_min_files: int = 256
    #: on a pipe (CI, the Action's log), a long step's progress line every this many seconds
    progress_interval_s: float = 5.0
    # confidence of an edge by the rule that made it (knowing_pr/graph/rules.py): the precision
    # measured for the rule against independent oracles (jedi, the TypeScript checker, go/types)
    # on the dev repositories, rounded to 2 digits (docs/edges.md, BENCHMARKS.md "Edges"):
    #   python bench/edge_oracle.py --language L --repo … --json L.json        (each language)
    #   python bench/edge_oracle.py … --config names.yml --json L-names.json   (name_* rules;
    #       names.yml: ``index: {scoped_languages: []}``)
    #   python bench/calibrate.py *.json
    confidence_import: float = 1.0  # 6,145 judged edges, 5 wrong
    confidence_member: float = 1.0  # 1,455 judged, 0 wrong
    confidence_typed: float = 1.0  # 3,342 judged, 2 wrong
    confidence_same_file: float = 1.0  # 5,289 judged, 2 wrong
    #: a name bound nowhere in its file (neither defined, assigned nor imported) found in the
    #: directory or once in the repository: no oracle resolves these sites (no verdict); the
    #: ones read by hand (black's test data) were all wrong, so they stay below the floor
    confidence_same_package: float = 0.2
    confidence_global_unique: float = 0.2
    confidence_receiver_guess: float = 0.95  # 53 judged, 0 wrong (a small sample: 1.0 - 0.05)
    # … and of the name-only rules, for languages resolved without their scopes (Rust, Java, C#,
    # Ruby), measured on the same repositories resolved by names only (all four languages pooled)
    confidence_name_import: float = 1.0  # 4,054 judged, 15 wrong
    confidence_name_member: float = 1.0  # 901 judged, 0 wrong
    confidence_name_same_file: float = 0.98  # 3,919 judged, 73 wrong
    #: 1,261 judged, 101 wrong: 99.9% in Go (a package is its directory), 25-41% in Python,
    #: TypeScript and JavaScript
    confidence_name_same_package: float = 0.92
    confidence_name_global_unique: float = 0.99  # 1,543 judged, 22 wrong
    confidence_name_receiver_guess: float = 0.99  # 1,961 judged, 24 wrong
    #: languages resolved with their own scopes (parse/python_scopes.py, js_scopes.py,
    #: go_scopes.py); the others, or all with an empty list, by names only (graph/resolve.py)
    scoped_languages: tuple[str, ...] = ("python", "javascript", "typescript", "tsx", "go")
    #: ``inherits`` edges (a class → each method it inherits from a base) only for bases with
    #: at most this many methods: a framework's base class (a model, a test case) would give
    #: every subclass a hundred edges; the ``extends`` edge links them anyway
    max_inherited_methods: int = 25
    #: names too generic to resolve by package or global uniqueness (seed 003's blocklist, widened)
    generic_names: tuple[str, ...] = GENERIC_NAMES

    #: fields that change only how fast the graph is built, never the graph itself
    SPEED_ONLY: ClassVar[frozenset[str]] = frozenset(
        {
            "parse_timeout_s",
            "parse_memory_mb",
            "isolate_parser",
            "workers",
            "verify_before_write",
            "fork_max_files",
            "fork_max_bytes",
            "eager_symbols_share",
            "progress_interval_s",
            "mine_ahead_min_files",
        }
    )

    def canonical(self) -> dict[str, Any]:
        """What changes the graph: a different value forces a full re-index."""
        return canonical(self)

    def confidence_of(self, rule: str) -> float:
        """The confidence of an edge made by ``rule`` (1.0 for rules that are not guesses)."""
        value = getattr(self, f"confidence_{rule}", None)
        return float(value) if isinstance(value, (int, float)) else 1.0

    def is_excluded(self, path: str) -> bool:
        name = path.rsplit("/", 1)[-1]
        if name in LOCK_FILES:
            return True
        return any(fnmatch.fnmatchcase(path, pat) for pat in (*self.excludes, *self.extra_excludes))


@dataclass(frozen=True)
class RankParams:
    """The symbol ranking's walk with restart, HITS and score (``rank/candidates.py``)."""

    restart_prob: float = 0.2
    max_iter: int = 20
    tol_l1: float = 1e-3
    score_cutoff: float = 0.05
    hits_top_n: int = 200
    hits_iter: int = 10
    #: BFS depth for the distance component (seed 003); a node further away counts as one more
    max_hops: int = 4
    #: recency of a symbol whose file has no history (seed 003: static-only symbols get 0.3)
    unknown_recency: float = 0.3
    edge_weights: Mapping[EdgeKind, float] = field(default_factory=default_edge_weights)
    #: restart weight of a symbol overlapping a changed hunk vs. another symbol of a changed file
    seed_weight_hunk: float = 1.0
    seed_weight_file: float = 0.3
    seed_weight_deleted_caller: float = 0.6
    # scoring formula (seed 003, HITS-enhanced mode)
    weight_blast: float = 0.35
    weight_confidence: float = 0.20
    weight_recency: float = 0.15
    weight_distance: float = 0.15
    authority_seed_bonus: float = 0.25
    authority_nonseed_penalty: float = 0.15
    authority_seed_threshold: float = 0.05
    authority_nonseed_threshold: float = 0.2
    hub_seed_bonus: float = 0.10
    hub_seed_threshold: float = 0.1
    test_penalty: float = 0.3
    #: an edge whose confidence (its rule's measured precision, docs/edges.md) is below this is
    #: never shown as a caller, a dependency or a pack edge; it still feeds the walk
    min_shown_confidence: float = 0.8
    # task mode (seeds 002/003)
    rrf_k: int = 60
    max_seeds: int = 15

    def canonical(self) -> dict[str, Any]:
        """The parameters that change a pack, in a stable JSON-able form (for the PackRoot)."""
        return canonical(self)


@dataclass(frozen=True)
class PackParams:
    """How a pack fills its token budget (``pack.py``)."""

    budget_tokens: int = 8000
    proximity_exponent: float = 0.3
    chars_per_token: float = 4.0
    #: share of the budget reserved for tests in a PR pack (they fill their own group)
    test_share: float = 0.25
    #: a PR pack's changed symbols get full entries within this share of the room left after the
    #: frame (the rest get one line each; any budget left over upgrades them, best first)
    changed_share: float = 0.5
    #: share of the budget the reviewer's summary (call sites, tests to run, removed symbols) may
    #: take; its lists are cut, best first, to fit
    summary_share: float = 0.3
    #: tests to run: how many symbols a test may reach the change through, and at most how many
    #: test files are read to find its test cases
    test_max_hops: int = 2
    test_max_files: int = 80
    #: tests to run: how many files away a test file may import a changed file (1: directly);
    #: 12 chosen by leave-one-repository-out over trpc, vite, koa, axios and jinja
    #: (docs/benchmarks-log.md: 8 misses a trpc test 9+ imports away, 16 and no bound add nothing)
    test_import_depth: int = 12

    def canonical(self) -> dict[str, Any]:
        return canonical(self)


@dataclass(frozen=True)
class HistoryParams:
    """What the git history adds: how it is mined, and how co-change enters the ranking."""

    enabled: bool = True
    max_files_per_commit: int = 30
    half_life_days: float = 180.0
    #: the mined window: the newest commits of the head's history in landing order, at least
    #: ``max_commits`` and fewer than ``max_commits + window_step`` (all of a shorter history); its
    #: start moves in steps of ``window_step`` commits, so a mine extends the previous one except
    #: once per ``window_step`` commits (``history/mine.py``, docs/history.md)
    max_commits: int = 50000
    window_step: int = 1000
    #: renames in the mined history (``git/renames.py``): a deleted and an added file whose shared
    #: lines make at least this percent of the larger blob are one file moved; no similar pair is
    #: looked for past ``rename_max_pairs`` deleted × added files of a commit; blobs over
    #: ``rename_max_bytes`` pair by blob id only
    rename_threshold: int = 50
    rename_max_pairs: int = 250_000
    rename_max_bytes: int = 1_048_576
    min_support: int = 2
    # -- co-change in ranking (index/history.py, rank/signals.py; docs/history.md) --
    #: co-change edges kept per file (its partners with the highest confidence)
    cochange_max_partners: int = 8
    #: share of the walk leaving a file node along co-change edges =
    #: edge_weights[co_changed_with] x cochange_gain x predictiveness, at most cochange_max_share
    cochange_gain: float = 6.0
    cochange_max_share: float = 0.8
    #: first-parent commits of the head replayed to measure how predictive the history is
    predictiveness_window: int = 40
    predictiveness_top_k: int = 10
    #: "often changed together" rows in a PR pack
    cochange_list_limit: int = 8
    # recency of a file's last change, relative to the newest mined commit (seed 003's steps)
    recency_within_1d: float = 1.0
    recency_within_7d: float = 0.8
    recency_within_30d: float = 0.5
    recency_older: float = 0.2
    #: share of the recency signal taken by the file's decayed churn (vs. the age step)
    churn_share: float = 0.3


@dataclass(frozen=True)
class FusionParams:
    """Late fusion of a PR's file ranking: the walk's file order with the change's co-change
    list (docs/history.md); the defaults are the measured ones."""

    #: files of the fused ranking the pack is given a lead symbol for
    files: int = 12
    #: reciprocal-rank constant of the fusion
    rrf_k: int = 5
    #: weight of the co-change list (the walk's is 1): gain x predictiveness, within [min, max]
    cochange_gain: float = 4.0
    cochange_min_weight: float = 0.0
    cochange_max_weight: float = 4.0
    #: a partner counts when it changed with the change's files at least this often
    min_together: int = 1
    #: ranked files taken from each list (an item deep in both lists can still rise)
    depth_factor: int = 3
    #: RWR-ordered nodes read per store query when following the walk past its cutoff
    scan_batch: int = 256


#: the file model's weights before a repository's own history is fitted (and what that fit is
#: pulled towards): fitted on the development corpus, 14 repositories in 8 languages, with the
#: setting chosen on them (``python bench/cochange_loo.py DIR --only NONE --ship``; docs/history.md)
FILE_MODEL_PRIOR: Mapping[str, float] = {
    "bias": -10.6022,
    "cochange_share": -0.3463,
    "cochange_sized": 0.4685,
    "cochange_conf": 0.9862,
    "cochange_support": 0.3346,
    "cochange_reverse": 0.0152,
    "cochange_given": 0.6248,
    "cochange_rank": 1.6149,
    "links_out": -0.1155,
    "links_in": 0.0493,
    "links_share": 1.3653,
    "tests_link": -0.2461,
    "walk": 1.0587,
    "walk_rank": 0.2943,
    "same_dir": -0.0436,
    "dir_near": 0.4546,
    "stem_sibling": 0.2095,
    "stem_match": -0.2083,
    "test_pair": 0.8479,
    "path_tokens": 2.7494,
    "same_ext": 0.3016,
    "is_test": -0.2997,
    "test_for_code": 1.2707,
    "code_for_test": 0.9983,
    "is_source": 2.647,
    "near_duplicate": 0.358,
    "generated": -0.1381,
    "recency": 1.0342,
    "recent_week": 0.3176,
    "churn": 0.0114,
    "commit_share": -0.0261,
    "breadth": -0.1389,
}


@dataclass(frozen=True)
class FileRankParams:
    """The ranked file list of a PR pack (``rank/files.py``): its candidates, the fitted model
    that orders them, and the fit on the repository's own history (``index/filefit.py``;
    docs/history.md)."""

    #: bounds on hostile input (issue 25): not in the PackRoot's parameters unless hit (a pack that
    #: hits one says so in its identity inputs, ``limits_hit``)
    BOUNDS: ClassVar[frozenset[str]] = frozenset({"similarity_max_matches"})

    enabled: bool = True
    #: entries in the list (at least 20 when there are that many candidates)
    list_size: int = 30
    #: fewer candidates than this: add the files with the most similar paths
    min_candidates: int = 30
    max_history_candidates: int = 200
    max_walk_candidates: int = 60
    max_dir_candidates: int = 40
    max_stem_candidates: int = 20
    #: content resemblance from which a file counts as a near-duplicate candidate
    near_duplicate_min: float = 0.25
    #: sketch values shared with the changed files that the near-duplicate search looks at, at
    #: most (``history/similarity.py``): past it, the changed files left are not compared
    similarity_max_matches: int = 20_000_000
    #: the list's files lead the symbol pack when they score at least this share of the best
    #: file's score (a file that only shares an early commit with the change stays out)
    lead_min_share: float = 0.05
    #: the file-level walk's restart probability and iterations
    walk_restart: float = 0.3
    walk_iterations: int = 12
    #: the weights the list is ranked with; empty: the store's fitted weights, else the prior
    #: (a pack records the weights it used here, so a replay ranks with the same ones)
    weights: Mapping[str, float] = field(default_factory=dict)
    #: the weights before any fit, and what a fit is pulled towards
    prior: Mapping[str, float] = field(default_factory=lambda: dict(FILE_MODEL_PRIOR))
    #: strength of that pull: the fit minimises Σ task losses + regularization/2 · |w - prior|²
    regularization: float = 10.0
    #: "pairwise" (a held-out file above a candidate that was not changed) or "pointwise"
    objective: str = "pairwise"
    # -- the fit on the repository's own history (index time) --
    fit: bool = True
    #: newest commits remembered for fitting (each replayed with the history before it)
    fit_window: int = 800
    #: at most this many of them (the newest) are training tasks
    fit_tasks: int = 300
    #: fewer training tasks than this: the prior alone
    fit_min_tasks: int = 20
    #: not read any more: every indexed head is fitted anew (``index/filefit.py``); kept so the
    #: parameters recorded in packs keep their digest
    refit_every: int = 10
    #: a commit is a training task when it changed this many indexed source files
    fit_min_files: int = 2
    fit_max_files: int = 8
    #: candidates kept per training task besides the held-out files
    fit_negatives: int = 60

    def canonical(self) -> dict[str, Any]:
        return canonical(self)


@dataclass(frozen=True)
class TaskParams:
    """Task-mode tunables: seed channels, their fusion and the final order (seeds 002/003 defaults)."""

    #: bounds on hostile input (issue 25): not in the PackRoot's parameters unless hit (a pack that
    #: hits one says so in its identity inputs, ``limits_hit``)
    BOUNDS: ClassVar[frozenset[str]] = frozenset({"max_text_chars", "trace_max_line_chars"})
    #: read by a task pack only (with every ``files_*`` setting: the task's ranked file list), and
    #: left out of the other packs' parameters (``task_pack_only``), so a setting of the task's
    #: file list or of its order along it does not change every PR pack's PackRoot
    TASK_PACK_ONLY: ClassVar[frozenset[str]] = frozenset({"rank_file_prior"})

    #: measured on bench/taskbench.py (docs/task.md): tiered 1.0 and no path channel beat the
    #: seeds' 2.0 / 1.5 on three of four repositories
    weight_tiered: float = 0.5
    weight_bm25: float = 2.0
    #: the task text read (its first characters; a GitHub PR body holds at most 65,536)
    max_text_chars: int = 100_000
    #: a line of the task or error text longer than this is not read as a stack frame
    trace_max_line_chars: int = 2000
    weight_equivalence: float = 2.0
    weight_path: float = 0.0
    weight_trace: float = 4.0
    weight_diff: float = 3.0
    #: the types the task's words name (channels.names_channel): how many, from how many FTS hits
    weight_names: float = 2.0
    names_limit: int = 20
    names_scan: int = 1000
    #: a component naming a directory or file of at least this share of the indexed files is a
    #: weak term (the product's own name): left out of the bm25 and names queries (0: off)
    weak_term_share: float = 0.5
    restart_max: float = 1.0
    restart_min: float = 0.4
    tiered_fallback_below: int = 5
    prefix_stop_at: int = 15
    prefix_cap: int = 30
    per_keyword_cap: int = 50
    min_substring_chars: int = 4
    bm25_limit: int = 60
    max_query_terms: int = 48
    #: aim compounds at the ``symbol_name`` column and add ``file_path`` prefix terms (the
    #: seeds' query); off = every term plain, any column (measured better, docs/task.md)
    bm25_target_columns: bool = False
    equivalence_per_target: int = 10
    equivalence_min_cap: int = 10
    path_min_chars: int = 4
    path_rich_cap: int = 5
    path_lean_cap: int = 10
    path_other_cap: int = 15
    path_total_cap: int = 30
    path_max_files: int = 400
    #: restart weight of path-channel types that did not make the fused seed set
    path_supplement_weight: float = 0.3
    path_supplement_max: int = 0
    #: when the task names symbols explicitly (backticks, stack frames), the other seeds'
    #: restart weights are scaled by this (0 drops them), so the walk centres on what was
    #: named and a named symbol ranks first (a seed's score beats any non-seed's)
    explicit_others_scale: float = 0.0
    low_confidence_below: float = 0.4
    #: fused nodes after the best ``max_seeds`` that still enter the walk with a small
    #: restart weight, so they are candidates the final fusion can lift (not with explicit names)
    extra_seed_count: int = 50
    extra_seed_weight: float = 0.02
    #: final ranking = weighted RRF of the seed order and the walk's order (rank/task_rank.py)
    fusion_seed_weight: float = 1.0
    fusion_walk_weight: float = 1.0
    fusion_k: int = 60
    #: the final order's factors (rank/task_rank.py): types, free functions and constants, and
    #: symbols that are not product code for the task (tests, ``demoted_segments``)
    rank_type_factor: float = 1.15
    rank_minor_factor: float = 0.9
    rank_place_factor: float = 0.1
    #: weight of the in-links from the best ``rank_consensus_top`` candidates (their consensus)
    rank_consensus: float = 0.6
    rank_consensus_top: int = 30
    #: a type scores at least this × its best member among the best candidates (0: off)
    rank_owner_lift: float = 1.05
    #: a member scores at least this × its owner type (0: off)
    rank_member_share: float = 0.9
    #: a type a candidate type implements or extends scores at least this × it (0: off)
    rank_abstraction_lift: float = 0.0
    #: weight of the co-change links between the files of the best candidates (0: off)
    rank_cochange: float = 0.3
    #: × (1 + this × the share of a symbol's name words that are task words)
    rank_name_match: float = 3.0
    #: × (1 + this) when a word of the symbol's path is a task word
    rank_path_match: float = 0.0
    #: × (1 + this × the score of the symbol's file in the task's ranked file list, the best file 1,
    #: a file not listed 0): the symbol order follows the file list (``task_rank.follow_file_list``;
    #: 0: off)
    rank_file_prior: float = 8.0
    #: in the first ``diversity_window`` places, at most this many symbols of one file and
    #: sharing one word of their names
    diversity_window: int = 10
    diversity_per_file: int = 7
    diversity_per_word: int = 9
    #: directories that hold no product code unless the task names them
    demoted_segments: tuple[str, ...] = (
        "samples",
        "sample",
        "examples",
        "example",
        "benches",
        "benchmarks",
        "benchmark",
        "fixtures",
        "docs",
    )
    #: the task's ranked file list (rank/task_files.py): weighted RRF, k ``files_rrf_k``, of
    #: BM25 over whole files for all the task's words (``files_weight_bm25``), for its code
    #: names only (``files_weight_names``), the files it names or its traceback passes through
    #: (``files_weight_named``) and the files of the final symbol order (``files_weight_symbols``);
    #: the channel weights and the history prior chosen by leave-one-repository-out on real
    #: issue reports (bench/localize.py --reports, docs/task.md); ``files_rrf_k``, ``files_place_factor``,
    #: ``files_path_weight`` and ``files_demote_tests_always`` by earlier, wider grids (every fold
    #: chose them); ``files_graph_depth`` by the rule that the graph reranks; the vendored
    #: segments set by hand
    files_weight_bm25: float = 1.0
    files_weight_names: float = 0.5
    files_weight_named: float = 2.0
    files_weight_symbols: float = 0.5
    #: the files of the task's fused seed channels (symbol BM25, names, tiered, …)
    files_weight_seeds: float = 0.0
    #: the files that define a name the task writes as code (a class, function, method or
    #: constant of that name), each name weighted by its IDF over the indexed files
    files_weight_defs: float = 0.5
    #: the same BM25 over whole files for the words of the task's title only (its first line of
    #: prose: an issue's title says what is wrong in few words, its body's snippets and logs
    #: drown them in the ``bm25`` channel; 0: off)
    files_weight_title: float = 1.0
    #: past commits whose subjects match the task (BM25 over ``commit_words``, the best
    #: ``files_commits_top`` of those that changed at most ``files_commits_max_files`` files),
    #: each voting for the files it changed by its score over their number: a rerank channel
    #: like the graph ones (0: off)
    files_weight_commits: float = 1.0
    #: on: the subjects are asked for the task's title only (its first line of prose), not its
    #: whole text; off (the default) asks with the whole text, the choice of
    #: leave-one-repository-out on real issue reports (bench/localize.py, docs/task.md; on the
    #: commit messages used before, whose titles are subjects, it chose on)
    files_commits_title: bool = False
    files_commits_top: int = 30
    files_commits_max_files: int = 30
    #: the graph and history channels (``symbols``, ``seeds``, ``commits``) add only to files within the
    #: first this many of a lexical channel (``bm25``, ``title``, ``names``, ``named``, ``defs``): they
    #: rerank lexical evidence, never replace it (0: no limit)
    files_graph_depth: int = 50
    files_rrf_k: int = 3
    #: × (1 + this × the file's history prior in [0, 1]: how often it changed) (0: off)
    files_history_prior: float = 0.0
    #: BM25 weight of a file's path words against its text's (``store.filewords``)
    files_path_weight: float = 3.0
    #: hits read from each BM25 channel, and the length of the list (at least 20)
    files_bm25_limit: int = 100
    files_listed: int = 20
    #: vendored, generated and test files the task does not name: × this
    files_place_factor: float = 0.05
    #: test files are × ``files_place_factor`` in the file list even when the task talks about
    #: tests (the symbol order keeps them then); a test file the task names is never demoted
    files_demote_tests_always: bool = True
    #: directories that hold someone else's code (``requests/packages/urllib3``)
    vendored_segments: tuple[str, ...] = (
        "vendor",
        "vendored",
        "_vendor",
        "third_party",
        "thirdparty",
        "third-party",
        "packages",
        "node_modules",
        "external",
        "extern",
    )

    def canonical(self) -> dict[str, Any]:
        return canonical(self)


@dataclass(frozen=True)
class ReviewerParams:
    """Who should review a change (``history/reviewers.py``, docs/reviewers.md): who last and most
    often changed the changed symbols' lines (git blame at the base) and the changed and calling
    files (the mined history's recent commits), recency-weighted, merged with CODEOWNERS."""

    enabled: bool = True
    #: names suggested, at most
    max_reviewers: int = 3
    #: a commit's weight halves every this many days before the newest commit found (chosen with
    #: the weights below by leave-one-repository-out on bench/reviewers.py's grid: docs/reviewers.md)
    half_life_days: float = 365.0
    #: weight of one commit that last changed lines of a changed symbol, of one commit that
    #: changed a changed file, and of one that changed a file calling the change
    weight_lines: float = 1.0
    weight_file: float = 0.5
    weight_caller: float = 0.25
    #: weight of owning the changed files in CODEOWNERS (times the share of them owned)
    weight_owner: float = 1.0
    #: a commit that changed more files than this is a mass edit (a reformat): no evidence
    max_files_per_commit: int = 50
    #: files blamed at the base (those with the most changed lines first), lines per file
    max_blame_files: int = 8
    max_blame_lines: int = 2000
    #: the blame walks back through this many of the history's newest commits (0: to the start);
    #: lines older than that count for nobody (libgit2 spends most of a blame walking back)
    blame_depth_commits: int = 300
    #: commits of the mined history read for the changed and calling files (newest first)
    max_history_commits: int = 800
    #: calling files whose history counts (those with the most call sites first)
    max_caller_files: int = 10
    #: write a suggestion as an @-mention where the GitHub login is known (CODEOWNERS, a noreply
    #: e-mail); off: plain names, nobody is notified
    mention: bool = False


@dataclass(frozen=True)
class MapParams:
    """What shapes a repository map besides its profile and query (seed 000's numbers)."""

    #: share of a file's score taken by its match with ``--query``
    query_share: float = 0.20
    #: subtracted from the score of a file inside an import cycle
    cycle_penalty: float = 0.10
    #: the best files (not forced down) in tier 1, the next in tier 2
    tier1_share: float = 0.15
    tier2_share: float = 0.30


@dataclass(frozen=True)
class Settings:
    """Every tunable, by stage (``.knowing-pr.yml``); the ranking's part enters the PackRoot."""

    index: IndexParams = field(default_factory=IndexParams)
    rank: RankParams = field(default_factory=RankParams)
    pack: PackParams = field(default_factory=PackParams)
    history: HistoryParams = field(default_factory=HistoryParams)
    fusion: FusionParams = field(default_factory=FusionParams)
    files: FileRankParams = field(default_factory=FileRankParams)
    task: TaskParams = field(default_factory=TaskParams)
    map: MapParams = field(default_factory=MapParams)
    reviewers: ReviewerParams = field(default_factory=ReviewerParams)
    equivalence_classes: tuple[Mapping[str, Any], ...] = ()
    #: not a setting: the keys of a removed setting the file still set, which were ignored
    #: (``load.REMOVED_SETTINGS``); the command warns of them, and they enter no PackRoot
    removed_keys: tuple[str, ...] = field(default=(), compare=False)

    def with_budget(self, budget_tokens: int | None) -> Settings:
        if budget_tokens is None:
            return self
        if budget_tokens < 1:
            raise ConfigError(f"budget must be a positive number of tokens, got {budget_tokens}")
        return dataclasses.replace(self, pack=dataclasses.replace(self.pack, budget_tokens=budget_tokens))


def canonical(params: Any, left_out: frozenset[str] = frozenset()) -> dict[str, Any]:
    """A parameter dataclass's stable JSON-able form: fields by name (speed-only ones, bounds on
    hostile input and ``left_out`` left out: a pack that hits a bound names it in its identity
    inputs instead), floats rounded to 6 places, edge weights by type label, tuples as lists."""
    left_out = left_out | getattr(params, "SPEED_ONLY", frozenset()) | getattr(params, "BOUNDS", frozenset())
    return {
        f.name: _canonical_value(getattr(params, f.name))
        for f in sorted(dataclasses.fields(params), key=lambda f: f.name)
        if f.name not in left_out
    }


def _canonical_value(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, Mapping):
        return {
            (key.label if isinstance(key, EdgeKind) else str(key)): _canonical_value(item)
            for key, item in sorted(value.items())
        }
    if isinstance(value, (tuple, list)):
        return [_canonical_value(item) for item in value]
    return value


#: the sections of ``Settings`` whose values can change a pack (``map`` shapes only CONTEXT.md)
PACK_SECTIONS = ("index", "rank", "pack", "history", "fusion", "files", "task", "reviewers")


def task_pack_only() -> frozenset[str]:
    """The ``TaskParams`` only a task pack reads: its file list's (``files_*``, ``task/files.py``)
    and ``TASK_PACK_ONLY``; a pack of another mode leaves them out of its parameters."""
    listed = {f.name for f in dataclasses.fields(TaskParams) if f.name.startswith("files_")}
    return frozenset(listed) | TaskParams.TASK_PACK_ONLY


def pack_parameters(settings: Settings, mode: str | None = None) -> dict[str, Any]:
    """Every setting that can change a pack, as it enters the PackRoot and a manifest (from which
    ``replay --verify`` restores them: ``load.settings_from_params``); a pack of a ``mode`` other
    than ``task`` leaves out what only a task reads (``task_pack_only``)."""
    data: dict[str, Any] = {section: canonical(getattr(settings, section)) for section in PACK_SECTIONS}
    if mode is not None and mode != "task":
        data["task"] = canonical(settings.task, task_pack_only())
    data["equivalence_classes"] = [_canonical_value(dict(c)) for c in settings.equivalence_classes]
    return data
