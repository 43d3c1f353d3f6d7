"""Deep-EAS's policy network (docs/design.md §13): eight 3x3 filters of stride 2 with ReLU
over the binary image, then a dense softmax over the ``Q * K + 1`` actions.

Two forms of the same network: :func:`logits`, plain numpy, to act in the
environment one observation at a time without compiling anything; and
:func:`net_logits` / :func:`net_gradient`, the Numba kernels of
:mod:`decoders.deep_eas_net` that skip the images' empty patches, for
training's batches. The tests check they agree, and the gradient against
JAX's autodiff. Parameters are a dict of numpy arrays, saved as ``.npz``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np

from .cluster import ClusterConfig

__all__ = ["init_params", "logits", "net_logits", "net_gradient", "act", "greedy",
           "save_params", "load_params", "check_params", "param_shapes", "policy_scheduler",
           "shipped_policy", "conv_shape"]

FILTERS = 8


def conv_shape(cfg: ClusterConfig):
    """``(rows, cols)`` of the convolution's output (valid padding, stride 2)."""
    return (cfg.H - 3) // 2 + 1, (cfg.width - 3) // 2 + 1


def init_params(cfg: ClusterConfig, seed: int = 0) -> dict:
    """He-initialised weights from ``default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    ho, wo = conv_shape(cfg)
    flat = ho * wo * FILTERS
    return {"w1": (rng.normal(0, np.sqrt(2 / 9), (9, FILTERS))).astype(np.float32),
            "b1": np.zeros(FILTERS, np.float32),
            "w2": (rng.normal(0, np.sqrt(1 / flat), (flat, cfg.n_actions)) * 0.1).astype(np.float32),
            "b2": np.zeros(cfg.n_actions, np.float32)}


def _patches(x, xp=np):
    """(..., H, W) -> (..., ho, wo, 9): the 3x3 patches at stride 2."""
    H, W = x.shape[-2:]
    ho, wo = (H - 3) // 2 + 1, (W - 3) // 2 + 1
    return xp.stack([x[..., a:a + 2 * ho - 1:2, b:b + 2 * wo - 1:2]
                     for a in range(3) for b in range(3)], axis=-1)


def logits(params: dict, obs) -> np.ndarray:
    """Action logits of one observation (H, W) or a batch (B, H, W), numpy.

    The network laid out for numpy: the nine
    patch planes are stacked first, ``(9, B, ho, wo)``, so that the filters
    are one matrix product and the dense layer one product per filter over
    contiguous rows.
    """
    x = np.asarray(obs, dtype=np.float32)
    single = x.ndim == 2
    if single:
        x = x[None]
    B, H, W = x.shape
    ho, wo = (H - 3) // 2 + 1, (W - 3) // 2 + 1
    P = np.empty((9, B, ho, wo), np.float32)
    for a in range(3):
        for b in range(3):
            P[a * 3 + b] = x[:, a:a + 2 * ho - 1:2, b:b + 2 * wo - 1:2]
    w1, b1, w2, b2 = (params[k] for k in PARAM_KEYS)
    h = (np.asarray(w1, np.float32).T @ P.reshape(9, -1)).reshape(FILTERS, B, ho * wo)
    h += np.asarray(b1, np.float32)[:, None, None]
    np.maximum(h, 0.0, out=h)
    # Row (position, filter) of w2, as one (positions, actions) block per filter.
    w2f = np.ascontiguousarray(np.asarray(w2, np.float32).reshape(ho * wo, FILTERS, -1)
                               .transpose(1, 0, 2))
    z = np.zeros((B, w2f.shape[2]), np.float32)
    for f in range(FILTERS):
        z += h[f] @ w2f[f]
    z += np.asarray(b2, np.float32)
    return z[0] if single else z


def net_logits(params: dict, obs, threads: int = 1) -> np.ndarray:
    """Logits (B, n_actions) of a batch of observations (B, H, W), float64: the same values
    as :func:`logits`, by :func:`decoders.deep_eas_net.forward` (``threads`` at most)."""
    from decoders.deep_eas_net import forward

    return forward(*(params[k] for k in PARAM_KEYS), obs, threads=threads)


def net_gradient(params: dict, obs, gz, threads: int = 1) -> dict:
    """The gradient of ``sum_s gz[s] . logits(obs[s])`` by each parameter (float64 arrays
    keyed like ``params``; ReLU's derivative at 0 is 0), by
    :func:`decoders.deep_eas_net.gradient`."""
    from decoders.deep_eas_net import gradient

    return gradient(*(params[k] for k in PARAM_KEYS), obs, gz, threads=threads)


def _softmax(z):
    z = z - z.max()
    p = np.exp(z)
    return p / p.sum()


def act(params: dict, obs, rng) -> int:
    """Sample an action from the policy."""
    p = _softmax(logits(params, obs).astype(np.float64))
    if not np.isfinite(p).all():
        raise ValueError("the policy's action probabilities are not finite (its weights "
                         "overflow the network)")
    return int(rng.choice(p.size, p=p))


def greedy(params: dict, obs) -> int:
    """The most probable action."""
    return int(np.argmax(logits(params, obs)))


def policy_scheduler(params: dict, sample: bool = True, seed: int = 0, mask: bool = False):
    """A scheduler (``scheduler(env) -> action``) of the policy: sampling its actions from
    ``default_rng(seed)`` (default, as it was trained), or greedy (the most probable action,
    which can wait forever in a state where it prefers an action that cannot be taken).

    With ``mask``, the choice is among the actions the environment can carry out
    (:meth:`~moga.rl.env.DeepEASEnv.action_mask`): the others get probability 0 and the
    rest keep their proportions.
    """
    rng = np.random.default_rng(seed)

    def choose(env):
        obs = env._obs()
        if not mask:
            return act(params, obs, rng) if sample else greedy(params, obs)
        z = logits(params, obs).astype(np.float64)
        z = np.where(env.action_mask(), z, -np.inf)
        if not sample:
            return int(np.argmax(z))
        p = _softmax(z)
        return int(rng.choice(p.size, p=p))

    return choose


def save_params(params: dict, path, **meta) -> Path:
    """Write the parameters (and scalar metadata) to ``path`` (.npz), atomically."""
    from ..outputs import atomic_path

    path = Path(path)
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, **params, **{f"meta_{k}": np.asarray(v) for k, v in meta.items()})
    return path


#: The policy's arrays, in order.
PARAM_KEYS = ("w1", "b1", "w2", "b2")


def param_shapes(cfg: ClusterConfig) -> dict:
    """The shape of each parameter array for ``cfg``'s observation and actions."""
    ho, wo = conv_shape(cfg)
    return {"w1": (9, FILTERS), "b1": (FILTERS,), "w2": (ho * wo * FILTERS, cfg.n_actions),
            "b2": (cfg.n_actions,)}


#: The largest weight magnitude a policy may hold (trained weights are far below it).
MAX_WEIGHT = 1e6


def check_params(params: dict, cfg: ClusterConfig | None = None, source: str = "params") -> dict:
    """Refuse parameters of the wrong keys, shapes (against ``cfg``) or non-finite values.

    Returns the arrays as float32. The error names ``source`` (a file name).
    """
    from ..errors import InputError

    cfg = cfg or ClusterConfig()
    missing = [k for k in PARAM_KEYS if k not in params]
    if missing:
        raise InputError(f"{source}: not a Deep-EAS policy: missing array(s) {missing}")
    out = {}
    for k, shape in param_shapes(cfg).items():
        a = np.asarray(params[k])
        if a.dtype.kind not in "iuf":
            raise InputError(f"{source}: {k} must hold numbers, got dtype {a.dtype}")
        if a.shape != shape:
            raise InputError(f"{source}: {k} has shape {a.shape}; the cluster (K={cfg.K}, "
                             f"N={cfg.N}, Q={cfg.Q}, H={cfg.H}, B={cfg.B}) needs {shape}")
        if not np.all(np.isfinite(a)):
            raise InputError(f"{source}: {k} holds non-finite values")
        if a.size and np.abs(a).max() > MAX_WEIGHT:
            raise InputError(f"{source}: {k} holds weights up to {np.abs(a).max():.3g}, above "
                             f"{MAX_WEIGHT:g}: the network's outputs would overflow")
        out[k] = a.astype(np.float32)
    return out


def load_params(path, config: ClusterConfig | None = None) -> tuple[dict, dict]:
    """``(params, meta)`` from a file written by :func:`save_params`.

    Raises
    ------
    InputError
        Naming the file, if it cannot be read as an npz archive, lacks an array,
        or holds arrays of the wrong shape for ``config`` (default: the paper's
        cluster) or non-finite values.
    """
    from ..validation import read_npz

    path = Path(path)
    z = read_npz(path, "policy")
    raw = {k: v for k, v in z.items() if k in PARAM_KEYS}
    meta = {k[5:]: v.item() if v.ndim == 0 else v for k, v in z.items() if k.startswith("meta_")}
    return check_params(raw, config, source=str(path)), meta


def shipped_policy() -> tuple[dict, dict]:
    """The policy trained by ``moga rl train`` with the defaults, shipped with moga."""
    with resources.as_file(resources.files("moga.data").joinpath("deep_eas_policy.npz")) as p:
        return load_params(p)
