"""Numba kernels that turn chromosomes into schedules.

Each decoder has private ``@njit`` kernels over plain arrays and public
wrappers that validate and convert. Nothing here imports from ``moga``.
"""

from .federated import MODELS, BatchDecode, FederatedDecode, decode, decode_batch

__all__ = ["MODELS", "BatchDecode", "FederatedDecode", "decode", "decode_batch"]
