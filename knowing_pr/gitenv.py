"""The environment every git command of this tool runs in: the caller's, without ``GIT_*``
variables (a hook runs inside git, which sets ``GIT_DIR``, ``GIT_INDEX_FILE`` … for its own
repository; a user's shell may set others), and with optional locks off, so a read never
takes ``index.lock`` from a command the user runs at the same time.

A module of its own at the top of the package: the hooks import it without importing the git
layer (a hook imports only what it needs), and the git layer without importing the hooks.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["scrubbed_env"]


def scrubbed_env(environ: Mapping[str, str], *, keep: tuple[str, ...] = ()) -> dict[str, str]:
    """``environ`` without ``GIT_*`` (except ``keep``), with ``GIT_OPTIONAL_LOCKS=0``."""
    env = {k: v for k, v in environ.items() if not k.startswith("GIT_") or k in keep}
    env["GIT_OPTIONAL_LOCKS"] = "0"
    return env
