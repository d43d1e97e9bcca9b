"""PPO must make a tiny model better at the learnable built-in task, against its own untrained start."""

from stable_baselines3 import PPO
from stable_baselines3.common.env_util import make_vec_env

from sb3_lm_policy import LMActorCriticPolicy
from sb3_lm_policy.evaluation import evaluate_text_policy
from tests.conftest import tiny_gpt2_config


def test_ppo_raises_the_copy_reward_of_a_tiny_gpt2_from_scratch(char_tokenizer):
    env_kwargs = dict(task="copy", tokenizer=char_tokenizer, reward_mode="step")
    env = make_vec_env("TextGeneration-v0", n_envs=8, seed=0, env_kwargs=env_kwargs)
    eval_env = make_vec_env("TextGeneration-v0", n_envs=8, seed=123, env_kwargs=env_kwargs)
    config = tiny_gpt2_config(len(char_tokenizer), n_embd=64, n_positions=32)
    model = PPO(
        LMActorCriticPolicy,
        env,
        n_steps=64,
        batch_size=128,
        n_epochs=4,
        learning_rate=1e-3,
        ent_coef=0.0,
        gamma=1.0,
        policy_kwargs={"model_config": config},
        seed=0,
    )

    before = evaluate_text_policy(model, eval_env, n_episodes=64, deterministic=False, seed=123)
    model.learn(16_384)
    after = evaluate_text_policy(model, eval_env, n_episodes=64, deterministic=False, seed=123)

    print(
        f"copy task, mean chrF reward over 64 episodes: untrained {before['mean_reward']:.3f}, "
        f"after PPO {after['mean_reward']:.3f}"
    )
    # measured here: 0.026 before, 0.10 to 0.14 after depending on the machine's thread scheduling
    assert after["mean_reward"] > before["mean_reward"] + 0.05
    assert after["mean_reward"] > 2 * before["mean_reward"]
