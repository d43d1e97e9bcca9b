"""Datapools for the RLHF-style tasks from users' own copies of the usual data sets.

Each function takes a ``.jsonl``/``.csv`` path or any iterable of records, such as a Hugging Face
``datasets.Dataset`` the user has locally (``load_dataset("imdb")`` where the hub is reachable);
column names default to those of the public data sets.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from textenvs.core.datapool import DataPool, Sample, read_records

Source = str | Path | Iterable[Mapping[str, Any]]

SUMMARY_TEMPLATE = "Summarize: {text}\nSummary:"


def review_continuation_pool(
    source: Source, text_key: str = "text", prompt_words: int = 12, label_key: str | None = None, label: Any = None
) -> DataPool:
    """IMDB-style sentiment continuation: the prompt is the start of each review.

    :param prompt_words: words of the review kept as the prompt (RL4LMs keeps about 64 tokens).
    :param label_key: with ``label``, keep only reviews with that label (e.g. negative ones to turn).
    """
    samples = []
    for index, record in enumerate(read_records(source)):
        if label_key is not None and record[label_key] != label:
            continue
        words = str(record[text_key]).replace("<br />", " ").split()
        if len(words) > prompt_words:
            samples.append(
                Sample(id=str(index), prompt=" ".join(words[:prompt_words]), meta={"review": record[text_key]})
            )
    return DataPool(samples)


def dialogue_pool(source: Source, turns_key: str = "dialog", max_context_turns: int = 4) -> DataPool:
    """DailyDialog-style response generation: every turn after the first is a sample whose prompt
    is the previous turns (one per line) and whose reference is that turn."""
    samples = []
    for index, record in enumerate(read_records(source)):
        turns = [str(turn).strip() for turn in record[turns_key]]
        dialogue_id = str(record.get("id", index))
        for position in range(1, len(turns)):
            context = turns[max(0, position - max_context_turns) : position]
            samples.append(
                Sample(id=f"{dialogue_id}/{position}", prompt="\n".join(context) + "\n", references=(turns[position],))
            )
    return DataPool(samples)


def summarization_pool(
    source: Source, text_key: str = "text", summary_key: str = "summary", template: str = SUMMARY_TEMPLATE
) -> DataPool:
    """Summarisation: the prompt is ``template`` filled with the text; the reference is the summary
    (for CNN/DailyMail use ``text_key="article", summary_key="highlights"``)."""
    samples = [
        Sample(
            id=str(record.get("id", index)),
            prompt=template.format(text=record[text_key]),
            references=(str(record[summary_key]),),
        )
        for index, record in enumerate(read_records(source))
    ]
    return DataPool(samples)
