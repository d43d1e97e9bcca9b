"""The TextWorldExpress simulator behind one env: a JVM started lazily, capped in memory, and
checked for liveness before every call so a dead JVM never hangs an episode."""

from __future__ import annotations

import os
import warnings
from typing import Any

from textenvs.textworld.games import Game

JVM_OPTIONS = "-Xmx256m -XX:+UseSerialGC"


class SimulatorDiedError(RuntimeError):
    """The simulator's JVM exited in the middle of an episode."""


class Simulator:
    """One TextWorldExpress game in its own JVM.

    :param step_limit: moves after which the simulator itself ends a game; the env's own limit
        is lower, so this only guards against runaway episodes.
    :param jvm_options: added to ``JAVA_TOOL_OPTIONS`` when the JVM starts (memory cap).
    """

    def __init__(self, game: Game, parameter_string: str, step_limit: int, jvm_options: str = JVM_OPTIONS) -> None:
        self.game, self.parameter_string = game, parameter_string
        self.step_limit, self.jvm_options = step_limit, jvm_options
        self._env: Any = None

    @property
    def alive(self) -> bool:
        return self._env is not None and self._env._gateway.java_process.poll() is None

    def _start(self) -> None:
        try:
            from textworld_express import TextWorldExpressEnv
        except ImportError as error:
            raise ImportError(
                "TextWorld envs need the 'textworld-express' package: pip install 'textenvs[textworld]'"
            ) from error
        previous = os.environ.get("JAVA_TOOL_OPTIONS")
        os.environ["JAVA_TOOL_OPTIONS"] = f"{previous} {self.jvm_options}".strip() if previous else self.jvm_options
        try:
            self._env = TextWorldExpressEnv(envStepLimit=self.step_limit)
        except FileNotFoundError as error:
            raise RuntimeError(
                "TextWorld envs need 'java' (17 or newer) on PATH; `make install` installs a JRE"
            ) from error
        finally:
            if previous is None:
                del os.environ["JAVA_TOOL_OPTIONS"]
            else:
                os.environ["JAVA_TOOL_OPTIONS"] = previous
        self._env.load(self.game.simulator_name, self.parameter_string)

    def reset(self, game_seed: int, fold: str, gold_path: bool = False) -> tuple[str, dict[str, Any]]:
        """Start the game ``game_seed`` of ``fold``; (re)starts the JVM when it is not running."""
        if self._env is not None and not self.alive:
            warnings.warn("the TextWorldExpress JVM had exited; starting a new one", RuntimeWarning, stacklevel=3)
            self._env = None
        if self._env is None:
            self._start()
        return self._env.reset(seed=game_seed, gameFold=fold, generateGoldPath=gold_path)

    def step(self, command: str) -> tuple[str, dict[str, Any]]:
        if not self.alive:
            raise SimulatorDiedError(
                "the TextWorldExpress JVM has exited (out of memory or killed): the episode is lost; call reset()"
            )
        observation, _, _, info = self._env.step(command)
        return observation, info

    def gold_actions(self) -> list[str]:
        return list(self._env.getGoldActionSequence())

    def valid_seeds(self, fold: str) -> list[int]:
        if self._env is None:
            self._start()
        getter = {"train": "getValidSeedsTrain", "dev": "getValidSeedsDev", "test": "getValidSeedsTest"}[fold]
        return sorted(getattr(self._env, getter)())

    def close(self) -> None:
        if self._env is not None:
            if self.alive:
                self._env.close()
            self._env = None
