"""Observation keys and spaces shared by every textenvs environment.

These keys are the contract between the environments and ``sb3_lm_policy``: the policy reads
nothing else. All token ids are ``int32`` and all masks ``int8`` so SB3's rollout buffers store
them compactly (never ``MultiDiscrete``: SB3 would one-hot encode it, ``L x V`` floats).

- ``prompt_or_input_encoded_pt`` / ``prompt_or_input_attention_mask_pt``: the prompt (or encoder
  input), left-padded to ``max_prompt_length``.
- ``context_encoded_pt`` / ``context_attention_mask_pt``: the tokens generated so far in this
  episode, right-padded to ``max_episode_length`` (what a seq2seq decoder reads).
- ``input_encoded_pt`` / ``input_attention_mask_pt``: prompt followed by the generated tokens,
  left-padded to ``max_prompt_length + max_episode_length`` so that the last position is always
  the one predicting the next token (what a causal LM reads).
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

PROMPT_IDS = "prompt_or_input_encoded_pt"
PROMPT_MASK = "prompt_or_input_attention_mask_pt"
CONTEXT_IDS = "context_encoded_pt"
CONTEXT_MASK = "context_attention_mask_pt"
INPUT_IDS = "input_encoded_pt"
INPUT_MASK = "input_attention_mask_pt"

TOKEN_DTYPE = np.int32
MASK_DTYPE = np.int8


def token_ids_space(length: int, vocab_size: int) -> spaces.Box:
    """A fixed-length vector of token ids in ``[0, vocab_size)``."""
    return spaces.Box(low=0, high=vocab_size - 1, shape=(length,), dtype=TOKEN_DTYPE)


def attention_mask_space(length: int) -> spaces.Box:
    """A fixed-length 0/1 mask (1 = real token)."""
    return spaces.Box(low=0, high=1, shape=(length,), dtype=MASK_DTYPE)


def text_observation_space(max_prompt_length: int, max_episode_length: int, vocab_size: int) -> spaces.Dict:
    """The Dict space of token-level text environments (see the module docstring for the keys)."""
    total = max_prompt_length + max_episode_length
    return spaces.Dict(
        {
            PROMPT_IDS: token_ids_space(max_prompt_length, vocab_size),
            PROMPT_MASK: attention_mask_space(max_prompt_length),
            CONTEXT_IDS: token_ids_space(max_episode_length, vocab_size),
            CONTEXT_MASK: attention_mask_space(max_episode_length),
            INPUT_IDS: token_ids_space(total, vocab_size),
            INPUT_MASK: attention_mask_space(total),
        }
    )
