"""Expert demonstrations from the games' gold paths, and game-level evaluation with baselines."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from textenvs.textworld.env import TextWorldEnv

#: chooses an action from (observation, info, env); used by :func:`evaluate_games`
ActionFunction = Callable[[dict[str, np.ndarray], dict[str, Any], TextWorldEnv], int]


@dataclass
class Demonstrations:
    """(observation, expert action) pairs, observations stacked per key."""

    observations: dict[str, np.ndarray]
    actions: np.ndarray

    def __len__(self) -> int:
        return len(self.actions)


def collect_demonstrations(env: TextWorldEnv, n_games: int, first_game: int = 0) -> Demonstrations:
    """Play the gold path of games ``first_game .. first_game + n_games - 1`` of the env's fold.

    In choice mode each step is one (observation, command index) pair; in token mode one
    (observation, token) pair per token of each command, ending with EOS.
    """
    env = env.unwrapped
    if n_games < 1:
        raise ValueError(f"n_games must be >= 1, got {n_games}")
    observations: list[dict[str, np.ndarray]] = []
    actions: list[int] = []
    for index in range(first_game, first_game + n_games):
        obs, info = env.reset(options={"game_index": index, "gold_path": True})
        for command in info["gold_actions"]:
            for action in _expert_steps(env, command, info):
                observations.append(obs)
                actions.append(action)
                obs, _, terminated, truncated, info = env.step(action)
        if not info["success"]:
            raise RuntimeError(f"the gold path of game {index} ({env.game_seed}) did not succeed")
    stacked = {key: np.stack([o[key] for o in observations]) for key in observations[0]}
    return Demonstrations(stacked, np.asarray(actions, dtype=np.int64))


def _expert_steps(env: TextWorldEnv, command: str, info: dict[str, Any]) -> list[int]:
    if env.action_mode == "choice":
        return [info["valid_actions"].index(command)]
    tokens = env.tokenizer(command, add_special_tokens=False)["input_ids"]
    if len(tokens) >= env.max_command_length:
        raise ValueError(
            f"the expert command {command!r} needs {len(tokens) + 1} tokens with EOS, more than "
            f"max_command_length={env.max_command_length}"
        )
    return [*tokens, env.tokenizer.eos_token_id]


def random_valid_action(rng: np.random.Generator) -> ActionFunction:
    """Baseline: a uniformly random valid command (choice mode)."""

    def act(obs: dict[str, np.ndarray], info: dict[str, Any], env: TextWorldEnv) -> int:
        return int(rng.integers(len(info["valid_actions"])))

    return act


def gold_path_action(obs: dict[str, np.ndarray], info: dict[str, Any], env: TextWorldEnv) -> int:
    """Sanity baseline: the expert's next command (choice mode)."""
    return info["valid_actions"].index(info["gold_actions"][info["moves"]])


#: :func:`evaluate_games` resets with ``gold_path`` for action functions that set this
gold_path_action.needs_gold_path = True


def policy_action(model: Any, deterministic: bool = True) -> ActionFunction:
    """Any SB3 model (or object with ``predict``) as an action function."""

    def act(obs: dict[str, np.ndarray], info: dict[str, Any], env: TextWorldEnv) -> int:
        return int(model.predict(obs, deterministic=deterministic)[0])

    return act


def evaluate_games(env: TextWorldEnv, act: ActionFunction, n_games: int, first_game: int = 0) -> dict[str, Any]:
    """Play games ``first_game ..`` of the env's fold once each: success rate, mean score, mean moves.

    An action function with ``needs_gold_path = True`` gets the expert's commands in ``info``.
    """
    env = env.unwrapped
    successes, scores, moves = [], [], []
    gold_path = getattr(act, "needs_gold_path", False)
    for index in range(first_game, first_game + n_games):
        obs, info = env.reset(options={"game_index": index, "gold_path": gold_path})
        done = False
        while not done:
            obs, _, terminated, truncated, info = env.step(act(obs, info, env))
            done = terminated or truncated
        successes.append(info["success"])
        scores.append(info["score"])
        moves.append(info["moves"])
    return {
        "games": n_games,
        "fold": env.game_fold,
        "success_rate": float(np.mean(successes)),
        "mean_score": float(np.mean(scores)),
        "mean_moves": float(np.mean(moves)),
    }
