import gymnasium as gym
import numpy as np
import pytest

from tests.conftest import EASY_COOKING
from textenvs.core.spaces import ACTION_MASK
from textenvs.textworld.demonstrations import (
    collect_demonstrations,
    evaluate_games,
    gold_path_action,
    random_valid_action,
)


@pytest.mark.parametrize("action_mode", ["choice", "token"])
def test_demonstrations_follow_the_gold_paths(textworld_tokenizer, action_mode):
    env = gym.make("TextWorldCooking-v0", tokenizer=textworld_tokenizer, action_mode=action_mode, **EASY_COOKING)
    try:
        demos = collect_demonstrations(env, n_games=2)
        assert len(demos) == len(demos.actions) and len(demos) > 10
        assert set(demos.observations) == set(env.observation_space.spaces)
        if action_mode == "choice":
            # every expert action is a valid candidate of its observation
            assert all(demos.observations[ACTION_MASK][i, a] for i, a in enumerate(demos.actions))
        else:
            assert (demos.actions == textworld_tokenizer.eos_token_id).sum() >= 20  # one EOS per command
    finally:
        env.close()


def test_baselines_gold_succeeds_always_random_rarely(textworld_tokenizer):
    env = gym.make("TextWorldCooking-v0", tokenizer=textworld_tokenizer, game_fold="test", **EASY_COOKING)
    try:
        gold = evaluate_games(env, gold_path_action, n_games=10)
        random = evaluate_games(env, random_valid_action(np.random.default_rng(0)), n_games=10)
    finally:
        env.close()
    assert gold["success_rate"] == 1.0 and gold["mean_score"] == pytest.approx(1.0) and gold["fold"] == "test"
    assert random["success_rate"] <= 0.2 and random["mean_moves"] > gold["mean_moves"]
