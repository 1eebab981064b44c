"""What the compiled steps (numba: the log reader, the checks' twin) share: their inputs
in the one form they take, and whether numba's cache holds them.

Numba compiles a step once per combination of argument types, and an array's type
includes whether it is writable. Memory a file lends (a read buffer), Arrow or Polars
lends (``to_numpy``) is read-only; memory numpy allocates is writable. So every input
array goes in read-only (a view, no copy), and the one compilation made at install
(:func:`ofcstats.formats.jsonl.compile_reader`) serves every call: a load never waits
half a minute for the compiler because its buffers came from elsewhere.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt


def inputs(dtype: npt.DTypeLike | None, *arrays: np.ndarray) -> list[np.ndarray]:
    """``arrays`` as the compiled steps take them: contiguous, of ``dtype`` (None: their
    own), read-only (a copy only where the type or layout differs)."""
    out = []
    for array in arrays:
        view = np.ascontiguousarray(array, dtype=dtype).view()
        view.flags.writeable = False
        out.append(view)
    return out


def buffer(data: Any) -> np.ndarray:
    """A file's bytes (``bytes``, ``bytearray``, ``mmap``, ``memoryview``) as the compiled
    steps take them: a read-only byte array over the same memory."""
    return inputs(np.uint8, np.frombuffer(data, dtype=np.uint8))[0]


def cached(*steps: Any) -> bool:
    """Whether numba's cache holds these compiled functions for their present source.
    Looked up in numba's own cache index; should its layout change, the answer is no."""
    try:
        return all(bool(step._cache._cache_file._load_index()) for step in steps)
    except (AttributeError, OSError):
        return False
