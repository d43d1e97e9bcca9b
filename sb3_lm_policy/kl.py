"""A per-token KL penalty to a frozen reference model, for unmodified SB3 PPO/A2C.

``reward_t -= beta * (log pi(a_t|s_t) - log pi_ref(a_t|s_t))``: the KL shaping of Ziegler et al.
(2019), RL4LMs and TRL, which keeps PPO from drifting into text that games the reward. SB3 has no
hook between collecting a rollout and computing its advantages, so :class:`KLPenaltyCallback`
shapes the rewards in the buffer at the end of each rollout and recomputes returns and
advantages (GAE) from them; PPO then trains on the shaped advantages as usual.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from stable_baselines3.common.buffers import DictRolloutBuffer
from stable_baselines3.common.callbacks import BaseCallback

from sb3_lm_policy.config import REWARD_NORMALIZATIONS


class FixedKLController:
    """A constant KL coefficient."""

    def __init__(self, beta: float) -> None:
        if not math.isfinite(beta) or beta < 0:
            raise ValueError(f"the KL coefficient must be a finite number >= 0, got {beta!r}")
        self.beta = float(beta)

    def update(self, kl: float, n_steps: int) -> None:
        """A fixed coefficient does not move."""


class AdaptiveKLController(FixedKLController):
    """Moves beta towards a target KL (Ziegler et al., 2019):
    ``beta *= 1 + clip(kl / target - 1, -0.2, 0.2) * n_steps / horizon``.

    :param target: the mean per-token KL aimed at.
    :param horizon: timesteps over which a persistent error changes beta by about e^0.2.
    """

    def __init__(self, beta: float, target: float, horizon: int = 10_000) -> None:
        super().__init__(beta)
        if not math.isfinite(target) or target <= 0:
            raise ValueError(f"target_kl must be a finite number > 0, got {target!r}")
        if horizon <= 0:
            raise ValueError(f"horizon must be > 0, got {horizon!r}")
        self.target, self.horizon = float(target), int(horizon)

    def update(self, kl: float, n_steps: int) -> None:
        error = float(np.clip(kl / self.target - 1.0, -0.2, 0.2))
        self.beta *= 1.0 + error * n_steps / self.horizon


@dataclass
class RolloutKL:
    """What one rollout's shaping measured."""

    kl: np.ndarray  # [n_steps, n_envs] log pi(a|s) - log pi_ref(a|s) of the sampled actions: the penalty
    task_rewards: np.ndarray  # [n_steps, n_envs] rewards from the env, before shaping
    beta: float

    @property
    def kl_estimate(self) -> float:
        """Mean per-token KL by Schulman's k3 estimator ``(r - 1) - log r`` with ``r = pi_ref / pi``:
        unbiased like the mean log-ratio, but never negative and far less noisy, so the adaptive
        controller reacts to drift rather than to sampling noise."""
        return float(np.mean(np.expm1(-self.kl) + self.kl))


class KLPenaltyCallback(BaseCallback):
    """Subtract ``beta * KL`` to the frozen starting model from every token's reward.

    The reference is the policy's LM as it was when training started (or, with LoRA, the base
    model with the adapters disabled: no second copy). Logs ``rollout/kl`` (mean per-token KL, see
    :attr:`RolloutKL.kl_estimate`), ``rollout/kl_log_ratio`` (mean of the penalised log-ratios),
    ``rollout/kl_beta``, ``rollout/task_reward`` (mean env reward per step, before shaping) and
    ``rollout/shaped_reward``.

    :param kl_coef: beta, or its starting value when ``target_kl`` is given.
    :param target_kl: turn on the adaptive controller with this mean per-token KL target.
    :param horizon: the adaptive controller's horizon in timesteps.
    :param reward_normalization: applied to the env's rewards of each rollout before the
        penalty: ``"none"``, ``"scale"`` (divide by their standard deviation) or ``"whiten"``
        (subtract the mean, then divide). For a running normalisation use SB3's ``VecNormalize``.
    :param batch_size: observations per reference forward.
    """

    def __init__(
        self,
        kl_coef: float = 0.1,
        target_kl: float | None = None,
        horizon: int = 10_000,
        reward_normalization: str = "none",
        batch_size: int = 64,
        verbose: int = 0,
    ) -> None:
        super().__init__(verbose)
        if reward_normalization not in REWARD_NORMALIZATIONS:
            raise ValueError(
                f"reward_normalization must be one of {REWARD_NORMALIZATIONS}, got {reward_normalization!r}"
            )
        self.controller = (
            FixedKLController(kl_coef) if target_kl is None else AdaptiveKLController(kl_coef, target_kl, horizon)
        )
        self.reward_normalization = reward_normalization
        self.batch_size = batch_size
        self.last: RolloutKL | None = None

    def _on_training_start(self) -> None:
        policy = self.model.policy
        if not hasattr(policy, "reference_logits"):
            raise TypeError(f"KLPenaltyCallback needs an LMActorCriticPolicy, got {type(policy).__name__}")
        if not policy.has_reference:  # a later learn() keeps the reference of the first
            policy.freeze_reference()

    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        buffer = self.model.rollout_buffer
        if not isinstance(buffer, DictRolloutBuffer):
            raise TypeError(f"KLPenaltyCallback needs SB3's DictRolloutBuffer, got {type(buffer).__name__}")
        self.last = self.shape_rewards(buffer)
        buffer.compute_returns_and_advantage(last_values=self.locals["values"], dones=self.locals["dones"])
        self.controller.update(self.last.kl_estimate, buffer.buffer_size * buffer.n_envs)
        self.logger.record("rollout/kl", self.last.kl_estimate)
        self.logger.record("rollout/kl_log_ratio", float(self.last.kl.mean()))
        self.logger.record("rollout/kl_beta", self.last.beta)
        self.logger.record("rollout/task_reward", float(self.last.task_rewards.mean()))
        self.logger.record("rollout/shaped_reward", float(buffer.rewards.mean()))

    def shape_rewards(self, buffer: DictRolloutBuffer) -> RolloutKL:
        """Normalise the buffer's rewards and subtract the KL penalty, in place."""
        task_rewards = buffer.rewards.copy()
        kl = buffer.log_probs - self.reference_log_probs(buffer)
        rewards = task_rewards
        if self.reward_normalization == "whiten":
            rewards = (rewards - rewards.mean()) / (rewards.std() + 1e-8)
        elif self.reward_normalization == "scale":
            rewards = rewards / (rewards.std() + 1e-8)
        beta = self.controller.beta
        buffer.rewards[:] = rewards - beta * kl
        return RolloutKL(kl=kl, task_rewards=task_rewards, beta=beta)

    def reference_log_probs(self, buffer: DictRolloutBuffer) -> np.ndarray:
        """``log pi_ref(a|s)`` of every stored action, shaped like ``buffer.log_probs``."""
        policy = self.model.policy
        shape = buffer.log_probs.shape
        count = shape[0] * shape[1]
        observations = {key: value.reshape(count, *value.shape[2:]) for key, value in buffer.observations.items()}
        actions = buffer.actions.reshape(count)
        result = np.empty(count, dtype=np.float32)
        for start in range(0, count, self.batch_size):
            part = slice(start, start + self.batch_size)
            obs = policy.obs_to_tensor({key: value[part] for key, value in observations.items()})[0]
            logits = policy.reference_logits(obs)
            chosen = torch.as_tensor(actions[part], device=policy.device).long()
            result[part] = torch.log_softmax(logits, -1).gather(-1, chosen[:, None]).squeeze(-1).cpu().numpy()
        return result.reshape(shape)
