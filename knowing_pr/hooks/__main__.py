"""``python -m knowing_pr.hooks run NAME [ARGS...]`` / ``worker ...`` → exit status (see ``main``)."""

from __future__ import annotations

import sys

from knowing_pr.hooks.run import main

if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
