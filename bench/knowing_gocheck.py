"""Ranked name lists + expected symbols → differences between ``knowing_rules.py`` and knowing's Go
code (``normalize.Symbol``, ``normalize.MatchesGroundTruth``, ``metrics.Compute``) on the same input.

Used by ``knowing_corpus.py --check-with-go``. Needs a Go toolchain on ``PATH`` (Debian:
``apt-get install golang-go``; Go 1.19 suffices: the three packages use the standard library
only). Knowing's ``benchtype``, ``metrics`` and ``normalize`` packages are compiled from the
``--knowing`` checkout in a temporary module together with a small driver written here; nothing
of knowing is stored in this repository.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from knowing_rules import matches_ground_truth, normalize_symbol

__all__ = ["check_with_go"]

_PACKAGES = ("benchtype", "metrics", "normalize")
_MODULE = "github.com/blackwell-systems/knowing"

_DRIVER = """package main

import (
	"bufio"
	"encoding/json"
	"os"

	"MODULE/bench/cross-system/benchtype"
	"MODULE/bench/cross-system/metrics"
	"MODULE/bench/cross-system/normalize"
)

type request struct {
	Retrieved []string `json:"retrieved"`
	Expected  []string `json:"expected"`
}

type answer struct {
	Metrics    map[string]float64 `json:"metrics"`
	Normalized []string           `json:"normalized"`
	Verdicts   [][]bool           `json:"verdicts"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<26)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			panic(err)
		}
		result := benchtype.RetrievalResult{}
		for _, name := range req.Retrieved {
			result.Symbols = append(result.Symbols, benchtype.RetrievedSymbol{QualifiedName: name})
		}
		m := metrics.Compute(result, req.Expected)
		ans := answer{Metrics: map[string]float64{
			"p10_knowing": m.PrecisionAt10, "r10": m.RecallAt10, "ndcg10": m.NDCGAt10, "mrr": m.MRR,
		}}
		for _, name := range req.Retrieved {
			ans.Normalized = append(ans.Normalized, normalize.Symbol(name))
			row := []bool{}
			for _, want := range req.Expected {
				row = append(row, normalize.MatchesGroundTruth(name, want))
			}
			ans.Verdicts = append(ans.Verdicts, row)
		}
		if err := out.Encode(ans); err != nil {
			panic(err)
		}
	}
}
"""


def _build_driver(knowing: Path, workdir: Path) -> Path:
    source = knowing / "bench" / "cross-system"
    for package in _PACKAGES:
        target = workdir / "bench" / "cross-system" / package
        target.mkdir(parents=True)
        for go_file in sorted((source / package).glob("*.go")):
            if not go_file.name.endswith("_test.go"):
                shutil.copy(go_file, target / go_file.name)
    (workdir / "go.mod").write_text(f"module {_MODULE}\n\ngo 1.19\n")
    (workdir / "driver").mkdir()
    (workdir / "driver" / "main.go").write_text(_DRIVER.replace("MODULE", _MODULE))
    binary = workdir / "check"
    subprocess.run(
        ["go", "build", "-o", str(binary), "./driver"],
        cwd=workdir,
        check=True,
        capture_output=True,
        env={**os.environ, "GOFLAGS": "-mod=mod", "GOPATH": str(workdir / "gopath"), "GOTOOLCHAIN": "local"},
    )
    return binary


def check_with_go(
    knowing: Path, cases: Sequence[tuple[Sequence[str], Sequence[str], dict[str, float]]]
) -> dict[str, Any]:
    """Each case: (retrieved names, expected symbols, the metrics this port computed)."""
    with tempfile.TemporaryDirectory(prefix="knowing-gocheck-") as tmp:
        binary = _build_driver(knowing, Path(tmp))
        lines = "".join(json.dumps({"retrieved": list(r), "expected": list(e)}) + "\n" for r, e, _ in cases)
        done = subprocess.run([str(binary)], input=lines, capture_output=True, text=True, check=True)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    differences: list[str] = []
    pairs = 0
    for (retrieved, expected, ours), go in zip(cases, answers, strict=True):
        for i, name in enumerate(retrieved):
            if normalize_symbol(name) != go["normalized"][i]:
                differences.append(f"Symbol({name!r}): {normalize_symbol(name)!r} != {go['normalized'][i]!r}")
            for j, want in enumerate(expected):
                pairs += 1
                if matches_ground_truth(name, want) != go["verdicts"][i][j]:
                    differences.append(f"MatchesGroundTruth({name!r}, {want!r}) differs")
        for metric, value in go["metrics"].items():
            if abs(ours[metric] - value) > 1e-9:
                differences.append(f"{metric}: {ours[metric]} != {value} for {list(expected)}")
    return {"lists": len(cases), "pairs": pairs, "differences": differences}
