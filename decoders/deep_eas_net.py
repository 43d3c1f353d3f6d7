"""Deep-EAS's policy network on its binary images: the batched forward pass and the
REINFORCE gradient as Numba kernels that skip the empty patches.

The network (``moga.rl.policy``, docs/design.md §13) is eight 3x3 filters at stride 2 with
ReLU over a binary image, then a dense layer to the action logits. The images are mostly
empty, and a patch of zeros gives every filter just its bias: its hidden values are
``relu(b1)`` whatever the image, so the dense layer's rows of all empty positions add up
to one constant per parameter set. The kernels therefore work only on the positions
whose patch holds a 1 (about a fifth of them in the paper's setting), as the difference
from that constant. Hidden values are in float64.

Weights are laid out as the numpy and JAX forms lay them out: ``w1`` (9, F) with patch
cell ``a * 3 + b`` the pixel ``(2r + a, 2c + b)``, ``b1`` (F,), ``w2`` (positions x F, A)
with row ``(r * wo + c) * F + f``, ``b2`` (A,). The tests check both kernels against a
dense plain-numpy twin and against JAX's autodiff on random images and masks.

Samples are split into contiguous chunks, one per thread (the kernels release the GIL);
the gradient sums the chunks in a fixed order, so it does not depend on the thread
count's timing.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .federated import thread_pool

__all__ = ["forward", "gradient"]

#: Samples below which a call stays in the calling thread.
THREAD_MIN_SAMPLES = 128


@njit(cache=True, nogil=True, error_model="numpy")
def _codes(x, s, r, wo, col, code):
    """The 9-bit patterns of row ``r``'s patches in image ``s`` (bit ``a * 3 + b`` the pixel
    ``(2r + a, 2c + b)``) into ``code``."""
    W = x.shape[2]
    for j in range(W):
        col[j] = x[s, 2 * r, j] | (x[s, 2 * r + 1, j] << 3) | (x[s, 2 * r + 2, j] << 6)
    for c in range(wo):
        code[c] = col[2 * c] | (col[2 * c + 1] << 1) | (col[2 * c + 2] << 2)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=True)
def _forward(x, table, w2, c0, wo, lo, hi, z):
    """Logits of images ``lo .. hi`` into ``z``: ``c0`` those of an empty image, ``table``
    (512, F) each pattern's hidden values less an empty patch's."""
    H = x.shape[1]
    F = table.shape[1]
    A = w2.shape[1]
    ho = (H - 3) // 2 + 1
    col = np.empty(x.shape[2], np.int64)
    code = np.empty(wo, np.int64)
    acc = np.empty(A)
    for s in range(lo, hi):
        for a in range(A):
            acc[a] = c0[a]
        for r in range(ho):
            _codes(x, s, r, wo, col, code)
            for c in range(wo):
                k = code[c]
                if k == 0:
                    continue
                row0 = (r * wo + c) * F
                for f in range(F):
                    d = table[k, f]
                    if d != 0.0:
                        for a in range(A):
                            acc[a] += d * w2[row0 + f, a]
        for a in range(A):
            z[s, a] = acc[a]


@njit(cache=True, nogil=True, error_model="numpy", fastmath=True)
def _gradient(x, gz, table, relu_on, off, w2, wo, lo, hi, g_w2, s_dh):
    """The occupied positions' part of the gradient of ``sum_s gz[s] . z[s]`` over images
    ``lo .. hi``: the dense layer's into ``g_w2``, and per pattern and filter the sum of the
    hidden values' gradients into ``s_dh`` (512, F), where ``relu_on`` (the pattern's
    ReLU is on) or ``off`` (an empty patch's is) holds."""
    H = x.shape[1]
    F = table.shape[1]
    A = w2.shape[1]
    ho = (H - 3) // 2 + 1
    col = np.empty(x.shape[2], np.int64)
    code = np.empty(wo, np.int64)
    for s in range(lo, hi):
        for r in range(ho):
            _codes(x, s, r, wo, col, code)
            for c in range(wo):
                k = code[c]
                if k == 0:
                    continue
                row0 = (r * wo + c) * F
                for f in range(F):
                    row = row0 + f
                    d = table[k, f]
                    if d != 0.0:
                        for a in range(A):
                            g_w2[row, a] += d * gz[s, a]
                    if relu_on[k, f] or off[f]:
                        dh = 0.0
                        for a in range(A):
                            dh += gz[s, a] * w2[row, a]
                        s_dh[k, f] += dh


#: Bit ``k`` of every 9-bit pattern, (512, 9).
_BITS = ((np.arange(512)[:, None] >> np.arange(9)[None, :]) & 1).astype(np.float64)


def _tables(w1, b1):
    """Per pattern: the filters' input (512, F) before ReLU, and the hidden values less an
    empty patch's ``relu(b1)``."""
    pre = b1[None, :] + _BITS @ w1
    return pre, np.maximum(pre, 0.0) - np.maximum(b1, 0.0)[None, :]


def _as_net(w1, b1, w2, b2, shape):
    """The weights as float64 contiguous arrays, checked against the image shape."""
    w1, b1, w2, b2 = (np.ascontiguousarray(np.asarray(w, dtype=np.float64))
                      for w in (w1, b1, w2, b2))
    H, W = shape
    if H < 3 or W < 3:
        raise ValueError(f"images must be at least 3 x 3, got {H} x {W}")
    ho, wo = (H - 3) // 2 + 1, (W - 3) // 2 + 1
    F = b1.shape[0]
    if w1.shape != (9, F) or w2.ndim != 2 or w2.shape[0] != ho * wo * F \
            or b2.shape != (w2.shape[1],):
        raise ValueError(f"weights of shapes {w1.shape}, {b1.shape}, {w2.shape}, {b2.shape} "
                         f"do not fit {H} x {W} images ({ho * wo} positions)")
    return w1, b1, w2, b2, ho, wo


def _images(x):
    x = np.asarray(x)
    if x.ndim != 3:
        raise ValueError(f"images must be an array (B, H, W), got shape {x.shape}")
    return np.ascontiguousarray(x != 0, dtype=np.uint8) if x.dtype != np.uint8 or \
        (x.size and x.max() > 1) else np.ascontiguousarray(x)


def _chunks(n, threads):
    threads = max(1, min(threads, n // THREAD_MIN_SAMPLES or 1))
    return [(c * n // threads, (c + 1) * n // threads) for c in range(threads)]


def _run(fn, bounds):
    if len(bounds) == 1:
        fn(*bounds[0])
    else:
        list(thread_pool(len(bounds)).map(lambda b: fn(*b), bounds))


def forward(w1, b1, w2, b2, images, threads: int = 1) -> np.ndarray:
    """Logits (B, A) of binary ``images`` (B, H, W) under the network ``w1, b1, w2, b2``.

    Parameters
    ----------
    w1, b1, w2, b2 : array_like
        The network's weights (module docstring).
    images : array_like
        Binary images; any nonzero pixel counts as 1.
    threads : int
        At most this many threads (fewer for small batches).
    """
    x = _images(images)
    w1, b1, w2, b2, ho, wo = _as_net(w1, b1, w2, b2, x.shape[1:])
    F, A = b1.shape[0], b2.shape[0]
    _, table = _tables(w1, b1)
    c0 = b2 + np.maximum(b1, 0.0) @ w2.reshape(ho * wo, F, A).sum(axis=0)
    z = np.empty((x.shape[0], A))
    _run(lambda lo, hi: _forward(x, table, w2, c0, wo, lo, hi, z),
         _chunks(x.shape[0], threads))
    return z


def gradient(w1, b1, w2, b2, images, gz, threads: int = 1) -> dict:
    """The gradient of ``sum_s gz[s] . logits(images[s])`` with respect to the weights.

    For REINFORCE, ``gz`` is the loss's derivative by the logits, e.g.
    ``adv * (softmax(z) - onehot(action))``; ReLU's derivative at 0 is 0.

    Parameters
    ----------
    w1, b1, w2, b2 : array_like
    images : array_like
        (B, H, W) binary images.
    gz : array_like
        (B, A) float.
    threads : int

    Returns
    -------
    dict
        ``{"w1", "b1", "w2", "b2"}``, float64 arrays of the weights' shapes.
    """
    x = _images(images)
    w1, b1, w2, b2, ho, wo = _as_net(w1, b1, w2, b2, x.shape[1:])
    gz = np.ascontiguousarray(np.asarray(gz, dtype=np.float64))
    F, A = b1.shape[0], b2.shape[0]
    if gz.shape != (x.shape[0], A):
        raise ValueError(f"gz must have shape {(x.shape[0], A)}, got {gz.shape}")
    pre, table = _tables(w1, b1)
    on = pre > 0.0
    off = b1 > 0.0
    G = gz.sum(axis=0)
    bounds = _chunks(x.shape[0], threads)
    parts = [(np.zeros_like(w2), np.zeros((512, F))) for _ in bounds]

    def chunk(i):
        lo, hi = bounds[i]
        _gradient(x, gz, table, on, off, w2, wo, lo, hi, *parts[i])

    _run(chunk, [(i,) for i in range(len(bounds))])
    g_w2, s_dh = parts[0]
    for p in parts[1:]:   # in chunk order, whatever the threads' timing
        g_w2 += p[0]
        s_dh += p[1]
    # Every position as if empty (hidden relu(b1), ReLU on where b1 > 0), then the
    # occupied positions' patterns: on where their input is positive, less the empty part.
    g_w2 += np.broadcast_to((np.maximum(b1, 0.0)[:, None] * G[None, :])[None],
                            (ho * wo, F, A)).reshape(-1, A)
    on = on.astype(np.float64)
    g_b1 = off * (w2.reshape(ho * wo, F, A).sum(axis=0) @ G) + ((on - off) * s_dh).sum(axis=0)
    g_w1 = _BITS.T @ (on * s_dh)
    return {"w1": g_w1, "b1": g_b1, "w2": g_w2, "b2": G}
