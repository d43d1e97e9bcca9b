import pytest

from textenvs.core.datapool import Sample
from textenvs.core.rewards import REWARDS, TextReward, make_reward, register_reward

CAT = Sample(id="s", prompt="say cat", references=("the cat sat", "a cat sat"))


def score(name, text, sample=CAT, **options):
    return make_reward({"name": name, **options})(text, sample)[0]


def test_exact_match():
    assert score("exact_match", " the cat sat ") == 1.0
    assert score("exact_match", "The cat sat") == 0.0
    assert score("exact_match", "The cat sat", case_sensitive=False) == 1.0


def test_char_and_word_accuracy_match_hand_computed_error_rates():
    # "the cat sit" vs "the cat sat": 1 substituted character of 11; 1 substituted word of 3
    assert score("char_accuracy", "the cat sit") == pytest.approx(1 - 1 / 11)
    assert score("word_accuracy", "the cat sit") == pytest.approx(1 - 1 / 3)
    # many insertions: the error rate is clipped at 1
    assert score("word_accuracy", "x " * 20) == 0.0
    assert score("char_accuracy", "") == 0.0


def test_empty_reference_is_handled_explicitly():
    empty = Sample(id="e", prompt="p", references=("",))
    assert score("char_accuracy", "", empty) == 1.0
    assert score("char_accuracy", "words", empty) == 0.0


def test_bleu_chrf_rouge_rank_better_texts_higher():
    for name in ("bleu", "chrf", "rouge1", "rouge2", "rougeL"):
        assert score(name, "the cat sat") == pytest.approx(1.0), name
        assert score(name, "the cat sat") > score(name, "a dog ran away") >= 0.0, name


def test_sentiment_lexicon():
    positive, negative = score("sentiment", "a wonderful, great film"), score("sentiment", "awful and boring")
    assert positive > 0.75 and negative < 0.25
    assert score("sentiment", "awful and boring", target="negative") == pytest.approx(1 - negative)


def test_classifier_reward_on_a_tiny_model_built_in_code(tmp_path, char_tokenizer):
    from transformers import BertConfig, BertForSequenceClassification

    config = BertConfig(
        vocab_size=len(char_tokenizer),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        num_labels=2,
        id2label={0: "NEG", 1: "POS"},
        label2id={"NEG": 0, "POS": 1},
    )
    BertForSequenceClassification(config).save_pretrained(tmp_path)
    char_tokenizer.save_pretrained(tmp_path)
    pos = score("classifier", "good", model_name_or_path=str(tmp_path), label="POS")
    neg = score("classifier", "good", model_name_or_path=str(tmp_path), label="NEG")
    assert pos + neg == pytest.approx(1.0)
    with pytest.raises(ValueError, match="label 'MAYBE' is not one of"):
        make_reward({"name": "classifier", "model_name_or_path": str(tmp_path), "label": "MAYBE"})


def test_combination_weights_and_components():
    reward = make_reward({"exact_match": 2.0, "chrf": {"weight": 0.5}})
    total, components = reward("the cat sat", CAT)
    assert components == {"exact_match": 1.0, "chrf": pytest.approx(1.0)}
    assert total == pytest.approx(2.5)


def test_callables_and_custom_classes():
    def length(text, sample):
        return len(text)

    class Shout(TextReward):
        def score(self, text, sample):
            return float(text.isupper())

    total, components = make_reward([length, Shout()])("ABC", CAT)
    assert components == {"length": 3.0, "Shout": 1.0} and total == 4.0


def test_register_reward_and_unknown_names():
    register_reward("always_one_test", lambda: lambda text, sample: 1.0)
    assert score("always_one_test", "x") == 1.0
    with pytest.raises(ValueError, match="already registered"):
        register_reward("always_one_test", lambda: None)
    with pytest.raises(ValueError, match="unknown reward 'bluu'; registered rewards"):
        make_reward("bluu")
    REWARDS.pop("always_one_test")


def test_reference_rewards_need_references():
    with pytest.raises(ValueError, match="needs references, but sample 'n' has none"):
        make_reward("bleu")("text", Sample(id="n", prompt="p"))


def test_bad_weight_and_non_finite_scores():
    with pytest.raises(ValueError, match="weight of reward 'bleu' must be a finite number"):
        make_reward({"bleu": "high"})
    with pytest.raises(ValueError, match="returned nan"):
        make_reward(lambda text, sample: float("nan"))("x", CAT)


def test_semantic_similarity_with_the_packaged_minilm():
    tea = Sample(id="t", prompt="p", references=("I would love a cup of tea.",))
    paraphrase, unrelated = (
        score("similarity", "Some tea would be lovely.", tea),
        score("similarity", "The train is late.", tea),
    )
    assert 0.0 <= unrelated < 0.4 < 0.7 < paraphrase <= 1.0


def test_meteor_scores_or_says_what_data_it_needs(tmp_path, monkeypatch):
    import nltk

    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])  # a machine without WordNet data
    with pytest.raises(RuntimeError, match="needs NLTK's WordNet data"):
        make_reward("meteor")
