"""An edge's type + confidence → the name of the rule that made it (the ``export`` contract).

Each resolution rule of ``graph/resolve.py`` gives its edges its own confidence
(``IndexParams.confidence_*``), so the rule can be read back from the stored confidence:

========================  =============================================================
rule                      made by
========================  =============================================================
``import``                a name bound by an import (``from m import f``, ``import x``)
``member``                a method of the enclosing class (``self.f()``) or of a type named
                          by the qualifier
``same_file``             the only definition of the name in the caller's file
``same_package``          the only definition of the name in the caller's directory
``global_unique``         the only definition of the name in the repository
``receiver_guess``        ``obj.f()`` with an unknown receiver and a single method ``f``
``containment``           ``contains`` / ``member_of`` between a definition and its parent
``test_name``             a test file linked to the source file it is named after
``test_use``              a test symbol's call or type use of non-test code
``history``               ``co_changed_with`` edges mined from git history
========================  =============================================================
"""

from __future__ import annotations

from knowing_pr.config import IndexParams
from knowing_pr.model import EdgeKind

__all__ = ["RULES", "rule_of"]

RULES = (
    "import",
    "member",
    "same_file",
    "same_package",
    "global_unique",
    "receiver_guess",
    "containment",
    "test_name",
    "test_use",
    "history",
    "unknown",
)

#: confidence of a test file → subject file edge (``resolve._test_subjects``)
TEST_NAME_CONFIDENCE = 0.8


def rule_of(kind: EdgeKind, confidence: float, params: IndexParams) -> str:
    """The rule that made an edge of this type and confidence (``unknown`` if none matches)."""
    if kind in (EdgeKind.CONTAINS, EdgeKind.MEMBER_OF):
        return "containment"
    if kind == EdgeKind.CO_CHANGED_WITH:
        return "history"
    if kind == EdgeKind.IMPORTS:
        return "import"
    if kind == EdgeKind.TESTS and abs(confidence - TEST_NAME_CONFIDENCE) < 1e-4:
        return "test_name"
    by_confidence = (
        (params.confidence_import, "import"),
        (params.confidence_same_class, "member"),
        (params.confidence_same_file, "same_file"),
        (params.confidence_same_package, "same_package"),
        (params.confidence_global_unique, "global_unique"),
        (params.confidence_receiver_guess, "receiver_guess"),
    )
    for value, rule in by_confidence:
        if abs(confidence - value) < 1e-4:
            return "test_use" if kind == EdgeKind.TESTS else rule
    return "unknown"
