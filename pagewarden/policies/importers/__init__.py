"""Importers: policy sets from other formats (ST-WebAgentBench task files, HarmonyGuard and
SafePred policy files)."""

from pagewarden.policies.importers._stweb_tasks import split_terms
from pagewarden.policies.importers.agents import FORMATS, import_agent_policies
from pagewarden.policies.importers.stwebagentbench import (
    OUT_OF_REACH,
    BenchmarkPolicy,
    BenchmarkTask,
    DatasetError,
    import_task,
    import_tasks,
    load_tasks,
)

__all__ = [
    "FORMATS",
    "OUT_OF_REACH",
    "BenchmarkPolicy",
    "BenchmarkTask",
    "DatasetError",
    "import_agent_policies",
    "import_task",
    "import_tasks",
    "load_tasks",
    "split_terms",
]
