"""``sb3-lm train`` and ``sb3-lm eval``: train an LM policy with SB3 and evaluate a run folder.

A run folder holds ``config.yaml``, ``model.zip`` (written atomically), ``eval.json`` (before and
after training), ``reward_curve.png``, the Monitor logs and the TensorBoard logs under ``tb/``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import yaml

import textenvs  # noqa: F401  (registers the environments)
from sb3_lm_policy.config import TrainConfig, builtin_configs, read_config_file

MODEL_FILE = "model.zip"


def _algorithm_class(name: str):
    from stable_baselines3 import A2C, PPO

    return {"ppo": PPO, "a2c": A2C}[name]


def make_vec_env_for(config: TrainConfig, evaluation: bool = False, monitor_dir: str | None = None):
    from stable_baselines3.common.env_util import make_vec_env

    return make_vec_env(
        config.env_id,
        n_envs=config.n_envs,
        seed=config.eval_seed if evaluation else config.seed,
        env_kwargs=config.make_env_kwargs(evaluation),
        monitor_dir=monitor_dir,
    )


def write_atomic(path: Path, text: str) -> None:
    """Write a file so that readers see the old or the new content, never half of it."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def save_model_atomic(model: Any, path: Path) -> None:
    temporary = path.with_name(f".{path.stem}.tmp.zip")
    model.save(temporary)
    os.replace(temporary, path)


def plot_reward_curve(monitor_dir: Path, output: Path, title: str) -> None:
    """Episode rewards against timesteps, with a rolling mean, from the Monitor logs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from stable_baselines3.common.results_plotter import X_TIMESTEPS, load_results, ts2xy

    steps, rewards = ts2xy(load_results(str(monitor_dir)), X_TIMESTEPS)
    figure, axes = plt.subplots(figsize=(7, 4))
    axes.plot(steps, rewards, ".", alpha=0.3, label="episode reward")
    window = max(1, len(rewards) // 20)
    if len(rewards) >= window:
        import numpy as np

        rolling = np.convolve(rewards, np.ones(window) / window, mode="valid")
        axes.plot(steps[window - 1 :], rolling, label=f"rolling mean ({window} episodes)")
    axes.set_xlabel("timesteps")
    axes.set_ylabel("episode reward")
    axes.set_title(title)
    axes.legend()
    figure.tight_layout()
    figure.savefig(output, dpi=100)
    plt.close(figure)


def train(config: TrainConfig) -> dict[str, Any]:
    from sb3_lm_policy.callbacks import RewardComponentsCallback
    from sb3_lm_policy.kl import KLPenaltyCallback
    from sb3_lm_policy.policy import LMActorCriticPolicy

    run_dir = Path(config.output_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(run_dir / "config.yaml", yaml.safe_dump(config.to_dict(), sort_keys=False))
    monitor_dir = run_dir / "monitor"
    env = make_vec_env_for(config, monitor_dir=str(monitor_dir))
    eval_env = make_vec_env_for(config, evaluation=True)
    algorithm = _algorithm_class(config.algo)
    model = algorithm(
        LMActorCriticPolicy,
        env,
        policy_kwargs=config.policy_kwargs_with_model(),
        seed=config.seed,
        device=config.device,
        tensorboard_log=str(run_dir / "tb"),
        verbose=0,
        **config.algo_kwargs,
    )
    callbacks = [RewardComponentsCallback()]
    if config.kl_coef is not None or config.reward_normalization != "none":
        callbacks.append(
            KLPenaltyCallback(config.kl_coef or 0.0, config.kl_target, config.kl_horizon, config.reward_normalization)
        )
    started = time.time()
    results: dict[str, Any] = {}
    if config.eval_episodes:
        model.policy.freeze_reference()  # the starting model: KL reference and perplexity judge
        results["before"] = _evaluate_and_save(model, eval_env, config, run_dir, "before")
    if config.bc_games:
        results["behaviour_cloning_losses"] = _behaviour_clone(model, config)
        if config.eval_episodes:
            results["after_behaviour_cloning"] = _evaluate_and_save(model, eval_env, config, run_dir, "after_bc")
    model.learn(config.total_timesteps, callback=callbacks, progress_bar=config.progress_bar)
    save_model_atomic(model, run_dir / MODEL_FILE)
    if config.eval_episodes:
        results["after"] = _evaluate_and_save(model, eval_env, config, run_dir, "after")
    results["timesteps"] = config.total_timesteps
    results["wall_time_s"] = round(time.time() - started, 1)
    write_atomic(run_dir / "eval.json", json.dumps(results, indent=2))
    plot_reward_curve(monitor_dir, run_dir / "reward_curve.png", f"{config.algo.upper()} on {config.env_id}")
    env.close()
    eval_env.close()
    print(f"run folder: {run_dir}", flush=True)
    return results


def _behaviour_clone(model: Any, config: TrainConfig) -> list[float]:
    """Clone the gold paths of ``bc_games`` training games into the policy (TextWorld envs)."""
    import gymnasium as gym

    from sb3_lm_policy.behaviour_cloning import behaviour_cloning
    from textenvs.textworld import TextWorldEnv
    from textenvs.textworld.demonstrations import collect_demonstrations

    env = gym.make(config.env_id, **config.make_env_kwargs())
    try:
        if not isinstance(env.unwrapped, TextWorldEnv):
            raise ValueError(f"bc_games needs a TextWorld env with gold paths; {config.env_id} is not one")
        demonstrations = collect_demonstrations(env, config.bc_games)
    finally:
        env.close()
    losses = behaviour_cloning(
        model.policy,
        demonstrations.observations,
        demonstrations.actions,
        epochs=config.bc_epochs,
        batch_size=config.bc_batch_size,
        learning_rate=config.bc_learning_rate,
        seed=config.seed,
    )
    print(f"behaviour cloning on {len(demonstrations)} expert steps: loss per epoch {losses}", flush=True)
    return losses


def _evaluate_and_save(model: Any, env: Any, config: TrainConfig, run_dir: Path, name: str) -> dict[str, Any]:
    """Evaluate, write every generation to ``samples_<name>.jsonl``, return the summary (first samples)."""
    from sb3_lm_policy.evaluation import SAMPLES_KEPT, evaluate_text_policy

    result = evaluate_text_policy(
        model, env, config.eval_episodes, config.eval_deterministic, config.eval_seed, keep_all_samples=True
    )
    write_atomic(run_dir / f"samples_{name}.jsonl", "".join(json.dumps(s) + "\n" for s in result["samples"]))
    result["samples"] = result["samples"][:SAMPLES_KEPT]
    summary = {k: round(v, 4) for k, v in result.items() if isinstance(v, float)}
    print(f"{name}: {summary}", flush=True)
    return result


def evaluate_run(run_dir: Path, episodes: int | None = None, deterministic: bool | None = None) -> dict[str, Any]:
    """Reload a run folder's model and evaluate it on its evaluation env."""
    from sb3_lm_policy.evaluation import evaluate_text_policy
    from sb3_lm_policy.modeling import load_language_model

    run_dir = Path(run_dir)
    for needed in ("config.yaml", MODEL_FILE):
        if not (run_dir / needed).is_file():
            raise FileNotFoundError(f"{run_dir} is not a run folder: {needed} is missing")
    config = TrainConfig.from_dict(read_config_file(str(run_dir / "config.yaml")), source=str(run_dir / "config.yaml"))
    eval_env = make_vec_env_for(config, evaluation=True)
    model = _algorithm_class(config.algo).load(run_dir / MODEL_FILE, env=eval_env, device=config.device)
    kwargs = config.policy_kwargs_with_model()
    if "model_name_or_path" in kwargs and "lora" not in kwargs:
        # the pretrained starting model judges perplexity, as in training (a LoRA policy has it built in)
        model.policy.freeze_reference(
            load_language_model(kwargs["model_name_or_path"], dtype=kwargs.get("dtype", "float32"))
        )
    result = evaluate_text_policy(
        model,
        eval_env,
        episodes or config.eval_episodes or 16,
        config.eval_deterministic if deterministic is None else deterministic,
        config.eval_seed,
    )
    write_atomic(run_dir / "eval_reloaded.json", json.dumps(result, indent=2))
    eval_env.close()
    return result


def _mapping(text: str) -> dict[str, Any]:
    value = yaml.safe_load(text)
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f'expected a JSON/YAML mapping such as \'{{"task": "copy"}}\', got {text!r}')
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sb3-lm", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    train_parser = commands.add_parser("train", help="train a language-model policy with SB3")
    train_parser.add_argument("--config", help=f"a YAML file or a built-in config: {', '.join(builtin_configs())}")
    flags = {
        "--env-id": ("env_id", str),
        "--env-kwargs": ("env_kwargs", _mapping),
        "--eval-env-kwargs": ("eval_env_kwargs", _mapping),
        "--model": ("model", str),
        "--policy-kwargs": ("policy_kwargs", _mapping),
        "--algo": ("algo", str),
        "--algo-kwargs": ("algo_kwargs", _mapping),
        "--timesteps": ("total_timesteps", int),
        "--n-envs": ("n_envs", int),
        "--seed": ("seed", int),
        "--eval-episodes": ("eval_episodes", int),
        "--device": ("device", str),
        "--output-dir": ("output_dir", str),
        "--kl-coef": ("kl_coef", float),
        "--kl-target": ("kl_target", float),
        "--reward-normalization": ("reward_normalization", str),
        "--bc-games": ("bc_games", int),
        "--bc-epochs": ("bc_epochs", int),
    }
    for flag, (dest, kind) in flags.items():
        train_parser.add_argument(flag, dest=dest, type=kind, default=None)
    train_parser.add_argument("--no-progress-bar", dest="progress_bar", action="store_false", default=None)
    eval_parser = commands.add_parser("eval", help="reload a run folder and evaluate it")
    eval_parser.add_argument("run_dir", type=Path)
    eval_parser.add_argument("--episodes", type=int, default=None)
    eval_parser.add_argument("--stochastic", action="store_true", help="sample actions instead of taking the mode")
    return parser


def main(argv: list[str] | None = None) -> int:
    arguments = build_parser().parse_args(argv)
    try:
        if arguments.command == "train":
            data = read_config_file(arguments.config) if arguments.config else {}
            overrides = {
                key: value
                for key, value in vars(arguments).items()
                if key not in ("command", "config") and value is not None
            }
            train(TrainConfig.from_dict({**data, **overrides}, source=arguments.config or "flags"))
        else:
            result = evaluate_run(arguments.run_dir, arguments.episodes, False if arguments.stochastic else None)
            print(json.dumps({k: v for k, v in result.items() if k != "samples"}, indent=2))
    except (ValueError, FileNotFoundError) as error:
        print(f"sb3-lm: error: {error}", file=sys.stderr)
        return 2
    return 0
