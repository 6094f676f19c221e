"""Navigation grants: a top-level navigation to another site needs an action the guard judged.

The guard's pipeline calls `NetworkSession.grant` just before it executes an allowed action;
the grant names the sites the action may take the browser to (the world model's navigation
and form-submission targets, a goto's or new page's URL) and lasts `ttl` seconds. The
`NavigationGrants` addon then lets a navigation (a document or frame request) through when
its host is on the policies' allow-list (a ``domain_allow`` rule naming hosts: the browser
layer lets a page go there too, so both layers agree on what a pattern covers), or its site is

* one the tab has already been on through a judged action (moving around a site, and
  back to one, needs no new grant),
* granted right now to that tab, or
* the target of a redirect (3xx ``Location``) answering a navigation it let through.

Grants and reached sites are per tab: the guard tags each page it acts in with its tab id
(``x-pw-<token>-t2`` in that page's ``Accept-Language``, set just before its first judged
action), so a grant made by an action in tab A is no use to a page-initiated navigation in
tab B, and a site tab A reached does not open it to tab B. Requests of a page not tagged yet
(a popup before the agent acts in it) use the grants of actions that may open a tab. A
navigation a service worker answers with a fetch of its own (``Sec-Fetch-Dest: empty``; it only
ever goes to the worker's own origin, and carries the context's token but no tab's) passes when
a tab the guard acts in reached its site.

Otherwise it refuses it with the 403 page (policy ``PW-NETWORK``, rule ``grant``): a page's
own ``location = …``, ``window.open(…)`` from a click handler, ``form.submit()`` or
meta refresh to a site no judged action led to. The refusal is a ``network`` event, and the
agent's action then running (`signal`), or else its next guarded call, raises `ActionBlocked`
naming it (`NetworkSession.pending_verdict`). A refusal that is not raised (a frame's own,
monitor mode) is a ``refusal`` line in the trace (`record_unraised`).
In ``monitor`` mode the guard's grants are recorded, and navigations without one are reported,
not refused.
"""

from __future__ import annotations

import contextlib
import threading
import time
import weakref
from collections import deque
from dataclasses import replace
from typing import Any

from mitmproxy import http

from pagewarden._url import parse_url, registrable_domain, resolve_url
from pagewarden.interceptors import FRAME_OWN, MONITORED, FrameActions, RefusalSignal, record_unraised
from pagewarden.proxy._egress import NETWORK_POLICY, is_navigation, refuse_flow
from pagewarden.proxy._refusal import Refusal
from pagewarden.proxy._tokens import new_token
from pagewarden.rules import (
    AGENT_ACTIONS,
    REFUSALS_KEPT,
    DownloadGrants,
    refusals_verdict,
    reported_to_agent,
    split_pending,
)
from pagewarden.steps import Verdict

__all__ = ["NavigationGrants", "NetworkSession", "site_of"]

#: how many redirect hops a session remembers (to name a refused redirect's chain)
_HOPS_KEPT = 256
#: how long a redirect counts as a hop of a chain that a refusal names
_HOP_SECONDS = 10.0



def site_of(url_or_host: str) -> str:
    """The registrable domain (site) of a URL or host; the host itself for IPs and
    single-label names; "" when there is none."""
    host = parse_url(url_or_host).host if "/" in url_or_host else url_or_host.lower()
    if not host:
        return ""
    return registrable_domain(host) or host


def _opens_tab(step: Any, prediction: Any) -> bool:
    """Whether the action may open a new tab (whose first requests carry no tab id yet)."""
    if step.action.kind == "new_page":
        return True
    if prediction is not None and prediction.navigation is not None and prediction.navigation.new_tab:
        return True
    target = step.observation.target
    return target is not None and (target.link_target or "").lower() not in ("", "_self", "_top", "_parent")


class NetworkSession:
    """The network side of one guarded session: its token, grants, visited sites and the
    refusals the agent has not heard about yet. Thread-safe: the pipeline calls it on the
    agent's thread, the addons on the proxy's."""

    def __init__(self, guard: Any, *, token: str | None = None, ttl: float = 30.0) -> None:
        self.guard = guard
        self.token = token or new_token()
        self.ttl = ttl
        #: the proxy's listen port of this session's browser context, and its URL (the context's
        #: proxy setting: whatever arrives there is the session's; None until a proxy gives one)
        self.port: int | None = None
        self.proxy_url: str | None = None
        #: the context goes through the proxy's main port, beside the browser's own traffic (a
        #: persistent profile has one proxy setting for both): there, a request without the token
        #: is the session's when a document or worker made it (`pagewarden.proxy._tokens`)
        self.shares_main_port = False
        self._lock = threading.Lock()
        #: per tab (the guard's tab id; None: a page not tagged yet, e.g. a popup the page
        #: opened before the agent acted in it): site -> expiry (monotonic)
        self._grants: dict[str | None, dict[str, float]] = {}
        #: per tab: sites it reached through judged actions
        self._sites: dict[str | None, set[str]] = {}
        self._tagged: set[str] = set()
        #: the downloads judged download actions may start (per tab, for `ttl`)
        self.downloads = DownloadGrants(ttl)
        #: the context's own languages (``Accept-Language`` before the token), for the per-tab value
        self.locale: str | None = None
        self._pending: list[Refusal] = []
        # the latest refusals (each is also a `network` event and a log line): bounded, so a page
        # that keeps requesting a refused host for hours does not grow memory
        self.refusals: deque[Refusal] = deque(maxlen=REFUSALS_KEPT)
        #: when the agent acts inside a frame (a frame's refused navigation is then its own)
        self.frame_actions = FrameActions()
        #: fired for each refusal raised at the agent (a running action then ends at once)
        self.signal = RefusalSignal(lambda: bool(self._pending))
        #: the latest documents frames inside pages, and tabs' top documents, committed
        self._frame_urls: deque[str] = deque(maxlen=256)
        self._top_urls: deque[str] = deque(maxlen=256)
        self._watched: weakref.WeakSet[Any] = weakref.WeakSet()
        #: the index of the guarded step that ran last (flows are linked to it)
        self.current_step: int | None = None
        #: redirect target -> (the URL that redirected there, when): the latest navigations' hops
        self._hops: dict[str, tuple[str, float]] = {}

    @property
    def enforce(self) -> bool:
        """Grants are enforced unless the guard only monitors."""
        return getattr(self.guard, "mode", "enforce") == "enforce"

    # -- the agent's side -------------------------------------------------------------------
    def grant(self, step: Any, verdict: Verdict) -> list[str]:
        """Grant the sites `step` (allowed by `verdict`) may navigate to; returns them."""
        page = step.observation.url or None
        urls: list[str] = []
        prediction = verdict.prediction
        if prediction is not None and prediction.navigation is not None and prediction.navigation.url:
            urls.append(prediction.navigation.url)
        if prediction is not None and prediction.submission is not None and prediction.submission.url:
            urls.append(prediction.submission.url)
        action = step.action
        if action.kind in ("goto", "new_page") and action.value:
            urls.append(resolve_url(action.value, page) if page else action.value)
        self.current_step = getattr(step, "index", None)
        self._grant_download(step, verdict)
        sites = [s for s in (site_of(u) for u in urls) if s]
        if sites:
            tab = getattr(step.observation, "tab", None)
            tabs: list[str | None] = [tab]
            if tab is not None and (tab not in self._tagged or _opens_tab(step, prediction)):
                tabs.append(None)  # a page not tagged (yet): a new tab's first requests
            expiry = time.monotonic() + self.ttl
            with self._lock:
                for key in tabs:
                    pool = self._grants.setdefault(key, {})
                    for site in sites:
                        pool[site] = max(expiry, pool.get(site, 0.0))
        return sites

    def _grant_download(self, step: Any, verdict: Verdict) -> None:
        """An allowed action the guard judged a download (PW-DOWNLOAD, approved) may save a
        file from its link's site, for its tab (and a page not tagged yet), for `ttl`."""
        self.downloads.ttl = self.ttl
        self.downloads.grant(step, verdict)

    def download_allowed(self, url: str, tab: str | None = None) -> bool:
        """Whether a download from `url` in `tab` was led to by a download action the guard
        allowed (a live download grant of that tab, or of a page not tagged yet)."""
        return self.downloads.allowed(url, tab)

    @property
    def sites(self) -> set[str]:
        """Every site reached through judged actions, in any tab."""
        with self._lock:
            return set().union(*self._sites.values()) if self._sites else set()

    def reached_by_a_tab(self, url: str) -> bool:
        """Whether a tab the guard acts in (not a page it has not acted in yet) reached the site
        of `url` through judged actions."""
        site = site_of(url)
        with self._lock:
            return bool(site) and any(site in sites for tab, sites in self._sites.items() if tab is not None)

    def needs_tag(self, tab: str | None) -> bool:
        """Whether `tab`'s page still has to get its per-tab ``Accept-Language`` value."""
        return tab is not None and tab not in self._tagged

    def tab_language(self, tab: str) -> str:
        """The ``Accept-Language`` value the page of `tab` sends (session token + tab id)."""
        from pagewarden.proxy._tokens import accept_language

        return accept_language(self.token, self.locale, tab)

    def tagged(self, tab: str, url: str | None) -> None:
        """`tab`'s page now sends its tab id; the site it is on counts as reached by it."""
        site = site_of(url) if url and url.startswith(("http:", "https:")) else ""
        with self._lock:
            self._tagged.add(tab)
            if site:
                self._sites.setdefault(tab, set()).add(site)

    def has_pending(self, kinds: frozenset[str] | None = None) -> bool:
        """Whether refusals (of `kinds` of action; None: any) wait to be reported to the agent."""
        pending = self._pending
        return bool(pending) if kinds is None else any(r.action in kinds for r in list(pending))

    def watch_frames(self, page: Any) -> None:
        """Note which frame each navigation request of `page`'s context belongs to (Playwright's
        request events, popups' too): over plain HTTP the browser sends no ``Sec-Fetch-Dest``, so
        the proxy cannot tell a frame's navigation from a tab's; a refusal whose URL only a frame
        inside a page asked for was that frame's, one only a tab's top document asked for was
        the tab's."""
        with contextlib.suppress(Exception):  # a closed page: nothing to watch
            context = page.context
            if context in self._watched:
                return
            context.on("request", self._requested)
            self._watched.add(context)

    def unwatch_frames(self, context: Any) -> None:
        """Stop watching `context`'s requests (the guard was released from it)."""
        with contextlib.suppress(Exception):  # not watched, or closed
            if context in self._watched:
                self._watched.discard(context)
                context.remove_listener("request", self._requested)

    def _requested(self, request: Any) -> None:
        try:
            if not request.is_navigation_request():
                return
            url = str(request.url)
        except Exception:  # noqa: BLE001 - a request gone meanwhile
            return
        try:
            inner = request.frame.parent_frame is not None
        except Exception:  # noqa: BLE001 - a popup's first request (its frame is not made yet): a tab's
            inner = False
        with self._lock:
            (self._frame_urls if inner else self._top_urls).append(url)

    def pending_verdict(
        self,
        step: Any,
        frame_urls: frozenset[str] = frozenset(),
        during: str | None = None,
        kinds: frozenset[str] | None = None,
        tabs_only: bool = False,
    ) -> Verdict | None:
        """A BLOCK verdict for the refusals since the agent's last call (taken: reported
        once), or None. The step is the agent's next action, which then does not run.

        `frame_urls`: the URLs frames inside the session's pages show now and no tab's top
        document does (`subframe_urls`). A refused navigation commits the refusal page at its
        own URL, so a refusal whose URL one of them shows was a page's own frame's (an embed,
        an ad frame: the proxy cannot tell frames apart where the browser sends no
        ``Sec-Fetch-Dest``): recorded, not raised. `kinds`: only refusals of these actions (the
        others stay pending). `tabs_only`: of navigations, only those the browser's own request
        events show a tab's top document (or a popup) asked for; the others stay pending until
        the evidence is in (an action that ran is not failed on a guess)."""
        with self._lock:
            pending, self._pending = split_pending(self._pending, kinds)
            tops = set(self._top_urls)
            framed = (set(frame_urls) | set(self._frame_urls)) - tops
            if tabs_only:
                unknown = [r for r in pending if r.action == "navigation" and r.url not in tops]
                self._pending = unknown + self._pending
                pending = [r for r in pending if r not in unknown]
        if not self.frame_actions.active():
            frames = [r for r in pending if r.action == "navigation" and r.url in framed]
            pending = [r for r in pending if r not in frames]
            for refusal in frames:  # told only now (over plain HTTP the browser does not say)
                record_unraised(self.guard, refusal, layer="network", why=FRAME_OWN)
        return refusals_verdict(
            pending, step, mode=getattr(self.guard, "mode", "enforce"), enforced=self.enforce, during=during
        )

    # -- the proxy's side -------------------------------------------------------------------
    def navigation_allowed(self, url: str, tab: str | None = None) -> bool:
        """Whether a navigation of `tab` (None: an untagged page) to `url` is covered: a site
        that tab reached through a judged action, or a live grant of that tab's actions (a
        grant of tab A is no use to tab B). A granted site becomes one the tab reached."""
        site = site_of(url)
        if not site:
            return False
        now = time.monotonic()
        with self._lock:
            if site in self._sites.get(tab, ()):
                return True
            expiry = self._grants.get(tab, {}).get(site)
            if expiry is not None and expiry >= now:
                self._sites.setdefault(tab, set()).add(site)
                return True
        return False

    def follow_redirect(self, location: str, tab: str | None = None, source: str | None = None) -> None:
        """A let-through navigation of `tab` (to `source`) answered with a redirect: its target
        is part of it (and `source` a hop of the chain a refusal of it names)."""
        site = site_of(location)
        with self._lock:
            if source:
                if len(self._hops) >= _HOPS_KEPT:
                    self._hops.pop(next(iter(self._hops)))
                self._hops[location] = (source, time.monotonic())
            if site:
                pool = self._grants.setdefault(tab, {})
                pool[site] = max(time.monotonic() + 10.0, pool.get(site, 0.0))

    def _via(self, url: str) -> tuple[str, ...]:
        """The redirect hops that led to `url` in the last `_HOP_SECONDS` (first one first; call
        with the lock held)."""
        chain: list[str] = []
        since = time.monotonic() - _HOP_SECONDS
        while url in self._hops and len(chain) < 20:
            url, when = self._hops[url]
            if when < since or url in chain:
                break
            chain.append(url)
        return tuple(reversed(chain))

    def refused(self, refusal: Refusal) -> None:
        """Record a refusal of this session: a ``network`` event of the guard, a log line, and
        (for navigations, websockets and exfiltration) a verdict for the agent's next call."""
        with self._lock:
            if refusal.action == "navigation" and not refusal.via:
                refusal = replace(refusal, via=self._via(refusal.url))
            self.refusals.append(refusal)
            ours = refusal.subframe and refusal.action in AGENT_ACTIONS and self.frame_actions.active()
            raised = (ours or reported_to_agent(refusal)) and self.enforce
            if raised:
                self._pending.append(refusal)
        data = refusal.to_dict()
        data.pop("tab", None)
        self.guard.emit("network", data)
        fields = {k: data[k] for k in ("action", "host", "rule", "policy_id")}
        self.guard.log.info("network_refused", **fields)
        if raised:
            self.signal.fire(refusal)
        elif refusal.action in AGENT_ACTIONS:
            # a frame's own, or monitor mode: recorded in the trace with why it was not raised
            why = FRAME_OWN if self.enforce else MONITORED
            record_unraised(self.guard, refusal, layer="network", why=why)


class NavigationGrants:
    """mitmproxy addon: a navigation to a site no judged action led to is refused (see the
    module docstring). Only requests of a known session are judged; frames that Chromium
    labels as such (``Sec-Fetch-Dest: iframe``) are left to the egress rules."""

    def __init__(self, sessions: dict[str, NetworkSession], egress: Any = None) -> None:
        self.sessions = sessions
        #: the `EgressPolicy` of the chain: a navigation to a host the policies' allow-list
        #: names needs no grant (as in the browser layer: the user allowed it)
        self.egress = egress

    def _session(self, flow: http.HTTPFlow) -> NetworkSession | None:
        token = flow.metadata.get("pagewarden_session")
        return self.sessions.get(token) if token else None

    def request(self, flow: http.HTTPFlow) -> None:
        if flow.response is not None:
            return
        session = self._session(flow)
        request = flow.request
        if session is None or not is_navigation(request):
            return
        if request.headers.get("sec-fetch-dest", "") in ("iframe", "frame"):
            return
        rules = getattr(self.egress, "rules", None)
        listed = rules is not None and rules.allow_listed(parse_url(request.url).host)
        # a navigation a service worker answers with its own fetch (``Sec-Fetch-Dest: empty``, which
        # a page cannot set, or no page's token at all): it only ever goes to the worker's own
        # origin, and passes when a tab of the session reached that site through judged actions
        dest = request.headers.get("sec-fetch-dest")
        by_worker = flow.metadata.get("pagewarden_untagged") or dest == "empty"
        forwarded = bool(by_worker) and session.reached_by_a_tab(request.url)
        tab = flow.metadata.get("pagewarden_tab")
        if listed or forwarded or session.navigation_allowed(request.url, tab):
            flow.metadata["pagewarden_navigation"] = True
            return
        refusal = Refusal(
            "navigation", request.url, request.host, "grant", NETWORK_POLICY,
            "a navigation to another site that no action judged by the guard led to "
            "(the page started it by itself)", request.method,
        )  # fmt: skip
        if session.enforce:
            refuse_flow(flow, refusal)
        session.refused(refusal)

    def response(self, flow: http.HTTPFlow) -> None:
        if not flow.metadata.get("pagewarden_navigation") or flow.response is None:
            return
        if 300 <= flow.response.status_code < 400 and "location" in flow.response.headers:
            session = self._session(flow)
            if session is not None:
                location = resolve_url(flow.response.headers["location"], flow.request.url)
                session.follow_redirect(location, flow.metadata.get("pagewarden_tab"), flow.request.url)
