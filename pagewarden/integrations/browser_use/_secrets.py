"""browser-use's ``sensitive_data`` as the guard's secrets.

browser-use lets the model write ``<secret>name</secret>`` and puts the value in only when the
action runs (`Registry.execute_action`), optionally per domain
(``{"https://*.bank.example": {"pin": "…"}}``). The guard judges the action with the value
in place (a secret typed into a form that posts elsewhere is what the sensitive-data checks
look for), and registers each domain-scoped value with the guard (`Guard.add_secret`, allowed
for that domain: the network layer's exfiltration filter then stops it going anywhere else);
values given for every domain are redacted from traces and messages only.
"""

from __future__ import annotations

import re
from typing import Any

from pagewarden.guard import Guard
from pagewarden.trace import global_secrets

__all__ = ["SecretValues"]

_PLACEHOLDER = re.compile(r"<secret>(.*?)</secret>")


def _host_pattern(pattern: str) -> str:
    """browser-use's domain pattern (``https://*.example.com``) as a host pattern."""
    host = pattern.split("://", 1)[-1]
    host = host.split("/", 1)[0].split(":", 1)[0]
    return host.lower()


class SecretValues:
    """The values of one guard's browser-use ``sensitive_data`` (registered once each)."""

    def __init__(self, guard: Guard) -> None:
        self.guard = guard
        self._seen: set[tuple[str, str | None]] = set()

    def register(self, sensitive_data: Any) -> dict[str, str]:
        """Register the values of `sensitive_data`; returns placeholder name -> value."""
        names: dict[str, str] = {}
        if not isinstance(sensitive_data, dict):
            return names
        for key, content in sensitive_data.items():
            if isinstance(content, dict):
                domain = _host_pattern(str(key))
                for name, value in content.items():
                    if isinstance(value, str) and value:
                        names.setdefault(str(name), value)
                        self._add(value, domain)
            elif isinstance(content, str) and content:
                names.setdefault(str(key), content)
                self._add(content, None)
        return names

    def _add(self, value: str, domain: str | None) -> None:
        if (value, domain) in self._seen:
            return
        self._seen.add((value, domain))
        if domain:
            self.guard.add_secret(value, allow_domains=[domain], label="browser-use")
        else:
            global_secrets().add(value, label="browser-use", enforce=False)

    @staticmethod
    def fill_in(text: str, names: dict[str, str]) -> str:
        """`text` with its ``<secret>name</secret>`` placeholders replaced by their values."""
        return _PLACEHOLDER.sub(lambda m: names.get(m.group(1), m.group(0)), text)
