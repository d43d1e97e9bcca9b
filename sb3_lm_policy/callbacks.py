"""SB3 callbacks for text environments."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback


class RewardComponentsCallback(BaseCallback):
    """Logs the mean of each reward component over the episodes finished in a rollout.

    Reads ``info["reward_components"]`` at episode ends and records ``rollout/reward/<name>``, so
    every component of a combined reward gets its own TensorBoard curve.
    """

    def __init__(self, verbose: int = 0) -> None:
        super().__init__(verbose)
        self._scores: dict[str, list[float]] = defaultdict(list)

    def _on_step(self) -> bool:
        for info, done in zip(self.locals["infos"], self.locals["dones"], strict=True):
            if done and "reward_components" in info:
                for name, value in info["reward_components"].items():
                    self._scores[name].append(float(value))
        return True

    def _on_rollout_end(self) -> None:
        for name, values in self._scores.items():
            if values:
                self.logger.record(f"rollout/reward/{name}", float(np.mean(values)))
        self._scores.clear()
