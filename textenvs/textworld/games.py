"""The TextWorldExpress games, their typed parameters and validation.

The simulator accepts a malformed or unknown parameter silently (the next reset returns an error
text as the observation), so every parameter is checked here: name, type and range.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Parameter:
    """A game parameter: its simulator name, kind (``int`` or ``bool``) and inclusive range."""

    simulator_name: str
    kind: type
    low: int = 0
    high: int = 1


@dataclass(frozen=True)
class Game:
    env_id: str
    simulator_name: str
    parameters: dict[str, Parameter]

    def parameter_string(self, values: dict[str, Any]) -> str:
        """Validate keyword arguments and render them as the simulator's ``"a=1,b=0"`` string."""
        unknown = sorted(set(values) - set(self.parameters))
        if unknown:
            known = sorted(self.parameters) or "none"
            raise TypeError(f"{self.env_id} got unknown game parameter(s) {unknown}; its parameters: {known}")
        parts = []
        for name, value in values.items():
            parameter = self.parameters[name]
            if parameter.kind is bool:
                if not isinstance(value, bool):
                    raise TypeError(f"{self.env_id}: {name} must be True or False, got {value!r}")
                value = int(value)
            elif isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{self.env_id}: {name} must be an integer, got {value!r}")
            elif not parameter.low <= value <= parameter.high:
                raise ValueError(f"{self.env_id}: {name} must be in [{parameter.low}, {parameter.high}], got {value}")
            parts.append(f"{parameter.simulator_name}={value}")
        return ",".join(parts)


def _int(simulator_name: str, low: int, high: int) -> Parameter:
    return Parameter(simulator_name, int, low, high)


def _bool(simulator_name: str) -> Parameter:
    return Parameter(simulator_name, bool)


_ROOMS = {"include_doors": _bool("includeDoors"), "limit_inventory_size": _bool("limitInventorySize")}

GAMES: dict[str, Game] = {
    game.env_id: game
    for game in (
        Game(
            "TextWorldCooking-v0",
            "cookingworld",
            {
                "num_locations": _int("numLocations", 1, 11),
                "num_ingredients": _int("numIngredients", 1, 5),
                "num_distractor_items": _int("numDistractorItems", 0, 10),
                **_ROOMS,
            },
        ),
        Game(
            "TextWorldTWC-v0",
            "twc",
            {
                "num_locations": _int("numLocations", 1, 3),
                "num_items_to_put_away": _int("numItemsToPutAway", 1, 4),
                **_ROOMS,
            },
        ),
        Game(
            "TextWorldCoin-v0",
            "coin",
            {
                "num_locations": _int("numLocations", 1, 11),
                "num_distractor_items": _int("numDistractorItems", 0, 10),
                **_ROOMS,
            },
        ),
        Game(
            "TextWorldMapReader-v0",
            "mapreader",
            {
                "num_locations": _int("numLocations", 1, 50),
                "max_distance_apart": _int("maxDistanceApart", 1, 8),
                "max_distractor_items_per_location": _int("maxDistractorItemsPerLocation", 0, 3),
                **_ROOMS,
            },
        ),
        Game("TextWorldArithmetic-v0", "arithmetic", {}),
        Game("TextWorldSorting-v0", "sorting", {}),
        Game(
            "TextWorldSimonSays-v0",
            "simonsays",
            {"game_length": _int("gameLength", 1, 100), "num_distractors": _int("numDistractors", 0, 5)},
        ),
        Game("TextWorldPeckingOrder-v0", "peckingorder", {}),
    )
}

FOLDS = ("train", "dev", "test")
