"""Repository paths → module names, file stems and what counts as a test file."""

from __future__ import annotations

__all__ = ["file_stem", "is_test_path", "module_name", "test_subject_stem"]


def module_name(path: str) -> str:
    """``pkg/mod.py`` → ``pkg.mod``; ``pkg/__init__.py`` → ``pkg`` (dots from directories)."""
    stem = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
    if stem.endswith(".d"):  # foo.d.ts
        stem = stem[:-2]
    if stem.endswith("/__init__"):
        stem = stem[: -len("/__init__")]
    return stem.replace("/", ".")


def file_stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.split(".", 1)[0] if not name.startswith(".") else name


def is_test_path(path: str) -> bool:
    """Path conventions for tests across languages (seed 002, test file deprioritisation)."""
    lowered = "/" + path.lower()
    name = lowered.rsplit("/", 1)[-1]
    if any(seg in lowered for seg in ("/tests/", "/test/", "/__tests__/", "/spec/", "/testing/")):
        return True
    if name.startswith("test_") or name.startswith("tests_"):
        return True
    stem = name.split(".", 1)[0]
    if stem.endswith(("_test", "_tests", "_spec")) or stem in ("test", "tests", "spec"):
        return True  # ``src/constructFrom/test.ts``, Django's ``tests.py``
    if ".test." in name or ".spec." in name:
        return True
    original = path.rsplit("/", 1)[-1].split(".", 1)[0]
    return original.endswith(("Test", "Tests", "IT")) and len(original) > 4 and original[0].isupper()


def test_subject_stem(path: str) -> str | None:
    """The source file stem a test file is named after (``test_foo.py`` → ``foo``)."""
    name = path.rsplit("/", 1)[-1]
    stem = name.split(".", 1)[0]
    for prefix in ("test_", "tests_"):
        if stem.startswith(prefix) and len(stem) > len(prefix):
            return stem[len(prefix) :]
    for suffix in ("_test", "_tests", "_spec", "Tests", "Test"):
        if stem.endswith(suffix) and len(stem) > len(suffix):
            return stem[: -len(suffix)]
    if ".test." in name or ".spec." in name:
        return stem
    return None
