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

Environments whose actions are a choice among commands (TextWorld's ``action_mode="choice"``) add:

- ``action_candidates_encoded_pt`` / ``action_candidates_attention_mask_pt``: the candidate
  commands, ``(max_actions, max_action_length)``, each right-padded; rows past the valid ones are
  padding.
- ``action_mask``: ``(max_actions,)``, 1 for the candidates that are valid this step. A policy
  must give the others zero probability (it is a deterministic function of the observation, so
  plain PPO can mask them).
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
CANDIDATE_IDS = "action_candidates_encoded_pt"
CANDIDATE_MASK = "action_candidates_attention_mask_pt"
ACTION_MASK = "action_mask"

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


def choice_observation_space(
    max_prompt_length: int, max_actions: int, max_action_length: int, vocab_size: int
) -> spaces.Dict:
    """The text keys (with an empty one-token context) plus the candidate commands and their mask."""
    space = text_observation_space(max_prompt_length, 1, vocab_size)
    space.spaces[CANDIDATE_IDS] = spaces.Box(
        low=0, high=vocab_size - 1, shape=(max_actions, max_action_length), dtype=TOKEN_DTYPE
    )
    space.spaces[CANDIDATE_MASK] = spaces.Box(low=0, high=1, shape=(max_actions, max_action_length), dtype=MASK_DTYPE)
    space.spaces[ACTION_MASK] = attention_mask_space(max_actions)
    return space


def text_observation(
    prompt_ids: np.ndarray, prompt_mask: np.ndarray, generated: list[int], max_episode_length: int, pad_token_id: int
) -> dict[str, np.ndarray]:
    """The six text keys for a left-padded prompt and the tokens generated after it."""
    count = len(generated)
    generated_ids = np.asarray(generated, dtype=TOKEN_DTYPE)
    context_ids = np.full(max_episode_length, pad_token_id, dtype=TOKEN_DTYPE)
    context_mask = np.zeros(max_episode_length, dtype=MASK_DTYPE)
    context_ids[:count] = generated_ids
    context_mask[:count] = 1
    padding = max_episode_length - count
    return {
        PROMPT_IDS: prompt_ids.copy(),
        PROMPT_MASK: prompt_mask.copy(),
        CONTEXT_IDS: context_ids,
        CONTEXT_MASK: context_mask,
        # prompt then generation, left-padded as a whole: the last position predicts the next token
        INPUT_IDS: np.concatenate([np.full(padding, pad_token_id, TOKEN_DTYPE), prompt_ids, generated_ids]),
        INPUT_MASK: np.concatenate([np.zeros(padding, MASK_DTYPE), prompt_mask, np.ones(count, MASK_DTYPE)]),
    }
