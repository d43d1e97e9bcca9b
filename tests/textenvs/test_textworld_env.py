import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gymnasium_check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import SubprocVecEnv

from tests.conftest import EASY_COOKING
from textenvs.core.spaces import ACTION_MASK, CANDIDATE_IDS, CANDIDATE_MASK
from textenvs.textworld import GAMES
from textenvs.textworld.simulator import SimulatorDiedError

#: room for every game's longest prompt and command in characters
LENGTHS = {"max_prompt_length": 256, "max_action_length": 64, "max_command_length": 64}


def make(textworld_tokenizer, env_id="TextWorldCooking-v0", **kwargs):
    game = EASY_COOKING if env_id == "TextWorldCooking-v0" else {}
    return gym.make(env_id, tokenizer=textworld_tokenizer, **{**game, **LENGTHS, **kwargs})


def play_gold(env, textworld_tokenizer, actions, info):
    total, terminated = 0.0, False
    for command in actions:
        if env.unwrapped.action_mode == "choice":
            steps = [info["valid_actions"].index(command)]
        else:
            steps = textworld_tokenizer(command)["input_ids"] + [textworld_tokenizer.eos_token_id]
        for step in steps:
            _, reward, terminated, truncated, info = env.step(step)
            total += reward
    return total, terminated, info


@pytest.mark.parametrize("action_mode", ["choice", "token"])
@pytest.mark.parametrize("env_id", sorted(GAMES))
def test_both_checkers_pass_for_every_game_and_mode(textworld_tokenizer, env_id, action_mode):
    env = make(textworld_tokenizer, env_id, action_mode=action_mode)
    try:
        gymnasium_check_env(env.unwrapped, skip_render_check=True)
        sb3_check_env(env)
    finally:
        env.close()


@pytest.mark.parametrize("action_mode", ["choice", "token"])
@pytest.mark.parametrize("fold", ["train", "dev", "test"])
def test_gold_paths_reach_success(textworld_tokenizer, fold, action_mode):
    env = make(textworld_tokenizer, game_fold=fold, action_mode=action_mode)
    try:
        for index in (0, 7, 42):
            _, info = env.reset(options={"game_index": index, "gold_path": True})
            gold = info["gold_actions"]
            total, terminated, info = play_gold(env, textworld_tokenizer, gold, info)
            assert info["gold_actions"] == gold  # kept in info for the whole episode
            assert terminated and info["success"] and not info["failure"]
            assert total == pytest.approx(1.0) and info["score"] == pytest.approx(1.0)
    finally:
        env.close()


def test_choice_observation_lists_sorted_valid_commands(textworld_tokenizer):
    env = make(textworld_tokenizer)
    try:
        obs, info = env.reset(seed=3)
        commands = info["valid_actions"]
        assert commands == sorted(commands)
        assert obs[ACTION_MASK].sum() == len(commands) and obs[ACTION_MASK][len(commands) :].sum() == 0
        first = obs[CANDIDATE_IDS][0][obs[CANDIDATE_MASK][0].astype(bool)]
        assert textworld_tokenizer.decode(first) == " " + commands[0]
        with pytest.warns(RuntimeWarning, match="past the .* valid commands"):
            _, reward, _, _, info = env.step(len(commands))
        assert info["invalid_action"] and info["moves"] == 1 and reward == 0.0
        with pytest.raises(ValueError, match=r"integer command index in \[0, 128\)"):
            env.step(128)
    finally:
        env.close()


def test_seeds_replay_games_and_folds_are_disjoint(textworld_tokenizer):
    env = make(textworld_tokenizer)
    try:
        first = [env.reset(seed=11)[1]["game_seed"]] + [env.reset()[1]["game_seed"] for _ in range(3)]
        again = [env.reset(seed=11)[1]["game_seed"]] + [env.reset()[1]["game_seed"] for _ in range(3)]
        assert first == again
        obs_a, _ = env.reset(seed=5)
        obs_b, _ = env.reset(seed=5)
        for key in obs_a:
            np.testing.assert_array_equal(obs_a[key], obs_b[key])
    finally:
        env.close()
    train, test = make(textworld_tokenizer, game_fold="train"), make(textworld_tokenizer, game_fold="test")
    try:
        train_seeds = {train.reset(seed=s)[1]["game_seed"] for s in range(20)}
        test_seeds = {test.reset(seed=s)[1]["game_seed"] for s in range(20)}
        assert not train_seeds & test_seeds and min(test_seeds) >= 20000
    finally:
        train.close()
        test.close()


def test_step_limit_truncates_and_invalid_commands_cost_a_move(textworld_tokenizer):
    env = make(textworld_tokenizer, action_mode="token", max_steps=2)
    try:
        env.reset(seed=0)
        for expected_truncated in (False, True):
            for token in textworld_tokenizer("dance")["input_ids"]:
                env.step(token)
            _, reward, terminated, truncated, info = env.step(textworld_tokenizer.eos_token_id)
            assert info["command"] == "dance" and reward == 0.0 and not terminated
            assert truncated is expected_truncated
        assert info["moves"] == 2
    finally:
        env.close()


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"num_locations": 12}, ValueError, r"num_locations must be in \[1, 11\], got 12"),
        ({"num_locations": 1.5}, TypeError, "num_locations must be an integer"),
        ({"include_doors": 1}, TypeError, "include_doors must be True or False"),
        ({"memorization": 1}, TypeError, r"unknown game parameter\(s\) \['memorization'\]"),
        ({"action_mode": "typing"}, ValueError, "action_mode must be one of"),
        ({"game_fold": "valid"}, ValueError, "game_fold must be one of"),
        ({"max_steps": 0}, ValueError, "max_steps must be a positive integer"),
        ({"vocab_size": 0}, ValueError, "vocab_size must be a positive integer"),
    ],
)
def test_bad_parameters_are_named(textworld_tokenizer, kwargs, error, message):
    with pytest.raises(error, match=message):
        make(textworld_tokenizer, **kwargs)


def test_subproc_vec_env_with_two_workers(textworld_tokenizer):
    # "module:id" makes gym.make import textenvs inside the worker processes, which registers the envs
    env = make_vec_env(
        "textenvs:TextWorldCooking-v0",
        n_envs=2,
        seed=0,
        vec_env_cls=SubprocVecEnv,
        env_kwargs={
            **EASY_COOKING,
            "tokenizer": textworld_tokenizer,
            "max_prompt_length": 256,
            "max_action_length": 64,
        },
    )
    try:
        obs = env.reset()
        assert obs[ACTION_MASK].shape == (2, 128)
        obs, rewards, dones, infos = env.step(np.zeros(2, dtype=np.int64))
        assert [info["moves"] for info in infos] == [1, 1]
    finally:
        env.close()


def test_a_dead_jvm_is_restarted_on_reset_and_reported_on_step(textworld_tokenizer):
    env = make(textworld_tokenizer)
    try:
        env.reset(seed=0)
        env.unwrapped.simulator._env._gateway.java_process.kill()
        env.unwrapped.simulator._env._gateway.java_process.wait()
        with pytest.raises(SimulatorDiedError, match="JVM has exited"):
            env.step(0)
        with pytest.warns(RuntimeWarning, match="starting a new one"):
            _, info = env.reset(seed=0)
        assert env.step(0)[4]["moves"] == 1
    finally:
        env.close()
