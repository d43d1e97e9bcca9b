"""Building the Hugging Face model behind :class:`~sb3_lm_policy.LMActorCriticPolicy`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import torch
from transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    AutoModelForSeq2SeqLM,
    PretrainedConfig,
    PreTrainedModel,
)

from textenvs.core.pretrained import EMBEDDED_MODELS, is_embedded, resolve_pretrained

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def parse_dtype(dtype: str) -> torch.dtype:
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {sorted(DTYPES)}, got {dtype!r}")
    return DTYPES[dtype]


def config_from_dict(model_config: Mapping[str, Any] | PretrainedConfig) -> PretrainedConfig:
    """A transformers config from a plain dict holding ``model_type`` (or pass a config through)."""
    if isinstance(model_config, PretrainedConfig):
        return model_config
    if not isinstance(model_config, Mapping) or "model_type" not in model_config:
        raise ValueError(
            f"model_config must be a transformers config or a dict with a 'model_type' key, got {model_config!r}"
        )
    options = dict(model_config)
    return AutoConfig.for_model(options.pop("model_type"), **options)


def config_to_dict(model_config: Mapping[str, Any] | PretrainedConfig) -> dict[str, Any]:
    """The JSON-simple form kept in ``policy_kwargs`` (so it survives SB3's zip)."""
    if isinstance(model_config, PretrainedConfig):
        return {"model_type": model_config.model_type, **model_config.to_diff_dict()}
    return dict(model_config)


def auto_model_class(config: PretrainedConfig) -> type:
    """Seq2seq when the config says encoder-decoder, causal otherwise."""
    return AutoModelForSeq2SeqLM if config.is_encoder_decoder else AutoModelForCausalLM


def load_language_model(
    model_name_or_path: str | None = None,
    model_config: Mapping[str, Any] | PretrainedConfig | None = None,
    dtype: str = "float32",
    lora: Mapping[str, Any] | None = None,
) -> PreTrainedModel:
    """Load a pretrained model (embedded name, hub name or local path) or build one from a config.

    :param lora: keyword arguments of ``peft.LoraConfig``; only the adapters are then trainable.
    """
    if (model_name_or_path is None) == (model_config is None):
        raise ValueError("give exactly one of model_name_or_path and model_config")
    torch_dtype = parse_dtype(dtype)
    if model_config is not None:
        config = config_from_dict(model_config)
        model = auto_model_class(config).from_config(config, dtype=torch_dtype)
    else:
        model = _from_pretrained(model_name_or_path, torch_dtype)
    if lora is not None:
        model = _add_lora(model, lora)
    return model


def _from_pretrained(name: str, torch_dtype: torch.dtype) -> PreTrainedModel:
    if not isinstance(name, str) or not name:
        raise ValueError(f"model_name_or_path must be a non-empty string, got {name!r}")
    path = resolve_pretrained(name)
    try:
        config = AutoConfig.from_pretrained(path)
    except (OSError, ValueError) as error:
        where = "local directory" if os.path.isdir(name) else "name"
        raise ValueError(
            f"unknown model {name!r}: it is not an embedded model ({sorted(EMBEDDED_MODELS)}), and as a "
            f"{where} it could not be loaded with from_pretrained: {error}"
        ) from error
    model = auto_model_class(config).from_pretrained(path, dtype=torch_dtype)
    if is_embedded(name):
        model.config.name_or_path = name
    return model


def _add_lora(model: PreTrainedModel, lora: Mapping[str, Any]) -> PreTrainedModel:
    from peft import LoraConfig, TaskType, get_peft_model

    if not isinstance(lora, Mapping):
        raise ValueError(f"lora must be a dict of peft.LoraConfig arguments, got {lora!r}")
    task_type = TaskType.SEQ_2_SEQ_LM if model.config.is_encoder_decoder else TaskType.CAUSAL_LM
    return get_peft_model(model, LoraConfig(task_type=task_type, **lora))
