"""knowing-pr: the code a pull request touches, ranked and packed into a reviewer's budget.

This module is imported by the git hooks' lean start-up too (no ``site``, no ``typing``): what it
needs beyond that is imported inside the function that uses it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

__version__ = "0.6.2"


def lazy_attributes(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A package's ``__getattr__`` (PEP 562): each name of ``homes`` is imported from its module
    (``homes[name]``, relative to ``package``) on first use and kept in the package, so importing
    the package loads only what a command then asks for."""
    import importlib
    import sys

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


def die_with_parent(parent: int) -> None:
    """In a fork of ``parent``: on Linux, be killed when the parent dies (a SIGKILL, a crash),
    and end now should it have died already; elsewhere nothing (the fork then ends when a read
    or write on its pipe to the parent fails)."""
    import os
    import signal

    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the request was made
        os._exit(0)
