"""TextWorldExpress games as Gymnasium envs for language-model agents.

Two action modes share one prompt (task, recent history, current observation, valid actions):

- ``action_mode="choice"``: ``Discrete(max_actions)``; the valid commands, sorted so indices are
  stable, come tokenized in the observation with an ``action_mask`` (see
  :mod:`textenvs.core.spaces`). The policy scores each candidate. An index past the valid
  commands is played as an invalid command (a lost move, ``info["invalid_action"]``, a warning).
- ``action_mode="token"``: ``Discrete(vocabulary)``; the command is written one token per step and
  sent to the game as is when it ends (EOS, a newline, or ``max_command_length`` tokens). An invalid
  command costs a move, as in the game.
"""

from __future__ import annotations

import warnings
from collections import deque
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from textenvs.core.checks import positive_int
from textenvs.core.spaces import (
    ACTION_MASK,
    CANDIDATE_IDS,
    CANDIDATE_MASK,
    MASK_DTYPE,
    TOKEN_DTYPE,
    choice_observation_space,
    text_observation,
    text_observation_space,
)
from textenvs.core.tokenization import TokenizerLike, encode_left_padded, load_tokenizer, vocabulary_size
from textenvs.textworld.games import FOLDS, GAMES
from textenvs.textworld.simulator import JVM_OPTIONS, Simulator

ACTION_MODES = ("choice", "token")

DEFAULT_TEMPLATE = "{task}\n{history}Observation: {observation}\nValid actions: {valid_actions}\nAction:"
HISTORY_TEMPLATE = "Observation: {observation}\nAction: {action}\n"


class TextWorldEnv(gym.Env[dict[str, np.ndarray], int]):
    """A TextWorldExpress game (one registered id per game, e.g. ``TextWorldCooking-v0``).

    Reward is the change of the game's normalised score (0 to 1 over a game). An episode is
    ``terminated`` on the game's success or failure and ``truncated`` after ``max_steps`` moves, so
    PPO bootstraps the value of an unfinished game.

    Seeding: ``reset(seed=s)`` draws a game of ``game_fold`` from ``self.np_random``, so the same
    seed replays the same game; ``reset(options={"game_index": i})`` plays the fold's i-th game.
    The train, dev and test folds have disjoint games (and held-out object sets).

    :param game: the registered id, set by registration (``"TextWorldCooking-v0"``).
    :param tokenizer: an embedded model name, a hub name, a local path or a tokenizer object.
    :param action_mode: ``"choice"`` or ``"token"`` (see the module docstring).
    :param game_fold: ``"train"``, ``"dev"`` or ``"test"``.
    :param max_steps: moves before the episode is truncated.
    :param max_history: previous (observation, action) pairs shown in the prompt.
    :param prompt_template: a format string with ``{task}``, ``{history}``, ``{observation}``,
        ``{valid_actions}``; the prompt is cut on the left beyond ``max_prompt_length`` tokens.
    :param max_actions: candidate commands in choice mode (more valid commands are an error).
    :param max_action_length: tokens of a candidate command (longer ones are an error).
    :param max_command_length: tokens of a command written in token mode.
    :param game_params: typed game parameters, e.g. ``num_locations=1, include_doors=False``.
    """

    metadata = {"render_modes": ["ansi", "human"]}

    def __init__(
        self,
        game: str = "TextWorldCooking-v0",
        tokenizer: TokenizerLike = "smollm2-135m-instruct",
        action_mode: str = "choice",
        game_fold: str = "train",
        max_steps: int = 50,
        max_history: int = 2,
        prompt_template: str = DEFAULT_TEMPLATE,
        max_prompt_length: int = 384,
        max_actions: int = 128,
        max_action_length: int = 16,
        max_command_length: int = 16,
        vocab_size: int | None = None,
        jvm_options: str = JVM_OPTIONS,
        render_mode: str | None = None,
        **game_params: Any,
    ) -> None:
        if game not in GAMES:
            raise ValueError(f"unknown TextWorld game {game!r}; one of {sorted(GAMES)}")
        self.game = GAMES[game]
        parameter_string = self.game.parameter_string(game_params)
        if action_mode not in ACTION_MODES:
            raise ValueError(f"action_mode must be one of {ACTION_MODES}, got {action_mode!r}")
        if game_fold not in FOLDS:
            raise ValueError(f"game_fold must be one of {FOLDS}, got {game_fold!r}")
        for name, value in (
            ("max_steps", max_steps),
            ("max_prompt_length", max_prompt_length),
            ("max_actions", max_actions),
            ("max_action_length", max_action_length),
            ("max_command_length", max_command_length),
        ):
            positive_int(name, value)
        if not isinstance(max_history, int) or max_history < 0:
            raise ValueError(f"max_history must be an integer >= 0, got {max_history!r}")
        self.action_mode, self.game_fold = action_mode, game_fold
        self.max_steps, self.max_history, self.prompt_template = max_steps, max_history, prompt_template
        self.max_prompt_length, self.max_actions = max_prompt_length, max_actions
        self.max_action_length, self.max_command_length = max_action_length, max_command_length
        self.render_mode = render_mode
        self.tokenizer = load_tokenizer(tokenizer)
        self.vocab_size = positive_int(
            "vocab_size", vocab_size if vocab_size is not None else vocabulary_size(tokenizer, self.tokenizer)
        )
        if action_mode == "choice":
            self.observation_space = choice_observation_space(
                max_prompt_length, max_actions, max_action_length, self.vocab_size
            )
            self.action_space = spaces.Discrete(max_actions)
        else:
            self.observation_space = text_observation_space(max_prompt_length, max_command_length, self.vocab_size)
            self.action_space = spaces.Discrete(self.vocab_size)
        # the simulator's own limit only guards runaway games: this env truncates at max_steps
        self.simulator = Simulator(self.game, parameter_string, step_limit=max_steps + 10, jvm_options=jvm_options)
        self._fold_seeds: list[int] | None = None
        self._done = True
        self._text: dict[str, Any] = {}

    # ------------------------------------------------------------------ gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start a game: drawn from the fold, or ``options={"game_index": i}``; ``{"gold_path": True}``
        adds the expert's commands as ``info["gold_actions"]`` at every step of the episode."""
        super().reset(seed=seed)
        options = options or {}
        if self._fold_seeds is None:
            self._fold_seeds = self.simulator.valid_seeds(self.game_fold)
        if "game_index" in options:
            index = options["game_index"]
            if not isinstance(index, int | np.integer) or not 0 <= index < len(self._fold_seeds):
                raise ValueError(f"game_index must be an integer in [0, {len(self._fold_seeds)}), got {index!r}")
        else:
            index = int(self.np_random.integers(len(self._fold_seeds)))
        self.game_seed = self._fold_seeds[int(index)]
        gold_path = bool(options.get("gold_path", False))
        observation, game_info = self.simulator.reset(self.game_seed, self.game_fold, gold_path=gold_path)
        self._gold_actions = self.simulator.gold_actions() if gold_path else None
        self._task = game_info["taskDescription"]
        self._history: deque[tuple[str, str]] = deque(maxlen=self.max_history)
        self._score, self._moves, self._command = 0.0, 0, []
        self._done = False
        info = self._game_state(observation, game_info)  # encodes the prompt the observation holds
        return self._observation(), info

    def step(self, action: int) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        if self._done:
            raise RuntimeError("the episode has ended: call reset() before step()")
        if self.action_mode == "choice":
            index = self._check_choice(action)
            if index >= len(self._valid_actions):
                # no command at this index: like an invalid command in the game, it costs a move
                warnings.warn(
                    f"action {index} is past the {len(self._valid_actions)} valid commands (see action_mask): "
                    "sent as an invalid command",
                    RuntimeWarning,
                    stacklevel=2,
                )
                return self._send("", invalid_action=True)
            return self._send(self._valid_actions[index])
        token = self._check_token(action)
        self._command.append(token)
        piece = self.tokenizer.decode([token])
        if token == self.tokenizer.eos_token_id or "\n" in piece or len(self._command) >= self.max_command_length:
            command = self.tokenizer.decode(self._command, skip_special_tokens=True).strip()
            self._command = []
            return self._send(command)
        info = dict(self._info, partial_command=self.tokenizer.decode(self._command, skip_special_tokens=True))
        return self._observation(), 0.0, False, False, info

    def render(self) -> str | None:
        if self.render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']} to render, got {self.render_mode!r}"
            )
        text = self._prompt() if self._text else "(no game yet: call reset())"
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        self.simulator.close()

    # ------------------------------------------------------------------ game
    def _send(
        self, command: str, invalid_action: bool = False
    ) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        previous_observation = self._text["observation"]
        observation, game_info = self.simulator.step(command)
        self._history.append((previous_observation, command))
        info = self._game_state(observation, game_info)
        info["command"] = command
        info["invalid_action"] = invalid_action
        reward = info["score"] - self._score
        self._score = info["score"]
        terminated = info["success"] or info["failure"]
        truncated = not terminated and self._moves >= self.max_steps
        self._done = terminated or truncated
        if self.render_mode == "human":
            self.render()
        return self._observation(), float(reward), terminated, truncated, info

    def _game_state(self, observation: str, game_info: dict[str, Any]) -> dict[str, Any]:
        self._moves = int(game_info["numMoves"])
        self._valid_actions = sorted(game_info["validActions"])
        self._text = {"observation": observation.strip()}
        self._encode_prompt()
        self._info = {
            "score": float(game_info["score"]),
            "success": bool(game_info["tasksuccess"]),
            "failure": bool(game_info["taskfailure"]),
            "valid_actions": list(self._valid_actions),
            "moves": self._moves,
            "game_seed": self.game_seed,
            "prompt_truncated": self._prompt_truncated,
        }
        if self._gold_actions is not None:
            self._info["gold_actions"] = list(self._gold_actions)
        return dict(self._info)

    def _prompt(self) -> str:
        history = "".join(HISTORY_TEMPLATE.format(observation=o, action=a) for o, a in self._history)
        return self.prompt_template.format(
            task=self._task,
            history=history,
            observation=self._text["observation"],
            valid_actions=", ".join(self._valid_actions),
        )

    def _encode_prompt(self) -> None:
        self._prompt_ids, self._prompt_mask, self._prompt_truncated = encode_left_padded(
            self.tokenizer, self._prompt(), self.max_prompt_length, "left"
        )
        if self.action_mode == "choice":
            self._candidates = self._encode_candidates()

    def _encode_candidates(self) -> dict[str, np.ndarray]:
        if len(self._valid_actions) > self.max_actions:
            raise ValueError(
                f"{len(self._valid_actions)} valid commands exceed max_actions={self.max_actions}; raise max_actions"
            )
        ids = np.full((self.max_actions, self.max_action_length), self.tokenizer.pad_token_id, dtype=TOKEN_DTYPE)
        mask = np.zeros((self.max_actions, self.max_action_length), dtype=MASK_DTYPE)
        # a leading space: the command continues "Action:" as running text
        encoded = self.tokenizer([f" {a}" for a in self._valid_actions], add_special_tokens=False)["input_ids"]
        for row, (command, tokens) in enumerate(zip(self._valid_actions, encoded, strict=True)):
            if len(tokens) > self.max_action_length:
                raise ValueError(
                    f"command {command!r} has {len(tokens)} tokens, "
                    f"more than max_action_length={self.max_action_length}"
                )
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1
        action_mask = np.zeros(self.max_actions, dtype=MASK_DTYPE)
        action_mask[: len(self._valid_actions)] = 1
        return {CANDIDATE_IDS: ids, CANDIDATE_MASK: mask, ACTION_MASK: action_mask}

    def _observation(self) -> dict[str, np.ndarray]:
        pad = self.tokenizer.pad_token_id
        if self.action_mode == "choice":
            observation = text_observation(self._prompt_ids, self._prompt_mask, [], 1, pad)
            observation.update({key: value.copy() for key, value in self._candidates.items()})
            return observation
        return text_observation(self._prompt_ids, self._prompt_mask, self._command, self.max_command_length, pad)

    def _check_choice(self, action: Any) -> int:
        index = _integer(action)
        if index is None or not 0 <= index < self.max_actions:
            raise ValueError(f"action must be an integer command index in [0, {self.max_actions}), got {action!r}")
        return index

    def _check_token(self, action: Any) -> int:
        token = _integer(action)
        if token is None or not 0 <= token < self.vocab_size:
            raise ValueError(f"action must be an integer token id in [0, {self.vocab_size}), got {action!r}")
        return token

    def gold_actions(self) -> list[str]:
        """The expert's commands for the current game (after ``reset(options={"gold_path": True})``)."""
        return self.simulator.gold_actions()


def _integer(action: Any) -> int | None:
    if isinstance(action, np.ndarray) and action.size == 1 and np.issubdtype(action.dtype, np.integer):
        action = action.reshape(()).item()
    if isinstance(action, bool | np.bool_) or not isinstance(action, int | np.integer):
        return None
    return int(action)
