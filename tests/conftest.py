"""Shared fixtures: a tokenizer and tiny random models built in code (no downloads)."""

import os

# the tests never reach a model hub
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

import textenvs  # noqa: E402,F401
from textenvs.core.tokenization import build_char_tokenizer  # noqa: E402

torch.set_num_threads(min(2, torch.get_num_threads()))


@pytest.fixture(scope="session")
def char_tokenizer():
    return build_char_tokenizer()


def tiny_gpt2_config(vocab_size: int, **overrides) -> dict:
    config = dict(
        model_type="gpt2",
        vocab_size=vocab_size,
        n_layer=2,
        n_head=2,
        n_embd=32,
        n_positions=64,
        bos_token_id=1,
        eos_token_id=1,
    )
    return {**config, **overrides}


def tiny_t5_config(vocab_size: int) -> dict:
    return dict(
        model_type="t5",
        vocab_size=vocab_size,
        d_model=32,
        d_ff=64,
        d_kv=16,
        num_layers=2,
        num_heads=2,
        decoder_start_token_id=0,
        pad_token_id=0,
        eos_token_id=1,
    )


@pytest.fixture(params=["gpt2", "t5"])
def tiny_model_config(request, char_tokenizer):
    """A tiny causal (GPT-2) and a tiny seq2seq (T5) config over the char tokenizer's vocabulary."""
    builder = tiny_gpt2_config if request.param == "gpt2" else tiny_t5_config
    return builder(len(char_tokenizer))


TEXTWORLD_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789 .,:;!?'-\n()/+*="
#: the easy CookingWorld of the issue, with lengths that fit the character tokenizer
EASY_COOKING = dict(
    num_locations=1,
    num_ingredients=2,
    num_distractor_items=5,
    include_doors=False,
    max_prompt_length=96,
    max_action_length=48,
    max_command_length=48,
)


@pytest.fixture(scope="session")
def textworld_tokenizer():
    """A character tokenizer that covers the TextWorld games' text."""
    return build_char_tokenizer(TEXTWORLD_ALPHABET)
