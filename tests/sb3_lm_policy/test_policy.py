import gymnasium as gym
import numpy as np
import pytest
import torch
from stable_baselines3 import A2C, PPO
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.evaluation import evaluate_policy

from sb3_lm_policy import LMActorCriticPolicy
from tests.conftest import tiny_gpt2_config

SMALL_PPO = dict(n_steps=16, batch_size=16, n_epochs=2)


def copy_env(tokenizer, n_envs=2):
    return make_vec_env("TextGeneration-v0", n_envs=n_envs, seed=0, env_kwargs=dict(task="copy", tokenizer=tokenizer))


@pytest.mark.parametrize("algorithm", [PPO, A2C])
def test_learn_save_load_predict_round_trip(tmp_path, char_tokenizer, tiny_model_config, algorithm):
    env = copy_env(char_tokenizer)
    kwargs = SMALL_PPO if algorithm is PPO else dict(n_steps=8)
    model = algorithm(LMActorCriticPolicy, env, policy_kwargs={"model_config": tiny_model_config}, seed=0, **kwargs)
    weights_before = [p.detach().clone() for p in model.policy.lm.parameters()]
    model.learn(64)
    assert any(not torch.equal(a, b) for a, b in zip(weights_before, model.policy.lm.parameters(), strict=True))

    model.save(tmp_path / "run" / "model")
    loaded = algorithm.load(tmp_path / "run" / "model", env=env)
    assert loaded.policy_kwargs["model_config"] == tiny_model_config
    obs = env.reset()
    actions, _ = model.predict(obs, deterministic=True)
    loaded_actions, _ = loaded.predict(obs, deterministic=True)
    np.testing.assert_array_equal(actions, loaded_actions)
    with torch.no_grad():
        tensors = model.policy.obs_to_tensor(obs)[0]
        expected = model.policy.logits_and_values(tensors)
        got = loaded.policy.logits_and_values(loaded.policy.obs_to_tensor(obs)[0])
    for a, b in zip(expected, got, strict=True):
        torch.testing.assert_close(a, b)
    mean, _ = evaluate_policy(loaded, env, n_eval_episodes=2)
    assert 0.0 <= mean <= 1.0


def test_single_env_obs_predict_and_value_shapes(char_tokenizer, tiny_model_config):
    env = gym.make("TextGeneration-v0", task="copy", tokenizer=char_tokenizer)
    model = PPO(LMActorCriticPolicy, env, policy_kwargs={"model_config": tiny_model_config}, **SMALL_PPO)
    obs, _ = env.reset(seed=0)
    action, _ = model.predict(obs)
    assert action.shape == () and 0 <= int(action) < env.action_space.n
    batch = model.policy.obs_to_tensor(obs)[0]
    actions, values, log_prob = model.policy(batch)
    assert actions.shape == (1,) and values.shape == (1, 1) and log_prob.shape == (1,)
    values2, log_prob2, entropy = model.policy.evaluate_actions(batch, actions.float())
    torch.testing.assert_close(values, values2)
    torch.testing.assert_close(log_prob, log_prob2)
    assert entropy.shape == (1,)


def test_causal_logits_match_a_plain_forward_on_the_unpadded_sequence(char_tokenizer):
    env = gym.make("TextGeneration-v0", task="copy", tokenizer=char_tokenizer)
    model = PPO(LMActorCriticPolicy, env, policy_kwargs={"model_config": tiny_gpt2_config(len(char_tokenizer))})
    obs, info = env.reset(seed=0)
    for token in (5, 6):
        obs, *_ = env.step(token)
    sequence = char_tokenizer(info["prompt"])["input_ids"] + [5, 6]
    with torch.no_grad():
        logits, _ = model.policy.logits_and_values(model.policy.obs_to_tensor(obs)[0])
        plain = model.policy.lm(torch.tensor([sequence])).logits[0, -1]
    torch.testing.assert_close(logits[0], plain, atol=1e-5, rtol=1e-5)


def test_dropout_is_off_so_the_first_ratio_is_one(char_tokenizer):
    config = {**tiny_gpt2_config(len(char_tokenizer)), "resid_pdrop": 0.5, "embd_pdrop": 0.5, "attn_pdrop": 0.5}
    env = copy_env(char_tokenizer, n_envs=1)
    model = PPO(LMActorCriticPolicy, env, policy_kwargs={"model_config": config}, **SMALL_PPO)
    model.policy.set_training_mode(True)
    assert model.policy.training and not model.policy.lm.training
    obs = model.policy.obs_to_tensor(env.reset())[0]
    actions = torch.tensor([5.0])
    first = model.policy.evaluate_actions(obs, actions)[1]
    second = model.policy.evaluate_actions(obs, actions)[1]
    torch.testing.assert_close(first, second)


def test_pretrained_weights_survive_construction(tmp_path, char_tokenizer):
    from transformers import GPT2Config, GPT2LMHeadModel

    lm = GPT2LMHeadModel(
        GPT2Config(**{k: v for k, v in tiny_gpt2_config(len(char_tokenizer)).items() if k != "model_type"})
    )
    lm.save_pretrained(tmp_path / "lm")
    model = PPO(
        LMActorCriticPolicy, copy_env(char_tokenizer), policy_kwargs={"model_name_or_path": str(tmp_path / "lm")}
    )
    for (name, expected), got in zip(lm.state_dict().items(), model.policy.lm.state_dict().values(), strict=True):
        torch.testing.assert_close(got, expected, msg=name)


def test_lora_trains_only_adapters_and_value_head(tmp_path, char_tokenizer):
    lora = {"r": 4, "lora_alpha": 8, "target_modules": ["c_attn"]}
    env = copy_env(char_tokenizer)
    model = PPO(
        LMActorCriticPolicy,
        env,
        policy_kwargs={"model_config": tiny_gpt2_config(len(char_tokenizer)), "lora": lora},
        **SMALL_PPO,
    )
    trainable = {name for name, p in model.policy.named_parameters() if p.requires_grad}
    assert trainable and all("lora_" in name or name.startswith("value_head") for name in trainable)
    frozen = {name: p.detach().clone() for name, p in model.policy.named_parameters() if not p.requires_grad}
    model.learn(32)
    for name, p in model.policy.named_parameters():
        if name in frozen:
            assert torch.equal(p, frozen[name]), name
    model.save(tmp_path / "lora")
    loaded = PPO.load(tmp_path / "lora", env=env)
    assert loaded.policy_kwargs["lora"] == lora
    model.policy.save_pretrained(tmp_path / "export")
    assert (tmp_path / "export" / "adapter_config.json").exists()
    assert (tmp_path / "export" / "value_head.safetensors").exists()


def test_save_pretrained_exports_a_loadable_hf_model(tmp_path, char_tokenizer, tiny_model_config):
    from safetensors.torch import load_file

    model = PPO(LMActorCriticPolicy, copy_env(char_tokenizer), policy_kwargs={"model_config": tiny_model_config})
    model.policy.save_pretrained(tmp_path / "export")
    reloaded = PPO(
        LMActorCriticPolicy, copy_env(char_tokenizer), policy_kwargs={"model_name_or_path": str(tmp_path / "export")}
    )
    for a, b in zip(model.policy.lm.parameters(), reloaded.policy.lm.parameters(), strict=True):
        torch.testing.assert_close(a, b)
    head = load_file(tmp_path / "export" / "value_head.safetensors")
    torch.testing.assert_close(head["weight"], model.policy.value_head.weight.detach())


def test_bfloat16_dtype_option(char_tokenizer):
    model = PPO(
        LMActorCriticPolicy,
        copy_env(char_tokenizer),
        policy_kwargs={"model_config": tiny_gpt2_config(len(char_tokenizer)), "dtype": "bfloat16"},
        **SMALL_PPO,
    )
    assert next(model.policy.lm.parameters()).dtype == torch.bfloat16
    model.learn(16)


def test_vocabulary_mismatch_is_caught_when_the_policy_is_built(char_tokenizer):
    config = tiny_gpt2_config(len(char_tokenizer) + 10)
    with pytest.raises(
        ValueError, match=r"vocabulary mismatch: the env's action space has 49 token ids .* predicts 59"
    ):
        PPO(LMActorCriticPolicy, copy_env(char_tokenizer), policy_kwargs={"model_config": config})


def test_unknown_model_name_is_a_clear_error(char_tokenizer):
    with pytest.raises(ValueError, match="unknown model 'no-such-model-anywhere'"):
        PPO(
            LMActorCriticPolicy,
            copy_env(char_tokenizer),
            policy_kwargs={"model_name_or_path": "no-such-model-anywhere"},
        )


@pytest.mark.parametrize(
    ("policy_kwargs", "message"),
    [
        ({}, "exactly one of model_name_or_path and model_config"),
        ({"model_config": {"n_layer": 2}}, "must be a transformers config or a dict with a 'model_type' key"),
        ({"model_config": {"model_type": "gpt2"}, "dtype": "float8"}, "dtype must be one of"),
    ],
)
def test_bad_policy_kwargs(char_tokenizer, policy_kwargs, message):
    with pytest.raises(ValueError, match=message):
        PPO(LMActorCriticPolicy, copy_env(char_tokenizer), policy_kwargs=policy_kwargs)


def test_non_text_spaces_are_rejected():
    with pytest.raises(ValueError, match="needs a Discrete token action space"):
        PPO(LMActorCriticPolicy, "Pendulum-v1", policy_kwargs={"model_config": {"model_type": "gpt2"}})
    with pytest.raises(ValueError, match="needs a Dict observation of token ids"):
        PPO(LMActorCriticPolicy, "CartPole-v1", policy_kwargs={"model_config": {"model_type": "gpt2"}})


def test_gsde_is_refused(char_tokenizer):
    env = copy_env(char_tokenizer)
    with pytest.raises(ValueError, match="use_sde=True is for continuous actions"):
        LMActorCriticPolicy(
            env.observation_space,
            env.action_space,
            lambda _: 1e-3,
            use_sde=True,
            model_config=tiny_gpt2_config(len(char_tokenizer)),
        )


def test_update_minibatches_reproduce_the_rollout_log_probs_and_values(char_tokenizer, tiny_model_config):
    """PPO's ratio starts at exactly 1: scoring shuffled minibatches gives what the rollout stored."""
    model = PPO(
        LMActorCriticPolicy,
        copy_env(char_tokenizer, n_envs=4),
        n_steps=16,
        batch_size=24,
        policy_kwargs={"model_config": tiny_model_config},
        seed=0,
    )
    _, callback = model._setup_learn(64)
    model.collect_rollouts(model.env, callback, model.rollout_buffer, n_rollout_steps=16)
    model.policy.set_training_mode(True)
    for batch in model.rollout_buffer.get(batch_size=24):
        with torch.no_grad():
            values, log_prob, _ = model.policy.evaluate_actions(batch.observations, batch.actions)
        torch.testing.assert_close(log_prob, batch.old_log_prob, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(values.flatten(), batch.old_values, atol=1e-5, rtol=1e-5)
