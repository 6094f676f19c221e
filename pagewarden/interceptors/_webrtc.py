"""WebRTC without the network layer: a peer connection reaches only hosts the policies allow.

WebRTC's traffic goes around everything the browser layer sees: ICE servers (STUN, TURN over
UDP, TCP or TLS) and the peers a page names (remote candidates, whose connectivity checks carry
ICE credentials the page chose) are contacted by Chromium's network stack directly, never
through Playwright's routes, and a page can put what the agent typed into a TURN username.
`launch` starts Chromium with ``--webrtc-ip-handling-policy=disable_non_proxied_udp`` and
``--force-webrtc-ip-handling-policy=disable_non_proxied_udp`` (the headless shell reads only
the second): no UDP at all, no datagram to a STUN/TURN server or a peer. What is left (TURN
over TCP or TLS, ICE over TCP) and every WebRTC route of a browser pagewarden did not launch
is judged here, in the page.

With host rules (``domain_allow``, ``domain_deny``), the gate gives every document of a guarded
context an init script (before any script of the page runs, in every frame and popup) that
replaces ``RTCPeerConnection``: a connection whose ICE servers (the constructor,
``setConfiguration``) or remote candidates (``setRemoteDescription``'s SDP, ``addIceCandidate``)
name a host the rules refuse is refused — the constructor and ``setConfiguration`` throw, the
others reject, with a ``NotAllowedError`` — and reported through a binding as a ``network``
event of the gate (``action: "webrtc"``; recorded, not raised at the agent, as a refused
subresource; the report leaves after the page's current task, and a page that breaks what
Playwright's bindings use loses its reports, never the refusal). The judgement is made in the
page, synchronously, from the rules' host patterns
and with the script's own copies of the built-ins it uses, so a page that patches prototypes
(``String.prototype``, ``Array.prototype``, ``Promise``, ``JSON``) changes nothing; the
originals are kept in the script's closure only (the page cannot reach them from the
prototype chain), and what the page passes (a configuration with getters, a proxy) is read
once and handed on as the script's own copy. A host the script cannot read in its plain form
(an IP address in another notation, IPv6 where an IP address is denied or an allow-list
applies, a name with other characters) is refused.

Not covered: a frame Chromium puts in a process of its own and Playwright's init scripts do not
reach — a sandboxed ``srcdoc`` frame (``sandbox="allow-scripts"``, no ``allow-same-origin``)
under Chromium's isolation of sandboxed frames. With `launch` such a frame still sends no UDP;
its TCP relays are judged only by the network layer (``launch(proxy=True)``, which judges every
relay as a ``CONNECT``).
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from pagewarden._url import host_of_pattern, parse_url
from pagewarden.rules import NETWORK_POLICY, EgressRules, Refusal

__all__ = ["webrtc_hosts", "webrtc_refusal", "webrtc_script"]

#: the most reports one document sends (a page that keeps trying is reported once per host)
_REPORTS = 64


def _sources(patterns: tuple[str, ...] | list[str]) -> list[list[str]]:
    out: list[list[str]] = []
    for pattern in patterns:
        parsed = host_of_pattern(pattern)
        if parsed is not None:
            out.append([parsed[0], parsed[1]])
    return out


def webrtc_hosts(rules: EgressRules) -> dict[str, Any] | None:
    """The host rules as the page's script reads them (None: no host rule, nothing to judge):
    ``allow`` — one list of ``[prefix, host]`` per ``domain_allow`` rule (its ``subresources``
    and the extra allowed hosts included; a host must match one entry of each list; a pattern
    the script cannot read matches nothing), ``deny`` — the denied ``[prefix, host]`` entries,
    ``closed`` — a denied pattern the script cannot read (then no host passes), ``ip`` — an IP
    address is denied (then no IPv6 literal passes: its IPv4 forms are not compared)."""
    deny_patterns = [p for rule in rules.domain_deny for p in rule.patterns] + list(rules.deny_hosts)
    if not rules.domain_allow and not deny_patterns:
        return None
    extra = list(rules.allow_hosts)
    allow = [_sources([*rule.patterns, *rule.subresources, *extra]) for rule in rules.domain_allow]
    deny = _sources(deny_patterns)
    readable = [p for p in deny_patterns if host_of_pattern(p) is not None]
    ip = any(host.replace(".", "").isdigit() for _, host in deny)
    return {"allow": allow, "deny": deny, "closed": len(readable) != len(deny_patterns), "ip": ip}


def webrtc_script(hosts: dict[str, Any], binding: str) -> str:
    """The init script for the host rules `hosts` (`webrtc_hosts`), reporting to `binding`."""
    mark = json.dumps(f"__pwRtc{secrets.token_hex(6)}")
    script = _SCRIPT.replace("__HOSTS__", json.dumps(hosts)).replace("__BINDING__", json.dumps(binding))
    return script.replace("__MARK__", mark)


def webrtc_refusal(rules: EgressRules, payload: Any) -> Refusal | None:
    """The refusal a page's report (`payload`, the JSON its script sent) tells of, judged again
    here with the rules' own code; None when the report is not one (the page may call the
    binding too: a host the rules allow is not recorded as refused)."""
    try:
        data = json.loads(payload) if isinstance(payload, str) and len(payload) < 8192 else None
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    what, host, url = data.get("what"), data.get("host"), data.get("url")
    if what not in ("ice_server", "candidate") or not isinstance(host, str) or not isinstance(url, str):
        return None
    host, url = host[:256], url[:1024]
    try:
        plain = parse_url(f"https://{host}/").host
        refusal = rules.judge_host(plain, action="webrtc", url=url, subresource=True)
    except Exception:  # noqa: BLE001 - a host the rules cannot read: the script's word stands
        refusal = None
    kind = "an ICE server" if what == "ice_server" else "a peer (remote candidate)"
    if refusal is not None:
        return Refusal(
            "webrtc", url, refusal.host, refusal.rule, refusal.policy_id,
            f"a WebRTC connection to {kind} on a host the policies refuse: {refusal.reason}",
        )  # fmt: skip
    if data.get("unread") is True:  # the script could not read the host: refused there, fail closed
        return Refusal(
            "webrtc", url, host, "webrtc", NETWORK_POLICY,
            f"a WebRTC connection to {kind} whose address the guard cannot judge "
            "(another notation, or IPv6 where the policies list hosts or deny an IP address)",
        )  # fmt: skip
    return None


_SCRIPT = r"""(() => {
  const hosts = __HOSTS__, name = __BINDING__, mark = __MARK__, w = window;
  if (!hosts || Object.prototype.hasOwnProperty.call(w, mark)) return;
  try { Object.defineProperty(w, mark, {value: true}); } catch (e) { return; }
  const Original = w.RTCPeerConnection;
  if (typeof Original !== "function") return;
  // the built-ins the script uses, taken before any script of the page runs
  const bind = Function.prototype.bind, call = Function.prototype.call;
  const uncurry = (fn) => bind.call(call, fn);
  const lower = uncurry(String.prototype.toLowerCase), endsWith = uncurry(String.prototype.endsWith);
  const slice = uncurry(String.prototype.slice), indexOf = uncurry(String.prototype.indexOf);
  const exec = uncurry(RegExp.prototype.exec), construct = Reflect.construct, apply = Reflect.apply;
  const defineProperty = Object.defineProperty, isArray = Array.isArray, Str = String;
  const DOMExc = DOMException, reject = bind.call(Promise.reject, Promise), stringify = JSON.stringify;
  const send = w[name];
  const proto = Original.prototype;
  const originals = {
    setConfiguration: proto.setConfiguration, setRemoteDescription: proto.setRemoteDescription,
    addIceCandidate: proto.addIceCandidate,
  };
  const URL_RE =
    /^(stuns?|turns?):(\[[0-9a-fA-F:.]+\]|[^:?\/\[\]@\s]+)(?::(\d{1,5}))?(?:\?transport=(?:udp|tcp))?$/i;
  const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
  const NAME =
    /^(?=.{1,253}$)(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
  const NUMERIC_END = /(?:^|\.)(?:\d+|0x[0-9a-f]*)$/;
  const CANDIDATE = /^(?:a=)?candidate:\S+ \d+ (?:udp|tcp) \d+ (\S+) \d+ typ /i;
  const matches = (host, entry) => {
    const prefix = entry[0], pattern = entry[1];
    if (prefix === "*") return true;
    if (prefix === "") return host === pattern;
    const below = endsWith(host, "." + pattern);
    return prefix === "*." ? below : below || host === pattern;
  };
  const some = (host, entries) => {
    for (let i = 0; i < entries.length; i++) if (matches(host, entries[i])) return true;
    return false;
  };
  // "" for a host the script cannot judge (refused), else the plain host
  const plain = (raw) => {
    let host = lower(Str(raw));
    if (endsWith(host, ".")) host = slice(host, 0, -1);
    if (host[0] === "[" || indexOf(host, ":") >= 0) {
      const v6 = host[0] === "[" ? slice(host, 1, -1) : host;
      return hosts.ip || hosts.allow.length ? "" : "[" + v6 + "]";
    }
    if (exec(IPV4, host) !== null) return host;
    return exec(NAME, host) !== null && exec(NUMERIC_END, host) === null ? host : "";
  };
  const allowed = (host) => {
    if (!host || hosts.closed || some(host, hosts.deny)) return false;
    for (let i = 0; i < hosts.allow.length; i++) if (!some(host, hosts.allow[i])) return false;
    return true;
  };
  // reports leave after the page's current task (a page that patched the built-ins
  // Playwright's binding uses may have put them back by then); the refusal never waits for them
  let reports = 0;
  const queue = [], later = w.setTimeout;
  const flush = () => {
    for (let i = 0; i < queue.length; i++) { try { send(queue[i]); } catch (e) {} }
    queue.length = 0;
  };
  const refuse = (what, host, url, unread) => {
    if (reports++ < __REPORTS__ && typeof send === "function") {
      try {
        const report = {what: what, host: Str(host), url: slice(Str(url), 0, 1000), unread: unread};
        queue[queue.length] = stringify(report);
        if (queue.length === 1) apply(later, w, [flush, 0]);
      } catch (e) {}
    }
    const message = "pagewarden refused a WebRTC connection to " + slice(Str(url), 0, 200);
    return new DOMExc(message, "NotAllowedError");
  };
  const iceServers = (list) => {  // the page's iceServers, read once, as the script's own copy
    if (list === undefined || list === null) return undefined;
    const out = [], count = list.length >>> 0;
    for (let i = 0; i < count; i++) {
      const server = list[i];
      if (server === null || typeof server !== "object") throw new TypeError("bad iceServers entry");
      const given = server.urls, urls = [];
      if (typeof given === "string") urls[0] = given;
      else { const n = given.length >>> 0; for (let j = 0; j < n; j++) urls[j] = Str(given[j]); }
      for (let j = 0; j < urls.length; j++) {
        const parsed = exec(URL_RE, urls[j]);
        const host = parsed === null ? "" : plain(parsed[2]);
        if (!allowed(host)) throw refuse("ice_server", parsed === null ? urls[j] : parsed[2], urls[j], !host);
      }
      const copy = {urls: urls};
      const username = server.username, credential = server.credential;
      if (username !== undefined) copy.username = Str(username);
      if (credential !== undefined) copy.credential = Str(credential);
      out[i] = copy;
    }
    return out;
  };
  const FIELDS = ["bundlePolicy", "certificates", "iceCandidatePoolSize", "iceTransportPolicy",
                  "rtcpMuxPolicy", "sdpSemantics", "encodedInsertableStreams"];
  const configuration = (config) => {
    if (config === undefined || config === null) return config;
    const copy = {};
    for (let i = 0; i < FIELDS.length; i++) {
      const value = config[FIELDS[i]];
      if (value !== undefined) copy[FIELDS[i]] = value;
    }
    const servers = iceServers(config.iceServers);
    if (servers !== undefined) copy.iceServers = servers;
    return copy;
  };
  const candidate = (text) => {  // undefined when the candidate line may be used, else the refusal
    const parsed = exec(CANDIDATE, text);
    const host = parsed === null ? "" : plain(parsed[1]);
    return allowed(host) ? undefined : refuse("candidate", parsed === null ? "" : parsed[1], text, !host);
  };
  const sdpCandidates = (sdp) => {
    let start = 0;
    while (start < sdp.length) {
      let end = indexOf(sdp, "\n", start);
      if (end < 0) end = sdp.length;
      let line = slice(sdp, start, end);
      if (endsWith(line, "\r")) line = slice(line, 0, -1);
      if (slice(line, 0, 12) === "a=candidate:") {
        const refused = candidate(line);
        if (refused) return refused;
      }
      start = end + 1;
    }
    return undefined;
  };
  function RTCPeerConnection(config, constraints) {
    if (new.target === undefined) {
      throw new TypeError("Failed to construct 'RTCPeerConnection': Please use the 'new' operator");
    }
    const args = [configuration(config)];
    if (constraints !== undefined) args[1] = constraints;
    return construct(Original, args, new.target);
  }
  defineProperty(RTCPeerConnection, "prototype", {value: proto, writable: false});
  defineProperty(proto, "constructor", {value: RTCPeerConnection, writable: true, configurable: true});
  if (typeof Original.generateCertificate === "function") {
    const generate = {value: Original.generateCertificate, writable: true, configurable: true};
    defineProperty(RTCPeerConnection, "generateCertificate", generate);
  }
  const method = (key, fn) => defineProperty(proto, key, {value: fn, writable: true, configurable: true});
  const withFirst = (first, given) => {  // [first, given[1], given[2] …] with no iterator of the page
    const args = [first];
    for (let i = 1; i < given.length; i++) args[i] = given[i];
    return args;
  };
  method("setConfiguration", function setConfiguration(config) {
    return apply(originals.setConfiguration, this, [configuration(config)]);
  });
  method("setRemoteDescription", function setRemoteDescription(description) {
    let copy = description;
    if (description !== null && typeof description === "object") {
      const type = description.type, sdp = description.sdp;
      copy = {type: type};
      if (sdp !== undefined && sdp !== null) {
        copy.sdp = Str(sdp);
        const refused = sdpCandidates(copy.sdp);
        if (refused) return reject(refused);
      }
    }
    return apply(originals.setRemoteDescription, this, withFirst(copy, arguments));
  });
  method("addIceCandidate", function addIceCandidate(init) {
    let copy = init;
    if (init !== null && typeof init === "object") {
      const text = init.candidate, mid = init.sdpMid, index = init.sdpMLineIndex;
      const ufrag = init.usernameFragment;
      copy = {};
      if (text !== undefined) copy.candidate = text === null ? null : Str(text);
      if (mid !== undefined) copy.sdpMid = mid;
      if (index !== undefined) copy.sdpMLineIndex = index;
      if (ufrag !== undefined) copy.usernameFragment = ufrag;
      if (typeof copy.candidate === "string" && copy.candidate !== "") {
        const refused = candidate(copy.candidate);
        if (refused) return reject(refused);
      }
    }
    return apply(originals.addIceCandidate, this, withFirst(copy, arguments));
  });
  for (const key of ["RTCPeerConnection", "webkitRTCPeerConnection"]) {
    if (key in w) defineProperty(w, key, {value: RTCPeerConnection, writable: true, configurable: true});
  }
})();""".replace("__REPORTS__", str(_REPORTS))
