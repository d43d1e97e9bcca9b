import gymnasium as gym
import numpy as np
import pytest
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.env_util import make_vec_env

from sb3_lm_policy import LMActorCriticPolicy
from sb3_lm_policy.evaluation import distinct_n, evaluate_text_policy


def test_distinct_n():
    assert distinct_n(["a b a b", "a b"], 1) == pytest.approx(2 / 6)
    assert distinct_n(["a b c", "a b d"], 2) == pytest.approx(3 / 4)
    assert distinct_n([""], 2) == 0.0


def test_teacher_forced_log_probs_equal_the_per_step_ones(char_tokenizer, tiny_model_config):
    """One forward over an episode gives the log-probs that the per-token rollouts computed."""
    env = gym.make("TextGeneration-v0", task="copy", tokenizer=char_tokenizer, terminate_on_eos=False)
    model = PPO(LMActorCriticPolicy, env, policy_kwargs={"model_config": tiny_model_config}, seed=0)
    policy = model.policy
    obs, _ = env.reset(seed=0)
    step_log_probs = []
    for action in (5, 9, 12, 7):
        with torch.no_grad():
            logits, _ = policy.logits_and_values(policy.obs_to_tensor(obs)[0])
        step_log_probs.append(torch.log_softmax(logits, -1)[0, action].item())
        obs, *_ = env.step(action)
    with torch.no_grad():
        log_probs, mask = policy.generated_token_log_probs(policy.obs_to_tensor(obs)[0])
    assert mask[0].tolist() == [1, 1, 1, 1, 0, 0, 0, 0]
    np.testing.assert_allclose(log_probs[0, :4].numpy(), step_log_probs, atol=1e-5)
    assert log_probs[0, 4:].abs().sum() == 0


def test_evaluation_reports_generation_metrics(char_tokenizer, tiny_model_config):
    env = make_vec_env("TextGeneration-v0", n_envs=2, env_kwargs=dict(task="copy", tokenizer=char_tokenizer))
    model = PPO(LMActorCriticPolicy, env, policy_kwargs={"model_config": tiny_model_config}, seed=0)
    assert "reference_perplexity" not in evaluate_text_policy(model, env, 4, seed=0)
    model.policy.freeze_reference()
    result = evaluate_text_policy(model, env, 6, deterministic=False, seed=0, keep_all_samples=True)
    assert result["episodes"] == 6 and len(result["samples"]) == 6
    assert 1.0 <= result["mean_length"] <= 8.0
    assert 0.0 <= result["distinct_1"] <= 1.0 and 0.0 <= result["distinct_2"] <= 1.0
    # a random model over 49 tokens: perplexity of its own samples is near the vocabulary size
    assert 10 < result["reference_perplexity"] < 200
    assert set(result["reward_components"]) == {"chrf"}
