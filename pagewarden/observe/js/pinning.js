// Destination pinning: after a judged activation, stop link, form and script navigations to
// origins (and targets) nobody judged; stops are reported (a frame's to the top's reader).

// -- destination pinning ------------------------------------------------------------------
// A page can show one destination and swap it when the click comes: an href changed on
// mousedown or in the link's own click handler, an href given to a placeholder <a>, a form
// action rewritten by a late submit listener, a button replaced by a link on pointerover.
// When the guard has judged an activation, the origins it judged (the page's own, the link's,
// the form's) are pinned here; until the action has run, a link or form navigation to any other
// origin is stopped: at the click (capture and bubble), at the submit (capture and bubble),
// and last at the Navigation API's `navigate` event, which every link and form navigation
// passes after all page handlers ran. Within the pin's window this also stops navigations the
// page's script starts (`location = …`, `form.submit()`) to an origin the guard did not judge;
// a navigation a page script starts by itself later is left to the network layer.
const originOf = (url) => originOfURL(url);
const urlHostOf = (url) => { try { return new URL_(url).hostname; } catch (e) { return ""; } };
let pinned = null;
// The hosts the policies allow (`opts.hosts`, sent by the guard with each pinned read):
// {allow: [[pattern, …] per domain_allow rule], site: the page's registrable domain when there
// is no allow-list}. A navigation to such a host is not stopped for its origin (a judged link or
// form still must reach what was judged): it goes where a judged goto could go, and the guard's
// navigation gate judges every top-level navigation against the full policies anyway.
function hostMatches(host, p) {
  if (p === "*") return true;
  if (p[0] === "*" && p[1] === ".") return endsWith(host, sliceText(p, 1));
  if (p[0] === ".") return host === sliceText(p, 1) || endsWith(host, p);
  return host === p;
}
function policyAllows(url, policy) {
  if (!policy) return false;
  const host = toLower(urlHostOf(url));
  if (!host) return false;
  const rules = policy.allow || [];
  if (rules.length) {
    for (const rule of rules) {
      let ok = false;
      for (const p of rule) if (hostMatches(host, p)) { ok = true; break; }
      if (!ok) return false;
    }
    return true;
  }
  const site = policy.site;
  return !!site && (host === site || endsWith(host, "." + site));
}
const allowedDest = (now) => pinned.allowed.has(originOf(now)) || policyAllows(now, pinned.policy);
let lastPointer = null;
const stopped = [];
function docOrigin(doc) {
  // about:srcdoc and about:blank documents carry their creator's origin: the parent's.
  const o = originOf(docURLOf(doc));
  if (o !== "null") return o;
  try {
    const owner = defaultViewOf(doc).frameElement;
    if (owner) return docOrigin(ownerDocumentOf(owner));
  } catch (e) { /* a cross-origin parent */ }
  return o;
}
let pinnedLib = null;  // the reader's name in each window (`opts.lib`): a frame's stops go to the top's
function pin(el, f, mode, lib, policy) {
  if (lib) pinnedLib = lib;
  // mode "page": the action activates nothing (hover, focus, typing, a change): only the page's
  // own origin was judged, so a navigation its handlers start elsewhere is stopped. "links":
  // link and form activations only (a network layer judges what scripts start).
  const allowed = new Set_([docOrigin(document), docOrigin(ownerDocumentOf(el))]);
  if (mode !== "page") {
    if (f && f.href) allowed.add(originOf(f.href));
    if (f && f.form && f.is_submit) allowed.add(originOf(f.form.action));
    if (f && f.frame_content) allowed.add(originOf(f.frame_content));
  }
  const expected = (f && (f.href || (f.is_submit && f.form && f.form.action))) || docURLOf(ownerDocumentOf(el));
  // What the judged activation reaches, beyond its origin: a click that reaches another link,
  // or a submission to another address, is not the one judged (an element swapped under the
  // click, a same-site href or form action rewritten on mousedown / submit).
  const target = mode === "page" || !f ? null
    : {link: f.href || null, form: f.is_submit && f.form ? f.form.action : null};
  pinAs(allowed, expected, mode !== "links", target, policy, mode === "page" ? null : el);
  // A script of this frame can navigate the frames above it (`top.location = …`): their
  // readers pin the same origins (same-origin ancestors; Chromium stops a cross-origin
  // frame from navigating the top without the user's click anyway).
  let w = W;
  for (let i = 0; lib && i < 6; i++) {
    let up = null, theirs = null;
    try { up = w.parent; } catch (e) { up = null; }
    if (!up || up === w) break;
    try { theirs = up[lib]; } catch (e) { theirs = null; }
    if (theirs && theirs.pinAs) { try { theirs.pinAs(new Set_(allowed), expected, mode !== "links", null, policy); } catch (e) { /* */ } }
    w = up;
  }
}
function pinAs(allowed, expected, scripts, target, policy, el) {
  relisten();
  allowed.add(docOrigin(document));
  pinned = {allowed, scripts, expected, target: target || null, policy: policy || null, el: el || null,
    until: Date.now() + 10000};
}
function sameTarget(now, judged) {
  // The same destination up to its query and fragment (tracking parameters added on click),
  // or a redirect wrapper of the page's own site that carries the judged URL (…/url?q=<it>).
  if (!judged || testRe(/^javascript:/i, judged)) return true;
  if (now === judged) return true;
  let a = null, b = null;
  try { a = new URL_(now); b = new URL_(judged); } catch (e) { return false; }
  if (a.origin === b.origin && a.pathname === b.pathname) return true;
  let search = a.search;
  try { search = decode(search); } catch (e) { /* malformed escapes: compare as written */ }
  return indexOf(search, b.origin + b.pathname) >= 0;
}
function active() {
  return pinned && Date.now() <= pinned.until;
}
function stop(event, actual, how) {
  if (cancelableOf(event)) preventDefault(event);
  const item = {expected: pinned.expected, actual, how};
  noteStop(item);
  if (W.top !== W) forwardStop(item);
}
function noteStop(item) {
  push(stopped, item);
  if (stopped.length > 8) stopped.shift();
}
// A frame's stop is told to the top document's reader, which the guard reads with the action's
// check and with the next action (no extra round trip): a same-origin top's reader takes it
// straight into its list; across origins a message carries the how and the origin stopped (not
// the URL: the top page sees the message, and the URL may hold what the frame tried to send).
const STOP_KEY = "__pagewardenFrameStop";
function forwardStop(item) {
  let theirs = null;
  try { theirs = pinnedLib ? W.top[pinnedLib] : null; } catch (e) { theirs = null; }
  if (theirs && theirs.noteStop) { try { theirs.noteStop(item); return; } catch (e) { /* */ } }
  try { W.top.postMessage({[STOP_KEY]: {how: String(item.how), actual: originOf(item.actual)}}, "*"); } catch (e) { /* */ }
}
function onStopMessage(event) {
  let data = null;
  try { data = event.data; } catch (e) { return; }
  if (!data || typeof data !== "object" || !data[STOP_KEY] || event.source === W) return;
  // Any page can post this message: only an origin and a known kind of stop are taken from
  // it (no free text reaches the agent's guidance), and a flood is capped by `stopped` (8).
  const note = data[STOP_KEY];
  let actual = "a frame's destination", how = "navigation";
  try {
    const origin = originOf(String(note.actual).slice(0, 2048));
    if (origin !== "null" && testRe(/^https?:\/\/[^\s/]+$/i, origin)) actual = origin;
    const kind = String(note.how);
    if (kind === "link" || kind === "form" || kind === "script navigation") how = kind;
  } catch (e) { /* a hostile object (getters, toString): the defaults */ }
  noteStop({expected: null, actual, how: "frame " + how});
}
// The judged activation was neither a link nor a submit button, yet the click reaches one that
// is not the judged element: the page put it there after the guard's read (an element
// swapped in on pointerdown / mousedown, under the click point Playwright had checked).
const swappedIn = (node) => !!(pinned.el && pinned.target && node !== pinned.el);
function onClick(event) {
  if (!active() || !isTrusted(event)) return;
  for (const node of composedPath(event)) {
    if (!isElement(node)) continue;
    const raw = linkHref(node);
    if (raw === null) {
      if (isSubmitter(node) && submitterOk(node) && !pinned.target?.form && swappedIn(node)) {
        const action = getAttr(node, "formaction") || getAttr(formOf(node), "action");
        stop(event, action && trimText(action) ? resolve(action, node) : docURLOf(ownerDocumentOf(node)), "form");
        return;
      }
      continue;
    }
    const now = resolve(trimText(raw), node);
    if (!allowedDest(now) && !testRe(/^javascript:/i, now)) stop(event, now, "link");
    else if (pinned.target && pinned.target.link && !sameTarget(now, pinned.target.link)) stop(event, now, "link");
    else if (pinned.target && !pinned.target.link && swappedIn(node)) stop(event, now, "link");
    return;
  }
}
function onSubmit(event) {
  if (!active()) return;
  const form = eventTarget(event);
  if (!isElement(form)) return;
  const submitter = submitterOf(event);
  const attr = (submitter && getAttr(submitter, "formaction")) || getAttr(form, "action");
  const now = attr && trimText(attr) ? resolve(attr, form) : docURLOf(ownerDocumentOf(form));
  if (!allowedDest(now)) stop(event, now, "form");
  else if (pinned.target && pinned.target.form && !sameTarget(now, pinned.target.form)) stop(event, now, "form");
}
function onNavigate(event) {
  if (!active() || !navDestinationOf || !destinationURLOf) return;
  if (navTypeOf(event) === "traverse") return;
  if (!pinned.scripts && !navUserInitiatedOf(event)) return;
  const now = destinationURLOf(navDestinationOf(event));
  if (allowedDest(now)) return;
  // Not only link and form activations: a navigation the page's own script starts while the
  // agent's action runs (a click / change / key handler setting `location`, `form.submit()`,
  // a synthetic `a.click()`, a meta refresh inserted on click, a popup moving its opener) goes
  // where nobody judged.
  stop(event, now, navUserInitiatedOf(event) ? "navigation" : "script navigation");
  // Playwright waits for the navigation the click requested; a same-document commit to the
  // current URL ends that wait (a cancelled navigation otherwise holds it until its timeout).
  try { replaceState(W.history, historyState(W.history), "", docURLOf(document)); } catch (e) { /* */ }
}
function relisten() {
  // Bubble listeners moved to the end of the window's list when an action is pinned: they
  // run after every page listener registered before the action.
  for (const [type, fn] of [["click", onClick], ["auxclick", onClick], ["submit", onSubmit]]) {
    removeListener(W, type, fn, false);
    addListener(W, type, fn, false);
  }
}
function listen() {
  // Capture listeners on the window, a bubble listener after the page's own handlers, and
  // the Navigation API's `navigate` event as the last word.
  const add = addListener;
  add(W, "click", onClick, true);
  add(W, "click", onClick, false);
  add(W, "auxclick", onClick, true);  // a middle click opens the link in a new tab
  add(W, "auxclick", onClick, false);
  // Where the mouse is (Playwright's hover leaves it there): mouse.down() acts at this point.
  // Every pointer event of a move, in capture on the window, so the point is known before any
  // handler of the page runs: a page that detaches the element under the pointer on
  // `pointerover` gets no `mousemove` to the window at all (it goes to the detached node).
  const pointed = (event) => { if (isTrusted(event)) lastPointer = {x: clientXOf(event), y: clientYOf(event)}; };
  for (const type of ["pointerrawupdate", "pointerover", "pointerenter", "pointermove", "mouseover", "mousemove"]) {
    add(W, type, pointed, true);
  }
  add(W, "submit", onSubmit, true);
  add(W, "submit", onSubmit, false);
  if (W.navigation && NavigateEvent_) add(W.navigation, "navigate", onNavigate, false);
  if (W.top === W) add(W, "message", onStopMessage, true);
  watchOverlays(add);
}
function report() {
  // What was stopped so far. The pin stays for its window: a script the action set off may
  // still try to leave (a timer, a popup moving its opener).
  return stopped.splice(0, stopped.length);
}
