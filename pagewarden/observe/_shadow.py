"""What a click point shows from inside a closed shadow root, read over CDP.

A closed shadow root (``attachShadow({mode: "closed"})``, or a declarative
``<template shadowrootmode="closed">``) is out of every script's reach, the facts reader's
included, yet the browser renders it and a click lands on what it shows: a link there is
followed, its text is what a person (or a screenshot-reading agent) sees. The reader flags a
click point where that may be so (`ElementFacts.shadow_probe`: hit-testing stopped at a
possible host without an open root, over none of its own content); the guard then asks
Chromium for the node at that point (``DOM.getNodeForLocation`` pierces closed roots) and
walks up from it in an isolated world of its own (pristine DOM primitives, out of the page's
reach) to the link it is in and the text of its closed root. Chromium only; a few CDP round
trips, and only for flagged points.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pagewarden.observe._gather import Call, Gather
from pagewarden.steps import ElementFacts

__all__ = ["closed_shadow_facts"]

_WORLD = "pagewarden-closed-shadow"
_WALK = """function () {
  const out = {href: null, link_text: "", text: "", closed: false};
  let n = this;
  for (let i = 0; n && i < 256; i++) {
    const link = n.nodeType === 1 && (n.localName === "a" || n.localName === "area");
    if (link && !out.href && n.hasAttribute("href")) {
      out.href = n.href; out.link_text = (n.textContent || "").trim().slice(0, 200);
    }
    if (n.nodeType === 11) {
      if (n.mode === "closed" && !out.closed) {
        out.closed = true;
        out.text = (n.textContent || "").replace(/\\s+/g, " ").trim().slice(0, 1200);
      }
      n = n.host; continue;
    }
    n = n.parentNode;
  }
  return out;
}"""


def closed_shadow_facts(sessions: dict[Any, Any], page: Any, target: ElementFacts) -> Gather:
    """`target` completed with what its click point shows from a closed shadow root (the link
    the click follows, the root's text), or unchanged when there is none. `sessions` caches
    one CDP session per page."""
    try:
        x_text, y_text = (target.shadow_probe or "").split(",", 1)
        x, y = float(x_text), float(y_text)
    except ValueError:
        return replace(target, shadow_probe=None)
    session = sessions.get(page)
    if session is None:
        session = yield Call(page.context.new_cdp_session, (page,))
        sessions[page] = session
    tree = yield Call(session.send, ("Page.getFrameTree",))
    frame_id = tree["frameTree"]["frame"]["id"]
    world = yield Call(session.send, ("Page.createIsolatedWorld", {"frameId": frame_id, "worldName": _WORLD}))
    where = {"x": round(x), "y": round(y), "ignorePointerEventsNone": True}
    located = yield Call(session.send, ("DOM.getNodeForLocation", where))
    resolve = {"backendNodeId": located["backendNodeId"], "executionContextId": world["executionContextId"]}
    node = yield Call(session.send, ("DOM.resolveNode", resolve))
    answer = yield Call(
        session.send,
        ("Runtime.callFunctionOn", {"objectId": node["object"]["objectId"], "functionDeclaration": _WALK,
                                    "returnByValue": True}),
    )  # fmt: skip
    value = (answer.get("result") or {}).get("value") or {}
    if not isinstance(value, dict) or not value.get("closed"):
        return replace(target, shadow_probe=None)
    text = str(value.get("text") or "")
    changes: dict[str, Any] = {
        "shadow_probe": None,
        "hidden_text": " ".join(t for t in (target.hidden_text, text[:400]) if t),
        "context_text": " ".join(t for t in (text, target.context_text) if t)[:1200],
    }
    href = value.get("href")
    if isinstance(href, str) and href and target.href is None:
        changes.update(
            tag="a",
            role="link",
            href=href,
            name=target.name or str(value.get("link_text") or "")[:200],
            text=target.text or str(value.get("link_text") or "")[:400],
            activation="the click point shows a link inside a closed shadow root (read over CDP)",
            pointed=target.pointed or target.tag,
        )
    return replace(target, **changes)
