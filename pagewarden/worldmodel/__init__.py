"""The world model: predict what an action will do before it runs."""

from pagewarden.worldmodel._prediction import Consequence, Navigation, Prediction, Submission
from pagewarden.worldmodel._static import classify_consequence, predict_static

__all__ = ["Consequence", "Navigation", "Prediction", "Submission", "classify_consequence", "predict_static"]
