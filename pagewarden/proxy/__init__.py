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
    CA_CERT,
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
from pagewarden.proxy._replay import REPLAY_HEADER, Replay, flows_file
from pagewarden.proxy._server import ProxyError, ProxyServer, free_port
from pagewarden.proxy._session import chromium_proxy_args, session_proxy, standalone_proxy, verify_enforcing
from pagewarden.proxy._tokens import accept_language

__all__ = [
    "CA_CERT",
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
    "accept_language",
    "ca_dir",
    "ca_info",
    "chromium_proxy_args",
    "config_dir",
    "ensure_ca",
    "export_ca",
    "flows_file",
    "free_port",
    "is_navigation",
    "refusal_page",
    "regenerate_ca",
    "session_proxy",
    "spki_pin",
    "standalone_proxy",
    "verify_enforcing",
]
