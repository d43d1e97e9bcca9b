"""Token-level text generation (``TextGeneration-v0``)."""

from textenvs.text_generation.env import TextGenerationEnv
from textenvs.text_generation.tasks import TASKS, Task, get_task, register_task

__all__ = ["TASKS", "Task", "TextGenerationEnv", "get_task", "register_task"]
