"""Behaviour cloning: a supervised warm start of an LM policy on expert (observation, action) pairs,
before PPO (the SFT-then-RL recipe)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch

from sb3_lm_policy.policy import LMActorCriticPolicy


def behaviour_cloning(
    policy: LMActorCriticPolicy,
    observations: Mapping[str, np.ndarray],
    actions: np.ndarray,
    epochs: int = 1,
    batch_size: int = 16,
    learning_rate: float = 1e-4,
    seed: int = 0,
) -> list[float]:
    """Minimise ``-log pi(expert action | observation)`` with the policy's own action distribution.

    Works in any action mode (tokens, or candidate commands). Only the policy's trainable
    parameters move (the LoRA adapters, with ``lora``); the value head is not trained.

    :param observations: arrays keyed like the env's observation space, first axis = samples.
    :param actions: the expert's actions, one per sample.
    :return: the mean loss of each epoch.
    """
    count = len(actions)
    if count == 0:
        raise ValueError("no demonstrations to learn from")
    if set(observations) != set(policy.observation_space.spaces):
        raise ValueError(
            f"observation keys {sorted(observations)} differ from the policy's "
            f"{sorted(policy.observation_space.spaces)}"
        )
    if any(len(value) != count for value in observations.values()):
        raise ValueError(f"every observation array needs {count} rows, one per action")
    trainable = [p for name, p in policy.named_parameters() if p.requires_grad and not name.startswith("value_head")]
    optimizer = torch.optim.AdamW(trainable, lr=learning_rate)
    rng = np.random.default_rng(seed)
    losses = []
    policy.set_training_mode(True)
    for _ in range(epochs):
        epoch_losses = []
        order = rng.permutation(count)
        for start in range(0, count, batch_size):
            rows = order[start : start + batch_size]
            obs = policy.obs_to_tensor({key: value[rows] for key, value in observations.items()})[0]
            target = torch.as_tensor(actions[rows], device=policy.device).long()
            loss = -policy.get_distribution(obs).log_prob(target).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            epoch_losses.append(loss.item())
        losses.append(float(np.mean(epoch_losses)))
    policy.set_training_mode(False)
    return losses
