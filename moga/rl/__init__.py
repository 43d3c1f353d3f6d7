"""Energy-aware scheduling with deep reinforcement learning (Deep-EAS, docs/design.md §13):
the paper's cluster as a Gymnasium environment, ESJF and other schedulers, the policy
network, REINFORCE training (the ``rl`` extra: JAX, optax) and a shipped trained policy."""

from .cluster import ClusterConfig, JobSequence, draw_jobs
from .env import ENV_ID, DeepEASEnv, register
from .policy import init_params, load_params, policy_scheduler, save_params, shipped_policy
from .schedulers import (
    SCHEDULERS,
    esjf,
    greedy_energy,
    mean_edp,
    random_scheduler,
    run_episode,
    sjf,
    sjf_least_edp,
)

register()

__all__ = ["ClusterConfig", "JobSequence", "draw_jobs", "ENV_ID", "DeepEASEnv", "register",
           "init_params", "load_params", "policy_scheduler", "save_params", "shipped_policy",
           "SCHEDULERS", "esjf", "greedy_energy", "mean_edp", "random_scheduler", "run_episode",
           "sjf", "sjf_least_edp"]
