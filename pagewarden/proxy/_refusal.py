"""A refusal of the network layer: what it records, reports and answers the browser with.

`Refusal` itself lives in `pagewarden.rules._egress` (the embedded navigation gate makes
them too, without importing mitmproxy); it is re-exported here."""

from __future__ import annotations

import html

from pagewarden.rules import Refusal, RefusalSink

__all__ = ["REFUSED_HEADER", "Refusal", "RefusalSink", "refusal_page"]

#: Response header naming the policy that refused a request (on every refusal page).
REFUSED_HEADER = "X-Pagewarden-Refused"


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
