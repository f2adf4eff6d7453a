"""Oracle bench reports → each rule's confidence, calibrated by leave-one-repository-out.

Usage::

    python bench/calibrate.py REPORT.json [REPORT.json ...] [--min-edges 20] [--json OUT]

Each REPORT is the ``--json`` output of ``bench/edge_oracle.py`` (one language, several
repositories). For every rule that made ``calls`` edges, over all the repositories of all the
reports:

- the rule's confidence: its precision over every repository (correct / (correct + wrong)
  among the judged edges), the value ``IndexParams.confidence_<rule>`` should hold;
- per repository, leave-one-out: the precision measured on that repository, and the precision
  on all the *other* repositories (what the shipped value would have been had this repository
  not been measured); the gap between the two must stay within ``--tolerance`` (0.05) for the
  confidence to be called calibrated. A repository where the rule judged fewer than
  ``--min-edges`` edges is reported but not checked (its precision is noise).

Nothing here tunes anything: the script reads the reports and prints the table; the values
are copied into ``knowing_pr/config/params.py`` by hand, with the command that produced them.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from knowing_pr.graph.rules import RESOLUTION_RULES  # noqa: E402

RULES = RESOLUTION_RULES


@dataclass
class Counts:
    correct: int = 0
    wrong: int = 0

    @property
    def judged(self) -> int:
        return self.correct + self.wrong

    @property
    def precision(self) -> float | None:
        return self.correct / self.judged if self.judged else None

    def add(self, other: Counts) -> None:
        self.correct += other.correct
        self.wrong += other.wrong


def read_reports(paths: list[Path]) -> dict[str, dict[str, Counts]]:
    """repository label (``language/repo``) → rule → its correct and wrong edges."""
    found: dict[str, dict[str, Counts]] = {}
    for path in paths:
        report = json.loads(path.read_text(encoding="utf-8"))
        for repo in report["repositories"]:
            label = f"{report['language']}/{repo['repo']}"
            rules = found.setdefault(label, defaultdict(Counts))
            for rule, counts in repo["precision_by_rule"].items():
                if rule != "all":
                    rules[rule].add(Counts(int(counts.get("correct", 0)), int(counts.get("wrong", 0))))
    return found


def calibrate(found: dict[str, dict[str, Counts]], min_edges: int, tolerance: float) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for rule in RULES:
        total = Counts()
        for rules in found.values():
            total.add(rules.get(rule, Counts()))
        if not total.judged:
            continue
        per_repo = []
        for label, rules in sorted(found.items()):
            own = rules.get(rule, Counts())
            others = Counts()
            for other, other_rules in found.items():
                if other != label:
                    others.add(other_rules.get(rule, Counts()))
            checked = own.judged >= min_edges and others.judged > 0
            gap = (
                abs(own.precision - others.precision)
                if checked and own.precision is not None and others.precision is not None
                else None
            )
            per_repo.append(
                {
                    "repository": label,
                    "judged": own.judged,
                    "precision": _round(own.precision),
                    "leave_one_out": _round(others.precision),
                    "gap": _round(gap),
                    "within_tolerance": None if gap is None else gap <= tolerance,
                }
            )
        table[rule] = {
            "judged": total.judged,
            "wrong": total.wrong,
            "confidence": _round(total.precision, 2),
            "repositories": per_repo,
        }
    return table


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def _pct(value: float | None) -> str:
    return "    –" if value is None else f"{100 * value:5.1f}%"


def print_table(table: dict[str, Any], out: Any = sys.stdout) -> None:
    for rule, row in table.items():
        print(
            f"\n{rule}: confidence {row['confidence']} ({row['judged']} judged edges, {row['wrong']} wrong)",
            file=out,
        )
        print(
            f"  {'repository':<26}{'judged':>8}{'precision':>11}{'other repos':>13}{'gap':>8}  ok", file=out
        )
        for repo in row["repositories"]:
            ok = {True: "yes", False: "NO", None: "-"}[repo["within_tolerance"]]
            gap = "    –" if repo["gap"] is None else f"{repo['gap']:.3f}"
            print(
                f"  {repo['repository']:<26}{repo['judged']:>8}{_pct(repo['precision']):>11}"
                f"{_pct(repo['leave_one_out']):>13}{gap:>8}  {ok}",
                file=out,
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", type=Path, help="edge_oracle.py --json outputs")
    parser.add_argument(
        "--min-edges", type=int, default=20, help="judged edges a repository needs to be checked"
    )
    parser.add_argument("--tolerance", type=float, default=0.05)
    parser.add_argument("--json", type=Path, default=None, metavar="OUT")
    args = parser.parse_args(argv)
    table = calibrate(read_reports(args.reports), args.min_edges, args.tolerance)
    print_table(table)
    if args.json:
        args.json.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
