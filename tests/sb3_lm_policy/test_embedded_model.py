"""The embedded SmolLM2-135M-Instruct: converted from its PyPI wheel, loaded, and trained one PPO update."""

import gymnasium as gym
import torch
from stable_baselines3 import PPO

from sb3_lm_policy import LMActorCriticPolicy
from textenvs.core.pretrained import resolve_pretrained


def test_smollm2_loads_answers_sensibly_and_runs_one_ppo_update():
    env = gym.make("TextGeneration-v0", task="sentiment", tokenizer="smollm2-135m-instruct", max_episode_length=4)
    assert env.action_space.n == 49152
    model = PPO(
        LMActorCriticPolicy,
        env,
        n_steps=4,
        batch_size=4,
        n_epochs=1,
        learning_rate=1e-5,
        policy_kwargs={"model_name_or_path": "smollm2-135m-instruct"},
        seed=0,
    )
    # the converted weights are the real model: it knows a basic fact
    tokenizer = env.unwrapped.tokenizer
    ids = tokenizer("The capital of France is", return_tensors="pt")["input_ids"]
    with torch.no_grad():
        next_token = model.policy.lm(ids).logits[0, -1].argmax()
    assert tokenizer.decode(next_token).strip() == "Paris"

    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(4)
    assert model._n_updates == 1
    assert any(not torch.equal(a, b) for a, b in zip(before, model.policy.parameters(), strict=True))
    # the conversion is cached in Hugging Face format
    assert resolve_pretrained("smollm2-135m-instruct").endswith("smollm2-135m-instruct")
