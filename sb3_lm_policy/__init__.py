"""An SB3 actor-critic policy around Hugging Face language models, for textenvs and any env that
uses its observation keys."""

from sb3_lm_policy.modeling import load_language_model
from sb3_lm_policy.policy import LMActorCriticPolicy

__all__ = ["LMActorCriticPolicy", "load_language_model"]
