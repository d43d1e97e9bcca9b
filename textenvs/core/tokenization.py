"""Tokenizer loading, vocabulary sizing and fixed-length encoding for the environments."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
from transformers import AutoConfig, AutoTokenizer, PreTrainedTokenizerBase, PreTrainedTokenizerFast

from textenvs.core.pretrained import resolve_pretrained
from textenvs.core.spaces import MASK_DTYPE, TOKEN_DTYPE

TokenizerLike = str | PreTrainedTokenizerBase

TRUNCATION_SIDES = ("left", "right")


def load_tokenizer(tokenizer: TokenizerLike) -> PreTrainedTokenizerBase:
    """Load a tokenizer from an embedded name, a hub name or a local path (or pass one through).

    A tokenizer without a padding token gets its EOS token as padding: padding is never inferred
    from ids (masks are carried), so sharing the id is harmless.
    """
    if isinstance(tokenizer, str):
        tokenizer = AutoTokenizer.from_pretrained(resolve_pretrained(tokenizer))
    elif not isinstance(tokenizer, PreTrainedTokenizerBase):
        raise TypeError(f"tokenizer must be a name, a path or a transformers tokenizer, got {type(tokenizer).__name__}")
    if tokenizer.pad_token_id is None:
        if tokenizer.eos_token_id is None:
            raise ValueError("the tokenizer has neither a pad token nor an EOS token; add one of them")
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def vocabulary_size(tokenizer_source: TokenizerLike, tokenizer: PreTrainedTokenizerBase) -> int:
    """Number of token actions: the model's logit width when the source names a model, else ``len(tokenizer)``.

    The two differ for some models (T5: 32128 logits for 32100 tokens); sizing from the model
    keeps the env's action space equal to the policy's output.
    """
    if isinstance(tokenizer_source, str):
        try:
            config = AutoConfig.from_pretrained(resolve_pretrained(tokenizer_source))
            size = getattr(config.get_text_config(), "vocab_size", None)
        except (OSError, ValueError):
            size = None  # a tokenizer-only directory: no model config to read
        if size:
            return max(int(size), len(tokenizer))
    return len(tokenizer)


def encode_left_padded(
    tokenizer: PreTrainedTokenizerBase,
    text: str,
    length: int,
    truncation_side: str = "left",
) -> tuple[np.ndarray, np.ndarray, bool]:
    """Encode ``text`` into exactly ``length`` ids, padded on the left.

    :param truncation_side: which end to cut when the text is too long (``"left"`` keeps the
        end of the prompt, next to where generation starts).
    :return: ``(ids, mask, truncated)``. An empty text becomes the BOS token (EOS where there is none).
    """
    if truncation_side not in TRUNCATION_SIDES:
        raise ValueError(f"truncation_side must be one of {TRUNCATION_SIDES}, got {truncation_side!r}")
    token_ids = tokenizer(text, add_special_tokens=True)["input_ids"]
    if not token_ids:
        # an empty prompt still needs one position for the model to predict from
        start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
        token_ids = [start] if start is not None else []
    truncated = len(token_ids) > length
    if truncated:
        token_ids = token_ids[-length:] if truncation_side == "left" else token_ids[:length]
    return (*left_pad(token_ids, length, tokenizer.pad_token_id), truncated)


def left_pad(token_ids: Sequence[int], length: int, pad_token_id: int) -> tuple[np.ndarray, np.ndarray]:
    """Place ``token_ids`` at the end of a ``length`` vector of padding; return ids and mask."""
    ids = np.full(length, pad_token_id, dtype=TOKEN_DTYPE)
    mask = np.zeros(length, dtype=MASK_DTYPE)
    if token_ids:
        ids[length - len(token_ids) :] = token_ids
        mask[length - len(token_ids) :] = 1
    return ids, mask


DEFAULT_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789 .,:;!?'-\n"


def build_char_tokenizer(alphabet: str = DEFAULT_ALPHABET) -> PreTrainedTokenizerFast:
    """A character-level tokenizer built in code (no files), for tiny models and tests.

    Ids: ``<pad>`` 0, ``<eos>`` 1, ``<unk>`` 2, then one id per character of ``alphabet``.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    if len(set(alphabet)) != len(alphabet):
        raise ValueError(f"alphabet has repeated characters: {alphabet!r}")
    vocab = {"<pad>": 0, "<eos>": 1, "<unk>": 2}
    vocab.update({char: index + 3 for index, char in enumerate(alphabet)})
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    backend.decoder = decoders.Fuse()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return PreTrainedTokenizerFast(
            tokenizer_object=backend, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>"
        )
