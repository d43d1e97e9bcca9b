"""Evaluation of a model on a text env: reward, reward components and generation-quality metrics."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.evaluation import evaluate_policy
from stable_baselines3.common.vec_env import VecEnv

from textenvs.core.spaces import CONTEXT_MASK

SAMPLES_KEPT = 8
SAMPLE_KEYS = ("sample_id", "prompt", "generated_text", "references")


def distinct_n(texts: Sequence[str], n: int) -> float:
    """Distinct-n (Li et al., 2016): unique word n-grams over all word n-grams of the texts."""
    ngrams = [tuple(words[i : i + n]) for words in (text.split() for text in texts) for i in range(len(words) - n + 1)]
    return len(set(ngrams)) / len(ngrams) if ngrams else 0.0


def reference_perplexity(
    policy: Any, terminal_observations: Sequence[dict[str, np.ndarray]], batch_size: int = 32
) -> float:
    """Perplexity of the generated tokens (given their prompts) under the policy's frozen reference.

    Counts every generated token, EOS included; ``exp`` of the mean negative log-likelihood.
    """
    total_log_prob, total_tokens = 0.0, 0
    for start in range(0, len(terminal_observations), batch_size):
        part = terminal_observations[start : start + batch_size]
        obs = policy.obs_to_tensor({key: np.stack([o[key] for o in part]) for key in part[0]})[0]
        log_probs, mask = policy.generated_token_log_probs(obs, reference=True)
        total_log_prob += float(log_probs.sum())
        total_tokens += int(mask.sum())
    return math.exp(-total_log_prob / total_tokens) if total_tokens else float("nan")


def evaluate_text_policy(
    model: BaseAlgorithm,
    env: VecEnv,
    n_episodes: int,
    deterministic: bool = True,
    seed: int | None = None,
    keep_all_samples: bool = False,
) -> dict[str, Any]:
    """Run ``n_episodes`` with SB3's ``evaluate_policy`` and summarise the finished episodes.

    :param seed: re-seed ``env`` first, so that evaluations of different models (before and after
        training, or a reloaded checkpoint) see the same prompts.
    :param keep_all_samples: return every generation under ``samples`` (else the first few).
    :return: ``mean_reward``, ``std_reward``, ``mean_length`` (tokens), the mean of each reward
        component, ``distinct_1``/``distinct_2``, ``reference_perplexity`` when the policy has a
        frozen reference (see ``LMActorCriticPolicy.freeze_reference``), and sample generations.
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
    texts = [info["generated_text"] for info in finished if "generated_text" in info]
    result: dict[str, Any] = {
        "episodes": len(rewards),
        "deterministic": deterministic,
        "mean_reward": float(np.mean(rewards)),
        "std_reward": float(np.std(rewards)),
        "mean_length": float(np.mean(lengths)),
        "reward_components": {name: float(np.mean(values)) for name, values in components.items()},
        "distinct_1": distinct_n(texts, 1),
        "distinct_2": distinct_n(texts, 2),
    }
    terminal = [info["terminal_observation"] for info in finished if "terminal_observation" in info]
    policy = model.policy
    generates_tokens = terminal and CONTEXT_MASK in terminal[0] and not getattr(policy, "choice_mode", False)
    if generates_tokens and getattr(policy, "has_reference", False):
        result["reference_perplexity"] = reference_perplexity(policy, terminal)
    for key, name in (("success", "success_rate"), ("moves", "mean_moves")):  # game envs
        values = [float(info[key]) for info in finished if key in info]
        if values:
            result[name] = float(np.mean(values))
    kept = finished if keep_all_samples else finished[:SAMPLES_KEPT]
    result["samples"] = [{key: info[key] for key in SAMPLE_KEYS if key in info} for info in kept]
    return result
