"""The gate's Content-Security-Policy: with an allow-list, Chromium itself refuses what Playwright's
routes do not see.

Playwright's request routes do not see the hops of a subresource's HTTP redirect (an allowed URL
answering 302 to a refused host), websockets outside its mock of the page's ``WebSocket`` (from a
worker, or with a constructor the page saved before the guard was attached), nor a shared or
service worker's requests. With ``domain_allow`` rules the navigation gate therefore also gives
every document of a guarded context a Content-Security-Policy listing the allowed hosts, which
Chromium enforces on every request the document and the workers it starts make, on every redirect
hop, and on websockets, whatever constructor opened them:

* **Documents** get it as ``<meta http-equiv="Content-Security-Policy">`` elements put into their
  ``<head>`` by a context init script (before any script of the page runs; into documents loaded
  before the wrap, at the wrap). A page cannot take a policy back once it applied, and a policy
  only ever narrows what the page's own policies allow. No round trip: the browser does the work.
  Frames, popups, ``about:blank`` / ``srcdoc`` frames and ``blob:`` / ``data:`` workers (which
  inherit their creator's policy) are covered.
* **Worker scripts** loaded from a URL (dedicated, shared and service workers) carry their own
  policy, from their response: the gate's browser-level DevTools session pauses responses of type
  ``Other`` (worker scripts, favicons) and adds the same policy as a header, with a
  ``report-uri`` the session answers itself (`pagewarden.interceptors._hops`).

One policy per distinct ``domain_allow`` rule (a host must match each rule, as each policy must
allow it): ``default-src`` and ``worker-src`` name the rule's hosts and its ``subresources``
hosts (a page loads from those; navigations to them are the gate's to judge) for ``http``, ``https``,
``ws`` and ``wss`` on any port, plus ``'unsafe-inline' 'unsafe-eval' 'wasm-unsafe-eval' data:
blob: filesystem: mediastream:``, so the policy never refuses more than the rules do; frames and
``<object>`` (``frame-src``, ``child-src``, ``object-src``) are left to the gate's judgement of
navigations (``*``), as are form submissions (no ``form-action``). A rule the policy cannot
express exactly (``*``, an IPv6 literal, a host CSP's grammar cannot spell) gives no policy:
the gate's other means apply. A violation of the gate's policy in a document becomes a
``network`` event of the gate (``action: "request"``, or ``"websocket"``, which the agent also
hears of), through a binding the init script calls.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterable
from typing import Any

from pagewarden._url import host_of_pattern, parse_url

__all__ = [
    "MAX_POLICIES", "REPORT_HOST", "csp_policies", "csp_script", "deny_url_patterns", "new_binding_name",
    "violation_url",
]

#: At most this many policies (the most restrictive rules first; fewer policies only ever
#: allow more, never less, than the rules).
MAX_POLICIES = 8
#: The host of the worker policies' ``report-uri`` (answered by the gate's DevTools session,
#: never sent; ``.invalid`` never resolves).
REPORT_HOST = "csp-report.pagewarden.invalid"
_KEEP = "'unsafe-inline' 'unsafe-eval' 'wasm-unsafe-eval' data: blob: filesystem: mediastream:"
_OPEN = "* data: blob: filesystem: mediastream:"
_CSP_HOST = re.compile(r"(?:\*\.)?[a-z0-9-]+(?:\.[a-z0-9-]+)*")
_SCHEMES = ("http", "https", "ws", "wss")


def _sources(pattern: str) -> list[str] | None:
    """The CSP host-sources that match exactly the hosts `pattern` matches (``host_matches``);
    None when CSP cannot say it, [] for ``*`` (every host)."""
    parsed = host_of_pattern(pattern)
    if parsed is None:
        return None
    prefix, host = parsed
    if prefix == "*":
        return []
    hosts = {"": [host], "*.": [f"*.{host}"], ".": [host, f"*.{host}"]}[prefix]
    if not all(_CSP_HOST.fullmatch(h) for h in hosts) or (host.replace(".", "").isdigit() and prefix):
        return None
    return [f"{scheme}://{h}:*" for h in hosts for scheme in _SCHEMES]


def csp_policies(allow_rules: Iterable[Any], extra_hosts: Iterable[str] = ()) -> list[str]:
    """The policies for `allow_rules` (the ``domain_allow`` rules of `EgressRules`; each has
    ``patterns``) and hosts every rule lets through besides (`extra_hosts`): one per distinct
    rule CSP can express, the most restrictive first, at most `MAX_POLICIES`."""
    extra: list[str] = []
    for pattern in extra_hosts:
        sources = _sources(pattern)
        if sources is None:
            return []  # a host CSP cannot name passes every rule: no policy may refuse it
        if sources == []:
            return []
        extra.extend(sources)
    seen: set[tuple[str, ...]] = set()
    lists: list[list[str]] = []
    for rule in allow_rules:
        patterns = tuple(getattr(rule, "patterns", ()) or ())
        loads = tuple(getattr(rule, "subresources", ()) or ())
        if (patterns, loads) in seen:
            continue
        seen.add((patterns, loads))
        sources: list[str] = []
        for pattern in (*patterns, *loads):
            got = _sources(pattern)
            if got is None or got == []:
                break  # the rule allows what CSP cannot say (or everything): no policy for it
            sources.extend(got)
        else:
            if patterns:
                lists.append(list(dict.fromkeys([*sources, *extra])))
    lists.sort(key=len)
    out = []
    for sources in lists[:MAX_POLICIES]:
        allowed = " ".join(sources)
        out.append(
            f"default-src {allowed} {_KEEP}; worker-src {allowed} {_KEEP}; "
            f"frame-src {_OPEN}; child-src {_OPEN}; object-src {_OPEN}"
        )
    return out


def new_binding_name() -> str:
    """A fresh name for the binding violations are reported through (one per gate)."""
    return f"__pwGateCsp{secrets.token_hex(6)}"


def csp_script(policies: list[str], binding: str) -> str:
    """The script that gives a document `policies` (``<meta>`` elements in its ``<head>``: at
    once if it has one, else as soon as the parser made it) and reports their violations to
    `binding`. It runs first in new documents (an init script) and again in loaded ones."""
    return _SCRIPT.replace("__POLICIES__", json.dumps(policies)).replace("__BINDING__", json.dumps(binding))


def violation_url(data: Any) -> tuple[str, str] | None:
    """(blocked URL, directive) of a violation the script reported (None: not one to record)."""
    if not isinstance(data, dict):
        return None
    url, directive = data.get("url"), data.get("directive")
    if not isinstance(url, str) or not isinstance(directive, str):
        return None
    url, directive = url[:4096], directive[:40]
    if parse_url(url).scheme not in _SCHEMES:
        return None  # 'inline', 'eval', data:…: never refused by the gate's policy
    return url, directive


_SCRIPT = r"""(() => {
  const policies = __POLICIES__, name = __BINDING__, doc = document;
  if (!policies.length || Object.prototype.hasOwnProperty.call(doc, name)) return;
  try { Object.defineProperty(doc, name, {value: true}); } catch (e) { return; }
  const create = Document.prototype.createElement, prepend = Element.prototype.prepend;
  const setAttribute = Element.prototype.setAttribute;
  const headOf = Object.getOwnPropertyDescriptor(Document.prototype, "head").get;
  const MO = MutationObserver, observe = MO.prototype.observe, disconnect = MO.prototype.disconnect;
  const send = window[name], stringify = JSON.stringify, mine = new Set(policies);
  const put = () => {
    const head = headOf.call(doc);
    if (!head) return false;
    for (const policy of policies) {
      const meta = create.call(doc, "meta");
      setAttribute.call(meta, "http-equiv", "Content-Security-Policy");
      setAttribute.call(meta, "content", policy);
      prepend.call(head, meta);
    }
    return true;
  };
  if (!put()) {
    const watch = new MO(() => { if (put()) disconnect.call(watch); });
    observe.call(watch, doc, {childList: true, subtree: true});
  }
  let reported = 0;
  if (typeof send === "function") {
    addEventListener("securitypolicyviolation", (event) => {
      if (!mine.has(event.originalPolicy) || event.disposition !== "enforce" || ++reported > 256) return;
      try {
        send(stringify({url: String(event.blockedURI), directive: String(event.effectiveDirective)}));
      } catch (e) {}
    }, true);
  }
})();"""


def deny_url_patterns(rules: Any, *, covered: bool) -> list[str]:
    """DevTools ``Fetch`` URL patterns (globs) every URL on a host the rules deny (``domain_deny``,
    ``deny_hosts``) matches — a superset: the gate judges what they pause. With `covered`, the
    hosts the allow-list refuses anyway (its policy covers them) are left out. A ``*`` pattern
    (every host) gives none: the allow-list, or nothing, has to say it."""
    patterns: list[str] = []
    texts = [p for rule in getattr(rules, "domain_deny", ()) for p in rule.patterns]
    for pattern in [*texts, *getattr(rules, "deny_hosts", ())]:
        parsed = host_of_pattern(pattern)
        if parsed is None or parsed[0] == "*":
            continue
        prefix, host = parsed
        if covered and not _allowed_by_every_rule(rules, host, prefix):
            continue
        glob = host.replace("\\", "\\\\").replace("*", "\\*").replace("?", "\\?")
        patterns.extend((f"*://*{glob}/*", f"*://*{glob}:*"))
    return list(dict.fromkeys(patterns))


def _allowed_by_every_rule(rules: Any, host: str, prefix: str) -> bool:
    """Whether some host `prefix` + `host` names may pass every ``domain_allow`` rule."""
    from pagewarden._url import host_matches
    for rule in rules.domain_allow:
        for pattern in (*rule.patterns, *getattr(rule, "subresources", ())):
            parsed = host_of_pattern(pattern)
            if parsed is None or parsed[0] == "*" or parsed[1] == host or parsed[1].endswith("." + host):
                return True  # an allowed host under the denied one (or one the gate cannot read)
    samples = [host] if prefix == "" else [f"a.{host}"] if prefix == "*." else [host, f"a.{host}"]
    return any(
        all(any(host_matches(sample, p) for p in (*rule.patterns, *getattr(rule, "subresources", ())))
            for rule in rules.domain_allow)
        for sample in samples
    )
