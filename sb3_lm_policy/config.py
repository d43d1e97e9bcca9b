"""The training configuration of ``sb3-lm train``: a YAML file and/or command-line flags."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import gymnasium as gym
import yaml

ALGORITHMS = ("ppo", "a2c")
REWARD_NORMALIZATIONS = ("none", "scale", "whiten")


@dataclass
class TrainConfig:
    """Everything a run needs; saved as ``config.yaml`` in the run folder.

    :param env_kwargs: passed to ``gym.make``; ``tokenizer`` defaults to ``model`` when the env takes one.
    :param eval_env_kwargs: overrides of ``env_kwargs`` for evaluation (e.g. ``{split: test}``).
    :param algo_kwargs: passed to the SB3 algorithm (``n_steps``, ``learning_rate``, ...).
    :param eval_seed: seed of every evaluation, so before, after and reloaded evaluations see the same episodes.
    :param kl_coef: turn on the per-token KL penalty to the starting model with this beta.
    :param kl_target: make beta adaptive, aiming at this mean per-token KL.
    :param reward_normalization: ``none``, ``scale`` or ``whiten`` the env rewards of each rollout.
    :param bc_games: before PPO, behaviour-clone the gold paths of this many training games
        (TextWorld envs; 0 = off), for ``bc_epochs`` at ``bc_learning_rate``.
    :param policy_kwargs: passed to :class:`~sb3_lm_policy.LMActorCriticPolicy` (``lora``, ``dtype``, ...).
    """

    env_id: str = "TextGeneration-v0"
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    eval_env_kwargs: dict[str, Any] = field(default_factory=dict)
    model: str | None = "smollm2-135m-instruct"
    policy_kwargs: dict[str, Any] = field(default_factory=dict)
    algo: str = "ppo"
    algo_kwargs: dict[str, Any] = field(default_factory=dict)
    total_timesteps: int = 2048
    n_envs: int = 1
    seed: int = 0
    eval_episodes: int = 16
    eval_deterministic: bool = True
    eval_seed: int = 10_000
    kl_coef: float | None = None
    kl_target: float | None = None
    kl_horizon: int = 10_000
    reward_normalization: str = "none"
    bc_games: int = 0
    bc_epochs: int = 1
    bc_learning_rate: float = 1e-4
    bc_batch_size: int = 8
    device: str = "auto"
    output_dir: str = "runs/latest"
    progress_bar: bool = True

    def __post_init__(self) -> None:
        if self.algo not in ALGORITHMS:
            raise ValueError(f"algo must be one of {ALGORITHMS}, got {self.algo!r}")
        for name in ("total_timesteps", "n_envs", "eval_episodes", "bc_games", "bc_epochs", "bc_batch_size"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, int)
                or value < (0 if name in ("eval_episodes", "bc_games") else 1)
            ):
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        for name in ("env_kwargs", "eval_env_kwargs", "policy_kwargs", "algo_kwargs"):
            if not isinstance(getattr(self, name), dict):
                raise ValueError(f"{name} must be a mapping, got {getattr(self, name)!r}")
        if self.model is None and "model_config" not in self.policy_kwargs:
            raise ValueError("give a model name or path, or policy_kwargs.model_config")
        if self.reward_normalization not in REWARD_NORMALIZATIONS:
            raise ValueError(
                f"reward_normalization must be one of {REWARD_NORMALIZATIONS}, got {self.reward_normalization!r}"
            )
        if self.kl_target is not None and self.kl_coef is None:
            raise ValueError("kl_target makes the KL coefficient adaptive: give its starting value as kl_coef too")
        if self.env_id not in gym.registry:
            raise ValueError(f"unknown env id {self.env_id!r}; import the package that registers it")

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "config") -> TrainConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"{source}: unknown keys {unknown}; valid keys: {sorted(known)}")
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def policy_kwargs_with_model(self) -> dict[str, Any]:
        kwargs = dict(self.policy_kwargs)
        if self.model is not None and "model_config" not in kwargs:
            kwargs.setdefault("model_name_or_path", self.model)
        return kwargs

    def make_env_kwargs(self, evaluation: bool = False) -> dict[str, Any]:
        kwargs = {**self.env_kwargs, **(self.eval_env_kwargs if evaluation else {})}
        if self.model is not None and "tokenizer" not in kwargs and _env_takes(self.env_id, "tokenizer"):
            kwargs["tokenizer"] = self.model
        return kwargs


def _env_takes(env_id: str, argument: str) -> bool:
    entry_point = gym.spec(env_id).entry_point
    if isinstance(entry_point, str):
        entry_point = gym.envs.registration.load_env_creator(entry_point)
    return argument in inspect.signature(entry_point).parameters


def builtin_configs() -> list[str]:
    return sorted(
        p.name[: -len(".yaml")]
        for p in resources.files("sb3_lm_policy").joinpath("configs").iterdir()
        if p.name.endswith(".yaml")
    )


def read_config_file(name_or_path: str) -> dict[str, Any]:
    """Read a YAML config from a path, or a built-in one by name (``demo``)."""
    path = Path(name_or_path)
    if path.is_file():
        text, source = path.read_text(encoding="utf-8"), str(path)
    elif name_or_path in builtin_configs():
        text = resources.files("sb3_lm_policy").joinpath("configs", f"{name_or_path}.yaml").read_text("utf-8")
        source = f"built-in config {name_or_path!r}"
    else:
        raise ValueError(f"config {name_or_path!r} is neither a file nor a built-in config ({builtin_configs()})")
    data = yaml.safe_load(text) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{source}: expected a mapping at the top level, got {type(data).__name__}")
    return data
