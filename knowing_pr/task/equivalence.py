"""Equivalence classes (package data + ``.knowing-pr.yml``) + task text → matched classes
(seed 002/003, "Equivalence Class Seed Retrieval").

A class maps the phrases people write ("sign in", "credentials") to the symbol names code
uses (``authenticate``, ``*Authenticator``). Matching is case-insensitive on words
(``_`` and ``-`` count as spaces; a trailing plural "s"/"es" is allowed). The multi-phrase
gate of seed 003 (``isStrongEquivMatch``): a class fires only when at least two of its
phrases match, or when the one that matches has several words. Targets of three
characters or fewer and generic names (``get``, ``run``, ``Settings.index.generic_names``)
are never resolved: they would match hundreds of unrelated symbols.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from knowing_pr.config import equivalence_class_fields

__all__ = [
    "ClassMatch",
    "EquivalenceClass",
    "classes_from_mappings",
    "is_generic_target",
    "match_classes",
    "universal_classes",
]

#: seed 003's generic-target blocklist (plus the config's generic names at call time)
_GENERIC_TARGETS = frozenset({"get", "set", "do", "new", "run", "put", "post", "call", "add", "pop"})


@dataclass(frozen=True)
class EquivalenceClass:
    name: str
    phrases: tuple[str, ...]
    targets: tuple[str, ...]
    weight: float = 0.8
    source: str = "universal"  # "universal" | "user"


@dataclass(frozen=True)
class ClassMatch:
    """A class that passed the gate, with the phrases that matched."""

    cls: EquivalenceClass
    phrases: tuple[str, ...]


def _normalise(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def classes_from_mappings(
    raw: Iterable[Mapping[str, Any]], *, source: str, default_weight: float
) -> list[EquivalenceClass]:
    """Validated class mappings (``config.equivalence_class_fields``) as ``EquivalenceClass``es."""
    return [
        EquivalenceClass(name, phrases, targets, weight, source)
        for name, phrases, targets, weight in (
            equivalence_class_fields(item, position, default_weight) for position, item in enumerate(raw, 1)
        )
    ]


@lru_cache(maxsize=1)
def universal_classes() -> tuple[EquivalenceClass, ...]:
    """The classes shipped as ``knowing_pr/data/equivalence.yaml``."""
    from importlib import resources

    import yaml

    text = resources.files("knowing_pr").joinpath("data/equivalence.yaml").read_text(encoding="utf-8")
    # libyaml's loader when PyYAML has it: the pure-Python one takes a tenth of a second here
    data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506  # nosec B506 (a safe loader)
    weight = float(data.get("weight", 0.8))
    return tuple(classes_from_mappings(data["classes"], source="universal", default_weight=weight))


@lru_cache(maxsize=4096)
def _phrase_words(phrase: str) -> tuple[str, ...]:
    return tuple(_normalise(phrase).split())


def _phrase_in(words: tuple[str, ...], tokens: Sequence[str], starts: Mapping[str, list[int]]) -> bool:
    """Whether ``words`` occur consecutively in ``tokens``, the last one perhaps with a plural
    ``s``/``es`` (``starts``: token → its positions)."""
    *head, last = words
    endings = (last, last + "s", last + "es")
    if not head:
        return any(ending in starts for ending in endings)
    for position in starts.get(head[0], ()):
        end = position + len(head)
        if end < len(tokens) and list(tokens[position:end]) == head and tokens[end] in endings:
            return True
    return False


def match_classes(text: str, classes: Sequence[EquivalenceClass]) -> list[ClassMatch]:
    """Classes whose phrases the text matches strongly enough (the multi-phrase gate)."""
    tokens = _normalise(text).split()
    starts: dict[str, list[int]] = {}
    for position, token in enumerate(tokens):
        starts.setdefault(token, []).append(position)
    matches: list[ClassMatch] = []
    for cls in classes:
        hit = tuple(
            p for p in cls.phrases if _phrase_words(p) and _phrase_in(_phrase_words(p), tokens, starts)
        )
        distinct = {_normalise(p) for p in hit}
        if len(distinct) >= 2 or any(len(_normalise(p).split()) > 1 for p in hit):
            matches.append(ClassMatch(cls, hit))
    return matches


def is_generic_target(target: str, generic_names: Iterable[str] = ()) -> bool:
    """Too short or too common to resolve (``get``, ``run``, a config generic name)."""
    bare = target.replace("*", "")
    if len(bare) <= 3:
        return True
    lowered = bare.lower()
    return lowered in _GENERIC_TARGETS or lowered in {g.lower() for g in generic_names}
