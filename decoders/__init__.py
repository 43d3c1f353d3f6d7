"""Numba kernels that turn chromosomes into schedules.

Each decoder has private ``@njit`` kernels over plain arrays and public
wrappers that validate and convert. Nothing here imports from ``moga``.
"""

from ._cache import drop_stale_cache, lock_cache_saves

drop_stale_cache()  # before any kernel loads from the cache (numba/numba#1833)
lock_cache_saves()  # processes compiling at once keep each other's signatures

from .federated import (  # noqa: E402
    MODELS,
    BatchDecode,
    FederatedDecode,
    Inputs,
    decode,
    decode_arrays,
    decode_batch,
    inputs,
)

__all__ = ["MODELS", "BatchDecode", "FederatedDecode", "Inputs", "decode", "decode_arrays",
           "decode_batch", "inputs"]
