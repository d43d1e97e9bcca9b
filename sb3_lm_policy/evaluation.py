"""Evaluation of a model on a text env: mean reward, reward components and sample generations."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.evaluation import evaluate_policy
from stable_baselines3.common.vec_env import VecEnv

SAMPLES_KEPT = 8


def evaluate_text_policy(
    model: BaseAlgorithm, env: VecEnv, n_episodes: int, deterministic: bool = True, seed: int | None = None
) -> dict[str, Any]:
    """Run ``n_episodes`` with SB3's ``evaluate_policy`` and summarise what the episodes' infos hold.

    :param seed: re-seed ``env`` first, so that evaluations of different models (before and after
        training, or a reloaded checkpoint) see the same prompts.

    :return: ``mean_reward``, ``std_reward``, ``mean_length``, the mean of each reward component,
        and the first generations (prompt, text, references, reward).
    """
    if seed is not None:
        env.seed(seed)
    finished: list[dict[str, Any]] = []

    def collect(local_vars: dict[str, Any], _globals: dict[str, Any]) -> None:
        if local_vars["done"]:
            finished.append(local_vars["info"])

    rewards, lengths = evaluate_policy(
        model,
        env,
        n_eval_episodes=n_episodes,
        deterministic=deterministic,
        return_episode_rewards=True,
        callback=collect,
    )
    components: dict[str, list[float]] = defaultdict(list)
    for info in finished:
        for name, value in info.get("reward_components", {}).items():
            components[name].append(float(value))
    samples = [
        {key: info[key] for key in ("sample_id", "prompt", "generated_text", "references") if key in info}
        for info in finished[:SAMPLES_KEPT]
    ]
    return {
        "episodes": len(rewards),
        "deterministic": deterministic,
        "mean_reward": float(np.mean(rewards)),
        "std_reward": float(np.std(rewards)),
        "mean_length": float(np.mean(lengths)),
        "reward_components": {name: float(np.mean(values)) for name, values in components.items()},
        "samples": samples,
    }
