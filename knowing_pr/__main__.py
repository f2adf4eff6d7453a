"""``python -m knowing_pr`` → the command line."""

from knowing_pr.cli import run

raise SystemExit(run())
