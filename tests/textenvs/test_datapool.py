import json

import numpy as np
import pytest
from datasets import Dataset

from textenvs.core.datapool import DataPool, Sample


def test_jsonl_loader_reads_prompts_references_and_meta(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text(
        json.dumps({"id": "a", "prompt": "hi", "references": ["hello"], "topic": "greeting"})
        + "\n\n"
        + json.dumps({"prompt": "bye", "references": "goodbye"})
        + "\n"
    )
    pool = DataPool.from_jsonl(path)
    assert len(pool) == 2
    assert pool[0] == Sample(id="a", prompt="hi", references=("hello",), meta={"topic": "greeting"})
    assert pool[1].id == "1" and pool[1].references == ("goodbye",)


def test_malformed_jsonl_line_names_file_and_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"prompt": "ok"}\n{"prompt": oops}\n')
    with pytest.raises(ValueError, match=r"bad\.jsonl:2: malformed JSON"):
        DataPool.from_jsonl(path)


def test_record_without_prompt_is_named(tmp_path):
    path = tmp_path / "noprompt.jsonl"
    path.write_text('{"text": "x"}\n')
    with pytest.raises(ValueError, match="record 0: missing prompt key 'prompt'"):
        DataPool.from_jsonl(path)


def test_csv_loader_splits_multiple_references(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("id,prompt,references\nx,translate cat,chat|||chatte\n")
    pool = DataPool.from_csv(path)
    assert pool[0].references == ("chat", "chatte")


def test_hf_dataset_loader_with_custom_columns():
    dataset = Dataset.from_dict({"question": ["2+2?", "3+3?"], "answer": ["4", "6"], "level": [1, 2]})
    pool = DataPool.from_hf_dataset(dataset, prompt_key="question", references_key="answer", id_key=None)
    assert [s.prompt for s in pool] == ["2+2?", "3+3?"]
    assert pool[1].references == ("6",) and pool[1].meta == {"level": 2}


def test_empty_pool_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="empty"):
        DataPool([])
    path = tmp_path / "empty.jsonl"
    path.write_text("\n")
    with pytest.raises(ValueError, match="empty"):
        DataPool.from_jsonl(path)


def test_weighted_sampler_follows_weights():
    pool = DataPool([Sample("a", "a"), Sample("b", "b")], weights=[0.0, 1.0])
    rng = np.random.default_rng(0)
    assert {pool.sample(rng).id for _ in range(50)} == {"b"}
    pool = DataPool([Sample("a", "a"), Sample("b", "b")], weights=[3.0, 1.0])
    draws = [pool.sample(rng).id for _ in range(4000)]
    assert 0.72 < draws.count("a") / len(draws) < 0.78


@pytest.mark.parametrize("weights", [[1.0], [-1.0, 2.0], [0.0, 0.0], [float("nan"), 1.0]])
def test_bad_weights_are_rejected(weights):
    with pytest.raises(ValueError, match="weights"):
        DataPool([Sample("a", "a"), Sample("b", "b")], weights=weights)


def test_split_is_deterministic_and_disjoint():
    pool = DataPool([Sample(str(i), f"p{i}") for i in range(20)])
    first, rest = pool.split(0.8, seed=0)
    again, _ = pool.split(0.8, seed=0)
    assert [s.id for s in first] == [s.id for s in again]
    assert len(first) == 16 and len(rest) == 4
    assert not {s.id for s in first} & {s.id for s in rest}
