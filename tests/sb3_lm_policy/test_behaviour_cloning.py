import gymnasium as gym
import numpy as np
import pytest
import torch
from stable_baselines3 import PPO

from sb3_lm_policy import LMActorCriticPolicy
from sb3_lm_policy.behaviour_cloning import behaviour_cloning
from tests.conftest import EASY_COOKING, tiny_gpt2_config
from textenvs.textworld.demonstrations import collect_demonstrations


def expert_log_prob(policy, demos):
    obs = {key: torch.as_tensor(value) for key, value in demos.observations.items()}
    with torch.no_grad():
        return policy.get_distribution(obs).log_prob(torch.as_tensor(demos.actions)).mean().item()


@pytest.mark.parametrize("action_mode", ["choice", "token"])
def test_behaviour_cloning_raises_the_expert_actions_probability(textworld_tokenizer, action_mode):
    tokenizer = textworld_tokenizer
    env = gym.make("TextWorldCooking-v0", tokenizer=tokenizer, action_mode=action_mode, **EASY_COOKING)
    try:
        demos = collect_demonstrations(env, n_games=2)
        model = PPO(
            LMActorCriticPolicy,
            env,
            seed=0,
            policy_kwargs={"model_config": tiny_gpt2_config(len(tokenizer), n_positions=256)},
        )
        before = expert_log_prob(model.policy, demos)
        losses = behaviour_cloning(model.policy, demos.observations, demos.actions, epochs=3, learning_rate=3e-3)
        after = expert_log_prob(model.policy, demos)
    finally:
        env.close()
    assert losses[-1] < losses[0]
    assert after > before + 0.5, (before, after)


def test_behaviour_cloning_rejects_mismatched_data(char_tokenizer):
    env = gym.make("TextGeneration-v0", task="copy", tokenizer=char_tokenizer)
    model = PPO(LMActorCriticPolicy, env, policy_kwargs={"model_config": tiny_gpt2_config(len(char_tokenizer))})
    with pytest.raises(ValueError, match="no demonstrations"):
        behaviour_cloning(model.policy, {}, np.array([]))
    with pytest.raises(ValueError, match="observation keys"):
        behaviour_cloning(model.policy, {"x": np.zeros((1, 2))}, np.array([1]))
