"""The WASP evaluation (Evtimov et al. 2025, facebookresearch/wasp): GitLab prompt-injection
tasks on a local GitLab-like site, PCR / CuP / ASR per guard configuration.

WASP's data is CC-BY-NC: it is read from the path given on the command line and never
copied into this repository."""

from pagewarden.eval.wasp._data import AttackerGoal, WaspDataError, WaspTask, load_tasks
from pagewarden.eval.wasp._report import render_table, write_html, write_json
from pagewarden.eval.wasp._run import (
    CONFIGURATIONS,
    ConfigResult,
    Configuration,
    Episode,
    WaspReport,
    run_wasp,
)

__all__ = [
    "CONFIGURATIONS",
    "AttackerGoal",
    "ConfigResult",
    "Configuration",
    "Episode",
    "WaspDataError",
    "WaspReport",
    "WaspTask",
    "load_tasks",
    "render_table",
    "run_wasp",
    "write_html",
    "write_json",
]
