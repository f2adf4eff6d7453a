"""The task rows ``bench/cochange.py`` saved (``DIR/<repo>.<tag>.npz``) → how a lead threshold
(``files.lead_min_share``: a file of the ranked list leads the symbol pack when it scores at
least that share of the best file) splits the list's first ``files`` files: held-out files kept
as leads, and other files kept as leads.

Usage::

    python bench/file_leads.py DIR [--tag run] [--files 12] [--share 0 0.05 0.1 ...]

Every task is scored with the shipped prior (``FILE_MODEL_PRIOR``), not with the weights each
repository would fit, and that prior was fitted on these same repositories: an in-sample
check of the threshold, not a held-out score.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from knowing_pr.config import FILE_MODEL_PRIOR
from knowing_pr.history.filemodel import FileModel


def split(directory: Path, tag: str, files: int, share: float) -> tuple[int, int, int, int]:
    """(held-out leads, held-out files among the first ``files``, other leads, other files)."""
    model = FileModel(FILE_MODEL_PRIOR)
    held_kept = held_all = other_kept = other_all = 0
    for path in sorted(directory.glob(f"*.{tag}.npz")):
        arrays = np.load(path)
        task = 0
        while f"task{task}_values" in arrays.files:
            values, held = arrays[f"task{task}_values"], arrays[f"task{task}_held"].astype(bool)
            task += 1
            if values.shape[0] == 0:
                continue
            scores = model.scores(values.astype(np.float64))
            first = np.argsort(-scores, kind="stable")[:files]
            kept = scores[first] >= share * scores[first[0]]
            held_kept += int((held[first] & kept).sum())
            held_all += int(held[first].sum())
            other_kept += int((~held[first] & kept).sum())
            other_all += int((~held[first]).sum())
    return held_kept, held_all, other_kept, other_all


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory")
    parser.add_argument("--tag", default="run")
    parser.add_argument("--files", type=int, default=12)
    parser.add_argument("--share", type=float, nargs="+", default=[0.0, 0.02, 0.05, 0.1, 0.2, 0.4])
    args = parser.parse_args(argv)
    print("| share | held-out files kept as leads | other files kept as leads |")
    print("|---|---|---|")
    for share in args.share:
        held_kept, held_all, other_kept, other_all = split(Path(args.directory), args.tag, args.files, share)
        print(
            f"| {share:g} | {held_kept} of {held_all} ({held_kept / max(held_all, 1):.0%}) "
            f"| {other_kept} of {other_all} ({other_kept / max(other_all, 1):.0%}) |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
