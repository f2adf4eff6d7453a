"""File bytes → a content sketch (MinHash over token shingles) and whether the file says it is
generated; sketches → how alike two files' contents are.

The sketch is one-permutation MinHash (Li, Owen & Zhang, NIPS 2012): every shingle of
``SHINGLE`` consecutive identifier or number tokens is hashed once to 64 bits; the top
``log2(BINS)`` bits choose a bin, and each bin keeps the smallest value that fell into it (its
next 32 bits); an empty bin holds ``EMPTY``. Two files' resemblance (Jaccard similarity of
their shingle sets) is estimated as the share of equal bins among the bins not empty in both
(``resemblance``). It costs one pass over the tokens (no per-bin permutation), and the first
``MAX_TOKENS`` tokens are enough to tell a near-copy (a ``v3/`` file copied to ``v4/``, a
generated mirror).

Hashes are CRC-32 of each token mixed through fixed 64-bit multipliers, so a sketch is the
same in every process and on every machine.
"""

from __future__ import annotations

import re
import zlib

import numpy as np
import numpy.typing as npt

__all__ = [
    "BINS",
    "EMPTY",
    "content_sketch",
    "is_generated",
    "resemblance",
    "sketch_from_bytes",
    "sketch_to_bytes",
]

BINS = 64
SHINGLE = 3
MAX_TOKENS = 20_000
EMPTY = np.uint32(0xFFFFFFFF)

_TOKEN = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")
_MULTIPLIERS = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F), np.uint64(0x165667B19E3779F9))
_MIX = np.uint64(0xFF51AFD7ED558CCD)
_BIN_SHIFT = np.uint64(64 - (BINS.bit_length() - 1))
_VALUE_SHIFT = np.uint64(64 - (BINS.bit_length() - 1) - 32)
#: a marker of generated code within the first bytes of a file ("Code generated ... DO NOT
#: EDIT." is Go's convention; "@generated" Meta's and many tools')
_GENERATED = re.compile(
    rb"(?i)(code generated .{0,80}do not edit|@generated\b|auto-?generated .{0,40}do not)"
)
_GENERATED_SCAN = 2048


def content_sketch(data: bytes) -> npt.NDArray[np.uint32]:
    """The file's sketch: ``BINS`` uint32 values (``EMPTY`` where no shingle fell)."""
    tokens = _TOKEN.findall(data, 0, len(data))[:MAX_TOKENS]
    sketch = np.full(BINS, EMPTY, dtype=np.uint32)
    if not tokens:
        return sketch
    codes: dict[bytes, int] = {}
    hashed = np.fromiter(
        (codes.setdefault(t, zlib.crc32(t)) for t in tokens), dtype=np.uint64, count=len(tokens)
    )
    width = min(SHINGLE, hashed.size)
    count = hashed.size - width + 1
    with np.errstate(over="ignore"):
        mixed = np.zeros(count, dtype=np.uint64)
        for offset in range(width):
            mixed += hashed[offset : offset + count] * _MULTIPLIERS[offset]
        mixed ^= mixed >> np.uint64(29)
        mixed *= _MIX
        mixed ^= mixed >> np.uint64(32)
    bins = (mixed >> _BIN_SHIFT).astype(np.int64)
    values = ((mixed >> _VALUE_SHIFT) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    np.minimum.at(sketch, bins, values)
    return sketch


def is_generated(data: bytes) -> bool:
    """Whether the file's first bytes say it was generated (and should not be edited)."""
    return _GENERATED.search(data[:_GENERATED_SCAN]) is not None


def sketch_to_bytes(sketch: npt.NDArray[np.uint32]) -> bytes:
    return np.ascontiguousarray(sketch, dtype="<u4").tobytes()


def sketch_from_bytes(data: bytes) -> npt.NDArray[np.uint32]:
    """A stored sketch (an empty one when the bytes are not a sketch)."""
    if len(data) != BINS * 4:
        return np.full(BINS, EMPTY, dtype=np.uint32)
    return np.frombuffer(data, dtype="<u4").astype(np.uint32)


def resemblance(sketches: npt.NDArray[np.uint32], one: npt.NDArray[np.uint32]) -> npt.NDArray[np.float64]:
    """Estimated Jaccard similarity of ``one``'s shingles with each row of ``sketches``
    (shape (n, ``BINS``)): equal non-empty bins among the bins not empty in both at once; 0
    when both are empty."""
    rows = np.atleast_2d(sketches)
    either = (rows != EMPTY) | (one != EMPTY)
    equal = (rows == one) & (rows != EMPTY)
    counted = either.sum(axis=1)
    return np.where(counted > 0, equal.sum(axis=1) / np.maximum(counted, 1), 0.0)
