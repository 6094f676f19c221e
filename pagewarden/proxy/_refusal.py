"""A refusal of the network layer: what it records, reports and answers the browser with."""

from __future__ import annotations

import html
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["REFUSED_HEADER", "Refusal", "RefusalSink", "refusal_page"]

#: Response header naming the policy that refused a request (on every refusal page).
REFUSED_HEADER = "X-Pagewarden-Refused"


@dataclass(frozen=True, slots=True)
class Refusal:
    """One request the network layer refused.

    ``action`` is what was refused (``request``, ``navigation``, ``connect``, ``websocket``,
    ``exfiltration``); ``rule`` the rule kind (``domain_deny``, ``domain_allow``,
    ``url_deny``, ``url_allow``, ``strict``, ``no_host``, ``grant``, ``sensitive_data``…);
    ``policy_id`` the policy it comes from (``PW-NETWORK`` for the network layer's own).
    """

    action: str
    url: str
    host: str
    rule: str
    policy_id: str
    reason: str
    method: str = "GET"
    tab: str | None = None
    ts: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (the ``data`` of a ``network`` guard event)."""
        return asdict(self)


RefusalSink = Callable[[Refusal], None]


def refusal_page(refusal: Refusal) -> str:
    """The HTML page a refused navigation shows (escaped; no script)."""
    esc = html.escape
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        "<link rel='icon' href='data:,'><title>Blocked by pagewarden</title></head><body>"
        "<h1>Blocked by pagewarden</h1>"
        f"<p>The network layer refused this {esc(refusal.action)}: {esc(refusal.reason)}</p>"
        f"<p>Policy: <code>{esc(refusal.policy_id)}</code> (rule <code>{esc(refusal.rule)}</code>)</p>"
        f"<p>URL: <code>{esc(refusal.url[:300])}</code></p>"
        "</body></html>"
    )
