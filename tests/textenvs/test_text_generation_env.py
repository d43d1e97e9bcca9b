import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gymnasium_check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import textenvs
from textenvs.core.datapool import DataPool, Sample
from textenvs.core.spaces import CONTEXT_IDS, CONTEXT_MASK, INPUT_IDS, INPUT_MASK, PROMPT_IDS, PROMPT_MASK


def make(char_tokenizer, **kwargs):
    return gym.make("TextGeneration-v0", tokenizer=char_tokenizer, **{"task": "copy", **kwargs})


def ids(tokenizer, text):
    return tokenizer(text)["input_ids"]


@pytest.mark.parametrize("task", sorted(textenvs.TASKS))
def test_both_checkers_pass_for_every_builtin_task(char_tokenizer, task):
    env = make(char_tokenizer, task=task)
    gymnasium_check_env(env.unwrapped, skip_render_check=True)
    sb3_check_env(env)


def test_every_registered_env_id_is_checked():
    """Each id textenvs registers has checker tests: TextGeneration here, the games in test_textworld_env."""
    from textenvs.textworld import GAMES

    assert set(textenvs.ENV_IDS) == {"TextGeneration-v0", *GAMES}
    assert all(env_id in gym.registry for env_id in textenvs.ENV_IDS)


def test_observation_layout_and_episode_end_at_eos(char_tokenizer):
    env = make(char_tokenizer, max_prompt_length=12, max_episode_length=6)
    obs, info = env.reset(options={"sample_index": 0})
    prompt = ids(char_tokenizer, info["prompt"])
    assert obs[PROMPT_IDS].dtype == np.int32 and obs[PROMPT_MASK].dtype == np.int8
    assert obs[PROMPT_IDS][-len(prompt) :].tolist() == prompt and obs[PROMPT_MASK].sum() == len(prompt)
    assert obs[CONTEXT_MASK].sum() == 0 and obs[INPUT_IDS].shape == (18,)
    word = info["references"][0]
    for step, token in enumerate(ids(char_tokenizer, word), start=1):
        obs, reward, terminated, truncated, info = env.step(token)
        assert not terminated and not truncated and reward == 0.0
        assert obs[CONTEXT_MASK].sum() == step
        # left-padded prompt + generation: the last real token is always at the end
        assert obs[INPUT_IDS][-step - len(prompt) :].tolist() == prompt + ids(char_tokenizer, word)[:step]
        assert obs[INPUT_MASK][-step - len(prompt) :].all() and obs[INPUT_MASK].sum() == step + len(prompt)
    obs, reward, terminated, truncated, info = env.step(char_tokenizer.eos_token_id)
    assert terminated and not truncated
    assert info["generated_text"] == word and reward == pytest.approx(1.0)
    assert info["reward_components"] == {"chrf": pytest.approx(1.0)}
    assert obs[CONTEXT_IDS][: len(word) + 1].tolist() == ids(char_tokenizer, word) + [char_tokenizer.eos_token_id]
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(5)


def test_max_length_terminates_rather_than_truncates(char_tokenizer):
    env = make(char_tokenizer, max_episode_length=3)
    env.reset(seed=0)
    results = [env.step(5)[2:4] for _ in range(3)]
    assert results == [(False, False), (False, False), (True, False)]


def test_terminate_on_eos_can_be_switched_off(char_tokenizer):
    env = make(char_tokenizer, max_episode_length=2, terminate_on_eos=False)
    env.reset(seed=0)
    assert env.step(char_tokenizer.eos_token_id)[2] is False


def test_step_rewards_add_up_to_the_episode_score(char_tokenizer):
    episode, step = make(char_tokenizer, reward_mode="episode"), make(char_tokenizer, reward_mode="step")
    actions = ids(char_tokenizer, "ca") + [char_tokenizer.eos_token_id]
    episode.reset(options={"sample_index": 3})
    step.reset(options={"sample_index": 3})
    final = [episode.step(a)[1] for a in actions][-1]
    dense = [step.step(a)[1] for a in actions]
    assert final > 0 and sum(dense) == pytest.approx(final)


def test_seeding_replays_the_same_samples(char_tokenizer):
    env = make(char_tokenizer)
    first = [env.reset(seed=7)[1]["sample_id"]] + [env.reset()[1]["sample_id"] for _ in range(5)]
    second = [env.reset(seed=7)[1]["sample_id"]] + [env.reset()[1]["sample_id"] for _ in range(5)]
    assert first == second and len(set(first)) > 1


def test_train_and_test_splits_are_disjoint(char_tokenizer):
    for task in textenvs.TASKS.values():
        train, test = task.load("train"), task.load("test")
        assert len(train) and len(test)
        assert not {s.prompt for s in train} & {s.prompt for s in test}


def test_custom_datapool_reward_callable_and_truncation(char_tokenizer):
    pool = DataPool([Sample("x", "abcdefghij", ("z",))])
    env = gym.make(
        "TextGeneration-v0",
        tokenizer=char_tokenizer,
        datapool=pool,
        reward=lambda text, sample: len(text),
        max_prompt_length=4,
        max_episode_length=2,
        prompt_truncation_side="right",
    )
    obs, info = env.reset()
    assert info["prompt_truncated"] and char_tokenizer.decode(obs[PROMPT_IDS]) == "abcd"
    env.step(5)
    assert env.step(6)[1] == 2.0


def test_empty_prompt_starts_from_a_special_token(char_tokenizer):
    env = gym.make(
        "TextGeneration-v0", tokenizer=char_tokenizer, datapool=DataPool([Sample("e", "")]), reward="sentiment"
    )
    obs, _ = env.reset()
    assert obs[PROMPT_MASK].sum() == 1 and obs[PROMPT_IDS][-1] == char_tokenizer.eos_token_id


def test_render_modes(char_tokenizer, capsys):
    env = make(char_tokenizer, render_mode="ansi")
    env.reset(options={"sample_index": 0})
    env.step(ids(char_tokenizer, "a")[0])
    text = env.render()
    assert "prompt:" in text and "generated:  'a'" in text and "references:" in text
    human = make(char_tokenizer, render_mode="human")
    human.reset(seed=0)
    human.step(5)
    assert "generated:" in capsys.readouterr().out
    with pytest.raises(ValueError, match="render_mode must be one of"):
        make(char_tokenizer, render_mode="rgb_array").unwrapped.render()


@pytest.mark.parametrize("action", [-1, 10_000, 2.5, "a", True, np.array([1.0])])
def test_bad_actions_are_named(char_tokenizer, action):
    env = make(char_tokenizer)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action"):
        env.unwrapped.step(action)


def test_numpy_integer_actions_are_accepted(char_tokenizer):
    env = make(char_tokenizer)
    env.reset(seed=0)
    env.unwrapped.step(np.int64(5))
    env.unwrapped.step(np.array(6))
    assert env.unwrapped.generated_text() == char_tokenizer.decode([5, 6])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"task": "poetry"}, "unknown task 'poetry'; built-in tasks"),
        ({"task": None}, "give a built-in task name or a datapool"),
        ({"reward": "bluu"}, "unknown reward 'bluu'"),
        ({"split": "validation"}, "unknown split 'validation'"),
        ({"reward_mode": "sometimes"}, "reward_mode must be one of"),
        ({"max_episode_length": 0}, "max_episode_length must be a positive integer"),
        ({"prompt_truncation_side": "middle"}, "truncation_side must be one of"),
    ],
)
def test_bad_arguments_are_named(char_tokenizer, kwargs, message):
    with pytest.raises(ValueError, match=message):
        make(char_tokenizer, **kwargs).reset(seed=0)


def test_sample_index_out_of_range(char_tokenizer):
    env = make(char_tokenizer)
    with pytest.raises(ValueError, match="sample_index must be an integer in"):
        env.reset(options={"sample_index": 10_000})
