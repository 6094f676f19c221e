"""The world model: predict what an action will do before it runs."""

from pagewarden.steps import Consequence, Navigation, Prediction, Submission
from pagewarden.worldmodel._llm import (
    RISK_BASE,
    plan_risk,
    prediction_fields,
    refine_prediction,
    render_prediction_prompt,
)
from pagewarden.worldmodel._static import SCRIPT_KINDS, classify_consequence, predict_static

__all__ = [
    "RISK_BASE",
    "SCRIPT_KINDS",
    "Consequence",
    "Navigation",
    "Prediction",
    "Submission",
    "classify_consequence",
    "plan_risk",
    "predict_static",
    "prediction_fields",
    "refine_prediction",
    "render_prediction_prompt",
]
