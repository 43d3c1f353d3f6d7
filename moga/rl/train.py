"""Training Deep-EAS with REINFORCE (docs/design.md §13). Needs the ``rl`` extra (JAX, optax).

Each iteration runs ``trajectories`` episodes of each of ``sequences`` fixed
training job sequences with the current policy (actions sampled), in blocks
of episodes stepped in lockstep (:class:`moga.rl.batch.BatchEnv`, one
batched forward pass per tick), computes
each step's return ``v_t`` (undiscounted), subtracts the per-time-step
baseline ``b_t`` (the mean of ``v_t`` over the trajectories of the same
sequence, shorter ones counting 0 past their end), and takes one Adam step on
``-sum log pi(a_t | s_t) (v_t - b_t) / steps``. The paper's budget is 1,000
iterations x 150 sequences x 20 trajectories; the defaults here are far
smaller (see :class:`TrainConfig`). Every random draw flows from ``seed``:
iteration i samples with ``default_rng([seed, i])``, so a resumed run
continues exactly as an uninterrupted one.

The forward pass and the gradient are the Numba kernels of
:mod:`decoders.deep_eas_net`, which skip the images' empty patches; the
gradient takes the logits recorded during the episodes. Adam is optax's.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from numba import get_num_threads

from ..errors import InputError, MissingExtraError
from ..outputs import atomic_path, atomic_write
from .cluster import ClusterConfig, draw_jobs
from .policy import PARAM_KEYS, check_params, init_params, net_gradient, net_logits

__all__ = ["TrainConfig", "TrainResult", "train", "training_sequences", "PAPER_BUDGET",
           "CHECKPOINT",
           "read_checkpoint", "write_checkpoint"]

#: The file in a training folder that a run resumes from (parameters, optimizer state,
#: settings and history, with a digest over all of them).
CHECKPOINT = "checkpoint.npz"

#: The paper's training budget: iterations, sequences, trajectories per sequence.
PAPER_BUDGET = (1000, 150, 20)


@dataclass(frozen=True)
class TrainConfig:
    """Training budget and hyper-parameters.

    ``iterations`` x ``sequences`` x ``trajectories`` episodes in all
    (defaults 60 x 12 x 6, 694x fewer than the paper's 1000 x 150 x 20);
    ``lr`` Adam's learning rate (the paper's 0.001); ``seed``; a checkpoint
    every ``checkpoint_every`` iterations. ``mask``: sample only actions the
    environment can carry out (their probabilities renormalised, in the
    rollouts and in the gradient); False is the paper's setting, where an
    infeasible action ends the time step as "wait" does. ``lams``: train one
    policy across these arrival rates, training sequence ``i`` drawn at
    ``lams[i % len(lams)]`` (None: all at the configuration's own rate).
    """

    iterations: int = 60
    sequences: int = 12
    trajectories: int = 6
    lr: float = 1e-3
    seed: int = 0
    checkpoint_every: int = 5
    mask: bool = False
    lams: tuple | None = None

    def __post_init__(self):
        if not isinstance(self.mask, bool):
            raise ValueError(f"mask must be True or False, got {self.mask!r}")
        if self.lams is not None:
            try:
                lams = tuple(float(x) for x in self.lams)
            except (TypeError, ValueError):
                raise ValueError(f"lams must be a sequence of arrival rates, got "
                                 f"{self.lams!r}") from None
            if not lams or any(not 0 < x <= 1 for x in lams):
                raise ValueError(f"lams must be arrival rates in (0, 1], got {self.lams!r}")
            object.__setattr__(self, "lams", lams)
        for f in ("iterations", "sequences", "trajectories", "checkpoint_every"):
            v = getattr(self, f)
            if int(v) != v or v < 1:
                raise ValueError(f"{f} must be a positive integer, got {v}")
        if self.trajectories < 2:
            raise ValueError("the per-step baseline needs at least 2 trajectories per sequence")
        if not self.lr > 0:
            raise ValueError(f"lr must be > 0, got {self.lr}")

    @property
    def episodes(self) -> int:
        return self.iterations * self.sequences * self.trajectories

    def fraction_of_paper(self) -> float:
        it, s, m = PAPER_BUDGET
        return self.episodes / (it * s * m)


@dataclass(frozen=True, eq=False)
class TrainResult:
    """``params``; ``history`` (per iteration: ``iteration``, ``mean_edp`` of the sampled
    training episodes, ``seconds``, of which ``rollout_seconds`` ran the episodes, and
    ``samples``, the decisions the gradient covers); ``config`` and ``train`` settings."""

    params: dict
    history: list
    config: ClusterConfig
    train: TrainConfig


def _digest(arrays: dict, state_json: str) -> str:
    h = hashlib.sha256(state_json.encode())
    for k in sorted(arrays):
        a = np.ascontiguousarray(arrays[k])
        h.update(f"{k}:{a.dtype.str}:{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def write_checkpoint(path, params: dict, opt_leaves: list, state: dict) -> None:
    """Write one training checkpoint atomically: parameters, optimizer leaves, ``state``
    (settings, history, iteration) as JSON, and a SHA-256 digest over all of them."""
    arrays = {**{f"p_{k}": np.asarray(params[k]) for k in PARAM_KEYS},
              **{f"opt_{i}": np.asarray(x) for i, x in enumerate(opt_leaves)}}
    state_json = json.dumps(state, sort_keys=True)
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, **arrays, state=np.asarray(state_json),
                 digest=np.asarray(_digest(arrays, state_json)))


def read_checkpoint(path, cfg: ClusterConfig, n_opt: int):
    """``(params, optimizer leaves, state)`` of a checkpoint written by :func:`write_checkpoint`.

    Raises
    ------
    InputError
        Naming the file, if it is cut, damaged, of another layout, or its
        digest does not match its content.
    """
    import zipfile

    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            files = set(z.files)
            need = {f"p_{k}" for k in PARAM_KEYS} | {f"opt_{i}" for i in range(n_opt)} | \
                {"state", "digest"}
            if not need <= files:
                raise InputError(f"{path}: not a training checkpoint of this layout (missing "
                                 f"{sorted(need - files)[:4]}); start afresh with resume=False "
                                 "(--no-resume) or use another folder")
            arrays = {k: z[k] for k in need - {"state", "digest"}}
            state_json = str(z["state"].item())
            digest = str(z["digest"].item())
    except InputError:
        raise
    except (OSError, EOFError, zipfile.BadZipFile, ValueError, KeyError) as e:
        raise InputError(f"{path}: damaged training checkpoint ({type(e).__name__}: {e}); start "
                         "afresh with resume=False (--no-resume) or use another folder") from None
    if _digest(arrays, state_json) != digest:
        raise InputError(f"{path}: damaged training checkpoint (its digest does not match its "
                         "content); start afresh with resume=False (--no-resume)")
    state = json.loads(state_json)
    params = check_params({k: arrays[f"p_{k}"] for k in PARAM_KEYS}, cfg, source=str(path))
    return params, [arrays[f"opt_{i}"] for i in range(n_opt)], state


def _diff(old, new, prefix=""):
    """The settings that differ, as ``key: old -> new``."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for k in sorted(set(old) | set(new)):
            out += _diff(old.get(k), new.get(k), f"{prefix}{k}.")
        return out
    return [] if old == new else [f"{prefix.rstrip('.')}: {old!r} in the folder, {new!r} now"]


#: Episodes stepped in lockstep at once (a block of sequences x trajectories): large enough
#: for one batched forward pass to pay, small enough to keep a block's images in memory.
BLOCK_EPISODES = 400
def _softmax_rows(z):
    z = z - z.max(axis=1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(axis=1, keepdims=True)


def _sample(p, rng):
    """One action per row of probabilities ``p``, by inverse transform of ``rng.random``."""
    cdf = np.cumsum(p, axis=1)
    cdf /= cdf[:, -1:]
    u = rng.random(p.shape[0])
    return np.minimum((cdf <= u[:, None]).sum(axis=1), p.shape[1] - 1).astype(np.int64)


def _rollouts(forward, cfg, sequences, trajectories, rng, mask):
    """Run ``trajectories`` sampled episodes of each sequence in lockstep (``forward(obs)``
    gives the policy's logits of a batch); returns the samples ``(obs, logits, actions,
    episode, step, reward)``, the logits ``-inf`` where masked, and each episode's per-job
    EDPs."""
    from .batch import BatchEnv

    episodes = [s for s in sequences for _ in range(trajectories)]
    env = BatchEnv(cfg, episodes)
    active = env.reset()
    seen = np.zeros(len(episodes), np.int64)   # steps taken per episode
    O, Z, A, Ep, St, R = [], [], [], [], [], []
    while active.size:
        obs = env.observe(active)
        z = forward(obs)
        if mask:
            z = np.where(env.action_masks(active), z, -np.inf)
        a = _sample(_softmax_rows(z), rng)
        r, term, trunc = env.step(active, a)
        O.append(obs)
        Z.append(z)
        A.append(a)
        Ep.append(active)
        St.append(seen[active])
        R.append(r)
        seen[active] += 1
        active = active[~(term | trunc)]

    def cat(xs, shape, dt):
        return np.concatenate(xs) if xs else np.zeros(shape, dt)

    return (cat(O, (0, cfg.H, cfg.width), np.uint8), cat(Z, (0, cfg.n_actions), np.float64),
            cat(A, (0,), np.int64), cat(Ep, (0,), np.int64), cat(St, (0,), np.int64),
            cat(R, (0,), np.float64), [env.edp(i) for i in range(len(episodes))])


def _logit_gradient(z, acts, adv):
    """The loss ``-sum adv log softmax(z)[act]``'s derivative by the logits ``z`` (rows
    ``-inf`` where masked get 0 there)."""
    g = _softmax_rows(z)
    g[np.arange(acts.size), acts] -= 1.0
    g *= adv[:, None]
    return g


def _advantages(reward, ep, step, n_episodes, trajectories):
    """Each sample's return minus the per-step baseline of its sequence (the mean return
    at that step over the sequence's trajectories, shorter ones counting 0)."""
    T = int(step.max()) + 1 if step.size else 0
    v = np.zeros((n_episodes, T))
    v[ep, step] = reward
    v = np.cumsum(v[:, ::-1], axis=1)[:, ::-1]   # the return from each step on
    base = v.reshape(-1, trajectories, T).mean(axis=1)
    return v[ep, step] - base[ep // trajectories, step]


def training_sequences(config: ClusterConfig, tc: TrainConfig) -> list:
    """The fixed job sequences that :func:`train` trains on (drawn from ``tc.seed``; at the
    rates of ``tc.lams`` in turn, when given)."""
    rng = np.random.default_rng([tc.seed, 10**6])
    if tc.lams is None:
        return [draw_jobs(config, rng) for _ in range(tc.sequences)]
    cfgs = [ClusterConfig(**{**asdict(config), "lam": lam}) for lam in tc.lams]
    return [draw_jobs(cfgs[i % len(cfgs)], rng) for i in range(tc.sequences)]


def train(config: ClusterConfig | None = None, tc: TrainConfig | None = None, out=None,
          resume: bool = True, progress: bool = True, init=None) -> TrainResult:
    """Train a policy; with ``out`` (a folder) keep ``checkpoint.npz`` there (parameters,
    optimizer state, settings and history in one file, written atomically with a digest) and
    ``history.json`` (for reading), and resume from the checkpoint when ``resume`` (a run may
    be resumed with more iterations; other settings must match, and a damaged checkpoint is
    an error naming it).

    Parameters
    ----------
    config : ClusterConfig, optional
        The training environment (default: the paper's, lambda 0.7, beta 0.5).
    tc : TrainConfig, optional
    out : str or Path, optional
    resume : bool
    progress : bool
        A progress bar on stderr.
    init : dict, optional
        Starting parameters (default: :func:`init_params` with the seed).
    """
    try:
        import jax
        import jax.numpy as jnp
        import optax
    except ImportError as e:  # pragma: no cover - exercised without the extra
        raise MissingExtraError("training", "rl", f"JAX and optax; {e}") from None
    from ..progress import Progress

    cfg = config or ClusterConfig()
    tc = tc or TrainConfig()
    out = Path(out) if out is not None else None
    params = init if init is not None else init_params(cfg, tc.seed)
    opt = optax.adam(tc.lr)
    state = opt.init({k: jnp.asarray(v) for k, v in params.items()})
    history: list = []
    start_it = 0
    # What a resumed run must share (more iterations, or other checkpoint spacing, may differ).
    # (``mask`` and ``lams`` only when set, so that runs from before them still resume.)
    settings = {"config": asdict(cfg), "train": {
        k: v for k, v in asdict(tc).items()
        if k not in ("iterations", "checkpoint_every")
        and not (k == "mask" and not v) and not (k == "lams" and v is None)}}
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        ck = out / CHECKPOINT
        if resume and ck.exists():
            leaves, tree = jax.tree_util.tree_flatten(state)
            params, opt_leaves, saved = read_checkpoint(ck, cfg, n_opt=len(leaves))
            if saved["settings"] != json.loads(json.dumps(settings)):
                diffs = _diff(saved["settings"], json.loads(json.dumps(settings)))
                raise InputError(f"{ck}: holds a run with other settings ({'; '.join(diffs)}); "
                                 "use another folder, or start afresh with resume=False "
                                 "(--no-resume)")
            history = saved["history"]
            start_it = int(saved["iteration"])
            if start_it > tc.iterations:
                raise InputError(f"{ck}: {start_it} iterations are trained already, more than "
                                 f"the {tc.iterations} asked; ask for at least {start_it}, or "
                                 "start afresh with resume=False (--no-resume)")
            state = jax.tree_util.tree_unflatten(tree, [jnp.asarray(x) for x in opt_leaves])
        elif resume and ((out / "optimizer.npz").exists() or (out / "history.json").exists()):
            raise InputError(f"{out}: holds a training run without {CHECKPOINT} (an older "
                             "layout or a damaged run); use another folder, or start afresh "
                             "with resume=False (--no-resume)")

    sequences = training_sequences(cfg, tc)

    threads = get_num_threads()

    def forward(p_np):
        return lambda obs: net_logits(p_np, obs, threads=threads)

    block = max(1, BLOCK_EPISODES // tc.trajectories)
    bar = Progress(tc.iterations - start_it, enabled=progress)
    for it in range(start_it, tc.iterations):
        t0 = time.perf_counter()
        rng = np.random.default_rng([tc.seed, it])
        grads = {k: np.zeros(v.shape) for k, v in params.items()}
        edps = []
        total = 0
        t_roll = 0.0
        for b0 in range(0, len(sequences), block):
            t1 = time.perf_counter()
            obs, z, acts, ep, step, rewards, block_edps = _rollouts(
                forward(params), cfg, sequences[b0:b0 + block], tc.trajectories, rng, tc.mask)
            t_roll += time.perf_counter() - t1
            edps += block_edps
            total += acts.size
            adv = _advantages(rewards, ep, step, len(block_edps), tc.trajectories)
            g = net_gradient(params, obs, _logit_gradient(z, acts, adv), threads=threads)
            for k in grads:
                grads[k] += g[k]
        scale = 1.0 / max(total, 1)
        p_jx = {k: jnp.asarray(v) for k, v in params.items()}
        grads = {k: jnp.asarray((v * scale).astype(params[k].dtype)) for k, v in grads.items()}
        updates, state = opt.update(grads, state, p_jx)
        p_jx = optax.apply_updates(p_jx, updates)
        params = {k: np.asarray(v) for k, v in p_jx.items()}
        parts = [e for e in edps if e.size]
        allv = np.concatenate(parts) if parts else np.zeros(0)
        history.append({"iteration": it + 1, "mean_edp": float(np.nanmean(allv)),
                        "seconds": time.perf_counter() - t0, "rollout_seconds": t_roll,
                        "samples": total})
        bar.step(f"iteration {it + 1}: mean EDP {history[-1]['mean_edp']:.1f}")
        if out is not None and ((it + 1) % tc.checkpoint_every == 0 or it + 1 == tc.iterations):
            leaves, _ = jax.tree_util.tree_flatten(state)
            write_checkpoint(ck, params, [np.asarray(x) for x in leaves],
                             {"settings": settings, "history": history, "iteration": it + 1})
            atomic_write(out / "history.json", json.dumps({"settings": settings,
                                                           "history": history}, indent=1))
    bar.close()
    return TrainResult(params, history, cfg, tc)
