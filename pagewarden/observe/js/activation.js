// Activation: what a click or a key press on an element really activates (a link, a submit
// button, a label's control, the control around an icon, a form's implicit submission).

// -- activation: what the action will really activate -----------------------------------
// The browser does not activate the element the agent pointed at but the one its click
// point hits (overlays, children, iframes), walked up the flat tree (slots, shadow hosts)
// to the nearest element with an activation behaviour: a link, a submit button (a <label>
// passes the click to its control), or, for keys, what Enter / Space do on the focused
// element (a link follows, a button clicks, a field submits its form implicitly through
// the form's default button).

function linkHref(el) {
  // The raw href of a link element (HTML <a>/<area>, SVG <a> with href or xlink:href).
  const t = tag(el);
  if (t !== "a" && t !== "area") return null;
  const raw = getAttr(el, "href");
  if (raw !== null) return raw;
  return namespaceOf(el) !== HTML_NS ? getAttrNS(el, XLINK, "href") : null;
}

// Roles that make an element the control a click is for (an icon-only `<div role=button>`).
const WIDGET_ROLES = /^(?:button|link|menuitem|menuitemcheckbox|menuitemradio|tab|checkbox|radio|switch|option|treeitem)$/;

function chain(start) {
  // Walk up the flat tree from `start`: the nearest link and submit button, and the label
  // whose control a click passes to (when no interactive element sits between).
  let link = null, submitter = null, label = null, interactive = null;
  for (let n = start; n; n = flatParent(n)) {
    if (!isElement(n)) continue;
    const t = tag(n);
    if (!link && linkHref(n) !== null) link = n;
    if (!submitter && isSubmitter(n) && submitterOk(n)) submitter = n;
    if (!interactive && (t === "button" || t === "input" || t === "select" || t === "textarea" || t === "summary" ||
        linkHref(n) !== null || testRe(WIDGET_ROLES, toLower(getAttr(n, "role") || "")))) interactive = n;
    if (!label && !interactive && t === "label") label = n;
  }
  return {link, submitter, label, interactive};
}

function resolveActivation(start, how) {
  // The element a click on `start` activates, with the link and submit button it reaches.
  let c = chain(start);
  let via = how;
  if (c.label && !c.link && !c.submitter) {
    let control = null;
    try { control = controlOf(c.label); } catch (e) { control = null; }
    if (control && control !== start) {
      const inner = chain(control);
      c = {link: c.link || inner.link, submitter: inner.submitter, label: c.label, interactive: inner.interactive};
      via = (how ? how + ", " : "") + "label passes the click to its control";
      start = control;
    }
  }
  // A click on an icon inside a control (an SVG `<use>`, an icon font's `<i>`) is the control's:
  // the nearest interactive ancestor, with its accessible name, is what the action acts on.
  const main = c.submitter || c.link || c.interactive || start;
  if (main !== start && main === c.interactive && !c.link && !c.submitter) {
    via = (via ? via + ", " : "") + "the click is on an element inside the control";
  }
  return {el: main, link: c.link, submitter: c.submitter, via};
}

function clickActivation(el, opts) {
  // What a click on `el` (Playwright's click point, `force`, overlays) activates.
  if (opts.activate.dispatch) return resolveActivation(el, "");
  if (!opts.activate.force && landsOnItself(el)) return resolveActivation(el, "");
  const point = clickPoint(el, opts);
  const doc = ownerDocumentOf(el);
  let hit = hitAt(doc, point.x, point.y);
  let how = "";
  if (hit && hit !== el && !containsFlat(el, hit)) {
    // Something else is on top. Playwright waits for it to go away unless `force`, in which
    // case the browser clicks whatever is there.
    if (!opts.activate.force) hit = el;
    else how = "hit at the click point (force)";
  } else if (hit && hit !== el) {
    how = "hit at the click point";
  }
  if (!hit) hit = el;
  if (isFrameEl(hit)) {
    const inner = intoFrame(hit, point.x, point.y, opts);
    if (inner.delegated) return {delegated: inner.delegated};
    if (inner.hit) return resolveActivation(inner.hit, "the click lands in a frame");
    return {el: hit, link: null, submitter: null, via: "the click lands in a frame", frame: inner};
  }
  const act = resolveActivation(hit, how);
  if (!act.link && !act.submitter) act.probe = closedShadowAt(hit, doc, point.x, point.y);
  return act;
}

function keyActivation(el, opts) {
  // What a key does on the focused element `el`.
  const key = opts.activate.key;
  const t = tag(el);
  const type = t === "input" ? toLower(getAttr(el, "type") || "text") : "";
  const buttonLike = t === "button" || (t === "input" && ["submit", "image", "reset", "button"].includes(type));
  if (key === "Enter") {
    if (linkHref(el) !== null || buttonLike || t === "summary") return resolveActivation(el, "Enter on the focused element");
    if (t === "input" && !disabled(el)) {
      const form = formOf(el);
      if (!form) return null;
      const button = defaultButton(form);
      if (button) {
        if (disabled(button)) return null;
        const act = resolveActivation(button, "Enter submits the form through its default button");
        act.submitter = act.submitter || (submitterOk(button) ? button : null);
        return act;
      }
      return {el, link: null, submitter: null, form, via: "Enter submits the form (implicit submission)"};
    }
    return null;
  }
  if (key === "Space") {
    if (buttonLike || t === "summary" || (t === "input" && (type === "checkbox" || type === "radio"))) {
      return resolveActivation(el, "Space on the focused element");
    }
  }
  return null;
}
