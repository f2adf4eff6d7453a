"""Edge rules: the name of the resolution rule that made each edge, stored with it (the
``export`` contract's ``rule``), and the confidence each rule gives.

========================  =============================================================
rule                      made by
========================  =============================================================
``import``                a name bound by an import, followed through re-exports and aliases
                          to its definition (``from m import f``, ``import m; m.f()``)
``member``                a method found along the method resolution order of ``self``,
                          ``cls``, ``super()`` or a class named by the code
``typed``                 a method of a receiver whose class was inferred (a constructor
                          call, an annotation, a declared or inferred return type)
``same_file``             a definition of the caller's file, in scope at the call
``same_package``          the only top-level definition of an unbound name in the caller's
                          directory
``global_unique``         the only top-level definition of an unbound name in the repository
``receiver_guess``        ``obj.f()`` with a receiver of unknown type and a single method ``f``
``name_import``,          the same by names only, for languages resolved without their
``name_member``, …        scopes (``IndexParams.scoped_languages``): Rust, Java, C#, Ruby
``containment``           ``contains`` / ``member_of`` between a definition and its parent
``test_name``             a test file linked to the source file it is named after
``test_use``              a test symbol's call or type use of non-test code
``history``               ``co_changed_with`` edges mined from git history
========================  =============================================================

Each rule's confidence (``IndexParams.confidence_<rule>``) is the precision measured for it
on the oracle benchmark (``bench/edge_oracle.py``, ``bench/calibrate.py``; docs/edges.md).
The store keeps the rule as its index in ``RULES`` (append only: stored numbers never move).
"""

from __future__ import annotations

from knowing_pr.model import EdgeKind

__all__ = ["RESOLUTION_RULES", "RULES", "TEST_NAME_CONFIDENCE", "default_rule", "rule_id", "rule_name"]

RULES = (
    "unknown",
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
    "typed",
    "name_import",
    "name_member",
    "name_same_file",
    "name_same_package",
    "name_global_unique",
    "name_receiver_guess",
)

#: the rules that resolve a name (each has a calibrated ``IndexParams.confidence_<rule>``)
RESOLUTION_RULES = (
    "import",
    "member",
    "typed",
    "same_file",
    "same_package",
    "global_unique",
    "receiver_guess",
    "name_import",
    "name_member",
    "name_same_file",
    "name_same_package",
    "name_global_unique",
    "name_receiver_guess",
)

#: confidence of a test file → subject file edge (``resolve._test_subjects``)
TEST_NAME_CONFIDENCE = 0.8

_IDS = {name: index for index, name in enumerate(RULES)}


def rule_id(rule: str) -> int:
    """The stored number of a rule (0, ``unknown``, for a name not in ``RULES``)."""
    return _IDS.get(rule, 0)


def rule_name(number: int) -> str:
    return RULES[number] if 0 <= number < len(RULES) else "unknown"


def default_rule(kind: EdgeKind) -> str:
    """The rule of an edge made without one (history mining, containment)."""
    if kind == EdgeKind.CO_CHANGED_WITH:
        return "history"
    if kind in (EdgeKind.CONTAINS, EdgeKind.MEMBER_OF):
        return "containment"
    return "unknown"
