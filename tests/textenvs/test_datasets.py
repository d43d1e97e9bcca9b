import json

import pytest
from datasets import Dataset

from textenvs.text_generation.datasets import dialogue_pool, review_continuation_pool, summarization_pool


def test_review_continuation_from_an_imdb_like_dataset():
    reviews = Dataset.from_dict(
        {
            "text": ["one two three four five six", "short", "a b c d e f g<br />h"],
            "label": [1, 1, 0],
        }
    )
    pool = review_continuation_pool(reviews, prompt_words=3)
    assert [s.prompt for s in pool] == ["one two three", "a b c"]
    negatives = review_continuation_pool(reviews, prompt_words=3, label_key="label", label=0)
    assert [s.prompt for s in negatives] == ["a b c"]


def test_dialogue_pool_makes_one_sample_per_reply(tmp_path):
    path = tmp_path / "dialogues.jsonl"
    path.write_text(json.dumps({"id": "d", "dialog": ["Hi.", "Hello!", "How are you?", "Fine."]}) + "\n")
    pool = dialogue_pool(path, max_context_turns=2)
    assert [s.id for s in pool] == ["d/1", "d/2", "d/3"]
    assert pool[2].prompt == "Hello!\nHow are you?\n" and pool[2].references == ("Fine.",)


def test_summarization_pool_from_csv_with_cnn_dailymail_columns(tmp_path):
    path = tmp_path / "news.csv"
    path.write_text("article,highlights\nA long text.,Short.\n")
    pool = summarization_pool(path, text_key="article", summary_key="highlights")
    assert pool[0].prompt == "Summarize: A long text.\nSummary:" and pool[0].references == ("Short.",)


def test_unknown_file_type_is_named(tmp_path):
    with pytest.raises(ValueError, match=r"expected a \.jsonl or \.csv file"):
        dialogue_pool(tmp_path / "data.parquet")
