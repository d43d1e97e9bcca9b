import numpy as np
import pandas as pd
import pytest
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.logger import configure

from sb3_lm_policy import LMActorCriticPolicy
from sb3_lm_policy.callbacks import RewardComponentsCallback
from sb3_lm_policy.kl import AdaptiveKLController, FixedKLController, KLPenaltyCallback
from sb3_lm_policy.modeling import config_from_dict
from tests.conftest import tiny_gpt2_config


def copy_model(char_tokenizer, n_steps=8, **policy_kwargs):
    env = make_vec_env(
        "TextGeneration-v0",
        n_envs=2,
        seed=0,
        env_kwargs=dict(task="copy", tokenizer=char_tokenizer, reward_mode="step"),
    )
    policy_kwargs.setdefault("model_config", tiny_gpt2_config(len(char_tokenizer)))
    return PPO(
        LMActorCriticPolicy, env, n_steps=n_steps, batch_size=16, n_epochs=1, policy_kwargs=policy_kwargs, seed=0
    )


def collect_one_rollout(model, callback):
    _, wrapped = model._setup_learn(model.n_steps * model.n_envs, callback=callback)
    wrapped.on_training_start(locals(), globals())
    model.collect_rollouts(model.env, wrapped, model.rollout_buffer, n_rollout_steps=model.n_steps)


def perturb(module, seed=1, scale=0.5):
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for parameter in module.parameters():
            parameter.add_(scale * torch.randn(parameter.shape, generator=generator))


def test_kl_penalty_equals_a_hand_computation(char_tokenizer):
    model = copy_model(char_tokenizer)
    model.policy.freeze_reference()  # the reference is the model as it is now...
    reference = model.policy.__dict__["_reference_lm"]
    perturb(model.policy.lm)  # ...and the policy moves away from it
    beta = 0.3
    callback = KLPenaltyCallback(kl_coef=beta)
    collect_one_rollout(model, callback)
    buffer = model.rollout_buffer

    # by hand: log pi(a|s) - log pi_ref(a|s), with a plain forward of the reference on the unpadded text
    expected_kl = np.empty_like(buffer.log_probs)
    for step in range(buffer.buffer_size):
        for env_index in range(buffer.n_envs):
            mask = buffer.observations["input_attention_mask_pt"][step, env_index].astype(bool)
            tokens = buffer.observations["input_encoded_pt"][step, env_index][mask]
            action = int(buffer.actions[step, env_index, 0])
            with torch.no_grad():
                logits = reference(torch.as_tensor(tokens[None], dtype=torch.long)).logits[0, -1]
            expected_kl[step, env_index] = (
                buffer.log_probs[step, env_index] - torch.log_softmax(logits, -1)[action].item()
            )
    np.testing.assert_allclose(callback.last.kl, expected_kl, atol=1e-4)
    assert np.abs(expected_kl).max() > 1e-2, "the perturbed policy should differ from its reference"
    np.testing.assert_allclose(buffer.rewards, callback.last.task_rewards - beta * expected_kl, atol=1e-4)
    # advantages were recomputed from the shaped rewards
    shaped_returns = buffer.returns.copy()
    buffer.rewards[:] = callback.last.task_rewards
    buffer.compute_returns_and_advantage(last_values=torch.zeros(2), dones=np.ones(2))
    assert not np.allclose(shaped_returns, buffer.returns)


def test_kl_is_zero_before_the_policy_moves(char_tokenizer):
    model = copy_model(char_tokenizer)
    callback = KLPenaltyCallback(kl_coef=1.0)
    collect_one_rollout(model, callback)
    np.testing.assert_allclose(callback.last.kl, 0.0, atol=1e-5)
    assert callback.last.kl_estimate == pytest.approx(0.0, abs=1e-6)


def test_adaptive_controller_moves_beta_toward_the_target():
    high = AdaptiveKLController(0.1, target=0.05, horizon=1000)
    high.update(kl=0.5, n_steps=100)  # KL too high: the error is clipped at +0.2
    assert high.beta == pytest.approx(0.1 * (1 + 0.2 * 0.1))
    low = AdaptiveKLController(0.1, target=0.05, horizon=1000)
    low.update(kl=0.04, n_steps=100)  # KL below target: beta shrinks by (0.04 / 0.05 - 1) * 0.1
    assert low.beta == pytest.approx(0.1 * (1 - 0.2 * 0.1))
    fixed = FixedKLController(0.1)
    fixed.update(kl=10.0, n_steps=100)
    assert fixed.beta == 0.1


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"kl_coef": -1.0}, "KL coefficient must be a finite number >= 0"),
        ({"kl_coef": 0.1, "target_kl": 0.0}, "target_kl must be a finite number > 0"),
        ({"reward_normalization": "zscore"}, "reward_normalization must be one of"),
    ],
)
def test_bad_kl_arguments(arguments, message):
    with pytest.raises(ValueError, match=message):
        KLPenaltyCallback(**arguments)


def test_adaptive_beta_rises_during_training_when_kl_exceeds_the_target(char_tokenizer):
    model = copy_model(char_tokenizer, n_steps=16)
    model.learning_rate = 3e-3
    model._setup_lr_schedule()
    callback = KLPenaltyCallback(kl_coef=0.1, target_kl=1e-6, horizon=100)
    model.learn(128, callback=callback)
    assert callback.last.kl_estimate > 1e-6 and callback.controller.beta > 0.1


def test_lora_disabled_reference_gives_the_base_models_log_probs(tmp_path, char_tokenizer):
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_config(config_from_dict(tiny_gpt2_config(len(char_tokenizer)))).eval()
    base.save_pretrained(tmp_path / "base")
    model = copy_model(
        char_tokenizer,
        model_config=None,
        model_name_or_path=str(tmp_path / "base"),
        lora={"r": 4, "lora_alpha": 8, "target_modules": ["c_attn"]},
    )
    assert model.policy.has_reference
    with torch.no_grad():
        for name, parameter in model.policy.lm.named_parameters():
            if "lora_B" in name:
                parameter.normal_(std=0.5)  # lora_B starts at zero: make the adapters matter
    obs = model.policy.obs_to_tensor(model.env.reset())[0]
    with torch.no_grad():
        policy_logits = model.policy.logits_and_values(obs)[0]
        reference_logits = model.policy.reference_logits(obs)
        base_logits = model.policy._next_token(base, obs)[0]
    torch.testing.assert_close(reference_logits, base_logits.float())
    assert not torch.allclose(policy_logits, reference_logits, atol=1e-3)


def test_reward_components_kl_and_beta_reach_the_logger(tmp_path, char_tokenizer):
    model = copy_model(char_tokenizer)
    model.set_logger(configure(str(tmp_path), ["csv"]))
    model.learn(
        64, callback=[RewardComponentsCallback(), KLPenaltyCallback(kl_coef=0.05, reward_normalization="whiten")]
    )
    log = pd.read_csv(tmp_path / "progress.csv")
    for column in (
        "rollout/reward/chrf",
        "rollout/kl",
        "rollout/kl_log_ratio",
        "rollout/kl_beta",
        "rollout/task_reward",
        "rollout/shaped_reward",
    ):
        assert column in log.columns and log[column].notna().any(), column
    assert (log["rollout/kl_beta"].dropna() == 0.05).all()
