import json

import pytest
import yaml

from sb3_lm_policy.cli import main
from sb3_lm_policy.config import TrainConfig, builtin_configs, read_config_file
from tests.conftest import tiny_gpt2_config


@pytest.fixture
def tiny_config_file(tmp_path, char_tokenizer):
    char_tokenizer.save_pretrained(tmp_path / "tokenizer")
    config = {
        "env_kwargs": {"task": "copy", "tokenizer": str(tmp_path / "tokenizer")},
        "eval_env_kwargs": {"split": "test"},
        "model": None,
        "policy_kwargs": {"model_config": tiny_gpt2_config(len(char_tokenizer))},
        "algo_kwargs": {"n_steps": 16, "batch_size": 16, "n_epochs": 1},
        "total_timesteps": 64,
        "n_envs": 2,
        "eval_episodes": 4,
        "progress_bar": False,
    }
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_train_writes_a_run_folder_and_eval_reproduces_it(tmp_path, tiny_config_file, capsys):
    run_dir = tmp_path / "run"
    assert main(["train", "--config", str(tiny_config_file), "--output-dir", str(run_dir), "--seed", "3"]) == 0
    for name in ("config.yaml", "model.zip", "eval.json", "reward_curve.png"):
        assert (run_dir / name).is_file(), name
    assert list((run_dir / "tb").iterdir()), "no TensorBoard log"
    saved = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert saved["seed"] == 3 and saved["total_timesteps"] == 64
    results = json.loads((run_dir / "eval.json").read_text())
    assert results["before"]["episodes"] == results["after"]["episodes"] == 4
    assert "chrf" in results["after"]["reward_components"] and results["after"]["samples"]
    assert not list(run_dir.glob(".*tmp*")), "a temporary file was left behind"

    assert main(["eval", str(run_dir)]) == 0
    reloaded = json.loads((run_dir / "eval_reloaded.json").read_text())
    # same seed, greedy actions, same weights: the reloaded evaluation repeats the final one exactly
    assert reloaded["mean_reward"] == pytest.approx(results["after"]["mean_reward"])
    assert [s["generated_text"] for s in reloaded["samples"]] == [
        s["generated_text"] for s in results["after"]["samples"]
    ]


def test_a2c_through_the_cli(tmp_path, tiny_config_file):
    run_dir = tmp_path / "a2c"
    assert (
        main(
            [
                "train",
                "--config",
                str(tiny_config_file),
                "--algo",
                "a2c",
                "--algo-kwargs",
                "{n_steps: 8}",
                "--eval-episodes",
                "0",
                "--output-dir",
                str(run_dir),
            ]
        )
        == 0
    )
    assert (run_dir / "model.zip").is_file()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["train", "--config", "nonexistent"], "neither a file nor a built-in config"),
        (["train", "--algo", "dqn"], "algo must be one of"),
        (["train", "--env-id", "NoSuchEnv-v0"], "unknown env id 'NoSuchEnv-v0'"),
        (["eval", "/nonexistent/run"], "is not a run folder"),
    ],
)
def test_bad_cli_input_is_reported(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_unknown_config_keys_are_named(tmp_path):
    path = tmp_path / "typo.yaml"
    path.write_text("total_timestep: 10\n")
    with pytest.raises(ValueError, match=r"unknown keys \['total_timestep'\]"):
        TrainConfig.from_dict(read_config_file(str(path)))


def test_builtin_demo_config_is_valid():
    assert "demo" in builtin_configs()
    config = TrainConfig.from_dict(read_config_file("demo"))
    assert config.make_env_kwargs(evaluation=True)["split"] == "test"
    assert config.make_env_kwargs()["tokenizer"] == "smollm2-135m-instruct"


def test_kl_penalty_through_the_cli_logs_kl_and_reports_perplexity(tmp_path, tiny_config_file):
    run_dir = tmp_path / "kl"
    argv = [
        "train",
        "--config",
        str(tiny_config_file),
        "--kl-coef",
        "0.1",
        "--kl-target",
        "0.05",
        "--reward-normalization",
        "scale",
        "--output-dir",
        str(run_dir),
    ]
    assert main(argv) == 0
    results = json.loads((run_dir / "eval.json").read_text())
    for stage in ("before", "after"):
        assert results[stage]["reference_perplexity"] > 1.0
        assert {"distinct_1", "distinct_2", "mean_length"} <= set(results[stage])
    assert len((run_dir / "samples_after.jsonl").read_text().splitlines()) == 4
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(next((run_dir / "tb").iterdir()))).Reload()
    assert {"rollout/kl", "rollout/kl_beta", "rollout/task_reward", "rollout/reward/chrf"} <= set(
        events.Tags()["scalars"]
    )


def test_kl_target_needs_a_starting_coefficient():
    with pytest.raises(ValueError, match="give its starting value as kl_coef"):
        TrainConfig(kl_target=0.1)


def test_behaviour_cloning_then_ppo_on_textworld_through_the_cli(tmp_path, textworld_tokenizer):
    tokenizer = textworld_tokenizer
    tokenizer.save_pretrained(tmp_path / "tokenizer")
    config = {
        "env_id": "TextWorldCooking-v0",
        "env_kwargs": {
            "tokenizer": str(tmp_path / "tokenizer"),
            "num_locations": 1,
            "num_ingredients": 1,
            "num_distractor_items": 0,
            "include_doors": False,
            "max_steps": 10,
            "max_prompt_length": 64,
            "max_action_length": 48,
        },
        "eval_env_kwargs": {"game_fold": "test"},
        "model": None,
        "policy_kwargs": {"model_config": tiny_gpt2_config(len(tokenizer), n_positions=128)},
        "algo_kwargs": {"n_steps": 8, "batch_size": 8, "n_epochs": 1},
        "total_timesteps": 8,
        "eval_episodes": 2,
        "bc_games": 2,
        "bc_epochs": 2,
        "bc_learning_rate": 1e-3,
        "progress_bar": False,
        "output_dir": str(tmp_path / "run"),
    }
    path = tmp_path / "tw.yaml"
    path.write_text(yaml.safe_dump(config))
    assert main(["train", "--config", str(path)]) == 0
    results = json.loads((tmp_path / "run" / "eval.json").read_text())
    assert len(results["behaviour_cloning_losses"]) == 2
    for stage in ("before", "after_behaviour_cloning", "after"):
        assert 0.0 <= results[stage]["success_rate"] <= 1.0 and results[stage]["mean_moves"] >= 1


def test_behaviour_cloning_needs_a_textworld_env(tmp_path, tiny_config_file):
    assert (
        main(
            [
                "train",
                "--config",
                str(tiny_config_file),
                "--bc-games",
                "1",
                "--eval-episodes",
                "0",
                "--output-dir",
                str(tmp_path / "bad"),
            ]
        )
        == 2
    )
