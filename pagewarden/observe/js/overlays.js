// Overlays: the box over the page an element sits in (dialog, popover, fixed/sticky, high
// z-index), whether the agent's own input opened it, and close controls.

// What changed in the DOM and when the agent last gave input, so that a box over the page can
// be told apart: one the agent's own click opened, or one the page put there by itself.
const byInput = new WeakSet();  // nodes inserted or changed within seconds after the agent's input
const inputTimes = [];
function watchOverlays(add) {
  const note = (event) => { if (isTrusted(event)) { push(inputTimes, Date.now()); if (inputTimes.length > 20) inputTimes.shift(); } };
  add(W, "pointerdown", note, true);
  add(W, "keydown", note, true);
  try {
    const observer = new MutationObserver((records) => {
      const last = inputTimes.length ? inputTimes[inputTimes.length - 1] : 0;
      if (!last || Date.now() - last > 5000) return;
      for (const record of records) {
        if (record.type === "attributes") byInput.add(record.target);
        else for (const node of record.addedNodes) if (isElement(node)) byInput.add(node);
      }
    });
    observer.observe(document, {subtree: true, childList: true, attributes: true,
                                attributeFilter: ["style", "class", "open", "hidden", "popover"]});
  } catch (e) { /* no observer: every overlay counts as the page's own */ }
  watching = true;
}
let watching = false;

function openedByAgent(box) {
  // True when the box (or an ancestor below <body>) was inserted or changed within seconds
  // after the agent's own click or key press in this document.
  if (!watching) return null;
  for (let node = box; node && isElement(node) && !testRe(/^(BODY|HTML)$/, tagNameOf(node)); node = parentOf(node)) {
    if (byInput.has(node)) return true;
  }
  return false;
}

const OVERLAY_ROLES = "dialog, [role=dialog], [role=alertdialog], [aria-modal=true]";
function overlayBox(el) {
  const body = bodyOf(ownerDocumentOf(el));
  for (let node = el; isElement(node) && node !== body; node = parentOf(node)) {
    if (matchesSel(node, OVERLAY_ROLES)) return [node, "dialog"];
    try { if (matchesSel(node, ":popover-open")) return [node, "popover"]; } catch (e) { /* old engine */ }
    const position = style(node, "position");
    if (position === "fixed" || position === "sticky") return [node, position];
    if (position === "absolute" && parseInt(style(node, "z-index") || "0", 10) >= 100) {
      const r = rectOf(node);
      if (r.width * r.height >= 0.05 * innerW() * innerH()) return [node, "absolute"];
    }
  }
  return [null, null];
}

const OVERLAY_CONTROLS = "a[href], button, input, select, textarea, [role=button], [role=link]";
function overlayFacts(el) {
  const [box, kind] = overlayBox(el);
  if (!box) return null;
  const r = rectOf(box);
  const origin = (() => { try { return new URL_(docURLOf(ownerDocumentOf(el))).origin; } catch (e) { return ""; } })();
  let links = 0, sameOrigin = 0, controls = 0;
  scanRegion(box, (node) => {
    if (!matchesSel(node, OVERLAY_CONTROLS)) return true;
    if (++controls > 60) return false;
    if (tag(node) !== "a") return true;
    links++;
    const href = resolve(getAttr(node, "href") || "", node);
    try { if (new URL_(href).origin === origin) sameOrigin++; } catch (e) { /* not a URL */ }
    return true;
  });
  return {
    kind,
    area: Math.round(Math.max(0, r.width) * Math.max(0, r.height) / Math.max(1, innerW() * innerH()) * 100) / 100,
    agent_opened: openedByAgent(box),
    links, same_origin_links: sameOrigin, controls,
    landmark: !!closestAcross(box, "header, nav, footer, [role=banner], [role=navigation], [role=contentinfo]"),
    text: clip(textOf(box, 400), 300),
  };
}

const CLOSE_HINT = /(^|[\s_-])(close|dismiss|cancel)([\s_-]|$)/i;
function closesSomething(el) {
  // Built as a close control: dismiss data attributes, a dialog-method form, popover hiding,
  // or an id / class / aria-label that starts with close.
  for (const a of ["data-dismiss", "data-bs-dismiss", "data-close"]) if (hasAttr(el, a)) return true;
  const action = toLower(getAttr(el, "popovertargetaction") || getAttr(el, "command") || "");
  if (action === "hide" || action === "close" || action === "request-close") return true;
  const form = formOf(el);
  if (form && isSubmitter(el) && toLower(getAttr(el, "formmethod") || getAttr(form, "method") || "") === "dialog") return true;
  const id = getAttr(el, "id") || "", cls = getAttr(el, "class") || "";
  if (testRe(CLOSE_HINT, id) || testRe(CLOSE_HINT, cls)) return true;
  const aria = trimText(getAttr(el, "aria-label") || getAttr(el, "title") || "");
  return testRe(/^(close|dismiss|cancel)\b/i, aria);
}

function placeFacts(el, opts) {
  return {
    overlay: overlayFacts(el),
    closes: closesSomething(el),
    field: opts.field && (isTag(el, "input", "textarea", "select") || contentEditableOf(el)) ? fieldFacts(el) : null,
  };
}
