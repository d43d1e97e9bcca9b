"""Built-in ``TextGeneration-v0`` tasks: data shipped with the package, a default reward and lengths."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from textenvs.core.datapool import DataPool, Sample
from textenvs.core.rewards import RewardSpec

SPLITS = ("train", "test")


@dataclass(frozen=True)
class Task:
    """A named text-generation task.

    :param load: returns the datapool of a split (``"train"`` or ``"test"``).
    """

    name: str
    description: str
    load: Callable[[str], DataPool]
    reward: RewardSpec
    max_prompt_length: int
    max_episode_length: int


TASKS: dict[str, Task] = {}


def register_task(task: Task) -> None:
    if task.name in TASKS:
        raise ValueError(f"a task named {task.name!r} is already registered")
    TASKS[task.name] = task


def get_task(name: str) -> Task:
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; built-in tasks: {sorted(TASKS)}")
    return TASKS[name]


def _data_text(filename: str) -> str:
    return resources.files("textenvs.text_generation").joinpath("data", filename).read_text(encoding="utf-8")


def _seeded_split(pool: DataPool, split: str, train_fraction: float = 0.8) -> DataPool:
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {SPLITS}")
    train, test = pool.split(train_fraction, seed=0)
    return train if split == "train" else test


def _copy_pool(split: str) -> DataPool:
    words = _data_text("words.txt").split()
    pool = DataPool([Sample(id=word, prompt=f"copy: {word}\n", references=(word,)) for word in words])
    return _seeded_split(pool, split)


def _data_path(filename: str) -> Path:
    return Path(str(resources.files("textenvs.text_generation").joinpath("data", filename)))


def _dialogue_pool(split: str) -> DataPool:
    from textenvs.text_generation.datasets import dialogue_pool

    return _seeded_split(dialogue_pool(_data_path("dialogues.jsonl")), split)


def _summarization_pool(split: str) -> DataPool:
    from textenvs.text_generation.datasets import summarization_pool

    return _seeded_split(summarization_pool(_data_path("summaries.jsonl")), split)


def _sentiment_pool(split: str) -> DataPool:
    records = [json.loads(line) for line in _data_text("sentiment_prompts.jsonl").splitlines() if line]
    return _seeded_split(DataPool.from_records(records, source="sentiment prompt"), split)


register_task(
    Task(
        name="copy",
        description="Repeat the word after 'copy:' (reward: chrF against the word, which gives partial "
        "credit from the first episodes). Small enough for a tiny model to learn from scratch on a CPU "
        "in a minute, best with reward_mode='step'.",
        load=_copy_pool,
        reward="chrf",
        max_prompt_length=16,
        max_episode_length=8,
    )
)
register_task(
    Task(
        name="sentiment",
        description="Continue the opening of a film review positively (reward: VADER lexicon sentiment "
        "in [0, 1]), in the spirit of RL4LMs' IMDB task; 98 prompts shipped with the package.",
        load=_sentiment_pool,
        reward="sentiment",
        max_prompt_length=32,
        max_episode_length=16,
    )
)
register_task(
    Task(
        name="dialogue",
        description="Reply to a short everyday conversation, DailyDialog-style (reward: sentence-embedding "
        "similarity to the real reply with the packaged MiniLM; add 'meteor' or an intent 'classifier' in the "
        "reward spec where available); 28 dialogues shipped, load DailyDialog itself with dialogue_pool().",
        load=_dialogue_pool,
        reward="similarity",
        max_prompt_length=96,
        max_episode_length=24,
    )
)
register_task(
    Task(
        name="summarization",
        description="Summarise a short news paragraph in one sentence (reward: ROUGE-L F against the reference); "
        "22 paragraphs shipped, load your own with summarization_pool().",
        load=_summarization_pool,
        reward="rougeL",
        max_prompt_length=96,
        max_episode_length=24,
    )
)
