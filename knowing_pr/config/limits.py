"""A numeric setting of ``.knowing-pr.yml`` → the range of values that make sense, and the check.

Every numeric field of the parameter dataclasses has an entry (``tests/test_input_matrix.py``
fails on one without): a NaN, an infinity, a negative count or a share above 1 is refused with
a ``ConfigError`` naming the key, never carried into the ranking. The ranges are generous: they
keep out what cannot work (a division by zero, a walk that never restarts, a billion worker
processes), not what is merely unusual.
"""

from __future__ import annotations

import math
import reprlib
from dataclasses import dataclass
from typing import Any

from knowing_pr.errors import ConfigError

__all__ = ["LIMITS", "SHOWN_CHARS", "Limit", "checked_number", "shown", "shown_name"]


@dataclass(frozen=True)
class Limit:
    """``low <= value <= high`` (``low < value`` when ``low_open``)."""

    low: float
    high: float
    low_open: bool = False

    def admits(self, value: float) -> bool:
        above = value > self.low if self.low_open else value >= self.low
        return above and value <= self.high

    def describe(self) -> str:
        if self.low_open:
            return f"greater than {_number_text(self.low)} and at most {_number_text(self.high)}"
        return f"between {_number_text(self.low)} and {_number_text(self.high)}"


def _number_text(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


UNIT = Limit(0, 1)
COUNT = Limit(0, 1_000_000)
AT_LEAST_ONE = Limit(1, 1_000_000)
WEIGHT = Limit(0, 1000)

LIMITS: dict[str, Limit] = {
    # index
    "index.max_file_bytes": Limit(1, 1 << 31),
    "index.max_line_bytes": Limit(1, 1 << 31),
    "index.parse_timeout_s": Limit(0, 3600, low_open=True),
    "index.parse_memory_mb": Limit(1, 1 << 20),
    "index.fork_max_files": COUNT,
    "index.fork_max_bytes": Limit(0, 1 << 40),
    "index.eager_symbols_share": UNIT,
    "index.workers": Limit(0, 1024),
    "index.mine_ahead_min_files": COUNT,
    "index.progress_interval_s": Limit(0, 3600),  # 0: a line per update (tests)
    "index.confidence_import": UNIT,
    "index.confidence_member": UNIT,
    "index.confidence_typed": UNIT,
    "index.confidence_same_file": UNIT,
    "index.confidence_same_package": UNIT,
    "index.confidence_global_unique": UNIT,
    "index.confidence_receiver_guess": UNIT,
    "index.confidence_name_import": UNIT,
    "index.confidence_name_member": UNIT,
    "index.confidence_name_same_file": UNIT,
    "index.confidence_name_same_package": UNIT,
    "index.confidence_name_global_unique": UNIT,
    "index.confidence_name_receiver_guess": UNIT,
    "index.max_inherited_methods": COUNT,
    # rank
    "rank.restart_prob": Limit(0, 1, low_open=True),
    "rank.max_iter": Limit(1, 10_000),
    "rank.tol_l1": Limit(0, 2),
    "rank.score_cutoff": UNIT,
    "rank.hits_top_n": COUNT,
    "rank.hits_iter": Limit(0, 10_000),
    "rank.max_hops": Limit(0, 1000),
    "rank.unknown_recency": UNIT,
    "rank.edge_weights": Limit(0, 100),  # each edge kind's weight
    "rank.seed_weight_hunk": WEIGHT,
    "rank.seed_weight_file": WEIGHT,
    "rank.seed_weight_deleted_caller": WEIGHT,
    "rank.weight_blast": WEIGHT,
    "rank.weight_confidence": WEIGHT,
    "rank.weight_recency": WEIGHT,
    "rank.weight_distance": WEIGHT,
    "rank.authority_seed_bonus": WEIGHT,
    "rank.authority_nonseed_penalty": WEIGHT,
    "rank.authority_seed_threshold": UNIT,
    "rank.authority_nonseed_threshold": UNIT,
    "rank.hub_seed_bonus": WEIGHT,
    "rank.hub_seed_threshold": UNIT,
    "rank.test_penalty": UNIT,
    "rank.min_shown_confidence": UNIT,
    "rank.rrf_k": COUNT,
    "rank.max_seeds": AT_LEAST_ONE,
    # pack
    "pack.budget_tokens": Limit(1, 10_000_000),
    "pack.proximity_exponent": Limit(0, 100),
    "pack.chars_per_token": Limit(0, 100, low_open=True),
    "pack.test_share": UNIT,
    "pack.changed_share": UNIT,
    "pack.summary_share": UNIT,
    "pack.test_max_hops": COUNT,
    "pack.test_max_files": COUNT,
    "pack.test_import_depth": COUNT,
    # history
    "history.max_files_per_commit": COUNT,
    "history.half_life_days": Limit(0, 1_000_000, low_open=True),
    "history.max_commits": Limit(0, 100_000_000),
    "history.window_step": Limit(1, 100_000_000),
    "history.rename_threshold": Limit(1, 100),
    "history.rename_max_pairs": Limit(0, 100_000_000),
    "history.rename_max_bytes": Limit(0, 1 << 30),
    "history.min_support": COUNT,
    "history.cochange_max_partners": COUNT,
    "history.cochange_gain": WEIGHT,
    "history.cochange_max_share": UNIT,
    "history.predictiveness_window": COUNT,
    "history.predictiveness_top_k": AT_LEAST_ONE,
    "history.cochange_list_limit": COUNT,
    "history.recency_within_1d": UNIT,
    "history.recency_within_7d": UNIT,
    "history.recency_within_30d": UNIT,
    "history.recency_older": UNIT,
    "history.churn_share": UNIT,
    # reviewers
    "reviewers.max_reviewers": Limit(0, 100),
    "reviewers.half_life_days": Limit(0, 1_000_000, low_open=True),
    "reviewers.weight_lines": WEIGHT,
    "reviewers.weight_file": WEIGHT,
    "reviewers.weight_caller": WEIGHT,
    "reviewers.weight_owner": WEIGHT,
    "reviewers.max_files_per_commit": AT_LEAST_ONE,
    "reviewers.max_blame_files": COUNT,
    "reviewers.max_blame_lines": COUNT,
    "reviewers.blame_depth_commits": COUNT,
    "reviewers.max_history_commits": COUNT,
    "reviewers.max_caller_files": COUNT,
    # fusion
    "fusion.files": COUNT,
    "fusion.rrf_k": COUNT,
    "fusion.cochange_gain": WEIGHT,
    "fusion.cochange_min_weight": WEIGHT,
    "fusion.cochange_max_weight": WEIGHT,
    "fusion.min_together": COUNT,
    "fusion.depth_factor": Limit(1, 1000),
    "fusion.scan_batch": AT_LEAST_ONE,
    # files (the ranked file list and its fitted model)
    "files.list_size": COUNT,
    "files.min_candidates": COUNT,
    "files.max_history_candidates": COUNT,
    "files.max_walk_candidates": COUNT,
    "files.max_dir_candidates": COUNT,
    "files.max_stem_candidates": COUNT,
    "files.near_duplicate_min": UNIT,
    "files.similarity_max_matches": Limit(0, 1 << 40),
    "files.lead_min_share": UNIT,
    "files.walk_restart": Limit(0, 1, low_open=True),
    "files.walk_iterations": Limit(1, 10_000),
    "files.regularization": Limit(0, 1e9),
    "files.fit_window": COUNT,
    "files.fit_tasks": COUNT,
    "files.fit_min_tasks": COUNT,
    "files.refit_every": AT_LEAST_ONE,
    "files.fit_min_files": Limit(2, 1_000_000),
    "files.fit_max_files": Limit(2, 1_000_000),
    "files.fit_negatives": COUNT,
    # task
    "task.max_text_chars": Limit(1, 100_000_000),
    "task.trace_max_line_chars": Limit(1, 100_000_000),
    "task.weight_tiered": WEIGHT,
    "task.weight_bm25": WEIGHT,
    "task.weight_equivalence": WEIGHT,
    "task.weight_path": WEIGHT,
    "task.weight_trace": WEIGHT,
    "task.weight_diff": WEIGHT,
    "task.restart_max": WEIGHT,
    "task.restart_min": WEIGHT,
    "task.tiered_fallback_below": COUNT,
    "task.prefix_stop_at": COUNT,
    "task.prefix_cap": COUNT,
    "task.per_keyword_cap": COUNT,
    "task.min_substring_chars": COUNT,
    "task.bm25_limit": COUNT,
    "task.max_query_terms": COUNT,
    "task.equivalence_per_target": COUNT,
    "task.equivalence_min_cap": COUNT,
    "task.path_min_chars": COUNT,
    "task.path_rich_cap": COUNT,
    "task.path_lean_cap": COUNT,
    "task.path_other_cap": COUNT,
    "task.path_total_cap": COUNT,
    "task.path_max_files": COUNT,
    "task.path_supplement_weight": WEIGHT,
    "task.path_supplement_max": COUNT,
    "task.explicit_others_scale": UNIT,
    "task.low_confidence_below": UNIT,
    "task.extra_seed_count": COUNT,
    "task.extra_seed_weight": WEIGHT,
    "task.fusion_seed_weight": WEIGHT,
    "task.fusion_walk_weight": WEIGHT,
    "task.fusion_k": COUNT,
    "task.weight_names": WEIGHT,
    "task.names_limit": COUNT,
    "task.names_scan": COUNT,
    "task.weak_term_share": UNIT,
    "task.rank_type_factor": WEIGHT,
    "task.rank_minor_factor": WEIGHT,
    "task.rank_place_factor": WEIGHT,
    "task.rank_consensus": WEIGHT,
    "task.rank_consensus_top": COUNT,
    "task.rank_owner_lift": WEIGHT,
    "task.rank_member_share": WEIGHT,
    "task.rank_abstraction_lift": WEIGHT,
    "task.rank_cochange": WEIGHT,
    "task.rank_name_match": WEIGHT,
    "task.rank_path_match": WEIGHT,
    "task.rank_file_prior": WEIGHT,
    "task.diversity_window": COUNT,
    "task.diversity_per_file": COUNT,
    "task.diversity_per_word": COUNT,
    "task.files_weight_bm25": WEIGHT,
    "task.files_weight_names": WEIGHT,
    "task.files_weight_named": WEIGHT,
    "task.files_weight_symbols": WEIGHT,
    "task.files_weight_seeds": WEIGHT,
    "task.files_weight_defs": WEIGHT,
    "task.files_weight_commits": WEIGHT,
    "task.files_weight_title": WEIGHT,
    "task.files_commits_top": COUNT,
    "task.files_commits_max_files": COUNT,
    "task.files_graph_depth": COUNT,
    "task.files_rrf_k": COUNT,
    "task.files_history_prior": WEIGHT,
    "task.files_path_weight": WEIGHT,
    "task.files_bm25_limit": AT_LEAST_ONE,
    "task.files_listed": AT_LEAST_ONE,
    "task.files_place_factor": WEIGHT,
    # map
    "map.query_share": UNIT,
    "map.cycle_penalty": UNIT,
    "map.tier1_share": UNIT,
    "map.tier2_share": UNIT,
}


def checked_number(where: str, key: str, value: Any, *, whole: bool, limit: Limit | None = None) -> float:
    """``value`` of setting ``key`` (``section.name``) as a number within ``limit`` (default:
    the key's entry); ``ConfigError`` naming ``where`` (the file) and the key otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        kind = "a whole number" if whole else "a number"
        raise ConfigError(f"{where}: '{shown_name(key)}' must be {kind}, got {shown(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{where}: '{shown_name(key)}' must be a finite number, got {value}")
    if whole and isinstance(value, float) and not value.is_integer():
        raise ConfigError(f"{where}: '{shown_name(key)}' must be a whole number, got {value}")
    limit = limit or LIMITS.get(key, Limit(0, math.inf))
    if not limit.admits(value):
        raise ConfigError(f"{where}: '{shown_name(key)}' must be {limit.describe()}, got {shown(value)}")
    return value


#: the most of a value (or a key) an error message shows
SHOWN_CHARS = 40


def _bounded_repr() -> reprlib.Repr:
    bounded = reprlib.Repr()
    bounded.maxlevel = 2
    bounded.maxstring = bounded.maxother = bounded.maxlong = SHOWN_CHARS
    bounded.maxlist = bounded.maxtuple = bounded.maxdict = bounded.maxset = 4
    return bounded


_REPR = _bounded_repr()


def shown(value: Any) -> str:
    """``value`` as an error message shows it: a ``repr`` built within bounds (never the whole
    value first, which a large or nested value makes arbitrarily long), then cut to ``SHOWN_CHARS``."""
    text = _REPR.repr(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def shown_name(name: Any) -> str:
    """A key or name as an error message shows it: cut to ``SHOWN_CHARS`` before anything else,
    characters that do not print escaped."""
    text = str(name) if isinstance(name, str) else _REPR.repr(name)
    cut = text[: SHOWN_CHARS + 1]
    visible = "".join(c if c.isprintable() else repr(c)[1:-1] for c in cut)
    return visible if len(cut) <= SHOWN_CHARS else visible[: SHOWN_CHARS - 3] + "..."
