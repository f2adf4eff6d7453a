"""Named numpy arrays ↔ bytes a store blob keeps: a header (a four-byte magic, the layout's
version, the number of arrays and a CRC-32 of everything else), then per array its description
(name, type, shape) and its bytes, each array 8-byte aligned.

Decoding is a few slices, a flipped byte anywhere fails the checksum, and an object type is
refused (nothing is unpickled). Decoded arrays are writeable copies: numpy copies read-only input
in many operations (a ``bincount`` per step of the walk), so one copy up front is cheaper.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["pack_arrays", "unpack_arrays"]

_HEADER = struct.Struct("<4sIII")  # magic, version, number of arrays, CRC-32 (of the version,
_COVERED = struct.Struct("<II")  # the number of arrays and everything after the header)
_ARRAY_HEADER = struct.Struct("<IQ")  # length of the array's description, its bytes


def pack_arrays(arrays: Mapping[str, npt.NDArray[Any]], *, magic: bytes, version: int) -> bytes:
    """``arrays`` in the layout, under ``magic`` (four bytes) and ``version``."""
    parts: list[bytes] = []
    offset = _HEADER.size
    for name, array in arrays.items():
        raw = np.ascontiguousarray(array)
        described = f"{name}\0{raw.dtype.str}\0{','.join(str(n) for n in raw.shape)}".encode()
        # padded with spaces so the array starts 8-byte aligned; the reader strips them
        offset += _ARRAY_HEADER.size + len(described)
        described += b" " * (-offset % 8)
        offset += -offset % 8 + raw.nbytes
        parts += [_ARRAY_HEADER.pack(len(described), raw.nbytes), described, raw.tobytes()]
    body = b"".join(parts)
    checksum = zlib.crc32(body, zlib.crc32(_COVERED.pack(version, len(arrays))))
    return _HEADER.pack(magic, version, len(arrays), checksum) + body


def unpack_arrays(data: bytes, *, magic: bytes, version: int) -> dict[str, npt.NDArray[Any]]:
    """The named arrays of ``data`` written under ``magic`` and ``version``; ValueError for
    anything amiss (another layout, a failed checksum, an array that does not fit)."""
    if len(data) < _HEADER.size:
        raise ValueError("too short for a layout of arrays")
    found_magic, found_version, count, checksum = _HEADER.unpack_from(data)
    if found_magic != magic or found_version != version:
        raise ValueError("another layout")
    body = memoryview(data)[_HEADER.size :]
    if zlib.crc32(body, zlib.crc32(_COVERED.pack(found_version, count))) != checksum:
        raise ValueError("the arrays fail their checksum")
    arrays: dict[str, npt.NDArray[Any]] = {}
    offset = _HEADER.size
    try:
        for _ in range(count):
            described_length, size = _ARRAY_HEADER.unpack_from(data, offset)
            offset += _ARRAY_HEADER.size
            described = bytes(data[offset : offset + described_length]).decode()
            name, type_text, shape_text = described.rstrip(" ").split("\0")
            offset += described_length
            dtype = np.dtype(type_text)
            shape = tuple(int(n) for n in shape_text.split(",") if n)
            if dtype.hasobject or offset + size > len(data) or int(np.prod(shape)) * dtype.itemsize != size:
                raise ValueError(f"array {name!r} does not fit its description")
            found = np.frombuffer(data, dtype=dtype, count=size // dtype.itemsize, offset=offset)
            arrays[name] = found.copy().reshape(shape)
            offset += size
    except (struct.error, TypeError) as exc:
        raise ValueError(f"an array's description is damaged: {exc}") from None
    if offset != len(data):
        raise ValueError("the data go on past the arrays")
    return arrays
