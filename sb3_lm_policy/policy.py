"""An SB3 actor-critic policy whose actor is a Hugging Face language model."""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import torch
from gymnasium import spaces
from stable_baselines3.common.distributions import CategoricalDistribution
from stable_baselines3.common.policies import ActorCriticPolicy
from stable_baselines3.common.type_aliases import PyTorchObs, Schedule
from torch import nn
from transformers import PretrainedConfig

from sb3_lm_policy.modeling import config_to_dict, load_language_model
from textenvs.core.spaces import (
    ACTION_MASK,
    CANDIDATE_IDS,
    CANDIDATE_MASK,
    CONTEXT_IDS,
    CONTEXT_MASK,
    INPUT_IDS,
    INPUT_MASK,
    PROMPT_IDS,
    PROMPT_MASK,
)

CAUSAL_KEYS = (INPUT_IDS, INPUT_MASK)
SEQ2SEQ_KEYS = (PROMPT_IDS, PROMPT_MASK, CONTEXT_IDS, CONTEXT_MASK)
CHOICE_KEYS = (PROMPT_IDS, PROMPT_MASK, CANDIDATE_IDS, CANDIDATE_MASK, ACTION_MASK)


class LMActorCriticPolicy(ActorCriticPolicy):
    """Actor-critic policy for token-level text environments, usable with unmodified SB3 PPO and A2C.

    The actor is a causal or seq2seq language model (chosen from its config): the action
    distribution is the model's next-token distribution. The critic is a linear value head on the
    model's last hidden state at the same position, so the trunk is shared and no second model is
    held. Pretrained weights are kept (no orthogonal re-initialisation) and dropout is always off,
    so the PPO ratio is exactly 1 before the first update.

    Observations follow :mod:`textenvs.core.spaces`: causal models read ``input_encoded_pt`` /
    ``input_attention_mask_pt``; seq2seq models encode ``prompt_or_input_*`` and decode
    ``context_*``. When the observation holds candidate commands (``action_mask``), each action is
    a candidate, scored by the log-likelihood of its tokens given the prompt (summed, or averaged
    with ``length_normalize``); the prompt is run once and shared by all candidates, and invalid
    candidates get zero probability, so plain PPO needs no masking support.

    :param model_name_or_path: an embedded name (``"smollm2-135m-instruct"``), a hub name or a local path.
    :param model_config: instead of a name, a transformers config (or a dict with ``model_type``)
        for a randomly initialised model.
    :param lora: ``peft.LoraConfig`` arguments as a plain dict; then only the adapters and the value
        head train.
    :param dtype: ``"float32"``, ``"bfloat16"`` or ``"float16"`` for the language model.
    :param length_normalize: in choice mode, score a candidate by its mean token log-probability
        (as TWOSOME) instead of the sum (as GLAM).
    """

    def __init__(
        self,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        lr_schedule: Schedule,
        model_name_or_path: str | None = None,
        model_config: Mapping[str, Any] | PretrainedConfig | None = None,
        lora: Mapping[str, Any] | None = None,
        dtype: str = "float32",
        length_normalize: bool = False,
        use_sde: bool = False,
        **kwargs: Any,
    ) -> None:
        if use_sde:
            raise ValueError("use_sde=True is for continuous actions; LMActorCriticPolicy acts on token ids")
        if not isinstance(action_space, spaces.Discrete):
            raise ValueError(f"LMActorCriticPolicy needs a Discrete token action space, got {action_space}")
        if not isinstance(observation_space, spaces.Dict):
            raise ValueError(
                f"LMActorCriticPolicy needs a Dict observation of token ids (see textenvs.core.spaces), "
                f"got {observation_space}"
            )
        # set before super().__init__, which calls _build
        self.model_name_or_path = model_name_or_path
        self.model_config = config_to_dict(model_config) if model_config is not None else None
        self.lora = dict(lora) if lora is not None else None
        self.dtype = dtype
        self.length_normalize = length_normalize
        self.choice_mode = ACTION_MASK in observation_space.spaces
        kwargs["ortho_init"] = False
        super().__init__(observation_space, action_space, lr_schedule, **kwargs)

    # ------------------------------------------------------------------ construction
    def _build(self, lr_schedule: Schedule) -> None:
        self.lm = load_language_model(self.model_name_or_path, self.model_config, self.dtype, self.lora)
        self.is_encoder_decoder = bool(self.lm.config.is_encoder_decoder)
        self._check_spaces()
        hidden_size = self.lm.config.get_text_config().hidden_size
        self.value_head = nn.Linear(hidden_size, 1)
        nn.init.normal_(self.value_head.weight, std=hidden_size**-0.5)
        nn.init.zeros_(self.value_head.bias)
        self.lm.eval()
        trainable = [parameter for parameter in self.parameters() if parameter.requires_grad]
        self.optimizer = self.optimizer_class(trainable, lr=lr_schedule(1), **self.optimizer_kwargs)

    def _check_spaces(self) -> None:
        if self.choice_mode:
            needed, kind = CHOICE_KEYS, "choice-mode"
        else:
            needed = SEQ2SEQ_KEYS if self.is_encoder_decoder else CAUSAL_KEYS
            kind = "seq2seq" if self.is_encoder_decoder else "causal"
        missing = [key for key in needed if key not in self.observation_space.spaces]
        if missing:
            raise ValueError(
                f"the observation space lacks {missing}, which a {kind} LM policy reads "
                f"(keys present: {sorted(self.observation_space.spaces)})"
            )
        width = self.lm.get_output_embeddings().out_features
        if self.choice_mode:
            candidates = self.observation_space.spaces[ACTION_MASK].shape[0]
            if self.action_space.n != candidates:
                raise ValueError(
                    f"the action space has {self.action_space.n} actions but the observation {candidates} candidates"
                )
        elif self.action_space.n != width:
            raise ValueError(
                f"vocabulary mismatch: the env's action space has {self.action_space.n} token ids but the "
                f"model {self._model_label()} predicts {width}. Give the env the model's tokenizer (or "
                f"vocab_size={width})."
            )
        for key in needed:
            space = self.observation_space.spaces[key]
            if key.endswith("encoded_pt") and space.high.max() >= width:
                raise ValueError(
                    f"vocabulary mismatch: observation {key!r} holds ids up to {int(space.high.max())}, but the model "
                    f"{self._model_label()} has {width}. Give the env the model's tokenizer."
                )

    def _model_label(self) -> str:
        if self.model_name_or_path is not None:
            return repr(self.model_name_or_path)
        return f"built from a {self.model_config['model_type']} config"

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(
            model_name_or_path=self.model_name_or_path,
            model_config=self.model_config,
            lora=self.lora,
            dtype=self.dtype,
            length_normalize=self.length_normalize,
        )
        return data

    def train(self, mode: bool = True) -> LMActorCriticPolicy:
        """Switch SB3's training flag while keeping the LM's dropout off."""
        super().train(mode)
        self.lm.eval()
        return self

    # ------------------------------------------------------------------ actor and critic
    def logits_and_values(self, obs: PyTorchObs) -> tuple[torch.Tensor, torch.Tensor]:
        """Next-token logits ``[B, V]`` (float32) and values ``[B, 1]`` for a batch of observations."""
        logits, hidden = self._next_token(self.lm, obs)
        return logits.float(), self.value_head(hidden.float())

    def _next_token(self, lm: nn.Module, obs: PyTorchObs) -> tuple[torch.Tensor, torch.Tensor]:
        """Action logits and the hidden state the value head reads: next-token logits at the position
        that predicts the next token, or in choice mode the candidates' scores."""
        if self.choice_mode:
            return self._score_candidates(lm, obs)
        if self.is_encoder_decoder:
            return self._seq2seq_step(lm, obs)
        return self._causal_step(lm, obs)

    @staticmethod
    def _causal_step(lm: nn.Module, obs: PyTorchObs) -> tuple[torch.Tensor, torch.Tensor]:
        ids, mask = _trim_left_padding(obs[INPUT_IDS], obs[INPUT_MASK])
        out = lm(
            input_ids=ids,
            attention_mask=mask,
            position_ids=_positions(mask),
            output_hidden_states=True,
            logits_to_keep=1,
            use_cache=False,
        )
        return out.logits[:, -1], out.hidden_states[-1][:, -1]

    def _seq2seq_step(self, lm: nn.Module, obs: PyTorchObs) -> tuple[torch.Tensor, torch.Tensor]:
        context_mask = obs[CONTEXT_MASK].long()
        generated = context_mask.sum(-1)  # the decision is at decoder position `generated`
        out = self._seq2seq_forward(lm, obs, width=int(generated.max()))
        rows = torch.arange(len(generated), device=generated.device)
        return out.logits[rows, generated], out.decoder_hidden_states[-1][rows, generated]

    def _seq2seq_forward(self, lm: nn.Module, obs: PyTorchObs, width: int) -> Any:
        """Encoder on the prompt, decoder on the start token and the first ``width`` generated tokens."""
        enc_ids, enc_mask = _trim_left_padding(obs[PROMPT_IDS], obs[PROMPT_MASK])
        context, context_mask = obs[CONTEXT_IDS].long(), obs[CONTEXT_MASK].long()
        start = torch.full_like(context[:, :1], self.lm.config.decoder_start_token_id)
        return lm(
            input_ids=enc_ids,
            attention_mask=enc_mask,
            decoder_input_ids=torch.cat([start, context[:, :width]], dim=1),
            decoder_attention_mask=torch.cat([torch.ones_like(start), context_mask[:, :width]], dim=1),
            output_hidden_states=True,
            use_cache=False,
        )

    def _score_candidates(self, lm: nn.Module, obs: PyTorchObs) -> tuple[torch.Tensor, torch.Tensor]:
        """Log-likelihood of each valid candidate command given the prompt ``[B, A]`` (invalid: dtype min)."""
        prompt_ids, prompt_mask = _trim_left_padding(obs[PROMPT_IDS], obs[PROMPT_MASK])
        action_mask = obs[ACTION_MASK].bool()
        rows, columns = action_mask.nonzero(as_tuple=True)  # one pair per valid candidate
        candidate_mask = obs[CANDIDATE_MASK].long()[rows, columns]
        length = max(int(candidate_mask.sum(-1).max()), 1) if len(rows) else 1
        candidates, candidate_mask = obs[CANDIDATE_IDS].long()[rows, columns, :length], candidate_mask[:, :length]
        if self.is_encoder_decoder:
            token_log_probs, hidden = self._seq2seq_candidates(
                lm, prompt_ids, prompt_mask, rows, candidates, candidate_mask
            )
        else:
            token_log_probs, hidden = self._causal_candidates(
                lm, prompt_ids, prompt_mask, rows, candidates, candidate_mask
            )
        totals = (token_log_probs * candidate_mask).sum(-1)
        if self.length_normalize:
            totals = totals / candidate_mask.sum(-1).clamp(min=1)
        scores = torch.full(action_mask.shape, torch.finfo(totals.dtype).min, dtype=totals.dtype, device=totals.device)
        scores[rows, columns] = totals
        return scores, hidden

    @staticmethod
    def _causal_candidates(
        lm: nn.Module,
        prompt_ids: torch.Tensor,
        prompt_mask: torch.Tensor,
        rows: torch.Tensor,
        candidates: torch.Tensor,
        candidate_mask: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The prompt once with a KV cache, then every candidate on a copy of its row's cache."""
        out = lm(
            input_ids=prompt_ids,
            attention_mask=prompt_mask,
            position_ids=_positions(prompt_mask),
            output_hidden_states=True,
            use_cache=True,
            logits_to_keep=1,
        )
        prompt_log_probs = torch.log_softmax(out.logits[:, -1].float(), dim=-1)
        hidden = out.hidden_states[-1][:, -1]
        cache = out.past_key_values
        cache.batch_select_indices(rows)
        start = prompt_mask.sum(-1)[rows].unsqueeze(-1)
        follow = lm(
            input_ids=candidates,
            attention_mask=torch.cat([prompt_mask[rows], candidate_mask], dim=1),
            position_ids=start + torch.arange(candidates.shape[1], device=candidates.device),
            past_key_values=cache,
            use_cache=True,
        )
        # token j of a candidate is predicted by the prompt's last position (j = 0) or by token j - 1
        next_log_probs = torch.log_softmax(follow.logits[:, :-1].float(), dim=-1)
        first = prompt_log_probs[rows].gather(-1, candidates[:, :1])
        rest = next_log_probs.gather(-1, candidates[:, 1:].unsqueeze(-1)).squeeze(-1)
        return torch.cat([first, rest], dim=1), hidden

    def _seq2seq_candidates(
        self,
        lm: nn.Module,
        prompt_ids: torch.Tensor,
        prompt_mask: torch.Tensor,
        rows: torch.Tensor,
        candidates: torch.Tensor,
        candidate_mask: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The encoder once per prompt; the decoder reads each candidate against its row's encoding."""
        encoder_out = lm.get_encoder()(input_ids=prompt_ids, attention_mask=prompt_mask)
        encoded = encoder_out.last_hidden_state
        start = torch.full_like(candidates[:, :1], self.lm.config.decoder_start_token_id)
        decoded = lm(
            encoder_outputs=(encoded[rows],),
            attention_mask=prompt_mask[rows],
            decoder_input_ids=torch.cat([start, candidates[:, :-1]], dim=1),
            decoder_attention_mask=torch.cat([torch.ones_like(start), candidate_mask[:, :-1]], dim=1),
            use_cache=False,
        )
        token_log_probs = (
            torch.log_softmax(decoded.logits.float(), dim=-1).gather(-1, candidates.unsqueeze(-1)).squeeze(-1)
        )
        # the value reads the decoder's state before any command token, once per prompt
        first = lm(
            encoder_outputs=(encoded,),
            attention_mask=prompt_mask,
            decoder_input_ids=torch.full_like(prompt_ids[:, :1], self.lm.config.decoder_start_token_id),
            output_hidden_states=True,
            use_cache=False,
        )
        return token_log_probs, first.decoder_hidden_states[-1][:, 0]

    # ------------------------------------------------------------------ frozen reference (KL penalty)
    def freeze_reference(self, reference: nn.Module | None = None) -> None:
        """Keep the current LM (or ``reference``) as the frozen reference of :meth:`reference_logits`.

        With LoRA nothing is copied: the reference is the base model with the adapters disabled.
        Otherwise a frozen copy is held outside the module tree, so it is never trained or saved.
        """
        if self.lora is not None:
            return
        reference = copy.deepcopy(self.lm) if reference is None else reference
        self.__dict__["_reference_lm"] = reference.to(self.device).requires_grad_(False).eval()

    @property
    def has_reference(self) -> bool:
        return self.lora is not None or self.__dict__.get("_reference_lm") is not None

    @contextlib.contextmanager
    def reference_model(self) -> Iterator[nn.Module]:
        """The frozen reference LM (see :meth:`freeze_reference`), inside a no-grad context."""
        with torch.no_grad():
            if self.lora is not None:
                with self.lm.disable_adapter():
                    yield self.lm
            else:
                reference = self.__dict__.get("_reference_lm")
                if reference is None:
                    raise RuntimeError("no reference model: call policy.freeze_reference() first")
                yield reference

    def reference_logits(self, obs: PyTorchObs) -> torch.Tensor:
        """Next-token logits ``[B, V]`` of the frozen reference."""
        with self.reference_model() as reference:
            return self._next_token(reference, obs)[0].float()

    def generated_token_log_probs(self, obs: PyTorchObs, reference: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
        """Teacher-forced log-probabilities of every generated token of ``obs`` in one forward.

        :param reference: score with the frozen reference instead of the policy.
        :return: ``(log_probs, mask)``, both ``[B, max_episode_length]`` and aligned with
            ``context_encoded_pt``; ``mask`` marks the generated tokens.
        """
        context, context_mask = obs[CONTEXT_IDS].long(), obs[CONTEXT_MASK].long()
        width = context.shape[1]
        manager = self.reference_model() if reference else contextlib.nullcontext(self.lm)
        with manager as lm:
            if self.is_encoder_decoder:
                logits = self._seq2seq_forward(lm, obs, width).logits[:, :width]
            else:
                ids, mask = _trim_left_padding(obs[INPUT_IDS], obs[INPUT_MASK])
                logits = lm(input_ids=ids, attention_mask=mask, position_ids=_positions(mask), use_cache=False).logits
                logits = _align_causal_logits(logits, context_mask)
        log_probs = torch.log_softmax(logits.float(), dim=-1).gather(-1, context.unsqueeze(-1)).squeeze(-1)
        return log_probs * context_mask, context_mask

    def _distribution(self, logits: torch.Tensor) -> CategoricalDistribution:
        return self.action_dist.proba_distribution(action_logits=logits)

    def forward(self, obs: PyTorchObs, deterministic: bool = False) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        logits, values = self.logits_and_values(obs)
        distribution = self._distribution(logits)
        actions = distribution.get_actions(deterministic=deterministic)
        return actions, values, distribution.log_prob(actions)

    def evaluate_actions(
        self, obs: PyTorchObs, actions: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        logits, values = self.logits_and_values(obs)
        distribution = self._distribution(logits)
        return values, distribution.log_prob(actions.long().flatten()), distribution.entropy()

    def get_distribution(self, obs: PyTorchObs) -> CategoricalDistribution:
        return self._distribution(self.logits_and_values(obs)[0])

    def predict_values(self, obs: PyTorchObs) -> torch.Tensor:
        return self.logits_and_values(obs)[1]

    def _predict(self, observation: PyTorchObs, deterministic: bool = False) -> torch.Tensor:
        return self.get_distribution(observation).get_actions(deterministic=deterministic)

    # ------------------------------------------------------------------ export
    def save_pretrained(self, directory: str | Path) -> None:
        """Write the LM (or its LoRA adapters) in Hugging Face format, plus ``value_head.safetensors``."""
        from safetensors.torch import save_file

        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.lm.save_pretrained(directory)
        save_file(
            {k: v.detach().cpu().contiguous() for k, v in self.value_head.state_dict().items()},
            directory / "value_head.safetensors",
        )
        (directory / "sb3_lm_policy.json").write_text(
            json.dumps({"lora": self.lora is not None, "hidden_size": self.value_head.in_features}, indent=2)
        )


def _trim_left_padding(ids: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Left-padded ids and mask as ``long``, without the columns that are padding in every row."""
    mask = mask.long()
    first = int(mask.any(dim=0).long().argmax())
    return ids.long()[:, first:], mask[:, first:]


def _positions(mask: torch.Tensor) -> torch.Tensor:
    """Position ids that start at 0 on each row's first real token, whatever its left padding."""
    return (mask.cumsum(-1) - 1).clamp(min=0)


def _align_causal_logits(logits: torch.Tensor, context_mask: torch.Tensor) -> torch.Tensor:
    """Pick, for each generated token, the causal logits that predicted it.

    In ``input_encoded_pt`` the generated tokens are the last ``n`` positions of each row, so the
    logits predicting them are at positions ``-n-1 .. -2``. Returns ``[B, max_episode_length, V]``
    right-aligned like ``context_encoded_pt`` (rows past ``n`` hold arbitrary logits, masked later).
    """
    batch, width = context_mask.shape
    generated = context_mask.sum(-1, keepdim=True)  # [B, 1]
    offsets = torch.arange(width, device=logits.device).unsqueeze(0)  # [1, W]
    positions = (logits.shape[1] - 1 - generated + offsets).clamp(0, logits.shape[1] - 1)
    return logits.gather(1, positions.unsqueeze(-1).expand(batch, width, logits.shape[-1]))
