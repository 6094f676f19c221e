// Entry points: the reads the guard makes (a located element, a point, the focused element, a
// CSS selector), the selector engine and the direct read, and the frozen library object the
// assembled script returns (`library`).

function activated(el, opts) {
  // The activation of the action in `opts.activate` on the pointed element `el` (null: none).
  const a = opts.activate;
  if (!a || !el) return null;
  const act = a.key ? keyActivation(el, opts) : clickActivation(el, opts);
  if (act && !act.delegated) act.pointed = el;
  return act;
}

function described(el, opts, act) {
  // Facts of what the action acts on: the activated element when there is one.
  if (act && act.delegated) return act.delegated.facts;
  return facts(act ? act.el : el, opts, act);
}

// A text node (a handle Playwright clicks by its box, as it clicks an element): the element
// it is in is what the action activates and what is read.
function elementOf(node) {
  return node && nodeTypeOf(node) === 3 ? parentElementOf(node) : node;
}

function result(el, opts) {
  el = elementOf(el);
  const act = el ? activated(el, opts) : null;
  const f = el ? described(el, opts, act) : null;
  if (opts.pin && f && !(act && act.delegated)) pin(act ? act.el : el, f, opts.pin, opts.lib, opts.hosts);
  return {count: el ? 1 : 0, facts: f, sources: opts.needle ? sources(opts.needle, opts) : []};
}

function atPoint(opts) {
  if (opts.pointer && lastPointer) opts = {...opts, x: lastPointer.x, y: lastPointer.y};
  const el = hitAt(document, opts.x, opts.y);
  if (el && isFrameEl(el)) {
    const inner = intoFrame(el, opts.x, opts.y, opts);
    if (inner.delegated) return inner.delegated;
    if (inner.hit) {
      const act = opts.activate && !opts.activate.key ? resolveActivation(inner.hit, "the point is over a frame") : null;
      const f = facts(act ? act.el : inner.hit, opts, act);
      // no reader in the frame yet: this document's pin still covers `top.location = …` from it
      if (opts.pin && f) pin(act ? act.el : inner.hit, f, opts.pin, opts.lib, opts.hosts);
      return {count: 1, facts: f, sources: []};
    }
    const act = {el, link: null, submitter: null, via: "the point is over a frame", frame: inner, pointed: null};
    const f = facts(el, opts, act);
    if (opts.pin) pin(el, f, opts.pin, opts.lib, opts.hosts);
    return {count: 1, facts: f, sources: opts.needle ? sources(opts.needle, opts) : []};
  }
  if (el && opts.activate && !opts.activate.key) {
    const act = resolveActivation(el, "");
    if (!act.link && !act.submitter) act.probe = closedShadowAt(el, document, opts.x, opts.y);
    const f = facts(act.el, opts, act);
    if (opts.pin) pin(act.el, f, opts.pin, opts.lib, opts.hosts);
    return {count: 1, facts: f, sources: opts.needle ? sources(opts.needle, opts) : []};
  }
  return result(el, opts);
}

function focused(opts) {
  let el = activeOf(document);
  while (el && shadowRootOf(el) && shadowActiveOf(shadowRootOf(el))) el = shadowActiveOf(shadowRootOf(el));
  if (el && isFrameEl(el)) {
    // Focus inside a frame: its own reader answers (same origin), else its origin's content.
    let win = null, doc = null;
    [win, doc] = frameParts(el);
    if (doc && win && opts.lib) {
      let lib = null;
      try { lib = win[opts.lib]; } catch (e) { lib = null; }
      if (lib && lib.focused) return lib.focused(opts);
    }
    if (!doc) {
      const src = resolve(frameSrc(el), el);
      const act = {el, link: null, submitter: null, via: "focus is inside a cross-origin frame",
                   frame: {frame: src}, pointed: null};
      return {count: 1, facts: facts(el, opts, act), sources: opts.needle ? sources(opts.needle, opts) : []};
    }
    if (doc) { const inner = activeOf(doc); if (inner) el = inner; }
  }
  if (el === bodyOf(document) || el === docElementOf(document)) el = null;
  return result(el, opts);
}

function locator(els, opts) {
  const one = els.length >= 1 && (els.length === 1 || !opts.strict);
  const act = one ? activated(els[0], opts) : null;
  const f = one ? described(els[0], opts, act) : null;
  if (opts.pin && f && !(act && act.delegated)) pin(act ? act.el : els[0], f, opts.pin, opts.lib, opts.hosts);
  return {count: els.length, facts: f, sources: opts.needle ? sources(opts.needle, opts) : []};
}

function select(root, opts) {
  // The element a plain CSS locator resolves to, found in the document's light tree with the
  // native query, without the walk over every element Playwright's own CSS engine makes to
  // pierce shadow roots. Playwright lists light-tree matches first and raises on several
  // matches of a strict locator, so a single light match (or the first, not strict) is the
  // element the action acts on; anything else (no match, several, a selector the native query
  // refuses) answers `fallback` and the caller resolves the locator the usual way.
  const doc = nodeTypeOf(root) === 9 ? root : ownerDocumentOf(root);
  let els = null;
  try { els = docQueryAll(doc, opts.css); } catch (e) { return {fallback: true}; }
  const n = listLength(els);
  if (!n || (opts.strict && n > 1)) return {fallback: true};
  return locator([listItem(els, 0)], opts);
}

// -- the selector engine ------------------------------------------------------------------
// Registered with Playwright as a content-script selector engine, the reader runs in
// Playwright's utility world: an isolated world the page's scripts cannot reach, present in
// every frame, including documents loaded before the guard was attached. `locator >> engine=
// {json}` calls it with the located element (or the document) as root; the answer is one
// JSON string in an attribute of a detached element, read back with `get_attribute`: one round
// trip, one compact serialisation.
function entry(root, opts) {
  // Navigations stopped since the last read (after an action whose result was not checked)
  // ride along with the next read: reported at no extra round trip.
  const earlier = opts.entry !== "report" && stopped.length ? report() : null;
  let out;
  switch (opts.entry) {
    case "locator": out = locator([elementOf(root) || root], opts); break;
    case "select": out = select(root, opts); break;
    case "point": out = atPoint(opts); break;
    case "focused": out = focused(opts); break;
    case "sources": out = sources(opts.needle, opts); break;
    case "report": return report();
    case "mask": return maskFields(opts);
    default: return {__error: "unknown entry " + String(opts.entry)};
  }
  if (earlier && out && typeof out === "object" && !Array.isArray(out)) out.earlier_stops = earlier;
  return out;
}
function engine() {
  const run = reading((root, body) => {
    let out;
    try { out = entry(root, parseJSON(body)); } catch (e) { out = {__error: String(e)}; }
    const doc = nodeTypeOf(root) === 9 ? root : ownerDocumentOf(root);
    const holder = createEl(doc, "pw-facts");
    setAttr(holder, "d", toJSON(out === undefined ? null : out));
    return holder;
  });
  return {query: run, queryAll: (root, body) => [run(root, body)]};
}
function direct(body) {
  // The same read rooted at the document, called over CDP in the world the engine runs in
  // (see observe/_direct.py): the answer is the JSON string itself.
  let out;
  try { out = entry(document, parseJSON(body)); } catch (e) { out = {__error: String(e)}; }
  return toJSON(out === undefined ? null : out);
}

const library = Object.freeze({facts: reading(facts), sources: reading(sources), result: reading(result),
  atPoint: reading(atPoint), focused: reading(focused), locator: reading(locator), listen, report,
  engine, pinAs, direct: reading(direct), noteStop, maskFields: reading(maskFields)});
