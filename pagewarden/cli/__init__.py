"""The `pagewarden` command line.

`_base` holds the `main` group and the shared helpers; each command module registers its
commands on a group it imports from there (or from `_policies` / `_eval` for their
sub-groups). Importing this package registers them all."""

from pagewarden.cli import (  # noqa: F401 - imported to register their commands
    _ca,
    _check,
    _demo,
    _eval,
    _mcp,
    _policies,
    _policy_agent,
    _postgres,
    _proxy,
    _sessions,
)
from pagewarden.cli._base import main

__all__ = ["main"]
