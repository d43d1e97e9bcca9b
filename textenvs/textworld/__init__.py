"""TextWorldExpress games (``TextWorldCooking-v0`` and the others) for language-model agents."""

from textenvs.textworld.env import TextWorldEnv
from textenvs.textworld.games import GAMES

__all__ = ["GAMES", "TextWorldEnv"]
