"""Importers: policy sets from other formats (ST-WebAgentBench task files)."""

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
    "OUT_OF_REACH",
    "BenchmarkPolicy",
    "BenchmarkTask",
    "DatasetError",
    "import_task",
    "import_tasks",
    "load_tasks",
]
