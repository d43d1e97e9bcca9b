"""Gymnasium environments in which a language model is the agent. Importing registers the envs."""

from gymnasium.envs.registration import register, registry

from textenvs.core.datapool import DataPool, Sample
from textenvs.core.rewards import REWARDS, TextReward, make_reward, register_reward
from textenvs.text_generation import TASKS, Task, TextGenerationEnv, register_task

__version__ = "0.1.0"

from textenvs.textworld.games import GAMES as _TEXTWORLD_GAMES

ENV_IDS = ("TextGeneration-v0", *_TEXTWORLD_GAMES)

if "TextGeneration-v0" not in registry:
    register(id="TextGeneration-v0", entry_point="textenvs.text_generation.env:TextGenerationEnv")
for _env_id in _TEXTWORLD_GAMES:
    if _env_id not in registry:
        register(id=_env_id, entry_point="textenvs.textworld.env:TextWorldEnv", kwargs={"game": _env_id})

__all__ = [
    "ENV_IDS",
    "REWARDS",
    "TASKS",
    "DataPool",
    "Sample",
    "Task",
    "TextGenerationEnv",
    "TextReward",
    "make_reward",
    "register_reward",
    "register_task",
]
