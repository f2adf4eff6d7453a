"""A task's walk candidates + its seed order + the graph → the order a task pack shows (and packs)
its symbols in: step 7 of the recipe for a task.

The walk ranks by centrality around the seeds; the seed order by how well a symbol's text matches
the task. Neither knows what the candidates have in common, so one word of the task can fill the
top with same-named symbols, or the methods of a helper can bury the type the task is about. In
order, for every walk candidate ``n``:

1. **Prior**: ``w_walk / (k + walk rank) + w_seed / (k + seed rank)`` (reciprocal rank fusion; the
   seed term is 0 for a candidate outside the seed order).
2. **Kind, place, name**: types (class, struct, interface, trait, enum) × ``rank_type_factor``;
   free functions and constants × ``rank_minor_factor``; a symbol that is not product code for
   this task (``demote``: tests unless the task is about tests, samples, examples, benchmarks,
   fixtures, documentation) × ``rank_place_factor``; × ``1 + rank_name_match · share``, the
   share of the words of its in-file name (owners included) that are task words (``word_key``),
   and × ``1 + rank_path_match`` when a word of its path is one.
3. **Consensus**: × ``1 + rank_consensus · Σ prior(c) / max prior`` over the other candidates
   ``c`` among the best ``rank_consensus_top`` with an edge ``c → n`` (calls, references,
   members, …): one step of HITS authority among the best candidates, each hub weighted by its
   prior. What the best candidates have in common ranks up.
4. **Co-change**: × ``1 + rank_cochange · Σ confidence · best score`` over the other files of the
   best candidates that ``n``'s file changes with (``co_changed_with`` edges of the module nodes).
5. **Abstractions and owners**: a type a best candidate type implements or extends scores at
   least ``rank_abstraction_lift`` × it; a type whose member is among the best scores at least
   ``rank_owner_lift`` × that member; then every member at least ``rank_member_share`` × its
   owner type (the type first, its parts after it).
6. **Diversity**: in the first ``diversity_window`` places at most ``diversity_per_file`` symbols
   of one file and at most ``diversity_per_word`` symbols sharing one word of their in-file names
   (``ApiGateway.Create`` has ``api``, ``gateway``, ``create``); the others wait, in order, for
   the places after the window.

Symbols the task names outright (backticks, stack frames: ``pinned``) come first, in seed order,
at score 1. The other scores are divided by the best and made non-increasing along the final
order, so they lie in (0, 1] and the knapsack, which packs by score, takes the symbols in this
order.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from knowing_pr.config import TaskParams
from knowing_pr.graph.adjacency import Adjacency
from knowing_pr.graph.paths import module_name
from knowing_pr.model import TYPE_KINDS, EdgeKind, Node, ScoredSymbol, SymbolKind, node_id
from knowing_pr.rank.fusion import rrf_scores

__all__ = ["TaskOrderInput", "follow_file_list", "name_words", "task_rank", "word_key"]

_MINOR_KINDS = frozenset({SymbolKind.FUNCTION, SymbolKind.CONSTANT})
_WORD_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")


@dataclass(frozen=True)
class TaskOrderInput:
    """What the final order of a task reads: the walk's candidates (best first) and the seed order."""

    candidates: Sequence[ScoredSymbol]
    seed_order: Sequence[str]
    adjacency: Adjacency
    #: path → not product code for this task (tests, samples, …): ranked down
    demote: Callable[[str], bool]
    #: symbols the task names outright: first, in seed order, whatever the rest scores
    pinned: frozenset[str] = frozenset()
    #: the task's words as ``word_key`` gives them (weak terms left out)
    task_words: frozenset[str] = frozenset()


_SUFFIXES = ("ations", "ation", "ings", "ing", "ions", "ion", "ers", "er", "ors", "or", "ed", "es", "s")


def word_key(word: str) -> str:
    """A word as names and tasks are compared: lowercase, one inflection or agent suffix and a
    final ``e`` dropped when four letters remain (``placeholders``, ``placeholder`` → ``placehold``;
    ``creation``, ``creator`` → ``creat``; ``routes``, ``route`` → ``rout``)."""
    key = word.lower()
    for suffix in _SUFFIXES:
        if key.endswith(suffix) and len(key) - len(suffix) >= 4 and not key.endswith("ss"):
            key = key[: -len(suffix)]
            break
    return key[:-1] if len(key) > 4 and key.endswith("e") else key


def name_words(node: Node) -> frozenset[str]:
    """The ``word_key`` of each word (3+ letters) of a symbol's in-file name, owners included."""
    prefix = module_name(node.path) + "."
    infile = node.qualified_name.removeprefix(prefix) if node.qualified_name.startswith(prefix) else node.name
    return frozenset(word_key(part) for part in _WORD_PARTS.findall(infile) if len(part) >= 3)


def _path_words(path: str) -> frozenset[str]:
    return frozenset(word_key(part) for part in _WORD_PARTS.findall(path) if len(part) >= 3)


def _priors(given: TaskOrderInput, params: TaskParams) -> dict[str, float]:
    walk = [(s.node.id, 1.0) for s in given.candidates]
    seen: set[str] = set()
    seeds: list[tuple[str, float]] = []
    for nid in given.seed_order:  # a repeated seed counts at its first position only
        seeds.append((nid, 0.0 if nid in seen else 1.0))
        seen.add(nid)
    fused = rrf_scores(
        [(params.fusion_walk_weight, walk), (params.fusion_seed_weight, seeds)], params.fusion_k
    )
    priors: dict[str, float] = {}
    for symbol in given.candidates:
        node = symbol.node
        prior = fused.get(node.id, 0.0)
        if node.kind in TYPE_KINDS:
            prior *= params.rank_type_factor
        elif node.kind in _MINOR_KINDS:
            prior *= params.rank_minor_factor
        if given.demote(node.path):
            prior *= params.rank_place_factor
        if given.task_words:
            words = name_words(node)
            share = len(words & given.task_words) / len(words) if words else 0.0
            prior *= 1.0 + params.rank_name_match * share
            if params.rank_path_match and _path_words(node.path) & given.task_words:
                prior *= 1.0 + params.rank_path_match
        priors[node.id] = prior
    return priors


def _consensus(priors: Mapping[str, float], adjacency: Adjacency, params: TaskParams) -> dict[str, float]:
    """Each of the best ``rank_consensus_top`` candidates × (1 + λ · the prior share of the other
    best candidates linking to it)."""
    scores = dict(priors)
    if params.rank_consensus <= 0 or not priors:
        return scores
    best = sorted(priors, key=lambda nid: -priors[nid])[: params.rank_consensus_top]
    top = priors[best[0]]
    index_of = {i: nid for nid in best if (i := adjacency.index_of(nid)) is not None}
    links: dict[str, float] = {}
    for source, nid in index_of.items():
        start, end = int(adjacency.indptr[source]), int(adjacency.indptr[source + 1])
        targets = {int(t) for t in adjacency.indices[start:end]} - {source}
        for target in targets & index_of.keys():
            links[index_of[target]] = links.get(index_of[target], 0.0) + priors[nid] / top
    for nid, share in links.items():
        scores[nid] = priors[nid] * (1.0 + params.rank_consensus * share)
    return scores


def _cochange(
    scores: Mapping[str, float], nodes: Mapping[str, Node], adjacency: Adjacency, params: TaskParams
) -> dict[str, float]:
    """Each candidate × (1 + λ · Σ confidence × best score / max score over the other files of the
    best candidates that its file changes with: a ``co_changed_with`` edge either way)."""
    if params.rank_cochange <= 0 or not scores:
        return dict(scores)
    best = sorted(scores, key=lambda nid: -scores[nid])[: params.rank_consensus_top]
    top = scores[best[0]]
    file_score: dict[str, float] = {}
    for nid in best:
        path = nodes[nid].path
        file_score[path] = max(file_score.get(path, 0.0), scores[nid] / top)
    module_of = {
        index: path
        for path in file_score
        if (index := adjacency.index_of(node_id(path, module_name(path), SymbolKind.MODULE))) is not None
    }
    together = int(EdgeKind.CO_CHANGED_WITH)
    pairs: dict[tuple[str, str], float] = {}  # either direction counts, at its higher confidence
    for index, path in module_of.items():
        start, end = int(adjacency.indptr[index]), int(adjacency.indptr[index + 1])
        for target, kind, confidence in zip(
            adjacency.indices[start:end],
            adjacency.kinds[start:end],
            adjacency.confidence[start:end],
            strict=True,
        ):
            other = module_of.get(int(target))
            if int(kind) == together and other is not None and other != path:
                pair = (min(path, other), max(path, other))
                pairs[pair] = max(pairs.get(pair, 0.0), float(confidence))
    support: dict[str, float] = {}
    for (left, right), confidence in pairs.items():
        support[left] = support.get(left, 0.0) + confidence * file_score[right]
        support[right] = support.get(right, 0.0) + confidence * file_score[left]
    return {
        nid: score * (1.0 + params.rank_cochange * support.get(nodes[nid].path, 0.0))
        for nid, score in scores.items()
    }


def _abstraction_lift(
    scores: dict[str, float], nodes: Mapping[str, Node], adjacency: Adjacency, params: TaskParams
) -> dict[str, float]:
    """A type that a candidate type implements or extends scores at least ``rank_abstraction_lift``
    × that type (the interface with, or before, its implementations)."""
    if params.rank_abstraction_lift <= 0:
        return scores
    lifted = dict(scores)
    upward = {int(EdgeKind.IMPLEMENTS), int(EdgeKind.EXTENDS), int(EdgeKind.INHERITS)}
    for nid in sorted(scores, key=lambda n: -scores[n])[: params.rank_consensus_top]:
        index = adjacency.index_of(nid)
        if index is None or nodes[nid].kind not in TYPE_KINDS:
            continue
        start, end = int(adjacency.indptr[index]), int(adjacency.indptr[index + 1])
        for target, kind in zip(adjacency.indices[start:end], adjacency.kinds[start:end], strict=True):
            parent = adjacency.node_ids[int(target)]
            if int(kind) in upward and parent in lifted and nodes[parent].kind in TYPE_KINDS:
                lifted[parent] = max(lifted[parent], params.rank_abstraction_lift * scores[nid])
    return lifted


def _owners(scores: Mapping[str, float], nodes: Mapping[str, Node], adjacency: Adjacency) -> dict[str, str]:
    """Candidate → the candidate type it is a member of (``member_of`` edge), where there is one."""
    member_of = int(EdgeKind.MEMBER_OF)
    owners: dict[str, str] = {}
    for nid in scores:
        index = adjacency.index_of(nid)
        if index is None or nodes[nid].kind in TYPE_KINDS:
            continue
        start, end = int(adjacency.indptr[index]), int(adjacency.indptr[index + 1])
        for target, kind in zip(adjacency.indices[start:end], adjacency.kinds[start:end], strict=True):
            if int(kind) == member_of:
                owner = adjacency.node_ids[int(target)]
                if owner in scores and nodes[owner].kind in TYPE_KINDS:
                    owners[nid] = owner
                break
    return owners


def _owner_lift(scores: dict[str, float], owners: Mapping[str, str], params: TaskParams) -> dict[str, float]:
    """The owner type of each of the best members scores at least ``rank_owner_lift`` × the member;
    then each member at least ``rank_member_share`` × its owner (a type's parts follow it)."""
    lifted = dict(scores)
    if params.rank_owner_lift > 0:
        for nid in sorted(scores, key=lambda n: -scores[n])[: params.rank_consensus_top]:
            if nid in owners:
                owner = owners[nid]
                lifted[owner] = max(lifted[owner], params.rank_owner_lift * scores[nid])
    if params.rank_member_share > 0:
        shared = dict(lifted)
        for nid, owner in owners.items():
            shared[nid] = max(lifted[nid], params.rank_member_share * lifted[owner])
        lifted = shared
    return lifted


def _diverse(order: Sequence[str], nodes: Mapping[str, Node], params: TaskParams) -> list[str]:
    """``order`` with the first ``diversity_window`` places capped per file and per name word."""
    window = params.diversity_window
    if window <= 0:
        return list(order)
    files: Counter[str] = Counter()
    words: Counter[str] = Counter()
    placed: list[str] = []
    waiting: list[str] = []
    for nid in order:
        if len(placed) >= window:
            waiting.append(nid)
            continue
        node = nodes[nid]
        mine = name_words(node)
        if files[node.path] >= params.diversity_per_file or any(
            words[w] >= params.diversity_per_word for w in mine
        ):
            waiting.append(nid)
            continue
        placed.append(nid)
        files[node.path] += 1
        words.update(mine)
    return [*placed, *waiting]


def task_rank(given: TaskOrderInput, params: TaskParams) -> list[tuple[str, float]]:
    """Every candidate with its final score in (0, 1], best first (module docstring)."""
    if not given.candidates:
        return []
    nodes = {s.node.id: s.node for s in given.candidates}
    walk_position = {s.node.id: i for i, s in reversed(list(enumerate(given.candidates)))}
    priors = _priors(given, params)
    consensus = _cochange(_consensus(priors, given.adjacency, params), nodes, given.adjacency, params)
    lifted = _abstraction_lift(consensus, nodes, given.adjacency, params)
    scores = _owner_lift(lifted, _owners(lifted, nodes, given.adjacency), params)
    ranked = sorted(scores, key=lambda nid: (-scores[nid], walk_position[nid]))
    seed_position = {nid: i for i, nid in reversed(list(enumerate(given.seed_order)))}
    pinned = sorted(
        (nid for nid in given.pinned if nid in scores),
        key=lambda nid: (seed_position.get(nid, len(seed_position)), ranked.index(nid)),
    )
    rest = [nid for nid in ranked if nid not in given.pinned]
    return _final_order(pinned, rest, scores, max(scores.values()) or 1.0, nodes, params)


def _final_order(
    pinned: Sequence[str],
    ranked: Sequence[str],
    scores: Mapping[str, float],
    top: float,
    nodes: Mapping[str, Node],
    params: TaskParams,
) -> list[tuple[str, float]]:
    """The pinned symbols first (score 1), then ``ranked`` through the diversity caps, each score
    divided by ``top`` and made non-increasing."""
    out: list[tuple[str, float]] = [(nid, 1.0) for nid in pinned]
    ceiling = 1.0
    for nid in _diverse(ranked, nodes, params):
        ceiling = min(ceiling, round(scores[nid] / top, 6))
        out.append((nid, ceiling))
    return out


def follow_file_list(
    order: Sequence[tuple[str, float]],
    nodes: Mapping[str, Node],
    file_scores: Mapping[str, float],
    pinned: frozenset[str],
    params: TaskParams,
) -> list[tuple[str, float]]:
    """The final order read against the task's ranked file list (step 8): each symbol's score ×
    ``1 + rank_file_prior · s``, ``s`` its file's score in the list (in (0, 1], the best file 1;
    0 for a file not listed); then the diversity caps again, the pinned symbols first as before,
    and the scores divided by the best and made non-increasing. The file list is computed from
    the order before this step (its ``symbols`` channel), so the two are not circular."""
    weight = params.rank_file_prior
    if weight <= 0 or not file_scores or not order:
        return list(order)
    position = {nid: i for i, (nid, _) in enumerate(order)}
    scores = {
        nid: score * (1.0 + weight * file_scores.get(nodes[nid].path, 0.0))
        for nid, score in order
        if nid not in pinned
    }
    ranked = sorted(scores, key=lambda nid: (-scores[nid], position[nid]))
    first = [nid for nid, _ in order if nid in pinned]
    return _final_order(first, ranked, scores, max(scores.values(), default=0.0) or 1.0, nodes, params)
