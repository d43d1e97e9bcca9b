"""Choice mode: the policy scores TextWorld's candidate commands."""

import gymnasium as gym
import numpy as np
import pytest
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.env_util import make_vec_env

from sb3_lm_policy import LMActorCriticPolicy
from tests.conftest import EASY_COOKING, tiny_gpt2_config, tiny_t5_config
from textenvs.core.spaces import ACTION_MASK, CANDIDATE_IDS, CANDIDATE_MASK, PROMPT_IDS, PROMPT_MASK


@pytest.fixture(params=["gpt2", "t5"])
def model_config(request, textworld_tokenizer):
    builder = tiny_gpt2_config if request.param == "gpt2" else tiny_t5_config
    return builder(len(textworld_tokenizer), **({"n_positions": 256} if request.param == "gpt2" else {}))


def separate_scores(policy, obs):
    """Each valid candidate scored on its own: one plain forward over prompt + command."""
    prompt = obs[PROMPT_IDS][obs[PROMPT_MASK].astype(bool)].tolist()
    scores = {}
    for index in np.flatnonzero(obs[ACTION_MASK]):
        command = obs[CANDIDATE_IDS][index][obs[CANDIDATE_MASK][index].astype(bool)].tolist()
        with torch.no_grad():
            if policy.is_encoder_decoder:
                decoder = [policy.lm.config.decoder_start_token_id] + command[:-1]
                logits = policy.lm(input_ids=torch.tensor([prompt]), decoder_input_ids=torch.tensor([decoder])).logits[
                    0
                ]
            else:
                logits = policy.lm(torch.tensor([prompt + command])).logits[0, len(prompt) - 1 : -1]
        log_probs = torch.log_softmax(logits, -1)[torch.arange(len(command)), torch.tensor(command)]
        scores[int(index)] = log_probs.sum().item()
    return scores


def test_shared_prompt_scores_equal_separate_scoring(textworld_tokenizer, model_config):
    env = gym.make("TextWorldCooking-v0", tokenizer=textworld_tokenizer, **EASY_COOKING)
    try:
        model = PPO(LMActorCriticPolicy, env, policy_kwargs={"model_config": model_config}, seed=0)
        obs, info = env.reset(seed=0)
        for _ in range(3):  # a few states, with different numbers of valid commands
            with torch.no_grad():
                logits, values = model.policy.logits_and_values(model.policy.obs_to_tensor(obs)[0])
            expected = separate_scores(model.policy, obs)
            valid = sorted(expected)
            np.testing.assert_allclose(logits[0, valid].numpy(), [expected[i] for i in valid], rtol=1e-4, atol=1e-4)
            assert (logits[0, len(valid) :] == torch.finfo(logits.dtype).min).all()
            assert values.shape == (1, 1)
            action, _ = model.predict(obs)
            assert int(action) < len(info["valid_actions"])  # never an invalid command
            obs, _, _, _, info = env.step(action)
    finally:
        env.close()


def test_length_normalisation_divides_by_command_length(textworld_tokenizer):
    env = gym.make("TextWorldCooking-v0", tokenizer=textworld_tokenizer, **EASY_COOKING)
    try:
        config = tiny_gpt2_config(len(textworld_tokenizer), n_positions=256)
        summed = PPO(LMActorCriticPolicy, env, policy_kwargs={"model_config": config}, seed=0)
        mean = PPO(LMActorCriticPolicy, env, policy_kwargs={"model_config": config, "length_normalize": True}, seed=0)
        mean.policy.load_state_dict(summed.policy.state_dict())
        obs, info = env.reset(seed=1)
        tensors = summed.policy.obs_to_tensor(obs)[0]
        with torch.no_grad():
            total, average = summed.policy.logits_and_values(tensors)[0], mean.policy.logits_and_values(tensors)[0]
        lengths = obs[CANDIDATE_MASK].sum(-1)[: len(info["valid_actions"])]
        np.testing.assert_allclose(
            average[0, : len(lengths)].numpy(), total[0, : len(lengths)].numpy() / lengths, rtol=1e-5
        )
    finally:
        env.close()


@pytest.mark.parametrize("action_mode", ["choice", "token"])
def test_ppo_learns_on_textworld_in_both_modes(textworld_tokenizer, model_config, action_mode):
    env = make_vec_env(
        "TextWorldCooking-v0",
        n_envs=2,
        seed=0,
        env_kwargs=dict(tokenizer=textworld_tokenizer, action_mode=action_mode, max_steps=8, **EASY_COOKING),
    )
    try:
        model = PPO(
            LMActorCriticPolicy,
            env,
            n_steps=8,
            batch_size=8,
            n_epochs=1,
            policy_kwargs={"model_config": model_config},
            seed=0,
        )
        before = [p.detach().clone() for p in model.policy.parameters()]
        model.learn(16)
        assert model._n_updates == 1
        assert any(not torch.equal(a, b) for a, b in zip(before, model.policy.parameters(), strict=True))
    finally:
        env.close()
