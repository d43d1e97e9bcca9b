"""``TextGeneration-v0``: generate a text one token per step, rewarded by text metrics."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from textenvs.core.checks import positive_int
from textenvs.core.datapool import DataPool, Sample
from textenvs.core.rewards import RewardSpec, make_reward
from textenvs.core.spaces import text_observation, text_observation_space
from textenvs.core.tokenization import TokenizerLike, encode_left_padded, load_tokenizer, vocabulary_size
from textenvs.text_generation.tasks import get_task

REWARD_MODES = ("episode", "step")


class TextGenerationEnv(gym.Env[dict[str, np.ndarray], int]):
    """Token-level text generation in the style of RL4LMs.

    Each episode draws a sample (prompt and references) from the datapool; each action is one
    token id appended to the generation. The episode ends (``terminated``) at the EOS token or
    after ``max_episode_length`` tokens: a finished text has no future value, so PPO must not
    bootstrap it. Observations follow :mod:`textenvs.core.spaces`.

    :param task: a built-in task name (data, default reward and lengths); see ``textenvs.TASKS``.
    :param tokenizer: an embedded model name, a hub name, a local path or a tokenizer object.
    :param datapool: samples to use instead of the task's data.
    :param reward: a reward spec (see :func:`textenvs.core.rewards.make_reward`) instead of the task's.
    :param split: ``"train"`` or ``"test"`` part of the task's data.
    :param max_prompt_length: prompt tokens kept (longer prompts are cut, ``info["prompt_truncated"]``).
    :param max_episode_length: tokens generated at most.
    :param terminate_on_eos: end the episode when ``eos_token_id`` is generated.
    :param eos_token_id: defaults to the tokenizer's EOS token.
    :param prompt_truncation_side: ``"left"`` keeps the end of a long prompt, ``"right"`` its start.
    :param reward_mode: ``"episode"`` pays the reward at the end; ``"step"`` pays the change of the
        score after each token (the per-step rewards add up to the final score).
    :param vocab_size: size of the action space; defaults to the model's logit width when
        ``tokenizer`` names a model, else to ``len(tokenizer)``.
    :param render_mode: ``"ansi"`` (``render()`` returns the text) or ``"human"`` (prints it each step).
    """

    metadata = {"render_modes": ["ansi", "human"]}

    def __init__(
        self,
        task: str | None = None,
        tokenizer: TokenizerLike = "smollm2-135m-instruct",
        datapool: DataPool | None = None,
        reward: RewardSpec | None = None,
        split: str = "train",
        max_prompt_length: int | None = None,
        max_episode_length: int | None = None,
        terminate_on_eos: bool = True,
        eos_token_id: int | None = None,
        prompt_truncation_side: str = "left",
        reward_mode: str = "episode",
        vocab_size: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        if task is None and datapool is None:
            raise ValueError("give a built-in task name or a datapool")
        spec = get_task(task) if task is not None else None
        self.datapool = datapool if datapool is not None else spec.load(split)
        if not isinstance(self.datapool, DataPool):
            raise TypeError(f"datapool must be a DataPool, got {type(self.datapool).__name__}")
        reward = reward if reward is not None else (spec.reward if spec else None)
        if reward is None:
            raise ValueError("a datapool without a task needs a reward")
        self.reward_function = make_reward(reward)
        if reward_mode not in REWARD_MODES:
            raise ValueError(f"reward_mode must be one of {REWARD_MODES}, got {reward_mode!r}")
        self.max_prompt_length = positive_int(
            "max_prompt_length", _default(max_prompt_length, spec.max_prompt_length if spec else 64)
        )
        self.max_episode_length = positive_int(
            "max_episode_length", _default(max_episode_length, spec.max_episode_length if spec else 32)
        )
        self.tokenizer = load_tokenizer(tokenizer)
        self.vocab_size = positive_int(
            "vocab_size", vocab_size if vocab_size is not None else vocabulary_size(tokenizer, self.tokenizer)
        )
        self.eos_token_id = self.tokenizer.eos_token_id if eos_token_id is None else int(eos_token_id)
        if terminate_on_eos and self.eos_token_id is None:
            raise ValueError("terminate_on_eos needs an eos_token_id (the tokenizer has none)")
        self.terminate_on_eos = terminate_on_eos
        self.prompt_truncation_side = prompt_truncation_side
        self.reward_mode = reward_mode
        self.render_mode = render_mode
        self.observation_space = text_observation_space(
            self.max_prompt_length, self.max_episode_length, self.vocab_size
        )
        self.action_space = spaces.Discrete(self.vocab_size)
        self._sample: Sample | None = None
        self._done = True

    # ------------------------------------------------------------------ gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start an episode on a random sample, or on ``options={"sample_index": i}`` of the datapool."""
        super().reset(seed=seed)
        options = options or {}
        if "sample_index" in options:
            index = options["sample_index"]
            if not isinstance(index, int | np.integer) or not 0 <= index < len(self.datapool):
                raise ValueError(f"sample_index must be an integer in [0, {len(self.datapool)}), got {index!r}")
            self._sample = self.datapool[int(index)]
        else:
            self._sample = self.datapool.sample(self.np_random)
        prompt_ids, prompt_mask, self._prompt_truncated = encode_left_padded(
            self.tokenizer, self._sample.prompt, self.max_prompt_length, self.prompt_truncation_side
        )
        self._prompt_ids, self._prompt_mask = prompt_ids, prompt_mask
        self._generated: list[int] = []
        self._score = 0.0
        self._done = False
        return self._observation(), self._info()

    def step(self, action: int) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        if self._done:
            raise RuntimeError("the episode has ended: call reset() before step()")
        token = self._validate_action(action)
        self._generated.append(token)
        terminated = (self.terminate_on_eos and token == self.eos_token_id) or len(
            self._generated
        ) >= self.max_episode_length
        self._done = terminated
        info = self._info()
        reward = 0.0
        if terminated or self.reward_mode == "step":
            score, components = self.reward_function(info["generated_text"], self._sample)
            reward = score - self._score if self.reward_mode == "step" else score
            self._score = score
            info["reward_components"] = components
        if self.render_mode == "human":
            self.render()
        return self._observation(), float(reward), terminated, False, info

    def render(self) -> str | None:
        # other modes are accepted at construction (SB3's make_vec_env asks for "rgb_array", and
        # gymnasium warns about it) but there is no picture of a text to return
        if self.render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']} to render, got {self.render_mode!r}"
            )
        if self._sample is None:
            text = "(no episode yet: call reset())"
        else:
            references = " | ".join(self._sample.references) or "(none)"
            text = (
                f"prompt:     {self._sample.prompt!r}\ngenerated:  {self.generated_text()!r}\nreferences: {references}"
            )
        if self.render_mode == "human":
            print(text)
            return None
        return text

    # ------------------------------------------------------------------ helpers
    def generated_text(self) -> str:
        return self.tokenizer.decode(self._generated, skip_special_tokens=True)

    def _validate_action(self, action: Any) -> int:
        if isinstance(action, np.ndarray) and action.size == 1:
            action = action.reshape(()).item() if np.issubdtype(action.dtype, np.integer) else action
        if isinstance(action, bool | np.bool_) or not isinstance(action, int | np.integer):
            raise ValueError(f"action must be an integer token id in [0, {self.vocab_size}), got {action!r}")
        if not 0 <= action < self.vocab_size:
            raise ValueError(f"action {int(action)} is out of range: token ids are in [0, {self.vocab_size})")
        return int(action)

    def _observation(self) -> dict[str, np.ndarray]:
        return text_observation(
            self._prompt_ids, self._prompt_mask, self._generated, self.max_episode_length, self.tokenizer.pad_token_id
        )

    def _info(self) -> dict[str, Any]:
        return {
            "sample_id": self._sample.id,
            "prompt": self._sample.prompt,
            "references": list(self._sample.references),
            "generated_text": self.generated_text(),
            "prompt_truncated": self._prompt_truncated,
        }


def _default(value: Any, default: Any) -> Any:
    return default if value is None else value
