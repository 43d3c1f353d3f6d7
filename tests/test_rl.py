"""Deep-EAS (docs/design.md §13): the environment against a plain-Python twin, its API
(Gymnasium's checker), the observation, the schedulers, the policy and training."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given
from hypothesis import strategies as st
from naive import naive_deepeas_esjf

from moga.errors import InputError
from moga.rl import (
    ENV_ID,
    ClusterConfig,
    DeepEASEnv,
    JobSequence,
    draw_jobs,
    esjf,
    greedy_energy,
    mean_edp,
    random_scheduler,
    run_episode,
    shipped_policy,
    sjf,
    sjf_least_edp,
)
from moga.rl.policy import init_params, logits, policy_scheduler


def test_gymnasium_checker_and_registration():
    env = gym.make(ENV_ID)
    check_env(env.unwrapped)
    obs, _ = env.reset(seed=3)
    assert obs.shape == (30, 224) and env.action_space.n == 21


@given(seed=st.integers(0, 2**32 - 1), lam=st.sampled_from([0.2, 0.6, 1.0]),
       beta=st.sampled_from([0.0, 0.5, 1.0]))
def test_esjf_episodes_equal_the_plain_twin(seed, lam, beta):
    cfg = ClusterConfig(lam=lam, beta=beta, t_arrive=25)
    jobs = draw_jobs(cfg, seed)
    env = DeepEASEnv(cfg, jobs)
    env.reset()
    total = 0.0
    done = env.done
    while not done:
        _, r, term, trunc, _ = env.step(esjf(env))
        total += r
        done = term or trunc
    m, s, f, edp = naive_deepeas_esjf(jobs.arrival.tolist(), jobs.n.tolist(), jobs.mu.tolist(),
                                      jobs.d.tolist(), cfg.N, cfg.K, cfg.energy, cfg.Q, cfg.B)
    assert env.machine.tolist() == m and env.start.tolist() == s and env.finish.tolist() == f
    np.testing.assert_allclose(env.edp(), edp, rtol=1e-12)
    # The per-step rewards add up to minus the jobs' energy-delay products.
    assert total == pytest.approx(-sum(edp), rel=1e-9)


def _hand_state():
    # Two jobs queued at t = 0: job 0 wide and long, job 1 narrow and short.
    jobs = JobSequence(np.array([0, 0]), np.array([8, 2]), np.array([[12.0, 24.0], [2.0, 4.0]]),
                       np.array([[12, 24], [2, 4]]))
    env = DeepEASEnv(ClusterConfig(), jobs)
    env.reset()
    return env


def test_esjf_picks_the_least_edp_pair_on_a_hand_made_state():
    env = _hand_state()
    # Job 1 on machine 1: 2 * 1 * 4/2 * 4/2 = 8 beats every other pair (job 0 there: 32).
    assert esjf(env) == 1 * 2 + 1
    env.step(3)
    assert esjf(env) == 0 * 2 + 1  # job 0 (now slot 0) still fits machine 1 (8 of 8 free)
    env.step(1)
    assert esjf(env) == 20  # machine 1 is full and job 0 has gone: nothing left, wait
    assert sjf(_hand_state()) == 2  # shortest job (slot 1) on the faster machine
    assert greedy_energy(_hand_state()) == 1  # first come, least energy machine


def test_esjf_breaks_an_exact_tie_by_the_lower_slot():
    # The fidelity review's instance (c = inf, d = mu): at t = 4 jobs 2 and 3 both fit only
    # machine 0 and tie exactly at 6 * 9.809 = 58.854; job 2 holds the lower slot.
    mu = np.array([[3.0, 6.0], [15.0, 30.0], [12.0, 24.0], [10.0, 20.0]])
    jobs = JobSequence(np.array([0, 3, 4, 4]), np.array([10, 4, 6, 6]), mu, mu.astype(int))
    env = DeepEASEnv(ClusterConfig(), jobs)
    env.reset()
    while not env.done:
        env.step(esjf(env))
    assert env.start.tolist()[:3] == [0, 3, 4] and env.start[3] > 4
    m, start, finish, edp = naive_deepeas_esjf(jobs.arrival.tolist(), jobs.n.tolist(),
                                               mu.tolist(), mu.astype(int).tolist(), 10, 2,
                                               (9.809, 1.0), 10, 90)
    assert start == env.start.tolist()


def test_sjf_least_edp_takes_the_shortest_job_to_its_least_edp_machine():
    env = _hand_state()
    # Job 1 is the shortest; on machine 1 its EDP is 8, on machine 0 2 * 9.809 = 19.6.
    assert sjf_least_edp(env) == 1 * 2 + 1


def test_masked_actions():
    env = _hand_state()
    mask = env.action_mask()
    assert mask.shape == (env.cfg.n_actions,) and mask[-1]
    assert [a for a in np.flatnonzero(mask)] == [0, 1, 2, 3, 20]
    masked = DeepEASEnv(ClusterConfig(), env.jobs, mask=True)
    masked.reset()
    with pytest.raises(InputError, match="action 5 cannot be carried out"):
        masked.step(5)
    params, _ = shipped_policy()
    choose = policy_scheduler(params, seed=0, mask=True)
    for _ in range(20):
        assert masked.action_mask()[choose(masked)]


def test_observation_layout():
    env = _hand_state()
    obs = env._obs()
    c = env.cfg
    assert obs[:, : c.K * c.N].sum() == 0  # nothing runs
    slot0_m1 = obs[:, 20 + 1 * c.N: 20 + 2 * c.N]  # job 0 on machine 1: 8 wide, 24 long
    assert slot0_m1.sum() == 8 * 24 and slot0_m1[:24, :8].all()
    env.step(1)  # job 0 starts on machine 1
    assert obs is not env._obs() and env._obs()[:24, c.N: c.N + 8].all()
    assert env._obs()[:, c.N + 8: 2 * c.N].sum() == 0


def test_episodes_are_seeded():
    cfg = ClusterConfig(lam=0.5)
    a, b = draw_jobs(cfg, 7), draw_jobs(cfg, 7)
    np.testing.assert_array_equal(a.d, b.d)
    e1 = mean_edp(random_scheduler(2), cfg, 3, seed=4)
    e2 = mean_edp(random_scheduler(2), cfg, 3, seed=4)
    assert e1 == e2


def test_config_and_action_errors():
    with pytest.raises(ValueError, match=r"lam must be (in|> 0)"):
        ClusterConfig(lam=0.0)
    with pytest.raises(ValueError, match="L .* must hold"):
        ClusterConfig(L=20)
    env = _hand_state()
    with pytest.raises(ValueError, match="action must be in"):
        env.step(21)


def test_shipped_policy_runs_without_training_libraries():
    params, meta = shipped_policy()
    assert params["w2"].shape[1] == 21 and meta["lam"] == 0.7
    jobs = draw_jobs(ClusterConfig(), 11)
    edp = run_episode(policy_scheduler(params), jobs)
    assert np.isfinite(edp).all()


# ------------------------------------------------------------ training (rl extra)
def _random_net(rng, H, W, A, zero_bias=False):
    ho, wo = (H - 3) // 2 + 1, (W - 3) // 2 + 1
    p = {"w1": rng.normal(size=(9, 8)), "b1": rng.normal(size=8),
         "w2": rng.normal(size=(ho * wo * 8, A)), "b2": rng.normal(size=A)}
    if zero_bias:
        p["b1"][::3] = 0.0   # ReLU exactly at 0 on empty patches
        p["w1"][:, 1] = -np.abs(p["w1"][:, 1]) - p["b1"][1]   # and off on occupied ones
    return {k: v.astype(np.float32) for k, v in p.items()}


@pytest.mark.parametrize("seed", range(6))
def test_network_kernels_match_the_plain_twin(seed, monkeypatch):
    # decoders.deep_eas_net (empty patches skipped, samples split over threads) against
    # tests/naive.py's one-position-at-a-time network: logits and every gradient.
    from naive import naive_net

    from decoders import deep_eas_net
    from moga.rl.policy import net_gradient, net_logits

    monkeypatch.setattr(deep_eas_net, "THREAD_MIN_SAMPLES", 2)
    rng = np.random.default_rng(seed)
    H, W, A, B = int(rng.integers(3, 9)), int(rng.integers(3, 14)), int(rng.integers(2, 7)), 7
    p = _random_net(rng, H, W, A, zero_bias=seed % 2 == 0)
    fill = [0.0, 0.05, 0.3, 1.0, 0.5, 0.15][seed]
    obs = (rng.random((B, H, W)) < fill).astype(np.uint8)
    gz = rng.normal(size=(B, A))
    z_twin, g_twin = naive_net(p["w1"], p["b1"], p["w2"], p["b2"], obs.tolist(), gz.tolist())
    for threads in (1, 3):
        np.testing.assert_allclose(net_logits(p, obs, threads=threads), z_twin, rtol=1e-9,
                                   atol=1e-9)
        g = net_gradient(p, obs, gz, threads=threads)
        for k, want in zip(("w1", "b1", "w2", "b2"), g_twin, strict=True):
            np.testing.assert_allclose(g[k], np.asarray(want).reshape(p[k].shape), rtol=1e-9,
                                       atol=1e-9, err_msg=k)
    np.testing.assert_allclose(logits(p, obs), z_twin, rtol=1e-4, atol=1e-4)


def test_network_gradient_matches_jax_autodiff():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    from moga.rl.policy import _patches, net_gradient

    cfg = ClusterConfig()
    rng = np.random.default_rng(3)
    p = _random_net(rng, cfg.H, cfg.width, cfg.n_actions)
    obs = (rng.random((40, cfg.H, cfg.width)) < 0.15).astype(np.uint8)
    gz = rng.normal(size=(40, cfg.n_actions)).astype(np.float32)

    def total(q):
        h = jax.nn.relu(_patches(jnp.asarray(obs, jnp.float32), jnp) @ q["w1"] + q["b1"])
        return jnp.sum((h.reshape(40, -1) @ q["w2"] + q["b2"]) * gz)

    want = jax.grad(total)({k: jnp.asarray(v) for k, v in p.items()})
    got = net_gradient(p, obs, gz)
    for k in p:
        np.testing.assert_allclose(got[k], np.asarray(want[k]), rtol=2e-3, atol=2e-3 *
                                   float(np.abs(np.asarray(want[k])).max()), err_msg=k)


def test_network_kernels_refuse_mismatched_shapes():
    from moga.rl.policy import net_gradient, net_logits

    cfg = ClusterConfig()
    p = init_params(cfg, 0)
    with pytest.raises(ValueError, match="do not fit"):
        net_logits(p, np.zeros((2, cfg.H - 2, cfg.width), np.uint8))
    with pytest.raises(ValueError, match="images must be"):
        net_logits(p, np.zeros((cfg.H, cfg.width), np.uint8))
    with pytest.raises(ValueError, match="gz must have shape"):
        net_gradient(p, np.zeros((2, cfg.H, cfg.width), np.uint8), np.zeros((3, 21)))


SMALL = ClusterConfig(N=5, Q=3, B=6, H=10, lam=0.6, t_arrive=15)


@pytest.mark.rl
def test_training_improves_on_the_random_initial_policy(tmp_path):
    pytest.importorskip("jax")
    from moga.rl.train import TrainConfig, train

    tc = TrainConfig(iterations=12, sequences=3, trajectories=4, lr=3e-3, seed=5)
    res = train(SMALL, tc, out=tmp_path / "a", progress=False)
    held_out = [draw_jobs(SMALL, s) for s in range(100, 112)]
    before = mean_edp(policy_scheduler(init_params(SMALL, tc.seed), sample=True, seed=9), SMALL,
                      sequences=held_out)
    after = mean_edp(policy_scheduler(res.params, sample=True, seed=9), SMALL,
                     sequences=held_out)
    assert after < before


@pytest.mark.rl
def test_training_resumes_exactly(tmp_path):
    pytest.importorskip("jax")
    from moga.rl.train import TrainConfig, train

    tc = TrainConfig(iterations=2, sequences=2, trajectories=2, seed=1, checkpoint_every=1)
    whole = train(SMALL, tc, out=tmp_path / "w", progress=False)
    train(SMALL, TrainConfig(iterations=1, sequences=2, trajectories=2, seed=1),
          out=tmp_path / "r", progress=False)
    resumed = train(SMALL, tc, out=tmp_path / "r", progress=False)  # one more iteration
    with pytest.raises(ValueError, match="other settings"):
        train(SMALL, TrainConfig(iterations=3, sequences=2, trajectories=2, seed=2),
              out=tmp_path / "r", progress=False)
    for k in whole.params:
        np.testing.assert_array_equal(whole.params[k], resumed.params[k])
    assert len(resumed.history) == 2


@pytest.mark.parametrize("seed", range(6))
def test_batch_env_equals_the_gymnasium_environment(seed):
    # The lockstep kernels (decoders/deep_eas.py) against DeepEASEnv, step by step: images,
    # masks, rewards, terminations and the per-job EDPs, on random (often infeasible) actions.
    from moga.rl.batch import BatchEnv

    rng = np.random.default_rng(seed)
    cfg = ClusterConfig(lam=float(rng.choice([0.2, 0.7, 1.0])), B=int(rng.choice([0, 5, 90])),
                        Q=int(rng.choice([3, 10])), max_steps=int(rng.choice([40, 2000])))
    seqs = [draw_jobs(cfg, rng) for _ in range(3)] + [JobSequence(
        np.zeros(0, int), np.zeros(0, int), np.zeros((0, cfg.K)), np.zeros((0, cfg.K), int))]
    batch = BatchEnv(cfg, seqs)
    envs = [DeepEASEnv(cfg, s) for s in seqs]
    for e in envs:
        e.reset()
    active = batch.reset()
    assert active.tolist() == [i for i, e in enumerate(envs) if not e.done]
    while active.size:
        img, allowed = batch.observe(active), batch.action_masks(active)
        acts = rng.integers(0, cfg.n_actions, active.size)
        for a, i in enumerate(active):
            np.testing.assert_array_equal(img[a], envs[i]._obs())
            np.testing.assert_array_equal(allowed[a], envs[i].action_mask())
            if rng.random() < 0.5:
                acts[a] = rng.choice(np.flatnonzero(allowed[a]))
        r, term, trunc = batch.step(active, acts)
        for a, i in enumerate(active):
            _, r2, term2, trunc2, _ = envs[i].step(int(acts[a]))
            assert (r[a], term[a], trunc[a]) == (r2, term2, trunc2)
        active = active[~(term | trunc)]
    for i, e in enumerate(envs):
        np.testing.assert_array_equal(batch.edp(i), e.edp())


def test_batch_env_errors():
    from moga.rl.batch import BatchEnv

    with pytest.raises(ValueError, match="at least one"):
        BatchEnv(SMALL, [])
    b = BatchEnv(SMALL, [draw_jobs(SMALL, 0)])
    idx = b.reset()
    with pytest.raises(ValueError, match="actions must be in"):
        b.step(idx, [SMALL.n_actions])
    with pytest.raises(ValueError, match="one action per episode"):
        b.step(idx, [0, 0])


@pytest.mark.rl
def test_masked_training_samples_only_feasible_actions(monkeypatch):
    pytest.importorskip("jax")
    from moga.rl import batch
    from moga.rl import train as tr

    infeasible = []
    real = batch.BatchEnv.step

    def spy(self, idx, actions):
        ok = self.action_masks(idx)[np.arange(len(idx)), actions]
        infeasible.append(int((~ok).sum()))
        return real(self, idx, actions)

    monkeypatch.setattr(batch.BatchEnv, "step", spy)
    tc = dict(iterations=2, sequences=2, trajectories=2)
    tr.train(SMALL, tr.TrainConfig(**tc), progress=False)
    assert sum(infeasible) > 0          # the paper's setting samples infeasible actions
    infeasible.clear()
    res = tr.train(SMALL, tr.TrainConfig(**tc, mask=True), progress=False)
    assert sum(infeasible) == 0 and len(res.history) == 2
    with pytest.raises(ValueError, match="mask"):
        tr.TrainConfig(mask="yes")


def test_edp_interval_brackets_the_mean():
    from moga.rl.schedulers import edp_interval, edp_per_sequence

    seqs = [draw_jobs(SMALL, s) for s in range(8)]
    sc = edp_per_sequence(sjf, seqs, SMALL)
    assert sc.shape == (8, 2) and np.all(sc[:, 1] == [len(s) for s in seqs])
    mean = sc[:, 0].sum() / sc[:, 1].sum()
    assert mean == pytest.approx(mean_edp(sjf, SMALL, sequences=seqs))
    lo, hi = edp_interval(sc)
    assert lo < mean < hi
    assert edp_interval(np.array([[4.0, 2.0]] * 5)) == pytest.approx((2.0, 2.0))
    assert np.isnan(edp_interval(sc[:1])[0])


def test_training_sequences_across_arrival_rates():
    pytest.importorskip("jax")
    from moga.rl.train import TrainConfig, training_sequences

    tc = TrainConfig(sequences=6, lams=(0.1, 1.0), seed=3)
    seqs = training_sequences(SMALL, tc)
    # Sequence i at lams[i % 2]: at lambda 1 a job arrives every step until t_arrive.
    assert all(len(s) == SMALL.t_arrive for s in seqs[1::2])
    assert np.mean([len(s) for s in seqs[0::2]]) < SMALL.t_arrive / 2
    assert len(training_sequences(SMALL, TrainConfig(sequences=4))) == 4
    for bad in ((), (0.0,), "x"):
        with pytest.raises(ValueError, match="lams"):
            TrainConfig(lams=bad)
