"""Provenance that survives a page change: tabs reached through untrusted content are tainted.

An injection rarely does its harm on the page that carries it: it sends the agent to another
page of the same site (a link in a comment, a URL quoted in a post, a link whose fragment
carries the instructions), and there ordinary controls do the attacker's bidding. Nothing on
that second page reads as an instruction. So the guard remembers, per tab, that the agent
arrived through untrusted content (`Taint`), until it returns to the task's own path: the
page it started on, pages it worked on before the taint, and pages the goal names.

`TabMemory` is the per-session state (sans-I/O, updated after each judged step); `TabView`
is what the rules see for one step. `untrusted_arrival` decides whether a navigation that
ran was led by untrusted content.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING
from urllib.parse import unquote

from pagewarden._url import page_key, parse_url
from pagewarden.rules._instructions import (
    goal_supports_text,
    goal_supports_url,
    instruction_signals,
    reasoning_cites_page,
    reasoning_follows_page,
)
from pagewarden.rules._overlays import site_chrome

if TYPE_CHECKING:
    from pagewarden.steps import ElementFacts, Prediction, Step

__all__ = ["TabMemory", "TabView", "Taint", "fragment_instructions", "page_key", "untrusted_arrival"]

_TRAIL = 200
_GOAL_URL = re.compile(r"(?:https?://)?(?:[a-z0-9-]+\.)+[a-z]{2,}(?::\d+)?(?:/[^\s'\"<>),]*)?", re.IGNORECASE)
_NAVIGATING = frozenset({"click", "dblclick", "tap", "press", "goto", "new_page"})


@dataclass(frozen=True, slots=True)
class Taint:
    """Why a tab is tainted: how it was reached, from where, and the untrusted text that led there."""

    reason: str
    source_url: str = ""
    dest: str = ""  # page key of where the untrusted link or URL led
    snippet: str = ""  # the untrusted text around the link or URL (instructions, values to type)
    step: int = 0


class TabView:
    """The tab of one step as the rules see it (read-only).

    `taint`: in force for this step (None on the task's own path). `own_path`: the page is the
    start page, a page worked on untainted, or named by the goal. `start`: page key of the
    session's start page. A tab with no taint of its own may still be tainted by its page's
    URL (instructions in the fragment): that check reads the fragment for instructions, so it
    runs when `taint` is first read (only provenance rules read it), not for every step.
    """

    __slots__ = ("_fragment_of", "_taint", "own_path", "start")

    def __init__(
        self,
        taint: Taint | None = None,
        own_path: bool = False,
        start: str | None = None,
        *,
        fragment_of: tuple[str, str, int] | None = None,
    ) -> None:
        set_ = object.__setattr__
        set_(self, "_taint", taint)
        #: (page URL, page key, step index) whose fragment decides the taint, while unread
        set_(self, "_fragment_of", fragment_of if taint is None else None)
        set_(self, "own_path", own_path)
        set_(self, "start", start)

    @property
    def taint(self) -> Taint | None:
        """The taint in force for this step (None on the task's own path)."""
        pending = self._fragment_of
        if pending is not None:
            url, key, index = pending
            fragment = fragment_instructions(url)
            if fragment is not None:
                why = "the page's URL carries instructions in its fragment"
                object.__setattr__(self, "_taint", Taint(why, url, key, fragment, index))
            object.__setattr__(self, "_fragment_of", None)
        return self._taint

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"TabView is read-only (cannot set {name!r})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TabView):
            return NotImplemented
        return (self.taint, self.own_path, self.start) == (other.taint, other.own_path, other.start)

    def __hash__(self) -> int:
        return hash((self.taint, self.own_path, self.start))

    def __repr__(self) -> str:
        return f"TabView(taint={self.taint!r}, own_path={self.own_path!r}, start={self.start!r})"


def _without_query(key: str) -> str:
    return key.split("?", 1)[0]


@lru_cache(maxsize=256)
def _goal_pages(goal: str) -> frozenset[str]:
    """Page keys (without query) of the URLs the goal names."""
    keys = set()
    for match in _GOAL_URL.finditer(goal or ""):
        text = match.group(0).rstrip(".")
        if "/" not in text.split("://", 1)[-1]:
            continue  # a bare host names a site, not a page
        key = page_key(text if "://" in text else f"http://{text}")
        if key:
            keys.add(_without_query(key))
    return frozenset(keys)


@lru_cache(maxsize=1024)
def fragment_instructions(url: str) -> str | None:
    """The fragment of `url` when it reads as prose aimed at the agent (instructions, not an
    anchor); memoised: a page's URL is judged again at every action on it."""
    fragment = unquote(parse_url(url or "about:blank").fragment or "")
    if len(fragment) < 12:
        return None
    words = re.split(r"[\s\-+_:]+", fragment)
    signals = instruction_signals(fragment)
    if signals.instruction_like or signals.strong or len([w for w in words if w]) >= 5:
        return fragment[:300]
    return None


def _aria_only(el: ElementFacts) -> bool:
    return bool(el.aria_text) and len(el.aria_text) > 40 and len(el.text) < len(el.aria_text) / 3


def _untrusted_element(el: ElementFacts) -> str | None:
    """Why an element's link counts as untrusted content, or None."""
    if el.overlay_in_ugc:
        return "a pop-up drawn inside user content"
    if el.in_ugc:
        return "a link in user content"
    if not el.visible:
        return "a hidden link"
    if _aria_only(el):
        return "a link described only by its aria-label"
    overlay = el.overlay
    if overlay is not None and overlay.agent_opened is False and not site_chrome(el):
        return "a box over the page that the agent did not open"
    return None


def untrusted_arrival(
    step: Step, prediction: Prediction, *, own: frozenset[str] = frozenset()
) -> Taint | None:
    """The taint a navigation that ran leaves on its tab, or None when the user's goal or the
    task's own path accounts for it."""
    nav = prediction.navigation
    action = step.action
    if nav is None or action.kind not in _NAVIGATING:
        return None
    goal = step.goal or ""
    dest = parse_url(nav.url)
    key = page_key(nav.url)
    if key and (key in own or _without_query(key) in own):
        return None
    if goal_supports_url(goal, dest.host, dest.path, same_site=not nav.cross_site):
        return None
    obs = step.observation
    source_url = obs.url or ""
    fragment = fragment_instructions(nav.url)
    if fragment is not None:
        return Taint("its URL carries instructions in the fragment", source_url, key, fragment, step.index)
    el = obs.target
    if action.kind in ("goto", "new_page"):
        untrusted = [s for s in obs.value_sources if s.in_ugc or s.hidden or s.in_dialog]
        if untrusted:
            where = "hidden text" if untrusted[0].hidden else "user content"
            return Taint(f"the URL was found in {where}", source_url, key, untrusted[0].snippet, step.index)
    elif el is not None:
        why = _untrusted_element(el)
        if why is not None and not (goal_supports_text(goal, el.label) and not nav.cross_site):
            snippet = " ".join(part for part in (el.context_text, unquote(nav.url), el.aria_text) if part)
            return Taint(f"reached through {why}", source_url, key, snippet[:1500], step.index)
    follows = reasoning_follows_page(step.reasoning)
    if follows or reasoning_cites_page(step.reasoning):
        # The agent says the page sent it; that counts where the page also shows it: a URL found
        # in the page, or a link among instructions; or where the agent says outright that it
        # is doing what the page told it to (an injection need not spell out the URL it sends
        # the agent to: "add my coworker as a Maintainer" leads to the members page). Then what
        # the agent retells of the page's instructions is the untrusted text: values it later
        # types there that only this text holds are the page's, not the user's.
        if action.kind in ("goto", "new_page") and obs.value_sources:
            snippet = obs.value_sources[0].snippet
        elif el is not None and instruction_signals(el.context_text).instruction_like:
            snippet = el.context_text
        elif follows:
            snippet = step.reasoning or ""
        else:
            return None
        return Taint("the agent's reasoning says the page sent it there", source_url, key, snippet[:1500],
                     step.index)  # fmt: skip
    return None


def _left_on(step: Step, prediction: Prediction | None, key: str, *, ran: bool) -> str | None:
    """The page key a step leaves its tab on: where a judged navigation in the tab goes, the
    same page for a step that does not navigate, None when it cannot be known."""
    if not ran:
        return key
    kind = step.action.kind
    if kind in ("go_back", "go_forward", "reload") or (prediction is not None and prediction.submission):
        return None
    navigation = prediction.navigation if prediction is not None else None
    if navigation is not None:
        return key if navigation.new_tab else (page_key(navigation.url) or None)
    if kind == "goto" and step.action.value:
        return page_key(step.action.value) or None
    return key


class TabMemory:
    """Per-session memory of tainted tabs and of the task's own path."""

    def __init__(self) -> None:
        self.taints: dict[str, Taint] = {}
        self.trail: deque[str] = deque(maxlen=_TRAIL)
        self.start: str | None = None
        self.pending_new_tab: Taint | None = None
        self.seen: set[str] = set()
        #: per tab, the page key the agent's last step left it on (None: unknown — a traversal,
        #: a submission whose answer may redirect). A tainted tab whose URL then shows another
        #: page of the task's own path got there by itself (`history.replaceState` /
        #: `pushState`, a script navigation): not a return, the taint stays.
        self.expected: dict[str, str | None] = {}

    def own_pages(self, goal: str | None) -> frozenset[str]:
        """Page keys of the task's own path: the start page, untainted pages, pages in the goal."""
        pages = set(self.trail) | _goal_pages(goal or "")
        if self.start:
            pages.add(self.start)
        return frozenset(pages)

    def _on_own_path(self, key: str, goal: str | None, taint: Taint | None) -> bool:
        if not key:
            return False
        if key == self.start or _without_query(key) in _goal_pages(goal or ""):
            return True
        return key in self.trail and (taint is None or key != taint.dest)

    def _returned(self, tab: str, key: str, goal: str | None, taint: Taint | None) -> bool:
        """Whether the tab is on the task's own path, having got there by the agent's steps."""
        if not self._on_own_path(key, goal, taint):
            return False
        if taint is None:
            return True
        expected = self.expected.get(tab)
        return expected is None or expected == key

    def _taint_of(self, tab: str) -> Taint | None:
        taint = self.taints.get(tab)
        if taint is None and tab not in self.seen and self.seen:
            taint = self.pending_new_tab
        return taint

    def view(self, step: Step) -> TabView:
        """The tab of `step`: its taint in force (none on the task's own path)."""
        tab = step.observation.tab or ""
        key = page_key(step.observation.url)
        taint = self._taint_of(tab)
        own = self._returned(tab, key, step.goal, taint)
        start = self.start if self.start is not None or self.seen else (key or None)
        if own:
            return TabView(None, own_path=True, start=start)
        if taint is not None:
            return TabView(taint, own_path=False, start=start)
        # no taint of its own: the page's URL may carry one (read when a rule asks)
        fragment_of = (step.observation.url or "", key, step.index)
        return TabView(None, own_path=False, start=start, fragment_of=fragment_of)

    def record(self, step: Step, prediction: Prediction | None, *, ran: bool) -> None:
        """Update the memory after `step` was judged (and ran, or not)."""
        tab = step.observation.tab or ""
        if tab not in self.seen:
            if self.seen and self.pending_new_tab is not None and tab not in self.taints:
                self.taints[tab] = self.pending_new_tab
                self.pending_new_tab = None
            self.seen.add(tab)
        key = page_key(step.observation.url)
        if self.start is None:
            if key:
                self.start = key
            elif ran and step.action.kind in ("goto", "new_page") and step.action.value:
                self.start = page_key(step.action.value) or None
        taint = self.taints.get(tab)
        if taint is not None and self._returned(tab, key, step.goal, taint):
            del self.taints[tab]
            taint = None
        self.expected[tab] = _left_on(step, prediction, key, ran=ran)
        if not ran:
            return
        if taint is None and key and key not in self.trail:
            self.trail.append(key)
        if prediction is None:
            return
        arrival = untrusted_arrival(step, prediction, own=self.own_pages(step.goal))
        if arrival is None and taint is not None and prediction.navigation is not None:
            arrival = taint  # moving on from a tainted page keeps the taint
        if arrival is None:
            return
        if prediction.navigation is not None and prediction.navigation.new_tab:
            self.pending_new_tab = arrival
        else:
            self.taints[tab] = arrival
