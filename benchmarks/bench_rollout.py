"""Rollout speed: PPO.collect_rollouts on TextGeneration-v0 against model.generate() with sampling.

Both produce the same number of tokens, from the same model, batch size and lengths, in this run.
Prints one line per model ending in ``ratio=<rollout tokens/s / generate tokens/s>``.

    python benchmarks/bench_rollout.py [--model tiny|smollm2-135m-instruct] [--n-envs 4] [--tokens 16]
"""

from __future__ import annotations

import argparse
import time

import torch
from stable_baselines3 import PPO
from stable_baselines3.common.env_util import make_vec_env

import textenvs  # noqa: F401
from sb3_lm_policy import LMActorCriticPolicy
from textenvs.core.tokenization import build_char_tokenizer


def build(model_name: str, n_envs: int, tokens: int):
    if model_name == "tiny":
        tokenizer = build_char_tokenizer()
        policy_kwargs = {
            "model_config": dict(
                model_type="gpt2",
                vocab_size=len(tokenizer),
                n_layer=4,
                n_head=4,
                n_embd=128,
                n_positions=64,
                bos_token_id=1,
                eos_token_id=1,
            )
        }
    else:
        tokenizer, policy_kwargs = model_name, {"model_name_or_path": model_name}
    env_kwargs = dict(task="sentiment", tokenizer=tokenizer, max_episode_length=tokens, terminate_on_eos=False)
    env = make_vec_env("TextGeneration-v0", n_envs=n_envs, seed=0, env_kwargs=env_kwargs)
    model = PPO(
        LMActorCriticPolicy, env, n_steps=tokens, batch_size=n_envs * tokens, policy_kwargs=policy_kwargs, seed=0
    )
    return model, env


def rollout_tokens_per_second(model: PPO) -> float:
    _, callback = model._setup_learn(model.n_steps * model.n_envs)  # resets the env, as learn() does
    started = time.perf_counter()
    model.collect_rollouts(model.env, callback, model.rollout_buffer, n_rollout_steps=model.n_steps)
    return model.n_steps * model.n_envs / (time.perf_counter() - started)


def generate_tokens_per_second(model: PPO, env, tokens: int) -> float:
    text_env = env.envs[0].unwrapped
    tokenizer = text_env.tokenizer
    prompts = [sample.prompt for sample in list(text_env.datapool)[: model.n_envs]]
    tokenizer.padding_side = tokenizer.truncation_side = "left"  # as the env pads and cuts prompts
    inputs = tokenizer(
        prompts, return_tensors="pt", padding=True, truncation=True, max_length=text_env.max_prompt_length
    )
    lm = model.policy.lm
    with torch.no_grad():
        started = time.perf_counter()
        lm.generate(
            **inputs,
            do_sample=True,
            top_k=0,
            max_new_tokens=tokens,
            min_new_tokens=tokens,
            pad_token_id=tokenizer.pad_token_id,
        )
    return model.n_envs * tokens / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="tiny")
    parser.add_argument("--n-envs", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=16)
    args = parser.parse_args()
    model, env = build(args.model, args.n_envs, args.tokens)
    rollout_tokens_per_second(model)  # warm-up
    rollout = rollout_tokens_per_second(model)
    generate = generate_tokens_per_second(model, env, args.tokens)
    print(
        f"rollout model={args.model} n_envs={args.n_envs} tokens={args.tokens}: collect_rollouts {rollout:.1f} tok/s, "
        f"generate {generate:.1f} tok/s, ratio={rollout / generate:.3f}"
    )


if __name__ == "__main__":
    main()
