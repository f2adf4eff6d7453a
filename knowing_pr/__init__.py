"""knowing-pr: the code a pull request touches, ranked and packed into a reviewer's budget.

This module is imported by the git hooks' lean start-up too (no ``site``, no ``typing``): what it
needs beyond that is imported inside the function that uses it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

__version__ = "0.1.0"


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
