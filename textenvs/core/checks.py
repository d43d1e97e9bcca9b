"""Argument checks shared by the environments, so every family words its errors the same way."""

from __future__ import annotations

from typing import Any

import numpy as np


def positive_int(name: str, value: Any) -> int:
    """``value`` as an ``int`` if it is a positive integer (not a bool), else a ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)
