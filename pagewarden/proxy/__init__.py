"""The network layer: mitmproxy addons run in-process next to the browser.

* `EgressPolicy` — which hosts and URLs the browser may reach (the policies' URL and domain
  rules, deny by default for anything unjudgeable); refusals are 403 pages naming the policy.
* `HostMap` — made-up host names resolved to a local port (tests, demo).
* `Recorder` / `Replay` — every flow saved in mitmproxy's format; a recording served back
  with no origin.
* `ProxyServer` — mitmproxy on its own thread and event loop, on a fresh 127.0.0.1 port.

See docs/guides/network.md for the exact rules.
"""

from pagewarden.proxy._ca import (
    CAError,
    CAInfo,
    ca_dir,
    ca_info,
    config_dir,
    ensure_ca,
    export_ca,
    regenerate_ca,
    spki_pin,
)
from pagewarden.proxy._egress import NETWORK_POLICY, EgressPolicy, EgressRules, is_navigation
from pagewarden.proxy._hostmap import HostMap
from pagewarden.proxy._recorder import Recorder
from pagewarden.proxy._refusal import REFUSED_HEADER, Refusal, refusal_page
from pagewarden.proxy._replay import REPLAY_HEADER, Replay
from pagewarden.proxy._server import ProxyError, ProxyServer, free_port

__all__ = [
    "NETWORK_POLICY",
    "REFUSED_HEADER",
    "REPLAY_HEADER",
    "CAError",
    "CAInfo",
    "EgressPolicy",
    "EgressRules",
    "HostMap",
    "ProxyError",
    "ProxyServer",
    "Recorder",
    "Refusal",
    "Replay",
    "ca_dir",
    "ca_info",
    "config_dir",
    "ensure_ca",
    "export_ca",
    "free_port",
    "is_navigation",
    "refusal_page",
    "regenerate_ca",
    "spki_pin",
]
