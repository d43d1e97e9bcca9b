"""Samples (id, prompt, references, meta) and a weighted pool to draw episodes from.

Loaders read JSON Lines, CSV and Hugging Face ``datasets`` objects; every bad record is
reported with where it came from (file and line, or row index).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Sample:
    """One episode's input: a prompt and zero or more reference outputs."""

    id: str
    prompt: str
    references: tuple[str, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)


class DataPool:
    """An immutable list of samples with an optional sampling weight each.

    :param samples: at least one sample.
    :param weights: non-negative, not all zero; uniform when omitted.
    """

    def __init__(self, samples: Sequence[Sample], weights: Sequence[float] | None = None) -> None:
        self.samples = list(samples)
        if not self.samples:
            raise ValueError("the datapool is empty: give at least one sample")
        if weights is None:
            self.probabilities = None
        else:
            weights_array = np.asarray(weights, dtype=np.float64)
            if weights_array.shape != (len(self.samples),):
                raise ValueError(f"got {weights_array.size} weights for {len(self.samples)} samples")
            if (weights_array < 0).any() or not np.isfinite(weights_array).all() or weights_array.sum() == 0:
                raise ValueError(f"weights must be finite, non-negative and not all zero, got {weights!r}")
            self.probabilities = weights_array / weights_array.sum()

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, index: int) -> Sample:
        return self.samples[index]

    def __iter__(self):
        return iter(self.samples)

    def sample(self, rng: np.random.Generator) -> Sample:
        """Draw one sample (by weight) with the caller's generator, e.g. an env's ``np_random``."""
        return self.samples[int(rng.choice(len(self.samples), p=self.probabilities))]

    def split(self, fraction: float, seed: int = 0) -> tuple[DataPool, DataPool]:
        """A deterministic shuffled split into ``(first, rest)`` with ``fraction`` of the samples first."""
        if not 0.0 < fraction < 1.0:
            raise ValueError(f"fraction must be in (0, 1), got {fraction}")
        order = np.random.default_rng(seed).permutation(len(self.samples))
        cut = int(round(fraction * len(order)))
        if cut in (0, len(order)):
            raise ValueError(f"a {fraction} split of {len(order)} samples leaves one side empty")
        return (
            DataPool([self.samples[i] for i in order[:cut]]),
            DataPool([self.samples[i] for i in order[cut:]]),
        )

    # ------------------------------------------------------------------ loaders
    @classmethod
    def from_records(
        cls,
        records: Iterable[Mapping[str, Any]],
        prompt_key: str = "prompt",
        references_key: str | None = "references",
        id_key: str | None = "id",
        weight_key: str | None = None,
        source: str = "record",
    ) -> DataPool:
        """Build a pool from mappings; other keys go to ``meta``.

        ``references`` may be a string or a list of strings; missing ids become the record index.
        ``source`` names where records come from in error messages.
        """
        samples, weights = [], []
        for index, record in enumerate(records):
            where = f"{source} {index}"
            samples.append(_sample_from_record(record, index, prompt_key, references_key, id_key, where))
            if weight_key is not None:
                if weight_key not in record:
                    raise ValueError(f"{where}: missing weight key {weight_key!r}")
                weights.append(float(record[weight_key]))
        if not samples:
            raise ValueError(f"the datapool is empty: no {source}s found")
        return cls(samples, weights if weight_key is not None else None)

    @classmethod
    def from_jsonl(cls, path: str | Path, **keys: Any) -> DataPool:
        """Read one JSON object per line (blank lines skipped); a bad line raises with file and line number."""
        return cls.from_records(read_jsonl(path), source=f"{path} record", **keys)

    @classmethod
    def from_csv(cls, path: str | Path, references_separator: str = "|||", **keys: Any) -> DataPool:
        """Read a CSV with a header row; several references in one cell are split on ``references_separator``."""
        references_key = keys.get("references_key", "references")
        rows = read_csv(path)
        for row in rows:
            if references_key and isinstance(row.get(references_key), str):
                row[references_key] = [r for r in row[references_key].split(references_separator) if r]
        return cls.from_records(rows, source=f"{path} row", **keys)

    @classmethod
    def from_hf_dataset(cls, dataset: Any, **keys: Any) -> DataPool:
        """Build a pool from a Hugging Face ``datasets.Dataset`` (or any iterable of dict rows)."""
        return cls.from_records(iter(dataset), source="dataset row", **keys)


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSON Lines file; a bad line raises with the file and line number."""
    path = Path(path)
    records = []
    with path.open(encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{line_number}: malformed JSON line: {error.msg}") from error
            if not isinstance(record, dict):
                raise ValueError(f"{path}:{line_number}: expected a JSON object, got {type(record).__name__}")
            records.append(record)
    return records


def read_csv(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a CSV file with a header row, as dicts."""
    with Path(path).open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def read_records(source: str | Path | Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Records from a ``.jsonl`` or ``.csv`` path, or from any iterable of mappings (a ``datasets.Dataset``)."""
    if isinstance(source, str | Path):
        suffix = Path(source).suffix.lower()
        if suffix in (".jsonl", ".json"):
            return read_jsonl(source)
        if suffix == ".csv":
            return read_csv(source)
        raise ValueError(f"cannot read {source}: expected a .jsonl or .csv file")
    return list(source)


def _sample_from_record(
    record: Mapping[str, Any],
    index: int,
    prompt_key: str,
    references_key: str | None,
    id_key: str | None,
    where: str,
) -> Sample:
    if prompt_key not in record:
        raise ValueError(f"{where}: missing prompt key {prompt_key!r} (keys: {sorted(record)})")
    prompt = record[prompt_key]
    if not isinstance(prompt, str):
        raise ValueError(f"{where}: prompt must be a string, got {type(prompt).__name__}")
    references: tuple[str, ...] = ()
    if references_key is not None and record.get(references_key) is not None:
        raw = record[references_key]
        raw = [raw] if isinstance(raw, str) else raw
        if not isinstance(raw, Sequence) or not all(isinstance(r, str) for r in raw):
            raise ValueError(f"{where}: references must be a string or a list of strings, got {raw!r}")
        references = tuple(raw)
    sample_id = str(record[id_key]) if id_key is not None and record.get(id_key) is not None else str(index)
    used = {prompt_key, references_key, id_key}
    meta = {key: value for key, value in record.items() if key not in used}
    return Sample(id=sample_id, prompt=prompt, references=references, meta=meta)
