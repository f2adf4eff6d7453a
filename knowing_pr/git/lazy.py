"""A module name → that module, executed on its first attribute use (``importlib.util.LazyLoader``).

pygit2 was among the largest imports of a fresh process (it loads libgit2, ``ssl`` and
``tarfile``: bench/pr_profile.py). The ``git`` package's modules name it as
``lazy_module("pygit2")``, so importing the package loads nothing, and a ``pr`` whose git
questions a reader process answers (``knowing_pr.git.served``) never loads it.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

__all__ = ["lazy_module"]


def lazy_module(name: str) -> ModuleType:
    """``name`` as a module whose code runs when one of its attributes is first read (the module
    itself when it is imported already)."""
    found = sys.modules.get(name)
    if found is not None:
        return found
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module
